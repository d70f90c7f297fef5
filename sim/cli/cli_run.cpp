// clustersim run SCENARIO.json [--json] [--trace FILE] [--set path=value ...]
#include <iostream>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "sim/cli/cli.hpp"
#include "sim/cli/cli_options.hpp"
#include "sim/base/input_error.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"
#include "sim/report/trace.hpp"

namespace po = boost::program_options;

namespace cs::sim::cli {

int run(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: clustersim run SCENARIO.json [--json] [--trace out.json] [--set path=value ...]\n\n"
      "Simulates one training step of the scenario and prints its report. A scenario with several jobs\n"
      "on one cluster prints one report per job, each with its slowdown from sharing the fabric\n"
      "(--json: {\"jobs\": [report, ...], ...}).\n\noptions");
  opts.add_options()("help,h", "show this help")
      ("json", "print the report as one JSON object (the report contract) instead of text")
      ("trace", po::value<std::string>()->value_name("FILE"), "write a Chrome/Perfetto trace of the step to FILE")
      ("set", po::value<std::vector<std::string>>()->composing()->value_name("PATH=VALUE"),
       "override a scenario value, e.g. --set training.tensor_model_parallel_size=4 (repeatable)")
      ("max-memory-gib", po::value<std::string>()->value_name("G"),
       "memory the simulation may take before it is refused as too large (default 4; simulation.max_memory_gib)");
  po::variables_map vm;
  if (!parse_options(args, opts, "scenario", 1, vm)) return kExitOk;
  if (!vm.count("scenario")) throw InputError(with_usage("clustersim run: missing SCENARIO.json", opts, "run"));
  const std::string path = vm["scenario"].as<std::string>();
  auto overrides = vm.count("set") ? vm["set"].as<std::vector<std::string>>() : std::vector<std::string>{};
  add_max_memory_override(vm, "run", overrides);
  const Scenario scenario = load_scenario(path, overrides);
  if (vm.count("trace")) check_writable(vm["trace"].as<std::string>(), {path});  // before simulating, not after
  const SimulationResult result = simulate(scenario);
  if (vm.count("trace"))
    write_trace(scenario,
                {result.plan.graph, result.plan.global_rank, result.execution,
                 scenario.multi_job() ? result.multi_job.makespan_s : result.report.step_time_s},
                vm["trace"].as<std::string>());
  if (scenario.multi_job()) {
    if (vm.count("json"))
      std::cout << to_json(result.multi_job).dump(2) << "\n";
    else
      std::cout << to_text(result.multi_job);
  } else if (vm.count("json")) {
    std::cout << to_json(result.report).dump(2) << "\n";
  } else {
    std::cout << to_text(result.report);
  }
  return kExitOk;
}

}  // namespace cs::sim::cli
