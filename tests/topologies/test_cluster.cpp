// Cluster graph: structure counted by hand, and the analytical group view against the header formula
//   B = min(B_scaleup, k * nics_per_node / gpus_per_node * B_nic / oversub_if_spine).
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <queue>
#include <utility>
#include <vector>

#include "topologies/cluster.hpp"

using namespace cs::topo;

namespace {

// H100-SXM-like cluster: NVSwitch at 450 GB/s per direction (900 GB/s NVLink4 / 2, filled in by the
// caller as the catalog says), ib-ndr400 NICs.
ClusterSpec h100_spec(int nodes, int nics_per_node = 8, int leaf_radix = 32, double oversub = 1.0,
                      const char* fabric = "fat-tree") {
  ClusterSpec s;
  s.nodes = nodes;
  s.gpus_per_node = 8;
  s.intra = *find_intra_node("nvswitch");
  s.intra.gpu_bandwidth_GBps = 450.0;
  s.nic = *find_net_link("ib-ndr400");
  s.nics_per_node = nics_per_node;
  s.oversubscription = oversub;
  s.leaf_radix = leaf_radix;
  s.fabric = fabric;
  return s;
}

int count_kind(const Cluster& c, VertexKind kind) {
  const auto& v = c.vertices();
  return static_cast<int>(std::count_if(v.begin(), v.end(), [&](const Vertex& x) { return x.kind == kind; }));
}

// Naive reference: BFS over the plain edge vector.
bool naive_connected(const Cluster& c) {
  const int n = static_cast<int>(c.vertices().size());
  std::vector<std::vector<int>> adj(static_cast<std::size_t>(n));
  for (const Edge& e : c.edges()) adj[static_cast<std::size_t>(e.src)].push_back(e.dst);
  std::vector<bool> seen(static_cast<std::size_t>(n), false);
  std::queue<int> q;
  q.push(0);
  seen[0] = true;
  int reached = 1;
  while (!q.empty()) {
    const int u = q.front();
    q.pop();
    for (const int w : adj[static_cast<std::size_t>(u)]) {
      if (!seen[static_cast<std::size_t>(w)]) {
        seen[static_cast<std::size_t>(w)] = true;
        ++reached;
        q.push(w);
      }
    }
  }
  return reached == n;
}

constexpr double kNdrPayloadBps = 48e9;  // 400 Gb/s = 50 GB/s x 0.96
constexpr double kNvsPayloadBps = 360e9; // 450 GB/s x 0.80

}  // namespace

TEST_CASE("2 nodes x 8 GPUs x 8 NICs on a fat-tree: vertex and edge counts", "[topologies]") {
  SECTION("radix 32: all 16 NICs on one leaf, no spines") {
    // Vertices: 16 GPUs + 2 NVSwitches + 16 NICs + ceil(16/32) = 1 leaf = 35.
    // Cables: 16 GPU-NVSwitch + 16 GPU-NIC (one NIC per GPU) + 16 NIC-leaf = 48 -> 96 directed edges.
    const Cluster c(h100_spec(2));
    CHECK(c.num_gpus() == 16);
    CHECK(c.vertices().size() == 35);
    CHECK(c.edges().size() == 96);
    CHECK(count_kind(c, VertexKind::gpu) == 16);
    CHECK(count_kind(c, VertexKind::nvswitch) == 2);
    CHECK(count_kind(c, VertexKind::nic) == 16);
    CHECK(count_kind(c, VertexKind::leaf) == 1);
    CHECK(count_kind(c, VertexKind::spine) == 0);
    CHECK(c.num_leaves() == 1);
    CHECK(c.num_spines() == 0);
    CHECK(c.leaf_of_node(0) == 0);
    CHECK(c.leaf_of_node(1) == 0);
  }
  SECTION("radix 8, 1:1: one leaf per node, 8 up-links each -> 8 spines") {
    // Vertices: 16 + 2 + 16 + 2 leaves + 8 spines = 44.
    // Cables: 48 as above + 2 leaves x 8 up-links = 64 -> 128 directed edges.
    const Cluster c(h100_spec(2, 8, 8));
    CHECK(c.vertices().size() == 44);
    CHECK(c.edges().size() == 128);
    CHECK(c.num_leaves() == 2);
    CHECK(c.num_spines() == 8);
    CHECK(c.leaf_of_node(1) == 1);
  }
  SECTION("radix 8, 4:1: 8 down-ports / 4 = 2 up-links per leaf -> 2 spines") {
    // Cables: 48 + 2 x 2 = 52 -> 104 directed edges; vertices 16 + 2 + 16 + 2 + 2 = 38.
    const Cluster c(h100_spec(2, 8, 8, 4.0));
    CHECK(c.num_spines() == 2);
    CHECK(c.vertices().size() == 38);
    CHECK(c.edges().size() == 104);
  }
}

