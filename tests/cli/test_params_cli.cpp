// `clustersim params`: the parameter table as a listing, as JSON and as the scenario reference.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

#include "cli_helpers.hpp"
#include "sim/scenario/params.hpp"

using namespace clitest;
using nlohmann::json;

TEST_CASE("clustersim params lists every key of the table with its type, default and range", "[cli]") {
  const auto r = run_cli({"params"});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  for (const auto& p : cs::sim::params::table()) {
    INFO(p.path);
    CHECK(contains(r.out, "\n" + p.path + "  ") == (r.out.rfind(p.path + "  ", 0) != 0));
  }
  CHECK(contains(r.out, "cluster.nodes  integer  default: required  range: [1, 1000000]\n    number of nodes\n"));
  CHECK(contains(r.out, "training.recompute_granularity  choice  default: none  one of: none, selective, full  (searched)\n"));
}

TEST_CASE("clustersim params --json is the table", "[cli]") {
  const auto r = run_cli({"params", "--json"});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  const json doc = json::parse(r.out);
  REQUIRE(doc["parameters"].size() == cs::sim::params::table().size());
  CHECK(doc == cs::sim::params::to_json());
  const auto nodes = std::find_if(doc["parameters"].begin(), doc["parameters"].end(), [](const json& p) { return p["path"] == "cluster.nodes"; });
  REQUIRE(nodes != doc["parameters"].end());
  CHECK((*nodes)["type"] == "integer");
  CHECK((*nodes)["max"] == 1e6);
}

TEST_CASE("clustersim params --markdown prints the committed docs/scenario-reference.md", "[cli]") {
  const auto r = run_cli({"params", "--markdown"});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  std::ifstream in(std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/scenario-reference.md", std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(r.out == text.str());
}

TEST_CASE("clustersim params refuses arguments it does not take", "[cli]") {
  const auto both = run_cli({"params", "--json", "--markdown"});
  CHECK(both.exit_code == 2);
  CHECK(both.err == "clustersim params: give --json or --markdown, not both\n");
  const auto extra = run_cli({"params", "cluster.nodes"});
  CHECK(extra.exit_code == 2);
  CHECK(extra.err == "clustersim params: unexpected argument 'cluster.nodes' (see clustersim params --help)\n");
}

namespace {

// Every number of a report is finite and nothing is null (nlohmann writes NaN and infinity as null).
void check_all_finite(const json& v, const std::string& path) {
  INFO(path);
  CHECK(!v.is_null());
  if (v.is_number()) CHECK(std::isfinite(v.get<double>()));
  if (v.is_object())
    for (auto it = v.begin(); it != v.end(); ++it) check_all_finite(it.value(), path + "." + it.key());
  if (v.is_array())
    for (std::size_t i = 0; i < v.size(); ++i) check_all_finite(v[i], path + "[" + std::to_string(i) + "]");
}

}  // namespace

// The table's float limits are where a report stays finite: before it, price_per_gpu_hour 1e308 and
// memory_reserve_gib 1e300 gave JSON null with exit 0.
TEST_CASE("a scenario at the table's float limits reports only finite numbers", "[cli]") {
  TempDir dir;
  json doc = scenario_json("llama2-13b-a100x64-hdr200.json");
  const std::vector<std::string> limits = {
      "cluster.price_per_gpu_hour=10000", "training.tokens_to_train=1e18", "cluster.usd_per_kwh=1000", "cluster.pue=10",
      "cluster.node_overhead_w=1e6", "cluster.inter_node.oversubscription=1000", "simulation.comm_compute_contention=10"};
  for (const auto& links : {R"({"name": "slow", "line_rate_gbps": 1, "efficiency": 0.01, "latency_us": 1e6})",
                            R"({"name": "fast", "line_rate_gbps": 1e5})"}) {
    INFO(links);
    doc["cluster"]["inter_node"]["link"] = json::parse(links);
    const auto file = dir.write_json("scenario.json", doc);
    std::vector<std::string> args = {"run", file.string(), "--json"};
    for (const auto& l : limits) args.insert(args.end(), {"--set", l});
    const auto r = run_cli(args);
    INFO(r.describe());
    REQUIRE(r.exit_code == 0);
    check_all_finite(json::parse(r.out), "report");
  }
}
