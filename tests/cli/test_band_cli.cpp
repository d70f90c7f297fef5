// The error band and the topology file through the `clustersim` executable: every run report prints its
// band (text and --json), an out-of-domain scenario says so, and a broken topology file named with --set
// is one line and exit code 2. Expectations come from the compiled-in residual table, never its numbers.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "cli_helpers.hpp"
#include "models/hardware/gpu_catalog.hpp"
#include "scenario_runs.hpp"
#include "sim/report/error_band.hpp"

using namespace clitest;
using nlohmann::json;

TEST_CASE("every run report carries its step-time error band", "[cli][band]") {
  for (const auto& job : job_runs(json_runs_of_all_scenarios())) {
    INFO(job.label);
    REQUIRE(job.report.is_object());
    REQUIRE(job.report.contains("step_time_band"));
    const json& b = job.report.at("step_time_band");
    REQUIRE(b.at("available").get<bool>());
    const double step = job.report.at("step_time_s").get<double>();
    // [step x (1 + error_low), step x (1 + error_high)] over `points` validated runs of its class.
    CHECK(b.at("step_time_low_s").get<double>() == Approx(step * (1 + b.at("error_low").get<double>())));
    CHECK(b.at("step_time_high_s").get<double>() == Approx(step * (1 + b.at("error_high").get<double>())));
    CHECK(b.at("error_low").get<double>() <= b.at("error_median").get<double>());
    CHECK(b.at("error_median").get<double>() <= b.at("error_high").get<double>());
    CHECK(b.at("points").get<int>() >= 1);
    for (const char* k : {"strategy", "scale", "network", "framework"}) CHECK(b.at("class").at(k).is_string());
    CHECK(b.at("out_of_domain").is_boolean());
    CHECK(b.at("out_of_domain_reasons").empty() != b.at("out_of_domain").get<bool>());  // flagged = a reason given
  }
  for (const auto& run : text_runs_of_all_scenarios()) {
    INFO(run.file.filename().string());
    CHECK(contains(run.result.out, "\nerror band    "));
    CHECK(contains(run.result.out, " validated run"));
  }
}

TEST_CASE("a run outside anything validated says so in its report", "[cli][band]") {
  // A catalog GPU with NVLink that the residual table never compared (taken from the table).
  std::set<std::string> compared;
  for (const auto& r : cs::sim::residual_table().rows) compared.insert(r.features.gpu);
  std::string other;
  for (const auto& name : cs::models::gpu_names())
    if (other.empty() && !compared.count(name) && cs::models::find_gpu(name)->nvlink_gbps > 0) other = name;
  REQUIRE(!other.empty());
  const std::string file = (scenarios_dir() / "llama3-8b-h100x8.json").string();
  const CliResult text = run_cli({"run", file, "--set", "cluster.gpu=" + other});
  INFO(text.describe());
  REQUIRE(text.exit_code == 0);
  CHECK(contains(text.out, "\nvalidated     NO - outside anything validated: GPU " + other + " never compared (validated: "));
  const CliResult js = run_cli({"run", file, "--json", "--set", "cluster.gpu=" + other});
  REQUIRE(js.exit_code == 0);
  const json b = json::parse(js.out).at("step_time_band");
  CHECK(b.at("out_of_domain").get<bool>());
  CHECK(b.at("out_of_domain_reasons")[0].get<std::string>().rfind("GPU " + other + " never compared", 0) == 0);
  // The scenario as shipped, on a compared GPU, is not flagged for its GPU.
  const CliResult plain = run_cli({"run", file});
  CHECK_FALSE(contains(plain.out, "GPU H100-SXM never compared"));
}

TEST_CASE("run with a broken topology file given by --set: one line and exit code 2", "[cli][topology_file]") {
  const std::string file = (scenarios_dir() / "llama3-8b-mi300x32-topology-file.json").string();
  const CliResult r = run_cli({"run", file, "--set", "cluster.topology_file=../tests/topologies/data/syntax_error.dot"});
  INFO(r.describe());
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  REQUIRE(r.err_lines().size() == 1);
  const std::string line = r.err_lines()[0];
  CHECK(line.rfind(file + ": cluster.topology_file: ", 0) == 0);
  CHECK(contains(line, "tests/topologies/data/syntax_error.dot:"));
  CHECK(contains(line, "(the value given by --set cluster.topology_file=../tests/topologies/data/syntax_error.dot)"));
}
