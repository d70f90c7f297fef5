// clustersim: the command-line front end. A thin layer over the library (sim/simulation.hpp): it parses
// arguments, prints reports and turns input errors into one line each on stderr with exit code 2.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "sim/input_error.hpp"
#include "sim/scenario.hpp"
#include "sim/simulation.hpp"
#include "sim/trace.hpp"

namespace po = boost::program_options;
using namespace cs::sim;

namespace {

constexpr int kExitInput = 2;
constexpr int kExitInternal = 3;

const char* kUsage =
    "clustersim - discrete-event performance simulator for distributed deep-learning training\n"
    "\n"
    "usage: clustersim <command> [options]\n"
    "\n"
    "commands:\n"
    "  run SCENARIO.json     simulate one training step and print step time, MFU, memory and cost\n"
    "\n"
    "Run 'clustersim <command> --help' for the options of a command.\n";

int cmd_run(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: clustersim run SCENARIO.json [--json] [--trace out.json] [--set path=value ...]\n\n"
      "Simulates one training step of the scenario and prints its report.\n\noptions");
  opts.add_options()("help,h", "show this help")
      ("json", "print the report as one JSON object (the report contract) instead of text")
      ("trace", po::value<std::string>()->value_name("FILE"), "write a Chrome/Perfetto trace of the step to FILE")
      ("set", po::value<std::vector<std::string>>()->composing()->value_name("PATH=VALUE"),
       "override a scenario value, e.g. --set training.tensor_model_parallel_size=4 (repeatable)");
  po::options_description hidden;
  hidden.add_options()("scenario", po::value<std::string>());
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts << "\n";
    return 0;
  }
  if (!vm.count("scenario")) throw InputError("clustersim run: missing SCENARIO.json (see clustersim run --help)");
  const std::string path = vm["scenario"].as<std::string>();
  const auto overrides = vm.count("set") ? vm["set"].as<std::vector<std::string>>() : std::vector<std::string>{};
  const Scenario scenario = load_scenario(path, overrides);
  const SimulationResult result = simulate(scenario);
  if (vm.count("trace")) write_trace(scenario, result, vm["trace"].as<std::string>());
  if (vm.count("json"))
    std::cout << to_json(result.report).dump(2) << "\n";
  else
    std::cout << to_text(result.report);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kUsage;
    return args.empty() ? kExitInput : 0;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  try {
    if (command == "run") return cmd_run(args);
    std::cerr << "clustersim: unknown command '" << command << "' (see clustersim --help)\n";
    return kExitInput;
  } catch (const InputError& e) {
    for (const auto& m : e.messages()) std::cerr << m << "\n";
    return kExitInput;
  } catch (const po::error& e) {
    std::cerr << "clustersim " << command << ": " << e.what() << " (see clustersim " << command << " --help)\n";
    return kExitInput;
  } catch (const nlohmann::json::exception& e) {
    std::cerr << "clustersim " << command << ": " << e.what() << "\n";
    return kExitInput;
  } catch (const std::exception& e) {
    std::cerr << "clustersim internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}
