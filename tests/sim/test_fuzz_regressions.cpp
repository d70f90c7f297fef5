// Inputs the libFuzzer harnesses (tests/fuzz/) found, kept so they stay fixed. Each ran into undefined
// behaviour under UBSan before its fix; now each is ordinary bad input.
#include <fstream>
#include <stdexcept>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "calibrate/import/nccl_tests_log.hpp"
#include "sim/base/input_error.hpp"
#include "sim/engine/event_queue.hpp"
#include "sim/engine/task_graph.hpp"
#include "sim/explore/sweep.hpp"
#include "sim/scenario/scenario.hpp"
#include "models/compute/profile_json.hpp"

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("fuzz regression: an nccl-tests header with a short block never reads past a row", "[fuzz]") {
  // fuzz_nccl_tests_log: a garbled header gave a block narrower than time/algbw/busbw, and a data row just
  // long enough for two such blocks was read past its end (nccl_tests_log.cpp, data_row).
  const std::string text = read(CLUSTERSIM_SOURCE_DIR "/tests/fuzz/regressions/nccl_tests_log-short-block.log");
  REQUIRE_FALSE(text.empty());
  const auto log = cs::calibrate::parse_nccl_tests_log(std::string_view(text), "short-block.log");
  CHECK(log.file == "short-block.log");
}

TEST_CASE("fuzz regression: a job's node index past any cluster is refused, not cast to int", "[fuzz]") {
  // fuzz_scenario: with the cluster itself invalid (no bound from cluster.nodes), the index 2.55e13 was
  // converted to int (scenario.cpp, the jobs' node lists).
  const nlohmann::json doc = nlohmann::json::parse(R"({
    "cluster": {"gpu": "H100-SXM", "nodes": 32, "gpus_per_node": 8, "intra_node": "no-such-switch"},
    "jobs": [{"name": "a", "nodes": [0, 25500000000001], "model": {"preset": "llama3-8b"},
              "training": {"seq_length": 4096, "global_batch_size": 16, "micro_batch_size": 1}}]})");
  try {
    (void)cs::sim::parse_scenario(doc, "s.json");
    FAIL("expected an input error");
  } catch (const cs::InputError& e) {
    bool found = false;
    for (const auto& m : e.messages())
      found |= m == "s.json: jobs[0].nodes[1]: node 25500000000001 is out of range (expected a node index <= 999999)";
    INFO(e.what());
    CHECK(found);
  }
}

// Issue 32: calibration-profile numbers that made a kernel's time NaN or 10^300 s, and the engine's own
// defence when a time still leaves its range.
namespace {

const std::string kRegressions = CLUSTERSIM_SOURCE_DIR "/tests/fuzz/regressions";

// A small scenario whose calibration is `profile` (in tests/fuzz/regressions) is refused with one message,
// the profile's problem `what` after the scenario's and the profile's paths.
void check_profile_refused(const std::string& profile, const std::string& what) {
  const nlohmann::json doc = nlohmann::json::parse(R"({
    "cluster": {"gpu": "H100-SXM", "nodes": 1, "gpus_per_node": 8, "intra_node": "nvswitch"},
    "model": {"preset": "llama3-8b"},
    "training": {"seq_length": 4096, "global_batch_size": 16, "micro_batch_size": 1}})");
  nlohmann::json with = doc;
  with["calibration"] = profile;
  try {
    (void)cs::sim::parse_scenario(with, kRegressions + "/s.json");
    FAIL("no error");
  } catch (const cs::InputError& e) {
    REQUIRE(e.messages().size() == 1);
    CHECK(e.messages()[0] == kRegressions + "/s.json: calibration: " + kRegressions + "/" + profile + ": " + what);
  }
}

}  // namespace

TEST_CASE("fuzz regression: a profile memory_bound entry of 1e-308 bytes is refused, not a NaN kernel time", "[fuzz]") {
  // mem_efficiency_of_kind interpolates in log(bytes / 1e-308) = inf: a NaN efficiency, a negative duration,
  // and an abort at task_graph.cpp:51. Bytes are now in [1, 1e18] (the model reads sizes from 1 byte).
  check_profile_refused("profile-memory-bound-1e-308.json",
                        "compute.memory_bound[0].bytes: 1e-308 is out of range (expected a number of bytes in [1, 1e18])");
}

