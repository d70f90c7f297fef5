// clustersim sweep through the executable (issue 16): progress on stderr, the screening tier's --verify,
// shards and their merge (byte for byte the unsharded run), the Slurm submission script, and one test
// per bad-input path of those options. The Slurm script also runs under a fake `sbatch` (issue 32): a shell
// script on PATH that records its arguments and the job script it reads on stdin and prints a job id.
// Hostile values (a newline and the here-document's own end marker in a --set value, "$(touch X)" and '%'
// in the script's name, a space in the working folder) reach the jobs as data: the marker file X is never
// created, the recorded sbatch arguments and #SBATCH lines are exactly the expected ones, and the recorded
// jobs, run as Slurm would run them, give the unsharded run's output.
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "cli_helpers.hpp"

using namespace clitest;
using nlohmann::json;

namespace {

// 2 nodes of 4 H100: a 16-layer GPT whose whole layout search simulates in about a second.
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

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& more) {
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

// Runs `args` unsharded and as `n` shards plus a merge; the merge's stdout and CSV are the unsharded run's.
void check_sharded_equals_whole(const TempDir& dir, const std::vector<std::string>& args, int n) {
  const CliResult whole = run_cli(with(args, {"--csv", (dir / "whole.csv").string(), "--quiet"}));
  REQUIRE(whole.exit_code == 0);
  std::vector<std::string> merge = {"sweep", "merge"};
  for (int i = n - 1; i >= 0; --i) {  // any order
    const std::string part = (dir / ("part-" + std::to_string(i) + ".json")).string();
    const CliResult shard = run_cli(with(args, {"--csv", (dir / "merged.csv").string(), "--quiet", "--shard",
                                                std::to_string(i) + "/" + std::to_string(n), "--part", part}));
    INFO(shard.describe());
    REQUIRE(shard.exit_code == 0);
    CHECK(shard.out.empty());  // a shard prints nothing: the merge does
    CHECK_FALSE(fs::exists(dir / "merged.csv"));
    merge.push_back(part);
  }
  const CliResult merged = run_cli(merge);
  INFO(merged.describe());
  REQUIRE(merged.exit_code == 0);
  CHECK(merged.out == whole.out);
  CHECK(read_text(dir / "merged.csv") == read_text(dir / "whole.csv"));
  CHECK(merged.err.empty());
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

TEST_CASE("sweep progress: a line per 10 percent on a pipe, nothing with --quiet, results on stdout only", "[cli][sweep]") {
  TempDir dir;
  const auto file = dir.write_json("small.json", small_doc());
  // 10 points: every point is a tenth, so each phase prints 10 lines "k/10 simulated (k0%), R/s, ETA E s".
  const CliResult r = run_cli({"sweep", file.string(), "--vary", "training.micro_batch_size=1,2", "--vary",
                               "training.tensor_model_parallel_size=1,2,4,8,16", "--threads", "1"});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  const auto lines = r.err_lines();
  REQUIRE(lines.size() == 10);
  for (std::size_t k = 0; k < lines.size(); ++k) {
    CHECK(lines[k].rfind("  " + std::to_string(k + 1) + "/10 points (" + std::to_string(10 * (k + 1)) + "%), ", 0) == 0);
    CHECK(contains(lines[k], "/s, ETA "));
    CHECK_FALSE(contains(lines[k], "\r"));
  }
  const CliResult quiet = run_cli({"sweep", file.string(), "--vary", "training.micro_batch_size=1,2", "--vary",
                                   "training.tensor_model_parallel_size=1,2,4,8,16", "--threads", "1", "--quiet"});
  REQUIRE(quiet.exit_code == 0);
  CHECK(quiet.err.empty());
  CHECK(quiet.out == r.out);
  // A search counts its phases apart: screening (and estimating), then the simulations.
  const CliResult search = run_cli({"sweep", file.string(), "--search", "--verify", "20", "--threads", "2"});
  REQUIRE(search.exit_code == 0);
  CHECK(contains(search.err, "screened and estimated (100%)"));
  CHECK(contains(search.err, "20/20 simulated (100%)"));
  CHECK_FALSE(contains(search.out, "screened"));
}

TEST_CASE("sweep progress: on a terminal one line redrawn in place", "[cli][sweep]") {
  // A pseudo-terminal through Python's pty module (Debian's python3; skipped without it).
  if (std::system("python3 -c 'import pty' >/dev/null 2>&1") != 0) {
    WARN("python3 not found: the terminal case is not checked");
    return;
  }
  TempDir dir;
  const auto file = dir.write_json("small.json", small_doc());
  const auto script = dir.write("term.py", R"(import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    out = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT)
    os.dup2(out, 1)
    os.execv(sys.argv[1], sys.argv[1:2] + ["sweep", sys.argv[3], "--vary", "training.micro_batch_size=1,2,4", "--threads", "1"])
data = b""
while True:
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    data += chunk
os.waitpid(pid, 0)
sys.stdout.write(data.decode())
)");
  const std::string cmd = "python3 " + script.string() + " " + CLUSTERSIM_BINARY + " " + (dir / "out.txt").string() + " " +
                          file.string() + " > " + (dir / "tty.txt").string();
  REQUIRE(std::system(cmd.c_str()) == 0);
  const std::string tty = read_text(dir / "tty.txt");
  INFO(tty);
  CHECK(contains(tty, "\r\033[K  3/3 points (100%), "));  // redrawn in place, then a newline at the end
  CHECK(contains(tty, "ETA 0 s\r\n"));
  CHECK(contains(read_text(dir / "out.txt"), "MBS"));  // the table still on stdout
}

TEST_CASE("sweep --search --verify: the table says which rows are simulated and which are estimates", "[cli][sweep]") {
  TempDir dir;
  const auto file = dir.write_json("small.json", small_doc());
  const CliResult r = run_cli({"sweep", file.string(), "--search", "--verify", "3", "--top", "5", "--quiet", "--csv",
                               (dir / "all.csv").string()});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, ", 3 simulated, "));
  CHECK(contains(r.out, " estimated only (screening tier)"));
  CHECK(contains(r.out, "(all ranked by the screening estimate, the best 3 simulated: source says whose numbers a row shows)"));
  CHECK(contains(r.out, "estimate  source\n"));
  const std::string table = r.out.substr(r.out.find("source\n"));
  std::size_t des = 0, est = 0;
  for (std::size_t at = 0; (at = table.find("  DES\n", at)) != std::string::npos; ++at) ++des;
  for (std::size_t at = 0; (at = table.find("  estimate\n", at)) != std::string::npos; ++at) ++est;
  CHECK(des == 3);
  CHECK(est == 2);
  const std::string csv = read_text(dir / "all.csv");
  CHECK(contains(csv, ",usd_to_train,goodput,estimate_step_time_s\n"));
  CHECK(contains(csv, "\n4,estimated,"));
  // --verify 0: every layout simulated, the table and the CSV as before the screening tier.
  const CliResult all = run_cli({"sweep", file.string(), "--search", "--verify", "0", "--top", "5", "--quiet", "--csv",
                                 (dir / "des.csv").string()});
  REQUIRE(all.exit_code == 0);
  CHECK_FALSE(contains(all.out, "estimate"));
  CHECK(contains(read_text(dir / "des.csv"), ",usd_to_train,goodput\n"));
}

