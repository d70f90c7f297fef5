// clustersim-symmetry-bench [SCENARIO.json] [--only analytical|flow] [--only-unmirrored] [--mirrored-only]
//
// What simulating every rank costs: one training step of the scenario (default:
// scenarios/llama3-405b-h100x16384.json, Llama-3 405B on 16,384 H100, TP8 PP16 DP128 interleaved) with the
// analytical and the flow network, mirrored (simulation.symmetry true: one rank per pipeline stage) and
// unmirrored (false: every rank). Each run is a child process of its own so that its peak resident set
// (getrusage's ru_maxrss) is its own; the wall time counts simulate() only (scenario loading excluded).
// Prints, per run: wall time, peak RSS, simulated ranks, tasks, engine events, events per second and the
// simulated step time. The simulation budget (simulation.max_memory_gib) is lifted so that the run is
// measured rather than refused. A number, not a test.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"

using namespace cs::sim;

namespace {

int run_one(const std::string& file, const char* network, bool symmetry) {
  const Scenario s = load_scenario(file, {std::string("simulation.network=") + network,
                                          std::string("simulation.symmetry=") + (symmetry ? "true" : "false"),
                                          "simulation.max_memory_gib=1000", "simulation.max_tasks=1e11"});
  const auto t0 = std::chrono::steady_clock::now();
  const SimulationResult r = simulate(s);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const double rss_gib = static_cast<double>(ru.ru_maxrss) / (1024.0 * 1024.0);  // ru_maxrss is in KiB
  std::printf("%-10s  %-10s  %8.3f  %8.3f  %8d  %11zu  %11llu  %12.0f  %9.4f\n", network,
              symmetry ? "mirrored" : "unmirrored", wall, rss_gib, r.report.simulated_ranks, r.report.tasks,
              static_cast<unsigned long long>(r.report.events), static_cast<double>(r.report.events) / wall,
              r.report.step_time_s);
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string file = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/llama3-405b-h100x16384.json";
  std::vector<const char*> networks = {"analytical", "flow"};
  std::vector<bool> symmetries = {true, false};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--only" && i + 1 < argc) {
      networks = {argv[++i]};
    } else if (a == "--only-unmirrored") {
      symmetries = {false};
    } else if (a == "--mirrored-only") {
      symmetries = {true};
    } else if (!a.empty() && a[0] != '-') {
      file = a;
    } else {
      std::fprintf(stderr, "usage: clustersim-symmetry-bench [SCENARIO.json] [--only analytical|flow] [--only-unmirrored|--mirrored-only]\n");
      return 2;
    }
  }
  std::printf("%s\n", file.substr(file.find_last_of('/') + 1).c_str());
  std::printf("%-10s  %-10s  %8s  %8s  %8s  %11s  %11s  %12s  %9s\n", "network", "ranks", "wall_s", "rss_gib",
              "sim_rank", "tasks", "events", "events_per_s", "step_s");
  std::fflush(stdout);
  int status_all = 0;
  for (const char* network : networks) {
    for (const bool symmetry : symmetries) {
      const pid_t pid = fork();
      if (pid < 0) {
        std::perror("fork");
        return 1;
      }
      if (pid == 0) {
        try {
          _exit(run_one(file, network, symmetry));
        } catch (const std::exception& e) {
          std::fprintf(stderr, "%s %s: %s\n", network, symmetry ? "mirrored" : "unmirrored", e.what());
          _exit(1);
        }
      }
      int status = 0;
      waitpid(pid, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) status_all = 1;
    }
  }
  return status_all;
}
