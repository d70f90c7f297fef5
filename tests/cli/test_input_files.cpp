// Input files and command-line values that once crashed, hung or misled (issue 13, classes 5, 6 and 8),
// through the `clustersim` executable: each ends in exit code 2 with one line naming the file and the line
// and column (or the option), never a crash, a hang or an unbounded read. The JSON reader and the file
// reader are sim/files/json_file.hpp and sim/files/input_file.hpp.
#include <sys/stat.h>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "cli_helpers.hpp"

using namespace clitest;
using nlohmann::json;

namespace {

const char* const k8b = "llama3-8b-h100x8.json";

// Exactly one line on stderr, equal to `expected`; exit code 2; nothing on stdout.
void check_only_line(const CliResult& r, const std::string& expected) {
  INFO(r.describe());
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  const auto lines = r.err_lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == expected);
}

}  // namespace

// --- JSON reader (class 5) ---------------------------------------------------------------------------

TEST_CASE("a number too large for a double is an input error at its line and column", "[cli]") {
  TempDir dir;
  SECTION("1e999") {
    // Line 2 is `  "name": 1e999`: the number starts after 10 characters, in column 11.
    const auto file = dir.write("overflow.json", "{\n  \"name\": 1e999\n}\n");
    check_only_line(run_cli({"run", file.string()}),
                    file.string() + ":2:11: number out of range: 1e999 (a JSON number here must be finite and fit a "
                                    "double, at most about 1.8e308)");
  }
  SECTION("a 400-digit integer, echoed cut to 80 digits") {
    // `{"name": ` is 9 characters: the number is in column 10.
    const auto file = dir.write("digits.json", "{\"name\": " + std::string(400, '9') + "}");
    check_only_line(run_cli({"run", file.string()}),
                    file.string() + ":1:10: number out of range: " + std::string(80, '9') +
                        "... (400 bytes) (a JSON number here must be finite and fit a double, at most about 1.8e308)");
  }
}

TEST_CASE("JSON nested 100000 deep is refused at level 257 without a crash", "[cli]") {
  TempDir dir;
  // `{"a": ` is 6 characters; the object is level 1, so the 256th '[' (offset 6 + 255, column 262) would
  // open level 257.
  const auto file = dir.write("deep.json", "{\"a\": " + std::string(100000, '[') + std::string(100000, ']') + "}");
  check_only_line(run_cli({"run", file.string()}),
                  file.string() + ":1:262: objects and arrays nested deeper than 256 levels");
}

TEST_CASE("a duplicate key is an error naming both lines", "[cli]") {
  TempDir dir;
  SECTION("in a scenario") {
    // The second "name" ends (its closing quote) in line 3, column 8.
    const auto file = dir.write("dup.json", "{\n  \"name\": \"a\",\n  \"name\": \"b\"\n}\n");
    check_only_line(run_cli({"run", file.string()}),
                    file.string() + ":3:8: duplicate key \"name\" (first given at line 2; JSON keeps only one of them)");
  }
  SECTION("in a measurement file") {
    const auto file = dir.write("dup-measure.json", "{\"gemm\": [],\n \"gemm\": []}");
    check_only_line(run_cli({"calibrate", "fit", file.string(), "-o", (dir / "p.json").string()}),
                    file.string() + ":2:7: duplicate key \"gemm\" (first given at line 1; JSON keeps only one of them)");
    CHECK(!fs::exists(dir / "p.json"));
  }
}

TEST_CASE("an echoed value is cut to 80 bytes with its control bytes escaped", "[cli]") {
  TempDir dir;
  json doc = scenario_json(k8b);
  // ESC [31m, a NUL byte and 10,000 more bytes: 10,010 in all; the first 80 are shown, escaped.
  const std::string name = std::string("\x1b[31mH100") + std::string(1, '\0') + std::string(10000, 'B');
  doc["cluster"]["gpu"] = name;
  const auto file = dir.write_json("esc.json", doc);
  const auto r = run_cli({"run", file.string()});
  check_only_line(r, file.string() + ": cluster.gpu: unknown GPU \"\\x1b[31mH100\\x00" + std::string(70, 'B') +
                         "... (10010 bytes)\" (known: A100-40GB, A100-80GB, H100-SXM, H100-PCIe, H200, B200, MI300X, L40S, GB200, GB300, B300, H800, H20, MI325X, MI355X)");
  CHECK(r.err.find('\x1b') == std::string::npos);
  CHECK(r.err.find('\0') == std::string::npos);
}

