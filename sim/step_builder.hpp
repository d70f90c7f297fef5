#pragma once
// Builds the task graph of one training step from a validated scenario.
//
// For every simulated rank: the pipeline schedule's order of forward and backward passes over its
// micro-batches; inside each pass the transformer layers of its stage (plus the embedding on the first
// stage, the LM head and loss on the last), each layer the kernels and collectives of
// models::transformer_layer_ops in issue order. Collectives are matched across the simulated ranks of a
// group by their order on that group (every rank calls the group's collectives in the same order, as
// NCCL requires). Pipeline activations and gradients travel as send/recv pairs between neighbouring
// stages on their own streams. Gradient accumulation: gradients of the last micro-batch are reduced over
// the data-parallel group in buckets as its backward produces them, overlapped with the rest of the
// backward (Megatron DDP, overlap_grad_reduce), then the optimizer steps; with ZeRO-1/2 the reduction is a
// reduce-scatter and the updated parameters are all-gathered after the step.
//
// Symmetry: ranks differing only in TP, CP or DP index do identical work, so by default one rank per
// pipeline stage is simulated and mirrored; its collectives still take the real group's size and span.
#include <vector>

#include "models/compute_model.hpp"
#include "sim/scenario.hpp"
#include "sim/task_graph.hpp"

namespace cs::sim {

struct StepPlan {
  TaskGraph graph{1};
  std::vector<int> global_rank;  // global rank (= GPU) of each simulated rank
  int mirrors = 1;               // real ranks each simulated rank stands for
  std::vector<double> flops;     // executed FLOPs per task (compute tasks), for HFU
};

StepPlan build_step(const Scenario& s, const models::ComputeProfile& profile);

}  // namespace cs::sim
