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
//    calibrate/measurements/h200-reference.json (scripts/derive_compute_defaults.py regenerates
//    models/compute/compute_defaults.cpp from it). A shape between measured points is interpolated in log space.
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
// Host-issued kernels (Op::host_issued): a kernel the host issues with nothing queued ahead of it -- the MoE
// experts' forward kernels, behind the token dispatcher's device-to-host synchronisation -- cannot start
// before the host has issued it. Issuing kernel i at i x h after the synchronisation, each kernel ends at
// max(end of the previous, i h) + g_i; when every kernel of the run is shorter than h that is h apiece, which
// is what the model charges: max(g, h) per kernel (pessimistic by up to h for a run that mixes kernels longer
// than h, during which the host gets ahead). h = ComputeProfile::expert_host_issue_us, the host's time per
// expert kernel in the eager PyTorch / Transformer Engine path (Python dispatch, per-expert tensor splits
// and quantizers, the cuBLAS call). Megatron-Core's MoE guide names the effect ("CPU Overhead Bottleneck":
// gaps between kernels; the remedies CUDA graphs and a larger micro-batch, megatron/core/transformer/moe/
// README.md @ NVIDIA/Megatron-LM d98e8a64). No microbenchmark of this repository measures h; the default,
// kDefaultExpertHostIssueUs, is fitted to Megatron-Bridge's published MoE runs and checked leave one group
// out (docs/validation.md, "Fitted constants"); a profile may state its own (expert_host_issue_us).
//
// Dtypes: fp32 GEMMs run against peak_tflops_fp32 (CUDA cores), tf32 against the tf32 peak, bf16/fp16
// against the bf16 peak, all with the bf16 shape efficiency. fp8 on a GPU with fp8 uses the fp8 peak
// times the bf16 efficiency times fp8_gemm_speedup_efficiency (the measured fp8/bf16 ratio of achieved
// fractions); on a GPU without fp8 it is exactly the bf16 computation. A table the profile leaves empty
// is taken from the default profile.
//
// FLOP convention for attention ops. Op::flops of an attention op must be counted the way the
// efficiencies were measured (SDPA, flash-style):
//   attention_fwd: 4*b*hq*s_q*s_kv*d for non-causal; half of it, 2*b*hq*s_q*s_kv*d, for causal.
//   attention_bwd: 2.5x the forward FLOPs of the same shape (the measured forward+backward counts 3.5x).
// Recomputation of the scores inside the backward is part of those 2.5x, not extra FLOPs.
//
// Attention efficiency: a physical model of the flash kernel, not a table lookup.
//   e(shape) = e_max * balance(shape, slots) * kv / (kv + c)
// with one (e_max, c, CTAs per SM, launch order) for the forward and one for the backward.
//  - balance. A flash kernel splits each (batch, query head) into nb = ceil(s_q / B) CTAs (B = the
//    query block, 128 on Hopper) and the GPU's block scheduler hands CTAs, in launch order, to whichever
//    of the slots = sm_count * ctas_per_sm CTA slots frees first (greedy list scheduling). Causal CTAs
//    do unequal work: query block i (1..nb) meets i KV blocks (the causal triangle; with s_q < s_kv,
//    i.e. a context-parallel chunk, the triangle is stretched to s_kv, which changes no ratio). A few
//    heavy CTAs late in the launch leave most SMs idle at the tail. The model replays that dispatch:
//        balance = sum(work) / (slots * makespan)
//    Launch order within a (batch, head): the forward's CTAs start heaviest-first, the backward's
//    (one CTA per KV block) lightest-first (profile fields; these orders fit the H200 sweep best:
//    leave-one-out forward 4.3% heaviest-first vs 5.0% lightest-first). Non-causal CTAs all do nb
//    blocks, and the balance is the wave quantization N / (slots * ceil(N / slots)) of N = b*hq*nb.
//    Worked example: 1 head, 4 blocks, 2 slots, works 1,2,3,4 (lightest first): slot A takes 1, B 2;
//    A frees at 1 and takes 3 (ends 4), B frees at 2 and takes 4 (ends 6): makespan 6, balance
//    10/12. Heaviest first (4,3,2,1) ends at 5 on both slots: balance 1.
//  - kv / (kv + c): per CTA, the KV loop is the useful part and the prologue/epilogue (loading Q,
//    the softmax rescale and writing O, and for the backward the dQ accumulation) is a fixed cost
//    worth c KV tokens. kv is the mean KV length a query meets: s_kv / 2 causal, s_kv otherwise.
//  - e_max: the kernel's steady-state fraction of the bf16 tensor peak.
//  (e_max, c) are fitted by least squares in ln(time) over the measured points (calibrate/
//  compute_fit.hpp; scripts/derive_compute_defaults.py for the default profile): forward on t_fwd - L,
//  backward jointly with the harness's host floor T (below) on the observed t_fwdbwd - t_fwd - L. The
//  measured points are kept in the profile for validation and refits; the model does not interpolate them.
//  Cost: the dispatch replay is O(N log slots) for N CTAs; exact up to 64 * slots CTAs, beyond that
//  the first 64 * slots CTAs' worth of whole (batch, head) groups is replayed and the rest adds its
//  work / slots (steady state; < 0.1% off the full replay on the shapes tried). Results are memoized
//  per (b*hq, nb, causal, slots, order) in the profile (ComputeProfile::attention_balance_memo).
//  Host floor of the forward+backward microbenchmark (ComputeProfile::attention_host_floor_us). The
//  harness times `out = sdpa(q, k, v); out.backward(g)` in PyTorch eager between two CUDA events. The
//  backward's kernels cannot start before the host has issued them -- SDPA's dispatch, the autograd
//  engine, the backward's allocations and its kernel launches -- so the backward starts at
//  max(t_fwd, T) after the first event, T ~ 0.31 ms on the H200 reference. Only shapes whose forward
//  is shorter than T show it: b1 hq8 hkv1 s4096 (forward 0.136 ms, the GPU idles ~0.17 ms before the
//  backward) and the two s2048 shapes (~0.12 ms). It is a property of the harness, not of the kernel:
//  `clustersim validate` adds it to forward+backward predictions; training steps never use it (there
//  the host runs ahead of the GPU, whose kernels queue back to back). What the H200 residuals showed
//  (backward, in-sample, fit without T, + = predicted too slow): b1 hq8 hkv1 s4096 -28%, every other
//  point within -10..+17%; adding T: all within +-4% except the s2048 pair. Candidates tested and
//  rejected by the same least squares: GQA reduction of dK/dV (fp32 atomics or a dk/dv_expanded sum,
//  bytes 2*b*s*(hq+hkv)*d*2 over HBM): coefficient 0 (the GQA shapes run faster than the model, not
//  slower); a per-call constant: 0.19 ms, leave-one-out 14% (it slows the long shapes too); the dQ fp32
//  atomics (bytes ~ b*hq*s^2*d/B), the delta preprocessing and the dQ convert (~ b*hq*s*d) scale like
//  the FLOPs or like the per-CTA cost c, so e_max and c absorb them (they are part of the kernel's
//  efficiency here, not separable with these shapes).
//  Ignored: head_dim (every measured point has d = 128) and GQA grouping (the grid is over query
//  heads; heads_kv changes only the operand bytes). Not explained: two shapes of equal b*hq and s
//  (b4 hq16, b1 hq64 at s2048; same CTA count, same bytes, same host floor) differ by 25% in the
//  backward (0.61 vs 0.76 ms) and 4% in the forward; no (b*hq, hkv, s, d) mechanism separates them
//  (the row stride of the (b, s, h, d) tensors and of the fp32 dQ accumulator differs, 8 vs 32 KiB,
//  a DRAM/L2 locality effect these shapes cannot pin down), so the model splits the difference
//  (+10% / -12% in-sample).
//  Never above the best efficiency measured for the pass (the kv / (kv + c) term is not extrapolated
//  past the table's longest sequence). Holding kv at the longest measured sequence instead (so the
//  query shape's balance still applies) leaves a shape out at 4.3% forward / 6.0% forward+backward
//  against 6.3% / 7.3% with the cap, but makes long-sequence training steps faster still, and the
//  published training runs are already predicted too fast there (published-train: mean |error| of
//  the high-confidence runs 14.3% against 13.2%), so the cap stays.
//  Carrying to another GPU: balance is recomputed with the *target* GPU's sm_count (an H100 PCIe's 114
//  SMs, an A100's 108 quantize differently from the H200's 132); e_max and c carry as fractions.
//  FlashAttention-2 (AttentionImpl::flash2). FA2 issues the warp-level mma.sync instruction; Hopper's
//  full tensor rate needs the warpgroup wgmma (fed by TMA, with warp-specialised pipelining, none of which
//  FA2 uses), and mma.sync alone tops out near 2/3 of the peak (Shah et al., "FlashAttention-3", 2024,
//  sec. 2). Measured on the H200 with SDPA's backends forced (calibrate/measurements/
//  h200-attention-backends-2026-11-30.json, scripts/attention_backends.py): FLASH_ATTENTION over
//  CUDNN_ATTENTION is 0.52-0.58 at d = 128, forward and forward+backward alike, below that 2/3; 0.66 at
//  d = 64. So where a profile measured FA2 (ComputeProfile::attention_flash2, fitted by calibrate/
//  compute_fit.hpp from FLASH_ATTENTION rows) it has a curve of its own, the same form
//  e = e_max * balance * kv / (kv + c) with its own (e_max, c) per pass and the native kernel's block,
//  CTAs per SM and launch orders (kernel facts these few shapes cannot pin down), capped at its own best
//  measured point. That curve holds on GPUs whose mma_sync_fraction is the measured GPU's (the same
//  instruction limit: H100 and H200; B200 by the catalog's assumption). Where mma.sync is the full-rate
//  instruction (fraction 1: Ampere, Ada) FA2 is that GPU's native kernel and takes the native efficiency,
//  and a profile without an FA2 fit gives the native efficiency times GpuSpec::mma_sync_fraction (the
//  paper's 2/3 on Hopper).
//  FlashAttention v1 (AttentionImpl::flash1, flash-attn 0.2-1.0, what 2022-23 stacks ran; llm-foundry's
//  2023 A100 benchmarks ran its Triton port, whose author puts it "slightly slower" forward + backward
//  than this CUDA kernel, and take it too): FA2's efficiency on the same GPU times kFlash1OverFlash2 = 0.5. Dao
//  ("FlashAttention-2", 2023, abstract and sec. 4.1) measures FA2 at about 2x FA1 on A100, forward and
//  backward: FA1 reaches 25-40% of the peak where FA2 reaches 50-73%, because FA1 splits K across the
//  warps of a block (each warp's partial softmax and output go through shared memory to be combined),
//  parallelises over batch x heads only (few blocks at long sequence and small batch) and spends more
//  non-matmul FLOPs on rescaling. No FA1 kernel is measured here (flash-attn 1 does not build for the
//  H200's CUDA 13 stack); the factor is the paper's, one number for every shape.
//  - Memory-bound ops: achieved fraction of HBM bandwidth per kind of kernel (norms, elementwise,
//    fused Adam), measured on the H200 and rising with size toward the large-copy bandwidth;
//    interpolated linearly in ln(bytes) within a kind, flat beyond its smallest and largest point
//    (small ops become launch bound through the launch overhead). softmax and cross_entropy take the
//    norm curve, embedding the elementwise one. Their time is bytes only (FLOPs ignored).
// Carrying the H200 curves to another GPU keeps the *fractions* of peak, with the wave-quantization term
// (GEMM) and the CTA dispatch balance (attention) recomputed for the other GPU's SM count, and GEMMs
// scaled by the ratio of the two GPUs' matmul ceilings (GpuSpec::matmul_ceiling_fraction: the maximum
// achievable matmul FLOPS over the peak). The ceiling is where a GPU generation's clocks under load,
// power limit and instruction mix show: an A100 (400 W) holds 86% of its peak on a large bf16 GEMM, an
// H100 or H200 (700 W, a peak 3.2x higher) 80%, an MI300X 60% (ml-engineering's MAMF tables; the
// H200's 80.3% matches our own 796 TFLOP/s at 8192^3). So an A100 GEMM reaches 0.859 / 0.803 = 1.07x
// the H200's fraction at the same shape, for the largest shapes. Where either ceiling is unknown the
// fraction carries as is.
// Below the ceiling a GEMM loses to fixed costs per output tile: the prologue that fills the operand
// pipeline from HBM/L2 before the first MMA, the epilogue that converts and writes the tile, and the
// k-loop steps too short to hide them. Those are memory latencies, about the same time on every
// generation, while the MMAs between them run at the SM's tensor rate. So the table's shape
// dependence, read as efficiency = ceiling / (1 + overhead / mma_time) with the wave quantization
// already divided out, carries to another GPU with overhead / mma_time scaled by the ratio r of the
// two GPUs' bf16 rates per SM (peak / SMs):
//   e_target = ceiling_target / (1 + (ceiling_profile / e_profile - 1) * r).
// An A100 SM (312 / 108 = 2.9 TFLOP/s) is 2.6x slower than an H200's (989 / 132 = 7.5), so a mid-size
// GEMM that the H200 runs at 85% of its ceiling reaches 94% of the A100's; a B200 SM (2250 / 148 = 15.2)
// is 2x faster and needs larger shapes. The same GPU, and the H100 (r = 1), reduce to the ceiling ratio
// exactly. Where either GPU's rate is unknown r = 1. Calibrating on the target GPU replaces all of this.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/hardware/gpu_catalog.hpp"
#include "models/workload/op.hpp"

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

