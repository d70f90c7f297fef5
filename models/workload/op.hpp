#pragma once
// One unit of work on one GPU as the workload builder emits it: a kernel (GEMM, attention, a
// memory-bound elementwise or reduction, the optimizer step) or a point where the framework calls a
// collective. Compute ops carry the FLOPs and HBM bytes the kernel really performs; collective ops carry
// the payload size each rank contributes and which process group they run on. The compute model turns a
// compute op into a duration; the simulator turns a collective op into communication on the network.
#include <cstdint>
#include <string>

#include "models/hardware/dtype.hpp"
#include "sim/base/collective_kind.hpp"
#include "sim/base/token_routing.hpp"

namespace cs::models {

enum class OpKind {
  gemm,           // C[m,n] = A[m,k] B[k,n]; flops = 2mnk
  attention_fwd,  // flash-style fused attention forward
  attention_bwd,  // its backward (dQ, dK, dV; recomputes the scores)
  memory_bound,   // elementwise / norm / softmax / loss: time = bytes / achieved HBM bandwidth
  optimizer,      // fused Adam(W) over the rank's parameter shard: memory bound
  collective,     // a collective call; see CollectiveKind and ProcessGroup
};

// What part of the training step an op belongs to, set by the workload builder (transformer.cpp). The
// step builder files an op's time by it (the report's compute / recompute / optimizer breakdown; HFU
// counts recompute, MFU does not), so no rule ever reads an op's name.
//   forward: the forward pass;  backward: dgrad, wgrad and the backward collectives;
//   recompute: a forward kernel re-run in backward because its activations were not kept (recompute
//              granularity selective or full), with the collectives it re-runs;
//   optimizer: the gradient norm, its all-reduce and the optimizer step.
enum class OpRole { forward, backward, recompute, optimizer };

using CollectiveKind = sim::CollectiveKind;  // sim/base/collective_kind.hpp

// The process group a collective runs on, as Megatron-Core names them.
enum class ProcessGroup { tp, cp, ep, dp, pp, etp };  // etp: expert tensor parallel (MoE folding)

// Kind of memory-bound kernel; each has its own achieved fraction of HBM bandwidth.
enum class MemOpKind { norm, elementwise, activation, softmax, cross_entropy, embedding, copy, optimizer };

struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;
};

// Which flash-attention implementation runs the attention core (Megatron's attention_backend).
//  native: the kernel the calibration profile measured, taken to reach the same fraction of peak on
//          every GPU (TE's cuDNN "fused" attention and FlashAttention-3 on Hopper: warpgroup MMA);
//  flash2: FlashAttention-2, built on the warp-level mma.sync instruction. On Ampere and Ada that is the
//          native tensor-core instruction; on Hopper mma.sync reaches only about 2/3 of the tensor-core
//          peak (Shah et al., "FlashAttention-3", 2024, sec. 2: full rate needs wgmma). A profile that
//          measured FA2 gives it its own fitted curve there; without one it runs at
//          GpuSpec::mma_sync_fraction of the native kernel's efficiency (compute_model.hpp).
//  flash1: FlashAttention (v1, flash-attn 1.0.x, 2022-23): the same tiling as FA2 with split-K warps
//          (partial results exchanged through shared memory), parallelism over batch x heads only and
//          more non-matmul FLOPs; about half FA2's speed (compute_model.hpp: kFlash1OverFlash2).
//  unfused: no attention kernel at all -- Megatron's attention_backend "unfused" / "local", and the only
//          attention of Megatron-LM before FlashAttention (2021-22: SC'21, Korthikanti et al., BLOOM,
//          MT-NLG): batched GEMMs Q K^T and P V around a fused scale-mask-softmax and the attention
//          dropout, with the s x s scores in HBM. The layer builds it from GEMM and memory-bound ops
//          (transformer.cpp: unfused_attention_fwd), so no Op ever carries this kernel.
enum class AttentionImpl { native, flash2, flash1, unfused };

struct AttentionShape {
  std::int64_t batch = 0, heads_q = 0, heads_kv = 0, seq_q = 0, seq_kv = 0, head_dim = 0;
  bool causal = true;
  AttentionImpl kernel = AttentionImpl::native;
  // The values' head dim where it differs from the queries' and keys' head_dim (MLA: 128 against 192;
  // models/workload/transformer.hpp MlaConfig); 0: head_dim.
  std::int64_t head_dim_v = 0;
};

struct Op {
  std::string name;  // short, stable: "qkv", "attn", "fc1", "ar_attn", ...
  OpKind kind = OpKind::memory_bound;
  OpRole role = OpRole::forward;
  Dtype dtype = Dtype::bf16;  // math format of GEMMs / attention
  double flops = 0;           // floating-point operations actually executed
  double bytes = 0;           // HBM bytes read + written (memory-bound ops, and GEMM operand traffic)
  GemmShape gemm{};           // kind == gemm
  AttentionShape attention{}; // kind == attention_*
  MemOpKind mem_kind = MemOpKind::elementwise;  // kind == memory_bound / optimizer
  // kind == collective
  CollectiveKind collective = CollectiveKind::all_reduce;
  ProcessGroup group = ProcessGroup::tp;
  double comm_bytes = 0;  // collective payload per rank in nccl-tests' "size" sense (see collectives)
  sim::TokenRouting routing{};  // an expert-parallel all-to-all of a per-node token dispatcher (DeepEP, HybridEP)
  // Compute ops: the kernel runs this many times back to back with the same shape (a rank's local experts
  // under balanced routing, one kernel each as Megatron's SequentialMLP issues them); flops and bytes are
  // one run's. One op for G identical kernels keeps the step's timing exact and its task graph G x smaller.
  int repeat = 1;
  // Compute ops: issued by the host one kernel at a time with nothing queued ahead of them, so a kernel
  // cannot start before the host has issued it and lasts at least the profile's host issue time
  // (models/compute/compute_model.hpp, "Host-issued kernels"). Set on the MoE experts' forward kernels,
  // which run after the token dispatcher's device-to-host synchronisation (transformer.cpp moe_mlp_ops).
  bool host_issued = false;
};

}  // namespace cs::models
