// clustersim-symmetry-bench [SCENARIO.json | --frontier] [--only analytical|flow] [--only-unmirrored] [--mirrored-only] [--materialised]
//
// --frontier (issue 33): instead of one scenario, the 405B layout at 16,384 GPUs (the scenario below) and grown
// by data parallelism on a three-tier fat tree to 131,072 and 1,048,576 GPUs (bench/scenarios/), mirrored, and
// with BENCH_FULL=1 or --only-unmirrored every rank at 16,384 and 131,072.
//
// What simulating every rank costs, and what symmetry by orbits (sim/step/orbits.hpp) saves on unequal
// GPUs: one training step of the scenario (default: scenarios/llama3-405b-h100x16384.json, Llama-3 405B on
// 16,384 H100, TP8 PP16 DP128 interleaved) with the analytical and the flow network, as
//   mirrored     the scenario as it is (homogeneous: one class of equal ranks per pipeline stage);
//   stragglers   four GPUs slowed by 1.1-1.25 in four replicas, stages and TP indices (cluster.stragglers):
//                TP (tp 0, 3, 5, 7 of 8), DP (dp 5, 40, 1, 79 of 128) and stage (1, 6, 10, 15 of 16),
//                reduced modulo the layout; orbit-batched: 5 TP types x 5 DP types = 25 classes a stage;
//   node-groups  the first half of the nodes H100, the second half H200 (cluster.node_groups); orbit-batched;
//   full, full-stragglers, full-speedvar
//                simulation.symmetry false, every rank executed (from the per-stage template,
//                sim/engine/template_executor.hpp): the scenario as it is, with the four stragglers, and with
//                cluster.speed_variation cv 0.02 (every GPU its own speed). Only with --only-unmirrored or
//                BENCH_FULL=1 in the environment, and never with --mirrored-only;
//   materialised the stragglers with symmetry false run on the materialised graph of every rank
//                (simulate_materialised, the reference the template equals byte for byte): only with
//                --materialised (at 16,384 GPUs minutes and ~9 GiB; on a 1,024-GPU copy a few seconds).
// Each run is a child process of its own so that its peak resident set (getrusage's ru_maxrss) is its own;
// the wall time counts simulate() only (scenario loading excluded), cpu_s is the child's user CPU time (the
// loading included: on a loaded machine the honest figure). Prints, per run: wall time, CPU time, peak RSS,
// classes (= simulated ranks), tasks, engine events, events per second and the simulated step time. The
// simulation budget is lifted so that the run is measured rather than refused. A number, not a test.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "sim/base/huge_pages.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"

using namespace cs::sim;