// One pass (forward or backward) of the flash-attention kernel model (see the essay above).
struct AttentionPassModel {
  double peak_efficiency = 0;  // e_max: steady-state fraction of the bf16 peak
  double half_kv = 0;          // c: per-CTA fixed cost, in KV tokens (efficiency halves at kv = c)
  int ctas_per_sm = 1;         // resident CTAs per SM (slots = sm_count * ctas_per_sm)
  bool heavy_first = false;    // within a (batch, head), the heaviest causal CTA is launched first
};

// FlashAttention-2 as measured on the profiled GPU (see the essay: FlashAttention-2).
struct Flash2AttentionModel {
  double mma_sync_fraction = 0;  // of the GPU it was measured on: the curve holds on GPUs with the same
  AttentionPassModel fwd;        // peak_efficiency, half_kv fitted; CTAs per SM, launch order the native's
  AttentionPassModel bwd;
  std::vector<AttentionPoint> points;  // measured FA2 points: the cap, validation and refits
};

// Memo of dispatch balances; a cache of a pure function, guarded by a mutex (compute_model.cpp).
class AttentionBalanceMemo;
std::shared_ptr<AttentionBalanceMemo> make_attention_balance_memo();

// The host's time per expert kernel (the essay's "Host-issued kernels").
inline constexpr double kDefaultExpertHostIssueUs = 60.0;

