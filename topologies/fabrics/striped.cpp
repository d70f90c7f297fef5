// "striped" (a toy for docs/architecture.md's walk-through): NIC j of node n on leaf (n + j) mod leaves,
// each node's NICs spread over the leaves; spines and cores as the fat tree.
#include <cstddef>

#include "topologies/cluster_impl.hpp"
#include "topologies/fabrics/tree.hpp"

namespace cs::topo {
namespace {

void place_nics_striped(Cluster::Impl& c) {
  tree::place_nics_in_order(c);  // the leaf count of the fat tree
  const int per_node = c.spec.nics_per_node;
  for (int node = 0; node < c.spec.nodes; ++node)
    for (int j = 0; j < per_node; ++j) c.nic_leaf[static_cast<std::size_t>(node * per_node + j)] = (node + j) % c.num_leaves;
}

}  // namespace

Fabric striped_fabric() {
  return tree::fabric("striped", "toy: each node's NICs spread over the leaves; spines and cores as the fat tree", false, place_nics_striped);
}

}  // namespace cs::topo
