// The capacity plan's outlook at the command line (issue 34, done-when 3): P10 / P50 / P90 days and total
// cost with power for each row, --for-days, --runs and --seed, and their bad-input paths.
#include <catch2/catch.hpp>

#include <string>

#include "cli_helpers.hpp"

using namespace clitest;
using nlohmann::json;

namespace {
std::string scenario() { return (scenarios_dir() / "llama3-8b-h100x8.json").string(); }
}  // namespace

TEST_CASE("sweep --gpus prints each row's outlook and checks the deadline at P90", "[cli][plans][outlook][slow]") {
  const CliResult text = run_cli({"sweep", scenario(), "--gpus", "8,16", "--quiet", "--runs", "200", "--for-days", "30"});
  INFO(text.describe());
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("outlook: 200 draws (seed 1) of the model's error on comparable validated runs") != std::string::npos);
  CHECK(text.out.find("power and cooling at $0.0806/kWh (default") != std::string::npos);
  CHECK(text.out.find("days P10") != std::string::npos);
  CHECK(text.out.find("error band of (runs)") != std::string::npos);
  CHECK(text.out.find("tokens in 30 d: P10") != std::string::npos);
  CHECK(text.out.find("with power") != std::string::npos);
  CHECK(text.out.find("* meets the constraints at P90") != std::string::npos);

  const CliResult j = run_cli({"sweep", scenario(), "--gpus", "8,16", "--quiet", "--runs", "200", "--json", "--top", "1"});
  REQUIRE(j.exit_code == 0);
  const json row = json::parse(j.out)["ranked"][0];
  REQUIRE(row.contains("outlook"));
  CHECK(row["outlook"]["draws"] == 200);
  CHECK(row["outlook"]["days"]["p10"].get<double>() <= row["outlook"]["days"]["p90"].get<double>());
  CHECK(row["outlook"]["power"]["default_price"] == true);
  // Deterministic: the same seed prints the same plan byte for byte.
  const CliResult again = run_cli({"sweep", scenario(), "--gpus", "8,16", "--quiet", "--runs", "200", "--json", "--top", "1"});
  CHECK(again.out == j.out);
}

TEST_CASE("sweep outlook options: bad values and use without --gpus are refused in one line", "[cli][plans][outlook]") {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"sweep", scenario(), "--gpus", "8", "--runs", "0"},
           {"sweep", scenario(), "--gpus", "8", "--runs", "2000000"},
           {"sweep", scenario(), "--gpus", "8", "--for-days", "-3"},
           {"sweep", scenario(), "--gpus", "8", "--for-days", "nan"},
           {"sweep", scenario(), "--search", "--for-days", "30"},
           {"sweep", scenario(), "--search", "--runs", "10"},
           {"sweep", scenario(), "--search", "--seed", "3"}}) {
    const CliResult r = run_cli(args);
    INFO(r.describe());
    CHECK(r.exit_code == 2);
    CHECK(r.err_lines().size() == 1);
    CHECK(r.out.empty());
  }
}
