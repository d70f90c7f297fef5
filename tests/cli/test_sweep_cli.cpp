// clustersim sweep through the executable (issue 16): progress on stderr, the screening tier's --verify,
// shards and their merge (byte for byte the unsharded run), the Slurm submission script, and one test
// per bad-input path of those options.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
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

TEST_CASE("sweep: the points simulated at once share one memory budget; threads change no result", "[cli][sweep]") {
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
