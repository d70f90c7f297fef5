#include "models/parallelism/pipeline_schedule.hpp"

#include <algorithm>
#include <utility>

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

// ZB-H1 (torch's _get_1f1b_rank_ops with enable_zero_bubble and num_1f1b_microbatches = s): 1F1B's
// order with each backward's B, and a W of the oldest pending micro-batch after every B but the first s
// of the steady state; the s held back run at the end.
std::vector<PipelineAction> zb_h1_order(int p, int m, int s) {
  const int warmup = std::min(p - s - 1, m);
  std::vector<PipelineAction> order;
  order.reserve(static_cast<std::size_t>(3 * m));
  int next_fwd = 0, next_b = 0, next_w = 0;
  auto backward = [&](int op) {
    order.push_back({false, next_b++, 0, BackwardPart::input});
    if (op - warmup >= s) order.push_back({false, next_w++, 0, BackwardPart::weight});
  };
  for (int op = 0; op < warmup; ++op) order.push_back({true, next_fwd++});
  for (int op = warmup; op < m; ++op) {
    order.push_back({true, next_fwd++});
    backward(op);
  }
  for (int op = m; op < m + warmup; ++op) backward(op);
  while (next_w < m) order.push_back({false, next_w++, 0, BackwardPart::weight});
  return order;
}

// ZBV (torch's ScheduleZBVZeroBubble._calculate_single_rank_operations): chunk 0 is virtual stage s,
// chunk 1 virtual stage 2p - 1 - s; the phases of the header, over n = max(2p - 1, m) micro-batches, the
// actions of micro-batches >= m dropped.
std::vector<PipelineAction> zbv_order(int p, int m, int s) {
  const int n = std::max(2 * p - 1, m);
  std::vector<PipelineAction> order;
  order.reserve(static_cast<std::size_t>(6 * n));
  int f0 = 0, f1 = 0, b0 = 0, b1 = 0;
  auto f = [&](int chunk) { order.push_back({true, chunk == 0 ? f0++ : f1++, chunk}); };
  auto b = [&](int chunk) { order.push_back({false, chunk == 0 ? b0++ : b1++, chunk, BackwardPart::input}); };
  auto w = [&](int chunk, int mb) { order.push_back({false, mb, chunk, BackwardPart::weight}); };
  for (int i = 0; i < 2 * (p - s) - 1; ++i) f(0);
  for (int i = 0; i < s; ++i) f(1), f(0);
  for (int i = 0; i < p - s; ++i) {
    f(1);
    b(1), w(1, b1 - 1);
  }
  while (f1 < f0 || f0 < n) {
    if (f0 < n) f(0);
    b(0), w(0, b0 - 1);
    f(1);
    b(1), w(1, b1 - 1);
  }
  int w0 = b0, w1 = b1;
  for (int i = 0; i < s; ++i) b(0), b(1);
  for (int i = 0; i < p - s; ++i) b(0), w(0, w0++);
  while (w1 < b1) w(1, w1++);
  while (w0 < b0) w(0, w0++);
  CS_CHECK(f0 == n && b0 == n && w0 == n && f1 == n && b1 == n && w1 == n);
  std::erase_if(order, [m](const PipelineAction& a) { return a.micro_batch >= m; });
  return order;
}

// DualPipeV (pipeline_schedule.hpp; DualPipeV.step in deepseek-ai/DualPipe dualpipe/dualpipev.py @ 3da1bbe):
// its eight steps, a split backward's W queued until a W action takes the oldest.
std::vector<PipelineAction> dualpipev_order(int p, int m, int s) {
  CS_CHECK(m >= 2 * p);
  std::vector<PipelineAction> order;
  order.reserve(static_cast<std::size_t>(6 * m));
  int f0 = 0, f1 = 0, b0 = 0, b1 = 0;
  std::vector<std::pair<int, int>> weights;  // (chunk, micro-batch) of the split backwards, FIFO
  std::size_t next_w = 0;
  auto f = [&](int chunk, bool paired = false) {
    PipelineAction a{true, chunk == 0 ? f0++ : f1++, chunk};
    a.paired_with_next = paired;
    order.push_back(a);
  };
  auto b = [&](int chunk, bool split) {
    const int mb = chunk == 0 ? b0++ : b1++;
    order.push_back({false, mb, chunk, split ? BackwardPart::input : BackwardPart::whole});
    if (split) weights.emplace_back(chunk, mb);
  };
  auto w = [&] {
    CS_CHECK(next_w < weights.size());
    const auto [chunk, mb] = weights[next_w++];
    order.push_back({false, mb, chunk, BackwardPart::weight});
  };
  auto pair = [&](int f_chunk, int b_chunk) { f(f_chunk, true), b(b_chunk, false); };
  for (int i = 0; i < 2 * (p - s - 1); ++i) f(0);                    // step 1: nF0
  for (int i = 0; i < s + 1; ++i) f(0), f(1);                        // step 2: nF0F1
  for (int i = 0; i < p - s - 1; ++i) b(1, true), w(), f(1);         // step 3: nB1W1F1
  for (int i = 0; i < m - 2 * p + s + 1; ++i) {                      // step 4: nF0B1F1B0
    if (i == 0 && s == p - 1)
      f(0), b(1, false);  // "we don't overlap these two chunks to further reduce bubble size"
    else
      pair(0, 1);
    pair(1, 0);
  }
  for (int i = 0; i < p - s - 1; ++i) b(1, false), pair(1, 0);      // step 5: nB1F1B0
  bool split = false;                                                // step 6: nB1B0, the later half split
  for (int i = 0; i < s + 1; ++i) {
    if (i == (s + 1) / 2 && s % 2 == 1) split = true;
    b(1, split);
    if (i == (s + 1) / 2 && s % 2 == 0) split = true;
    b(0, split);
  }
  for (int i = 0; i < p - s - 1; ++i) w(), b(0, true);               // step 7: nWB0
  for (int i = 0; i < s + 1; ++i) w();                               // step 8: nW
  CS_CHECK(f0 == m && f1 == m && b0 == m && b1 == m && next_w == weights.size());
  return order;
}

}  // namespace

