// Full recompute by Megatron-Core's recompute_method (models::RecomputeMethod): what the step re-runs and
// keeps, through the whole simulation.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "sim/report/report.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"

using namespace cs::sim;
using nlohmann::json;

namespace {

// Llama 3 8B on 8 H100, TP 1, PP 1, 32 layers in one chunk, analytical network.
json base(const std::string& recompute, const std::string& method = "", int layers = 0) {
  json doc = {{"name", "partial recompute"},
              {"cluster", {{"gpu", "H100-SXM"}, {"nodes", 1}, {"gpus_per_node", 8}, {"intra_node", "nvswitch"}}},
              {"model", {{"preset", "llama3-8b"}}},
              {"training", {{"seq_length", 4096}, {"global_batch_size", 16}, {"micro_batch_size", 1}, {"precision", "bf16"},
                            {"recompute_granularity", recompute}}},
              {"simulation", {{"network", "analytical"}}}};
  if (!method.empty()) doc["training"]["recompute_method"] = method;
  if (layers > 0) doc["training"]["recompute_num_layers"] = layers;
  return doc;
}

Report run(const json& doc) { return simulate(parse_scenario(doc, "partial.json")).report; }

}  // namespace

TEST_CASE("recompute_method block: each checkpointed layer adds one layer's forward, block 32 is full recompute", "[sim]") {
  const Report none = run(base("none"));
  const Report full = run(base("full"));
  const Report b1 = run(base("full", "block", 1)), b8 = run(base("full", "block", 8)), b16 = run(base("full", "block", 16));
  const Report b32 = run(base("full", "block", 32));
  // Every layer checkpointed one by one is the full recompute Megatron's uniform 1 is.
  CHECK(b32.step_time_s == full.step_time_s);
  CHECK(b32.memory.total_bytes() == full.memory.total_bytes());
  CHECK(b32.hfu == full.hfu);
  // More layers re-run: slower and lighter, step by step.
  CHECK(none.step_time_s < b1.step_time_s);
  CHECK(b1.step_time_s < b8.step_time_s);
  CHECK(b8.step_time_s < b16.step_time_s);
  CHECK(b16.step_time_s < full.step_time_s);
  CHECK(none.memory.activations_bytes > b1.memory.activations_bytes);
  CHECK(b8.memory.activations_bytes > b16.memory.activations_bytes);
  // The re-run forwards are what grows: the layers are alike, so 16 of them add twice what 8 add (the
  // embedding, the head and the optimizer are the same in both).
  CHECK((b16.step_time_s - none.step_time_s) == Approx(2 * (b8.step_time_s - none.step_time_s)).epsilon(0.02));
  // HFU counts the re-run forwards, MFU does not.
  CHECK(b8.mfu < none.mfu);
  CHECK(b8.hfu > b8.mfu);
  // The report says which.
  CHECK(to_text(b8).find("recompute full (block 8)") != std::string::npos);
  CHECK(to_json(b8)["layout"]["recompute_method"] == "block");
  CHECK(to_json(b8)["layout"]["recompute_num_layers"] == 8);
  CHECK_FALSE(to_json(full)["layout"].contains("recompute_method"));
}

TEST_CASE("recompute_method uniform: groups re-run the whole forward as every layer alone does, and keep fewer inputs", "[sim]") {
  const Report full = run(base("full"));
  const Report u4 = run(base("full", "uniform", 4));
  CHECK(u4.step_time_s == Approx(full.step_time_s).epsilon(1e-12));
  CHECK(u4.hfu == Approx(full.hfu).epsilon(1e-12));
  CHECK(u4.memory.activations_bytes != full.memory.activations_bytes);
  // Under "none" and "selective" the method and the count change nothing, as Megatron reads them only for full.
  CHECK(run(base("selective", "block", 4)).step_time_s == run(base("selective")).step_time_s);
  CHECK(run(base("none", "uniform", 3)).memory.total_bytes() == run(base("none")).memory.total_bytes());
}
