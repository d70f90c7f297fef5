// sweep --emit-scenario (issue 34, done-when 2): the best row of a search or a capacity plan written as a scenario
// that `clustersim run` runs to the same step time (within 0.5 %) and the same memory.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "cli_helpers.hpp"

using namespace clitest;
using nlohmann::json;

namespace {
// The row's report (rank 1 of --json) against `clustersim run` of the emitted file.
void check_reproduces(const json& row, const fs::path& emitted) {
  const CliResult run = run_cli({"run", emitted.string(), "--json"});
  REQUIRE(run.exit_code == 0);
  const json rep = json::parse(run.out);
  const double step = row["report"]["step_time_s"].get<double>();
  CHECK(std::abs(rep["step_time_s"].get<double>() / step - 1) <= 0.005);
  CHECK(rep["memory_gib"] == row["report"]["memory_gib"]);
  CHECK(rep["layout"] == row["report"]["layout"]);
}
}  // namespace

TEST_CASE("sweep --search --emit-scenario: the best row runs to the same step and memory", "[cli][plans]") {
  TempDir dir;
  const fs::path out = dir / "best.json";
  const std::string scenario = (scenarios_dir() / "llama3-8b-h100x8.json").string();
  const CliResult r = run_cli({"sweep", scenario, "--search", "--quiet", "--json", "--top", "1", "--emit-scenario", out.string()});
  REQUIRE(r.exit_code == 0);
  const json row = json::parse(r.out)["ranked"][0];
  REQUIRE(row["status"] == "simulated");  // the first row is a DES result, the figure reproduced
  check_reproduces(row, out);
}

TEST_CASE("sweep --gpus --emit-scenario: the capacity plan's first row runs to the same step and memory", "[cli][plans]") {
  TempDir dir;
  const fs::path out = dir / "plan.json";
  const std::string scenario = (scenarios_dir() / "llama3-8b-h100x8.json").string();
  const CliResult r = run_cli({"sweep", scenario, "--gpus", "8,16", "--quiet", "--json", "--top", "1", "--emit-scenario", out.string()});
  REQUIRE(r.exit_code == 0);
  const json row = json::parse(r.out)["ranked"][0];
  REQUIRE(row["status"] == "simulated");
  check_reproduces(row, out);
}

TEST_CASE("sweep --emit-scenario bad input: the scenario itself as the output, and a --vary sweep", "[cli][plans]") {
  const std::string scenario = (scenarios_dir() / "llama3-8b-h100x8.json").string();
  const CliResult same = run_cli({"sweep", scenario, "--search", "--quiet", "--emit-scenario", scenario});
  CHECK(same.exit_code == 2);
  CHECK(contains(same.err, "--emit-scenario"));
  const CliResult vary = run_cli({"sweep", scenario, "--vary", "training.zero_stage=1,2", "--emit-scenario", "x.json"});
  CHECK(vary.exit_code == 2);
  CHECK(contains(vary.err, "clustersim sweep: --emit-scenario needs --search or --gpus"));
}
