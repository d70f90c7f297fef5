#pragma once
// The screening tier of the layout search: a closed-form step time for one layout, cheap enough
// (tens of microseconds) to rank every enumerated layout before the discrete-event simulation verifies
// the best few (`clustersim sweep --search --verify K`, docs/sweep.md).
//
// Same inputs as the simulation, combined by formula instead of by events:
//  - every kernel's duration is models::op_time_s of the very op lists the step builder emits
//    (transformer_layer_ops, embedding_ops, lm_head_ops, grad_norm_op, optimizer_op), rounded to the
//    engine's integer Time as the builder rounds it;
//  - every collective's duration is the analytical network's (choose_algorithm over group_geometry of
//    the real group of the simulated rank, sim/network/nccl_model.hpp), with the same bytes and groups
//    the step builder gives it;
//  - a pass (one chunk's forward or backward of one micro-batch) runs its ops in the step builder's order
//    on a compute stream and a TP stream: a blocking TP/EP collective adds its time, a tp_comm_overlap
//    collective adds its exposed chunk and whatever of the rest outlasts the GEMM, ring attention takes
//    max(step, KV transfer) per step; ZeRO-3 passes walk their units on a data-parallel stream (gathers
//    ahead of each unit, prefetched one unit ahead under overlap_param_gather, reduce-scatters after
//    each backward unit);
//  - the pipeline is the schedule's own recurrence: each stage runs pipeline_order(schedule, p, m, s, v)
//    on its compute stream, a forward waits for the previous virtual stage's forward of the same
//    micro-batch plus the send/recv time, a backward for the next virtual stage's backward; sends and
//    receives are serialised per stream (the builder's pp_send / pp_recv streams). With equal stages it
//    is (m + p - 1)(t_f + t_b) for 1F1B and GPipe, m (t_f + t_b) + (p - 1)(t_f + t_b) / v interleaved;
//  - data-parallel gradient buckets are closed as the reducing backward produces them (overlap_grad_reduce)
//    or after it, on a serial data-parallel stream; the optimizer (grad norm, its all-reduce, Adam, the
//    ZeRO-1/2 parameter all-gather) follows the last reduction. The step is the latest stage's end.
// Overlapped communication slows the compute it overlaps by the contention factor c as the executor
// does (a kernel overlapped for o seconds takes o c / (1 + c) longer, at most c times its length),
// applied to the overlap the formula sees. What the formula does not see: the flow network's link
// sharing (the analytical price is the collective alone on the fabric), contention from pipeline
// transfers, and the exact interleaving of a data-parallel stream shared by several passes. Where none of
// these is present (one pipeline stage, no overlapped communication) the formula is the simulation's
// own arithmetic and equals its step time to the picosecond (tests/sim/test_screening.cpp).
#include <memory>
#include <optional>

#include "sim/scenario/scenario.hpp"
#include "topologies/cluster.hpp"

namespace cs::sim {

// What the layouts of one search share: the cluster, and the durations already computed (a kernel's
// by its shape, a collective's by its kind, bytes and group). The layouts of a search repeat the same
// GEMM shapes and groups many times over, so the second layout costs a fraction of the first. Valid for
// scenarios with the same cluster (GPU included) and compute profile; one per thread (no locking).
class ScreeningCache {
 public:
  explicit ScreeningCache(const topo::ClusterSpec& spec);
  ~ScreeningCache();
  ScreeningCache(const ScreeningCache&) = delete;
  ScreeningCache& operator=(const ScreeningCache&) = delete;
  const topo::Cluster& cluster() const;
  // Whether a layout of many micro-batches skips the periods of its schedule's steady phase once the
  // recurrence's state repeats itself from one period to the next (the default, the same figure:
  // screening.cpp), or runs every pass (tests).
  void set_extrapolation(bool on);
  // Layouts whose recurrence skipped periods so far.
  int extrapolated() const;

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// Step time in seconds of the validated scenario `s` (its cluster the cache's); nullopt for a scenario the
// formula does not cover (several jobs; unequal GPUs: stragglers, speed variation, node groups), which the
// search then always simulates.
std::optional<double> screening_step_time_s(const Scenario& s, ScreeningCache& cache);

}  // namespace cs::sim
