#include "sim/report/output_file.hpp"

#include "sim/files/atomic_write.hpp"
#include "sim/files/file_error.hpp"
#include "sim/base/input_error.hpp"

namespace cs::sim {

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write) {
  files::as_input_error([&] { files::write_file_atomically(path, write); });
}

void check_writable(const std::string& path, const std::vector<std::string>& inputs) {
  files::as_input_error([&] { files::check_output_path(path, inputs); });
}

}  // namespace cs::sim
