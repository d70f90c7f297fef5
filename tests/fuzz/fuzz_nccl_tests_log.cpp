// libFuzzer harness: the measurement importer's text readers, dispatched as calibrate/import/import.cpp
// does — an nccl-tests log (calibrate/import/nccl_tests_log.hpp) unless the text starts with '{' or a '['
// that is no launcher tag (the measurement JSON formats, calibrate/import/measurement_json.hpp). Bad input ends in
// CalibrationError; anything else is a finding. Seeds: calibrate/measurements/,
// calibrate/published/nccl-tests-logs/ and the launcher / paste variants in tests/calibrate/data/nccl-tests-logs/.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>

#include "calibrate/import/measurement.hpp"
#include "calibrate/import/measurement_json.hpp"
#include "calibrate/import/nccl_tests_log.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  try {
    if (i < text.size() && (text[i] == '{' || (text[i] == '[' && !cs::calibrate::starts_with_launcher_tag(
                                                                      std::string_view(text).substr(i, 256)))))
      (void)cs::calibrate::measurements_from_json_text(text, "fuzz.json");
    else
      (void)cs::calibrate::nccl_tests_measurements(cs::calibrate::parse_nccl_tests_log(text, "fuzz.log"));
  } catch (const cs::InputError&) {
  }
  return 0;
}
