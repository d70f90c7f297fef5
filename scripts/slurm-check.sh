#!/usr/bin/env bash
# The sweep's Slurm farming against a real Slurm on this one machine (issue 16; docs/sweep.md):
#   scripts/slurm-check.sh [path/to/clustersim]
# starts munged, slurmctld and slurmd of their own, with a generated slurm.conf, a fresh munge key and
# spool and state folders under a temporary folder (nothing of the system's /etc/slurm or /etc/munge is
# used or changed, and the ports are chosen free), writes a layout search with clustersim sweep
# --slurm-script, submits it (an sbatch --array of the shards and the merge job that depends on them),
# waits for the merge with a bounded timeout, and checks that the merged output (stdout and CSV) is the
# unsharded local run's byte for byte; then the same with hostile values (issue 32: a folder with a space,
# "$(touch X)%j.sh", a --set value with newlines), first through the real sbatch --test-only, checking that
# nothing of them runs as a command. It stops the daemons it started, and only those, by their pids.
#
# Exit status: 0 passed; 1 failed (the jobs ran and the output differs, or a job failed); 77 skipped
# (ctest's SKIP_RETURN_CODE): Slurm or munge is not installed or the daemons cannot start here (for
# example in a container without the privileges slurmd needs). Never 0 without the comparison.
set -uo pipefail

CLUSTERSIM=${1:-build/clustersim}
CLUSTERSIM=$(realpath "$CLUSTERSIM" 2>/dev/null || echo "$CLUSTERSIM")
TIMEOUT_S=${SLURM_CHECK_TIMEOUT_S:-300}
SHARDS=${SLURM_CHECK_SHARDS:-3}

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

[ -x "$CLUSTERSIM" ] || fail "$CLUSTERSIM: not an executable (give the path to build/clustersim)"
for tool in munged slurmctld slurmd sbatch squeue sinfo scontrol; do
  command -v "$tool" >/dev/null 2>&1 || skip "$tool not found (install Debian's slurm-wlm and munge: make deps)"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/clustersim-slurm-check.XXXXXX") || fail "cannot make a temporary folder"