TEST_CASE("sweep shards: vary, search and capacity merged equal the unsharded run byte for byte", "[cli][sweep][slow]") {
  TempDir dir;
  const auto file = dir.write_json("small.json", small_doc()).string();
  SECTION("vary") {
    check_sharded_equals_whole(dir, {"sweep", file, "--vary", "training.micro_batch_size=1,2,4", "--vary",
                                     "training.tensor_model_parallel_size=1,2,3"}, 4);
  }
  SECTION("search, table") { check_sharded_equals_whole(dir, {"sweep", file, "--search", "--verify", "7"}, 3); }
  SECTION("search, JSON") { check_sharded_equals_whole(dir, {"sweep", file, "--search", "--verify", "5", "--json"}, 2); }
  SECTION("capacity") {
    check_sharded_equals_whole(dir, {"sweep", file, "--gpus", "4,8", "--gpu", "H100-SXM,A100-80GB", "--verify", "6"}, 3);
  }
  SECTION("capacity over whole runs (resilience)") {
    json doc = small_doc();
    doc["resilience"] = {{"checkpoint", {{"interval_s", 3600}}}};
    const auto whole = dir.write_json("whole.json", doc).string();
    check_sharded_equals_whole(dir, {"sweep", whole, "--gpus", "4,8", "--verify", "5", "--json"}, 2);
  }
  SECTION("one shard") { check_sharded_equals_whole(dir, {"sweep", file, "--search", "--verify", "4", "--top", "3"}, 1); }
}

