#include "cli_helpers.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace clitest {

std::vector<std::string> CliResult::err_lines() const {
  std::vector<std::string> lines;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string CliResult::describe() const {
  return "exit code " + std::to_string(exit_code) + "\n--- stdout ---\n" + out.substr(0, 4000) + "\n--- stderr ---\n" +
         err.substr(0, 4000);
}

TempDir::TempDir() {
  std::string pattern = (fs::temp_directory_path() / "clustersim-cli-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed: " + std::string(std::strerror(errno)));
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

fs::path TempDir::write(const std::string& name, const std::string& text) const {
  const fs::path p = path_ / name;
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + p.string());
  return p;
}

fs::path TempDir::write_json(const std::string& name, const nlohmann::json& doc) const {
  return write(name, doc.dump(2) + "\n");
}

CliProcess::CliProcess(const std::vector<std::string>& args) {
  const std::string binary = CLUSTERSIM_BINARY;
  const std::string out_path = (capture_ / "stdout").string();
  const std::string err_path = (capture_ / "stderr").string();

  std::vector<std::string> argv_storage;
  argv_storage.push_back(binary);
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  const int rc = ::posix_spawn(&pid_, binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + binary + ": " + std::strerror(rc));
}

CliProcess::~CliProcess() {
  if (!waited_ && pid_ > 0) {
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
}

CliResult CliProcess::wait() {
  if (waited_) return result_;
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, 0);
  } while (r < 0 && errno == EINTR);
  waited_ = true;
  if (r < 0) throw std::runtime_error("waitpid failed: " + std::string(std::strerror(errno)));
  if (WIFEXITED(status)) result_.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) result_.exit_code = 128 + WTERMSIG(status);
  result_.out = read_text(capture_ / "stdout");
  result_.err = read_text(capture_ / "stderr");
  return result_;
}

CliResult run_cli(const std::vector<std::string>& args) { return CliProcess(args).wait(); }

fs::path source_dir() { return fs::path(CLUSTERSIM_SOURCE_DIR); }
fs::path scenarios_dir() { return source_dir() / "scenarios"; }
fs::path golden_dir() { return source_dir() / "tests" / "cli" / "golden"; }

std::vector<fs::path> scenario_files() {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(scenarios_dir()))
    if (e.is_regular_file() && e.path().extension() == ".json" && !contains(e.path().filename().string(), "schema"))
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

nlohmann::json load_json(const fs::path& path) { return nlohmann::json::parse(read_text(path)); }

nlohmann::json scenario_json(const std::string& name) { return load_json(scenarios_dir() / name); }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace clitest
