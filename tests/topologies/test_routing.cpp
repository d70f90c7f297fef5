// Routes on built clusters: every route is a chain of directed edges from src to dst, shaped as
// cluster.hpp's essay says (NVLink inside a node, NIC -> leaf [-> spine [-> core -> spine]] -> leaf -> NIC
// across), ECMP spreads flow ids evenly and deterministically, PXN keeps cross-rail traffic on one rail,
// and the three-tier fat-tree has the switch and cable counts worked out by hand below.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "topologies/cluster.hpp"

using namespace cs::topo;

namespace {

ClusterSpec h100_spec(int nodes, int nics_per_node = 8, int leaf_radix = 32, double oversub = 1.0,
                      const char* fabric = "fat-tree") {
  ClusterSpec s;
  s.nodes = nodes;
  s.gpus_per_node = 8;
  s.intra = *find_intra_node("nvswitch");
  s.intra.gpu_bandwidth_GBps = 450.0;  // NVLink4: 900 GB/s bidirectional -> 450 per direction
  s.intra.nvls = true;
  s.nic = *find_net_link("ib-ndr400");
  s.nics_per_node = nics_per_node;
  s.oversubscription = oversub;
  s.leaf_radix = leaf_radix;
  s.fabric = fabric;
  return s;
}

// A route must chain: starts at src, each edge starts where the previous ended, ends at dst, and never
// visits a vertex twice.
void require_valid_path(const Cluster& c, int src, int dst, const std::vector<int>& route) {
  if (src == dst) {
    REQUIRE(route.empty());
    return;
  }
  REQUIRE(!route.empty());
  REQUIRE(static_cast<int>(route.size()) <= c.max_route_edges());
  const auto& edges = c.edges();
  std::set<int> visited = {c.gpu_vertex(src)};
  int at = c.gpu_vertex(src);
  for (const int id : route) {
    REQUIRE(id >= 0);
    REQUIRE(id < static_cast<int>(edges.size()));
    REQUIRE(edges[static_cast<std::size_t>(id)].src == at);
    at = edges[static_cast<std::size_t>(id)].dst;
    REQUIRE(visited.insert(at).second);
  }
  REQUIRE(at == c.gpu_vertex(dst));
}

std::vector<VertexKind> kinds_along(const Cluster& c, const std::vector<int>& route) {
  std::vector<VertexKind> kinds;
  for (const int id : route) {
    kinds.push_back(c.vertices()[static_cast<std::size_t>(c.edges()[static_cast<std::size_t>(id)].dst)].kind);
  }
  return kinds;
}

const Vertex& vertex_after(const Cluster& c, const std::vector<int>& route, std::size_t hop) {
  return c.vertices()[static_cast<std::size_t>(c.edges()[static_cast<std::size_t>(route[hop])].dst)];
}

using K = VertexKind;

}  // namespace

TEST_CASE("routes: same node is GPU -> NVSwitch -> GPU over two NVLink edges", "[topologies]") {
  const Cluster c(h100_spec(2));
  const std::vector<int> r = c.route(1, 6, 42);
  require_valid_path(c, 1, 6, r);
  REQUIRE(r.size() == 2);
  CHECK(kinds_along(c, r) == std::vector<K>{K::nvswitch, K::gpu});
  for (const int id : r) CHECK(c.edges()[static_cast<std::size_t>(id)].kind == EdgeKind::nvlink);
  CHECK(c.route(3, 3, 0).empty());
}

TEST_CASE("routes: across nodes under one leaf go GPU -> NIC -> leaf -> NIC -> GPU", "[topologies]") {
  const Cluster c(h100_spec(2));  // 16 NICs on one radix-32 leaf
  // GPU 2 of node 0 to GPU 5 of node 1: affinity NICs 2 (node 0) and 5 (node 1).
  const std::vector<int> r = c.route(2, 13, 7);
  require_valid_path(c, 2, 13, r);
  REQUIRE(r.size() == 4);
  CHECK(kinds_along(c, r) == std::vector<K>{K::nic, K::leaf, K::nic, K::gpu});
  CHECK(c.edges()[static_cast<std::size_t>(r[0])].dst == c.nic_vertex(0, 2));
  CHECK(c.edges()[static_cast<std::size_t>(r[2])].dst == c.nic_vertex(1, 5));
  CHECK(c.edges()[static_cast<std::size_t>(r[0])].kind == EdgeKind::pcie);
  CHECK(c.edges()[static_cast<std::size_t>(r[1])].kind == EdgeKind::network);
}

