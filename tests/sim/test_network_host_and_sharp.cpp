// Two network tiers the NCCL model gained (sim/network/nccl_model.hpp, topologies/cluster.hpp "PCIe nodes"):
// the PCIe node's host side (root complexes and the inter-socket link), and in-network / in-switch
// reduction across nodes (SHARP: CollNet Direct / Chain and NVLS across nodes; NVLS Tree). Each on both
// network back-ends, with the arithmetic written beside the check.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "sim/engine/executor.hpp"
#include "sim/engine/task_graph.hpp"
#include "sim/network/analytical_network.hpp"
#include "sim/network/collective_run.hpp"
#include "sim/network/flow_network.hpp"
#include "topologies/cluster.hpp"
#include "topologies/link_catalog.hpp"

using namespace cs::sim;
using cs::models::CollectiveKind;

namespace {

constexpr double kGiB = 1073741824.0;

cs::topo::ClusterSpec pcie_nodes(int nodes) {
  cs::topo::ClusterSpec s;
  s.nodes = nodes;
  s.gpus_per_node = 8;
  s.intra = *cs::topo::find_intra_node("pcie");  // 2 sockets by default, one switch per socket, 22 GB/s between
  s.nic = *cs::topo::find_net_link("ib-ndr400");
  s.nics_per_node = 8;
  return s;
}

cs::topo::ClusterSpec nvswitch_nodes(int nodes, bool h100, bool sharp, int leaf_radix = 32) {
  cs::topo::ClusterSpec s;
  s.nodes = nodes;
  s.gpus_per_node = 8;
  s.intra = *cs::topo::find_intra_node("nvswitch");
  s.intra.gpu_bandwidth_GBps = h100 ? 450 : 300;
  s.intra.nvls = h100;
  s.nic = *cs::topo::find_net_link(h100 ? "ib-ndr400" : "ib-hdr200");
  s.nics_per_node = 8;
  s.sharp = sharp;
  s.leaf_radix = leaf_radix;
  return s;
}

double ratio(Time a, Time b) { return static_cast<double>(a) / static_cast<double>(b); }

bool eligible(const cs::topo::ClusterSpec& spec, const std::vector<int>& gpus, NcclAlgorithm a,
              CollectiveKind kind = CollectiveKind::all_reduce) {
  const cs::topo::Cluster cluster(spec);
  const GroupGeometry g = group_geometry(cluster, gpus);
  bool ok = false;
  estimate(kind, 64e6, g, a, NcclProtocol::simple, &ok);
  return ok;
}

// One collective alone on the flow network; returns the network and keeps the graph alive with it.
struct FlowRun {
  TaskGraph graph{1};
  std::unique_ptr<FlowNetwork> net;
};

// A task graph of one all-reduce of `bytes` over `gpus` on one rank, standing also for the group `mirror`
// when one is given (symmetry); returns the collective's id.
std::uint32_t one_all_reduce(TaskGraph& graph, double bytes, const std::vector<int>& gpus, const std::vector<int>& mirror = {}) {
  Collective c;
  c.kind = CollectiveKind::all_reduce;
  c.bytes = bytes;
  c.group = graph.add_group(gpus);
  if (!mirror.empty()) graph.set_mirrors(c.group, {c.group, graph.add_group(mirror)});
  const std::uint32_t cid = graph.add_collective(std::move(c));
  Task t;
  t.rank = 0;
  t.stream = StreamKind::comm_tp;
  t.category = Category::tp_comm;
  t.collective = cid;
  t.name = static_cast<std::uint16_t>(graph.intern("all_reduce"));
  graph.add_member(cid, graph.add_task(t));
  graph.freeze();
  return cid;
}

void run_flow(FlowRun& run, const cs::topo::Cluster& cluster, double bytes, const std::vector<int>& gpus,
              const std::string& algo) {
  one_all_reduce(run.graph, bytes, gpus);
  run.net = std::make_unique<FlowNetwork>(run.graph, cluster, FlowNetworkOptions{algo, {}});
  execute(run.graph, *run.net, ExecutorOptions{});
}

// Bytes the flow network put on the edges from vertices of kind `from` to vertices of kind `to`.
double bytes_on(const cs::topo::Cluster& cluster, const FlowNetwork& net, cs::topo::VertexKind from, cs::topo::VertexKind to) {
  double sum = 0;
  const auto& v = cluster.vertices();
  for (std::size_t l = 0; l < cluster.edges().size(); ++l) {
    const auto& e = cluster.edges()[l];
    if (v[static_cast<std::size_t>(e.src)].kind == from && v[static_cast<std::size_t>(e.dst)].kind == to)
      sum += net.solver().link_bytes(static_cast<int>(l));
  }
  return sum;
}

}  // namespace

