// A custom inter-node link's latency_us feeds the NCCL model's per-hop network latency (nccl_model.hpp,
// "A custom inter-node link"): each network hop costs h_p + (latency_us - 1 us), 1 us being the catalog
// InfiniBand's hop that the tuning table's network row stands for. Catalog links keep the table.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "sim/network/nccl_model.hpp"
#include "sim/scenario/scenario.hpp"
#include "topologies/cluster.hpp"

using namespace cs::sim;
using cs::models::CollectiveKind;
using nlohmann::json;

namespace {

// Two H100 nodes of 8 GPUs; `link` is a catalog name or a custom link object.
Scenario two_nodes(const json& link) {
  json doc = {{"name", "t"},
              {"cluster", {{"gpu", "H100-SXM"}, {"nodes", 2}, {"gpus_per_node", 8}, {"intra_node", "nvswitch"},
                           {"inter_node", {{"fabric", "fat-tree"}, {"link", link}, {"nics_per_node", 8}}}}},
              {"model", {{"preset", "llama3-8b"}}},
              {"training", {{"seq_length", 4096}, {"global_batch_size", 16}, {"micro_batch_size", 1},
                            {"tensor_model_parallel_size", 8}, {"sequence_parallel", true}}}};
  return parse_scenario(doc, "t.json");
}

json custom(double latency_us) {
  json l = {{"name", "my-link"}, {"line_rate_gbps", 400}, {"efficiency", 0.9}};
  if (latency_us >= 0) l["latency_us"] = latency_us;
  return l;
}

// The LL double-binary-tree all-reduce over all 16 GPUs: its launch and hop latency.
double tree_ll_latency_s(const Scenario& s) {
  const cs::topo::Cluster cluster(s.cluster);
  std::vector<int> gpus(16);
  for (int i = 0; i < 16; ++i) gpus[static_cast<std::size_t>(i)] = i;
  const GroupGeometry g = group_geometry(cluster, gpus);
  bool ok = false;
  const AlgorithmChoice c = estimate(CollectiveKind::all_reduce, 8, g, NcclAlgorithm::tree, NcclProtocol::ll, &ok);
  REQUIRE(ok);
  return to_seconds(c.latency);
}

}  // namespace

TEST_CASE("custom link: latency_us sets the NCCL per-hop network latency, by the closed form", "[sim]") {
  // Tree over N = 2 nodes of k = 8 GPUs, LL (launch 7 us, NVLink hop 1.4 us, network hop 2.7 us at the
  // reference 1 us link): t = 7 + 2 (D h_net + (k - 1) 1.4) us with D = ceil(log2 2) + 1 = 2.
  //   catalog ib-ndr400 (the table):        7 + 2 (2 x 2.7 + 9.8)               = 37.4 us
  //   custom, latency_us 2 (1 us more):     7 + 2 (2 x 3.7 + 9.8)               = 41.4 us
  //   custom, latency_us 1e6 (1 s a hop):   7 + 2 (2 x (2.7 + 999999) + 9.8)    = 4,000,033.4 us
  CHECK(tree_ll_latency_s(two_nodes("ib-ndr400")) == Approx(37.4e-6));
  CHECK(tree_ll_latency_s(two_nodes(custom(2))) == Approx(41.4e-6));
  CHECK(tree_ll_latency_s(two_nodes(custom(1e6))) == Approx(4000033.4e-6));
  // latency_us 1 is the reference link: the table as it is. Absent: as before, the table.
  CHECK(tree_ll_latency_s(two_nodes(custom(1))) == Approx(37.4e-6));
  CHECK(tree_ll_latency_s(two_nodes(custom(-1))) == Approx(37.4e-6));
  // The chooser sees it: at 1 s a hop, with NVLS off, the 8-byte all-reduce is the LL ring, 30 steps of
  // which 2/16 cross the network: 7 + 30 (2/16 (2.7 + 999999) + 14/16 1.4) us = 3,750,050.0 us (nccl-tests'
  // time column).
  const Scenario slow = two_nodes(custom(1e6));
  cs::topo::ClusterSpec no_nvls = slow.cluster;
  no_nvls.intra.nvls = false;
  const cs::topo::Cluster cluster(no_nvls);
  std::vector<int> gpus(16);
  for (int i = 0; i < 16; ++i) gpus[static_cast<std::size_t>(i)] = i;
  const AlgorithmChoice c = choose_algorithm(CollectiveKind::all_reduce, 8, group_geometry(cluster, gpus));
  CHECK(c.algorithm == NcclAlgorithm::ring);
  CHECK(to_seconds(c.latency) == Approx(3750050.0e-6));
  // With NVLS on (H100), the NVLS Tree crosses the network only twice (up and down its one level):
  // 9 + 22 + 2 (3.5 + (6 + 999999)) us = 2,000,048 us, fewer hops than the ring's 3.75.
  const cs::topo::Cluster nvls_nodes(slow.cluster);
  const AlgorithmChoice t = choose_algorithm(CollectiveKind::all_reduce, 8, group_geometry(nvls_nodes, gpus));
  CHECK(t.algorithm == NcclAlgorithm::nvls_tree);
  CHECK(to_seconds(t.latency) == Approx(2000048.0e-6));
}
