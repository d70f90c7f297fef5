#include "sim/pipeline_schedule.hpp"

#include <algorithm>

#include "sim/check.hpp"

namespace cs::sim {

std::vector<PipelineAction> pipeline_order(PipelineSchedule schedule, int stages, int micro_batches, int stage) {
  CS_CHECK(stages >= 1 && micro_batches >= 1 && stage >= 0 && stage < stages);
  std::vector<PipelineAction> order;
  order.reserve(static_cast<std::size_t>(2 * micro_batches));
  if (schedule == PipelineSchedule::gpipe) {
    for (int j = 0; j < micro_batches; ++j) order.push_back({true, j});
    for (int j = 0; j < micro_batches; ++j) order.push_back({false, j});
    return order;
  }
  const int warmup = std::min(stages - stage - 1, micro_batches);
  int next_fwd = 0, next_bwd = 0;
  for (int i = 0; i < warmup; ++i) order.push_back({true, next_fwd++});
  while (next_fwd < micro_batches) {
    order.push_back({true, next_fwd++});
    order.push_back({false, next_bwd++});
  }
  while (next_bwd < micro_batches) order.push_back({false, next_bwd++});
  return order;
}

}  // namespace cs::sim
