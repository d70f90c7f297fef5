// The error band and the topology file through the `clustersim` executable: every run report prints its
// band (text and --json), an out-of-domain scenario says so, and a broken topology file named with --set
// is one line and exit code 2. Expectations come from the compiled-in residual table, never its numbers.
#include <catch2/catch.hpp>

#include <algorithm>
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

TEST_CASE("validate --json writes the residual table the band is read from", "[cli][band]") {
  // One published run (the compiled-in table's smallest, so that it is cheap and compared) in a file of
  // its own: validate --json carries it as the one row of "residual_table", in the format
  // scripts/regenerate_residuals.sh writes to calibrate/published/residuals.json.
  const auto& rows = cs::sim::residual_table().rows;
  REQUIRE(!rows.empty());
  const auto smallest = std::min_element(rows.begin(), rows.end(),
                                         [](const auto& a, const auto& b) { return a.features.num_gpus < b.features.num_gpus; });
  json one = json::array();
  for (const json& e : load_json(source_dir() / "calibrate/published/published-train.json"))
    if (e.at("id") == smallest->id) one.push_back(e);
  REQUIRE(one.size() == 1);
  TempDir dir;
  const auto file = dir.write_json("one.json", one);
  const CliResult r = run_cli({"validate", file.string(), "--json"});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  const json out = json::parse(r.out);
  REQUIRE(out.contains("residual_table"));
  const cs::sim::ResidualTable table = cs::sim::parse_residual_table(out.at("residual_table"), "validate --json");
  REQUIRE(table.rows.size() == 1);
  CHECK(table.rows[0].id == smallest->id);
  CHECK(table.rows[0].features.gpu == smallest->features.gpu);
  CHECK(table.rows[0].features.num_gpus == smallest->features.num_gpus);
}

TEST_CASE("sweep --vary cluster.topology_file moves each point onto the file's cluster", "[cli][topology_file]") {
  // The one-node H100 scenario, varied onto the example topology file: the file replaces the scenario's
  // intra_node and counts, so the point runs on 32 GPUs.
  const std::string file = (scenarios_dir() / "llama3-8b-h100x8.json").string();
  const CliResult r = run_cli({"sweep", file, "--vary", "cluster.topology_file=mi300x-two-racks.dot", "--json"});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "mi300x-two-racks.dot"));
}
