#include "sim/python/core.hpp"

#include "sim/base/input_error.hpp"
#include "sim/files/file_error.hpp"
#include "sim/files/json_file.hpp"
#include "sim/scenario/scenario.hpp"

namespace cs::sim::python {

using nlohmann::json;

void check_no_nul(const std::string& what, const std::string& value) {
  if (value.find('\0') != std::string::npos)
    throw InputError(what + ": contains a NUL character (a path or option cannot hold one)");
}

ScenarioInput scenario_input(const std::string& path, const std::string& text, const std::vector<std::string>& set) {
  ScenarioInput in;
  if (!path.empty()) {
    check_no_nul("scenario path", path);
    in.doc = read_json_file(path);
    in.file = path;
  } else {
    in.file = "<dict>";
    // The CLI's JSON reader: its nesting limit, number range and duplicate keys (json::parse recursed into
    // a deeply nested text until the stack overflowed).
    in.doc = files::as_input_error([&] { return files::parse_json(text, in.file); });
  }
  for (const auto& s : set) check_no_nul("set", s);
  apply_overrides(in.doc, set, in.file);  // as clustersim run does (the file's price stays with its GPU)
  return in;
}

int check_threads(const std::string& call, int threads) {
  if (threads < 0)
    throw InputError(call + ": threads " + std::to_string(threads) + ": expected at least 1 (or 0: all cores), as --threads");
  return threads;
}

namespace {

// A value the subcommand's parser reads as one: no NUL, not empty, not option-like.
void check_value(const std::string& call, const std::string& what, const std::string& value) {
  check_no_nul(call + ": " + what, value);
  if (value.empty()) throw InputError(call + ": " + what + ": empty");
  if (value[0] == '-')
    throw InputError(call + ": " + what + " \"" + value + "\": starts with '-', which the command would read as an option "
                     "(write ./" + value + " for a file of that name)");
}

// --NAME VALUE pairs: the names are __init__.py's own, the values the user's.
void add_options(const std::string& call, const std::vector<std::string>& options, std::vector<std::string>& args) {
  if (options.size() % 2 != 0) throw InputError(call + ": options: expected --name value pairs");
  for (std::size_t i = 0; i < options.size(); i += 2) {
    const std::string& name = options[i];
    if (name.size() < 3 || name.rfind("--", 0) != 0 || name.find('\0') != std::string::npos)
      throw InputError(call + ": options: \"" + name + "\" is not an option name");
    check_value(call, name.substr(2), options[i + 1]);
    args.push_back(name);
    args.push_back(options[i + 1]);
  }
}

}  // namespace

std::vector<std::string> validate_args(const std::vector<std::string>& files, const std::vector<std::string>& options) {
  std::vector<std::string> args;
  for (const auto& f : files) {
    check_value("validate", "file", f);
    args.push_back(f);
  }
  args.push_back("--json");
  add_options("validate", options, args);
  return args;
}

std::vector<std::string> collective_args(const std::vector<std::string>& options) {
  std::vector<std::string> args{"--json"};
  add_options("collective", options, args);
  return args;
}

}  // namespace cs::sim::python