TEST_CASE("routes: different leaves climb to a spine, affinity NIC with fewer NICs than GPUs", "[topologies]") {
  SECTION("radix 16: nodes 0,1 on leaf 0, nodes 2,3 on leaf 1") {
    const Cluster c(h100_spec(4, 8, 16));
    const std::vector<int> r = c.route(0, 16, 1);
    require_valid_path(c, 0, 16, r);
    CHECK(kinds_along(c, r) == std::vector<K>{K::nic, K::leaf, K::spine, K::leaf, K::nic, K::gpu});
    CHECK(vertex_after(c, r, 1).index == 0);
    CHECK(vertex_after(c, r, 3).index == 1);
    // Same leaf (node 0 to node 1) stays below the spine.
    CHECK(c.route(0, 8, 1).size() == 4);
  }
  SECTION("4 NICs for 8 GPUs: local GPU 5 uses NIC 5 * 4 / 8 = 2") {
    const Cluster c(h100_spec(2, 4));
    const std::vector<int> r = c.route(5, 8 + 7, 3);
    require_valid_path(c, 5, 15, r);
    CHECK(c.edges()[static_cast<std::size_t>(r[0])].dst == c.nic_vertex(0, 2));
    CHECK(c.edges()[static_cast<std::size_t>(r[2])].dst == c.nic_vertex(1, 3));
  }
  SECTION("16 NICs for 8 GPUs: GPU g owns NICs 2g and 2g+1, ECMP uses both") {
    const Cluster c(h100_spec(2, 16));
    std::set<int> nics;
    for (std::uint64_t f = 0; f < 64; ++f) {
      const std::vector<int> r = c.route(3, 8 + 3, f);
      require_valid_path(c, 3, 11, r);
      nics.insert(c.edges()[static_cast<std::size_t>(r[0])].dst);
    }
    CHECK(nics == std::set<int>{c.nic_vertex(0, 6), c.nic_vertex(0, 7)});
  }
}

TEST_CASE("ECMP: 1000 flows spread over 8 spines within 30% of the mean, deterministically", "[topologies]") {
  // Radix 8: one leaf per node, 8 up-links each at 1:1 -> 8 spines, every one on a shortest path.
  const Cluster c(h100_spec(4, 8, 8));
  REQUIRE(c.num_spines() == 8);
  std::map<int, int> per_spine;
  std::vector<int> buffer;
  buffer.reserve(static_cast<std::size_t>(c.max_route_edges()));
  for (std::uint64_t flow = 0; flow < 1000; ++flow) {
    c.route(0, 8, flow, buffer);
    require_valid_path(c, 0, 8, buffer);
    REQUIRE(buffer.size() == 6);
    const Vertex& spine = vertex_after(c, buffer, 2);
    REQUIRE(spine.kind == K::spine);
    ++per_spine[spine.index];
  }
  REQUIRE(per_spine.size() == 8);
  for (const auto& [spine, count] : per_spine) {
    INFO("spine " << spine << ": " << count << " flows");
    CHECK(count >= 125 * 0.7);
    CHECK(count <= 125 * 1.3);
  }

  // Deterministic: the same flow id gives the same route, again and on another instance of the cluster.
  const Cluster twin(h100_spec(4, 8, 8));
  for (std::uint64_t flow : {0ULL, 1ULL, 999ULL, 0xFFFFFFFFFFFFFFFFULL}) {
    CHECK(c.route(0, 8, flow) == c.route(0, 8, flow));
    CHECK(c.route(0, 8, flow) == twin.route(0, 8, flow));
  }
  // The choice is a fixed function of (flow, src, dst): this value is the same on every platform.
  CHECK(vertex_after(c, c.route(0, 8, 12345), 2).index == vertex_after(twin, twin.route(0, 8, 12345), 2).index);
}

