// `clustersim calibrate import` and the log options of `calibrate fit` / `validate` (--op, --ranks, --nodes,
// --gpu for nccl-tests logs that do not say them), through the executable. The logs are the variants of
// tests/calibrate/data/nccl-tests-logs (SOURCES.md there); the parser's own tests are
// tests/calibrate/test_nccl_tests_log_variants.cpp.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "cli_helpers.hpp"

using namespace clitest;

namespace {

std::string variant(const std::string& name) {
  return (source_dir() / "tests" / "calibrate" / "data" / "nccl-tests-logs" / name).string();
}

// Exactly one line on stderr, equal to `expected`; exit code 2; nothing on stdout.
void check_only_line(const CliResult& r, const std::string& expected) {
  INFO(r.describe());
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  const auto lines = r.err_lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == expected);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    out.push_back(text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos));
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  return out;
}

}  // namespace

TEST_CASE("calibrate import says what a log holds and where each fact came from", "[cli]") {
  const std::string log = variant("info-mid-row-a100-2node-allreduce.log");
  const CliResult r = run_cli({"calibrate", "import", log});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  const auto lines = lines_of(r.out);
  REQUIRE(lines.size() == 5);
  CHECK(lines[0] == log + ": 56 measurements from 28 rows in 1 run");
  CHECK(lines[1] == "  run at line 1: all_reduce (file name), 2 ranks (device lines), 2 nodes (device lines), GPU "
                    "NVIDIA A100-PCIE-40GB (device lines), algorithm default");
  CHECK(lines[2] == "    28 rows (lines 60-92), 56 measurements");
  CHECK(lines[3] == "  skipped:");
  CHECK(lines[4] == "    " + log + ":81: 1 NCCL WARN line (first: \"NET/IB : Got async event : port active\"); the rows "
                                    "were imported, check the run was healthy");
}

TEST_CASE("calibrate import names the launcher prefixes it removed", "[cli]") {
  const std::string log = variant("openmpi-tag-output-a100-2node-allreduce.log");
  const CliResult r = run_cli({"calibrate", "import", log});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  const auto lines = lines_of(r.out);
  REQUIRE(lines.size() >= 2);
  CHECK(lines[0] == log + ": 56 measurements from 28 rows in 1 run");
  CHECK(lines[1] == "  launcher prefixes removed: Open MPI --tag-output");
}

TEST_CASE("calibrate import of a headless paste asks for --op, and imports with it", "[cli]") {
  const std::string log = variant("headless-paste-h100.log");
  const CliResult bare = run_cli({"calibrate", "import", log});
  INFO(bare.describe());
  CHECK(bare.exit_code == 2);
  CHECK(bare.out.empty());
  const auto err = bare.err_lines();
  REQUIRE(err.size() == 2);
  CHECK(err[0] == log + ":1: the run names no collective (no 'Collective test starting' line, *_perf command line or "
                        "collective in the file name): pass --op NAME (all_reduce, all_gather, reduce_scatter, "
                        "all_to_all, broadcast, send_recv); 6 rows (lines 14-19) skipped");
  CHECK(err[1] == log + ": no usable nccl-tests measurement (expected data rows \"size count type redop root time "
                        "algbw busbw #wrong time algbw busbw #wrong\")");

  const CliResult with_op = run_cli({"calibrate", "import", log, "--op", "all_reduce", "--json"});
  INFO(with_op.describe());
  REQUIRE(with_op.exit_code == 0);
  const auto doc = nlohmann::json::parse(with_op.out);
  CHECK(doc["measurements"] == 12);
  REQUIRE(doc["files"].size() == 1);
  const auto& run = doc["files"][0]["runs"][0];
  CHECK(run["collective"] == "all_reduce");
  CHECK(run["collective_from"] == "--op");
  CHECK(run["ranks"] == 8);
  CHECK(run["ranks_from"] == "device lines");
  CHECK(doc["files"][0]["skipped"].empty());
}

