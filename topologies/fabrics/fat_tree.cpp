// "fat-tree": the InfiniBand leaf / spine (/ core) tree, NICs filling the leaves' down-ports in order.
#include "topologies/fabrics/tree.hpp"

namespace cs::topo {

Fabric fat_tree_fabric() {
  return tree::fabric("fat-tree", "two or three switch tiers (leaf, spine, core in pods); NICs fill the leaves in order", false,
                      tree::place_nics_in_order);
}

}  // namespace cs::topo
