// Output files through the `clustersim` executable (issue 13, class 7): the atomic writer of
// sim/files/atomic_write.hpp. A unique temporary beside the target and a rename: concurrent writers of one
// path both succeed with a whole file; a user's own NAME.tmp is untouched; a symbolic link is followed (the
// file it points to is replaced, the link stays); a directory, FIFO or device, a dangling link and one of
// the command's own inputs are refused with one line, and nothing is left behind.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "cli_helpers.hpp"
#include "sim/files/atomic_write.hpp"

using namespace clitest;
using nlohmann::json;

namespace {

fs::path bench_file() { return source_dir() / "calibrate/measurements/h200-clustersim-bench-2026-11-30b.json"; }

// Exactly one line on stderr, equal to `expected`; exit code 2.
void check_refused(const CliResult& r, const std::string& expected) {
  INFO(r.describe());
  CHECK(r.exit_code == 2);
  const auto lines = r.err_lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == expected);
}

// The names in `dir`, sorted.
std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("concurrent writers of one output path all succeed, each file whole", "[cli]") {
  TempDir dir;
  const auto out = dir / "profile.json";
  // The reference: one writer alone.
  const auto alone = run_cli({"calibrate", "fit", bench_file().string(), "-o", (dir / "alone.json").string()});
  REQUIRE(alone.exit_code == 0);
  const std::string expected = read_text(dir / "alone.json");
  fs::remove(dir / "alone.json");
  // A user's own profile.json.tmp: the old writer used (and clobbered) exactly this name.
  dir.write("profile.json.tmp", "mine");
  std::vector<std::unique_ptr<CliProcess>> writers;
  for (int i = 0; i < 4; ++i)
    writers.push_back(std::make_unique<CliProcess>(std::vector<std::string>{"calibrate", "fit", bench_file().string(), "-o", out.string()}));
  for (auto& w : writers) {
    const CliResult r = w->wait();
    INFO(r.describe());
    CHECK(r.exit_code == 0);
  }
  CHECK(read_text(out) == expected);
  CHECK(read_text(dir / "profile.json.tmp") == "mine");
  CHECK(names_in(dir.path()) == std::vector<std::string>{"profile.json", "profile.json.tmp"});  // no temporary left
}

TEST_CASE("an output symbolic link is followed: its target is replaced and the link stays", "[cli]") {
  TempDir dir;
  fs::create_directory(dir / "real");
  dir.write("real/profile.json", "old");
  fs::create_symlink("real/profile.json", dir / "link.json");
  const auto r = run_cli({"calibrate", "fit", bench_file().string(), "-o", (dir / "link.json").string()});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  CHECK(fs::is_symlink(dir / "link.json"));
  CHECK(json::parse(read_text(dir / "real/profile.json")).at("format") == "clustersim-profile");
  CHECK(names_in(dir / "real") == std::vector<std::string>{"profile.json"});
}

TEST_CASE("an output that is a dangling symbolic link is refused", "[cli]") {
  TempDir dir;
  fs::create_symlink("nowhere.json", dir / "link.json");
  const auto link = (dir / "link.json").string();
  check_refused(run_cli({"calibrate", "fit", bench_file().string(), "-o", link}),
                link + ": is a symbolic link to a missing file (clustersim follows links to existing files only)");
  CHECK(names_in(dir.path()) == std::vector<std::string>{"link.json"});
}

TEST_CASE("an output directory, FIFO or device is refused and left as it was", "[cli]") {
  TempDir dir;
  const std::string scenario = (scenarios_dir() / "llama3-8b-h100x8.json").string();
  SECTION("calibrate fit -o DIR leaves nothing behind (DIR.tmp before)") {
    fs::create_directory(dir / "out");
    const auto out = (dir / "out").string();
    check_refused(run_cli({"calibrate", "fit", bench_file().string(), "-o", out}),
                  out + ": is a directory; clustersim writes output only to a regular file (or a new one)");
    CHECK(names_in(dir.path()) == std::vector<std::string>{"out"});
    CHECK(fs::is_empty(dir / "out"));
  }
  SECTION("run --trace FIFO (replaced by a regular file before)") {
    const auto fifo = dir / "trace.fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    check_refused(run_cli({"run", scenario, "--trace", fifo.string()}),
                  fifo.string() + ": is a FIFO (named pipe); clustersim writes output only to a regular file (or a new one)");
    CHECK(fs::is_fifo(fifo));
    CHECK(names_in(dir.path()) == std::vector<std::string>{"trace.fifo"});
  }
  SECTION("sweep --csv /dev/null") {
    check_refused(run_cli({"sweep", scenario, "--vary", "training.micro_batch_size=1,2", "--csv", "/dev/null"}),
                  "/dev/null: is a character device; clustersim writes output only to a regular file (or a new one)");
  }
}

