// Inputs that are legal one by one but too large together, values that used to be accepted and ignored, and
// the streamed trace (issue 13, classes 3 and 9) through the `clustersim` executable: exit code 2 and one
// line naming the file and the key, or a run within bounds.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "cli_helpers.hpp"

using namespace clitest;
using nlohmann::json;

namespace {

CliResult run_doc(const TempDir& dir, const json& doc, fs::path& file, const std::vector<std::string>& extra = {}) {
  file = dir.write_json("scenario.json", doc);
  std::vector<std::string> args = {"run", file.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_cli(args);
}

void check_one_line(const CliResult& r, const std::string& line) {
  INFO(r.describe());
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  const auto lines = r.err_lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == line);
}

const std::string kTail = "; raise the limit or shrink the step";

json one_gpu() {
  return json::parse(R"({ "name": "one gpu", "cluster": {"gpu": "H100-SXM", "nodes": 1, "gpus_per_node": 1, "intra_node": "nvswitch"},
    "model": {"preset": "llama3-8b"},
    "training": {"seq_length": 1024, "global_batch_size": 8, "micro_batch_size": 1, "precision": "bf16"} })");
}

}  // namespace

// The budget (sim/step/step_budget.hpp). Each of these ran for minutes, took gigabytes or ended in
// std::bad_alloc; each is now refused from the scenario's shape before anything is built.
TEST_CASE("budget: one GPU with 1e5 micro-batches is refused by its memory, naming the global batch", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = one_gpu();
  doc["training"]["global_batch_size"] = 100000;
  // 1e5 micro-batches x 32 layers x 26 tasks per layer (forward + backward, no TP) = 8.4e7 tasks x 100 B.
  const CliResult r_doc = run_doc(dir, doc, file);
  check_one_line(r_doc,
                 file.string() + ": simulation: too large to simulate: about 8.4e+07 tasks and 8.2 GiB (limit "
                                 "simulation.max_memory_gib / --max-memory-gib 4), driven by training.global_batch_size "
                                 "(1e+05 micro-batches per step)" + kTail);
}

TEST_CASE("budget: a global batch of 1e6 is refused by its task count", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json("llama3-70b-h100x64-ndr400.json");
  doc["training"]["global_batch_size"] = 1000000;
  const CliResult r_doc = run_doc(dir, doc, file);
  check_one_line(r_doc,
                 file.string() + ": simulation: too large to simulate: about 1.5e+09 tasks and 144.6 GiB (limit "
                                 "simulation.max_tasks 2e+08), driven by training.global_batch_size (5e+05 micro-batches "
                                 "per step)" + kTail);
}

TEST_CASE("budget: 1e6 layers are refused, naming num_layers", "[cli]") {
  TempDir dir;
  fs::path file;
  const json doc = json::parse(R"({ "name": "many layers", "cluster": {"gpu": "H100-SXM", "nodes": 1, "gpus_per_node": 8, "intra_node": "nvswitch"},
    "model": {"num_layers": 1000000, "hidden_size": 1024, "num_attention_heads": 16, "ffn_hidden_size": 4096, "vocab_size": 32000},
    "training": {"seq_length": 1024, "global_batch_size": 8, "micro_batch_size": 1, "precision": "bf16", "pipeline_model_parallel_size": 8} })");
  const CliResult r_doc = run_doc(dir, doc, file);
  check_one_line(r_doc,
                 file.string() + ": simulation: too large to simulate: about 1.9e+08 tasks and 18.6 GiB (limit "
                                 "simulation.max_memory_gib / --max-memory-gib 4), driven by model.num_layers (1.2e+05 "
                                 "layers on one pipeline stage)" + kTail);
}

