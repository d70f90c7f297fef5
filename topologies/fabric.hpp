#pragma once
// Scale-out fabrics: one registration per fabric, and the registry that lists them.
//
// A fabric is everything the simulator knows about a kind of scale-out network, in one place:
// - its name (cluster.inter_node.fabric; the parameter table's choices are fabric_names()) and a line
//   saying what it is;
// - its capabilities, as fields (never a check on its name elsewhere): `rails` says NIC j of every node
//   plugs into rail j's switch, so NCCL's PXN can move cross-rail traffic over NVLink to the peer GPU on
//   the destination's rail;
// - the scenario keys it reads (cluster.inter_node.<key>), each bound to a ClusterSpec field with its
//   default; the scenario reader reads exactly these, the parameter table holds their ranges and help;
// - its switch levels (FabricLevel, cluster.hpp): name, oversubscription and ring-step hops of each, bottom
//   up; the network models read a group's span as one of these levels, never a tier's name;
// - its builder: NIC placement, then cabling (the vertices and edges of its switches and the route tables
//   behind them), the level a group's cross-node ring steps meet at, and the switch part of a route
//   between two NICs (with its ECMP path alternatives).
//
// The registry is a fixed table (topologies/fabric.cpp): no global mutable state, no static registration
// order to depend on. Adding a fabric is one file in topologies/fabrics/ defining its registration, one
// line in that table, and its file in topologies/CMakeLists.txt; docs/architecture.md walks through it.
//
// Shared code: the two- and three-tier leaf / spine / core cabling, its levels, its keys, its span rule and
// its routes are topologies/fabrics/tree.hpp; fat-tree, ethernet and rail-optimized call it and differ
// only in how NICs take leaf ports.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "topologies/cluster.hpp"

namespace cs::topo {

// A scenario key of the fabric: cluster.inter_node.<key>, read into one ClusterSpec field (exactly one of
// `integer` and `number` is set) with `default_value` when absent. Its range and help are its row in the
// parameter table (sim/scenario/params.json), which a test keeps in step.
struct FabricKey {
  const char* key;
  int ClusterSpec::*integer = nullptr;
  double ClusterSpec::*number = nullptr;
  double default_value = 0;
};

struct Fabric {
  std::string_view name;
  std::string_view description;
  bool rails = false;  // NIC j of every node on rail j's switch: PXN applies (cluster.hpp, "PXN")
  std::vector<FabricKey> keys;
  // The switch levels of a cluster of this spec, bottom up (at least one).
  std::vector<FabricLevel> (*levels)(const ClusterSpec& spec) = nullptr;
  // NIC placement: which switch port each NIC takes (for the trees: c.nic_leaf and c.num_leaves).
  void (*place_nics)(Cluster::Impl& cluster) = nullptr;
  // Cabling: the switches, the NICs' cables (NICs already added, first_nic on) and the route tables.
  void (*build)(Cluster::Impl& cluster) = nullptr;
  // The level at which the cross-node ring steps of a group meet, from the local NICs each of its nodes
  // uses (node -> NICs, nodes in order).
  int (*group_level)(const Cluster::Impl& cluster, const std::map<int, std::set<int>>& nics_per_node) = nullptr;
  // Appends the switch edges of a route from global NIC nic_a (after its up-link, at the switch it plugs
  // into) to global NIC nic_b's switch (before its down-link). ECMP choices use detail::ecmp_pick with
  // decisions 1 and up (decision 0 is the NIC's).
  void (*route)(const Cluster::Impl& cluster, std::uint64_t flow_id, int src_gpu, int dst_gpu, int nic_a, int nic_b,
                std::vector<int>& out) = nullptr;
};

// The registered fabric of this name; nullptr when there is none.
const Fabric* find_fabric(std::string_view name);
// Every registered fabric's name, in the registry's order (the parameter table's choices).
std::vector<std::string> fabric_names();
// Every registration, in order.
const std::vector<Fabric>& fabrics();

}  // namespace cs::topo