int warmup_forwards(PipelineSchedule schedule, int stages, int micro_batches, int stage, int virtual_stages) {
  switch (schedule) {
    case PipelineSchedule::gpipe: return micro_batches;
    case PipelineSchedule::interleaved:
      return std::min((stages - stage - 1) * 2 + (virtual_stages - 1) * stages, micro_batches * virtual_stages);
    case PipelineSchedule::zbv:
    case PipelineSchedule::dualpipev: {
      const auto order = schedule == PipelineSchedule::zbv ? zbv_order(stages, micro_batches, stage)
                                                           : dualpipev_order(stages, micro_batches, stage);
      int forwards = 0;
      while (order[static_cast<std::size_t>(forwards)].forward) ++forwards;
      return forwards - 1;
    }
    case PipelineSchedule::one_f_one_b:
    case PipelineSchedule::zb_h1: break;
  }
  return std::min(stages - stage - 1, micro_batches);
}

int forward_chunk(int k, int stages, int virtual_stages) { return (k % (stages * virtual_stages)) / stages; }

std::vector<PipelineAction> pipeline_order(PipelineSchedule schedule, int stages, int micro_batches, int stage,
                                           int virtual_stages) {
  CS_CHECK(stages >= 1 && micro_batches >= 1 && stage >= 0 && stage < stages && virtual_stages >= 1);
  if (schedule == PipelineSchedule::interleaved) return interleaved_order(stages, micro_batches, stage, virtual_stages);
  if (schedule == PipelineSchedule::zbv) {
    CS_CHECK(virtual_stages == 2);
    return zbv_order(stages, micro_batches, stage);
  }
  if (schedule == PipelineSchedule::dualpipev) {
    CS_CHECK(virtual_stages == 2);
    return dualpipev_order(stages, micro_batches, stage);
  }
  CS_CHECK(virtual_stages == 1);
  if (schedule == PipelineSchedule::zb_h1) return zb_h1_order(stages, micro_batches, stage);
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

InFlight split_in_flight(PipelineSchedule schedule, int stages, int micro_batches, int stage, int virtual_stages,
                         double weight_share) {
  CS_CHECK(splits_backward(schedule));
  const std::size_t v = static_cast<std::size_t>(virtual_stages);
  InFlight now{std::vector<int>(v, 0), std::vector<int>(v, 0)}, peak = now;
  double peak_bytes = -1;
  for (const PipelineAction& a : pipeline_order(schedule, stages, micro_batches, stage, virtual_stages)) {
    const std::size_t c = static_cast<std::size_t>(a.chunk);
    if (a.forward) {
      ++now.full[c];
    } else if (a.part == BackwardPart::whole) {  // DualPipeV's unsplit backwards free it all
      --now.full[c];
      continue;
    } else if (a.part == BackwardPart::input) {
      --now.full[c], ++now.weight[c];
    } else {
      --now.weight[c];
      continue;  // a W only frees memory
    }
    // The peak is found weighing a micro-batch alike in every chunk (chunks hold equal layers unless an
    // uneven pipeline split is asked for; the memory model then weighs each chunk by its own layers).
    double bytes = 0;
    for (std::size_t k = 0; k < v; ++k) bytes += now.full[k] + weight_share * now.weight[k];
    if (bytes > peak_bytes) peak_bytes = bytes, peak = now;
  }
  return peak;
}

}  // namespace cs::sim
