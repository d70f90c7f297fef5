// libFuzzer harness: the C++ core of the Python module's entry points (sim/python/core.hpp), without an
// interpreter: the bytes are fields split at 0x1E (ASCII record separator): the first is a scenario's JSON
// text as a dict arrives from Python, the others are strings as Python passes them: --set overrides, sweep
// axes, validate's files and --option value pairs, collective's options, and a thread count. The scenario is
// then validated (parse_scenario; not simulated: the scenario harness's territory ends there too). Bad input
// ends in InputError; anything else (a crash, a sanitizer report, another exception, a hang) is a finding.
// Seeds: scenarios/ (one field) and tests/fuzz/seeds/python_core.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/base/input_error.hpp"
#include "sim/explore/sweep.hpp"
#include "sim/python/core.hpp"
#include "sim/scenario/scenario.hpp"

namespace {

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out(1);
  for (char c : text) {
    if (c == '\x1e') out.emplace_back();
    else out.back() += c;
  }
  return out;
}

template <class F>
void expecting_input_errors(F&& f) {
  try {
    f();
  } catch (const cs::InputError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace py = cs::sim::python;
  const std::vector<std::string> fields = split(std::string(reinterpret_cast<const char*>(data), size));
  const std::vector<std::string> rest(fields.begin() + 1, fields.end());
  // Scenario paths are not read (a fuzzed path could name any file); their check is.
  expecting_input_errors([&] {
    const py::ScenarioInput in = py::scenario_input("", fields[0], rest);
    (void)cs::sim::parse_scenario(in.doc, in.file);
  });
  for (const auto& f : rest) {
    expecting_input_errors([&] { py::check_no_nul("scenario path", f); });
    expecting_input_errors([&] {
      py::check_no_nul("sweep: vary", f);
      (void)cs::sim::parse_axis(f);
    });
  }
  expecting_input_errors([&] { (void)py::validate_args(rest, rest); });
  expecting_input_errors([&] { (void)py::validate_args({}, rest); });
  expecting_input_errors([&] { (void)py::collective_args(rest); });
  const int threads = size >= 4 ? static_cast<int>(static_cast<std::uint32_t>(data[0]) | static_cast<std::uint32_t>(data[1]) << 8 |
                                                   static_cast<std::uint32_t>(data[2]) << 16 | static_cast<std::uint32_t>(data[3]) << 24)
                                : 0;
  expecting_input_errors([&] { (void)py::check_threads("sweep", threads); });
  return 0;
}