TEST_CASE("at most 20 problems are listed, then a count", "[cli]") {
  TempDir dir;
  json doc = scenario_json(k8b);
  // 1,000 unknown keys in "cluster", nothing else wrong: 20 lines, then one for the 980 others.
  for (int i = 0; i < 1000; ++i) doc["cluster"]["zzz_unknown_" + std::to_string(1000 + i)] = 1;
  const auto file = dir.write_json("many.json", doc);
  const auto r = run_cli({"run", file.string()});
  INFO(r.describe());
  CHECK(r.exit_code == 2);
  const auto lines = r.err_lines();
  REQUIRE(lines.size() == 21);
  for (std::size_t i = 0; i < 20; ++i) CHECK(lines[i].rfind(file.string() + ": cluster.zzz_unknown_", 0) == 0);
  CHECK(lines[20] == file.string() + ": ... and 980 more problems (the first 20 are listed)");
}

// --- File inputs (class 6) ---------------------------------------------------------------------------

TEST_CASE("a scenario over the 4 MiB limit is refused before it is parsed", "[cli]") {
  TempDir dir;
  const auto file = dir.write("big.json", scenario_json(k8b).dump() + std::string(std::size_t{5} << 20, ' '));
  const auto size = fs::file_size(file);
  check_only_line(run_cli({"run", file.string()}),
                  file.string() + ": " + std::to_string(size) + " bytes is over the 4 MiB limit for a scenario");
}

TEST_CASE("an input that is not a regular file is refused at once", "[cli]") {
  TempDir dir;
  const std::string out = (dir / "p.json").string();
  SECTION("run /dev/zero") {
    check_only_line(run_cli({"run", "/dev/zero"}),
                    "/dev/zero: is a character device, not a regular file (a scenario is read from a file)");
  }
  SECTION("run on a directory") {
    check_only_line(run_cli({"run", dir.path().string()}),
                    dir.path().string() + ": is a directory, not a regular file (a scenario is read from a file)");
  }
  SECTION("run on a FIFO with no writer (would block forever in open)") {
    const auto fifo = dir / "fifo.json";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    check_only_line(run_cli({"run", fifo.string()}),
                    fifo.string() + ": is a FIFO (named pipe), not a regular file (a scenario is read from a file)");
  }
  SECTION("validate /dev/zero") {
    check_only_line(run_cli({"validate", "/dev/zero"}),
                    "/dev/zero: is a character device, not a regular file (a measurement file is read from a file)");
  }
  SECTION("calibrate fit /dev/zero") {
    check_only_line(run_cli({"calibrate", "fit", "/dev/zero", "-o", out}),
                    "/dev/zero: is a character device, not a regular file (a measurement file is read from a file)");
    CHECK(!fs::exists(out));
  }
  SECTION("a scenario's calibration is /dev/zero") {
    json doc = scenario_json(k8b);
    doc["calibration"] = "/dev/zero";
    const auto file = dir.write_json("cal.json", doc);
    check_only_line(run_cli({"run", file.string()}),
                    file.string() + ": calibration: /dev/zero: is a character device, not a regular file (a calibration "
                                    "profile is read from a file)");
  }
}

// --- Command-line values (class 8) -------------------------------------------------------------------

TEST_CASE("an unknown GPU on the command line is refused with the nearest name", "[cli]") {
  const std::string scenario = (scenarios_dir() / k8b).string();
  const std::string known = "(known: A100-40GB, A100-80GB, H100-SXM, H100-PCIe, H200, B200, MI300X, L40S, GB200, GB300, B300, H800, H20, MI325X, MI355X)";
  SECTION("sweep --gpu (an empty plan and exit 0 before)") {
    check_only_line(run_cli({"sweep", scenario, "--gpus", "8", "--gpu", "H10"}),
                    "clustersim sweep: --gpu: unknown GPU \"H10\" (did you mean \"H100-SXM\"?) " + known);
  }
  SECTION("sweep --gpu, nothing near") {
    check_only_line(run_cli({"sweep", scenario, "--gpus", "8", "--gpu", "H200,bogus"}),
                    "clustersim sweep: --gpu: unknown GPU \"bogus\" " + known);
  }
  SECTION("validate --gpu (exit 0 before)") {
    const auto log = source_dir() / "calibrate/measurements/h200-clustersim-bench-2026-11-30b.json";
    check_only_line(run_cli({"validate", log.string(), "--gpu", "H2O0"}),
                    "clustersim validate: --gpu: unknown GPU \"H2O0\" (did you mean \"H200\"?) " + known);
  }
}

