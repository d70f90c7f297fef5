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
//
// Zero-bubble schedules (Qi, Wan, Huang, Lin, "Zero Bubble Pipeline Parallelism", ICLR 2024) split each
// backward into B, the input gradient (dgrad GEMMs, attention backward, the norms: what the previous
// stage waits for), and W, the weight gradient (the wgrad GEMMs: nobody downstream waits for it), and
// defer W into the bubbles. The orders are PyTorch's (torch/distributed/pipelining/schedules.py @
// 1fd7abc2f521e4429a29c3088e39ebaca20f4698: _get_1f1b_rank_ops with enable_zero_bubble, and
// ScheduleZBVZeroBubble._calculate_single_rank_operations), the handcrafted schedules of the paper's
// section 3 and 6 (the sail-sg/zero-bubble-pipeline-parallelism runtime, megatron/core/pipeline_parallel/
// zerobubble/, runs the same passes with its WeightGradStore holding each linear's input and output
// gradient until W, megatron/core/zbpp_utils.py @ 7e93f886a24cec4c14712287dda081943d6fd5f0).
//
// ZB-H1 (torch's ScheduleInterleavedZeroBubble with one stage per rank): stage s runs 1F1B's w =
// min(p - s - 1, m) warm-up forwards, then forward, B for the remaining m - w micro-batches, then the w
// outstanding Bs; after each B past the first s of the steady state comes the W of the oldest micro-batch
// whose W is pending, and the s Ws left run at the end. Stage s thus holds s Ws back, exactly the time the
// backward wave takes to come back up, so with F = B = W the step takes m (F + B + W) + (p - 1)(F + B - W):
// the bubble is (p - 1) F, a third of 1F1B's (p - 1)(F + B + W) (the paper's figure 3), at the same number
// of micro-batches in flight.
//
// ZBV (the paper's section 6): v = 2 model chunks per rank in a V: rank s holds virtual stage s (chunk 0)
// and virtual stage 2p - 1 - s (chunk 1), so a micro-batch runs down ranks 0..p-1 in chunk 0, turns on
// rank p - 1 (no transfer), and runs back up in chunk 1 to rank 0, which holds the embedding and the loss.
// Rank s (n = max(2p - 1, m) micro-batches, the actions of micro-batches >= m then dropped):
//   2(p - s) - 1 forwards of chunk 0; s times (F chunk 1, F chunk 0); p - s times (F, B, W of chunk 1);
//   then while forwards remain: F0, B0, W0, F1, B1, W1; then s times (B0, B1); p - s times (B0, W0 of the
//   oldest); the Ws left of chunk 1, then of chunk 0.
// With equal chunk times rank s waits only for the first micro-batch's chunk-0 forward to reach it (s F)
// and never again: the step is 6 m F + (p - 1) F.
//
// DualPipeV (deepseek-ai/DualPipe dualpipe/dualpipev.py @ 3da1bbea53606543d7f5f232338fc58096db30e3,
// DualPipeV.step; Sea AI Lab's "cut-in-half" of DualPipe, DeepSeek-V3 technical report sec. 3.2.1): ZBV's V
// (rank s holds virtual stages s and 2p - 1 - s, one copy of the parameters) with DualPipe's order, whose
// steady state runs a forward of one chunk and the whole backward of the other as one overlapped pair
// (_forward_backward_chunk: the two passes interleaved layer by layer so each one's expert-parallel
// all-to-all and pipeline transfers run beside the other's compute; the step builder runs a pair's layers
// as Megatron-Core's combined 1F1B does, step_builder.cpp). Rank s of p, n >= 2p micro-batches:
//   1: 2(p - s - 1) F0;  2: s + 1 times (F0, F1);  3: p - s - 1 times (B1 split, W, F1);
//   4: n - 2p + s + 1 times (F0 & B1, F1 & B0) (the last rank's first F0, B1 not overlapped);
//   5: p - s - 1 times (B1, F1 & B0);  6: s + 1 times (B1, B0), the later half split into B and W;
//   7: p - s - 1 times (W, B0 split);  8: s + 1 W.
// A W runs the weight gradients of the oldest split backward (DualPipe's WeightGradStore queue). The
// bubble is the DualPipe repository's (PP/2 - 1)(F&B + B - 3W) over its PP = 2p stages, F&B a pair's time.
#include <vector>

#include "models/workload/transformer.hpp"

namespace cs::sim {

using models::PipelineSchedule;

// Which part of a backward pass an action runs: all of it (the schedules without a split), or the
// zero-bubble schedules' B (input gradients) or W (weight gradients).
enum class BackwardPart : unsigned char { whole, input, weight };

struct PipelineAction {
  bool forward;
  int micro_batch;
  int chunk = 0;  // model chunk (virtual stage) of the interleaved and ZBV schedules; 0 otherwise
  BackwardPart part = BackwardPart::whole;  // a backward's part (whole for a forward)
  // DualPipeV: this forward and the backward right after it in the order run as one overlapped pair.
  bool paired_with_next = false;
};

// The V-shaped schedules (ZBV, DualPipeV): rank s holds virtual stages s (chunk 0) and 2p - 1 - s (chunk 1).
inline bool v_shape(PipelineSchedule s) { return s == PipelineSchedule::zbv || s == PipelineSchedule::dualpipev; }

// Whether a schedule splits its backwards into B and W passes.
inline bool splits_backward(PipelineSchedule s) { return s == PipelineSchedule::zb_h1 || v_shape(s); }

std::vector<PipelineAction> pipeline_order(PipelineSchedule schedule, int stages, int micro_batches, int stage,
                                           int virtual_stages = 1);

// The forwards stage `stage` runs before its first backward's turn, the warm-up above: GPipe m, 1F1B and
// ZB-H1 min(p - s - 1, m), interleaved min((p - s - 1) 2 + (v - 1) p, m v), ZBV its forwards before its first B
// less one (2p - 1 of both chunks when m >= 2p - 1), DualPipeV likewise. The memory model sizes the
// activations in flight from it (memory_model.cpp), so the schedule and the memory model cannot disagree.
int warmup_forwards(PipelineSchedule schedule, int stages, int micro_batches, int stage, int virtual_stages = 1);

// The model chunk that virtual micro-batch k's forward runs in the interleaved schedule, (k mod p v) div p
// (0 when v = 1).
int forward_chunk(int k, int stages, int virtual_stages);

// The activations a stage of a splitting schedule holds at its peak, by chunk: forwards whose B has not run
// (`full`: every stored activation) and Bs whose W has not (`weight`: what W reads, the linear layers'
// inputs and output gradients), at the point of the stage's order where full + weight x `weight_share` is
// largest (weight_share: W's bytes over a micro-batch's whole stored activations).
struct InFlight {
  std::vector<int> full, weight;  // by chunk
};
InFlight split_in_flight(PipelineSchedule schedule, int stages, int micro_batches, int stage, int virtual_stages,
                         double weight_share);

}  // namespace cs::sim
