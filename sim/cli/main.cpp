// clustersim: the command-line front end. A thin layer over the library (sim/simulation.hpp): it
// dispatches to a subcommand (sim/cli/cli.hpp) and turns input errors into one line each on stderr with exit
// code 2.
#include <iostream>
#include <string>
#include <vector>

#include <boost/program_options/errors.hpp>
#include <nlohmann/json.hpp>

#include "sim/cli/cli.hpp"
#include "sim/files/printable.hpp"
#include "sim/base/huge_pages.hpp"
#include "sim/base/input_error.hpp"

using namespace cs::sim;

namespace cs::sim::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> list = {
      {"run", "simulate one training step: step time, MFU, memory, cost", &cli::run},
      {"sweep", "many variants of a scenario: --vary, layout --search, capacity planning", &cli::sweep},
      {"calibrate", "fit a calibration profile from measurements, or check what logs hold (calibrate fit|import ...)", &cli::calibrate},
      {"validate", "predicted vs measured for every point of measurement files", &cli::validate},
      {"collective", "nccl-tests-style table of one simulated collective over the cluster", &cli::collective},
      {"params", "every scenario key: type, unit, default and range (--json, --markdown)", &cli::params},
  };
  return list;
}

}  // namespace cs::sim::cli

namespace {

void usage(std::ostream& out) {
  out << "clustersim - discrete-event performance simulator for distributed deep-learning training\n\n"
         "usage: clustersim <command> [options]\n\ncommands:\n";
  for (const auto& c : cli::commands()) {
    std::string name = c.name;
    name.resize(12, ' ');
    out << "  " << name << c.summary << "\n";
  }
  out << "\nRun 'clustersim <command> --help' for the options of a command.\n";
}

}  // namespace

int main(int argc, char** argv) {
  cs::restart_with_huge_page_malloc(argv);  // 2 MiB pages for the heap where the kernel offers them
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    usage(std::cerr);
    return cli::kExitInput;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    usage(std::cout);
    return cli::kExitOk;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  try {
    for (const auto& c : cli::commands())
      if (command == c.name) return c.run(args);
    std::cerr << "clustersim: unknown command '" << command << "' (see clustersim --help)\n";
    return cli::kExitInput;
  } catch (const cs::InputError& e) {
    // Cut to the first problems, each value echoed at a printable length (sim/files/printable.hpp).
    for (const auto& m : cs::files::capped_problems(e.messages())) std::cerr << m << "\n";
    return cli::kExitInput;
  } catch (const boost::program_options::error& e) {
    std::cerr << "clustersim " << command << ": " << cs::files::printable_line(e.what()) << " (see clustersim " << command << " --help)\n";
    return cli::kExitInput;
  } catch (const std::exception& e) {
    std::cerr << "clustersim internal error: " << cs::files::printable_line(e.what()) << "\n";
    return cli::kExitInternal;
  }
}
