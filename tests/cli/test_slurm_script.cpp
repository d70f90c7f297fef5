// The Slurm submission of a sweep (clustersim sweep --slurm-script, issue 32) run under a fake `sbatch`: a
// shell script on PATH that records its arguments and the job script it reads on stdin and prints a job id.
// Hostile values (a newline and the here-document's own end marker in a --set value, "$(touch X)" and '%' in
// the script's name, a space in the working folder) reach the jobs as data: the marker file X is never
// created, the recorded sbatch arguments and #SBATCH lines are exactly the expected ones, and the recorded
// jobs, run as Slurm would run them, give the unsharded run's output. Then one test per refused input, each
// with its exact message, and the merge's --parts-list.
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "cli_helpers.hpp"

using namespace clitest;
using nlohmann::json;

namespace {

// 2 nodes of 4 H100: a 16-layer GPT whose points simulate in milliseconds.
json small_doc() {
  return json::parse(R"({
    "name": "small",
    "cluster": {"gpu": "H100-SXM", "nodes": 2, "gpus_per_node": 4, "intra_node": "nvswitch",
                "inter_node": {"fabric": "fat-tree", "link": "ib-ndr400", "nics_per_node": 4}},
    "model": {"num_layers": 16, "hidden_size": 2048, "num_attention_heads": 16, "vocab_size": 32000,
              "ffn_hidden_size": 8192, "activation": "gelu"},
    "training": {"seq_length": 2048, "global_batch_size": 16, "micro_batch_size": 1, "tokens_to_train": 1e9}
  })");
}

void check_refused(const CliResult& r, const std::string& expected) {
  INFO(r.describe());
  CHECK(r.exit_code == 2);
  const auto lines = r.err_lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == expected);
  CHECK(r.out.empty());
}

