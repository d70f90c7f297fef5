#include "sim/report/output_file.hpp"

#include "sim/files/atomic_write.hpp"
#include "sim/files/file_error.hpp"
#include "sim/base/input_error.hpp"

namespace cs::sim {

void write_file_atomically(const std::string& path, const std::string& text) {
  try {
    files::write_file_atomically(path, text);
  } catch (const files::FileError& e) {
    throw InputError(e.messages());
  }
}

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write) {
  try {
    files::write_file_atomically(path, write);
  } catch (const files::FileError& e) {
    throw InputError(e.messages());
  }
}

void check_writable(const std::string& path, const std::vector<std::string>& inputs) {
  try {
    files::check_output_path(path, inputs);
  } catch (const files::FileError& e) {
    throw InputError(e.messages());
  }
}

}  // namespace cs::sim
