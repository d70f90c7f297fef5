// The analytical network's tier crossing (sim/network/analytical_network.hpp): the traffic that really
// leaves a leaf, counted under the group's placement, against hand arithmetic and against the flow
// back-end on an oversubscription sweep.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/network/collective_run.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"
#include "topologies/cluster.hpp"
#include "topologies/link_catalog.hpp"

using namespace cs::sim;
using cs::models::CollectiveKind;
using nlohmann::json;

namespace {

constexpr double kGiB = 1073741824.0;

// 32 nodes of 8 H100 (NVSwitch), 8 NDR400 NICs each, fat-tree of 32-port leaves: 4 nodes per leaf,
// 8 leaves; a leaf has ceil(32 / o) up-links of one NIC's bandwidth each.
cs::topo::ClusterSpec fabric(double oversubscription) {
  cs::topo::ClusterSpec s;
  s.nodes = 32;
  s.gpus_per_node = 8;
  s.intra = *cs::topo::find_intra_node("nvswitch");
  s.intra.gpu_bandwidth_GBps = 450;
  s.intra.nvls = true;
  s.nic = *cs::topo::find_net_link("ib-ndr400");
  s.nics_per_node = 8;
  s.oversubscription = oversubscription;
  return s;
}

// Llama-2 13B, pure data parallelism over the same 32 nodes (ZeRO-1, full recompute so that it fits).
json dp13b(double oversubscription) {
  return {{"name", "13B DP on 32 nodes"},
          {"cluster", {{"gpu", "H100-SXM"}, {"nodes", 32}, {"gpus_per_node", 8}, {"intra_node", "nvswitch"},
                       {"inter_node", {{"fabric", "fat-tree"}, {"link", "ib-ndr400"}, {"nics_per_node", 8},
                                       {"oversubscription", oversubscription}}}}},
          {"model", {{"preset", "llama2-13b"}}},
          {"training", {{"seq_length", 4096}, {"global_batch_size", 512}, {"micro_batch_size", 1}, {"precision", "bf16"},
                        {"zero_stage", 1}, {"recompute_granularity", "full"}}}};
}

}  // namespace

TEST_CASE("analytical network: a node-major ring pays a leaf's oversubscription only beyond its nodes per leaf",
          "[sim][analytical]") {
  // Ring all-reduce of S = 1 GiB over all 256 GPUs in node order, forced to the ring. Across nodes the
  // ring runs k = 8 channels, each entering and leaving every node once; in node order the only hops that
  // change leaf are node 4j+3 -> 4j+4 (and 31 -> 0), one per leaf and direction per channel: 8 flows
  // climb out of each leaf (and 8 come down into it). Per flow the closed form allows one NIC's payload
  // B = 48 GB/s (B_share = B_nic x 8 NICs / 8 GPUs). A leaf's up-links: ceil(32 / o) x B, shared by its
  // 8 flows: (32 / o) / 8 x B = 4 B / o per flow, so
  //   o = 1: 4 B, o = 2: 2 B, o = 4: B   -> the NIC stays the bottleneck, tau = 1: no slowdown;
  //   o = 8: B / 2                        -> tau = 2: the network term of the ring doubles.
  // The ring's network term max(X (k-1)/k / B_up, X / k / B_net) is the B_net one here (B_up = 450 x
  // 0.8 = 360 GB/s: X 7/8 / 360 < X / 8 / 48), so time(o) - latency = tau x (time(1) - latency).
  std::vector<double> analytical, flow;
  Time latency = 0;
  for (double o : {1.0, 2.0, 4.0, 8.0}) {
    const cs::topo::Cluster cluster(fabric(o));
    const auto a = run_collective(cluster, CollectiveKind::all_reduce, kGiB, first_gpus(256), {NetworkBackend::analytical, "ring"});
    const auto f = run_collective(cluster, CollectiveKind::all_reduce, kGiB, first_gpus(256), {NetworkBackend::flow, "ring"});
    REQUIRE(a.choice.algorithm == NcclAlgorithm::ring);
    latency = a.choice.latency;
    analytical.push_back(to_seconds(a.time));
    flow.push_back(to_seconds(f.time));
    INFO("o = " << o << ": analytical " << to_seconds(a.time) << " s, flow " << to_seconds(f.time) << " s");
    CHECK(std::abs(to_seconds(a.time) / to_seconds(f.time) - 1) < 0.05);
  }
  const double lat = to_seconds(latency);
  CHECK(analytical[1] == Approx(analytical[0]).epsilon(1e-9));
  CHECK(analytical[2] == Approx(analytical[0]).epsilon(1e-9));
  CHECK(analytical[3] - lat == Approx(2.0 * (analytical[0] - lat)).epsilon(1e-6));
}

TEST_CASE("analytical network: a leaf-strided ring pays the oversubscription from 2:1 on", "[sim][analytical]") {
  // Node order 0, 4, 8, ..., 28, 1, 5, ...: every hop of the ring changes leaf, so each of a leaf's 4
  // nodes sends 8 channels up: 32 flows over ceil(32 / o) up-links of B: (32 / o) / 32 B = B / o per
  // flow. tau = o: the ring's network term is o times the non-blocking one (1:1: 32 flows on 32
  // up-links, tau = 1 - a perfect spread; the flow back-end's greedy path choice can do worse, see
  // test_flow_network.cpp).
  std::vector<int> strided;
  for (int i = 0; i < 32; ++i) {
    const int node = (i % 8) * 4 + i / 8;
    for (int g = 0; g < 8; ++g) strided.push_back(node * 8 + g);
  }
  std::vector<double> t;
  double lat = 0;
  for (double o : {1.0, 2.0, 4.0}) {
    const cs::topo::Cluster cluster(fabric(o));
    const auto a = run_collective(cluster, CollectiveKind::all_reduce, kGiB, strided, {NetworkBackend::analytical, "ring"});
    lat = to_seconds(a.choice.latency);
    t.push_back(to_seconds(a.time));
  }
  CHECK(t[1] - lat == Approx(2.0 * (t[0] - lat)).epsilon(1e-6));
  CHECK(t[2] - lat == Approx(4.0 * (t[0] - lat)).epsilon(1e-6));
}

TEST_CASE("analytical and flow networks agree within 5% on an oversubscription sweep of one 13B DP job",
          "[sim][analytical]") {
  // The whole step of Llama-2 13B on 256 H100 (DP 256, node-major), o = 1, 2, 4, 8. The gradients'
  // reduce-scatter and the parameters' all-gather are rings over all 256 GPUs; as worked out above, a
  // ring in node order sends 8 flows out of each leaf per direction against 32 / o up-links: the
  // oversubscription costs nothing up to 4:1 and halves the network share at 8:1, in both back-ends.
  for (double o : {1.0, 2.0, 4.0, 8.0}) {
    std::vector<double> step;
    for (const char* network : {"analytical", "flow"}) {
      json doc = dp13b(o);
      doc["simulation"] = {{"network", network}};
      const auto result = simulate(parse_scenario(doc, "dp13b.json"));
      REQUIRE(result.report.fits_in_memory);
      step.push_back(result.report.step_time_s);
    }
    INFO("o = " << o << ": analytical " << step[0] << " s, flow " << step[1] << " s");
    CHECK(std::abs(step[0] / step[1] - 1) < 0.05);
  }
}
