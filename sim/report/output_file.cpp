#include "sim/report/output_file.hpp"

#include <filesystem>
#include <fstream>

#include "sim/base/input_error.hpp"

namespace cs::sim {
namespace {
std::filesystem::path temporary_of(const std::string& path) {
  std::filesystem::path tmp(path);
  tmp += ".tmp";
  return tmp;
}
}  // namespace

void write_file_atomically(const std::string& path, const std::string& text) {
  write_file_atomically(path, [&text](std::ostream& out) { out << text; });
}

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write) {
  const std::filesystem::path target(path);
  const std::filesystem::path tmp = temporary_of(path);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path + ": cannot write (is the folder there and writable?)");
    try {
      write(out);
    } catch (...) {
      out.close();
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      throw;
    }
    out.flush();
    if (!out) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      throw InputError(path + ": write failed (disk full?)");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, target, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw InputError(path + ": cannot rename the temporary file into place");
  }
}

void check_writable(const std::string& path) {
  const std::filesystem::path tmp = temporary_of(path);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path + ": cannot write (is the folder there and writable?)");
  }
  std::error_code ec;
  std::filesystem::remove(tmp, ec);
}

}  // namespace cs::sim
