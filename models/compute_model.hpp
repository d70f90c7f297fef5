#pragma once
// Compute-time model: how long one kernel takes on one GPU.
//
//   t = launch_overhead + max( flops / (eff_math(op) * peak_math),  bytes / (eff_mem(op) * peak_hbm) )
//
// i.e. a roofline whose two ceilings are the *achieved* fractions of the datasheet peaks. The achieved
// fractions are what make the model right:
//  - GEMM: efficiency depends on shape. Small and skinny GEMMs (small m, n or k) cannot fill the GPU:
//    tiles are few (wave quantization over the SMs: a grid of ceil(m/128)*ceil(n/128) tiles runs in
//    ceil(tiles/SMs) waves, the last one partly empty) and the k-loop is short relative to the
//    prologue/epilogue. The table of measured efficiencies (fraction of bf16 peak) over (m, n, k) comes
//    from a calibration profile; the default profile is the real H200 sweep in
//    shared/calibration/h200-reference.json (scripts/derive_compute_defaults.py regenerates
//    models/compute_defaults.cpp from it). A shape between measured points is interpolated in log space.
//    The 128x128 tile: cuBLAS picks among several tiles (and persistent / stream-K kernels on Hopper);
//    on the H200 sweep a 128x128 tile explains the measured shape dependence better than 128x256
//    (leave-one-out time error 6.2% vs ~7%), so the model uses it for every GPU.
//
// GEMM interpolation, precisely. Each measured point's efficiency is divided by its own wave
// quantization (at profile.sm_count) to give an "intrinsic" efficiency. For a query (m, n, k) each
// coordinate is clamped into the table's range, and the intrinsic efficiency is the inverse-distance
// weighted mean (weights 1/d) of the 6 nearest points in (ln m, ln n, ln k) (the mean of exact matches
// when the shape was measured). Below the smallest measured k it is scaled by (k/(k+256)) relative to
// its value at that k (a fixed prologue/epilogue worth ~256 of k per tile). It is then multiplied by
// the target GPU's wave quantization and clamped to (0, min(0.95, best measured)]. Small m or n lose
// through the tile count; shapes below 128 in m or n are pessimistic (cuBLAS switches to smaller tiles or
// split-K there, the model keeps 128x128) -- their operand bytes usually bound them anyway.
// Cost: one pass over the table (a few hundred logarithms) per call.
//
// Launch overhead: a fixed per-kernel time added to every op; the default is the zero-size intercept
// of the H200 memory-bound size sweeps (~8 us, PyTorch eager). All measured efficiencies are derived
// with it removed, so a measured shape reproduces its measured time exactly on the H200.
//
// Dtypes: fp32 GEMMs run against peak_tflops_fp32 (CUDA cores), tf32 against the tf32 peak, bf16/fp16
// against the bf16 peak, all with the bf16 shape efficiency. fp8 on a GPU with fp8 uses the fp8 peak
// times the bf16 efficiency times fp8_gemm_speedup_efficiency (the measured fp8/bf16 ratio of achieved
// fractions); on a GPU without fp8 it is exactly the bf16 computation. A table the profile leaves empty
// is taken from the default profile.
//
// FLOP convention for attention ops. Op::flops of an attention op must be counted the way the
// efficiencies were measured (SDPA, flash-style):
//   attention_fwd: 4*b*hq*s_q*s_kv*d for non-causal; half of it, 2*b*hq*s^2*d, for causal (s_q = s_kv).
//   attention_bwd: 2.5x the forward FLOPs of the same shape (the measured forward+backward counts 3.5x).
// Recomputation of the scores inside the backward is part of those 2.5x, not extra FLOPs. The workload
// builder emits these numbers; the efficiency is interpolated over (sequence, batch x query heads) --
// the kernel's grid is batch*heads*ceil(s/128) CTAs, so batch and heads enter as their product --
// using sqrt(s_q*s_kv) as the sequence; head_dim and GQA grouping are ignored (all points have d=128).
// The backward efficiency is 2.5 / (3.5/e_fwdbwd - 1/e_fwd), the part of the measured fwd+bwd time the
// forward does not account for.
//  - Attention: flash-style fused kernels; efficiency depends on sequence length and heads per GPU
//    (measured SDPA forward and forward+backward points).
//  - Memory-bound ops: achieved fraction of HBM bandwidth per kind of kernel (norms, elementwise,
//    fused Adam), measured on the H200 and rising with size toward the large-copy bandwidth;
//    interpolated linearly in ln(bytes) within a kind, flat beyond its smallest and largest point
//    (small ops become launch bound through the launch overhead). softmax and cross_entropy take the
//    norm curve, embedding the elementwise one. Their time is bytes only (FLOPs ignored).
// Carrying the H200 curves to another GPU keeps the *fractions* of peak: an A100 GEMM of a given shape
// is assumed to reach the same fraction of the A100's peak as the H200 reached of its own, with the
// wave-quantization term recomputed for the other GPU's SM count. This ignores generation-specific
// kernel quality (a first-order assumption; calibrating on the target GPU replaces it).
#include <string>
#include <vector>

#include "models/gpu_catalog.hpp"
#include "models/op.hpp"

namespace cs::models {

struct GemmPoint {
  std::int64_t m, n, k;
  double efficiency;  // achieved / peak bf16 of the profiled GPU
};

struct AttentionPoint {
  std::int64_t batch, heads_q, heads_kv, seq, head_dim;
  double fwd_efficiency;     // achieved / peak bf16 (causal FLOPs)
  double fwdbwd_efficiency;  // forward+backward together
};

struct MemBoundPoint {
  MemOpKind kind;
  double bytes;
  double efficiency;  // achieved / peak HBM bandwidth
};

// Everything the compute model needs beyond the datasheet. A calibration profile fills one of these.
struct ComputeProfile {
  std::string source;        // where the numbers came from (for the report)
  int sm_count = 0;          // SMs of the GPU the tables were measured on
  std::vector<GemmPoint> gemm;
  std::vector<AttentionPoint> attention;
  std::vector<MemBoundPoint> memory_bound;
  double fp8_gemm_speedup_efficiency = 0;  // achieved fp8 / peak fp8 relative to achieved bf16 / peak bf16
  double launch_overhead_us = 0;           // per kernel, host launch + scheduling
};

// The default profile: derived from the H200 reference measurements.
const ComputeProfile& default_compute_profile();

// Duration of a compute op in seconds (never for OpKind::collective).
double op_time_s(const Op& op, const GpuSpec& gpu, const ComputeProfile& profile);

// The achieved fraction of peak the model uses for a GEMM / attention / memory-bound op (for reports
// and tests).
double gemm_efficiency(const GemmShape& shape, const GpuSpec& gpu, const ComputeProfile& profile);
// Attention: forward efficiency, or the backward's when backward is true (fraction of bf16 peak,
// before any fp8 factor).
double attention_efficiency(const AttentionShape& shape, bool backward, const GpuSpec& gpu,
                            const ComputeProfile& profile);
// Memory-bound kernels: fraction of HBM peak bandwidth for a kernel of that kind moving `bytes`.
double memory_bound_efficiency(MemOpKind kind, double bytes, const ComputeProfile& profile);

}  // namespace cs::models