// A word for sh -c: single-quoted.
std::string q(const std::string& w) {
  std::string out = "'";
  for (char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The job script's #SBATCH lines.
std::vector<std::string> directives(const std::string& job) {
  std::vector<std::string> out;
  for (const auto& l : lines_of(job))
    if (l.rfind("#SBATCH", 0) == 0) out.push_back(l);
  return out;
}

// Runs `command` under sh; its exit status.
int sh(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

// A folder holding bin/sbatch, a stand-in for Slurm's: each call records its arguments (one a line) and
// its stdin under calls/N/ and prints "10N;cluster" as `sbatch --parsable` prints a job id.
struct FakeSlurm {
  TempDir dir;
  FakeSlurm() {
    fs::create_directories(dir / "bin");
    fs::create_directories(dir / "calls");
    const auto sbatch = dir.write("bin/sbatch", R"(#!/bin/bash
calls="$(dirname "$0")/../calls"
n=$(ls "$calls" | wc -l)
mkdir "$calls/$n"
printf '%s\n' "$@" > "$calls/$n/args"
cat > "$calls/$n/stdin"
echo "10$n;cluster"
)");
    fs::permissions(sbatch, fs::perms::owner_all);
  }
  std::string path_env() const { return "PATH=" + q((dir / "bin").string()) + ":\"$PATH\" "; }
  std::string args(int n) const { return read_text(dir / "calls" / std::to_string(n) / "args"); }
  std::string job(int n) const { return read_text(dir / "calls" / std::to_string(n) / "stdin"); }
  fs::path job_file(int n) const { return dir / "calls" / std::to_string(n) / "stdin"; }
};

}  // namespace

TEST_CASE("sweep --slurm-script under a fake sbatch: hostile values stay data and every job runs", "[cli][sweep]") {
  TempDir top;
  const fs::path work = top / "with space";  // the jobs' working folder: sbatch's --chdir on its command line
  fs::create_directories(work);
  top.write_json("with space/small.json", small_doc());
  FakeSlurm slurm;
  const std::string exe = fs::canonical(CLUSTERSIM_BINARY).string();
  // A newline ends a comment line; CLUSTERSIM_SHARDS alone on a line would end the job's here-document.
  const std::string hostile = "name=x\nCLUSTERSIM_SHARDS\ntouch X\n#";
  const std::string script = "$(touch X)%j.sh";  // '%' is a filename-pattern symbol in sbatch's --output
  const std::string sweep = q(exe) + " sweep small.json --vary training.micro_batch_size=1,2 --set " + q(hostile);
  REQUIRE(sh("cd " + q(work.string()) + " && " + sweep + " --quiet --slurm-script " + q(script) +
             " --arr 2 --partition debug --ti 1-00:30") == 0);
  REQUIRE(sh("cd " + q(work.string()) + " && " + slurm.path_env() + "bash ./" + q(script) + " > submitted.txt") == 0);
  const std::string base = (work / script).string();
  CHECK(read_text(work / "submitted.txt") ==
        "submitted shards 100 (2 array tasks) and merge 101: output in " + base + ".out\n");
  CHECK(slurm.args(0) == "--parsable\n--chdir=" + work.string() + "\n--output=" + work.string() + "/$(touch X)%%j.sh.parts/shard-%a.log\n");
  CHECK(slurm.args(1) == "--parsable\n--dependency=afterok:100\n--chdir=" + work.string() + "\n--output=" + work.string() +
                             "/$(touch X)%%j.sh.out\n--error=" + work.string() + "/$(touch X)%%j.sh.err\n");
  CHECK(directives(slurm.job(0)) == std::vector<std::string>{"#SBATCH --job-name=clustersim-sweep", "#SBATCH --array=0-1",
                                                              "#SBATCH --partition=debug", "#SBATCH --time=1-00:30"});
  CHECK(directives(slurm.job(1)) ==
        std::vector<std::string>{"#SBATCH --job-name=clustersim-sweep-merge", "#SBATCH --partition=debug", "#SBATCH --time=1-00:30"});
  CHECK(contains(slurm.job(0), " '--set' $'name=x\\x0aCLUSTERSIM_SHARDS\\x0atouch X\\x0a#' --quiet --shard "));
  CHECK(lines_of(slurm.job(0)).size() == 6);  // shebang, three directives, the shard's command, nothing more
  // The jobs as Slurm runs them, in the working folder: the shards (abbreviated options left out), then the merge.
  for (int i = 0; i < 2; ++i)
    REQUIRE(sh("cd " + q(work.string()) + " && SLURM_ARRAY_TASK_ID=" + std::to_string(i) + " bash " + q(slurm.job_file(0).string())) == 0);
  REQUIRE(sh("cd " + q(work.string()) + " && bash " + q(slurm.job_file(1).string()) + " > merged.txt") == 0);
  REQUIRE(sh("cd " + q(work.string()) + " && " + sweep + " --quiet > whole.txt") == 0);
  CHECK(read_text(work / "merged.txt") == read_text(work / "whole.txt"));
  CHECK(read_text(base + ".parts/parts.list") == base + ".parts/part-0.json\n" + base + ".parts/part-1.json\n");
  CHECK_FALSE(fs::exists(work / "X"));
  CHECK_FALSE(fs::exists(top / "X"));
  CHECK_FALSE(fs::exists("X"));
}

TEST_CASE("sweep --slurm-script: abbreviated and --name=value options are left out of the shards' command line", "[cli][sweep]") {
  TempDir dir;
  const auto file = dir.write_json("small.json", small_doc()).string();
  const std::string script = (dir / "run.sh").string();
  const CliResult r = run_cli({"sweep", file, "--search", "--ver", "4", "--arr", "3", "--ti", "10", "--parti=debug", "--slurm=" + script, "-q"});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  const std::string s = read_text(script);
  CHECK(contains(s, " sweep '" + file + "' '--search' '--ver' '4' --quiet --shard \"${SLURM_ARRAY_TASK_ID}/3\" --part '"));
  CHECK(contains(s, "#SBATCH --array=0-2\n"));
  CHECK(contains(s, "#SBATCH --time=10\n"));
  CHECK(contains(s, "#SBATCH --partition=debug\n"));
}

TEST_CASE("sweep --slurm-script bad input: Slurm values, paths and a sweep its shards would refuse", "[cli][sweep]") {
  TempDir dir;
  const auto file = dir.write_json("small.json", small_doc()).string();
  const std::string script = (dir / "s.sh").string();
  const std::vector<std::string> search = {"sweep", file, "--search", "--slurm-script", script};
  auto with = [](std::vector<std::string> a, const std::vector<std::string>& more) {
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  SECTION("--partition with an option in it") {
    check_refused(run_cli(with(search, {"--partition", "batch --output=/home/u/.bashrc"})),
                  "clustersim sweep: --partition \"batch --output=/home/u/.bashrc\": expected a partition name of letters, "
                  "digits, '_', '.' and '-' (several joined by commas)");
  }
  SECTION("--time not in Slurm's forms") {
    for (const char* bad : {"1:2:3:4", "soon", "", "1:00 --x"})
      check_refused(run_cli(with(search, {"--time", bad})),
                    std::string("clustersim sweep: --time \"") + bad +
                        "\": expected a Slurm time limit (M, M:S, H:M:S, D-H, D-H:M, D-H:M:S or UNLIMITED)");
    // A newline is refused too, and echoed escaped (sim/files/printable.hpp).
    check_refused(run_cli(with(search, {"--time", "10\n#SBATCH --output=x"})),
                  "clustersim sweep: --time \"10\\n#SBATCH --output=x\": expected a Slurm time limit (M, M:S, H:M:S, D-H, "
                  "D-H:M, D-H:M:S or UNLIMITED)");
  }
  SECTION("a script path with a newline") {
    const std::string bad = (dir / "a\nb.sh").string();
    check_refused(run_cli({"sweep", file, "--search", "--slurm-script", bad}),
                  "clustersim sweep: --slurm-script: the script's path \"" + dir.path().string() +
                      "/a\\nb.sh\" has a control character (a newline, tab, ...) that sbatch cannot take; choose another");
  }
  SECTION("a working folder with a newline") {
    const fs::path odd = dir / "a\nb";
    fs::create_directories(odd);
    REQUIRE(sh("cd " + q(odd.string()) + " && " + q(CLUSTERSIM_BINARY) + " sweep " + q(file) + " --search --slurm-script s.sh 2> " +
               q((dir / "err.txt").string())) == 2);
    CHECK(read_text(dir / "err.txt") == "clustersim sweep: --slurm-script: the working folder \"" + dir.path().string() +
                                           "/a\\nb\" has a control character (a newline, tab, ...) that sbatch cannot take; "
                                           "choose another\n");
    CHECK_FALSE(fs::exists(odd / "s.sh"));
  }
  SECTION("the script over the scenario") {
    check_refused(run_cli({"sweep", file, "--search", "--slurm-script", file}),
                  "--slurm-script " + file + ": is also an input of this command (" + file + "); write the output to another file");
  }
  SECTION("a scenario the shards would refuse") {
    const auto bad = dir.write_json("bad.json", json{{"name", 3}}).string();
    const CliResult r = run_cli({"sweep", bad, "--search", "--slurm-script", script});
    CHECK(r.exit_code == 2);
    CHECK(r.err_lines().at(0) == bad + ": name: expected a string, got an integer 3");
  }
  SECTION("a --vary sweep of invalid points only") {
    check_refused(run_cli({"sweep", file, "--vary", "training.micro_batch_size=3,5", "--slurm-script", script}),
                  "clustersim sweep: --slurm-script: every one of the 2 points is invalid, no job written (the first: "
                  "training.global_batch_size: 16 is not divisible by micro_batch_size (3) x data-parallel size (8) = 24)");
  }
  CHECK_FALSE(fs::exists(script));
}

TEST_CASE("sweep --vary: more points than --max-points are refused before the list is built", "[cli][sweep]") {
  TempDir dir;
  const auto file = dir.write_json("small.json", small_doc()).string();
  std::string thousand;
  for (int i = 1; i <= 1000; ++i) {
    if (i > 1) thousand += ',';
    thousand += std::to_string(i);
  }
  check_refused(run_cli({"sweep", file, "--vary", "training.micro_batch_size=" + thousand, "--vary", "training.seq_length=" + thousand,
                         "--vary", "training.global_batch_size=" + thousand}),
                "clustersim sweep: --vary: 1000000000 points (1000 x 1000 x 1000 values), more than the limit of 1000000 "
                "(--max-points N; or sweep fewer values, or split the sweep)");
  check_refused(run_cli({"sweep", file, "--vary", "training.micro_batch_size=1,2,4", "--max-points", "2"}),
                "clustersim sweep: --vary: 3 points (3 values), more than the limit of 2 (--max-points N; or sweep fewer values, "
                "or split the sweep)");
  check_refused(run_cli({"sweep", file, "--vary", "training.micro_batch_size=1,2", "--max-points", "0"}),
                "clustersim sweep: --max-points 0: expected an integer in [1, 100000000]");
  check_refused(run_cli({"sweep", file, "--search", "--max-points", "5"}), "clustersim sweep: --max-points needs --vary");
}

TEST_CASE("sweep merge --parts-list: the parts named one a line; an empty line or a missing part refused with its line", "[cli][sweep]") {
  TempDir dir;
  const auto file = dir.write_json("small.json", small_doc()).string();
  const std::vector<std::string> vary = {"sweep", file, "--vary", "training.micro_batch_size=1,2,4", "--quiet"};
  auto with = [](std::vector<std::string> a, const std::vector<std::string>& more) {
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  const CliResult whole = run_cli(vary);
  REQUIRE(whole.exit_code == 0);
  const std::string p0 = (dir / "p0.json").string(), p1 = (dir / "p1.json").string();
  REQUIRE(run_cli(with(vary, {"--shard", "0/2", "--part", p0})).exit_code == 0);
  REQUIRE(run_cli(with(vary, {"--shard", "1/2", "--part", p1})).exit_code == 0);
  const auto list = dir.write("parts.list", p1 + "\n" + p0 + "\n").string();
  const CliResult merged = run_cli({"sweep", "merge", "--parts-list", list});
  INFO(merged.describe());
  CHECK(merged.exit_code == 0);
  CHECK(merged.out == whole.out);
  const auto empty_line = dir.write("empty.list", p0 + "\n\n" + p1 + "\n").string();
  check_refused(run_cli({"sweep", "merge", "--parts-list", empty_line}),
                empty_line + ":2: empty line (expected the path of a part file)");
  const std::string none = (dir / "none.json").string();
  const auto missing = dir.write("missing.list", p0 + "\n" + none + "\n").string();
  check_refused(run_cli({"sweep", "merge", "--parts-list", missing}), missing + ":2: \"" + none + "\": no such part file (or not readable)");
  const auto nothing = dir.write("nothing.list", "").string();
  check_refused(run_cli({"sweep", "merge", "--parts-list", nothing}), nothing + ": no part files listed");
  check_refused(run_cli({"sweep", "merge", "--parts-list", (dir / "no.list").string()}), (dir / "no.list").string() + ": cannot open file");
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
  json small = small_doc();
  dir.write("prof.json", "{}");
  small["calibration"] = "prof.json";
  const auto c = dir.write_json("c.json", small).string();
  const std::string prof = (dir / "prof.json").string();
  check_refused(run_cli({"sweep", c, "--vary", "training.micro_batch_size=1,2", "--shard", "0/2", "--part", prof}),
                "--part " + prof + ": is also an input of this command (" + prof +
                    ", the scenario's calibration); write the output to another file");
  const auto plain = dir.write_json("plain.json", small_doc()).string();
  check_refused(run_cli({"sweep", plain, "--vary", "calibration=\"prof.json\"", "--slurm-script", prof}),
                "--slurm-script " + prof + ": is also an input of this command (" + prof +
                    ", the scenario's calibration); write the output to another file");
  CHECK(read_text(prof) == "{}");
}
