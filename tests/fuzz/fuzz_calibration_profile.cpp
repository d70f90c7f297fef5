// libFuzzer harness: the calibration-profile reader (models/compute/profile_json.hpp). Bad input ends in
// ProfileError; anything else is a finding. Seeds: calibrate/profiles/.
#include <cstddef>
#include <cstdint>
#include <string>

#include "models/compute/profile_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)cs::models::parse_profile(text, "fuzz-profile.json");
  } catch (const cs::InputError&) {
  }
  return 0;
}