// Everything the compute model needs beyond the datasheet. A calibration profile fills one of these.
struct ComputeProfile {
  std::string source;        // where the numbers came from (for the report)
  int sm_count = 0;          // SMs of the GPU the tables were measured on
  std::vector<GemmPoint> gemm;
  std::vector<AttentionPoint> attention;  // measured points (validation and refits)
  std::int64_t attention_block_q = 128;   // query rows per CTA
  AttentionPassModel attention_fwd;       // peak_efficiency 0: take the default profile's model
  AttentionPassModel attention_bwd;
  // FlashAttention-2's own curve; absent: the native model times GpuSpec::mma_sync_fraction.
  std::optional<Flash2AttentionModel> attention_flash2;
  std::vector<MemBoundPoint> memory_bound;
  double fp8_gemm_speedup_efficiency = 0;  // achieved fp8 / peak fp8 relative to achieved bf16 / peak bf16
  // GpuSpec::matmul_ceiling_fraction of the GPU the GEMM table was measured on; 0: unknown (the table
  // carries to other GPUs as fractions of peak, unscaled).
  double matmul_ceiling_fraction = 0;
  // Dense bf16 peak of the GPU the GEMM table was measured on (TFLOP/s); with sm_count, its tensor-core
  // rate per SM. 0: unknown (GEMM shape effects carry to other GPUs unscaled).
  double peak_tflops_bf16 = 0;
  double launch_overhead_us = 0;           // per kernel, host launch + scheduling
  // Least time of a host-issued kernel (Op::host_issued; the essay's "Host-issued kernels").
  double expert_host_issue_us = kDefaultExpertHostIssueUs;
  // Forward+backward attention microbenchmark: the backward starts no earlier than this after the
  // start (host dispatch; see the essay). Validation of that harness only, never training steps.
  double attention_host_floor_us = 0;
  // Shared by copies of the profile: its key holds every input of the balance, so sharing is safe.
  std::shared_ptr<AttentionBalanceMemo> attention_balance_memo = make_attention_balance_memo();
};

