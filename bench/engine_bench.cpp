// clustersim-engine-bench [SCENARIO.json ...]
//
// Engine speed: one training step of each scenario (default: scenarios/gpt3-175b-h100x16384.json and
// gpt3-175b-a100x1024.json) with the analytical and with the flow network. Prints wall time per step
// (scenario loading excluded), tasks, engine events, events per second and the simulated step time.
// A number, not a test.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "sim/base/huge_pages.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"

using namespace cs::sim;

int main(int argc, char** argv) {
  cs::restart_with_huge_page_malloc(argv);  // as the CLI does (sim/base/huge_pages.hpp)
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) files.emplace_back(argv[i]);
  if (files.empty())
    files = {std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/gpt3-175b-h100x16384.json",
             std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/gpt3-175b-a100x1024.json"};
  std::printf("%-28s  %-10s  %9s  %10s  %10s  %12s  %10s\n", "scenario", "network", "tasks", "events", "wall_s", "events_per_s", "step_s");
  for (const auto& file : files) {
    for (const char* network : {"analytical", "flow"}) {
      const Scenario s = load_scenario(file, {std::string("simulation.network=") + network});
      const auto t0 = std::chrono::steady_clock::now();
      const SimulationResult r = simulate(s);
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const std::string name = file.substr(file.find_last_of('/') + 1);
      std::printf("%-28s  %-10s  %9zu  %10llu  %10.3f  %12.0f  %10.3f\n", name.c_str(), network, r.report.tasks,
                  static_cast<unsigned long long>(r.report.events), wall, static_cast<double>(r.report.events) / wall,
                  r.report.step_time_s);
    }
  }
  return 0;
}
