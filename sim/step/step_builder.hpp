#pragma once
// Builds the task graph of one training step from a validated scenario.
//
// For every simulated rank: the pipeline schedule's order of forward and backward passes over its
// micro-batches (and model chunks, interleaved); inside each pass the FSDP-style "units" of its chunk —
// the embedding on the first chunk of the first stage, the transformer layers, the LM head and loss on
// the last chunk of the last stage — each unit the kernels and collectives of models::*_ops in issue
// order. Collectives are matched across the simulated ranks of a group by their order on that group
// (every rank calls the group's collectives in the same order, as NCCL requires). Pipeline activations
// and gradients travel as send/recv pairs between neighbouring stages on their own streams; interleaved
// chunks wrap from the last stage back to the first. The zero-bubble schedules (ZB-H1, ZBV;
// pipeline_schedule.hpp) run each unit's backward as two passes in the schedule's order: B (everything but
// the weight gradients; it sends the input gradient on) and W (the wgrad GEMMs and the embedding's gradient
// scatter, after which the unit's gradients are accumulated and reduced); ZBV's chunk 1 runs back up the
// ranks (a V), turning on the last rank without a transfer. Fine-tuning (training.finetune) swaps in the op
// lists of models/workload/finetune.hpp and reduces and updates the adapters alone (step_units.cpp).
//
// Tensor / context / expert parallelism (on the comm_tp stream, on the critical path as in Megatron):
//  - TP and SP collectives and MoE all-to-all dispatch / combine sit where transformer_layer_ops puts them.
//  - tp_comm_overlap (with sequence parallelism; Transformer Engine's userbuffers): an all-gather that
//    feeds a GEMM and a reduce-scatter that drains one are split into tp chunks pipelined with the GEMM.
//    The model keeps one chunk exposed and overlaps the rest with the whole GEMM: the all-gather's first
//    1/tp is waited for, its remaining (tp-1)/tp runs on the comm_tp stream beside the GEMM and the op
//    after the GEMM waits for it; the reduce-scatter's first (tp-1)/tp starts with the GEMM and its last
//    1/tp follows it. Exposed time = one chunk + max(0, rest of the collective - GEMM), and the two
//    compete for the GPU as any overlapped communication does (contention). All-reduces (TP without
//    SP) are not overlapped, as in Megatron.
//  - Context parallelism runs ring attention as Transformer Engine does: the attention op of a layer is
//    split into cp equal steps (load-balanced causal chunks: each step does 1/cp of the FLOPs, with
//    query and key blocks of seq / cp); step i's KV transfer to the ring neighbour (one chunk of K and V,
//    forward; K, V and the partial dK, dV, backward — the per-step share of the layer's cp_kv /
//    cp_kv_bwd op) is issued when step i starts and step i + 1 waits for it, so cp - 1 transfers overlap
//    cp - 1 attention steps and only what is longer than the compute shows. Recomputed attention
//    (selective or full) passes KV around the ring again.
//  - overlap_moe_expert_parallel_comm (Megatron-Core's combined 1F1B with delay_wgrad_compute): one more
//    warm-up forward, then each steady-state forward runs with the backward the schedule puts after it,
//    layer by layer; per layer pair the combine backward, dispatch forward, dispatch backward and combine
//    forward all-to-alls run on the comm_tp stream in that order, each after its own pass's producer and
//    before its own pass's consumer, beside the other pass's compute; the pair's blocking TP collectives
//    run on the compute stream, as in Megatron (step_builder.cpp, docs/frameworks.md).
//
// Data parallelism (on the comm_dp stream: one NCCL stream per process group, so the group's
// collectives run in issue order). Dense parameters are data-parallel over DP x CP ranks (Megatron
// reduces over both), expert parameters over the expert-data-parallel group DP x CP / EP (layout.hpp):
//  - Before the optimizer, gradient clipping (Megatron's clip_grad): the norm of the rank's fp32 gradients
//    (its shard under ZeRO) and one 4-byte all-reduce of the sum of squares on the DP x CP group, which
//    also makes the optimizer wait for every DP rank's gradient reduction.
//  - DDP (zero_stage 0) and ZeRO-1 (Megatron's distributed optimizer): the gradients of the last
//    micro-batch's backward are reduced in buckets (all-reduce; ZeRO-1: reduce-scatter) as it produces
//    them (overlap_grad_reduce; otherwise the same buckets after the backward), dense and expert buckets
//    separately, cut at the framework's bucket size (TrainingConfig::grad_bucket_params) and moving
//    grad_reduce_dtype elements; then the optimizer steps on the rank's shard and ZeRO-1 all-gathers the
//    updated parameters -- right after the step, exposed, or, with param_gather_overlaps_forward
//    (Megatron-Core's overlap_param_gather), bucket by bucket in the next step's forward: bucket 0's
//    gather before the chunk's first unit (exposed), each later bucket's dispatched when the previous one
//    is waited for and hidden behind that bucket's forward (step_builder.cpp; docs/frameworks.md).
//  - ZeRO-2 / FSDP SHARD_GRAD_OP: the same bucketed reduce-scatter, but after every micro-batch's
//    backward — DeepSpeed's stage 2 reduces at every micro-step, which is what lets it keep only the
//    1/N gradient shard the memory model counts (FSDP SHARD_GRAD_OP without no_sync does the same).
//    With one micro-batch it moves exactly ZeRO-1's bytes.
//  - ZeRO-3 / FSDP FULL_SHARD, one FSDP unit per transformer layer (plus the embedding and the LM head as
//    their own units): every micro-batch, the unit's parameters are all-gathered before its forward and
//    again before its backward, and its gradients reduce-scattered right after its backward (FSDP
//    without no_sync and DeepSpeed ZeRO-3 both reduce every micro-batch). With overlap_param_gather the
//    gather of the next unit is issued when a unit starts (FSDP forward_prefetch / BACKWARD_PRE), so it
//    hides behind that unit's compute; without, each gather is issued when its unit starts and the
//    compute waits. Per step and m = 1 this moves 3 x (n-1)/n x 2 Psi bytes against DDP's all-reduce
//    2 x (n-1)/n x 2 Psi: the ZeRO paper's 1.5x.
//  - FSDP HYBRID_SHARD: ZeRO-3 inside blocks of DP x CP ranks of one node (the shard group), and each
//    unit's reduce-scattered gradient shard all-reduced across the blocks (the replica group).
//
// Symmetry (orbits.hpp): ranks that a permutation of equal TP, CP and DP indices maps onto one another do
// identical work, so by default one rank per class of equal ranks is simulated and stands for the class
// (one class per pipeline stage on a homogeneous cluster); its collectives still take the real group's
// size and span, and the flow network still carries the traffic of every member's groups.
//
// Placement: rank r runs on GPU r, or, for a job of a multi-job scenario, on gpus[r] of the shared
// cluster (Scenario::job_gpus); every process group (and mirror) is recorded with those GPUs, so the
// network sees the job where it really is. Nothing else depends on where the ranks sit.
#include <string>
#include <vector>