TEST_CASE("every directed edge has its reverse with equal bandwidth and latency", "[topologies]") {
  for (const ClusterSpec& spec : {h100_spec(2), h100_spec(4, 8, 8, 2.0), h100_spec(3, 4, 8, 1.0),
                                  h100_spec(4, 8, 32, 1.0, "rail-optimized")}) {
    const Cluster c(spec);
    std::map<std::pair<int, int>, std::vector<const Edge*>> by_pair;
    for (const Edge& e : c.edges()) by_pair[{e.src, e.dst}].push_back(&e);
    REQUIRE(c.edges().size() % 2 == 0);
    for (const Edge& e : c.edges()) {
      const auto it = by_pair.find({e.dst, e.src});
      REQUIRE(it != by_pair.end());
      REQUIRE(it->second.size() == 1);
      CHECK(it->second.front()->bandwidth_Bps == e.bandwidth_Bps);
      CHECK(it->second.front()->latency_s == e.latency_s);
      CHECK(it->second.front()->kind == e.kind);
      CHECK(e.bandwidth_Bps > 0.0);
    }
  }
}

TEST_CASE("8 GPUs in one H100 node see the NVSwitch: 450 GB/s x efficiency", "[topologies]") {
  const Cluster c(h100_spec(2));
  const std::vector<int> node0 = {0, 1, 2, 3, 4, 5, 6, 7};
  const GroupLink g = c.group_link(node0);
  CHECK(g.span == Span::node);
  CHECK(g.bus_bandwidth_Bps == Approx(450e9 * find_intra_node("nvswitch")->efficiency));
  CHECK(g.bus_bandwidth_Bps == Approx(kNvsPayloadBps));
  CHECK(g.step_latency_s == Approx(0.6e-6));  // one GPU -> NVSwitch -> GPU hop

  const std::vector<int> one = {5};
  CHECK(c.group_link(one).span == Span::single_gpu);
  CHECK(c.group_link(one).step_latency_s == 0.0);
}

TEST_CASE("1 and 2 GPUs per node across 4 nodes with 8 NDR NICs per node", "[topologies]") {
  // 4 x 8 = 32 NICs fill exactly one radix-32 leaf: the group spans a leaf.
  const Cluster c(h100_spec(4));
  SECTION("k = 1: one NIC's share, 1 x 8/8 x 48 GB/s") {
    const std::vector<int> g = {0, 8, 16, 24};
    const GroupLink l = c.group_link(g);
    CHECK(l.level == 0);  // leaf
    CHECK(l.bus_bandwidth_Bps == Approx(kNdrPayloadBps));
    // 2 network hops (NIC -> leaf -> NIC) x 1 us + one intra hop 0.6 us.
    CHECK(l.step_latency_s == Approx(2.6e-6));
  }
  SECTION("k = 2: twice that") {
    const std::vector<int> g = {0, 1, 8, 9, 16, 17, 24, 25};
    CHECK(c.group_link(g).bus_bandwidth_Bps == Approx(2.0 * kNdrPayloadBps));
  }
  SECTION("k = 8: all 8 NICs, 384 GB/s, above NVSwitch's 360 -> scale-up bound") {
    std::vector<int> g(32);
    for (int i = 0; i < 32; ++i) g[static_cast<std::size_t>(i)] = i;
    CHECK(c.group_link(g).bus_bandwidth_Bps == Approx(kNvsPayloadBps));
  }
  SECTION("uneven group: k is the minimum over nodes (2 on node 0, 1 on node 1)") {
    const std::vector<int> g = {0, 1, 8};
    CHECK(c.group_link(g).bus_bandwidth_Bps == Approx(kNdrPayloadBps));
  }
}

