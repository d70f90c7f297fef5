// "ethernet": an Ethernet (RoCE or TCP) Clos of the same shape as the fat tree; the link (NetLinkSpec), not
// the fabric, carries what differs (efficiency, latency, no in-network reduction).
#include "topologies/fabrics/tree.hpp"

namespace cs::topo {

Fabric ethernet_fabric() {
  return tree::fabric("ethernet", "an Ethernet Clos shaped as the fat tree (leaf, spine, core); NICs fill the leaves in order", false,
                      tree::place_nics_in_order);
}

}  // namespace cs::topo
