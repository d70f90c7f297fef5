// One price basis per GPU type (sim/scenario/scenario.hpp, "Price basis"): cluster.price_per_gpu_hour as
// a number or a table by GPU type, read by the loader, by --set cluster.gpu and by capacity planning.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "models/hardware/gpu_catalog.hpp"
#include "sim/base/input_error.hpp"
#include "sim/explore/sweep.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"

using namespace cs::sim;
using nlohmann::json;

namespace {

// 2 nodes of 4 GPUs and a small GPT, as in test_sweep.cpp.
json small_doc(const json& price) {
  json doc = json::parse(R"({
    "name": "small",
    "cluster": {"gpu": "H100-SXM", "nodes": 2, "gpus_per_node": 4, "intra_node": "nvswitch",
                "inter_node": {"fabric": "fat-tree", "link": "ib-ndr400", "nics_per_node": 4}},
    "model": {"num_layers": 16, "hidden_size": 2048, "num_attention_heads": 16, "vocab_size": 32000,
              "ffn_hidden_size": 8192, "activation": "gelu"},
    "training": {"seq_length": 2048, "global_batch_size": 16, "micro_batch_size": 1, "tokens_to_train": 1e9}
  })");
  if (!price.is_null()) doc["cluster"]["price_per_gpu_hour"] = price;
  return doc;
}

double catalog_price(const char* gpu) { return cs::models::find_gpu(gpu)->price_per_gpu_hour_usd; }

std::string only_message(const json& doc) {
  try {
    parse_scenario(doc, "t.json");
  } catch (const cs::InputError& e) {
    REQUIRE(e.messages().size() == 1);
    return e.messages().front();
  }
  FAIL("loaded");
  return "";
}

}  // namespace

TEST_CASE("price basis: a number is the scenario GPU's price, a table prices each type", "[sim][price]") {
  CHECK(parse_scenario(small_doc(2.5), "t.json").price_per_gpu_hour_usd == 2.5);
  CHECK(parse_scenario(small_doc(nullptr), "t.json").price_per_gpu_hour_usd == catalog_price("H100-SXM"));
  const json table = {{"H100-SXM", 2.5}, {"A100-80GB", 1.6}};
  CHECK(parse_scenario(small_doc(table), "t.json").price_per_gpu_hour_usd == 2.5);
  json a100 = small_doc(table);
  a100["cluster"]["gpu"] = "A100-80GB";
  a100["cluster"].erase("intra_node");
  CHECK(parse_scenario(a100, "t.json").price_per_gpu_hour_usd == 1.6);
  // A type the table does not price takes its catalog price.
  json h200 = small_doc(table);
  h200["cluster"]["gpu"] = "H200";
  CHECK(parse_scenario(h200, "t.json").price_per_gpu_hour_usd == catalog_price("H200"));
}

TEST_CASE("price basis: pin_price_to_gpu keeps a number with the GPU it was written for", "[sim][price]") {
  json doc = small_doc(2.5);
  pin_price_to_gpu(doc);
  CHECK(doc["cluster"]["price_per_gpu_hour"] == json({{"H100-SXM", 2.5}}));
  json table = small_doc(json{{"H200", 4.0}});
  pin_price_to_gpu(table);
  CHECK(table["cluster"]["price_per_gpu_hour"] == json({{"H200", 4.0}}));  // a table stays as it is
  json none = small_doc(nullptr);
  pin_price_to_gpu(none);
  CHECK_FALSE(none["cluster"].contains("price_per_gpu_hour"));
}

