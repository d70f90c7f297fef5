// Host-issued MoE expert kernels (models/compute/compute_model.hpp, "Host-issued kernels") and
// training.cuda_graph_impl, which removes them under one graph for the whole iteration: worked by hand on
// one GPU, where the step is the compute stream's kernels end to end.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/compute/compute_model.hpp"
#include "sim/report/report.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"
#include "sim/step/step_units.hpp"

using namespace cs::sim;
using nlohmann::json;

namespace {

// One H100, a 2-layer MoE of 16 small experts (top-2), one micro-batch of 2048 tokens: each expert sees
// 2048 x 2 / 16 = 256 tokens, its kernels a few microseconds -- shorter than the host's 60 us an issue.
json base(const char* graphs) {
  json doc = {{"name", "host-issued experts"},
              {"cluster", {{"gpu", "H100-SXM"}, {"nodes", 1}, {"gpus_per_node", 1}, {"intra_node", "nvswitch"}}},
              {"model", {{"num_layers", 2}, {"hidden_size", 1024}, {"num_attention_heads", 8}, {"ffn_hidden_size", 4096},
                         {"vocab_size", 32000}, {"activation", "swiglu"}, {"num_moe_experts", 16}, {"moe_router_topk", 2},
                         {"moe_ffn_hidden_size", 512}}},
              {"training", {{"seq_length", 2048}, {"global_batch_size", 1}, {"micro_batch_size", 1}, {"precision", "bf16"},
                            {"recompute_granularity", "none"}}},
              {"simulation", {{"network", "analytical"}}}};
  if (graphs != nullptr) doc["training"]["cuda_graph_impl"] = graphs;
  return doc;
}

}  // namespace

TEST_CASE("host-issued experts: each forward expert kernel takes max(GPU time, 60 us), the rest unchanged", "[sim]") {
  const SimulationResult eager = simulate(parse_scenario(base(nullptr), "eager.json"));
  const SimulationResult graphed = simulate(parse_scenario(base("full_iteration"), "graphed.json"));
  const auto& ge = eager.plan.graph;
  const auto& gg = graphed.plan.graph;
  const auto ke = ge.stream_tasks(0, StreamKind::compute), kg = gg.stream_tasks(0, StreamKind::compute);
  REQUIRE(ke.size() == kg.size());
  // Kernel by kernel: the same kernels in the same order; a forward expert kernel (16 experts, one task of
  // repeat 16) takes 16 x max(g, h) eagerly and 16 g under the graph, every other kernel the same time.
  const double h = cs::models::kDefaultExpertHostIssueUs * 1e-6;
  Time added = 0;
  int expert_kernels = 0;
  for (std::size_t i = 0; i < ke.size(); ++i) {
    const auto& a = ge.tasks()[ke[i]];
    const auto& b = gg.tasks()[kg[i]];
    const std::string name = ge.name(a.name);
    REQUIRE(name == gg.name(b.name));
    const bool fwd_expert = name.find(".experts") != std::string::npos && name.find("_bwd") == std::string::npos &&
                            name.find("grad") == std::string::npos;
    if (fwd_expert) {
      ++expert_kernels;
      const double g = to_seconds(b.duration) / 16.0;
      CHECK(g < h);  // every expert kernel here is issue-bound
      CHECK(to_seconds(a.duration) == Approx(16.0 * std::max(g, h)).epsilon(1e-6));
    } else {
      CHECK(a.duration == b.duration);
    }
    added += a.duration - b.duration;
  }
  CHECK(expert_kernels == 2 * 3);  // fc1, activation, fc2 in each of the two layers
  // One GPU, no communication: the step grows by exactly the kernels' added time.
  CHECK(from_seconds(eager.report.step_time_s) - from_seconds(graphed.report.step_time_s) == added);
}

TEST_CASE("cuda_graph_impl: none is the default, per-layer graphs keep the experts host-issued, the layout shows it", "[sim]") {
  const Report absent = simulate(parse_scenario(base(nullptr), "a.json")).report;
  const Report none = simulate(parse_scenario(base("none"), "b.json")).report;
  const Report te = simulate(parse_scenario(base("transformer_engine"), "c.json")).report;
  const Report full = simulate(parse_scenario(base("full_iteration"), "d.json")).report;
  CHECK(to_json(absent).dump() == to_json(none).dump());
  CHECK(to_json(absent)["layout"].count("cuda_graph_impl") == 0);
  CHECK(to_text(absent).find("CUDA graphs") == std::string::npos);
  // transformer_engine graphs cannot hold a dropless MoE layer's experts: the same step.
  CHECK(te.step_time_s == absent.step_time_s);
  CHECK(full.step_time_s < absent.step_time_s);
  CHECK(to_json(full)["layout"]["cuda_graph_impl"] == "full_iteration");
  CHECK(to_text(full).find("recompute none  CUDA graphs full_iteration") != std::string::npos);
}
