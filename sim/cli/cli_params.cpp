// clustersim params [--json | --markdown]: every scenario key from the parameter table
// (sim/scenario/params.hpp): its type, unit, default and range. --markdown prints
// docs/scenario-reference.md.
#include <iostream>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "sim/cli/cli.hpp"
#include "sim/cli/cli_options.hpp"
#include "sim/base/input_error.hpp"
#include "sim/scenario/params.hpp"

namespace po = boost::program_options;

namespace cs::sim::cli {

namespace {

std::string range_of(const params::Param& p) {
  if (!p.has_range()) return "";
  return std::string(p.min_exclusive ? "(" : "[") + params::bound_text(p, p.min) + ", " + params::bound_text(p, p.max) +
         (p.max_exclusive ? ")" : "]");
}

}  // namespace

int params(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: clustersim params [--json | --markdown]\n\n"
      "Lists every key a scenario file may hold (the --set and --vary paths too): its type, unit, default\n"
      "and range, and the names a choice allows.\n\noptions");
  with_help(opts)("json", "print the table as one JSON object {\"parameters\": [...]}")
      ("markdown", "print the scenario reference (docs/scenario-reference.md)");
  po::variables_map vm;
  const po::parsed_options parsed = po::command_line_parser(args).options(opts).run();
  for (const auto& o : parsed.options)
    if (o.position_key >= 0)  // no positional arguments
      throw InputError("clustersim params: unexpected argument '" + o.value.front() + "' (see clustersim params --help)");
  po::store(parsed, vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts << "\n";
    return kExitOk;
  }
  if (vm.count("json") && vm.count("markdown")) throw InputError("clustersim params: give --json or --markdown, not both");
  if (vm.count("json")) {
    std::cout << params::to_json().dump(2) << "\n";
    return kExitOk;
  }
  if (vm.count("markdown")) {
    std::cout << params::to_markdown();
    return kExitOk;
  }
  for (const auto& p : params::table()) {
    std::string line = p.path + "  " + std::string(params::to_string(p.type));
    if (!p.unit.empty()) line += " [" + p.unit + "]";
    line += "  default: " + p.default_text;
    if (p.has_range()) line += "  range: " + range_of(p);
    if (!p.choices.empty()) {
      std::string names;
      for (const auto& c : p.choices) names += (names.empty() ? "" : ", ") + c;
      line += "  one of: " + names;
    }
    if (p.search_order > 0) line += "  (searched)";
    std::cout << line << "\n    " << p.help << "\n";
  }
  return kExitOk;
}

}  // namespace cs::sim::cli