TEST_CASE("rail-optimized: PXN crosses NVLink to the destination's rail, no spine", "[topologies]") {
  const Cluster c(h100_spec(4, 8, 32, 1.0, "rail-optimized"));
  SECTION("different local index: GPU 1 of node 0 to GPU 5 of node 1 goes via GPU 5 of node 0") {
    const std::vector<int> r = c.route(1, 8 + 5, 9);
    require_valid_path(c, 1, 13, r);
    CHECK(kinds_along(c, r) == std::vector<K>{K::nvswitch, K::gpu, K::nic, K::leaf, K::nic, K::gpu});
    CHECK(c.edges()[static_cast<std::size_t>(r[1])].dst == c.gpu_vertex(5));  // the proxy
    CHECK(c.edges()[static_cast<std::size_t>(r[2])].dst == c.nic_vertex(0, 5));
    CHECK(vertex_after(c, r, 3).index == 5);  // rail leaf 5
    CHECK(c.edges()[static_cast<std::size_t>(r[4])].dst == c.nic_vertex(1, 5));
  }
  SECTION("same local index: straight down the rail") {
    const std::vector<int> r = c.route(2, 8 * 3 + 2, 9);
    require_valid_path(c, 2, 26, r);
    CHECK(kinds_along(c, r) == std::vector<K>{K::nic, K::leaf, K::nic, K::gpu});
    CHECK(vertex_after(c, r, 1).index == 2);
  }
  SECTION("PXN off: the source's own rail, then the spine") {
    ClusterSpec s = h100_spec(4, 8, 32, 1.0, "rail-optimized");
    s.pxn = false;
    const Cluster off(s);
    const std::vector<int> r = off.route(1, 13, 9);
    require_valid_path(off, 1, 13, r);
    CHECK(kinds_along(off, r) == std::vector<K>{K::nic, K::leaf, K::spine, K::leaf, K::nic, K::gpu});
    CHECK(off.edges()[static_cast<std::size_t>(r[0])].dst == off.nic_vertex(0, 1));
  }
  SECTION("plain fat-tree: no PXN") {
    const Cluster ft(h100_spec(4, 8, 16));
    CHECK(kinds_along(ft, ft.route(1, 8 + 5, 9)).front() == K::nic);
  }
}

