// The simulation budget (sim/step/step_budget.hpp): the estimate of a step's size from the scenario's shape
// against the real task graph, and the refusal past the limits.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
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

// A field of /proc/self/status in bytes (its figures are kB); -1 when absent.
double status_bytes(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, field.size() + 1, field + ":") != 0) continue;
    std::istringstream rest(line.substr(field.size() + 1));
    double kib = -1;
    rest >> kib;
    return kib * 1024.0;
  }
  return -1;
}

// What a peak measurement simulates: a scenario file and its overrides (a generated document is written to a
// file first), materialised (every rank's graph built) or not.
struct PeakInput {
  std::string file;
  std::vector<std::string> overrides;
  bool materialised = false;
};

// The peak resident memory simulate() adds, measured in a fresh process so that it is the simulation's own: a
// child execs this test binary's hidden case "budget child - the peak one simulation adds" (below), which
// loads the scenario, hands its free heap back (malloc_trim), resets its peak to its current resident set
// (clear_refs 5, proc(5)), simulates, and writes VmHWM - VmRSS before to the pipe. A forked child without
// the exec inherited the parent's heap, and the copy-on-write pages its allocator touched there counted as
// the simulation's: the case failed when the whole test binary ran in one process (36 MiB against an
// estimate of 31), never under ctest's one process per case. -1: the child failed.
double simulation_peak_bytes(const PeakInput& in) {
  int fd[2];
  REQUIRE(pipe(fd) == 0);
  std::string overrides;
  for (const std::string& o : in.overrides) overrides += o + "\n";
  const std::string out_fd = std::to_string(fd[1]);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    setenv("CLUSTERSIM_PEAK_FILE", in.file.c_str(), 1);
    setenv("CLUSTERSIM_PEAK_OVERRIDES", overrides.c_str(), 1);
    setenv("CLUSTERSIM_PEAK_MATERIALISED", in.materialised ? "1" : "0", 1);
    setenv("CLUSTERSIM_PEAK_FD", out_fd.c_str(), 1);
    if (const int null = open("/dev/null", O_WRONLY); null >= 0) dup2(null, STDOUT_FILENO), dup2(null, STDERR_FILENO);
    execl("/proc/self/exe", "test_sim", "budget child - the peak one simulation adds", static_cast<char*>(nullptr));
    _exit(127);
  }
  REQUIRE(pid > 0);
  close(fd[1]);
  double delta = -1;
  const ssize_t got = read(fd[0], &delta, sizeof delta);
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return got == static_cast<ssize_t>(sizeof delta) && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? delta : -1;
}

// A generated scenario document, written where a child can load it (unique per process and document).
std::string written(const json& doc, const std::string& what) {
  const auto dir = std::filesystem::temp_directory_path() / ("clustersim-peak-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string name;
  for (char c : what) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
  const auto path = dir / (name + ".json");
  std::ofstream(path) << doc.dump();
  return path.string();
}

// Several one-node jobs of one model on one cluster: `jobs` nodes of `gpus` GPUs, each job TP over its node.
json one_node_jobs(int jobs, int gpus, int layers, int batch, const std::string& network) {
  json list = json::array();
  for (int j = 0; j < jobs; ++j) {
    std::string name(1, 'j');  // built in two steps: GCC 12 -O3 warns (-Wrestrict) falsely on "j" + to_string
    name += std::to_string(j);
    list.push_back({{"name", name},
                    {"nodes", {j}},
                    {"model", {{"preset", "llama3-8b"}, {"num_layers", layers}}},
                    {"training", {{"seq_length", 2048}, {"global_batch_size", batch}, {"micro_batch_size", 1},
                                  {"tensor_model_parallel_size", gpus}}}});
  }
  return {{"name", "jobs"},
          {"cluster", {{"gpu", "H100-SXM"}, {"nodes", jobs}, {"gpus_per_node", gpus}, {"intra_node", "nvswitch"},
                       {"inter_node", {{"fabric", "fat-tree"}, {"link", "ib-ndr400"}, {"nics_per_node", gpus}}}}},
          {"jobs", list},
          {"simulation", {{"network", network}}}};
}

void check_peak_under_estimate(const PeakInput& in, const std::string& what) {
  const double estimate = estimate_step(load_scenario(in.file, in.overrides), in.materialised).memory_bytes;
  const double peak = simulation_peak_bytes(in);
  INFO(what << ": estimated " << estimate / 1048576.0 << " MiB, peak " << peak / 1048576.0 << " MiB");
  REQUIRE(peak >= 0);
  CHECK(peak <= estimate);
}

}  // namespace

