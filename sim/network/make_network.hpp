#pragma once
// The one place a network backend is chosen: analytical (closed-form per collective) or flow (routed
// flows sharing links max-min fairly), both behind the engine's CommBackend interface.
#include <memory>
#include <string>

#include "sim/base/network_backend.hpp"
#include "sim/engine/comm_backend.hpp"
#include "sim/engine/task_graph.hpp"
#include "sim/network/nccl_model.hpp"
#include "topologies/cluster.hpp"

namespace cs::sim {

// `forced_algorithm`: "" for NCCL's own choice, else "ring", "tree", "nvls" or "hierarchical".
// `calibration`: the profile's fitted NCCL constants (nccl_model_fit.hpp), the same for both back-ends.
std::unique_ptr<CommBackend> make_network(NetworkBackend backend, const CollectiveTable& graph, const topo::Cluster& cluster,
                                          const std::string& forced_algorithm, const NcclCalibration& calibration = {});

}  // namespace cs::sim
