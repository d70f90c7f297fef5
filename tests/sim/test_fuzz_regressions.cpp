// Inputs the libFuzzer harnesses (tests/fuzz/) found, kept so they stay fixed. Each ran into undefined
// behaviour under UBSan before its fix; now each is ordinary bad input.
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "calibrate/import/nccl_tests_log.hpp"
#include "sim/base/input_error.hpp"
#include "sim/scenario/scenario.hpp"

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
