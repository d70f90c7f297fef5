// The simulation budget (sim/step/step_budget.hpp): the estimate of a step's size from the scenario's shape
// against the real task graph, and the refusal past the limits.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/base/input_error.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"
#include "sim/step/step_budget.hpp"

using namespace cs::sim;
using cs::InputError;
using nlohmann::json;

namespace {

std::vector<std::string> shipped_scenarios() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios"))
    if (e.path().extension() == ".json") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// The estimate against the graph build_step really makes (and the events the executor really ran).
void check_estimate(const Scenario& s, const std::string& what) {
  const StepEstimate e = estimate_step(s);
  const SimulationResult r = simulate(s);
  // (With symmetry off the plan is the per-stage template; the report counts every rank's tasks.)
  const double tasks = static_cast<double>(r.from_template ? r.report.tasks : r.plan.graph.tasks().size());
  const double events = static_cast<double>(r.execution.events);
  INFO(what << ": estimated " << e.tasks << " tasks, built " << tasks << "; estimated " << e.events << " events, ran " << events);
  // Multi-job: the merged graph holds every job once; the estimate counts every job once too.
  CHECK(e.tasks >= tasks / 1.1);
  CHECK(e.tasks <= tasks * 1.1);
  CHECK(e.events >= events / 2);
  CHECK(e.events <= events * 2);
}

}  // namespace

TEST_CASE("budget: the task estimate is within 10% of the real task count on every shipped scenario", "[sim]") {
  // A property of the estimate over the shapes users run: dense and MoE models, PP with 1F1B and interleaved
  // schedules, TP with and without SP and tp_comm_overlap, ZeRO-1, two jobs on one fabric, analytical and
  // flow networks. Events: within 2x (measured 1.0-1.27 per task, estimated 1.25).
  for (const std::string& path : shipped_scenarios()) check_estimate(load_scenario(path), path);
}

TEST_CASE("budget: the estimate follows context parallelism, ZeRO-3, recompute and symmetry off", "[sim]") {
  const std::string llama8 = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/llama3-8b-h100x8.json";
  const std::string llama70 = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/llama3-70b-h100x64-ndr400.json";
  check_estimate(load_scenario(llama8, {"training.context_parallel_size=2", "training.tensor_model_parallel_size=2"}), "cp 2");
  check_estimate(load_scenario(llama8, {"training.zero_stage=3"}), "zero 3");
  check_estimate(load_scenario(llama8, {"training.zero_stage=2", "training.global_batch_size=32"}), "zero 2");
  check_estimate(load_scenario(llama8, {"training.recompute_granularity=full"}), "full recompute");
  check_estimate(load_scenario(llama8, {"simulation.symmetry=false", "training.global_batch_size=16"}), "symmetry off");
  // Unequal GPUs: one rank per class of equal ranks (orbits.hpp); GPU 9 = tp 1 of replica 1 on llama70's
  // TP8 layout: 2 TP types x 2 DP types a stage.
  check_estimate(load_scenario(llama70, {"cluster.stragglers=[{\"gpu\": 9, \"slowdown\": 1.2}]", "training.global_batch_size=32"}),
                 "straggler");
  check_estimate(load_scenario(llama70, {"simulation.network=flow", "training.global_batch_size=32"}), "flow");
  check_estimate(load_scenario(llama70, {"training.virtual_pipeline_model_parallel_size=2", "training.global_batch_size=32"}),
                 "interleaved");
}

TEST_CASE("budget: the memory estimate of the 16k-GPU unmirrored step is what it measured", "[sim]") {
  // Llama-3 405B on 16,384 H100, every rank: 1.0 x 10^8 tasks, measured 8.0-8.8 GiB peak RSS (getrusage)
  // and 9.2 GiB (/usr/bin/time) with the flow network (bench/README.md), 85-93 B a task. The estimate,
  // 100 B a task + 2.5 KB a GPU + 1 KB a NIC + 8 MB, must cover it without asking for twice as much (at
  // 200 B a task it asked for 19 GiB, so the run needed --max-memory-gib 20).
  const std::string f = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/llama3-405b-h100x16384.json";
  // (The graph of every rank materialised, simulate_materialised: a plain run executes it from a template.)
  // The layout measured (bench/README.md): the scenario before it took the Llama 3 paper's ZeRO-2, fp32
  // gradients and no recompute.
  const StepEstimate e = estimate_step(load_scenario(f, {"simulation.symmetry=false", "training.zero_stage=1", "training.main_grads_dtype=bf16",
                                                         "training.grad_reduce_dtype=bf16", "training.recompute_granularity=selective"}),
                                       true);
  const double gib = 1073741824.0;
  CHECK(e.tasks == Approx(101679104).epsilon(0.1));
  CHECK(e.memory_bytes >= 8.8 * gib);
  CHECK(e.memory_bytes <= 1.15 * 9.2 * gib);
}

TEST_CASE("budget: simulation.max_tasks and max_memory_gib refuse a step past them and let it through below", "[sim]") {
  const std::string llama8 = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/llama3-8b-h100x8.json";
  const Scenario s = load_scenario(llama8);
  const StepEstimate e = estimate_step(s);
  // 32 micro-batches of 32 layers on one simulated rank: ~4e4 tasks, a few MB: well inside the defaults.
  CHECK(e.tasks < 1e5);
  CHECK(e.memory_bytes < 1e8);
  CHECK_NOTHROW(check_budget(s));
  const Scenario tight = load_scenario(llama8, {"simulation.max_tasks=1000"});
  try {
    check_budget(tight);
    FAIL("no error");
  } catch (const InputError& err) {
    REQUIRE(err.messages().size() == 1);
    // 32 micro-batches (global batch 128 over DP 4) x 32 layers x ~38 tasks per layer's forward and backward.
    CHECK(err.messages()[0] == llama8 + ": simulation: too large to simulate: about 3.9e+04 tasks and 11 MiB (limit "
                                        "simulation.max_tasks 1e+03), driven by training.global_batch_size (32 micro-batches "
                                        "per step); raise the limit or shrink the step");
  }
  // simulate() checks the budget first: nothing is built.
  CHECK_THROWS_AS(simulate(tight), InputError);
  const Scenario small = load_scenario(llama8, {"simulation.max_memory_gib=0.001"});
  CHECK_THROWS_AS(check_budget(small), InputError);
}