TEST_CASE("PCIe two-socket node: the ring all-reduce runs at the inter-socket link on both networks", "[sim][pcie]") {
  // 8 GPUs, 2 sockets, a ring 0..7 crosses the 22 GB/s inter-socket link once each way (test_pcie_host.cpp):
  // B_up = 22 GB/s instead of one x16 link's 51.2. Simple at 1 GiB: t = L + lat + X / B_up with
  // X = ring_pipeline_bytes (the fill), so busbw = f S / t ~ 22 x f S / X.
  const cs::topo::Cluster two_socket(pcie_nodes(1));
  const double S = 1 * kGiB;
  const auto gpus = first_gpus(8);
  const auto flow = run_collective(two_socket, CollectiveKind::all_reduce, S, gpus, {NetworkBackend::flow, "ring"});
  const auto analytical = run_collective(two_socket, CollectiveKind::all_reduce, S, gpus, {NetworkBackend::analytical, "ring"});
  CHECK(std::abs(ratio(flow.time, analytical.time) - 1) < 0.01);
  const double f = busbw_factor(CollectiveKind::all_reduce, 8);
  const double expected_busbw = 22.0 * f * S / ring_pipeline_bytes(CollectiveKind::all_reduce, S, 8);
  CHECK(analytical.busbw_GBps == Approx(expected_busbw).epsilon(0.01));
  // Measured on two-socket PCIe servers: 28 GB/s busbw, 8x RTX 5090 on 2x Xeon 8480+ (NVIDIA/nccl#1639);
  // the model's ~21.6 is 23% below. Not fitted: 22 GB/s is NCCL's own Sapphire Rapids figure.
  CHECK(analytical.busbw_GBps > 20.0);
  CHECK(analytical.busbw_GBps < 22.0);
  // One socket (all 8 GPUs under one switch): the x16 link's 51.2 GB/s again.
  cs::topo::ClusterSpec one = pcie_nodes(1);
  one.intra.sockets = 1;
  const auto single = run_collective(cs::topo::Cluster(one), CollectiveKind::all_reduce, S, gpus, {NetworkBackend::analytical, "ring"});
  CHECK(single.busbw_GBps == Approx(51.2 * f * S / ring_pipeline_bytes(CollectiveKind::all_reduce, S, 8)).epsilon(0.01));
  // 4 GPUs of one socket: no crossing, 51.2 GB/s (NCCL#1639 measures 35 on 4 RTX 5090, whose P2P is off).
  const auto socket0 = run_collective(two_socket, CollectiveKind::all_reduce, S, first_gpus(4), {NetworkBackend::analytical, "ring"});
  CHECK(socket0.busbw_GBps > 45.0);
}

TEST_CASE("PCIe two-socket node: two data-parallel rings share the inter-socket link on both networks", "[sim][pcie]") {
  // TP2 x DP4 under symmetry: the simulated DP ring {0,2,4,6} stands for itself and its mirror {1,3,5,7};
  // both cross the sockets once per direction, so the link carries 2 ring edges each way: 22 / 2 = 11 GB/s
  // per rank. The analytical network counts the mirror as a translate, the flow network puts it on the links.
  const cs::topo::Cluster cluster(pcie_nodes(1));
  const double S = 256 * 1048576.0;
  TaskGraph graph(1);
  const std::uint32_t cid = one_all_reduce(graph, S, {0, 2, 4, 6}, {1, 3, 5, 7});
  FlowNetwork flow(graph, cluster, FlowNetworkOptions{"ring", {}});
  const Time flow_time = execute(graph, flow, ExecutorOptions{}).makespan;
  AnalyticalNetwork analytical(graph, cluster, "ring");
  const Time analytical_time = analytical.duration(cid);
  INFO("flow " << to_seconds(flow_time) << " s, analytical " << to_seconds(analytical_time) << " s");
  CHECK(std::abs(ratio(flow_time, analytical_time) - 1) < 0.01);
  const double X = ring_pipeline_bytes(CollectiveKind::all_reduce, S, 4);
  CHECK(to_seconds(analytical_time) == Approx(X / 11e9).epsilon(0.01));
}

