// clustersim run SCENARIO.json [--json] [--trace FILE] [--set path=value ...]
#include <iostream>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "sim/cli/cli.hpp"
#include "sim/cli/cli_options.hpp"
#include "sim/cli/comm_calibration.hpp"
#include "sim/base/input_error.hpp"
#include "sim/goodput/goodput.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"
#include "sim/report/output_file.hpp"
#include "sim/report/trace.hpp"

namespace po = boost::program_options;

namespace cs::sim::cli {

int run(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: clustersim run SCENARIO.json [--json] [--trace out.json] [--set path=value ...]\n\n"
      "Simulates one training step of the scenario and prints its report. A scenario with several jobs\n"
      "on one cluster prints one report per job, each with its slowdown from sharing the fabric\n"
      "(--json: {\"jobs\": [report, ...], ...}).\n\n"
      "A scenario with a resilience section adds the whole run: failures, checkpoints, goodput, effective\n"
      "days and dollars (--runs N: a Monte Carlo of the run's days); with data_pipeline, input stalls;\n"
      "--steps K: the step-time distribution under the scenario's variability (docs/goodput.md).\n\noptions");
  with_help(opts)("json", "print the report as one JSON object (the report contract) instead of text")
      ("trace", po::value<std::string>()->value_name("FILE"), "write a Chrome/Perfetto trace of the step to FILE")
      ("set", po::value<std::vector<std::string>>()->composing()->value_name("PATH=VALUE"),
       "override a scenario value, e.g. --set training.tensor_model_parallel_size=4 (repeatable)")
      ("max-memory-gib", po::value<std::string>()->value_name("G"),
       "memory the simulation may take before it is refused as too large (default 4; simulation.max_memory_gib)")
      ("runs", po::value<int>()->value_name("N"), "Monte Carlo runs of the whole run (needs a resilience section)")
      ("seed", po::value<std::uint64_t>()->value_name("S"), "seed of the Monte Carlo and the jitter (default 1)")
      ("steps", po::value<int>()->value_name("K"), "simulate K steps under the scenario's variability; report p50/p90/p99/max");
  po::variables_map vm;
  if (!parse_options(args, opts, "scenario", 1, vm)) return kExitOk;
  if (!vm.count("scenario")) throw InputError(with_usage("clustersim run: missing SCENARIO.json", opts, "run"));
  const std::string path = vm["scenario"].as<std::string>();
  auto overrides = vm.count("set") ? vm["set"].as<std::vector<std::string>>() : std::vector<std::string>{};
  add_max_memory_override(vm, "run", overrides);
  goodput::RunOptions run_options;
  if (vm.count("runs")) {
    run_options.runs = vm["runs"].as<int>();
    if (run_options.runs < 1 || run_options.runs > 1000000)
      throw InputError("clustersim run: --runs " + std::to_string(run_options.runs) + ": expected an integer in [1, 1000000]");
  }
  if (vm.count("steps")) {
    run_options.steps = vm["steps"].as<int>();
    if (run_options.steps < 1 || run_options.steps > 1000000)
      throw InputError("clustersim run: --steps " + std::to_string(run_options.steps) + ": expected an integer in [1, 1000000]");
  }
  if (vm.count("seed")) run_options.seed = vm["seed"].as<std::uint64_t>();
  const Scenario scenario = load_scenario(path, overrides);
  goodput::check_run_options(scenario, run_options);
  // Before simulating, not after; never the scenario or a file it names.
  if (vm.count("trace")) check_writable("--trace", vm["trace"].as<std::string>(), scenario_inputs(scenario, path));
  const CommCalibration calibration = comm_calibration(scenario);
  warn(calibration);
  // The trace lists every task of every simulated rank: the materialised graph's records.
  const SimulationResult result = vm.count("trace") ? simulate_materialised(scenario) : simulate(scenario);
  const goodput::RunReport run_report = goodput::analyse_run(scenario, result, run_options);
  if (vm.count("trace"))
    write_trace(scenario,
                {result.plan.graph, result.plan.global_rank, result.execution,
                 scenario.multi_job() ? result.multi_job.makespan_s : result.report.step_time_s, &result.plan.class_gpus},
                vm["trace"].as<std::string>());
  if (scenario.multi_job()) {
    if (vm.count("json"))
      std::cout << to_json(result.multi_job).dump(2) << "\n";
    else
      std::cout << to_text(result.multi_job);
  } else if (vm.count("json")) {
    nlohmann::json out = to_json(result.report);
    goodput::add_json(out, run_report);
    if (calibration.constants.any()) out["comm_calibration"] = comm_calibration_json(calibration);
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << to_text(result.report) << comm_calibration_text(calibration) << goodput::to_text(run_report);
  }
  return kExitOk;
}

}  // namespace cs::sim::cli
