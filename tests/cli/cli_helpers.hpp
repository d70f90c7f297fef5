#pragma once
// Helpers for the end-to-end tests of the `clustersim` executable: run it with arguments (no shell: the
// arguments go to posix_spawn as they are, so nothing is ever quoted or interpreted), capture stdout,
// stderr and the exit code, and write scenario files into a per-test temporary folder.
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace clitest {

namespace fs = std::filesystem;

struct CliResult {
  int exit_code = -1;  // the process's exit status; 128 + signal number when it was killed by a signal
  std::string out;     // stdout
  std::string err;     // stderr
  // stderr split into lines (without the newlines; a trailing newline does not make an empty line).
  std::vector<std::string> err_lines() const;
  // Everything a failed CHECK should show.
  std::string describe() const;
};

// A folder under std::filesystem::temp_directory_path(), unique to this object, removed with it.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }
  // Writes `text` (or `doc` pretty-printed) to path()/name and returns that path.
  fs::path write(const std::string& name, const std::string& text) const;
  fs::path write_json(const std::string& name, const nlohmann::json& doc) const;

 private:
  fs::path path_;
};

// A started `clustersim` process; wait() collects its result. Lets a test run several at once.
class CliProcess {
 public:
  explicit CliProcess(const std::vector<std::string>& args);
  ~CliProcess();
  CliProcess(const CliProcess&) = delete;
  CliProcess& operator=(const CliProcess&) = delete;
  CliResult wait();

 private:
  TempDir capture_;
  pid_t pid_ = -1;
  bool waited_ = false;
  CliResult result_;
};

// Runs CLUSTERSIM_BINARY with `args` (argv[1..]) and waits for it.
CliResult run_cli(const std::vector<std::string>& args);

// The repository's folders and files.
fs::path source_dir();
fs::path scenarios_dir();
fs::path golden_dir();
// scenarios/*.json, sorted by name.
std::vector<fs::path> scenario_files();
// A scenario of scenarios/ parsed as JSON (name without folder, e.g. "llama3-8b-h100x8.json").
nlohmann::json load_json(const fs::path& path);
nlohmann::json scenario_json(const std::string& name);

std::string read_text(const fs::path& path);

// True when `text` contains `part`.
bool contains(const std::string& text, const std::string& part);

}  // namespace clitest