TEST_CASE("sweep --slurm-script: an sbatch array of the shards and a merge after all of them", "[cli][sweep]") {
  TempDir dir;
  const auto file = dir.write_json("small.json", small_doc()).string();
  const std::string script = (dir / "run.sh").string();
  const CliResult r = run_cli({"sweep", file, "--search", "--verify", "9", "--slurm-script", script, "--array-size", "3",
                               "--partition", "debug", "--time", "00:10:00"});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.empty());
  const std::string s = read_text(script);
  INFO(s);
  CHECK(s.rfind("#!/bin/bash\n", 0) == 0);
  CHECK(contains(s, "#SBATCH --array=0-2\n"));
  CHECK(contains(s, "#SBATCH --partition=debug\n"));
  CHECK(contains(s, "#SBATCH --time=00:10:00\n"));
  CHECK(contains(s, "sbatch --parsable --dependency=afterok:${array_id}"));
  CHECK(contains(s, " sweep '" + file + "' '--search' '--verify' '9' --quiet --shard \"${SLURM_ARRAY_TASK_ID}/3\" --part '" +
                        script + ".parts'\"/part-${SLURM_ARRAY_TASK_ID}.json\""));
  // The merge reads the parts' names from a list the script writes (no argument list past ARG_MAX).
  CHECK(contains(s, " sweep merge --parts-list '" + script + ".parts/parts.list'\n"));
  CHECK(contains(s, "for ((i = 0; i < 3; i++)); do printf '%s/part-%d.json\\n' '" + script + ".parts' \"$i\"; done > '" + script +
                        ".parts/parts.list'\n"));
  CHECK(contains(s, "#SBATCH --output=" + script + ".out\n"));
  CHECK((fs::status(script).permissions() & fs::perms::owner_exec) != fs::perms::none);
  // The script is valid bash.
  CHECK(std::system(("bash -n " + script).c_str()) == 0);
}