#include "models/compute/compute_model.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/engine/task_graph.hpp"
#include "sim/engine/template_executor.hpp"

namespace cs::sim {

struct StepPlan {
  TaskGraph graph{1};
  std::vector<int> global_rank;  // GPU of each simulated rank (its global rank, unless placed by `gpus`)
  std::vector<int> mirrors;      // real ranks each simulated rank stands for (the size of its class)
  // On unequal GPUs under symmetry: the GPUs of each simulated rank's class (itself first), for the
  // outputs that list GPUs (the trace). Empty otherwise (a class per stage, or every rank on its own).
  std::vector<std::vector<int>> class_gpus;
  std::vector<double> flops;     // executed FLOPs per task (compute tasks), for HFU
};

StepPlan build_step(const Scenario& s, const models::ComputeProfile& profile);

// Every rank of a single-job step from a per-stage template (sim/engine/template_executor.hpp): `plan` is the
// mirrored plan of the step's structure, one simulated rank per stage (the stage's rank (tp, cp, dp) =
// (0, 0, 0), with its own durations), whatever the cluster's GPUs; `spec` the durations of every template
// kernel on each GPU type and each real rank's stage, GPU type and slowdown (spec.graph is the caller's to
// point at plan.graph once the plan is in place). `fallback` non-empty: the template cannot stand for the
// step (why); build_step's every-rank graph must be run instead.
struct StepTemplatePlan {
  StepPlan plan;
  StepTemplate spec;
  std::string fallback;
};
StepTemplatePlan build_step_template(const Scenario& s, const models::ComputeProfile& profile);
// The same with rank r on GPU gpus[r] (gpus.size() == the scenario's GPU count; empty: GPU r).
StepPlan build_step(const Scenario& s, const models::ComputeProfile& profile, const std::vector<int>& gpus);

}  // namespace cs::sim
