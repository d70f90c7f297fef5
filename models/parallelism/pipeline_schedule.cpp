#include "models/parallelism/pipeline_schedule.hpp"

#include <algorithm>

#include "sim/base/check.hpp"

namespace cs::sim {

namespace {

std::vector<PipelineAction> interleaved_order(int p, int m, int s, int v) {
  CS_CHECK(m % p == 0);
  const int total = m * v;
  auto chunk_of = [&](int k, bool forward) {
    const int c = (k % (p * v)) / p;
    return forward ? c : v - 1 - c;
  };
  auto micro_batch_of = [&](int k) { return (k / (p * v)) * p + k % p; };
  auto action = [&](int k, bool forward) { return PipelineAction{forward, micro_batch_of(k), chunk_of(k, forward)}; };
  const int warmup = std::min((p - s - 1) * 2 + (v - 1) * p, total);
  std::vector<PipelineAction> order;
  order.reserve(static_cast<std::size_t>(2 * total));
  for (int k = 0; k < warmup; ++k) order.push_back(action(k, true));
  for (int k = 0; k + warmup < total; ++k) {
    order.push_back(action(k + warmup, true));
    order.push_back(action(k, false));
  }
  for (int k = total - warmup; k < total; ++k) order.push_back(action(k, false));
  return order;
}

}  // namespace

std::vector<PipelineAction> pipeline_order(PipelineSchedule schedule, int stages, int micro_batches, int stage,
                                           int virtual_stages) {
  CS_CHECK(stages >= 1 && micro_batches >= 1 && stage >= 0 && stage < stages && virtual_stages >= 1);
  if (schedule == PipelineSchedule::interleaved) return interleaved_order(stages, micro_batches, stage, virtual_stages);
  CS_CHECK(virtual_stages == 1);
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
