#pragma once
// Internal to topologies/: the two- and three-tier leaf / spine / core fabric that the fat-tree, ethernet and
// rail-optimized registrations share (cluster.hpp's essay has the model, cluster.cpp's header the cabling
// rules). A registration picks how NICs take leaf ports (place_nics_in_order, or its own) and calls
// cable_tree for the rest; its levels, keys, span rule and routes are these functions.
#include <cstdint>
#include <map>
#include <set>
#include <string_view>
#include <vector>

#include "topologies/fabric.hpp"

namespace cs::topo::tree {

// A tree registration: these keys, levels, cabling, span rule and routes, with its own NIC placement.
Fabric fabric(std::string_view name, std::string_view description, bool rails, void (*place_nics)(Cluster::Impl&));

// cluster.inter_node.oversubscription, leaf_radix, tiers, leaves_per_pod, spine_oversubscription.
std::vector<FabricKey> keys();
// leaf (1, 2 hops), spine (oversubscription, 4 hops), and with three tiers core (spine_oversubscription, 6).
std::vector<FabricLevel> levels(const ClusterSpec& spec);
// The levels a loaded cluster's switches may have: leaf, spine and core at the spec's figures.
std::vector<FabricLevel> loaded_levels(const ClusterSpec& spec);
// Global NIC n*N + j on leaf (n*N + j) / leaf_radix: NICs fill the leaves' down-ports in order.
void place_nics_in_order(Cluster::Impl& c);
// Leaves (for the placement in c.nic_leaf, c.num_leaves), their NIC cables, spines and cores.
void cable_tree(Cluster::Impl& c);
// 0 (leaf) when the group's cross-node ring steps stay under one leaf, 1 (spine) inside one pod, else 2.
int group_level(const Cluster::Impl& c, const std::map<int, std::set<int>>& nics_per_node);
// leaf [-> spine [-> core -> spine] -> leaf], ECMP decisions 1 (spine) and 2 (core).
void route(const Cluster::Impl& c, std::uint64_t flow_id, int src, int dst, int nic_a, int nic_b, std::vector<int>& out);

}  // namespace cs::topo::tree