TEST_CASE("calibrate fit and validate take a rows-only paste with --op, --ranks, --nodes and --gpu", "[cli]") {
  TempDir dir;
  const std::string log = variant("rows-only-paste.txt");
  const std::string out = (dir / "p.json").string();
  const CliResult fit = run_cli({"calibrate", "fit", log, "--op", "all_reduce", "--ranks", "2", "--nodes", "2", "--gpu",
                                 "A100-40GB", "-o", out});
  INFO(fit.describe());
  REQUIRE(fit.exit_code == 0);
  CHECK(fit.err.empty());
  // The fit's group names the GPU --gpu gave, the ranks and the level --nodes implies (2 nodes: network).
  CHECK(contains(fit.out, "A100-40GB all_reduce default 2 ranks network  22"));
  const auto profile = load_json(out);
  CHECK(contains(profile.dump(), "A100-40GB"));

  const CliResult val = run_cli({"validate", variant("headless-paste-h100.log"), "--op", "all_reduce"});
  INFO(val.describe());
  CHECK(val.exit_code == 0);
  CHECK(contains(val.out, "all_reduce 8 ranks nvlink      12"));
}

TEST_CASE("calibrate fit reads an Open MPI tagged log that starts with a bracket", "[cli]") {
  // "[1,0]<stdout>:" starts the file: not a JSON array.
  TempDir dir;
  const CliResult r = run_cli({"calibrate", "fit", variant("openmpi-tag-output-a100-2node-allreduce.log"), "-o",
                               (dir / "p.json").string()});
  INFO(r.describe());
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "all_reduce      default   2     network"));
}

TEST_CASE("calibrate import bad options each give one line", "[cli]") {
  const std::string log = variant("rows-only-paste.txt");
  SECTION("no log") {
    check_only_line(run_cli({"calibrate", "import"}),
                    "clustersim calibrate import: no log files (usage: clustersim calibrate import LOG... [--op NAME] "
                    "[--ranks N] [--nodes N] [--gpu NAME] [--json]; see clustersim calibrate import --help)");
  }
  SECTION("--op names no collective") {
    check_only_line(run_cli({"calibrate", "import", log, "--op", "gather"}),
                    "clustersim calibrate import: --op \"gather\": not a collective (expected all_reduce, all_gather, "
                    "reduce_scatter, all_to_all, broadcast or send_recv)");
  }
  SECTION("--ranks below 2") {
    check_only_line(run_cli({"calibrate", "import", log, "--ranks", "1"}),
                    "clustersim calibrate import: --ranks 1: expected 2 to 1048576 ranks");
  }
  SECTION("--nodes below 1") {
    check_only_line(run_cli({"calibrate", "import", log, "--nodes", "0"}),
                    "clustersim calibrate import: --nodes 0: expected 1 to 1048576 nodes");
  }
  SECTION("--nodes above --ranks") {
    check_only_line(run_cli({"calibrate", "import", log, "--ranks", "2", "--nodes", "4"}),
                    "clustersim calibrate import: --nodes 4 exceeds --ranks 2");
  }
  SECTION("--gpu not in the catalog") {
    const CliResult r = run_cli({"calibrate", "import", log, "--gpu", "H2O0"});
    INFO(r.describe());
    CHECK(r.exit_code == 2);
    REQUIRE(r.err_lines().size() == 1);
    CHECK(r.err_lines()[0].rfind("clustersim calibrate import: --gpu: unknown GPU \"H2O0\"", 0) == 0);
  }
  SECTION("a JSON file") {
    const std::string json = (source_dir() / "calibrate" / "published" / "nccl.json").string();
    check_only_line(run_cli({"calibrate", "import", json}),
                    json + ": a JSON file, not an nccl-tests log (calibrate fit and validate read it as it is)");
  }
  SECTION("the same in calibrate fit") {
    TempDir dir;
    check_only_line(run_cli({"calibrate", "fit", log, "--op", "gather", "-o", (dir / "p.json").string()}),
                    "clustersim calibrate fit: --op \"gather\": not a collective (expected all_reduce, all_gather, "
                    "reduce_scatter, all_to_all, broadcast or send_recv)");
  }
}
