// The FSDP units and data-parallel sharding the step builder and the screening tier share
// (sim/step/step_units.hpp).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "models/memory/memory_model.hpp"
#include "models/parallelism/layout.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/step/step_units.hpp"

using namespace cs::sim;
using nlohmann::json;

namespace {

// 4 nodes of 8 H100, a 24-layer GPT with untied embeddings.
Scenario scenario(int tp, int pp, int vp, int zero, const json& extra = json::object()) {
  json doc = json::parse(R"({
    "name": "units",
    "cluster": {"gpu": "H100-SXM", "nodes": 4, "gpus_per_node": 8, "intra_node": "nvswitch",
                "inter_node": {"fabric": "fat-tree", "link": "ib-ndr400", "nics_per_node": 8}},
    "model": {"num_layers": 24, "hidden_size": 2048, "num_attention_heads": 16, "vocab_size": 32000,
              "ffn_hidden_size": 8192, "activation": "gelu", "untie_embeddings_and_output_weights": true},
    "training": {"seq_length": 2048, "global_batch_size": 64, "micro_batch_size": 1, "tokens_to_train": 1e9}
  })");
  auto& t = doc["training"];
  t["tensor_model_parallel_size"] = tp;
  t["pipeline_model_parallel_size"] = pp;
  t["virtual_pipeline_model_parallel_size"] = vp;
  if (vp > 1) t["pipeline_schedule"] = "interleaved";
  if (!extra.contains("fsdp_sharding_strategy")) t["zero_stage"] = zero;
  for (const auto& [k, v] : extra.items()) t[k] = v;
  return parse_scenario(doc, "units.json");
}

}  // namespace

TEST_CASE("step units: a stage's units hold its parameters, the embedding first and the LM head last", "[sim][step]") {
  // parameters_on_rank counts a stage's layers, the embedding on stage 0 and the final norm and LM head
  // on the last: the units are that sum split at FSDP granularity, so they add up to it.
  for (const auto& [tp, pp, vp] : {std::tuple{1, 1, 1}, std::tuple{2, 2, 1}, std::tuple{1, 4, 3}, std::tuple{4, 2, 2}}) {
    const Scenario s = scenario(tp, pp, vp, 1);
    const auto split = pipeline_split(s.model, s.training);
    std::int64_t layers = 0;
    for (std::int64_t n : split) layers += n;
    CHECK(layers == 24);
    for (int stage = 0; stage < pp; ++stage) {
      INFO("TP" << tp << " PP" << pp << " VP" << vp << " stage " << stage);
      const StageUnits u = stage_units(s.model, s.training, stage, split);
      CHECK(u.chunks.size() == static_cast<std::size_t>(vp));
      double sum = 0;
      std::size_t n = 0;
      for (const auto& chunk : u.chunks)
        for (const UnitParams& p : chunk) sum += p.dense + p.expert, ++n;
      CHECK(sum == Approx(cs::models::parameters_on_rank(s.model, s.training, stage).total()).epsilon(1e-12));
      CHECK(n == static_cast<std::size_t>(layers / pp) + (stage == 0) + (stage == pp - 1));
      CHECK((u.chunks.front().front().kind == UnitKind::embedding) == (stage == 0));
      CHECK((u.chunks.back().back().kind == UnitKind::head) == (stage == pp - 1));
      // The one-argument form computes the same split itself.
      CHECK(stage_units(s.model, s.training, stage).chunks.size() == u.chunks.size());
    }
  }
}

