// libFuzzer harness: the scenario loader (sim/files/json_file.hpp, then sim/scenario/scenario.hpp's
// parse_scenario) on arbitrary bytes. Bad input is expected and ends in InputError or FileError; anything
// else (a crash, a sanitizer report, another exception, a hang) is a finding. Seeds: scenarios/.
#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/files/file_error.hpp"
#include "sim/files/json_file.hpp"
#include "sim/base/input_error.hpp"
#include "sim/scenario/scenario.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  // A scenario's "calibration" path is resolved beside the file: a folder that holds nothing.
  const std::string file = "/nonexistent-fuzz-dir/scenario.json";
  try {
    const nlohmann::json doc = cs::files::parse_json(text, file);
    (void)cs::sim::parse_scenario(doc, file);
  } catch (const cs::InputError&) {
  } catch (const cs::files::FileError&) {
  }
  return 0;
}
