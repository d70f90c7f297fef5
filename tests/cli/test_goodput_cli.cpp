// `clustersim run` with the whole-run sections (docs/goodput.md): the new report lines and JSON keys
// appear with their sections and options, the same seed gives byte-identical output, and bad values of
// the new options end with one line and exit code 2.
#include <catch2/catch.hpp>

#include <string>

#include "cli_helpers.hpp"

using namespace clitest;
using nlohmann::json;

namespace {
json run_scenario() {
  json doc = scenario_json("llama3-8b-h100x8.json");
  doc["training"]["tokens_to_train"] = 2e10;
  doc["resilience"] = {{"checkpoint", {{"interval_s", 3600}}}};
  doc["data_pipeline"] = {{"bytes_per_sample", 32768}};
  doc["variability"] = {{"compute_jitter_cv", 0.05}};
  return doc;
}
}  // namespace

TEST_CASE("goodput cli: resilience, data_pipeline and --steps add their lines and keys", "[cli][goodput]") {
  TempDir dir;
  const auto file = dir.write_json("run.json", run_scenario());
  const CliResult text = run_cli({"run", file.string(), "--runs", "50", "--seed", "3", "--steps", "100"});
  INFO(text.describe());
  REQUIRE(text.exit_code == 0);
  for (const char* label : {"\ninput stall   ", "\nfailures      ", "\ncheckpoint    ", "\noptimal       ", "\ngoodput       ",
                            "\neffective     ", "\nmonte carlo   50 runs, seed 3", "\nstep dist     100 steps"})
    CHECK(contains(text.out, label));
  const CliResult js = run_cli({"run", file.string(), "--json", "--runs", "50", "--seed", "3", "--steps", "100"});
  REQUIRE(js.exit_code == 0);
  const json out = json::parse(js.out);
  CHECK(out.at("resilience").at("checkpoint").at("interval_s").get<double>() > 0);
  CHECK(out.at("resilience").at("monte_carlo").at("runs") == 50);
  CHECK(out.at("resilience").at("goodput").get<double>() < 1);
  CHECK(out.at("data_pipeline").at("input_stall_s").get<double>() >= 0);
  CHECK(out.at("step_distribution").at("steps") == 100);
  // The step report is untouched: the same keys and values as without the sections.
  json plain_doc = run_scenario();
  plain_doc.erase("resilience"), plain_doc.erase("data_pipeline"), plain_doc.erase("variability");
  const auto plain_file = dir.write_json("plain.json", plain_doc);
  const json plain = json::parse(run_cli({"run", plain_file.string(), "--json"}).out);
  CHECK(!plain.contains("resilience"));
  for (auto it = plain.begin(); it != plain.end(); ++it) CHECK(out.at(it.key()) == it.value());
}

TEST_CASE("goodput cli: the same seed gives byte-identical output", "[cli][goodput]") {
  TempDir dir;
  const auto file = dir.write_json("run.json", run_scenario());
  const std::vector<std::string> args = {"run", file.string(), "--json", "--runs", "40", "--seed", "9", "--steps", "64"};
  const CliResult a = run_cli(args), b = run_cli(args);
  REQUIRE(a.exit_code == 0);
  CHECK(a.out == b.out);
  std::vector<std::string> other = args;
  other[6] = "10";
  CHECK(run_cli(other).out != a.out);
}

TEST_CASE("goodput cli: bad --runs, --steps and section values are one line and exit 2", "[cli][goodput]") {
  TempDir dir;
  const auto file = dir.write_json("run.json", run_scenario());
  CliResult r = run_cli({"run", file.string(), "--runs", "0"});
  CHECK(r.exit_code == 2);
  CHECK(r.err_lines() == std::vector<std::string>{"clustersim run: --runs 0: expected an integer in [1, 1000000]"});
  r = run_cli({"run", file.string(), "--steps", "-3"});
  CHECK(r.exit_code == 2);
  CHECK(r.err_lines() == std::vector<std::string>{"clustersim run: --steps -3: expected an integer in [1, 1000000]"});
  r = run_cli({"run", file.string(), "--set", "resilience.restart.scheduling_s=-5"});
  CHECK(r.exit_code == 2);
  CHECK(r.err_lines() == std::vector<std::string>{file.string() + ": resilience.restart.scheduling_s: -5 is out of range (expected a number >= 0 and <= 1e+08)"
                                                  " (the value given by --set resilience.restart.scheduling_s=-5)"});
  const auto plain = dir.write_json("plain.json", scenario_json("llama3-8b-h100x8.json"));
  r = run_cli({"run", plain.string(), "--runs", "5"});
  CHECK(r.exit_code == 2);
  CHECK(r.err_lines() == std::vector<std::string>{plain.string() + ": --runs 5: needs a resilience section in the scenario (the Monte Carlo is over failures)"});
}

