// The fabric registry (topologies/fabric.hpp): every registration builds connected clusters of every shape
// its keys allow, declares its levels bottom up, and its capabilities are fields, not names.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

#include "topologies/cluster.hpp"
#include "topologies/fabric.hpp"
#include "topologies/link_catalog.hpp"

using namespace cs::topo;

namespace {

ClusterSpec spec_on(const Fabric& f, int nodes, int tiers) {
  ClusterSpec s;
  s.nodes = nodes;
  s.gpus_per_node = 8;
  s.intra = *find_intra_node("nvswitch");
  s.intra.gpu_bandwidth_GBps = 450.0;
  s.nic = *find_net_link("ib-ndr400");
  s.nics_per_node = 8;
  s.fabric = std::string(f.name);
  for (const FabricKey& k : f.keys) {
    if (k.integer) s.*k.integer = static_cast<int>(k.default_value);
    if (k.number) s.*k.number = k.default_value;
  }
  s.leaf_radix = 16;
  s.leaves_per_pod = 2;
  s.tiers = tiers;
  s.oversubscription = 2.0;
  s.spine_oversubscription = 4.0;
  return s;
}

}  // namespace

TEST_CASE("every registered fabric builds connected clusters, one node to three tiers", "[topologies]") {
  REQUIRE(!fabrics().empty());
  for (const Fabric& f : fabrics()) {
    INFO(std::string(f.name));
    CHECK(!f.description.empty());
    CHECK(f.levels != nullptr);
    CHECK(f.place_nics != nullptr);
    CHECK(f.build != nullptr);
    CHECK(f.group_level != nullptr);
    CHECK(f.route != nullptr);
    for (const int nodes : {1, 2, 5, 16}) {
      for (const int tiers : {2, 3}) {
        const Cluster c(spec_on(f, nodes, tiers));
        CHECK(c.connected());
        CHECK(!c.levels().empty());
        // Every route between the first GPU and every other ends where it should.
        for (int dst = 1; dst < c.num_gpus(); ++dst) {
          const std::vector<int> path = c.route(0, dst, 7);
          REQUIRE(!path.empty());
          CHECK(c.edges()[static_cast<std::size_t>(path.front())].src == 0);
          CHECK(c.edges()[static_cast<std::size_t>(path.back())].dst == dst);
          CHECK(static_cast<int>(path.size()) <= c.max_route_edges());
        }
      }
    }
  }
}

TEST_CASE("fabric names are unique, found by name, and fat-tree is the default", "[topologies]") {
  const std::vector<std::string> names = fabric_names();
  CHECK(std::set<std::string>(names.begin(), names.end()).size() == names.size());
  CHECK(names.front() == ClusterSpec{}.fabric);
  for (const std::string& n : names) CHECK(find_fabric(n) != nullptr);
  CHECK(find_fabric("dragonfly") == nullptr);
}

TEST_CASE("a tree fabric's levels: leaf, spine and with three tiers core, oversubscription and hops", "[topologies]") {
  const Fabric& f = *find_fabric("fat-tree");
  const Cluster two(spec_on(f, 16, 2));
  REQUIRE(two.levels().size() == 2);
  CHECK(two.levels()[0].name == "leaf");
  CHECK(two.levels()[0].oversubscription == 1.0);
  CHECK(two.levels()[0].hops == 2);
  CHECK(two.levels()[1].oversubscription == 2.0);
  CHECK(two.levels()[1].hops == 4);
  const Cluster three(spec_on(f, 16, 3));
  REQUIRE(three.levels().size() == 3);
  CHECK(three.levels()[2].name == "core");
  CHECK(three.levels()[2].oversubscription == 4.0);
  CHECK(three.levels()[2].hops == 6);
  // 16 nodes x 8 NICs on 16-port leaves: 8 leaves, 2 per pod. GPU 0 and GPU 8 (node 1) share leaf 0; node 2
  // is on leaf 1 (same pod); node 4 on leaf 2 (the next pod). Switch levels of the vertices agree.
  CHECK(three.span_name(three.group_link(std::vector<int>{0, 8})) == "leaf");
  CHECK(three.span_name(three.group_link(std::vector<int>{0, 16})) == "spine");
  CHECK(three.span_name(three.group_link(std::vector<int>{0, 32})) == "core");
  CHECK(three.span_name(three.group_link(std::vector<int>{0, 1})) == "node");
  CHECK(three.span_name(three.group_link(std::vector<int>{3})) == "gpu");
  std::set<int> levels_seen;
  for (int v = 0; v < static_cast<int>(three.vertices().size()); ++v) levels_seen.insert(three.switch_level(v));
  CHECK(levels_seen == std::set<int>{-1, 0, 1, 2});
  CHECK(three.switch_level(0) == -1);  // a GPU
}

TEST_CASE("fabric capabilities are fields: rails bring PXN, the links say in-network reduction", "[topologies]") {
  CHECK(find_fabric("rail-optimized")->rails);
  CHECK_FALSE(find_fabric("fat-tree")->rails);
  CHECK_FALSE(find_fabric("ethernet")->rails);
  // PXN on rails: the cross-rail route GPU 0 -> GPU 9 (node 1, local 1) first crosses NVLink to local GPU 1.
  const Cluster rails(spec_on(*find_fabric("rail-optimized"), 2, 2));
  const std::vector<int> pxn = rails.route(0, 9, 0);
  CHECK(rails.edges()[static_cast<std::size_t>(pxn[1])].dst == 1);
  const Cluster tree(spec_on(*find_fabric("fat-tree"), 2, 2));
  CHECK(tree.vertices()[static_cast<std::size_t>(tree.edges()[static_cast<std::size_t>(tree.route(0, 9, 0)[0])].dst)].kind ==
        VertexKind::nic);
  for (const std::string& name : net_link_names())
    CHECK(find_net_link(name)->in_network_reduction == (name.rfind("ib-", 0) == 0));
  CHECK(find_intra_node("nvswitch")->generation_from_gpu);
  CHECK_FALSE(find_intra_node("nvl72")->generation_from_gpu);
  CHECK_FALSE(find_intra_node("pcie")->nvlink);
  CHECK(find_intra_node("pcie-nvlink-bridge")->nvlink);
  CHECK(find_intra_node("nvl72")->domain_gpus == 72);
}
