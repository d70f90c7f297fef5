#include "calibrate/import/import.hpp"

#include <cctype>
#include <fstream>
#include <sstream>

#include "calibrate/import/measurement_json.hpp"
#include "calibrate/import/nccl_tests_log.hpp"
#include "sim/files/file_error.hpp"
#include "sim/files/input_file.hpp"

namespace cs::calibrate {

namespace {

// '{' or '[' first (after white space) is JSON, except the '[' of a launcher tag ("[1,0]<stdout>:" of an
// Open MPI --tag-output log). Leaves the stream at its start.
bool starts_as_json(std::ifstream& in) {
  std::string head(256, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  in.clear();
  in.seekg(0);
  std::size_t i = 0;
  while (i < head.size() && std::isspace(static_cast<unsigned char>(head[i]))) ++i;
  if (i == head.size()) return false;
  if (head[i] == '{') return true;
  return head[i] == '[' && !starts_with_launcher_tag(std::string_view(head).substr(i));
}

// The file opened for reading; a FIFO or device (/dev/zero) is refused before anything reads from it.
std::ifstream open_measurement_file(const std::string& path) {
  files::as_input_error([&] { files::require_regular_file(path, "measurement file", "cannot open measurement file"); });
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open measurement file");
  return in;
}

}  // namespace

MeasurementSet import_file(const std::string& path, const NcclTestsHints& hints) {
  std::ifstream in = open_measurement_file(path);
  // JSON (the harness, published sweeps) is read whole, up to files::kMaxMeasurementBytes; an nccl-tests log,
  // which may be hundreds of MB, a line at a time.
  if (starts_as_json(in)) {
    return measurements_from_json_text(files::as_input_error([&] {
                                         return files::read_input_file(path, files::kMaxMeasurementBytes, "measurement file",
                                                                       "cannot open measurement file");
                                       }),
                                       path);
  }
  return nccl_tests_measurements(parse_nccl_tests_log(in, path, hints));
}

NcclTestsLog read_nccl_tests_log(const std::string& path, const NcclTestsHints& hints) {
  std::ifstream in = open_measurement_file(path);
  if (starts_as_json(in))
    throw InputError(path + ": a JSON file, not an nccl-tests log (calibrate fit and validate read it as it is)");
  return parse_nccl_tests_log(in, path, hints);
}

MeasurementSet import_files(const std::vector<std::string>& paths, const NcclTestsHints& hints) {
  MeasurementSet all;
  std::vector<std::string> errors;
  for (const auto& p : paths) {
    try {
      all.append(import_file(p, hints));
    } catch (const InputError& e) {
      errors.insert(errors.end(), e.messages().begin(), e.messages().end());
    }
  }
  if (!errors.empty()) throw InputError(std::move(errors));
  return all;
}

}  // namespace cs::calibrate
