// clustersim-sweep-bench [--threads N] [--network analytical|flow] [--gpus N] [--scenario FILE] [--limit N]
//
// Sweep speed: the layout search of scenarios/llama3-70b-h100x256.json scaled to --gpus GPUs (default
// 1,024: 128 nodes), on --threads workers (default 2), with the network model chosen by --network (the
// scenario's "simulation.network"). Prints
// the search counts, wall time, layouts simulated per second and candidates screened per second.
// --limit N simulates only N evenly spaced layouts of those left to simulate (for a quick figure);
// enumeration, the memory screen and the dominance pass always cover the whole space.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/base/input_error.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/explore/sweep.hpp"

using namespace cs::sim;
using nlohmann::json;

int main(int argc, char** argv) {
  int threads = 2, gpus = 1024;
  std::size_t limit = 0;
  std::string network = "analytical";
  std::string file = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/llama3-70b-h100x256.json";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "clustersim-sweep-bench: " << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--threads") threads = std::atoi(value().c_str());
    else if (a == "--network") network = value();
    else if (a == "--gpus") gpus = std::atoi(value().c_str());
    else if (a == "--scenario") file = value();
    else if (a == "--limit") limit = static_cast<std::size_t>(std::atoll(value().c_str()));
    else {
      std::cerr << "usage: clustersim-sweep-bench [--threads N] [--network analytical|flow] [--gpus N] [--scenario FILE] [--limit N]\n";
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  try {
    json doc = read_json_file(file);
    apply_override(doc, "cluster.nodes=" + std::to_string(gpus / 8), file);
    apply_override(doc, "simulation.network=\"" + network + "\"", file);
    (void)parse_scenario(doc, file);  // the network must be accepted before the bench means anything

    SearchOptions opts;
    opts.run.threads = threads;
    const auto t0 = std::chrono::steady_clock::now();
    const auto layouts = enumerate_layouts(doc, file, opts);
    // Screening (validation + memory) and dominance, then the simulation of what is left: the two
    // phases of search_layouts, timed apart.
    SweepOptions screen = opts.run;
    screen.simulate = false;
    auto points = run_points(doc, file, layouts, screen);
    mark_dominated(points);
    const SearchCounts counts = count_points(points);
    std::vector<Assignment> todo;
    for (const auto& p : points)
      if (p.status == PointStatus::pending) todo.push_back(p.assignment);
    const auto t1 = std::chrono::steady_clock::now();
    if (limit > 0 && todo.size() > limit) {  // an evenly spaced sample, so cheap and dear layouts both count
      std::vector<Assignment> sample;
      for (std::size_t k = 0; k < limit; ++k) sample.push_back(todo[k * todo.size() / limit]);
      todo = std::move(sample);
    }
    const auto simulated_points = run_points(doc, file, todo, opts.run);
    const auto t2 = std::chrono::steady_clock::now();
    const double screen_s = std::chrono::duration<double>(t1 - t0).count();
    const double sim_s = std::chrono::duration<double>(t2 - t1).count();
    std::size_t simulated = 0;
    for (const auto& p : simulated_points) simulated += p.simulated();
    const std::size_t invalid = counts.invalid, not_fitting = counts.not_fitting;
    std::printf("scenario        %s scaled to %d GPUs, network %s, %d threads\n", file.c_str(), gpus, network.c_str(), threads);
    std::printf("enumerated      %zu layouts: %zu invalid, %zu do not fit, %zu dominated, %zu to simulate\n", layouts.size(),
                invalid, not_fitting, counts.dominated, counts.cancelled);
    std::printf("screening       %.2f s (%.0f candidates/s)\n", screen_s, static_cast<double>(layouts.size()) / screen_s);
    std::printf("simulation      %zu layouts in %.2f s\n", simulated, sim_s);
    std::printf("layouts/s       %.2f simulated per second (%d threads)\n", static_cast<double>(simulated) / sim_s, threads);
  } catch (const cs::InputError& e) {
    for (const auto& m : e.messages()) std::cerr << m << "\n";
    return 2;
  }
  return 0;
}