started_pids=()
cleanup() {
  for pid in "${started_pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${started_pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
  done
  [ -n "${KEEP_SLURM_CHECK:-}" ] && echo "kept $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT
show_logs() {
  for f in "$tmp"/munged.log "$tmp"/slurmctld.log "$tmp"/slurmd.log; do
    [ -f "$f" ] && { echo "--- $f (last lines)"; tail -n 15 "$f"; }
  done
}

# A free TCP port: bind to port 0 and read back what the kernel chose.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
command -v python3 >/dev/null 2>&1 || skip "python3 not found (needed to pick free ports)"

mkdir -p "$tmp/munge" "$tmp/state" "$tmp/spool" "$tmp/work"
chmod 700 "$tmp/munge"
head -c 1024 /dev/urandom > "$tmp/munge/munge.key"
chmod 400 "$tmp/munge/munge.key"
munged --foreground --force --socket="$tmp/munge/munge.socket" --key-file="$tmp/munge/munge.key" \
  --log-file="$tmp/munged.log" --pid-file="$tmp/munge/munged.pid" --seed-file="$tmp/munge/munged.seed" \
  >"$tmp/munged.out" 2>&1 &
started_pids+=($!)
for _ in $(seq 50); do [ -S "$tmp/munge/munge.socket" ] && break; sleep 0.1; done
[ -S "$tmp/munge/munge.socket" ] || { cat "$tmp/munged.out"; show_logs; skip "munged did not start"; }

host=$(hostname -s)
cpus=$(nproc)
ctld_port=$(free_port)
slurmd_port=$(free_port)
user=$(id -un)
export SLURM_CONF="$tmp/slurm.conf"
cat > "$SLURM_CONF" <<EOF
ClusterName=clustersim-check
SlurmctldHost=$host
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/munge.socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
PlugStackConfig=$tmp/plugstack.conf
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=check Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
: > "$tmp/plugstack.conf"

slurmctld -D -f "$SLURM_CONF" >"$tmp/slurmctld.out" 2>&1 &
started_pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$host" >"$tmp/slurmd.out" 2>&1 &
started_pids+=($!)
state=""
for _ in $(seq 300); do
  state=$(sinfo -h -n "$host" -o %T 2>/dev/null | head -n 1)
  [ "$state" = "idle" ] && break
  for pid in "${started_pids[@]}"; do kill -0 "$pid" 2>/dev/null || { cat "$tmp"/*.out; show_logs; skip "a Slurm daemon exited at start (see its log above)"; }; done
  sleep 0.1
done
[ "$state" = "idle" ] || { cat "$tmp"/*.out; show_logs; skip "the node did not become idle within 30 s (state '${state:-none}')"; }
echo "slurmctld and slurmd up on $host (ports $ctld_port, $slurmd_port), $cpus CPUs"

# The sweep: the layout search of a small model with the screening tier, shards of the verified layouts.
cat > "$tmp/work/small.json" <<'EOF'
{"name": "small",
 "cluster": {"gpu": "H100-SXM", "nodes": 2, "gpus_per_node": 4, "intra_node": "nvswitch",
             "inter_node": {"fabric": "fat-tree", "link": "ib-ndr400", "nics_per_node": 4}},
 "model": {"num_layers": 16, "hidden_size": 2048, "num_attention_heads": 16, "vocab_size": 32000,
           "ffn_hidden_size": 8192, "activation": "gelu"},
 "training": {"seq_length": 2048, "global_batch_size": 16, "micro_batch_size": 1, "tokens_to_train": 1e9}}
EOF
cd "$tmp/work" || fail "cannot enter $tmp/work"
# Submits the script $1 (bash $1 in the current folder), waits for its jobs with the bounded timeout and
# checks that the merge job completed; the merge job's output is then in $1.out.
submit_and_wait() {
  local submitted merge_id merge_state deadline left log
  submitted=$(bash "./$1") || { echo "$submitted"; show_logs; fail "submitting $1 failed"; }
  echo "$submitted"
  merge_id=$(sed -n 's/.* and merge \([0-9]*\):.*/\1/p' <<<"$submitted")
  [ -n "$merge_id" ] || fail "no merge job id in: $submitted"
  deadline=$((SECONDS + TIMEOUT_S))
  while [ $SECONDS -lt $deadline ]; do
    left=$(squeue -h -o %i 2>/dev/null | wc -l)
    [ "$left" -eq 0 ] && break
    sleep 0.5
  done
  if [ "$(squeue -h -o %i 2>/dev/null | wc -l)" -ne 0 ]; then
    squeue; show_logs
    fail "the jobs did not finish within $TIMEOUT_S s"
  fi
  merge_state=$(scontrol -o show job "$merge_id" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
  for log in "$1".parts/shard-*.log "$1.err"; do [ -s "$log" ] && { echo "--- $log"; cat "$log"; }; done
  [ "$merge_state" = "COMPLETED" ] || [ -z "$merge_state" ] || fail "the merge job ended $merge_state"
  [ -f "$1.out" ] || fail "the merge job wrote no output ($1.out)"
}

args=(small.json --search --verify 12 --top 15 --threads 1)
"$CLUSTERSIM" sweep "${args[@]}" --quiet --csv local.csv > local.out || fail "the local run failed"
"$CLUSTERSIM" sweep "${args[@]}" --csv slurm.csv --slurm-script run.sh --array-size "$SHARDS" --partition check \
  --time 10 || fail "clustersim sweep --slurm-script failed"
submit_and_wait run.sh
n_parts=$(ls run.sh.parts/part-*.json 2>/dev/null | wc -l)
[ "$n_parts" -eq "$SHARDS" ] || fail "$n_parts part files, expected $SHARDS"
cmp -s local.out run.sh.out || { diff local.out run.sh.out | head -n 20; fail "the merged table differs from the local run"; }
cmp -s local.csv slurm.csv || { diff local.csv slurm.csv | head -n 20; fail "the merged CSV differs from the local run"; }
echo "PASS: $SHARDS Slurm array tasks and the dependent merge give the local run's table ($(wc -l < local.out) lines) and CSV ($(wc -l < local.csv) rows) byte for byte"

# The same with hostile values (issue 32): the jobs' working folder has a space, the script's name holds
# "$(touch X)" and '%' (a filename-pattern symbol of sbatch's --output), a --set value holds newlines and
# the job's here-document end marker, and the Slurm options are abbreviated. sbatch --test-only first
# (through a wrapper on PATH that makes every call of the script a test-only one), then the real
# submission: the jobs run the values as data (no X anywhere) and the merge gives the local run's output.
hostile="$tmp/work/with space"
mkdir -p "$hostile" "$tmp/test-only" || fail "cannot make $hostile"
cp small.json "$hostile/" || fail "cannot copy the scenario"
cd "$hostile" || fail "cannot enter $hostile"
hargs=(small.json --vary training.micro_batch_size=1,2 --set $'name=x\nCLUSTERSIM_SHARDS\ntouch X\n#' --threads 1)
hscript='$(touch X)%j.sh'
"$CLUSTERSIM" sweep "${hargs[@]}" --quiet > local.out || fail "the local hostile run failed"
"$CLUSTERSIM" sweep "${hargs[@]}" --slurm-script "$hscript" --arr 2 --parti check --ti 0-0:10 \
  || fail "clustersim sweep --slurm-script failed on the hostile values"
real_sbatch=$(command -v sbatch)
{
  echo '#!/bin/bash'
  echo 'args=()'
  echo 'for a in "$@"; do case "$a" in --parsable|--dependency=*) ;; *) args+=("$a") ;; esac; done'
  printf '%q --test-only "${args[@]}" >&2 || exit 1\n' "$real_sbatch"
  echo 'echo "1;test-only"'
} > "$tmp/test-only/sbatch"
chmod +x "$tmp/test-only/sbatch"
PATH="$tmp/test-only:$PATH" bash "./$hscript" || { show_logs; fail "sbatch --test-only refused a job of the hostile script"; }
rm -rf "./$hscript.parts"
submit_and_wait "$hscript"
cmp -s local.out "$hscript.out" || { diff local.out "$hscript.out" | head -n 20; fail "the hostile run's merged table differs from the local run"; }
for marker in X "$tmp/work/X" "$tmp/X"; do [ ! -e "$marker" ] || fail "$marker exists: a value of the script ran as a command"; done
echo 'PASS: hostile values (a folder with a space, $(touch X)%j.sh, a --set value with newlines) passed sbatch --test-only and ran as data, merged output byte for byte'
exit 0