TEST_CASE("PCIe two-socket nodes across the network: the intra-node ring hops still cross the sockets", "[sim][pcie]") {
  // 2 nodes x 8 GPUs, 8 NDR NICs each (48 GB/s payload). Ring over 16: per node the 8 channels' intra hops
  // put 7/8 of X on each direction of the inter-socket link, 1/8 of X on each NIC:
  // t = max( X 7/8 / 22 GB/s , X / 8 / 48 GB/s ): the sockets (X / 25.1 GB/s) bound it, not the NICs (X / 384).
  // X's fill runs on NCCL's 2 channels of a group across PCIe-only nodes (one a GPU's NIC, doubled).
  const cs::topo::Cluster cluster(pcie_nodes(2));
  const auto gpus = first_gpus(16);
  const double S = 1 * kGiB;
  const auto flow = run_collective(cluster, CollectiveKind::all_reduce, S, gpus, {NetworkBackend::flow, "ring"});
  const auto analytical = run_collective(cluster, CollectiveKind::all_reduce, S, gpus, {NetworkBackend::analytical, "ring"});
  INFO("flow " << flow.busbw_GBps << " GB/s, analytical " << analytical.busbw_GBps << " GB/s");
  CHECK(std::abs(ratio(flow.time, analytical.time) - 1) < 0.02);
  const double X = ring_pipeline_bytes(CollectiveKind::all_reduce, S, 16, kRingPipelineChunkBytes, 2);
  const double f = busbw_factor(CollectiveKind::all_reduce, 16);
  CHECK(analytical.busbw_GBps == Approx(f * S / (X * 7.0 / 8.0 / 22e9) / 1e9).epsilon(0.01));
}

TEST_CASE("SHARP and NVLS Tree: eligibility follows NCCL's rules", "[sim][sharp]") {
  const std::vector<int> two_nodes = first_gpus(16), one_node = first_gpus(8), one_per_node = {0, 8};
  // No SHARP on the fabric (the default): no CollNet, no NVLS across nodes.
  for (NcclAlgorithm a : {NcclAlgorithm::collnet_direct, NcclAlgorithm::collnet_chain})
    CHECK_FALSE(eligible(nvswitch_nodes(2, true, false), two_nodes, a));
  CHECK_FALSE(eligible(nvswitch_nodes(2, true, false), two_nodes, NcclAlgorithm::nvls));
  // SHARP: CollNet Direct and Chain across nodes, all-reduce only, never inside one node.
  CHECK(eligible(nvswitch_nodes(2, false, true), two_nodes, NcclAlgorithm::collnet_direct));
  CHECK(eligible(nvswitch_nodes(2, false, true), two_nodes, NcclAlgorithm::collnet_chain));
  CHECK_FALSE(eligible(nvswitch_nodes(2, false, true), one_node, NcclAlgorithm::collnet_direct));
  CHECK_FALSE(eligible(nvswitch_nodes(2, false, true), two_nodes, NcclAlgorithm::collnet_direct, CollectiveKind::all_gather));
  // CollNet Direct needs NVSwitch nodes (tuning.cc: nvsCount == 0 disables it); the chain runs on PCIe nodes.
  cs::topo::ClusterSpec pcie_sharp = pcie_nodes(2);
  pcie_sharp.sharp = true;
  CHECK_FALSE(eligible(pcie_sharp, two_nodes, NcclAlgorithm::collnet_direct));
  CHECK(eligible(pcie_sharp, two_nodes, NcclAlgorithm::collnet_chain));
  // NVLS across nodes: NVLS nodes (H100) on a SHARP fabric, >= 2 GPUs per node.
  CHECK(eligible(nvswitch_nodes(2, true, true), two_nodes, NcclAlgorithm::nvls));
  CHECK_FALSE(eligible(nvswitch_nodes(2, false, true), two_nodes, NcclAlgorithm::nvls));
  CHECK_FALSE(eligible(nvswitch_nodes(2, true, true), one_per_node, NcclAlgorithm::nvls));
  // NVLS Tree: NVLS nodes, more than one node, >= 2 GPUs per node (NVLS needs 2 local GPUs); no SHARP needed.
  CHECK(eligible(nvswitch_nodes(2, true, false), two_nodes, NcclAlgorithm::nvls_tree));
  CHECK_FALSE(eligible(nvswitch_nodes(2, true, false), one_node, NcclAlgorithm::nvls_tree));
  CHECK_FALSE(eligible(nvswitch_nodes(2, true, false), one_per_node, NcclAlgorithm::nvls_tree));
  CHECK_FALSE(eligible(nvswitch_nodes(2, false, false), two_nodes, NcclAlgorithm::nvls_tree));
  CHECK_FALSE(eligible(nvswitch_nodes(2, true, false), two_nodes, NcclAlgorithm::nvls_tree, CollectiveKind::reduce_scatter));
  // Simple protocol only.
  const cs::topo::Cluster h(nvswitch_nodes(2, true, true));
  bool ok = true;
  estimate(CollectiveKind::all_reduce, 64e6, group_geometry(h, two_nodes), NcclAlgorithm::collnet_direct, NcclProtocol::ll, &ok);
  CHECK_FALSE(ok);
}

