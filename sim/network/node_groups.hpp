#pragma once
// A process group's GPUs by node, as both network back-ends lay out NCCL's algorithms: the nodes in order of
// first appearance in the group, each node's GPUs in the group's order. Scratch kept across calls (a slot per
// cluster node, -1 between calls, and the per-node lists with their storage), so that grouping allocates
// nothing once warm: the flow back-end groups at every collective start, the analytical one a mirrored
// group of 10^6 GPUs over 10^5 nodes.
#include <cstddef>
#include <span>
#include <vector>

#include "topologies/cluster.hpp"

namespace cs::sim {

class NodeGroups {
 public:
  explicit NodeGroups(const topo::Cluster& cluster)
      : gpus_per_node_(cluster.spec().gpus_per_node),
        slot_(static_cast<std::size_t>((cluster.num_gpus() + gpus_per_node_ - 1) / gpus_per_node_), -1) {}

  // Cluster::node_of_gpu, inline (10^7 calls in a mirrored frontier step).
  int node(int gpu) const { return gpu / gpus_per_node_; }

  // The GPUs of `gpus` per node; valid until the next call.
  std::span<const std::vector<int>> of(std::span<const int> gpus) {
    std::size_t used = 0;
    for (const int g : gpus) {
      int& slot = slot_[static_cast<std::size_t>(node(g))];
      if (slot < 0) {
        slot = static_cast<int>(used++);
        if (nodes_.size() < used) nodes_.emplace_back();
        nodes_[used - 1].clear();
      }
      nodes_[static_cast<std::size_t>(slot)].push_back(g);
    }
    for (const int g : gpus) slot_[static_cast<std::size_t>(node(g))] = -1;
    return {nodes_.data(), used};
  }

 private:
  int gpus_per_node_;
  std::vector<int> slot_;                 // per cluster node: its index among the group's nodes, -1 between calls
  std::vector<std::vector<int>> nodes_;   // the first `used` are the group's nodes
};

}  // namespace cs::sim
