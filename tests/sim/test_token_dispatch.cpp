// A per-node token dispatcher's traffic (sim/network/token_dispatch.hpp): the hit probabilities against
// their closed forms, the shares of S it sends, and the all-to-all it prices, analytical and flow.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "sim/network/nccl_model.hpp"
#include "sim/network/token_dispatch.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"
#include "topologies/cluster.hpp"

using cs::sim::dispatch_hit_probability;
using cs::sim::dispatch_shares;
using cs::sim::TokenRouting;
using nlohmann::json;

namespace {

// C(pool - s, k) / C(pool, k) as the product over the k draws: the chance that none of k distinct experts
// drawn from `pool` lands among s given ones.
double miss(int pool, int s, int k) {
  double p = 1;
  for (int i = 0; i < k; ++i) p *= static_cast<double>(pool - s - i) / (pool - i);
  return p;
}

}  // namespace

TEST_CASE("a unit's chance of receiving a token, without and with group-limited routing", "[dispatch]") {
  // Qwen3-30B-A3B: 128 experts, top-8, no group limit. A node of 8 ranks of EP 16 holds 64 experts:
  // P = 1 - C(64, 8) / C(128, 8).
  const TokenRouting qwen{128, 8, 0, 0};
  CHECK(dispatch_hit_probability(qwen, 0, 64) == Approx(1 - miss(128, 64, 8)).epsilon(1e-12));
  CHECK(dispatch_hit_probability(qwen, 64, 128) == Approx(1 - miss(128, 64, 8)).epsilon(1e-12));
  // DeepSeek-V3: 256 experts in 8 groups of 32, a token's 8 from 4 groups. A node of EP 64 over 8 nodes
  // holds one group: selected with probability 4 / 8, then hit unless all 8 draws from the 128 experts of
  // the 4 selected groups miss its 32.
  const TokenRouting ds{256, 8, 8, 4};
  CHECK(dispatch_hit_probability(ds, 32, 64) == Approx(0.5 * (1 - miss(128, 32, 8))).epsilon(1e-12));
  // One rank of that EP 64 (4 experts, inside one group): 4 / 8 x (1 - C(124, 8) / C(128, 8)).
  CHECK(dispatch_hit_probability(ds, 4, 8) == Approx(0.5 * (1 - miss(128, 4, 8))).epsilon(1e-12));
  // A node of EP 32 over 4 nodes holds 64 experts, two groups: j of its 2 groups selected with the
  // hypergeometric C(2, j) C(6, 4 - j) / C(8, 4): j = 1 40 / 70, j = 2 15 / 70.
  const double two = 40.0 / 70 * (1 - miss(128, 32, 8)) + 15.0 / 70 * (1 - miss(128, 64, 8));
  CHECK(dispatch_hit_probability(ds, 64, 128) == Approx(two).epsilon(1e-12));
  // A unit straddling two groups unevenly (experts 24..40: 8 in group 0, 8 in group 1): the same sum over
  // which of its groups are selected, j = 1 (either one, 2 x C(6, 3) / 70 each way half) and j = 2.
  const double straddle = 20.0 / 70 * (1 - miss(128, 8, 8)) * 2 + 15.0 / 70 * (1 - miss(128, 16, 8));
  CHECK(dispatch_hit_probability(ds, 24, 40) == Approx(straddle).epsilon(1e-12));
}

TEST_CASE("one-expert units receive k copies in all: the expected distinct experts of a token", "[dispatch]") {
  // Property: summed over every single expert, P(expert picked) is the expected number of distinct experts
  // a token picks, which is k exactly, whatever the group limit.
  for (const TokenRouting r : {TokenRouting{64, 6, 0, 0}, TokenRouting{256, 8, 8, 4}, TokenRouting{128, 8, 16, 3},
                               TokenRouting{32, 2, 4, 1}, TokenRouting{160, 6, 8, 3}}) {
    double sum = 0;
    for (int e = 0; e < r.experts(); ++e) sum += dispatch_hit_probability(r, e, e + 1);
    CHECK(sum == Approx(r.topk()).epsilon(1e-9));
    // And the whole range is always hit.
    CHECK(dispatch_hit_probability(r, 0, r.experts()) == Approx(1.0).epsilon(1e-12));
  }
}

TEST_CASE("the shares of S a per-node dispatch sends over the network and over NVLink", "[dispatch]") {
  // EP 16 over 2 nodes of 8, Qwen3-30B routing: per token, the other node receives it with
  // P_node = 1 - C(64, 8) / C(128, 8) (~0.996), one h-byte copy instead of the alltoall dispatcher's 4
  // (8 x 8 / 16 copies go to the other node's ranks); of S = T k h that is P_node (N - 1) / N / k, summed over
  // the N = 2 nodes. Over NVLink: each of the 16 ranks receives it with P_rank = 1 - C(120, 8) / C(128, 8)
  // and is not its node's entry GPU 7 times in 8.
  const TokenRouting qwen{128, 8, 0, 0};
  const auto d = dispatch_shares(qwen, 16, 2, 8);
  const double p_node = 1 - miss(128, 64, 8), p_rank = 1 - miss(128, 8, 8);
  CHECK(d.network == Approx(2 * p_node * 0.5 / 8).epsilon(1e-12));
  CHECK(d.scaleup == Approx(16 * p_rank * 7.0 / 8 / 8).epsilon(1e-12));
  // Against the pairwise exchange of every copy: 8 / 16 of S to the other node.
  CHECK(d.network < 0.5 / 3.5);
  // One node (an HGX box, or one NVL72 domain): nothing on the network.
  CHECK(dispatch_shares(qwen, 8, 1, 8).network == 0);
}