TEST_CASE("budget: 1e6 NICs per node are refused, naming nics_per_node", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json("llama3-70b-h100x64-ndr400.json");
  doc["cluster"]["inter_node"]["nics_per_node"] = 1000000;
  const CliResult r_doc = run_doc(dir, doc, file);
  check_one_line(r_doc,
                 file.string() + ": simulation: too large to simulate: about 1.9e+05 tasks and 7.5 GiB (limit "
                                 "simulation.max_memory_gib / --max-memory-gib 4), driven by cluster.inter_node.nics_per_node "
                                 "(8e+06 NICs)" + kTail);
}

TEST_CASE("budget: 1e6 nodes are refused, naming the cluster's size", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json("llama3-70b-h100x64-ndr400.json");
  doc["cluster"]["nodes"] = 1000000;
  doc["training"]["global_batch_size"] = 250000;  // DP 250000, one micro-batch each
  const CliResult r_doc = run_doc(dir, doc, file);
  check_one_line(r_doc,
                 file.string() + ": simulation: too large to simulate: about 3.2e+03 tasks and 18.9 GiB (limit "
                                 "simulation.max_memory_gib / --max-memory-gib 4), driven by cluster.nodes x "
                                 "cluster.gpus_per_node (8e+06 GPUs)" + kTail);
}

TEST_CASE("budget: --max-memory-gib and simulation.max_tasks move the limit both ways", "[cli]") {
  const std::string scenario = (scenarios_dir() / "llama3-8b-h100x8.json").string();
  check_one_line(run_cli({"run", scenario, "--max-memory-gib", "0.001"}),
                 scenario + ": simulation: too large to simulate: about 3.9e+04 tasks and 11 MiB (limit "
                            "simulation.max_memory_gib / --max-memory-gib 0.001), driven by training.global_batch_size "
                            "(32 micro-batches per step)" + kTail);
  check_one_line(run_cli({"run", scenario, "--max-memory-gib", "-1"}),
                 "clustersim run: --max-memory-gib -1: expected a positive number of GiB");
  check_one_line(run_cli({"run", scenario, "--set", "simulation.max_tasks=1000"}),
                 scenario + ": simulation: too large to simulate: about 3.9e+04 tasks and 11 MiB (limit "
                            "simulation.max_tasks 1e+03), driven by training.global_batch_size (32 micro-batches per "
                            "step)" + kTail);
  // Raised (or simply above the step), the run is the same as without.
  const CliResult plain = run_cli({"run", scenario, "--json"});
  const CliResult raised = run_cli({"run", scenario, "--json", "--max-memory-gib", "64", "--set", "simulation.max_tasks=1e9"});
  REQUIRE(plain.exit_code == 0);
  REQUIRE(raised.exit_code == 0);
  CHECK(plain.out == raised.out);
}

TEST_CASE("budget: a sweep lists a point too large to simulate as invalid and runs the rest", "[cli]") {
  const std::string scenario = (scenarios_dir() / "llama3-8b-h100x8.json").string();
  const CliResult r = run_cli({"sweep", scenario, "--vary", "training.global_batch_size=128,1000000", "--threads", "1"});
  INFO(r.describe());
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "    128  14."));
  CHECK(contains(r.out, "1000000  invalid: simulation: too large to simulate: about 3e+08 tasks and 29.1 GiB (limit "
                        "simulation.max_tasks 2e+08), driven by training.global_batch_size (2.5e+05 micro-batches per step)" +
                            kTail));
  check_one_line(run_cli({"sweep", scenario, "--vary", "training.global_batch_size=128", "--max-memory-gib", "nan"}),
                 "clustersim sweep: --max-memory-gib nan: expected a positive number of GiB");
}

// Accepted and ignored (class 9): each now refused with the reason.
TEST_CASE("moe_ffn_hidden_size 0 is refused instead of meaning the default", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json("deepseek-moe-16b-h100x32.json");
  doc["model"]["moe_ffn_hidden_size"] = 0;
  const CliResult r_doc = run_doc(dir, doc, file);
  check_one_line(r_doc,
                 file.string() + ": model.moe_ffn_hidden_size: 0 is out of range (expected an integer >= 1)");
}