TEST_CASE("step units: data-parallel sharding follows ZeRO, HYBRID_SHARD and the gradient dtype", "[sim][step]") {
  // TP 2 PP 2 on 32 GPUs: DP 8. ZeRO-1 shards the optimizer over the 8, a bucket is a reduce-scatter.
  {
    const Scenario s = scenario(2, 2, 1, 1);
    const Layout layout(2, 1, 8, 2, 1);
    const DataParallelSharding d = data_parallel_sharding(s, layout);
    CHECK_FALSE(d.hybrid);
    CHECK(d.dense_group == GroupKind::dp_cp);
    CHECK(d.dense_shards == 8);
    CHECK(d.bucket_kind == cs::models::CollectiveKind::reduce_scatter);
    CHECK(d.grad_bytes == 2);
    CHECK(d.bucket_limit == s.simulation.grad_bucket_params);
    const StageUnits u = stage_units(s.model, s.training, 0);
    CHECK(d.optimizer_shard(u, 1) == Approx(u.rank.total() / 8));
    CHECK(d.optimizer_shard(u, 0) == u.rank.total());
  }
  // DDP: an all-reduce bucket; fp32 gradients on the wire take 4 bytes.
  {
    const Scenario s = scenario(2, 2, 1, 0, {{"grad_reduce_dtype", "fp32"}});
    const DataParallelSharding d = data_parallel_sharding(s, Layout(2, 1, 8, 2, 1));
    CHECK(d.bucket_kind == cs::models::CollectiveKind::all_reduce);
    CHECK(d.grad_bytes == 4);
  }
  // FSDP HYBRID_SHARD (ZeRO-3) with TP 2: a node's 4 DP ranks form a block, the dense group is the block.
  {
    const Scenario s = scenario(2, 2, 1, 3, {{"fsdp_sharding_strategy", "HYBRID_SHARD"}});
    const DataParallelSharding d = data_parallel_sharding(s, Layout(2, 1, 8, 2, 1, 4));
    REQUIRE(s.training.fsdp_shard_size == 4);
    CHECK(d.hybrid);
    CHECK(d.dense_group == GroupKind::shard);
    CHECK(d.dense_shards == 4);
  }
}

TEST_CASE("step units: every layer runs its own variant's op list, and the model's variants are exactly its layers'", "[sim][step]") {
  // Three models whose layers differ: a sliding window on every other layer (gpt-oss: window_attn_skip_freq 2,
  // Megatron's 1-based layer_number, so 0-based layers 1, 3, ... are full), a dense first layer among MoE ones
  // (moe_layer_freq as a list), and none. Each layer's unit carries models::layer_variant of its index, and
  // UnitOps holds one list per distinct variant: 2, 2 and 1.
  const json window = {{"window_size", 128}, {"window_attn_skip_freq", 2}};
  std::vector<int> moe_pattern(24, 1);
  moe_pattern[0] = 0;
  const json moe = {{"num_moe_experts", 8}, {"moe_router_topk", 2}, {"moe_layer_freq", moe_pattern}};
  for (const auto& [extra, variants] : {std::pair{window, 2}, std::pair{moe, 2}, std::pair{json::object(), 1}}) {
    json doc = json::parse(R"({
      "name": "variants",
      "cluster": {"gpu": "H100-SXM", "nodes": 1, "gpus_per_node": 8, "intra_node": "nvswitch"},
      "model": {"num_layers": 24, "hidden_size": 2048, "num_attention_heads": 16, "vocab_size": 32000},
      "training": {"seq_length": 2048, "global_batch_size": 16, "micro_batch_size": 1, "tokens_to_train": 1e9,
                   "tensor_model_parallel_size": 2, "sequence_parallel": true, "pipeline_model_parallel_size": 2}
    })");
    for (const auto& [k, v] : extra.items()) doc["model"][k] = v;
    const Scenario s = parse_scenario(doc, "variants.json");
    INFO(extra.dump());
    const auto all = cs::models::layer_variants(s.model);
    CHECK(all.size() == static_cast<std::size_t>(variants));
    const UnitOps ops(s.model, s.training);
    CHECK(ops.layers.size() == all.size());
    for (int stage = 0; stage < 2; ++stage) {
      const StageUnits su = stage_units(s.model, s.training, stage);
      for (const UnitParams& u : su.chunks.front()) {
        if (u.kind != UnitKind::layer) continue;
        CHECK(u.variant == cs::models::layer_variant(s.model, u.layer));
        CHECK(&ops.of(u) == &ops.layer(u.variant));
      }
    }
    if (extra.contains("window_size")) {
      CHECK(cs::models::layer_variant(s.model, 0).window);
      CHECK_FALSE(cs::models::layer_variant(s.model, 1).window);  // every 2nd layer (1-based) full
    }
    if (extra.contains("num_moe_experts")) {
      CHECK_FALSE(cs::models::layer_variant(s.model, 0).moe);
      CHECK(cs::models::layer_variant(s.model, 1).moe);
    }
  }
}
