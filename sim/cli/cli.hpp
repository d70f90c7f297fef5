#pragma once
// The `clustersim` subcommands. main.cpp dispatches to these; each lives in its own cli_<name>.cpp and
// is a thin layer over the library. A subcommand returns the process exit code; bad input is thrown as
// InputError (main turns it into one line per problem on stderr and exit code 2).
#include <string>
#include <vector>

namespace cs::sim::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInput = 2;
inline constexpr int kExitInternal = 3;

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>& args);
};

// Every subcommand, in the order `clustersim --help` lists them.
const std::vector<Command>& commands();

int run(const std::vector<std::string>& args);
int sweep(const std::vector<std::string>& args);
int calibrate(const std::vector<std::string>& args);
int validate(const std::vector<std::string>& args);
int collective(const std::vector<std::string>& args);
int params(const std::vector<std::string>& args);
// The published-training kind of `validate` (cli_validate_training.cpp).
bool is_published_training_file(const std::string& path);
// How the published-training kind prints: the whole table per file, or (by_group) one line per group of
// every file, as text, JSON or Markdown; with a baseline (calibrate/published/fidelity-baseline.json) the
// groups are checked against it and a regression exits 1.
struct TrainingValidateOptions {
  bool json = false, by_group = false, markdown = false;
  std::string baseline;
};
int validate_training(const std::vector<std::string>& files, const TrainingValidateOptions& options);

}  // namespace cs::sim::cli