TEST_CASE("fuzz regression: a denormal GEMM efficiency in a profile is refused, not a 10^300 s GEMM", "[fuzz]") {
  // With every GEMM point at 5e-324, gemm_efficiency's clamp had hi < lo (undefined) and returned the
  // denormal: a 10^12-FLOP GEMM of 10^300 s. Efficiencies are now at least 1e-6 of peak.
  check_profile_refused("profile-gemm-efficiency-denormal.json",
                        "compute.gemm[0].efficiency: 4.94066e-324 is out of range (expected a number in [1e-06, 1])");
}

TEST_CASE("fuzz regression: a profile's per-kernel times and bandwidths are bounded", "[fuzz]") {
  // A launch overhead of 1 s a kernel (the old limit) over the 10^8 tasks a step may hold passed the engine's
  // 106 days; a beta of 1e-300 GB/s made a collective infinite.
  const std::string text = R"({"format": "clustersim-profile", "version": 1, "gpu": "H100-SXM",
    "compute": {"sm_count": 132, "launch_overhead_us": 1e6, "matmul_ceiling_fraction": 1e-300,
                "gemm": [{"m": 4096, "n": 4096, "k": 4096, "efficiency": 0.7}]},
    "comm": [{"collective": "all_reduce", "ranks": 8, "level": "nvlink", "alpha_us": 20, "beta_GBps": 1e-300}]})";
  try {
    (void)cs::models::parse_profile(text, "p.json");
    FAIL("no error");
  } catch (const cs::InputError& e) {
    REQUIRE(e.messages().size() == 3);
    CHECK(e.messages()[0] == "p.json: compute.launch_overhead_us: 1e+06 is out of range (expected a number of microseconds in [0, 10000])");
    CHECK(e.messages()[1] == "p.json: compute.matmul_ceiling_fraction: 1e-300 is out of range (expected 0 (unknown) or a number in [0.01, 1])");
    CHECK(e.messages()[2] == "p.json: comm[0].beta_GBps: 1e-300 is out of range (expected a bandwidth in GB/s in [0.001, 100000])");
  }
}

TEST_CASE("fuzz regression: the engine refuses a time out of its range with an error, not an abort", "[fuzz]") {
  // Defence behind the loaders' bounds: a duration that converted to a negative Time (past 106 days of
  // picoseconds, or NaN) and an event before now (a sum that wrapped) used to abort (task_graph.cpp:51,
  // event_queue.cpp:31).
  cs::sim::TaskGraph g(1);
  cs::sim::Task t{};
  t.name = static_cast<std::uint16_t>(g.intern("gemm"));
  t.duration = -1;  // what from_seconds gives for 1e30 s or NaN on x86-64 (llround out of range)
  try {
    (void)g.add_task(t);
    FAIL("no error");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "task 'gemm' of rank 0 lasts longer than the engine's 106 days of simulated time (or its duration is not a number)");
  }
  cs::sim::EventQueue q;
  q.schedule(10, 0, 0);
  (void)q.pop();
  try {
    q.schedule(-5, 0, 0);
    FAIL("no error");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "event queue: an event at -5 ps is before now (10 ps): simulated time passed the engine's 106 days or a duration was not a number");
  }
}

TEST_CASE("fuzz regression: a --set or --vary value of invalid UTF-8 is refused, not thrown from a later dump", "[fuzz]") {
  // fuzz_python_core (session 14): an override's bare-word value with the byte 0x8C became a JSON string of
  // invalid UTF-8; the validator's message quoted it with dump(), which threw nlohmann's type_error 316 out
  // of parse_scenario (std::terminate under the harness). Now the override itself is refused, naming it.
  nlohmann::json doc = {{"training", {{"micro_batch_size", 1}}}};
  const std::string bad = std::string("training.micro_batch_size=2") + '\x8c';
  try {
    cs::sim::apply_override(doc, bad, "s.json");
    FAIL("no error");
  } catch (const cs::InputError& e) {
    REQUIRE(e.messages().size() == 1);
    CHECK(e.messages()[0] == "s.json: --set \"training.micro_batch_size=2\xef\xbf\xbd\": not valid UTF-8 (a path or value must be text)");
  }
  CHECK(doc["training"]["micro_batch_size"] == 1);  // untouched
  CHECK_THROWS_WITH(cs::sim::parse_axis(std::string("training.micro_batch_size=1,") + '\xff'),
                    "--vary \"training.micro_batch_size=1,\xef\xbf\xbd\": not valid UTF-8 (a path or value must be text)");
}