namespace {

enum class Variant { mirrored, stragglers, node_groups, full, full_stragglers, full_speedvar, materialised };
const char* name(Variant v) {
  switch (v) {
    case Variant::mirrored: return "mirrored";
    case Variant::stragglers: return "stragglers";
    case Variant::node_groups: return "node-groups";
    case Variant::full: return "full";
    case Variant::full_stragglers: return "full-stragglers";
    case Variant::full_speedvar: return "full-speedvar";
    case Variant::materialised: return "materialised";
  }
  return "";
}

// The four stragglers of the header, as a cluster.stragglers override.
std::string stragglers(const Scenario& s) {
  const auto& t = s.training;
  const int tp[] = {0, 3, 5, 7}, dp[] = {5, 40, 1, 79}, pp[] = {1, 6, 10, 15};
  const double slow[] = {1.2, 1.15, 1.1, 1.25};
  std::string out = "cluster.stragglers=[";
  for (int k = 0; k < 4; ++k) {
    const int gpu = tp[k] % t.tp + t.tp * t.cp * (dp[k] % t.dp + t.dp * (pp[k] % t.pp));
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s{\"gpu\": %d, \"slowdown\": %.2f}", k ? ", " : "", gpu, slow[k]);
    out += buf;
  }
  return out + "]";
}

int run_one(const std::string& file, const char* network, Variant v) {
  std::vector<std::string> set = {std::string("simulation.network=") + network, "simulation.max_memory_gib=1000",
                                  "simulation.max_tasks=1e11"};
  const Scenario plain = load_scenario(file, set);
  const bool one_by_one = v == Variant::full || v == Variant::full_stragglers || v == Variant::full_speedvar || v == Variant::materialised;
  if (v == Variant::stragglers || v == Variant::full_stragglers || v == Variant::materialised) set.push_back(stragglers(plain));
  if (v == Variant::full_speedvar) set.push_back("cluster.speed_variation={\"cv\": 0.02, \"seed\": 1}");
  if (one_by_one) set.push_back("simulation.symmetry=false");
  if (v == Variant::node_groups) {
    const int half = plain.cluster.nodes / 2;
    set.push_back("cluster.node_groups=[{\"gpu\": \"" + plain.gpu.name + "\", \"nodes\": " + std::to_string(half) +
                  "}, {\"gpu\": \"H200\", \"nodes\": " + std::to_string(plain.cluster.nodes - half) + "}]");
  }
  const Scenario s = load_scenario(file, set);
  const auto t0 = std::chrono::steady_clock::now();
  const SimulationResult r = v == Variant::materialised ? simulate_materialised(s) : simulate(s);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const double rss_gib = static_cast<double>(ru.ru_maxrss) / (1024.0 * 1024.0);  // ru_maxrss is in KiB
  const double cpu = static_cast<double>(ru.ru_utime.tv_sec) + static_cast<double>(ru.ru_utime.tv_usec) * 1e-6;
  std::printf("%-10s  %-15s  %8.3f  %8.3f  %8.3f  %8d  %11zu  %11llu  %12.0f  %9.4f\n", network, name(v), wall, cpu,
              rss_gib, r.report.simulated_ranks, r.report.tasks, static_cast<unsigned long long>(r.report.events),
              static_cast<double>(r.report.events) / wall, r.report.step_time_s);
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  cs::restart_with_huge_page_malloc(argv);  // as the CLI does (sim/base/huge_pages.hpp)
  std::string file = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/llama3-405b-h100x16384.json";
  std::vector<const char*> networks = {"analytical", "flow"};
  const char* env = std::getenv("BENCH_FULL");
  const bool full = env != nullptr && *env != '\0' && std::strcmp(env, "0") != 0;
  std::vector<Variant> variants = {Variant::mirrored, Variant::stragglers, Variant::node_groups};
  const std::vector<Variant> every_rank = {Variant::full, Variant::full_stragglers, Variant::full_speedvar};
  if (full) variants.insert(variants.end(), every_rank.begin(), every_rank.end());
  bool materialised = false, frontier = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--only" && i + 1 < argc) {
      networks = {argv[++i]};
    } else if (a == "--only-unmirrored") {
      variants = every_rank;
    } else if (a == "--mirrored-only") {
      variants = {Variant::mirrored, Variant::stragglers, Variant::node_groups};
    } else if (a == "--materialised") {
      materialised = true;
    } else if (a == "--frontier") {
      frontier = true;
    } else if (!a.empty() && a[0] != '-') {
      file = a;
    } else {
      std::fprintf(stderr, "usage: clustersim-symmetry-bench [SCENARIO.json | --frontier] [--only analytical|flow] [--only-unmirrored|--mirrored-only] [--materialised]\n");
      return 2;
    }
  }
  if (materialised) variants.push_back(Variant::materialised);
  // --frontier: the 405B layout grown by data parallelism (issue 33): 16,384, 131,072 and 1,048,576 GPUs
  // mirrored, and every rank at 16,384 and 131,072 (BENCH_FULL=1 or --only-unmirrored), each network.
  std::vector<std::string> files = {file};
  if (frontier) {
    const std::string dir = std::string(CLUSTERSIM_SOURCE_DIR) + "/bench/scenarios/";
    files = {std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/llama3-405b-h100x16384.json", dir + "llama3-405b-h100x131k-3tier.json",
             dir + "llama3-405b-h100x1m-3tier.json"};
  }
  int status_all = 0;
  for (const std::string& f : files) {
    std::printf("%s\n", f.substr(f.find_last_of('/') + 1).c_str());
    std::printf("%-10s  %-15s  %8s  %8s  %8s  %8s  %11s  %11s  %12s  %9s\n", "network", "run", "wall_s", "cpu_s", "rss_gib",
                "classes", "tasks", "events", "events_per_s", "step_s");
    std::fflush(stdout);
    for (const char* network : networks) {
      for (const Variant v : variants) {
        if (frontier && v != Variant::mirrored && v != Variant::full) continue;
        if (frontier && v == Variant::full && f == files.back()) continue;  // every rank of 10^6 GPUs: not a target
        const pid_t pid = fork();
        if (pid < 0) {
          std::perror("fork");
          return 1;
        }
        if (pid == 0) {
          try {
            _exit(run_one(f, network, v));
          } catch (const std::exception& e) {
            std::fprintf(stderr, "%s %s: %s\n", network, name(v), e.what());
            _exit(1);
          }
        }
        int status = 0;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) status_all = 1;
      }
    }
  }
  return status_all;
}
