// Issue 32: measured numbers no instrument can print (sim/base/bounds.hpp) are refused where they are read,
// with the file and the JSON path, or, in an nccl-tests log, skipped with the file and line, before they reach
// a fit or a prediction.
#include <catch2/catch.hpp>

#include <string>

#include "calibrate/fit/compute_fit.hpp"
#include "calibrate/import/measurement_json.hpp"
#include "calibrate/import/nccl_tests_log.hpp"
#include "models/hardware/gpu_catalog.hpp"
#include "sim/base/input_error.hpp"

using namespace cs::calibrate;

namespace {
// An 8-GPU all-reduce log of one good row (line 4); a test appends the row it checks as line 5.
const std::string kOneRow =
    "# Collective test starting: all_reduce_perf\n"
    "# nThread 1 nGpus 8 minBytes 1048576 maxBytes 4194304 step: 2(factor) warmup iters: 1 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
    "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n"
    "     1048576        262144     float     sum      -1    20.00   52.43   91.75       0    20.00   52.43   91.75       0\n";

// The one problem the parser reports for kOneRow + `row` (whose row it skips: one row stays).
std::string only_problem(const std::string& row, const std::string& file) {
  const NcclTestsLog log = parse_nccl_tests_log(kOneRow + row, file);
  REQUIRE(log.problems.size() == 1);
  CHECK(log.row_count() == 1);
  return log.problems[0];
}
}  // namespace

TEST_CASE("measurement bounds: a 5e-324 ms GEMM is refused at read", "[calibrate]") {
  REQUIRE_THROWS_WITH(measurements_from_json_text(R"({"device": "NVIDIA H200", "gemm": [{"m": 4096, "n": 4096, "k": 4096, "ms": 5e-324}]})",
                                                  "m.json"),
                      "m.json: gemm[0].ms: 5e-324 is out of range (expected 0.0001 to 1e+06 ms: 100 ns to 1000 s, what one timed kernel or "
                      "collective can take)");
}

TEST_CASE("measurement bounds: a 2^62 ms copy is refused at read", "[calibrate]") {
  REQUIRE_THROWS_WITH(measurements_from_json_text(R"({"device": "NVIDIA H200", "d2d_copy": [{"bytes": 67108864, "ms": 4611686018427387904}]})",
                                                  "m.json"),
                      "m.json: d2d_copy[0].ms: 4611686018427387904 is out of range (expected 0.0001 to 1e+06 ms: 100 ns to 1000 s, what one "
                      "timed kernel or collective can take)");
}

TEST_CASE("measurement bounds: a 2^62-byte collective in a measurement file is refused at read", "[calibrate]") {
  REQUIRE_THROWS_WITH(
      measurements_from_json_text(
          R"({"device": "NVIDIA H200", "nccl": [{"collective": "all_reduce", "ranks": 8, "bytes": 4611686018427387904, "time_us": 100}]})",
          "m.json"),
      "m.json: nccl[0].bytes: 4611686018427387904 is out of range (expected 1 to 1.09951e+12 bytes: at most 2^40, more than any GPU's "
      "memory holds)");
}

TEST_CASE("measurement bounds: a 2^62-byte nccl-tests row is skipped with its line", "[calibrate]") {
  CHECK(only_problem("4611686018427387904 1152921504606846976 float sum -1 20.00 52.43 91.75 0 20.00 52.43 91.75 0\n", "big.log") ==
        "big.log:5: size 4611686018427387904 bytes is more than any GPU's memory holds (at most 2^40); skipped");
}

TEST_CASE("measurement bounds: a nccl-tests time below 100 ns is skipped with its line", "[calibrate]") {
  CHECK(only_problem("     2097152        524288     float     sum      -1    1e-30   52.43   91.75       0    20.00   52.43   91.75       0\n",
                     "fast.log") == "fast.log:5: out-of-place time 1e-30 us is outside 0.1 us to 1000 s, what one collective can take; skipped");
}

TEST_CASE("measurement bounds: a copy timed at 999 s (1e-8 of peak) is left out of the fit with a note", "[calibrate]") {
  const MeasurementSet set = measurements_from_json_text(
      R"({"device": "NVIDIA H200", "d2d_copy": [{"bytes": 67108864, "ms": 0.03}, {"bytes": 268435456, "ms": 0.1},
                                                {"bytes": 134217728, "ms": 999000}]})",
      "m.json");
  std::vector<std::string> notes;
  const auto* h200 = cs::models::find_gpu("H200");
  REQUIRE(h200 != nullptr);
  const auto fitted = fit_compute_profile(set.compute, *h200, 132, "test", notes);
  REQUIRE(fitted.has_value());
  CHECK(fitted->memory_bound.size() == 2);
  bool noted = false;
  for (const auto& n : notes) noted = noted || n.rfind("m.json: d2d_copy[2]: copy 128 MiB: efficiency ", 0) == 0;
  CHECK(noted);
}
