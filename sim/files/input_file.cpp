#include "sim/files/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "sim/files/file_error.hpp"

namespace cs::files {
namespace {

// Closes a descriptor on every path out.
struct Fd {
  explicit Fd(int f) : fd(f) {}
  Fd(Fd&& o) noexcept : fd(o.fd) { o.fd = -1; }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd& operator=(Fd&&) = delete;
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// `path` opened for reading when it is a regular file; `st` its status. O_NONBLOCK: opening a FIFO with no
// writer would otherwise wait forever before fstat can refuse it.
Fd open_regular(const std::string& path, const std::string& what, const std::string& cannot_open, struct stat& st) {
  Fd f{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (f.fd < 0) throw FileError(path + ": " + cannot_open);
  if (::fstat(f.fd, &st) != 0) throw FileError(path + ": " + cannot_open);
  if (!S_ISREG(st.st_mode))
    throw FileError(path + ": is " + file_type_name(st.st_mode) + ", not a regular file (a " + what + " is read from a file)");
  return f;
}

std::string mib(std::uintmax_t bytes) {
  return std::to_string(bytes >> 20) + " MiB";
}

}  // namespace

std::string read_input_file(const std::string& path, std::uintmax_t max_bytes, const std::string& what,
                            const std::string& cannot_open) {
  struct stat st {};
  Fd f = open_regular(path, what, cannot_open, st);
  if (static_cast<std::uintmax_t>(st.st_size) > max_bytes)
    throw FileError(path + ": " + std::to_string(st.st_size) + " bytes is over the " + mib(max_bytes) + " limit for a " +
                    what);
  std::string text;
  text.resize(static_cast<std::size_t>(st.st_size));
  std::size_t have = 0;
  while (true) {
    if (have == text.size()) {
      // The file grew since fstat: keep reading, within the limit.
      if (text.size() > max_bytes)
        throw FileError(path + ": over the " + mib(max_bytes) + " limit for a " + what + " (it grew while being read)");
      text.resize(text.size() + 65536);
    }
    const ssize_t n = ::read(f.fd, text.data() + have, text.size() - have);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw FileError(path + ": " + cannot_open);
    }
    if (n == 0) break;
    have += static_cast<std::size_t>(n);
  }
  text.resize(have);
  if (text.size() > max_bytes)
    throw FileError(path + ": over the " + mib(max_bytes) + " limit for a " + what + " (it grew while being read)");
  return text;
}

void require_regular_file(const std::string& path, const std::string& what, const std::string& cannot_open) {
  struct stat st {};
  open_regular(path, what, cannot_open, st);
}

bool is_readable_regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace cs::files
