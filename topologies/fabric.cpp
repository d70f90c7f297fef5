// The fabric registry: one row per registration (topologies/fabrics/), in the order the parameter table
// lists them (cluster.inter_node.fabric's choices; the first is the default).
#include "topologies/fabric.hpp"

namespace cs::topo {

// The registrations, one per file in topologies/fabrics/.
Fabric fat_tree_fabric();
Fabric rail_optimized_fabric();
Fabric ethernet_fabric();

const std::vector<Fabric>& fabrics() {
  static const std::vector<Fabric> registry{
      fat_tree_fabric(),
      rail_optimized_fabric(),
      ethernet_fabric(),
  };
  return registry;
}

const Fabric* find_fabric(std::string_view name) {
  for (const Fabric& f : fabrics())
    if (f.name == name) return &f;
  return nullptr;
}

std::vector<std::string> fabric_names() {
  std::vector<std::string> out;
  for (const Fabric& f : fabrics()) out.emplace_back(f.name);
  return out;
}

}  // namespace cs::topo
