// libFuzzer harness: the topology file reader (topologies/topology_file.hpp), GraphML or DOT by the first
// character as load_topology decides. Bad input ends in TopologyError; anything else is a finding.
// Seeds: tests/topologies/data/.
#include <cstddef>
#include <cstdint>
#include <string>

#include "topologies/topology_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)cs::topo::load_topology_text(text, "fuzz.topology");
  } catch (const cs::InputError&) {
  }
  return 0;
}