TEST_CASE("budget: the memory estimate bounds the simulation's measured peak, shipped and generated scenarios", "[sim][slow]") {
  // The budget refuses a step by its estimate; a step that passes must then fit: the estimate is an upper
  // bound of the peak resident memory simulate() adds (measured in a child, see simulation_peak_bytes). Over
  // every shipped scenario (one job and two, analytical and flow, mirrored 16k GPUs) and generated ones:
  // hundreds of one-node jobs (issue 32: 2,048 of them passed at 3.7 GiB and took 5.8 GB, each job's view
  // of the scenario kept a buffer for every job), one GPU per node, symmetry off.
  for (const std::string& path : shipped_scenarios()) check_peak_under_estimate({path, {}}, path);
  for (const char* network : {"analytical", "flow"}) {
    for (const auto& [what, doc] : {std::pair{std::string("256 jobs ") + network, one_node_jobs(256, 8, 32, 8, network)},
                                    std::pair{std::string("512 small jobs ") + network, one_node_jobs(512, 8, 1, 1, network)},
                                    std::pair{std::string("512 one-GPU jobs ") + network, one_node_jobs(512, 1, 1, 1, network)}})
      check_peak_under_estimate({written(doc, what), {}}, what);
  }
  const std::string llama70 = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/llama3-70b-h100x64-ndr400.json";
  check_peak_under_estimate({llama70, {"simulation.symmetry=false"}}, "llama3-70b symmetry off");
  check_peak_under_estimate({llama70, {"simulation.symmetry=false"}, true}, "llama3-70b materialised");
  std::filesystem::remove_all(std::filesystem::temp_directory_path() / ("clustersim-peak-" + std::to_string(getpid())));
}

TEST_CASE("budget child - the peak one simulation adds", "[.][budget-child]") {
  // Run only by simulation_peak_bytes's exec'd child (hidden: ctest does not list it); by hand it has nothing
  // to measure and passes.
  const char* file = std::getenv("CLUSTERSIM_PEAK_FILE");
  const char* fd_text = std::getenv("CLUSTERSIM_PEAK_FD");
  if (!file || !fd_text) return;
  std::vector<std::string> overrides;
  std::istringstream lines(std::getenv("CLUSTERSIM_PEAK_OVERRIDES") ? std::getenv("CLUSTERSIM_PEAK_OVERRIDES") : "");
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) overrides.push_back(line);
  const bool materialised = std::string(std::getenv("CLUSTERSIM_PEAK_MATERIALISED") ? std::getenv("CLUSTERSIM_PEAK_MATERIALISED") : "0") == "1";
  double delta = -1;
  try {
    const Scenario s = load_scenario(file, overrides);
    malloc_trim(0);
    std::ofstream("/proc/self/clear_refs") << "5";
    const double before = status_bytes("VmRSS");
    const SimulationResult r = materialised ? simulate_materialised(s) : simulate(s);
    delta = status_bytes("VmHWM") - before;
  } catch (...) {
  }
  const int fd = std::atoi(fd_text);
  REQUIRE(write(fd, &delta, sizeof delta) == static_cast<ssize_t>(sizeof delta));
}

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
  check_estimate(load_scenario(llama8, {"training.recompute_granularity=none", "training.cpu_offloading_num_layers=16"}), "cpu offload");
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