TEST_CASE("three-tier fat-tree: counts and capacities per tier, worked by hand", "[topologies]") {
  // 16 nodes x 8 NDR NICs = 128 NICs on radix-16 leaves -> 8 leaves, 16 down-ports each.
  // Leaf tier 2:1 -> ceil(16/2) = 8 up-links per leaf. Pods of 4 leaves -> 2 pods x 8 spines = 16 spines,
  // each spine with 4 down-links (one per leaf of its pod). Spine tier 2:1 -> ceil(4/2) = 2 up-links per
  // spine, to core plane s; 8 planes x 2 cores = 16 cores.
  ClusterSpec s = h100_spec(16, 8, 16, 2.0);
  s.tiers = 3;
  s.leaves_per_pod = 4;
  s.spine_oversubscription = 2.0;
  const Cluster c(s);
  CHECK(c.num_leaves() == 8);
  CHECK(c.num_pods() == 2);
  CHECK(c.num_spines() == 16);
  CHECK(c.num_cores() == 16);
  // Vertices: 128 GPUs + 16 NVSwitches + 128 NICs + 8 + 16 + 16 = 312.
  // Cables: 128 GPU-NVSwitch + 128 GPU-NIC + 128 NIC-leaf + 8 x 8 leaf-spine + 16 x 2 spine-core = 480.
  CHECK(c.vertices().size() == 312);
  CHECK(c.edges().size() == 960);

  // Capacities, in NDR links of 48 GB/s: per leaf 16 down vs 8 up (2:1); per pod the leaves bring 4 x 8 =
  // 32 links up to the spines, which carry 8 x 2 = 16 on to the cores (2:1); a pod's 64 NICs reach the
  // cores through 16 links: 4:1 end to end.
  std::map<std::pair<K, K>, int> cables;  // (lower tier, upper tier) -> directed up edges
  for (const Edge& e : c.edges()) {
    const K a = c.vertices()[static_cast<std::size_t>(e.src)].kind;
    const K b = c.vertices()[static_cast<std::size_t>(e.dst)].kind;
    if (e.kind == EdgeKind::network && static_cast<int>(a) < static_cast<int>(b)) ++cables[{a, b}];
  }
  CHECK(cables[{K::nic, K::leaf}] == 128);
  CHECK(cables[{K::leaf, K::spine}] == 64);
  CHECK(cables[{K::spine, K::core}] == 32);
  std::map<int, int> spine_up, spine_down;
  for (const Edge& e : c.edges()) {
    const Vertex& a = c.vertices()[static_cast<std::size_t>(e.src)];
    const Vertex& b = c.vertices()[static_cast<std::size_t>(e.dst)];
    if (a.kind == K::spine && b.kind == K::core) ++spine_up[a.index];
    if (a.kind == K::spine && b.kind == K::leaf) ++spine_down[a.index];
  }
  for (int spine = 0; spine < 16; ++spine) {
    CHECK(spine_down[spine] == 4);
    CHECK(spine_up[spine] == 2);
  }

  SECTION("inter-pod route: leaf -> spine s -> core of plane s -> spine s of the other pod -> leaf") {
    // GPU 0: node 0, NIC 0, leaf 0, pod 0. GPU 64: node 8, global NIC 64, leaf 4, pod 1.
    const std::vector<int> r = c.route(0, 64, 5);
    require_valid_path(c, 0, 64, r);
    CHECK(kinds_along(c, r) ==
          std::vector<K>{K::nic, K::leaf, K::spine, K::core, K::spine, K::leaf, K::nic, K::gpu});
    const int spine_a = vertex_after(c, r, 2).index;
    const int spine_b = vertex_after(c, r, 4).index;
    CHECK(spine_b - spine_a == 8);  // same plane: pod 1's spines are numbered 8..15
    CHECK(vertex_after(c, r, 3).index / 2 == spine_a);  // plane s holds cores 2s, 2s+1
  }
  SECTION("intra-pod route stays below the cores") {
    const std::vector<int> r = c.route(0, 16, 5);  // node 2: NICs 16.. on leaf 1, pod 0
    require_valid_path(c, 0, 16, r);
    CHECK(kinds_along(c, r) == std::vector<K>{K::nic, K::leaf, K::spine, K::leaf, K::nic, K::gpu});
  }
  SECTION("ECMP over the 16 inter-pod paths (8 spines x 2 cores): 2000 flows, each core within 30%") {
    std::map<int, int> per_core;
    std::vector<int> r;
    for (std::uint64_t flow = 0; flow < 2000; ++flow) {
      c.route(0, 64, flow, r);
      ++per_core[vertex_after(c, r, 3).index];
    }
    REQUIRE(per_core.size() == 16);
    for (const auto& [core, count] : per_core) {
      INFO("core " << core << ": " << count);
      CHECK(count >= 125 * 0.7);
      CHECK(count <= 125 * 1.3);
    }
  }
  SECTION("group view: across pods the two ratios multiply") {
    const double ndr = 48e9;
    const std::vector<int> pods = {0, 64};
    const GroupLink across = c.group_link(pods);
    CHECK(across.level == 2);  // core
    CHECK(across.bus_bandwidth_Bps == Approx(ndr / (2.0 * 2.0)));
    CHECK(across.step_latency_s == Approx(6 * 1.0e-6 + 0.6e-6));
    const std::vector<int> one_pod = {0, 16};
    const GroupLink within = c.group_link(one_pod);
    CHECK(within.level == 1);  // spine
    CHECK(within.bus_bandwidth_Bps == Approx(ndr / 2.0));
    CHECK(within.step_latency_s == Approx(4 * 1.0e-6 + 0.6e-6));
  }
  SECTION("one pod: no cores, same as two tiers") {
    ClusterSpec one = s;
    one.leaves_per_pod = 8;
    const Cluster c1(one);
    CHECK(c1.num_cores() == 0);
    CHECK(c1.num_pods() == 1);
    CHECK(c1.num_spines() == 8);
    ClusterSpec two = one;
    two.tiers = 2;
    CHECK(Cluster(two).edges().size() == c1.edges().size());
  }
}

