#pragma once
// Command-line parsing shared by the subcommands: named options plus positional arguments, and --help.
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "sim/base/input_error.hpp"

namespace cs::sim::cli {

// Parses `args` against `opts` and positional values collected under `positional` (at most `count` of
// them; -1: any number) into `vm`. Prints `opts` and returns false when --help was asked for. `parsed`, when
// given, receives what the parser matched: each option's canonical name (string_key, also for an abbreviation
// such as --arr of --array-size) with the command-line words it came from (original_tokens).
inline bool parse_options(const std::vector<std::string>& args, const boost::program_options::options_description& opts,
                          const char* positional, int count, boost::program_options::variables_map& vm,
                          std::vector<boost::program_options::option>* parsed = nullptr) {
  namespace po = boost::program_options;
  po::options_description hidden;
  if (count == 1) hidden.add_options()(positional, po::value<std::string>());
  else hidden.add_options()(positional, po::value<std::vector<std::string>>());
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add(positional, count);
  const po::parsed_options matched = po::command_line_parser(args).options(all).positional(pos).run();
  po::store(matched, vm);
  if (parsed) *parsed = matched.options;
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts << "\n";
    return false;
  }
  return true;
}

// Adds --help/-h, every subcommand's first option, to `opts`; the subcommand's own options chain on.
inline boost::program_options::options_description_easy_init with_help(boost::program_options::options_description& opts) {
  return opts.add_options()("help,h", "show this help");
}

// `text` when the whole of it is an integer std::stol reads; nothing otherwise.
inline std::optional<long> whole_integer(const std::string& text) {
  std::size_t used = 0;
  long v = 0;
  try {
    v = std::stol(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != text.size()) return std::nullopt;
  return v;
}

// --max-memory-gib G (run, sweep): the simulation budget's memory limit (simulation.max_memory_gib, see
// sim/step/step_budget.hpp) as the scenario override it stands for; nothing when the option is absent.
inline void add_max_memory_override(const boost::program_options::variables_map& vm, const std::string& command,
                                    std::vector<std::string>& overrides) {
  if (!vm.count("max-memory-gib")) return;
  const std::string text = vm["max-memory-gib"].as<std::string>();
  char* end = nullptr;
  const double g = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(g) || g <= 0)
    throw InputError("clustersim " + command + ": --max-memory-gib " + text + ": expected a positive number of GiB");
  overrides.push_back("simulation.max_memory_gib=" + text);
}

// The first line of `opts`' caption ("usage: clustersim run SCENARIO.json [...]"), for the one-line error of
// a missing argument: "clustersim run: missing SCENARIO.json (usage: ...; see clustersim run --help)".
inline std::string with_usage(const std::string& message, const boost::program_options::options_description& opts,
                              const std::string& command) {
  std::ostringstream printed;
  printed << opts;  // the caption comes first
  std::string first = printed.str().substr(0, printed.str().find('\n'));
  return message + " (" + first + "; see clustersim " + command + " --help)";
}

}  // namespace cs::sim::cli