// The default profile: derived from the H200 reference measurements.
const ComputeProfile& default_compute_profile();

// Duration of a compute op in seconds (never for OpKind::collective): all op.repeat runs of it.
double op_time_s(const Op& op, const GpuSpec& gpu, const ComputeProfile& profile);

// Everything op_time_s reads of an op: two ops with equal keys take equal times on one GPU with one
// profile. Every cache of op durations keys on it (the step builder's, the search's screening tier), so a
// field the compute model starts reading is added here, once.
struct OpTimeKey {
  std::array<std::int64_t, 16> ints{};
  double flops = 0, bytes = 0;
  bool operator==(const OpTimeKey&) const = default;
};
OpTimeKey op_time_key(const Op& op);
struct OpTimeKeyHash {
  std::size_t operator()(const OpTimeKey& k) const;
};

// The achieved fraction of peak the model uses for a GEMM / attention / memory-bound op (for reports
// and tests).
double gemm_efficiency(const GemmShape& shape, const GpuSpec& gpu, const ComputeProfile& profile);
// Carrying a GEMM table to another GPU (header essay): the intrinsic efficiency e_profile (wave
// quantization divided out) at the profile GPU's ceiling, becomes
// ceiling_target / (1 + (ceiling_profile / e_profile - 1) * r), r the target's bf16 rate per SM over
// the profile GPU's (tensor_rate_ratio: 1 where either is unknown).
double tensor_rate_ratio(const GpuSpec& gpu, const ComputeProfile& profile);
double gemm_efficiency_carried(double e_profile, double ceiling_profile, double ceiling_target, double r);
// FlashAttention v1 over FlashAttention-2 on the same GPU (header essay: Dao 2023, "about 2x").
inline constexpr double kFlash1OverFlash2 = 0.5;
// Attention: forward efficiency, or the backward's when backward is true (fraction of bf16 peak,
// before any fp8 factor), of the kernel shape.kernel names.
double attention_efficiency(const AttentionShape& shape, bool backward, const GpuSpec& gpu,
                            const ComputeProfile& profile);
// The dispatch balance of the essay: sum(work) / (slots * makespan) of the shape's CTAs replayed
// greedily over sm_count * ctas_per_sm slots, in (0, 1]. Not memoized.
double attention_dispatch_balance(const AttentionShape& shape, int sm_count, int ctas_per_sm,
                                  std::int64_t block_q, bool heavy_first);
// Mean KV length a query meets (s_kv / 2 causal, s_kv otherwise), tokens.
double attention_mean_kv(const AttentionShape& shape);
// Memory-bound kernels: fraction of HBM peak bandwidth for a kernel of that kind moving `bytes`.
double memory_bound_efficiency(MemOpKind kind, double bytes, const ComputeProfile& profile);

}  // namespace cs::models