TEST_CASE("sweep bad input: --shard, --part, --verify, --slurm-script and merge", "[cli][sweep][slow]") {
  TempDir dir;
  const auto file = dir.write_json("small.json", small_doc()).string();
  const std::vector<std::string> search = {"sweep", file, "--search"};
  SECTION("--shard") {
    for (const char* bad : {"2/2", "1", "a/3", "0/0", "-1/2", "1/2/3"})
      check_refused(run_cli(with(search, {"--shard", bad})),
                    std::string("clustersim sweep: --shard ") + bad + ": expected I/N with 0 <= I < N (e.g. --shard 0/4)");
  }
  SECTION("--part without --shard") {
    check_refused(run_cli(with(search, {"--part", (dir / "p.json").string()})), "clustersim sweep: --part needs --shard I/N");
  }
  SECTION("--verify with --vary") {
    check_refused(run_cli({"sweep", file, "--vary", "training.micro_batch_size=1,2", "--verify", "3"}),
                  "clustersim sweep: --verify needs --search or --gpus (a --vary sweep simulates every point)");
  }
  SECTION("Slurm options without --slurm-script") {
    check_refused(run_cli(with(search, {"--array-size", "4"})),
                  "clustersim sweep: --array-size, --partition and --time need --slurm-script");
  }
  SECTION("--array-size 0") {
    check_refused(run_cli(with(search, {"--slurm-script", (dir / "s.sh").string(), "--array-size", "0"})),
                  "clustersim sweep: --array-size 0: expected 1 to 100000 shards");
  }
  SECTION("--slurm-script with --shard") {
    check_refused(run_cli(with(search, {"--slurm-script", (dir / "s.sh").string(), "--shard", "0/2"})),
                  "clustersim sweep: --slurm-script writes the shards' jobs itself (leave out --shard)");
  }
  SECTION("merge: no parts, a missing shard, a shard twice, two runs, not a part file") {
    check_refused(run_cli({"sweep", "merge"}), "clustersim sweep merge: no part files (usage: clustersim sweep merge PART...; "
                                               "see clustersim sweep merge --help)");
    const std::string p0 = (dir / "p0.json").string(), p1 = (dir / "p1.json").string(), q0 = (dir / "q0.json").string();
    REQUIRE(run_cli(with(search, {"--verify", "4", "--quiet", "--shard", "0/2", "--part", p0})).exit_code == 0);
    REQUIRE(run_cli(with(search, {"--verify", "4", "--quiet", "--shard", "1/2", "--part", p1})).exit_code == 0);
    REQUIRE(run_cli(with(search, {"--verify", "5", "--quiet", "--shard", "0/2", "--part", q0})).exit_code == 0);
    check_refused(run_cli({"sweep", "merge", p0}), "clustersim sweep merge: shard 1/2 missing (give all 2 part files)");
    check_refused(run_cli({"sweep", "merge", p0, p0}), p0 + ": shard: 0/2 given twice (also " + p0 + ")");
    check_refused(run_cli({"sweep", "merge", q0, p1}), p1 + ": run: not the same run as " + q0 + " (other scenario or options)");
    check_refused(run_cli({"sweep", "merge", file}),
                  file + ": format: expected \"clustersim-sweep-part\" (a part file written by clustersim sweep --shard I/N)");
    json broken = json::parse(read_text(p0));
    broken["points"][3]["status"] = "done";
    const auto b = dir.write_json("broken.json", broken).string();
    check_refused(run_cli({"sweep", "merge", b, p1}),
                  b + ": points[3].status: expected a point status (simulated, estimated, pending, ...)");
    broken = json::parse(read_text(p0));
    broken["points"][0]["report"].erase("step_time_s");
    const auto c = dir.write_json("broken2.json", broken).string();
    check_refused(run_cli({"sweep", "merge", c, p1}),
                  c + ": points[0].report.step_time_s: missing (not a clustersim sweep part file?)");
    check_refused(run_cli({"sweep", "merge", (dir / "none.json").string()}), (dir / "none.json").string() + ": cannot open file");
  }
}

TEST_CASE("sweep: the points simulated at once share one memory budget, threads change no result", "[cli][sweep]") {
  TempDir dir;
  const auto file = dir.write_json("small.json", small_doc()).string();
  // A budget of 10 MiB: each point (about 8 MiB estimated) fits on its own, two together do not, so the
  // workers take turns.
  const std::vector<std::string> args = {"sweep", file, "--vary", "training.micro_batch_size=1,2,4", "--vary",
                                         "training.tensor_model_parallel_size=1,2", "--max-memory-gib", "0.01", "--quiet"};
  const CliResult one = run_cli(with(args, {"--threads", "1"}));
  const CliResult four = run_cli(with(args, {"--threads", "4"}));
  INFO(four.describe());
  REQUIRE(one.exit_code == 0);
  CHECK(four.exit_code == 0);
  CHECK(four.out == one.out);
  CHECK_FALSE(contains(one.out, "too large"));  // no point refused for its memory
}

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
  SECTION("a script path with a backslash") {
    const std::string bad = (dir / "a\\b.sh").string();
    check_refused(run_cli({"sweep", file, "--search", "--slurm-script", bad}),
                  "clustersim sweep: --slurm-script \"" + bad +
                      "\": a backslash turns off sbatch's filename patterns in the jobs' logs; choose a path without one");
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

TEST_CASE("sweep merge --parts-list: the parts named one a line, an empty line or a missing part refused with its line", "[cli][sweep]") {
  TempDir dir;
  const auto file = dir.write_json("small.json", small_doc()).string();
  const std::vector<std::string> vary = {"sweep", file, "--vary", "training.micro_batch_size=1,2,4", "--quiet"};
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