TEST_CASE("SHARP: each node sends its data up once and receives the result once, not the ring's 2(n-1)/n", "[sim][sharp]") {
  // 2 A100 nodes x 8 GPUs, 8 HDR NICs each, SHARP, 1 GiB all-reduce. Forced CollNet Direct: each GPU is
  // the head of one of the 8 channels and sends S/8 through its NIC up to the leaf, and receives S/8 back:
  // 16 NICs x S/8 = 2 S up in all. The ring sends f S / 8 per GPU (f = 2 x 15/16 = 1.875): 1.875 x 2 S.
  const double S = 1 * kGiB;
  const auto gpus = first_gpus(16);
  using VK = cs::topo::VertexKind;
  const cs::topo::Cluster one_leaf(nvswitch_nodes(2, false, true));
  FlowRun sharp, ring;
  run_flow(sharp, one_leaf, S, gpus, "collnet_direct");
  run_flow(ring, one_leaf, S, gpus, "ring");
  CHECK(sharp.net->choice(0).algorithm == NcclAlgorithm::collnet_direct);
  CHECK(bytes_on(one_leaf, *sharp.net, VK::nic, VK::leaf) == Approx(2 * S));
  CHECK(bytes_on(one_leaf, *sharp.net, VK::leaf, VK::nic) == Approx(2 * S));
  CHECK(bytes_on(one_leaf, *ring.net, VK::nic, VK::leaf) == Approx(1.875 * 2 * S));
  // Each node under its own 8-port leaf: the second leaf sends one reduced stream per channel up to the
  // root's leaf (S/8 x 8 channels = S on its up-links) and the root's leaf sends the result back (S on its
  // up-links): 2 S climb in all. The ring's 8 channels each cross once each way with f S / 8: 2 f S.
  const cs::topo::Cluster two_leaves(nvswitch_nodes(2, false, true, 8));
  FlowRun sharp2, ring2;
  run_flow(sharp2, two_leaves, S, gpus, "collnet_direct");
  run_flow(ring2, two_leaves, S, gpus, "ring");
  CHECK(bytes_on(two_leaves, *sharp2.net, VK::leaf, VK::spine) == Approx(2 * S));
  CHECK(bytes_on(two_leaves, *sharp2.net, VK::spine, VK::leaf) == Approx(2 * S));
  CHECK(bytes_on(two_leaves, *ring2.net, VK::leaf, VK::spine) == Approx(1.875 * 2 * S));
  // The analytical network's scale-out account: S / 8 per rank (its link_loads' second entry).
  TaskGraph g(1);
  const std::uint32_t cid = one_all_reduce(g, S, gpus);
  AnalyticalNetwork an(g, one_leaf, "collnet_direct");
  an.start(cid, 0);
  const auto loads = an.link_loads();
  REQUIRE(loads.size() == 2);
  CHECK(loads[1].bytes_per_gpu == Approx(S / 8));
}