TEST_CASE("an output that is one of the command's inputs is refused and the input kept", "[cli]") {
  TempDir dir;
  SECTION("calibrate fit LOG -o LOG") {
    fs::copy_file(bench_file(), dir / "bench.json");
    const auto in = (dir / "bench.json").string();
    check_refused(run_cli({"calibrate", "fit", in, "-o", in}),
                  "-o " + in + ": is also an input of this command (" + in + "); write the output to another file");
    CHECK(read_text(in) == read_text(bench_file()));
  }
  SECTION("through a symbolic link to the input") {
    fs::copy_file(bench_file(), dir / "bench.json");
    fs::create_symlink("bench.json", dir / "alias.json");
    const auto in = (dir / "bench.json").string();
    const auto alias = (dir / "alias.json").string();
    check_refused(run_cli({"calibrate", "fit", in, "-o", alias}),
                  "-o " + alias + ": is also an input of this command (" + in + "); write the output to another file");
    CHECK(read_text(in) == read_text(bench_file()));
  }
  SECTION("run S --trace S") {
    const auto s = dir.write_json("s.json", scenario_json("llama3-8b-h100x8.json"));
    const std::string before = read_text(s);
    check_refused(run_cli({"run", s.string(), "--trace", s.string()}),
                  "--trace " + s.string() + ": is also an input of this command (" + s.string() + "); write the output to another file");
    CHECK(read_text(s) == before);
  }
}

TEST_CASE("SIGTERM or SIGINT in the middle of a write leaves no temporary behind", "[cli]") {
  for (const int sig : {SIGTERM, SIGINT}) {
    TempDir dir;
    const std::string out = (dir / "trace.json").string();
    int ready[2];
    REQUIRE(::pipe(ready) == 0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      // A fresh process's signal actions (the test framework handles SIGTERM and SIGINT itself), then a
      // writer that stops half-way until it is killed.
      ::signal(SIGTERM, SIG_DFL);
      ::signal(SIGINT, SIG_DFL);
      try {
        cs::files::write_file_atomically(out, [&](std::ostream& os) {
          os << "{\"traceEvents\": [";
          os.flush();
          const char byte = 1;
          if (::write(ready[1], &byte, 1) != 1) ::_exit(10);
          for (;;) ::pause();
        });
      } catch (...) {
      }
      ::_exit(11);
    }
    ::close(ready[1]);
    char byte = 0;
    REQUIRE(::read(ready[0], &byte, 1) == 1);  // the child is in the middle of its write
    ::close(ready[0]);
    const auto during = names_in(dir.path());
    REQUIRE(during.size() == 1);
    CHECK(during[0].rfind(".trace.json.", 0) == 0);  // the temporary
    REQUIRE(::kill(child, sig) == 0);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFSIGNALED(status));  // it died of the signal, as the default action would have it
    CHECK(WTERMSIG(status) == sig);
    CHECK(names_in(dir.path()).empty());
  }
}

TEST_CASE("no output may be a file the scenario names: the topology file, the calibration profile", "[cli]") {
  TempDir dir;
  json doc = scenario_json("llama3-8b-mi300x32-topology-file.json");
  fs::copy_file(scenarios_dir() / "mi300x-two-racks.dot", dir / "racks.dot");
  doc["cluster"]["topology_file"] = "racks.dot";
  const auto s = dir.write_json("s.json", doc).string();
  const std::string dot = (dir / "racks.dot").string();
  const std::string before = read_text(dot);
  check_refused(run_cli({"run", s, "--trace", dot}),
                "--trace " + dot + ": is also an input of this command (" + dot +
                    ", the scenario's cluster.topology_file); write the output to another file");
  check_refused(run_cli({"sweep", s, "--vary", "training.micro_batch_size=1,2", "--csv", dot}),
                "--csv " + dot + ": is also an input of this command (" + dot +
                    ", the scenario's cluster.topology_file); write the output to another file");
  CHECK(read_text(dot) == before);
  // The calibration profile, named in the base or on a --vary axis; the part of a shard.
  json small = scenario_json("llama3-8b-h100x8.json");
  dir.write("prof.json", "{}");
  small["calibration"] = "prof.json";
  const auto c = dir.write_json("c.json", small).string();
  const std::string prof = (dir / "prof.json").string();
  check_refused(run_cli({"sweep", c, "--vary", "training.micro_batch_size=1,2", "--shard", "0/2", "--part", prof}),
                "--part " + prof + ": is also an input of this command (" + prof +
                    ", the scenario's calibration); write the output to another file");
  const auto plain = dir.write_json("plain.json", scenario_json("llama3-8b-h100x8.json")).string();
  check_refused(run_cli({"sweep", plain, "--vary", "calibration=\"prof.json\"", "--slurm-script", prof}),
                "--slurm-script " + prof + ": is also an input of this command (" + prof +
                    ", the scenario's calibration); write the output to another file");
  CHECK(read_text(prof) == "{}");
}
