// `clustersim validate PUBLISHED... --by group` (sim/cli/cli_validate_training.cpp): one line per group of every
// file, as text or Markdown, and the per-group guard against a baseline (--baseline, exit 1 on a regression),
// on a small published-training file written here; bad options and a malformed baseline end in exit code 2
// with one line.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cli_helpers.hpp"

using namespace clitest;
using nlohmann::json;

namespace {

// A GPT-1.7B entry of SC'21 Table 1's shape (32 A100, TP1 PP1), in group `group`, on `gpu`.
json entry(const std::string& id, const std::string& group, const std::string& gpu, double tflops) {
  json e = json::parse(R"json({
    "kind": "training", "confidence": "high",
    "model": {"name": "GPT-1.7B", "arch": "dense_transformer", "layers": 24, "hidden": 2304, "heads": 24,
              "kv_heads": 24, "ffn_hidden": 9216, "vocab": 51200},
    "cluster": {"count": 32, "gpus_per_node": 8, "nodes": 4,
                "inter_node": "8x Mellanox HDR 200Gb/s InfiniBand HCAs per node (Selene)"},
    "parallel": {"tp": 1, "pp": 1, "recompute": "full"},
    "batch": {"global": 512, "seq": 2048},
    "precision": "mixed", "framework": "Megatron-LM",
    "notes": "F=96*B*s*l*h^2*(1+s/6h+V/16lh)"
  })json");
  e["id"] = id;
  e["group"] = group;
  e["cluster"]["gpu"] = gpu;
  e["measured"] = {{"tflops_per_gpu", tflops}};
  return e;
}

// Three points of group "sc21" and one of group "other" on a GPU the catalog lacks.
json runs() {
  return json::array({entry("a", "sc21", "A100-SXM4-80GB", 137), entry("b", "sc21", "A100-SXM4-80GB", 130),
                      entry("c", "sc21", "A100-SXM4-80GB", 145), entry("d", "other", "X200 (no such GPU)", 137)});
}

// Exit code 2, nothing on stdout, and `expected` as the only line on stderr.
void check_only_line(const CliResult& r, const std::string& expected) {
  INFO(r.describe());
  CHECK((r.exit_code == 2 && r.out.empty() && r.err_lines() == std::vector<std::string>{expected}));
}

}  // namespace

TEST_CASE("validate --by group prints each group's points, MAPE, bias, worst point and skipped reasons", "[cli][validate]") {
  TempDir dir;
  const auto file = dir.write_json("runs.json", runs());
  const auto text = run_cli({"validate", file.string(), "--by", "group"});
  INFO(text.describe());
  REQUIRE(text.exit_code == 0);
  CHECK(contains(text.out, "runs.json"));
  CHECK(contains(text.out, "sc21"));
  CHECK(contains(text.out, "1 skipped: 1 x GPU not in the catalog: \"X200 (no such GPU)\""));

  const auto md = run_cli({"validate", file.string(), "--by", "group", "--markdown"});
  REQUIRE(md.exit_code == 0);
  CHECK(contains(md.out, "| file | group | points | compared | MAPE | bias | worst | skipped |"));
  CHECK(contains(md.out, "| runs.json | other | 1 | 0 | - | - | - | 1 x GPU not in the catalog"));

  const auto j = run_cli({"validate", file.string(), "--by", "group", "--json"});
  REQUIRE(j.exit_code == 0);
  const json doc = json::parse(j.out);
  REQUIRE(doc["groups"].size() == 2);
  const json& g = doc["groups"][0];
  CHECK(g["group"] == "sc21");
  CHECK(g["compared"] == 3);
  CHECK(g["mape"].get<double>() > 0);
  CHECK(std::abs(g["worst_error"].get<double>()) >= g["mape"].get<double>());
  CHECK(doc["groups"][1]["skip_reasons"][0]["count"] == 1);
}

