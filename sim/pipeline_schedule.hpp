#pragma once
// Pipeline schedules: the order in which one pipeline stage runs the forward and backward passes of
// its micro-batches. The executor then runs them against the real dependencies (stage s's forward of
// micro-batch j needs stage s-1's; its backward needs stage s+1's), so bubbles come out of the
// simulation rather than from a formula.
//
// GPipe: all m forwards, then all m backwards (in reverse micro-batch order as GPipe flushes).
// 1F1B (PipeDream-Flush, Megatron's default): stage s of p first runs w = min(p - s - 1, m) warm-up
// forwards, then alternates one forward and one backward for the remaining m - w micro-batches, then
// drains the w outstanding backwards. At most p - s micro-batches are ever in flight on stage s (the
// memory advantage over GPipe), and with equal stage times the step takes (m + p - 1)(t_f + t_b):
// bubble fraction (p - 1)/(m + p - 1).
#include <vector>

#include "models/transformer.hpp"

namespace cs::sim {

using models::PipelineSchedule;

struct PipelineAction {
  bool forward;
  int micro_batch;
};

std::vector<PipelineAction> pipeline_order(PipelineSchedule schedule, int stages, int micro_batches, int stage);

}  // namespace cs::sim
