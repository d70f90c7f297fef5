#include "models/parallelism/pipeline_schedule.hpp"

#include <algorithm>

#include "sim/base/check.hpp"

namespace cs::sim {

namespace {

// The interleaved order's k-th forward (or backward) pass in k = 0, 1, ... order, stepped without a
// division per pass: micro-batch (k / (p v)) p + k % p, forward chunk (k % (p v)) / p (forward_chunk),
// a backward's chunk v - 1 minus that.
struct InterleavedPasses {
  int p, v;
  bool forward;
  int group = 0, chunk = 0, slot = 0;  // k / (p v), (k % (p v)) / p, k % p
  PipelineAction next() {
    const PipelineAction a{forward, group * p + slot, forward ? chunk : v - 1 - chunk};
    if (++slot == p) {
      slot = 0;
      if (++chunk == v) chunk = 0, ++group;
    }
    return a;
  }
};

std::vector<PipelineAction> interleaved_order(int p, int m, int s, int v) {
  CS_CHECK(m % p == 0);
  const int total = m * v;
  const int warmup = warmup_forwards(PipelineSchedule::interleaved, p, m, s, v);
  InterleavedPasses forward{p, v, true}, backward{p, v, false};
  std::vector<PipelineAction> order;
  order.reserve(static_cast<std::size_t>(2 * total));
  for (int k = 0; k < warmup; ++k) order.push_back(forward.next());
  for (int k = 0; k + warmup < total; ++k) {
    order.push_back(forward.next());
    order.push_back(backward.next());
  }
  for (int k = total - warmup; k < total; ++k) order.push_back(backward.next());
  return order;
}

}  // namespace

int warmup_forwards(PipelineSchedule schedule, int stages, int micro_batches, int stage, int virtual_stages) {
  switch (schedule) {
    case PipelineSchedule::gpipe: return micro_batches;
    case PipelineSchedule::interleaved:
      return std::min((stages - stage - 1) * 2 + (virtual_stages - 1) * stages, micro_batches * virtual_stages);
    case PipelineSchedule::one_f_one_b: break;
  }
  return std::min(stages - stage - 1, micro_batches);
}

int forward_chunk(int k, int stages, int virtual_stages) { return (k % (stages * virtual_stages)) / stages; }

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
  const int warmup = warmup_forwards(schedule, stages, micro_batches, stage);
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