TEST_CASE("4 NICs for 8 GPUs: a 1-GPU-per-node group gets half a NIC", "[topologies]") {
  // NIC j serves GPUs 2j and 2j+1; the other GPU's group uses the other half: 1 x 4/8 x 48 = 24 GB/s.
  const Cluster c(h100_spec(2, 4));
  const std::vector<int> g = {0, 8};
  CHECK(c.group_link(g).bus_bandwidth_Bps == Approx(0.5 * kNdrPayloadBps));
  // GPU-NIC cables: 8 per node (each GPU to its NIC) -> vertex 0 and 1 both reach NIC 0 of node 0.
  int to_nic0 = 0;
  for (const Edge& e : c.edges()) {
    if (e.dst == c.nic_vertex(0, 0) && e.kind == EdgeKind::pcie) ++to_nic0;
  }
  CHECK(to_nic0 == 2);
}

TEST_CASE("oversubscription divides the network term only when the group crosses the spine",
          "[topologies]") {
  // 4 nodes x 8 NICs on radix-16 leaves: nodes 0,1 on leaf 0, nodes 2,3 on leaf 1.
  const Cluster flat(h100_spec(4, 8, 16, 1.0));
  const Cluster over(h100_spec(4, 8, 16, 4.0));
  const std::vector<int> across = {0, 8, 16, 24};
  const std::vector<int> same_leaf = {0, 8};

  const GroupLink a1 = flat.group_link(across);
  const GroupLink a4 = over.group_link(across);
  CHECK(a1.level == 1);  // spine
  CHECK(a4.level == 1);  // spine
  CHECK(a1.bus_bandwidth_Bps == Approx(kNdrPayloadBps));
  CHECK(a4.bus_bandwidth_Bps == Approx(kNdrPayloadBps / 4.0));
  CHECK(a4.step_latency_s == Approx(4 * 1.0e-6 + 0.6e-6));  // NIC-leaf-spine-leaf-NIC + intra

  const GroupLink s4 = over.group_link(same_leaf);
  CHECK(s4.level == 0);  // leaf
  CHECK(s4.bus_bandwidth_Bps == Approx(kNdrPayloadBps));
  // 16 down-ports / 4 = 4 up-links per leaf -> 4 spines.
  CHECK(over.num_spines() == 4);
  CHECK(flat.num_spines() == 16);
}

TEST_CASE("rail-optimized: NIC i of every node on rail leaf i", "[topologies]") {
  const Cluster c(h100_spec(4, 8, 32, 1.0, "rail-optimized"));
  CHECK(c.num_leaves() == 8);
  CHECK(c.num_spines() == 4);  // each rail leaf has 4 down-ports -> 4 up-links at 1:1
  for (int node = 0; node < 4; ++node) {
    for (int j = 0; j < 8; ++j) {
      CHECK(c.leaf_of_nic(node, j) == j);
      // The graph agrees: the NIC's network edge goes to the leaf vertex numbered j.
      int leaf_edges = 0;
      for (const Edge& e : c.edges()) {
        if (e.src != c.nic_vertex(node, j) || e.kind != EdgeKind::network) continue;
        const Vertex& v = c.vertices()[static_cast<std::size_t>(e.dst)];
        CHECK(v.kind == VertexKind::leaf);
        CHECK(v.index == j);
        ++leaf_edges;
      }
      CHECK(leaf_edges == 1);
    }
  }
  // Same local GPU on every node: one rail, one leaf. Full nodes: every rail lines up, still a leaf.
  const std::vector<int> rail0 = {0, 8, 16, 24};
  CHECK(c.group_link(rail0).level == 0);  // leaf
  std::vector<int> all(32);
  for (int i = 0; i < 32; ++i) all[static_cast<std::size_t>(i)] = i;
  CHECK(c.group_link(all).level == 0);  // leaf
  // GPU 0 of node 0 with GPU 1 of node 1: rails 0 and 1 meet only at a spine.
  const std::vector<int> cross = {0, 9};
  CHECK(c.group_link(cross).level == 1);  // spine

  SECTION("more nodes than the radix: rail leaves per block of radix nodes") {
    const Cluster big(h100_spec(4, 8, 2, 1.0, "rail-optimized"));
    CHECK(big.num_leaves() == 16);
    CHECK(big.leaf_of_nic(1, 3) == 3);
    CHECK(big.leaf_of_nic(2, 3) == 8 + 3);
    const std::vector<int> g = {0, 8, 16};
    CHECK(big.group_link(g).level == 1);  // spine
  }
}

