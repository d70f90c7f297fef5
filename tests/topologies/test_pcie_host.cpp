// PCIe nodes' host side (topologies/cluster.hpp "PCIe nodes"): GPUs under PCIe switches under the root
// complexes of the node's sockets, joined by the inter-socket link. The oracles are counted by hand: which
// links a route climbs, how many ring edges each link carries, and so which link is the ring's bottleneck.
//
// The node of every test: 8 GPUs, the catalog's "pcie" (Gen5 x16, 64 GB/s x 0.80 = 51.2 GB/s per
// direction), 2 sockets (the default for 8 GPUs), GPUs 0-3 on socket 0 and 4-7 on socket 1, 2 GPUs per
// PCIe switch (switches {0,1} {2,3} on socket 0, {4,5} {6,7} on socket 1), the inter-socket link at the
// default 22 GB/s (NCCL's SRP_QPI_BW).
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "topologies/cluster.hpp"

using namespace cs::topo;

namespace {

constexpr double kPcieBps = 64e9 * 0.80;
constexpr double kSocketBps = 22e9;

ClusterSpec pcie_node(int nodes = 1, int per_switch = 2) {
  ClusterSpec s;
  s.nodes = nodes;
  s.gpus_per_node = 8;
  s.intra = *find_intra_node("pcie");
  s.intra.gpus_per_pcie_switch = per_switch;
  s.nic = *find_net_link("ib-ndr400");
  s.nics_per_node = 8;
  return s;
}

int count_kind(const Cluster& c, VertexKind kind) {
  const auto& v = c.vertices();
  return static_cast<int>(std::count_if(v.begin(), v.end(), [&](const Vertex& x) { return x.kind == kind; }));
}

std::vector<VertexKind> kinds_along(const Cluster& c, const std::vector<int>& path) {
  std::vector<VertexKind> out;
  for (int e : path) out.push_back(c.vertices()[static_cast<std::size_t>(c.edges()[static_cast<std::size_t>(e)].dst)].kind);
  return out;
}

// Ring edges (consecutive pairs of `order`, last to first included) whose route crosses an inter-socket link.
int socket_crossings(const Cluster& c, const std::vector<int>& order) {
  int n = 0;
  for (std::size_t i = 0; i < order.size(); ++i)
    for (int e : c.route(order[i], order[(i + 1) % order.size()], 0))
      n += c.edges()[static_cast<std::size_t>(e)].kind == EdgeKind::inter_socket ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("PCIe host: switches under root complexes under sockets, one inter-socket cable", "[topologies][pcie]") {
  const Cluster c(pcie_node());
  CHECK(count_kind(c, VertexKind::pcie_switch) == 4);
  CHECK(count_kind(c, VertexKind::root_complex) == 2);
  int socket_edges = 0, pcie_edges = 0;
  for (const Edge& e : c.edges()) {
    if (e.kind == EdgeKind::inter_socket) {
      ++socket_edges;
      CHECK(e.bandwidth_Bps == Approx(kSocketBps));
    }
    if (e.kind == EdgeKind::pcie) pcie_edges += e.bandwidth_Bps == Approx(kPcieBps) ? 1 : 0;
  }
  CHECK(socket_edges == 2);       // one cable, two directions
  CHECK(pcie_edges == 2 * (8 + 4));  // 8 GPU links + 4 switch up-links, two directions (one node: no NICs)
  using K = VertexKind;
  // Same switch (NCCL's PIX), other switch of the socket (PHB), other socket (SYS).
  CHECK(kinds_along(c, c.route(0, 1, 0)) == std::vector<K>{K::pcie_switch, K::gpu});
  CHECK(kinds_along(c, c.route(0, 2, 0)) == std::vector<K>{K::pcie_switch, K::root_complex, K::pcie_switch, K::gpu});
  CHECK(kinds_along(c, c.route(1, 6, 0)) ==
        std::vector<K>{K::pcie_switch, K::root_complex, K::root_complex, K::pcie_switch, K::gpu});
  CHECK(c.connected());
}

TEST_CASE("PCIe host: a ring over the node crosses the inter-socket link twice, its bottleneck", "[topologies][pcie]") {
  const Cluster c(pcie_node());
  // Ring 0 -> 1 -> ... -> 7 -> 0: 3 -> 4 climbs from socket 0 to socket 1, 7 -> 0 comes back; each direction of
  // the inter-socket cable carries one ring edge. Every switch up-link carries one ring edge each way (switch
  // {0,1}: 1 -> 2 up, 7 -> 0 down), every GPU link one. Bottleneck: min(51.2 / 1, 22 / 1) = 22 GB/s.
  const std::vector<int> ring = {0, 1, 2, 3, 4, 5, 6, 7};
  CHECK(socket_crossings(c, ring) == 2);
  CHECK(c.scaleup_ring_Bps(ring) == Approx(kSocketBps));
  CHECK(c.group_link(ring).bus_bandwidth_Bps == Approx(kSocketBps));
  // Interleaved over the sockets, 0 -> 4 -> 1 -> 5 -> 0 crosses 4 times, 2 per direction; the node's other
  // GPUs run the same ring on {2, 6, 3, 7} at the same time (the first disjoint translate), 2 more per
  // direction: 22 / 4 = 5.5 GB/s.
  const std::vector<int> interleaved = {0, 4, 1, 5};
  CHECK(socket_crossings(c, interleaved) == 4);
  CHECK(c.scaleup_ring_Bps(interleaved) == Approx(kSocketBps / 4));
  // Two data-parallel rings of a TP2 x DP4 node, {0, 2, 4, 6} and {1, 3, 5, 7}: each crosses once per
  // direction, both together 2 per direction: 22 / 2 = 11 GB/s. (With 2 GPUs per switch the up-links carry
  // one edge of each ring per direction, 2 in all: 51.2 / 2 = 25.6 GB/s, above the 11.)
  const std::vector<int> dp = {0, 2, 4, 6};
  CHECK(socket_crossings(c, dp) == 2);
  CHECK(c.scaleup_ring_Bps(dp) == Approx(kSocketBps / 2));
  // One socket: no crossing; 0 -> 1 stays in switch {0,1}, 1 -> 2 and 3 -> 0 use the up-links once each: 51.2
  // (the node's other 4 GPUs run theirs on socket 1, on other links).
  const std::vector<int> socket0 = {0, 1, 2, 3};
  CHECK(socket_crossings(c, socket0) == 0);
  CHECK(c.scaleup_ring_Bps(socket0) == Approx(kPcieBps));
  // 0 -> 2 -> 1 -> 3 -> 0 changes switch on every edge: switch {0,1}'s up-link carries 0 -> 2 and 1 -> 3,
  // two ring edges: 51.2 / 2 = 25.6 GB/s, the shared up-link is the bottleneck.
  const std::vector<int> zigzag = {0, 2, 1, 3};
  CHECK(c.scaleup_ring_Bps(zigzag) == Approx(kPcieBps / 2));
}

TEST_CASE("PCIe host: a faster inter-socket link leaves PCIe as the bottleneck, one socket is one switch", "[topologies][pcie]") {
  ClusterSpec s = pcie_node();
  s.intra.inter_socket_GBps = 60;  // above the 51.2 GB/s of a PCIe link
  const std::vector<int> ring = {0, 1, 2, 3, 4, 5, 6, 7};
  CHECK(Cluster(s).scaleup_ring_Bps(ring) == Approx(kPcieBps));
  // One socket and one switch per node: today's single PCIe switch, no root complex.
  ClusterSpec one = pcie_node(1, 8);
  one.intra.sockets = 1;
  const Cluster single(one);
  CHECK(count_kind(single, VertexKind::pcie_switch) == 1);
  CHECK(count_kind(single, VertexKind::root_complex) == 0);
  CHECK(single.scaleup_ring_Bps(ring) == Approx(kPcieBps));
  // Defaults: 8 GPUs -> 2 sockets, one switch per socket; 2 GPUs -> 1 socket.
  IntraNodeSpec d = *find_intra_node("pcie");
  CHECK(pcie_sockets(d, 8) == 2);
  CHECK(pcie_gpus_per_switch(d, 8) == 4);
  CHECK(pcie_sockets(d, 2) == 1);
  CHECK(pcie_sockets(d, 1) == 1);
  CHECK(pcie_inter_socket_GBps(d) == 22.0);
}

TEST_CASE("PCIe host: across nodes a GPU's NIC is reached without the sockets, the ring's intra hops still cross", "[topologies][pcie]") {
  const Cluster c(pcie_node(2));
  using K = VertexKind;
  // GPU 3 (socket 0) to GPU 11 (node 1, local 3): GPU -> NIC directly (its PCIe switch's NIC), no root complex.
  const auto kinds = kinds_along(c, c.route(3, 11, 0));
  CHECK(std::find(kinds.begin(), kinds.end(), K::root_complex) == kinds.end());
  // 8 GPUs per node, one per node's ring channel set: per node the cycle 0..7 again, 22 GB/s.
  std::vector<int> all(16);
  for (int i = 0; i < 16; ++i) all[static_cast<std::size_t>(i)] = i;
  CHECK(c.scaleup_ring_Bps(all) == Approx(kSocketBps));
  // One GPU per node: no intra-node hop, the GPU's PCIe bandwidth.
  const std::vector<int> pair = {0, 8};
  CHECK(c.scaleup_ring_Bps(pair) == Approx(kPcieBps));
}