TEST_CASE("price basis: capacity planning uses the per-type table, or says which types take list prices", "[sim][price]") {
  CapacityOptions opts;
  opts.gpu_counts = {8};
  opts.gpu_types = {"H100-SXM", "A100-80GB"};
  opts.search.run.threads = 2;
  const CapacityResult r = plan_capacity(small_doc(json{{"H100-SXM", 2.5}, {"A100-80GB", 1.6}}), "small.json", opts);
  CHECK(r.price_note.empty());
  bool a100 = false, h100 = false;
  for (std::size_t i : r.ranked) {
    const Report& p = r.points[i].report;
    if (p.gpu == "H100-SXM") {
      h100 = true;
      CHECK(p.price_per_gpu_hour_usd == 2.5);
    }
    if (p.gpu == "A100-80GB") {
      a100 = true;
      CHECK(p.price_per_gpu_hour_usd == 1.6);
    }
    // usd_per_step = step time x GPUs x the type's price.
    CHECK(p.cost.usd_per_step == Approx(p.step_time_s / 3600 * p.num_gpus * p.price_per_gpu_hour_usd).epsilon(1e-12));
  }
  CHECK((a100 && h100));

  // A number prices the scenario's GPU only: the A100s take the catalog price, and the plan says so.
  const CapacityResult n = plan_capacity(small_doc(2.5), "small.json", opts);
  CHECK(n.price_note == "cluster.price_per_gpu_hour has no price for A100-80GB: using the catalog list price per GPU-hour ($" +
                            [] { std::ostringstream o; o << catalog_price("A100-80GB"); return o.str(); }() + ")");
  for (std::size_t i : n.ranked) {
    const Report& p = n.points[i].report;
    CHECK(p.price_per_gpu_hour_usd == (p.gpu == "H100-SXM" ? 2.5 : catalog_price("A100-80GB")));
  }
}

TEST_CASE("price basis: a table key that is no GPU type is refused with the near name", "[sim][price]") {
  std::string known;
  for (const auto& n : cs::models::gpu_names()) known += (known.empty() ? "" : ", ") + n;
  CHECK(only_message(small_doc(json{{"H100", 2.5}})) ==
        "t.json: cluster.price_per_gpu_hour.H100: unknown GPU type \"H100\" (did you mean \"H100-SXM\"?) (a price table's keys are "
        "GPU types: " + known + ")");
}

TEST_CASE("price basis: a table value that is not a number is refused", "[sim][price]") {
  CHECK(only_message(small_doc(json{{"H100-SXM", "cheap"}})) ==
        "t.json: cluster.price_per_gpu_hour.H100-SXM: expected a number (USD per GPU-hour), got a string \"cheap\"");
}

TEST_CASE("price basis: a table value out of range is refused with the range", "[sim][price]") {
  CHECK(only_message(small_doc(json{{"H100-SXM", -1}})) ==
        "t.json: cluster.price_per_gpu_hour.H100-SXM: -1 is out of range (expected a number in [0, 10000]: $1e4 an hour: 1000x any "
        "rental price)");
}

TEST_CASE("energy: cluster.node_idle_power_fraction reaches the cost model", "[sim][price]") {
  // The same step with the host's idle share 0 and 1: with f = 1 the host draws node_overhead_w whatever
  // the load, with f = 0 only u x node_overhead_w, so the difference is (1 - u) x nodes x node_overhead_w
  // x step x PUE / 3.6e6 kWh, u the GPUs' busy fraction.
  json doc = small_doc(nullptr);
  doc["simulation"] = {{"network", "analytical"}};
  doc["cluster"]["node_overhead_w"] = 4000;
  doc["cluster"]["node_idle_power_fraction"] = 0.0;
  const auto low = cs::sim::simulate(parse_scenario(doc, "t.json")).report;
  doc["cluster"]["node_idle_power_fraction"] = 1.0;
  const auto high = cs::sim::simulate(parse_scenario(doc, "t.json")).report;
  REQUIRE(low.step_time_s == high.step_time_s);
  const double u = low.gpu_busy;
  REQUIRE(u < 1);
  CHECK(high.cost.energy_kwh_per_step - low.cost.energy_kwh_per_step ==
        Approx((1 - u) * 2 * 4000 * low.step_time_s * 1.2 / 3.6e6).epsilon(1e-9));
}
