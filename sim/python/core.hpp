#pragma once
// The checks the Python module (module.cpp) applies to its arguments before the library sees them, apart
// from pybind11 so the fuzz harness (tests/fuzz/fuzz_python_core.cpp) runs them without an interpreter
// (issue 32). They are the CLI's checks, for arguments that do not come from a command line: a path with a
// NUL (a command line cannot hold one; C's open() would read the path cut at it, another file), JSON text
// nested deeper than the JSON reader's limit (sim/files/json_file.hpp), a negative thread count (--threads
// is at least 1; Python's 0 is the default, all cores), and an argument of `validate` or `collective` that
// the subcommand's parser would read as an option (validate("-h") printed the help). Each throws InputError,
// which the module raises as clustersim.InputError (a ValueError).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cs::sim::python {

// A scenario given as a path (read from disk, `--set` overrides applied) or as JSON text (a dict that
// __init__.py serialised; errors then name "<dict>").
struct ScenarioInput {
  nlohmann::json doc;
  std::string file;
};
ScenarioInput scenario_input(const std::string& path, const std::string& text, const std::vector<std::string>& set);

// `value` holds no NUL character; `what` names the argument in the message.
void check_no_nul(const std::string& what, const std::string& value);

// threads: 0 (all cores) or a positive count, as `clustersim sweep --threads N` (N >= 1).
int check_threads(const std::string& call, int threads);

// The arguments of `clustersim validate FILE... --json [--OPTION VALUE]...`: files and option values hold
// no NUL and do not start with '-' (write ./-x for a file named -x); option names are the caller's.
std::vector<std::string> validate_args(const std::vector<std::string>& files, const std::vector<std::string>& options);
// The arguments of `clustersim collective --json --OPTION VALUE...`, checked as validate_args checks values.
std::vector<std::string> collective_args(const std::vector<std::string>& options);

}  // namespace cs::sim::python
