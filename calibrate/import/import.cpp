#include "calibrate/import/import.hpp"

#include <cctype>
#include <fstream>
#include <sstream>

#include "calibrate/import/measurement_json.hpp"
#include "calibrate/import/nccl_tests_log.hpp"

namespace cs::calibrate {

MeasurementSet import_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CalibrationError(path + ": cannot open measurement file");
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string text = buf.str();
  std::size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  if (i < text.size() && (text[i] == '{' || text[i] == '[')) return measurements_from_json_text(text, path);
  return nccl_tests_measurements(parse_nccl_tests_log(text, path));
}

MeasurementSet import_files(const std::vector<std::string>& paths) {
  MeasurementSet all;
  std::vector<std::string> errors;
  for (const auto& p : paths) {
    try {
      all.append(import_file(p));
    } catch (const CalibrationError& e) {
      errors.insert(errors.end(), e.messages().begin(), e.messages().end());
    }
  }
  if (!errors.empty()) throw CalibrationError(std::move(errors));
  return all;
}

}  // namespace cs::calibrate
