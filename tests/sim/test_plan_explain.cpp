// Capacity planning explains every (GPU type, GPU count) that has no row (issue 34, done-when 2): the rules
// that removed its layouts, with their counts, and the nearest global batch sizes that give a layout.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "sim/explore/sweep.hpp"

using nlohmann::json;
using namespace cs::sim;

namespace {
json doc_of(int hidden) {
  json d = json::parse(R"({
    "name": "small",
    "cluster": {"gpu": "H100-SXM", "nodes": 2, "gpus_per_node": 4, "intra_node": "nvswitch",
                "inter_node": {"fabric": "fat-tree", "link": "ib-ndr400", "nics_per_node": 4}},
    "model": {"num_layers": 16, "hidden_size": 2048, "num_attention_heads": 16, "vocab_size": 32000,
              "ffn_hidden_size": 8192, "activation": "gelu"},
    "training": {"seq_length": 2048, "global_batch_size": 16, "micro_batch_size": 1, "tokens_to_train": 1e9}
  })");
  d["model"]["hidden_size"] = hidden;
  d["model"]["ffn_hidden_size"] = 4 * hidden;
  return d;
}

const std::string* line_for(const CapacityResult& r, const std::string& pair) {
  for (const auto& s : r.skipped)
    if (s.rfind(pair + ":", 0) == 0) return &s;
  return nullptr;
}
}  // namespace

TEST_CASE("capacity plan: a GPU count whose DP cannot divide the global batch is explained with the nearest batch", "[sim][plans]") {
  CapacityOptions opts;
  opts.gpu_counts = {8, 12};
  opts.search.run.threads = 2;
  opts.search.verify = 4;
  const CapacityResult r = plan_capacity(doc_of(2048), "small.json", opts);
  // 12 = 4 x 3 GPUs: 16 heads and 16 layers give TP, PP and CP no factor 3, so every DP has one and 16 is
  // not divisible by it. The splits (TP x PP dividing 12, TP <= 4 GPUs a node, PP dividing 16 layers): TP1 x PP1, 2, 4,
  // TP2 x PP1, 2, TP4 x PP1 with CP 1, and CP 2 (2048 / 2 >= 1024 tokens a rank) where TP x PP x 2 divides 12:
  // TP1 PP1, TP1 PP2, TP2 PP1. 6 + 3 = 9.
  const std::string* line = line_for(r, "H100-SXM x 12");
  REQUIRE(line != nullptr);
  CHECK(*line ==
        "H100-SXM x 12: no layout is valid and fits: global batch 16 not divisible by DP in 9 of 9 TP x PP x CP splits "
        "(DP 3, 6, 12); nearest global batch with a layout that fits: 15 below, 18 above");
  CHECK(line_for(r, "H100-SXM x 8") == nullptr);  // it has rows
  for (std::size_t i : r.ranked) CHECK(r.points[i].report.num_gpus == 8);
}

TEST_CASE("capacity plan: a GPU count where no layout fits in memory says so with the leanest layout's need", "[sim][plans]") {
  CapacityOptions opts;
  opts.gpu_counts = {4};
  opts.gpu_types = {"A100-40GB"};
  opts.search.run.threads = 2;
  // 16 layers of hidden 8192: about 13e9 parameters, 52 GB of weights, gradients and optimizer state per GPU
  // over 4 GPUs at best (16 bytes a parameter, sharded 4 ways) against 40 GiB.
  const CapacityResult r = plan_capacity(doc_of(8192), "small.json", opts);
  CHECK(r.ranked.empty());
  REQUIRE(r.skipped.size() == 1);
  CHECK_THAT(r.skipped[0], Catch::StartsWith("A100-40GB x 4: no layout is valid and fits: "));
  CHECK_THAT(r.skipped[0], Catch::Contains(" do not fit in memory (the leanest needs "));
  CHECK_THAT(r.skipped[0], Catch::Contains(" GiB of 40.0 GiB)"));
  CHECK_THAT(r.skipped[0], !Catch::Contains("nearest global batch"));  // every DP divides 16: the batch is not why
}
