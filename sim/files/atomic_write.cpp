#include "sim/files/atomic_write.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "sim/files/file_error.hpp"

namespace cs::files {
namespace fs = std::filesystem;
namespace {

// The file actually written for `path`: itself, or the end of its chain of symbolic links. Throws for a
// target that is not a regular file (or missing, when it is only missing at the end of a link).
struct Target {
  std::string file;     // where the temporary is renamed to
  bool exists = false;  // a regular file is there now
  mode_t mode = 0;      // its permission bits when it exists
};

Target resolve(const std::string& path) {
  struct stat lst {};
  if (::lstat(path.c_str(), &lst) != 0) return {path, false, 0};  // a new file (its folder is checked by mkstemp)
  std::string file = path;
  if (S_ISLNK(lst.st_mode)) {
    std::error_code ec;
    const fs::path real = fs::canonical(path, ec);
    if (ec) throw FileError(path + ": is a symbolic link to a missing file (clustersim follows links to existing files only)");
    file = real.string();
  }
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return {file, false, 0};
  if (!S_ISREG(st.st_mode))
    throw FileError(path + ": is " + file_type_name(st.st_mode) + "; clustersim writes output only to a regular file (or a new one)");
  return {file, true, st.st_mode & 07777};
}

// The process's umask, read without changing it (umask(2) can only be read by setting it, which races with
// other threads): Linux reports it in /proc/self/status.
mode_t current_umask() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("Umask:", 0) == 0) return static_cast<mode_t>(std::strtoul(line.c_str() + 6, nullptr, 8));
  return 022;
}

// A temporary made by mkstemp beside `target`; removed by the destructor unless committed.
class Temporary {
 public:
  explicit Temporary(const std::string& target, const std::string& path) {
    const fs::path t(target);
    const fs::path dir = t.has_parent_path() ? t.parent_path() : fs::path(".");
    std::string base(1, '.');  // built in two steps: GCC 12 -O3 warns (-Wrestrict) falsely on "." + string
    base += t.filename().string();
    base += ".XXXXXX";
    name_ = (dir / base).string();
    fd_ = ::mkstemp(name_.data());
    if (fd_ < 0) {
      name_.clear();
      throw FileError(path + ": cannot write (is the folder there and writable?)");
    }
  }
  ~Temporary() {
    if (fd_ >= 0) ::close(fd_);
    if (!name_.empty()) ::unlink(name_.c_str());
  }
  Temporary(const Temporary&) = delete;
  Temporary& operator=(const Temporary&) = delete;

  int fd() const { return fd_; }
  const std::string& name() const { return name_; }
  // Closes the descriptor; false when the data did not reach the file (NFS, disk full at close).
  bool close() {
    const int fd = fd_;
    fd_ = -1;
    return ::close(fd) == 0;
  }
  void committed() { name_.clear(); }

 private:
  std::string name_;
  int fd_ = -1;
};

}  // namespace

void write_file_atomically(const std::string& path, const std::string& text) {
  write_file_atomically(path, [&text](std::ostream& out) { out.write(text.data(), static_cast<std::streamsize>(text.size())); });
}

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write) {
  const Target target = resolve(path);
  Temporary tmp(target.file, path);
  const mode_t mode = target.exists ? target.mode : (0666 & ~current_umask());
  if (::fchmod(tmp.fd(), mode) != 0) throw FileError(path + ": cannot set the permissions of the new file");
  {
    // The temporary is ours (mkstemp made it, 0600 until the chmod above): write it through a stream.
    std::ofstream out(tmp.name(), std::ios::binary | std::ios::trunc);
    if (!out) throw FileError(path + ": cannot write (is the folder there and writable?)");
    write(out);  // an exception leaves through ~Temporary, which removes the file
    out.flush();
    if (!out) throw FileError(path + ": write failed (disk full?)");
    out.close();
    if (!out) throw FileError(path + ": write failed (disk full?)");
  }
  if (!tmp.close()) throw FileError(path + ": write failed (disk full?)");
  if (::rename(tmp.name().c_str(), target.file.c_str()) != 0)
    throw FileError(path + ": cannot rename the temporary file into place (" + std::strerror(errno) + ")");
  tmp.committed();
}

void check_output_path(const std::string& path, const std::vector<std::string>& inputs) {
  const Target target = resolve(path);
  if (target.exists) {
    for (const auto& in : inputs) {
      std::error_code ec;
      if (fs::equivalent(target.file, in, ec))
        throw FileError(path + ": is also an input of this command (" + in + "); write the output to another file");
    }
  }
  Temporary probe(target.file, path);  // the folder exists and is writable; removed at once
}

}  // namespace cs::files
