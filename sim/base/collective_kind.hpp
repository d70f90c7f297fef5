#pragma once
// The collectives the engine knows how to schedule (NCCL's set, plus point-to-point send/recv). The
// engine only carries the kind from the task graph to the network backend; the workload (models/workload
// /op.hpp) names its collective calls with the same enum, so this vocabulary lives at the bottom layer.
#include <cstdint>

namespace cs::sim {

enum class CollectiveKind : std::uint8_t { all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, send_recv };

}  // namespace cs::sim
