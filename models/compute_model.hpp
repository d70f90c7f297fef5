#pragma once
// Compute-time model: how long one kernel takes on one GPU.
//
//   t = launch_overhead + max( flops / (eff_math(op) * peak_math),  bytes / (eff_mem(op) * peak_hbm) )
//
// i.e. a roofline whose two ceilings are the *achieved* fractions of the datasheet peaks. The achieved
// fractions are what make the model right:
//  - GEMM: efficiency depends on shape. Small and skinny GEMMs (small m, n or k) cannot fill the GPU:
//    tiles are few (wave quantization over the SMs: a grid of ceil(m/128)*ceil(n/256) tiles runs in
//    ceil(tiles/SMs) waves, the last one partly empty) and the k-loop is short relative to the
//    prologue/epilogue. The table of measured efficiencies (fraction of bf16 peak) over (m, n, k) comes
//    from a calibration profile; the default profile is the real H200 sweep in
//    shared/calibration/h200-reference.json (scripts/derive_compute_defaults.py regenerates
//    models/compute_defaults.cpp from it). A shape between measured points is interpolated in log space.
//  - Attention: flash-style fused kernels; efficiency depends on sequence length and heads per GPU
//    (measured SDPA forward and forward+backward points).
//  - Memory-bound ops: achieved fraction of HBM bandwidth per kind of kernel (norms, elementwise,
//    fused Adam), measured on the H200 and rising with size toward the large-copy bandwidth.
// Carrying the H200 curves to another GPU keeps the *fractions* of peak: an A100 GEMM of a given shape
// is assumed to reach the same fraction of the A100's peak as the H200 reached of its own, with the
// wave-quantization term recomputed for the other GPU's SM count. This ignores generation-specific
// kernel quality (a first-order assumption; calibrating on the target GPU replaces it).
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

}  // namespace cs::models
