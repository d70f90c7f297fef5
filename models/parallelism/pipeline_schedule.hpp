#pragma once
// Pipeline schedules: the order in which one pipeline stage runs the forward and backward passes of
// its micro-batches. The executor then runs them against the real dependencies (stage s's forward of
// micro-batch j needs stage s-1's; its backward needs stage s+1's), so bubbles come out of the
// simulation rather than from a formula.
//
// GPipe: all m forwards, then all m backwards.
// 1F1B (PipeDream-Flush, Megatron's default): stage s of p first runs w = min(p - s - 1, m) warm-up
// forwards, then alternates one forward and one backward for the remaining m - w micro-batches, then
// drains the w outstanding backwards. At most p - s micro-batches are ever in flight on stage s (the
// memory advantage over GPipe), and with equal stage times the step takes (m + p - 1)(t_f + t_b):
// bubble fraction (p - 1)/(m + p - 1).
//
// Interleaved 1F1B (Narayanan et al. 2021, Megatron-LM's forward_backward_pipelining_with_interleaving):
// stage s holds v model chunks; chunk c of stage s runs layers [(c p + s) L / (p v), (c p + s + 1) L /
// (p v)), so a micro-batch passes stage 0..p-1 in chunk 0, wraps from stage p-1 back to stage 0 for
// chunk 1, and so on. Each stage runs m v "virtual micro-batches" k = 0 .. m v - 1, taken in groups of
// p micro-batches per chunk (Megatron's microbatch_group_size_per_vp_stage = p):
//   forward chunk of k   = (k mod p v) div p          micro-batch of k = (k div p v) p + k mod p
//   backward chunk of k  = v - 1 - (k mod p v) div p   (backward runs the chunks in reverse)
// Warm-up w = min((p - s - 1) 2 + (v - 1) p, m v) forwards, then 1F1B over the virtual micro-batches
// (forward k + w, backward k), then the remaining backwards. Megatron requires m to be a multiple of p
// (checked by the scenario validator). With equal chunk times t_f / v and t_b / v the step takes
// m (t_f + t_b) + (p - 1)(t_f + t_b) / v: the bubble shrinks v-fold, (p - 1)/(v m) of the ideal time,
// at the price of v times more pipeline sends and more activations in flight (memory_model.hpp).
#include <vector>

#include "models/workload/transformer.hpp"

namespace cs::sim {

using models::PipelineSchedule;

struct PipelineAction {
  bool forward;
  int micro_batch;
  int chunk = 0;  // model chunk (virtual stage) of the interleaved schedule; 0 otherwise
};

std::vector<PipelineAction> pipeline_order(PipelineSchedule schedule, int stages, int micro_batches, int stage,
                                           int virtual_stages = 1);

// The forwards stage `stage` runs before its first backward's turn, the warm-up above: GPipe m, 1F1B
// min(p - s - 1, m), interleaved min((p - s - 1) 2 + (v - 1) p, m v). The memory model sizes the
// activations in flight from it (memory_model.cpp), so the schedule and the memory model cannot disagree.
int warmup_forwards(PipelineSchedule schedule, int stages, int micro_batches, int stage, int virtual_stages = 1);

// The model chunk that virtual micro-batch k's forward runs in the interleaved schedule, (k mod p v) div p
// (0 when v = 1).
int forward_chunk(int k, int stages, int virtual_stages);

}  // namespace cs::sim