TEST_CASE("SHARP and NVLS Tree on both networks: the flow network times what the analytical one does", "[sim][sharp]") {
  const double S = 1 * kGiB;
  const auto gpus = first_gpus(16);
  struct Case {
    cs::topo::ClusterSpec spec;
    const char* algo;
  };
  cs::topo::ClusterSpec pcie_sharp = pcie_nodes(2);
  pcie_sharp.sharp = true;
  for (const Case& k : {Case{nvswitch_nodes(2, false, true), "collnet_direct"}, Case{nvswitch_nodes(2, false, true), "collnet_chain"},
                        Case{pcie_sharp, "collnet_chain"}, Case{nvswitch_nodes(2, true, true), "nvls"},
                        Case{nvswitch_nodes(2, true, false), "nvls_tree"}, Case{nvswitch_nodes(4, true, false), "nvls_tree"}}) {
    const cs::topo::Cluster cluster(k.spec);
    const auto flow = run_collective(cluster, CollectiveKind::all_reduce, S, gpus, {NetworkBackend::flow, k.algo});
    const auto analytical = run_collective(cluster, CollectiveKind::all_reduce, S, gpus, {NetworkBackend::analytical, k.algo});
    INFO(k.algo << " on " << k.spec.intra.name << ": flow " << flow.busbw_GBps << ", analytical " << analytical.busbw_GBps << " GB/s");
    CHECK(to_string(flow.choice.algorithm) == std::string(k.algo));
    CHECK(std::abs(ratio(flow.time, analytical.time) - 1) < 0.02);
  }
}

TEST_CASE("SHARP and NVLS Tree: what the chooser picks, by the model's own arithmetic", "[sim][sharp]") {
  const double S = 1 * kGiB;
  // 4 A100 nodes x 8, 8 HDR (24 GB/s payload) each, SHARP. CollNet Direct at 1 GiB:
  // max(2 x 7/8 S / 240 GB/s, S / (8 x 24 GB/s)) = S / 137 GB/s; the ring: X / 8 / 24 GB/s ~ S / 99 GB/s;
  // the tree (as NCCL's tuner prices it, W = 4): 4 S / (16 x 24 GB/s) = S / 96 GB/s. CollNet Direct wins.
  const cs::topo::Cluster a100_sharp(nvswitch_nodes(4, false, true));
  const GroupGeometry g4 = group_geometry(a100_sharp, first_gpus(32));
  CHECK(choose_algorithm(CollectiveKind::all_reduce, S, g4).algorithm == NcclAlgorithm::collnet_direct);
  // Small messages too: 9 + 2 (3.5 + 6) = 28 us against the LL tree's 7 + 2 (3 x 2.7 + 7 x 1.4) = 42.8 us.
  CHECK(choose_algorithm(CollectiveKind::all_reduce, 8192, g4).algorithm == NcclAlgorithm::collnet_direct);
  // Without SHARP never CollNet, at any size.
  const cs::topo::Cluster a100(nvswitch_nodes(4, false, false));
  const GroupGeometry plain = group_geometry(a100, first_gpus(32));
  for (double size : {8192.0, 1048576.0, S, 8 * S}) {
    const NcclAlgorithm a = choose_algorithm(CollectiveKind::all_reduce, size, plain).algorithm;
    CHECK(a != NcclAlgorithm::collnet_direct);
    CHECK(a != NcclAlgorithm::collnet_chain);
  }
  // PCIe nodes with SHARP: the chain is eligible (no Direct without NVSwitch) but the inter-socket link bounds
  // both it and the ring, and there the chain moves 2 x 7/8 S = 1.75 S where the ring moves 7/8 X = 1.72 S
  // (X = f S + fill = 1.97 S). SHARP relieves the NICs, which are not the bottleneck here.
  cs::topo::ClusterSpec pcie_sharp = pcie_nodes(2);
  pcie_sharp.sharp = true;
  const cs::topo::Cluster pcie(pcie_sharp);
  const GroupGeometry gp = group_geometry(pcie, first_gpus(16));
  bool ok = false;
  const AlgorithmChoice chain = estimate(CollectiveKind::all_reduce, S, gp, NcclAlgorithm::collnet_chain, NcclProtocol::simple, &ok);
  REQUIRE(ok);
  const AlgorithmChoice picked = choose_algorithm(CollectiveKind::all_reduce, S, gp);
  CHECK(picked.algorithm == NcclAlgorithm::ring);
  // Across PCIe-only nodes the ring is ranked by NCCL 2.21.5's own tuner tables (nccl_tuner_time_us), the
  // chain by its structure; either way the chain ranks behind it.
  CHECK(chain.tuned > picked.tuned);
  // 2 H100 nodes with SHARP: NVLS across nodes, max(S / 274.5 GB/s, S / (8 x 48 GB/s)) = S / 274.5, ties
  // NVLS Tree (W = 2 at 2 nodes: 2 S / (16 x 48) = S / 384 under the NVLS part) and is listed first;
  // CollNet Direct's scale-up part, 2 x 7/8 S / 360 GB/s = S / 206, is slower.
  const cs::topo::Cluster h100_sharp(nvswitch_nodes(2, true, true));
  CHECK(choose_algorithm(CollectiveKind::all_reduce, S, group_geometry(h100_sharp, first_gpus(16))).algorithm == NcclAlgorithm::nvls);
  // Without SHARP: NVLS Tree at 2 nodes (the ring's X / 8 / 48 GB/s ~ S / 195 is slower than S / 274.5).
  const cs::topo::Cluster h100(nvswitch_nodes(2, true, false));
  CHECK(choose_algorithm(CollectiveKind::all_reduce, S, group_geometry(h100, first_gpus(16))).algorithm == NcclAlgorithm::nvls_tree);
}

