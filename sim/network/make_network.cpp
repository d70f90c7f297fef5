#include "sim/network/make_network.hpp"

#include "sim/network/analytical_network.hpp"
#include "sim/network/flow_network.hpp"

namespace cs::sim {

std::unique_ptr<CommBackend> make_network(NetworkBackend backend, const CollectiveTable& graph, const topo::Cluster& cluster,
                                          const std::string& forced_algorithm, const NcclCalibration& calibration) {
  switch (backend) {
    case NetworkBackend::flow:
      return std::make_unique<FlowNetwork>(graph, cluster, FlowNetworkOptions{forced_algorithm, calibration});
    case NetworkBackend::analytical: break;
  }
  return std::make_unique<AnalyticalNetwork>(graph, cluster, forced_algorithm, calibration);
}

}  // namespace cs::sim