TEST_CASE("single node: no NICs, no switches beyond the NVSwitch", "[topologies]") {
  const Cluster c(h100_spec(1));
  CHECK(c.vertices().size() == 9);  // 8 GPUs + 1 NVSwitch
  CHECK(c.edges().size() == 16);
  CHECK(count_kind(c, VertexKind::nic) == 0);
  CHECK(count_kind(c, VertexKind::leaf) == 0);
  CHECK(count_kind(c, VertexKind::spine) == 0);
  CHECK(c.leaf_of_node(0) == -1);
  CHECK(c.nic_vertex(0, 0) == -1);
  for (const Edge& e : c.edges()) CHECK(e.kind == EdgeKind::nvlink);
}

TEST_CASE("PCIe node: ring over the node sees one x16 link's per-direction bandwidth", "[topologies]") {
  ClusterSpec s = h100_spec(2);
  s.intra = *find_intra_node("pcie");
  s.intra.sockets = 1;  // one socket, one PCIe switch per node (the two-socket default: test_pcie_host.cpp)
  const Cluster c(s);
  CHECK(count_kind(c, VertexKind::pcie_switch) == 2);
  CHECK(count_kind(c, VertexKind::nvswitch) == 0);
  const std::vector<int> node0 = {0, 1, 2, 3, 4, 5, 6, 7};
  CHECK(c.group_link(node0).bus_bandwidth_Bps == Approx(64e9 * s.intra.efficiency));
  // Across nodes, the NIC (48 GB/s) is below PCIe (51.2 GB/s) for k = 1.
  const std::vector<int> g = {0, 8};
  CHECK(c.group_link(g).bus_bandwidth_Bps == Approx(kNdrPayloadBps));
}

TEST_CASE("NVL72: one NVLink domain spans 18 trays of 4 GPUs", "[topologies]") {
  ClusterSpec s = h100_spec(36);
  s.gpus_per_node = 4;
  s.nics_per_node = 4;
  s.intra = *find_intra_node("nvl72");
  s.nic = *find_net_link("ib-xdr800");
  const Cluster c(s);
  // Two domains of 72 GPUs: 2 switch vertices, not tied to a node.
  CHECK(count_kind(c, VertexKind::nvswitch) == 2);
  for (const Vertex& v : c.vertices()) {
    if (v.kind == VertexKind::nvswitch) CHECK(v.node == -1);
  }
  std::vector<int> domain0(72);
  for (int i = 0; i < 72; ++i) domain0[static_cast<std::size_t>(i)] = i;
  const GroupLink d = c.group_link(domain0);
  CHECK(d.span == Span::node);
  CHECK(d.bus_bandwidth_Bps == Approx(900e9 * 0.80));
  // One GPU in each domain: over the network, 1 x 4/4 x 96 GB/s (XDR), under one leaf? 36 x 4 = 144
  // NICs on radix-32 leaves: GPU 0's NIC is global NIC 0 (leaf 0), GPU 72's is NIC 72 (leaf 2): spine.
  const std::vector<int> pair = {0, 72};
  const GroupLink p = c.group_link(pair);
  CHECK(p.level == 1);  // spine
  CHECK(p.bus_bandwidth_Bps == Approx(96e9));
  CHECK(c.connected());
}

TEST_CASE("graph is connected (Boost BFS agrees with a naive BFS over edges())", "[topologies]") {
  for (const ClusterSpec& spec :
       {h100_spec(1), h100_spec(2), h100_spec(16, 8, 32, 3.0), h100_spec(5, 2, 4, 1.5),
        h100_spec(40, 8, 32, 1.0, "rail-optimized"), h100_spec(3, 8, 32, 1.0, "ethernet")}) {
    const Cluster c(spec);
    CHECK(c.connected());
    CHECK(naive_connected(c));
  }
}