TEST_CASE("PCIe nodes with and without NVLink bridges", "[topologies]") {
  ClusterSpec s = h100_spec(2);
  s.intra = *find_intra_node("pcie-nvlink-bridge");
  const Cluster bridged(s);
  SECTION("a bridged pair uses its bridge: one NVLink edge") {
    const std::vector<int> r = bridged.route(2, 3, 0);
    require_valid_path(bridged, 2, 3, r);
    REQUIRE(r.size() == 1);
    CHECK(bridged.edges()[static_cast<std::size_t>(r[0])].kind == EdgeKind::nvlink);
    CHECK(bridged.edges()[static_cast<std::size_t>(r[0])].bandwidth_Bps == Approx(300e9 * 0.80));
    CHECK(bridged.route(3, 2, 0).size() == 1);
  }
  SECTION("other pairs go over the PCIe switch") {
    const std::vector<int> r = bridged.route(1, 2, 0);
    require_valid_path(bridged, 1, 2, r);
    CHECK(kinds_along(bridged, r) == std::vector<K>{K::pcie_switch, K::gpu});
    for (const int id : r) CHECK(bridged.edges()[static_cast<std::size_t>(id)].kind == EdgeKind::pcie);
  }
  SECTION("group view: a bridged pair sees the bridge, a larger ring sees PCIe") {
    const std::vector<int> pair = {4, 5};
    CHECK(bridged.group_link(pair).bus_bandwidth_Bps == Approx(300e9 * 0.80));
    const std::vector<int> not_pair = {5, 6};
    CHECK(not_pair.size() == 2);
    CHECK(bridged.group_link(not_pair).bus_bandwidth_Bps == Approx(64e9 * 0.80));
    const std::vector<int> four = {0, 1, 2, 3};
    CHECK(bridged.group_link(four).bus_bandwidth_Bps == Approx(64e9 * 0.80));
  }
  SECTION("no PXN on PCIe nodes even on a rail fabric; 4 bridges per 8-GPU node") {
    ClusterSpec r = s;
    r.fabric = "rail-optimized";
    const Cluster rails(r);
    CHECK(kinds_along(rails, rails.route(1, 13, 0)).front() == K::nic);
    int bridges = 0;
    for (const Edge& e : rails.edges()) bridges += e.kind == EdgeKind::nvlink ? 1 : 0;
    CHECK(bridges == 2 * 4 * 2);  // 2 nodes x 4 pairs x 2 directions
  }
  SECTION("plain PCIe: every pair over the switch") {
    ClusterSpec p = h100_spec(1);
    p.intra = *find_intra_node("pcie");
    const Cluster plain(p);
    CHECK(kinds_along(plain, plain.route(0, 1, 0)) == std::vector<K>{K::pcie_switch, K::gpu});
  }
}

TEST_CASE("NVL72: one NVLink hop across trays of a domain, network between domains", "[topologies]") {
  ClusterSpec s = h100_spec(36, 4);
  s.gpus_per_node = 4;
  s.intra = *find_intra_node("nvl72");
  s.nic = *find_net_link("ib-xdr800");
  const Cluster c(s);
  const std::vector<int> same_domain = c.route(0, 71, 3);  // tray 0 to tray 17
  require_valid_path(c, 0, 71, same_domain);
  CHECK(kinds_along(c, same_domain) == std::vector<K>{K::nvswitch, K::gpu});
  const std::vector<int> across = c.route(0, 72, 3);
  require_valid_path(c, 0, 72, across);
  CHECK(kinds_along(c, across).front() == K::nic);
  CHECK(c.spec().intra.nvls);
}

TEST_CASE("every pair routes to a valid path on assorted built clusters", "[topologies]") {
  ClusterSpec three = h100_spec(12, 4, 8, 1.5);
  three.tiers = 3;
  three.leaves_per_pod = 2;
  three.spine_oversubscription = 3.0;
  ClusterSpec uneven = h100_spec(5, 3, 4, 1.0);  // 15 NICs on radix-4 leaves: a partial last leaf
  ClusterSpec rails_blocks = h100_spec(6, 8, 4, 2.0, "rail-optimized");  // two blocks of rail leaves
  rails_blocks.tiers = 3;
  rails_blocks.leaves_per_pod = 8;
  for (const ClusterSpec& spec : {h100_spec(1), h100_spec(3, 8, 8, 2.0, "ethernet"), three, uneven, rails_blocks}) {
    const Cluster c(spec);
    std::vector<int> r;
    for (int a = 0; a < c.num_gpus(); ++a) {
      for (int b = 0; b < c.num_gpus(); ++b) {
        for (std::uint64_t flow = 0; flow < 3; ++flow) {
          c.route(a, b, flow * 7919 + static_cast<std::uint64_t>(a), r);
          require_valid_path(c, a, b, r);
        }
      }
    }
  }
}