TEST_CASE("a deadline or budget must be a positive finite number", "[cli]") {
  const std::string scenario = (scenarios_dir() / k8b).string();
  SECTION("--deadline-days nan") {
    check_only_line(run_cli({"sweep", scenario, "--gpus", "8", "--deadline-days", "nan"}),
                    "clustersim sweep: --deadline-days nan: expected a positive number of days (leave the option out "
                    "for no limit)");
  }
  SECTION("--deadline-days -1 (meant no limit before)") {
    check_only_line(run_cli({"sweep", scenario, "--gpus", "8", "--deadline-days", "-1"}),
                    "clustersim sweep: --deadline-days -1: expected a positive number of days (leave the option out "
                    "for no limit)");
  }
  SECTION("--budget-usd -1") {
    check_only_line(run_cli({"sweep", scenario, "--gpus", "8", "--budget-usd", "-1"}),
                    "clustersim sweep: --budget-usd -1: expected a positive amount of dollars (leave the option out for "
                    "no limit)");
  }
}

TEST_CASE("every subcommand names its usage on a missing argument", "[cli]") {
  SECTION("calibrate with no subcommand (nothing on stderr before)") {
    check_only_line(run_cli({"calibrate"}),
                    "clustersim calibrate: missing subcommand (usage: clustersim calibrate fit INPUTS... -o profile.json "
                    "[--gpu NAME]; see clustersim calibrate --help)");
  }
  SECTION("calibrate fit with no input") {
    check_only_line(run_cli({"calibrate", "fit"}),
                    "clustersim calibrate fit: no measurement files (usage: clustersim calibrate fit INPUTS... -o "
                    "profile.json [--gpu NAME] [--comm-gpu NAME ...]; see clustersim calibrate fit --help)");
  }
  SECTION("run, sweep, validate, collective") {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"run", "clustersim run: missing SCENARIO.json (usage: clustersim run SCENARIO.json [--json] [--trace out.json] "
                "[--set path=value ...]; see clustersim run --help)"},
        {"sweep", "clustersim sweep: missing SCENARIO.json (usage: clustersim sweep SCENARIO.json [--vary "
                  "path=v1,v2,...]... [--search] [--csv out.csv] [--threads N]; see clustersim sweep --help)"},
        {"validate", "clustersim validate: no measurement files (usage: clustersim validate MEASURED... [--scenario "
                     "S.json] [--profile P.json] [--gpu NAME]; see clustersim validate --help)"},
        {"collective", "clustersim collective: missing --scenario S.json (usage: clustersim collective --scenario S.json "
                       "--op OP [--ranks N] [--bytes MIN..MAX] [--network flow|analytical]; see clustersim collective "
                       "--help)"}};
    for (const auto& [command, line] : cases) check_only_line(run_cli({command}), line);
  }
}

TEST_CASE("validate that can predict nothing prints the notes it refers to", "[cli]") {
  TempDir dir;
  // One all-reduce row of a run on two hosts: multi-node, so without --scenario there is no cluster for it.
  const auto log = dir.write("two-nodes.log",
                             "# Collective test starting: all_reduce_perf\n"
                             "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 1048576 step: 2(factor) warmup iters: 1 iters: 20\n"
                             "#  Rank  0 Group  0 Pid 1 on hostA device  0 [0x01] NVIDIA H200\n"
                             "#  Rank  1 Group  0 Pid 2 on hostB device  0 [0x01] NVIDIA H200\n"
                             "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n"
                             "     1048576        262144     float     sum      -1    20.00   52.43   52.43       0    20.00   52.43   52.43       0\n");
  const auto r = run_cli({"validate", log.string()});
  INFO(r.describe());
  CHECK(r.exit_code == 2);
  const auto lines = r.err_lines();
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "note: 2 multi-node collective points skipped: they need a cluster (--scenario S.json)");
  CHECK(lines[1] == "clustersim validate: no point could be predicted (see the notes above)");
}
