// `clustersim params`: the parameter table as a listing, as JSON and as the scenario reference.
#include <catch2/catch.hpp>

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