TEST_CASE("a ring across NVLink nodes fills on NCCL's channels there: two per NIC the node's ranks leave through",
          "[sim][nccl]") {
  // 48 DGX H100 nodes (8 GPUs, 8 NDR400 NICs each). NCCL builds one inter-node ring per NIC a node's ranks use
  // and doubles them (ncclTopoPostset, src/graph/connect.cc at NVIDIA/nccl v2.21.5-1): a group of one GPU a
  // node (data parallelism under TP 8) runs on 2 channels, four a node on 8, eight a node on 16.
  const cs::topo::Cluster cluster(nvswitch_nodes(48, true, false));
  std::vector<int> one_per_node, four_per_node;
  for (int node = 0; node < 48; ++node) {
    one_per_node.push_back(node * 8);
    for (int i = 0; i < 4; ++i) four_per_node.push_back(node * 8 + i);
  }
  const GroupGeometry one = group_geometry(cluster, one_per_node);
  CHECK(one.ring_channels == 2);
  CHECK(group_geometry(cluster, four_per_node).ring_channels == 8);
  CHECK(group_geometry(cluster, first_gpus(16)).ring_channels == 16);
  CHECK(group_geometry(cluster, first_gpus(8)).ring_channels == kRingChannels);  // inside a node, as before
  // The fill is one chunk per channel a step, C_ring / 16 on each: a 128 MiB all-gather over the 48 nodes sends
  // X = (n-1)/n S + (n-1) min(S/n, C_ring 2/16) through its one NIC (k = 1: t = L + (n-1) h + X / B_net):
  // 47 steps of 437.5 KB, not of the whole 3.5 MB.
  const double S = 128.0 * 1048576.0;
  bool ok = false;
  const AlgorithmChoice c = estimate(CollectiveKind::all_gather, S, one, NcclAlgorithm::ring, NcclProtocol::simple, &ok);
  REQUIRE(ok);
  const double X = 47.0 / 48.0 * S + 47.0 * std::min(S / 48.0, kRingPipelineChunkBytes * 2.0 / 16.0);
  CHECK(to_seconds(c.duration - c.latency) == Approx(X / one.network_Bps).epsilon(1e-6));
  CHECK(X == Approx(ring_pipeline_bytes(CollectiveKind::all_gather, S, 48, kRingPipelineChunkBytes, 2)));
  // The flow network expands the same ring and agrees.
  const auto flow = run_collective(cluster, CollectiveKind::all_gather, S, one_per_node, {NetworkBackend::flow, "ring"});
  const auto analytical = run_collective(cluster, CollectiveKind::all_gather, S, one_per_node, {NetworkBackend::analytical, "ring"});
  INFO("flow " << flow.busbw_GBps << " GB/s, analytical " << analytical.busbw_GBps << " GB/s");
  CHECK(std::abs(ratio(flow.time, analytical.time) - 1) < 0.02);
  CHECK(analytical.busbw_GBps > 35.0);  // 22.8 GB/s with the whole chunk at one NIC's rate a step
}