TEST_CASE("a dispatch all-to-all is priced at its shares, the slower fabric deciding", "[dispatch]") {
  cs::sim::GroupGeometry g;
  g.ranks = 16, g.nodes = 2, g.per_node = 8, g.multi_node = true;
  g.scaleup_Bps = 360e9, g.scaleup_line_Bps = 450e9, g.network_Bps = 48e9;
  const TokenRouting qwen{128, 8, 0, 0};
  const cs::sim::GroupGeometry routed = cs::sim::with_dispatch(g, cs::sim::CollectiveKind::all_to_all, qwen);
  const auto d = dispatch_shares(qwen, 16, 2, 8);
  REQUIRE(routed.dispatch.network == d.network);
  // Not an all-to-all, or no routing: the geometry is unchanged.
  CHECK(cs::sim::with_dispatch(g, cs::sim::CollectiveKind::all_gather, qwen) == g);
  CHECK(cs::sim::with_dispatch(g, cs::sim::CollectiveKind::all_to_all, TokenRouting{}) == g);
  const double S = 64.0 * (1 << 20);
  bool ok = false, ok_plain = false;
  using cs::sim::NcclAlgorithm, cs::sim::NcclProtocol;
  const auto a = cs::sim::estimate(cs::sim::CollectiveKind::all_to_all, S, routed, NcclAlgorithm::pairwise, NcclProtocol::simple, &ok);
  const auto plain = cs::sim::estimate(cs::sim::CollectiveKind::all_to_all, S, g, NcclAlgorithm::pairwise, NcclProtocol::simple, &ok_plain);
  REQUIRE(ok);
  REQUIRE(ok_plain);
  const double eff = cs::sim::protocol_spec(NcclProtocol::simple).bandwidth_efficiency;
  const double expect = std::max(d.scaleup * S / 360e9, d.network * S / 48e9) / eff;
  CHECK(cs::sim::to_seconds(a.duration - a.latency) == Approx(expect).epsilon(1e-6));
  const double expect_plain = std::max(7.0 / 16 * S / 360e9, 8.0 / 16 * S / 48e9) / eff;
  CHECK(cs::sim::to_seconds(plain.duration - plain.latency) == Approx(expect_plain).epsilon(1e-6));
  CHECK(a.duration < plain.duration);
}

namespace {

// Qwen3-30B-A3B-like MoE (128 experts, top-8) with EP 16 over two 8-GPU H100 nodes, one NDR400 NIC a GPU.
json moe_ep16(const char* dispatcher, const char* network) {
  return json{{"name", "moe"},
              {"cluster", {{"gpu", "H100-SXM"}, {"nodes", 2}, {"gpus_per_node", 8}, {"intra_node", "nvswitch"},
                           {"inter_node", {{"fabric", "fat-tree"}, {"link", "ib-ndr400"}, {"nics_per_node", 8}}}}},
              {"model", {{"num_layers", 4}, {"hidden_size", 2048}, {"num_attention_heads", 32}, {"num_query_groups", 4},
                         {"ffn_hidden_size", 6144}, {"vocab_size", 151936}, {"activation", "swiglu"}, {"num_moe_experts", 128},
                         {"moe_router_topk", 8}, {"moe_ffn_hidden_size", 768}}},
              {"training", {{"seq_length", 4096}, {"global_batch_size", 64}, {"micro_batch_size", 2}, {"precision", "bf16"},
                            {"tensor_model_parallel_size", 1}, {"expert_model_parallel_size", 16},
                            {"moe_token_dispatcher", dispatcher}}},
              {"simulation", {{"network", network}}}};
}

double ep_busy(const json& scenario) {
  const auto s = cs::sim::parse_scenario(scenario, "moe.json");
  const auto r = cs::sim::simulate(s);
  return r.report.busy_s[static_cast<std::size_t>(cs::sim::Category::ep_comm)];
}

}  // namespace

TEST_CASE("deepep and hybridep move less of an EP-16 all-to-all over InfiniBand, in both networks", "[dispatch]") {
  for (const char* network : {"analytical", "flow"}) {
    INFO(network);
    const double plain = ep_busy(moe_ep16("alltoall", network));
    const double deepep = ep_busy(moe_ep16("deepep", network));
    const double hybridep = ep_busy(moe_ep16("hybridep", network));
    // The network share falls from 1/2 of S to ~1/8 (above); NVLink's rises from 7/16 to ~0.72 of S,
    // which at 7.5x InfiniBand's per-GPU bandwidth is still the faster side.
    CHECK(deepep < 0.5 * plain);
    CHECK(hybridep == deepep);
    // Every rank simulated (the per-stage template carries the routing of its collectives) gives the
    // mirrored run's step: the 16 ranks are identical.
    json every = moe_ep16("deepep", network);
    every["simulation"]["symmetry"] = false;
    const auto mirrored = cs::sim::simulate(cs::sim::parse_scenario(moe_ep16("deepep", network), "moe.json"));
    const auto all = cs::sim::simulate(cs::sim::parse_scenario(every, "moe.json"));
    CHECK(all.report.step_time_s == mirrored.report.step_time_s);
  }
}
