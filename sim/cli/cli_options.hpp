#pragma once
// Command-line parsing shared by the subcommands: named options plus positional arguments, and --help.
#include <iostream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

namespace cs::sim::cli {

// Parses `args` against `opts` and positional values collected under `positional` (at most `count` of
// them; -1: any number) into `vm`. Prints `opts` and returns false when --help was asked for.
inline bool parse_options(const std::vector<std::string>& args, const boost::program_options::options_description& opts,
                          const char* positional, int count, boost::program_options::variables_map& vm) {
  namespace po = boost::program_options;
  po::options_description hidden;
  if (count == 1) hidden.add_options()(positional, po::value<std::string>());
  else hidden.add_options()(positional, po::value<std::vector<std::string>>());
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add(positional, count);
  po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts << "\n";
    return false;
  }
  return true;
}

}  // namespace cs::sim::cli
