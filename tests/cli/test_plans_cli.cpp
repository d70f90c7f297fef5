// Plans on the command line: a price column in every capacity-plan and sweep table, the per-type price
// table used by sweep --gpu, the one stderr line when types fall back to list prices, and
// --set cluster.gpu taking the new GPU's price (sim/scenario/scenario.hpp, "Price basis").
#include <catch2/catch.hpp>

#include <functional>
#include <string>

#include "cli_helpers.hpp"

using namespace clitest;
using nlohmann::json;

namespace {

json small_doc() {
  return json::parse(R"({
    "name": "small",
    "cluster": {"gpu": "H100-SXM", "nodes": 2, "gpus_per_node": 4, "intra_node": "nvswitch",
                "inter_node": {"fabric": "fat-tree", "link": "ib-ndr400", "nics_per_node": 4},
                "price_per_gpu_hour": {"H100-SXM": 2.5, "A100-80GB": 1.6}},
    "model": {"num_layers": 16, "hidden_size": 2048, "num_attention_heads": 16, "vocab_size": 32000,
              "ffn_hidden_size": 8192, "activation": "gelu"},
    "training": {"seq_length": 2048, "global_batch_size": 16, "micro_batch_size": 1, "tokens_to_train": 1e9},
    "simulation": {"network": "analytical"}
  })");
}

}  // namespace

TEST_CASE("plans: the capacity plan prints a price column and uses the per-type table", "[cli][plans]") {
  TempDir dir;
  const auto file = dir.write_json("small.json", small_doc()).string();
  const CliResult r = run_cli({"sweep", file, "--gpus", "8", "--gpu", "H100-SXM,A100-80GB", "--threads", "1", "--quiet"});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());  // both types priced by the table: nothing falls back (--quiet: no progress lines)
  CHECK(contains(r.out, "$/GPU-h"));
  CHECK(contains(r.out, "$2.50"));
  CHECK(contains(r.out, "$1.60"));
  const auto csv = (dir / "plan.csv").string();
  REQUIRE(run_cli({"sweep", file, "--gpus", "8", "--gpu", "H100-SXM,A100-80GB", "--csv", csv, "--quiet"}).exit_code == 0);
  const std::string text = read_text(csv);
  CHECK(contains(text.substr(0, text.find('\n')), ",usd_per_step,price_per_gpu_hour_usd,usd_per_million_tokens,"));
  CHECK(contains(text, ",1.6,"));
  CHECK(contains(text, ",2.5,"));
}

TEST_CASE("plans: sweep --gpu says once on stderr which types take catalog list prices", "[cli][plans]") {
  TempDir dir;
  json doc = small_doc();
  doc["cluster"]["price_per_gpu_hour"] = 2.5;  // the H100's price only
  const auto file = dir.write_json("small.json", doc).string();
  const CliResult r = run_cli({"sweep", file, "--gpus", "8", "--gpu", "H100-SXM,A100-80GB,H200", "--quiet"});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.err_lines().size() == 1);
  CHECK(r.err_lines()[0].rfind("clustersim sweep: cluster.price_per_gpu_hour has no price for A100-80GB, H200: using the catalog list "
                               "price per GPU-hour ($", 0) == 0);
}

TEST_CASE("plans: --set cluster.gpu takes the new GPU's price unless the scenario pins one for it", "[cli][plans]") {
  TempDir dir;
  json doc = small_doc();
  const auto table = dir.write_json("table.json", doc).string();
  doc["cluster"]["price_per_gpu_hour"] = 2.5;
  const auto number = dir.write_json("number.json", doc).string();
  auto price = [](const CliResult& r) {
    INFO(r.describe());
    REQUIRE(r.exit_code == 0);
    return json::parse(r.out).at("cost").at("price_per_gpu_hour_usd").get<double>();
  };
  // The table pins the A100's price; a number is the H100's, so the H200 takes its catalog price, which the
  // run without --set (H100-SXM, 2.5) must not keep.
  CHECK(price(run_cli({"run", table, "--json", "--set", "cluster.gpu=A100-80GB"})) == 1.6);
  CHECK(price(run_cli({"run", number, "--json"})) == 2.5);
  const double h200 = price(run_cli({"run", number, "--json", "--set", "cluster.gpu=H200"}));
  CHECK(h200 != 2.5);
  CHECK(price(run_cli({"run", table, "--json", "--set", "cluster.gpu=H200"})) == h200);
  // --set of the price after the GPU prices the new GPU.
  CHECK(price(run_cli({"run", number, "--json", "--set", "cluster.gpu=H200", "--set", "cluster.price_per_gpu_hour=3"})) == 3);

  // The same overrides through sweep price as run does (issue 28: sweep --set kept the file's $2.50 for the
  // new GPU; Python's set= and the GUI's knobs go through the same sim::apply_overrides, tests/python and
  // tests/gui check theirs).
  const auto swept = run_cli({"sweep", number, "--json", "--set", "cluster.gpu=H200", "--vary", "training.micro_batch_size=1"});
  INFO(swept.describe());
  REQUIRE(swept.exit_code == 0);
  std::vector<double> prices;
  std::function<void(const json&)> find = [&](const json& j) {
    if (j.is_object()) {
      for (const auto& [key, value] : j.items()) {
        if (key == "price_per_gpu_hour_usd" && value.is_number()) prices.push_back(value.get<double>());
        find(value);
      }
    } else if (j.is_array()) {
      for (const auto& value : j) find(value);
    }
  };
  find(json::parse(swept.out));
  REQUIRE_FALSE(prices.empty());
  for (const double p : prices) CHECK(p == h200);
}