TEST_CASE("tp_comm_overlap without sequence parallelism is refused, as Megatron-LM refuses it", "[cli]") {
  TempDir dir;
  fs::path file;
  json doc = scenario_json("llama3-8b-h100x8.json");
  doc["training"]["sequence_parallel"] = false;
  doc["training"]["tp_comm_overlap"] = true;
  const CliResult r_doc = run_doc(dir, doc, file);
  check_one_line(r_doc,
                 file.string() + ": training.tp_comm_overlap: needs training.sequence_parallel (the overlap pipelines "
                                 "sequence parallelism's all-gathers and reduce-scatters with their GEMMs, as in Megatron-LM)");
}

TEST_CASE("NVLS on a node without NVSwitch in-switch reduction is refused", "[cli]") {
  TempDir dir;
  fs::path file;
  json pcie = scenario_json("llama3-8b-h100x8.json");
  pcie["cluster"]["gpu"] = "H100-PCIe";
  pcie["cluster"]["intra_node"] = {{"name", "pcie"}, {"nvls", true}};
  const CliResult r_pcie = run_doc(dir, pcie, file);
  check_one_line(r_pcie,
                 file.string() + ": cluster.intra_node.nvls: NVLS is in-switch reduction (NVLink SHARP) and needs an "
                                 "NVSwitch fabric; \"pcie\" has none");
  json a100 = scenario_json("llama2-13b-a100x64-hdr200.json");  // A100 NVSwitch: no in-switch reduction
  a100["simulation"] = {{"nccl_algorithm", "nvls"}};
  const CliResult r_a100 = run_doc(dir, a100, file);
  check_one_line(r_a100,
                 file.string() + ": simulation.nccl_algorithm: \"nvls\" needs NVSwitch with in-switch reduction (NVLink "
                                 "SHARP: H100 / H200 / B200 nodes, NVL72); cluster.intra_node \"nvswitch\" has none");
}

TEST_CASE("calibrate fit warns once on stderr about rows nccl-tests marked wrong", "[cli]") {
  TempDir dir;
  const fs::path log = dir.write("h100-allreduce.log",
      "# Collective test starting: all_reduce_perf\n"
      "# nThread 1 nGpus 8 minBytes 8 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "     1048576        262144     float     sum      -1    20.00   52.43   91.75      0    20.00   52.43   91.75      0\n"
      "     2097152        524288     float     sum      -1    30.00   69.91  122.34      3    30.00   69.91  122.34      3\n"
      "     4194304       1048576     float     sum      -1    50.00   83.89  146.80      0    50.00   83.89  146.80      0\n");
  // --scenario: the node the log ran on (with NVLS), so the fit places it and adds no note of its own.
  const CliResult r = run_cli({"calibrate", "fit", log.string(), "-o", (dir / "profile.json").string(), "--gpu", "H100-SXM",
                               "--scenario", (scenarios_dir() / "llama3-8b-h100x8.json").string()});
  INFO(r.describe());
  CHECK(r.exit_code == 0);
  const auto lines = r.err_lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == "note: " + log.string() + ": 1 row with a nonzero #wrong (nccl-tests found wrong results) skipped: line 5");
}

// The trace (class 3): streamed event by event; the bytes are still exactly nlohmann::json's dump of the
// whole document, which is what the writer built before.
TEST_CASE("the streamed trace is byte for byte the dump of its own JSON document", "[cli]") {
  TempDir dir;
  for (const char* name : {"llama3-8b-h100x8.json", "two-jobs-shared-spine.json"}) {
    const fs::path trace = dir / (std::string(name) + ".trace.json");
    const CliResult r = run_cli({"run", (scenarios_dir() / name).string(), "--trace", trace.string()});
    INFO(r.describe());
    REQUIRE(r.exit_code == 0);
    const std::string text = read_text(trace);
    const json doc = json::parse(text);
    CHECK(doc.dump() == text);
    CHECK(doc.at("traceEvents").size() > 1000);
    CHECK(doc.at("otherData").at("step_time_s").get<double>() > 0);
  }
}