TEST_CASE("goodput cli: sweep ranks whole runs, and refuses variability it does not use", "[cli][goodput]") {
  TempDir dir;
  const auto file = dir.write_json("run.json", run_scenario());
  CliResult r = run_cli({"sweep", file.string(), "--vary", "training.micro_batch_size=1,2"});
  CHECK(r.exit_code == 2);
  CHECK(r.err_lines() == std::vector<std::string>{file.string() + ": variability: not used by clustersim sweep (clustersim run --steps K shows the step-time distribution)"});
  // Without variability: every point's days and dollars are its whole run's, and the sweep's CSV says its goodput.
  json doc = run_scenario();
  doc.erase("variability");
  const auto whole = dir.write_json("whole.json", doc);
  const auto csv = dir.path() / "points.csv";
  r = run_cli({"sweep", whole.string(), "--vary", "training.micro_batch_size=1,2", "--csv", csv.string()});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  const std::string text = read_text(csv);
  CHECK(text.find(",days_to_train,usd_to_train,goodput\n") != std::string::npos);
  const CliResult one = run_cli({"run", whole.string(), "--json"});
  REQUIRE(one.exit_code == 0);
  const json report = json::parse(one.out);
  // The first point (micro-batch 1) is the scenario itself: its CSV row carries clustersim run's effective days.
  const double days = report["resilience"]["effective_days_to_train"].get<double>();
  char cell[64];
  std::snprintf(cell, sizeof cell, "%.6g", days);
  CHECK(text.find(std::string(",") + cell + ",") != std::string::npos);
}

// Issue 32: a run whose failures outpace its progress, and a Monte Carlo past its budget, end with one line
// naming the file and exit code 2 (they gave null/inf in an exit-0 report, and --runs 1 hung).
TEST_CASE("goodput cli: a run that never finishes is one line naming the file and exit 2", "[cli][goodput]") {
  TempDir dir;
  json doc = run_scenario();
  doc["training"]["tokens_to_train"] = 1e13;
  doc.erase("data_pipeline");
  doc["resilience"] = {{"mtbf_hours", {{"gpu", 1}, {"host", 1}, {"nic", 1}, {"network", 1}, {"software", 1}}},
                       {"restart", {{"detection_s", 3600}}}};
  const auto file = dir.write_json("never.json", doc);
  const CliResult r = run_cli({"run", file.string(), "--json", "--runs", "1"});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err_lines() == std::vector<std::string>{file.string() + ": resilience: the run never finishes: an interruption every 138 s on "
                                                  "average (26 per hour) against a restart of 3.85e+03 s and 28.4 s of work between "
                                                  "checkpoints: expected goodput 6.45e-13 (at least 0.001: raise resilience.mtbf_hours, "
                                                  "shorten the restart or checkpoint more often)"});
}

TEST_CASE("goodput cli: --runs past the Monte Carlo's budget is one line naming the file and exit 2", "[cli][goodput]") {
  TempDir dir;
  json doc = run_scenario();
  doc["training"]["tokens_to_train"] = 1e14;
  doc.erase("data_pipeline");
  doc["resilience"] = {{"mtbf_hours", {{"gpu", 10}, {"host", 10}, {"nic", 10}, {"network", 10}, {"software", 10}}}};
  const auto file = dir.write_json("mc.json", doc);
  const CliResult r = run_cli({"run", file.string(), "--runs", "1000000"});
  CHECK(r.exit_code == 2);
  CHECK(r.err_lines() == std::vector<std::string>{file.string() + ": --runs 1000000: the Monte Carlo would sample about 1.33e+12 "
                                                  "interruptions (1.33e+06 a run); at most 1e+08 in all: give --runs 75 or fewer"});
}
