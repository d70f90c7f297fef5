#include "sim/files/atomic_write.hpp"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
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

// The temporaries being written, for the signal handler below: a fixed table (nothing is allocated or
// locked in a handler), each slot claimed with a compare-and-swap, its path copied in, then marked ready.
// A lock-free std::atomic<int> is async-signal-safe to load (signal-safety(7); C++17 [support.signal]).
struct PendingSlot {
  std::atomic<int> state{0};  // 0 free, 1 being filled, 2 ready (the handler unlinks `path`)
  char path[PATH_MAX];
};
constexpr int kPendingSlots = 64;
PendingSlot g_pending[kPendingSlots];
static_assert(std::atomic<int>::is_always_lock_free);

// SIGINT, SIGTERM, SIGHUP while a temporary is open: remove every registered temporary, then die of the
// signal as the default action would (restored, and raised again: it is delivered when the handler
// returns and unblocks it), so the exit status still says which signal ended the process.
extern "C" void remove_pending_temporaries(int sig) {
  const int saved = errno;
  for (auto& slot : g_pending)
    if (slot.state.load() == 2) ::unlink(slot.path);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  ::raise(sig);
  errno = saved;
}

// Installs the handler for each of the signals whose action is the default one (checked at every
// temporary: three sigaction calls, nothing next to a file's creation; a child after fork or a program that
// restored the default is covered too); a program that handles a signal itself (the GUI, the Python
// interpreter's SIGINT, a test framework) keeps its handler.
void install_signal_cleanup() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) continue;
    struct sigaction act {};
    act.sa_handler = remove_pending_temporaries;
    sigemptyset(&act.sa_mask);
    ::sigaction(sig, &act, nullptr);
  }
}

// The slot of `path` (-1: none free or the path too long; the temporary is then only removed on the
// ordinary paths, as before).
int register_pending(const std::string& path) {
  install_signal_cleanup();
  if (path.size() >= PATH_MAX) return -1;
  for (int i = 0; i < kPendingSlots; ++i) {
    int expected = 0;
    if (!g_pending[i].state.compare_exchange_strong(expected, 1)) continue;
    std::memcpy(g_pending[i].path, path.c_str(), path.size() + 1);
    g_pending[i].state.store(2);
    return i;
  }
  return -1;
}

void unregister_pending(int slot) {
  if (slot >= 0) g_pending[slot].state.store(0);
}

// A temporary made by mkstemp beside `target`; removed by the destructor unless committed, and by the
// signal handler above when SIGINT, SIGTERM or SIGHUP ends the process while it exists.
class Temporary {
 public:
  explicit Temporary(const std::string& target, const std::string& path) {
    const fs::path t(target);
    const fs::path dir = t.has_parent_path() ? t.parent_path() : fs::path(".");
    std::string base(1, '.');  // built in two steps: GCC 12 -O3 warns (-Wrestrict) falsely on "." + string
    base += t.filename().string();
    base += ".XXXXXX";
    name_ = (dir / base).string();
    // The signals are held between the file's creation and its registration, so none lands in between.
    sigset_t held, before;
    sigemptyset(&held);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&held, sig);
    ::pthread_sigmask(SIG_BLOCK, &held, &before);
    fd_ = ::mkstemp(name_.data());
    if (fd_ >= 0) slot_ = register_pending(name_);
    ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
    if (fd_ < 0) {
      name_.clear();
      throw FileError(path + ": cannot write (is the folder there and writable?)");
    }
  }
  ~Temporary() {
    if (fd_ >= 0) ::close(fd_);
    if (!name_.empty()) ::unlink(name_.c_str());
    unregister_pending(slot_);
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
  void committed() {
    unregister_pending(slot_);
    slot_ = -1;
    name_.clear();
  }

 private:
  std::string name_;
  int fd_ = -1;
  int slot_ = -1;
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

void check_output_path(const std::string& path, const std::vector<InputFile>& inputs, const std::string& option) {
  const Target target = resolve(path);
  if (target.exists) {
    for (const auto& in : inputs) {
      std::error_code ec;
      if (fs::equivalent(target.file, in.path, ec))
        throw FileError((option.empty() ? "" : option + " ") + path + ": is also an input of this command (" + in.path +
                        (in.named_by.empty() ? "" : ", the scenario's " + in.named_by) + "); write the output to another file");
    }
  }
  Temporary probe(target.file, path);  // the folder exists and is writable; removed at once
}

void check_output_path(const std::string& path, const std::vector<std::string>& inputs) {
  std::vector<InputFile> files;
  for (const auto& in : inputs) files.push_back({in, {}});
  check_output_path(path, files);
}

}  // namespace cs::files