TEST_CASE("validate --baseline fails a group more than 1 point of MAPE worse, or with fewer points", "[cli][validate]") {
  TempDir dir;
  const auto file = dir.write_json("runs.json", runs());
  const json now = json::parse(run_cli({"validate", file.string(), "--by", "group", "--json"}).out);
  const double mape = 100 * now["groups"][0]["mape"].get<double>();
  auto baseline = [&](double base_mape, int points) {
    return dir.write_json("base.json", {{"files", {{"runs.json", {{"sc21", {{"points", points}, {"mape", base_mape}, {"reason", "test"}}}}}}}});
  };
  SECTION("within 1 point: exit 0") {
    const auto r = run_cli({"validate", file.string(), "--by", "group", "--baseline", baseline(mape - 0.9, 3).string()});
    INFO(r.describe());
    CHECK(r.exit_code == 0);
  }
  SECTION("worse by more than 1 point: exit 1, the group, old and new") {
    const auto r = run_cli({"validate", file.string(), "--by", "group", "--baseline", baseline(mape - 1.2, 3).string()});
    INFO(r.describe());
    CHECK(r.exit_code == 1);
    char expected[256];
    std::snprintf(expected, sizeof expected,
                  "fidelity regression: runs.json sc21: MAPE old %.1f%%, new %.1f%% (more than 1 point worse than the baseline)",
                  mape - 1.2, mape);
    REQUIRE(r.err_lines().size() == 1);
    CHECK(r.err_lines()[0] == expected);
  }
  SECTION("fewer points than the baseline: exit 1") {
    const auto r = run_cli({"validate", file.string(), "--by", "group", "--baseline", baseline(mape, 4).string()});
    INFO(r.describe());
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "fidelity regression: runs.json sc21: points compared old 4, new 3 (lost points;"));
  }
  SECTION("a group of 3 or more points missing from the baseline: exit 1") {
    const auto base = dir.write_json("base.json", {{"files", json::object()}});
    const auto r = run_cli({"validate", file.string(), "--by", "group", "--baseline", base.string()});
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "runs.json sc21: 3 points compared, MAPE "));
    CHECK(contains(r.err, "not in the baseline (add it with a reason)"));
  }
}

TEST_CASE("validate --by group: bad options and a malformed baseline are input errors", "[cli][validate]") {
  TempDir dir;
  const auto file = dir.write_json("runs.json", runs());
  check_only_line(run_cli({"validate", file.string(), "--by", "model"}),
                  "clustersim validate: --by: \"model\" is not a grouping; the one there is: group");
  check_only_line(run_cli({"validate", file.string(), "--markdown"}), "clustersim validate: --markdown needs --by group");
  check_only_line(run_cli({"validate", file.string(), "--by", "group", "--markdown", "--json"}),
                  "clustersim validate: --markdown and --json: give one of them");
  const auto no_reason = dir.write_json("base.json", {{"files", {{"runs.json", {{"sc21", {{"points", 3}, {"mape", 5}}}}}}}});
  check_only_line(run_cli({"validate", file.string(), "--by", "group", "--baseline", no_reason.string()}),
                  no_reason.string() + ": files[\"runs.json\"][\"sc21\"].reason: expected why the baseline is what it is (a non-empty string)");
  const auto bad_mape = dir.write_json("base2.json", {{"files", {{"runs.json", {{"sc21", {{"points", 3}, {"mape", "5%"}, {"reason", "r"}}}}}}}});
  check_only_line(run_cli({"validate", file.string(), "--by", "group", "--baseline", bad_mape.string()}),
                  bad_mape.string() + ": files[\"runs.json\"][\"sc21\"].mape: expected the group's MAPE in percent (a number >= 0)");
  const auto no_files = dir.write_json("base3.json", json::object());
  check_only_line(run_cli({"validate", file.string(), "--by", "group", "--baseline", no_files.string()}),
                  no_files.string() + ": files: expected an object of files, each an object of groups");
}
