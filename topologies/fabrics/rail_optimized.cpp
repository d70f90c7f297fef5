// "rail-optimized": NIC j of every node of a block of leaf_radix nodes plugs into that block's rail leaf j
// (NVIDIA's DGX SuperPOD rails), the spines and cores above as in the fat tree. Rails make PXN possible:
// cross-rail traffic crosses NVLink to the peer GPU on the destination's rail (cluster.hpp, "PXN").
#include "sim/base/check.hpp"
#include "topologies/cluster_impl.hpp"
#include "topologies/fabrics/tree.hpp"

namespace cs::topo {
namespace {

// Rail j of each block of `radix` nodes is one leaf; NIC j of a node plugs into its rail.
void place_nics_on_rails(Cluster::Impl& c) {
  const ClusterSpec& s = c.spec;
  const int n_nics = s.nics_per_node;
  CS_CHECK(s.leaf_radix >= 1);
  c.nic_leaf.assign(static_cast<std::size_t>(s.nodes * n_nics), -1);
  c.num_leaves = (s.nodes + s.leaf_radix - 1) / s.leaf_radix * n_nics;
  for (int node = 0; node < s.nodes; ++node) {
    for (int j = 0; j < n_nics; ++j) c.nic_leaf[static_cast<std::size_t>(node * n_nics + j)] = (node / s.leaf_radix) * n_nics + j;
  }
}

}  // namespace

Fabric rail_optimized_fabric() {
  return tree::fabric("rail-optimized", "NIC j of each block of leaf_radix nodes on that block's rail leaf j; spines and cores as the fat tree",
                      true, place_nics_on_rails);
}

}  // namespace cs::topo
