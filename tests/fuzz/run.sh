#!/usr/bin/env bash
# Runs every libFuzzer harness of tests/fuzz for FUZZ_SECONDS each (default 600) and prints, per harness,
# the executions per second and the total. usage: tests/fuzz/run.sh BUILD_DIR [HARNESS...]
# The corpus of each harness lives in BUILD_DIR/fuzz/corpus/NAME (seeded from the shipped files, grown by
# every run); a finding (crash, sanitizer report, uncaught exception, timeout over 10 s, over 2 GiB) is
# written to BUILD_DIR/fuzz/findings/NAME/ and makes the script exit 1.
set -uo pipefail
build=${1:?usage: tests/fuzz/run.sh BUILD_DIR [HARNESS...]}
shift
src=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${FUZZ_SECONDS:-600}
harnesses=("$@")
[ ${#harnesses[@]} -eq 0 ] && harnesses=(scenario nccl_tests_log topology_file calibration_profile sweep_part python_core)

seeds() {
  case "$1" in
    scenario) echo "$src/scenarios" ;;
    # the measurement JSON, the real nccl-tests logs and their launcher / paste variants
    nccl_tests_log) printf '%s\n' "$src/calibrate/measurements" "$src/calibrate/published/nccl-tests-logs" \
                                  "$src/tests/calibrate/data/nccl-tests-logs" ;;
    topology_file) echo "$src/tests/topologies/data" ;;
    calibration_profile) echo "$src/calibrate/profiles" ;;
    sweep_part) echo "$src/tests/fuzz/seeds/sweep_part" ;;
    python_core) printf '%s\n' "$src/scenarios" "$src/tests/fuzz/seeds/python_core" ;;
  esac
}

status=0
for h in "${harnesses[@]}"; do
  bin="$build/fuzz/fuzz_$h"
  [ -x "$bin" ] || { echo "fuzz: $bin is missing (build with -DCLUSTERSIM_FUZZ=ON)"; exit 2; }
  corpus="$build/fuzz/corpus/$h"
  findings="$build/fuzz/findings/$h"
  mkdir -p "$corpus" "$findings"
  while IFS= read -r dir; do
    for f in "$dir"/*; do
      [ -f "$f" ] && [ "$(stat -c %s "$f")" -le 1048576 ] && cp -n "$f" "$corpus/"
    done
  done < <(seeds "$h")
  log="$build/fuzz/$h.log"
  # -max_len 8192: with the 100 KiB bench files at full length the executions per second fell tenfold;
  # longer seeds are cut to it.
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$bin" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
    -max_len="${FUZZ_MAX_LEN:-8192}" -print_final_stats=1 -artifact_prefix="$findings/" >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  if [ $rc -eq 0 ]; then
    echo "fuzz_$h: ${seconds} s, ${rate:-?} execs/s, ${execs:-?} execs, no finding"
  else
    echo "fuzz_$h: FINDING (exit $rc) after ${execs:-?} execs; see $log and $findings/"
    grep -m3 -E "ERROR|runtime error|terminate|deadly signal" "$log"
    status=1
  fi
done
exit $status
