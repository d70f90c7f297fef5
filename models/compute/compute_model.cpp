#include "models/compute/compute_model.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <queue>
#include <tuple>

#include "sim/base/check.hpp"

namespace cs::models {

namespace {

constexpr double kMaxEfficiency = 0.95;
constexpr double kMinEfficiency = 1e-4;
// Output tile of the modelled GEMM kernel (see compute_model.hpp: why 128 x 128).
constexpr std::int64_t kTileM = 128;
constexpr std::int64_t kTileN = 128;
// Inverse-distance weighting over the nearest measured GEMM shapes.
constexpr std::size_t kGemmNeighbours = 6;
// Below the smallest measured k the efficiency follows k / (k + kHalfK) relative to the table's edge.
constexpr double kHalfK = 256;
constexpr double kExactMatch = 1e-9;

double clamp_efficiency(double e) { return std::clamp(e, kMinEfficiency, kMaxEfficiency); }

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

double wave_quantization(std::int64_t m, std::int64_t n, int sm_count) {
  CS_CHECK(m > 0 && n > 0 && sm_count > 0);
  const std::int64_t tiles = ceil_div(m, kTileM) * ceil_div(n, kTileN);
  const std::int64_t waves = ceil_div(tiles, sm_count);
  return static_cast<double>(tiles) / static_cast<double>(waves * sm_count);
}

// A calibration profile may leave a table empty; the default H200 table stands in for it.
const ComputeProfile& gemm_source(const ComputeProfile& p) {
  return p.gemm.empty() ? default_compute_profile() : p;
}
const ComputeProfile& attention_source(const ComputeProfile& p) {
  return p.attention_fwd.peak_efficiency > 0 && p.attention_bwd.peak_efficiency > 0 ? p
                                                                                    : default_compute_profile();
}
const ComputeProfile& memory_source(const ComputeProfile& p) {
  return p.memory_bound.empty() ? default_compute_profile() : p;
}

struct Neighbour {
  double dist2 = std::numeric_limits<double>::infinity();
  double value = 0;
};

// Weighted mean of the nearest points (inverse distance, power 1); the mean of exact matches if any.
template <std::size_t K>
class NearestMean {
 public:
  void add(double dist2, double value) {
    if (dist2 < kExactMatch) {
      exact_sum_ += value;
      ++exact_count_;
      return;
    }
    if (dist2 >= best_.back().dist2) return;
    std::size_t i = K - 1;
    while (i > 0 && best_[i - 1].dist2 > dist2) {
      best_[i] = best_[i - 1];
      --i;
    }
    best_[i] = {dist2, value};
  }
  double mean() const {
    if (exact_count_ > 0) return exact_sum_ / exact_count_;
    double wsum = 0, vsum = 0;
    for (const auto& nb : best_) {
      if (!std::isfinite(nb.dist2)) break;
      const double w = 1.0 / std::sqrt(nb.dist2);
      wsum += w;
      vsum += w * nb.value;
    }
    CS_CHECK(wsum > 0);
    return vsum / wsum;
  }

 private:
  std::array<Neighbour, K> best_{};
  double exact_sum_ = 0;
  int exact_count_ = 0;
};

double sq(double x) { return x * x; }

double mem_efficiency_of_kind(MemOpKind kind, double bytes, const ComputeProfile& p) {
  // Linear in log(bytes) between the kind's points, held flat beyond the first and last.
  double lo_b = 0, lo_e = 0, hi_b = 0, hi_e = 0;
  bool have_lo = false, have_hi = false;
  for (const auto& pt : p.memory_bound) {
    if (pt.kind != kind) continue;
    if (pt.bytes <= bytes && (!have_lo || pt.bytes > lo_b)) {
      lo_b = pt.bytes, lo_e = pt.efficiency, have_lo = true;
    }
    if (pt.bytes >= bytes && (!have_hi || pt.bytes < hi_b)) {
      hi_b = pt.bytes, hi_e = pt.efficiency, have_hi = true;
    }
  }
  if (!have_lo && !have_hi) return -1;  // no point of this kind
  if (!have_lo) return hi_e;
  if (!have_hi || hi_b == lo_b) return lo_e;
  const double t = std::log(bytes / lo_b) / std::log(hi_b / lo_b);
  return lo_e + t * (hi_e - lo_e);
}

double tensor_peak_flops(const GpuSpec& gpu, Dtype d) { return gpu.peak_tflops(d) * 1e12; }

// fp8 runs at the fp8 peak times the bf16 efficiency times the measured fp8/bf16 ratio, on GPUs that
// have fp8; elsewhere peak_tflops(fp8) is the bf16 peak and the efficiency is bf16's. fp4 (NVFP4) runs at
// the fp4 peak with the same ratio: no FP4 GEMM has been measured for a profile, and the ratio is what
// keeps a low-precision tile's larger share of non-MMA work (scales, epilogue) from reading as free.
double dtype_factor(Dtype d, const GpuSpec& gpu, const ComputeProfile& p) {
  const bool low = (d == Dtype::fp8 && gpu.has_fp8()) || (d == Dtype::fp4 && gpu.peak_tflops_fp4 > 0);
  if (low && p.fp8_gemm_speedup_efficiency > 0) {
    return p.fp8_gemm_speedup_efficiency;
  }
  return 1.0;
}

double hbm_bytes_per_s(const GpuSpec& gpu) { return gpu.hbm_tbps * 1e12; }

// Exact replay up to this many CTAs per slot; beyond it, steady-state extrapolation (compute_model.hpp).
constexpr std::int64_t kReplayCtasPerSlot = 64;

// Greedy list scheduling of `groups` copies of `pattern` over `slots` identical slots: each CTA, in
// order, starts on the slot that frees first. Returns the makespan in units of the pattern's works.
double replay_makespan(const std::vector<std::int64_t>& pattern, std::int64_t groups, std::int64_t slots) {
  std::priority_queue<std::int64_t, std::vector<std::int64_t>, std::greater<>> free_at;
  const std::int64_t used = std::min<std::int64_t>(slots, groups * std::int64_t(pattern.size()));
  for (std::int64_t i = 0; i < used; ++i) free_at.push(0);
  std::int64_t makespan = 0;
  for (std::int64_t g = 0; g < groups; ++g) {
    for (const std::int64_t w : pattern) {
      const std::int64_t end = free_at.top() + w;
      free_at.pop();
      free_at.push(end);
      makespan = std::max(makespan, end);
    }
  }
  return double(makespan);
}

using BalanceKey = std::tuple<std::int64_t, std::int64_t, bool, std::int64_t, bool>;  // groups, nb, causal, slots, heavy

double balance_of(const BalanceKey& key) {
  const auto [groups, nb, causal, slots, heavy_first] = key;
  const std::int64_t n = groups * nb;
  if (!causal) {
    // Equal CTAs: wave quantization, no replay needed.
    const std::int64_t waves = ceil_div(n, slots);
    return double(n) / double(waves * slots);
  }
  std::vector<std::int64_t> pattern(static_cast<std::size_t>(nb));
  for (std::int64_t i = 0; i < nb; ++i) pattern[static_cast<std::size_t>(i)] = heavy_first ? nb - i : i + 1;
  const double group_work = double(nb) * double(nb + 1) / 2;
  const std::int64_t cap = kReplayCtasPerSlot * slots;
  const std::int64_t replayed = n <= cap ? groups : std::max<std::int64_t>(1, cap / nb);
  // The groups not replayed add their work spread evenly over the slots (steady state).
  const double makespan =
      replay_makespan(pattern, replayed, slots) + double(groups - replayed) * group_work / double(slots);
  return std::min(1.0, double(groups) * group_work / (double(slots) * makespan));
}

BalanceKey balance_key(const AttentionShape& shape, int sm_count, int ctas_per_sm, std::int64_t block_q,
                       bool heavy_first) {
  CS_CHECK(shape.batch > 0 && shape.heads_q > 0 && shape.seq_q > 0 && shape.seq_kv > 0);
  CS_CHECK(sm_count > 0 && ctas_per_sm > 0 && block_q > 0);
  return {shape.batch * shape.heads_q, ceil_div(shape.seq_q, block_q), shape.causal,
          std::int64_t(sm_count) * ctas_per_sm, shape.causal && heavy_first};
}

}  // namespace

class AttentionBalanceMemo {
 public:
  double get(const BalanceKey& key) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    }
    const double b = balance_of(key);  // outside the lock: another thread may compute the same value
    const std::lock_guard<std::mutex> lock(mutex_);
    if (memo_.size() >= kMaxEntries) memo_.clear();  // bounded: a GUI sweep can visit many shapes
    memo_.emplace(key, b);
    return b;
  }

 private:
  static constexpr std::size_t kMaxEntries = 4096;
  std::mutex mutex_;
  std::map<BalanceKey, double> memo_;
};

std::shared_ptr<AttentionBalanceMemo> make_attention_balance_memo() {
  return std::make_shared<AttentionBalanceMemo>();
}

double attention_dispatch_balance(const AttentionShape& shape, int sm_count, int ctas_per_sm,
                                  std::int64_t block_q, bool heavy_first) {
  return balance_of(balance_key(shape, sm_count, ctas_per_sm, block_q, heavy_first));
}

double attention_mean_kv(const AttentionShape& shape) {
  return shape.causal ? double(shape.seq_kv) / 2 : double(shape.seq_kv);
}

double tensor_rate_ratio(const GpuSpec& gpu, const ComputeProfile& profile) {
  const ComputeProfile& p = gemm_source(profile);
  if (gpu.peak_tflops_bf16 <= 0 || gpu.sm_count <= 0 || p.peak_tflops_bf16 <= 0 || p.sm_count <= 0) return 1.0;
  return (gpu.peak_tflops_bf16 / gpu.sm_count) / (p.peak_tflops_bf16 / p.sm_count);
}

double gemm_efficiency_carried(double e_profile, double ceiling_profile, double ceiling_target, double r) {
  CS_CHECK(e_profile > 0 && ceiling_profile > 0 && ceiling_target > 0 && r > 0);
  return ceiling_target / (1.0 + (ceiling_profile / e_profile - 1.0) * r);
}

double gemm_efficiency(const GemmShape& shape, const GpuSpec& gpu, const ComputeProfile& profile) {
  CS_CHECK(shape.m > 0 && shape.n > 0 && shape.k > 0);
  CS_CHECK(gpu.sm_count > 0);
  const ComputeProfile& p = gemm_source(profile);
  CS_CHECK(p.sm_count > 0);

  double min_m = std::numeric_limits<double>::infinity(), max_m = 0;
  double min_n = min_m, max_n = 0, min_k = min_m, max_k = 0, max_eff = 0;
  for (const auto& g : p.gemm) {
    min_m = std::min(min_m, double(g.m)), max_m = std::max(max_m, double(g.m));
    min_n = std::min(min_n, double(g.n)), max_n = std::max(max_n, double(g.n));
    min_k = std::min(min_k, double(g.k)), max_k = std::max(max_k, double(g.k));
    max_eff = std::max(max_eff, g.efficiency);
  }
  const double m = double(shape.m), n = double(shape.n), k = double(shape.k);
  const double lm = std::log(std::clamp(m, min_m, max_m));
  const double ln = std::log(std::clamp(n, min_n, max_n));
  const double lk = std::log(std::clamp(k, min_k, max_k));

  NearestMean<kGemmNeighbours> nearest;
  for (const auto& g : p.gemm) {
    const double intrinsic = g.efficiency / wave_quantization(g.m, g.n, p.sm_count);
    const double d2 = sq(lm - std::log(double(g.m))) + sq(ln - std::log(double(g.n))) +
                      sq(lk - std::log(double(g.k)));
    nearest.add(d2, intrinsic);
  }
  double e = nearest.mean();
  if (k < min_k) e *= (k / (k + kHalfK)) / (min_k / (min_k + kHalfK));
  // Another GPU generation: the two matmul ceilings and the two tensor rates per SM (header: carrying to
  // other GPUs). r = 1 reduces to e * ceiling.
  const bool ceilings = gpu.matmul_ceiling_fraction > 0 && p.matmul_ceiling_fraction > 0;
  const double ceiling = ceilings ? gpu.matmul_ceiling_fraction / p.matmul_ceiling_fraction : 1.0;
  if (ceilings) e = gemm_efficiency_carried(e, p.matmul_ceiling_fraction, gpu.matmul_ceiling_fraction,
                                            tensor_rate_ratio(gpu, p));
  e *= wave_quantization(shape.m, shape.n, gpu.sm_count);
  // (The ceiling never below the floor: std::clamp with hi < lo is undefined, and returned a table of denormal
  // efficiencies as it was, a GEMM of 10^300 s.)
  return std::clamp(e, kMinEfficiency, std::max(kMinEfficiency, std::min(kMaxEfficiency, max_eff * ceiling)));
}

namespace {

// e_max * balance * kv / (kv + c) of one pass, never above the best efficiency `measured` holds for it.
double pass_efficiency(const AttentionShape& shape, bool backward, const AttentionPassModel& pass,
                       const std::vector<AttentionPoint>& measured, const GpuSpec& gpu, const ComputeProfile& p) {
  // The target GPU's SM count sets the slots (compute_model.hpp: carrying to other GPUs).
  const BalanceKey key = balance_key(shape, gpu.sm_count, pass.ctas_per_sm, p.attention_block_q, pass.heavy_first);
  const double balance = p.attention_balance_memo ? p.attention_balance_memo->get(key) : balance_of(key);
  const double kv = attention_mean_kv(shape);
  double e = pass.peak_efficiency * balance * kv / (kv + pass.half_kv);
  // Never extrapolate above the best efficiency measured for this pass: the saturating kv/(kv + c) term is
  // fitted over sequences up to the table's longest, and beyond it real kernels stop improving (register
  // and shared-memory limits, not the prologue, bound them), as the GEMM table is capped likewise.
  double best = 0;
  for (const auto& a : measured) {
    const double bwd = 2.5 / std::max(1e-9, 3.5 / a.fwdbwd_efficiency - 1.0 / a.fwd_efficiency);
    best = std::max(best, backward ? bwd : a.fwd_efficiency);
  }
  return best > 0 ? std::min(e, best) : e;
}

// The FA2 curve that holds on `gpu`: the profile's own, else the one of the profile its native model
// comes from; only on a GPU with the measured GPU's mma.sync limit (compute_model.hpp). nullptr: none.
const Flash2AttentionModel* flash2_model(const ComputeProfile& profile, const GpuSpec& gpu) {
  const auto& own = profile.attention_flash2 ? profile.attention_flash2 : attention_source(profile).attention_flash2;
  constexpr double kSameFraction = 1e-9;
  return own && std::abs(own->mma_sync_fraction - gpu.mma_sync_fraction) < kSameFraction ? &*own : nullptr;
}

}  // namespace

double attention_efficiency(const AttentionShape& shape, bool backward, const GpuSpec& gpu,
                            const ComputeProfile& profile) {
  CS_CHECK(gpu.sm_count > 0);
  if (shape.kernel == AttentionImpl::flash1) {  // FA1: half of FA2 on the same GPU (compute_model.hpp)
    AttentionShape fa2 = shape;
    fa2.kernel = AttentionImpl::flash2;
    return clamp_efficiency(kFlash1OverFlash2 * attention_efficiency(fa2, backward, gpu, profile));
  }
  if (shape.kernel == AttentionImpl::flash2) {
    if (const Flash2AttentionModel* fa2 = flash2_model(profile, gpu)) {
      const ComputeProfile& p = profile.attention_flash2 ? profile : attention_source(profile);
      return clamp_efficiency(pass_efficiency(shape, backward, backward ? fa2->bwd : fa2->fwd, fa2->points, gpu, p));
    }
  }
  const ComputeProfile& p = attention_source(profile);
  double e = pass_efficiency(shape, backward, backward ? p.attention_bwd : p.attention_fwd, p.attention, gpu, p);
  // FlashAttention-2 without a measured curve of its own (op.hpp: AttentionImpl).
  if (shape.kernel == AttentionImpl::flash2) e *= gpu.mma_sync_fraction;
  return clamp_efficiency(e);
}

double memory_bound_efficiency(MemOpKind kind, double bytes, const ComputeProfile& profile) {
  const ComputeProfile& p = memory_source(profile);
  const double b = std::max(bytes, 1.0);
  double e = mem_efficiency_of_kind(kind, b, p);
  if (e < 0) {
    // Kinds without a measurement take their nearest analogue: softmax and cross-entropy are row
    // reductions followed by elementwise work, like a norm; an embedding lookup is a gather, closest to
    // an elementwise kernel; anything still missing falls back to the plain copy.
    MemOpKind analogue = MemOpKind::copy;
    switch (kind) {
      case MemOpKind::softmax:
      case MemOpKind::cross_entropy: analogue = MemOpKind::norm; break;
      case MemOpKind::embedding: analogue = MemOpKind::elementwise; break;
      default: break;
    }
    e = mem_efficiency_of_kind(analogue, b, p);
    if (e < 0) e = mem_efficiency_of_kind(MemOpKind::copy, b, p);
    if (e < 0) {
      double sum = 0;
      for (const auto& pt : p.memory_bound) sum += pt.efficiency;
      e = sum / double(p.memory_bound.size());
    }
  }
  return clamp_efficiency(e);
}

namespace {

// One run of the op on the GPU, queued behind the previous kernel (op.repeat and op.host_issued are
// op_time_s's).
double kernel_time_s(const Op& op, const GpuSpec& gpu, const ComputeProfile& profile) {
  CS_CHECK(op.kind != OpKind::collective);
  CS_CHECK(op.flops >= 0 && op.bytes >= 0);
  CS_CHECK(gpu.hbm_tbps > 0);
  const double launch_s = profile.launch_overhead_us * 1e-6;
  const double hbm = hbm_bytes_per_s(gpu);
  // Operand traffic of math kernels streams like a large copy.
  auto operand_time_s = [&](double bytes) {
    return bytes > 0 ? bytes / (memory_bound_efficiency(MemOpKind::copy, bytes, profile) * hbm) : 0.0;
  };

  switch (op.kind) {
    case OpKind::gemm: {
      const auto& s = op.gemm;
      const double flops = op.flops > 0 ? op.flops : 2.0 * double(s.m) * double(s.n) * double(s.k);
      if (flops <= 0 && op.bytes <= 0) return launch_s;
      const double eff = clamp_efficiency(gemm_efficiency(s, gpu, profile) *
                                          dtype_factor(op.dtype, gpu, profile));
      const double math_s = flops / (eff * tensor_peak_flops(gpu, op.dtype) * gpu.clock_fraction());
      return launch_s + std::max(math_s, operand_time_s(op.bytes));
    }
    case OpKind::attention_fwd:
    case OpKind::attention_bwd: {
      const double eff = clamp_efficiency(
          attention_efficiency(op.attention, op.kind == OpKind::attention_bwd, gpu, profile) *
          dtype_factor(op.dtype, gpu, profile));
      const double math_s = op.flops / (eff * tensor_peak_flops(gpu, op.dtype) * gpu.clock_fraction());
      return launch_s + std::max(math_s, operand_time_s(op.bytes));
    }
    case OpKind::memory_bound:
    case OpKind::optimizer: {
      const MemOpKind kind = op.kind == OpKind::optimizer ? MemOpKind::optimizer : op.mem_kind;
      if (op.bytes <= 0) return launch_s;
      return launch_s + op.bytes / (memory_bound_efficiency(kind, op.bytes, profile) * hbm);
    }
    case OpKind::collective: break;
  }
  CS_CHECK(false);
  return 0;
}

}  // namespace

double op_time_s(const Op& op, const GpuSpec& gpu, const ComputeProfile& profile) {
  CS_CHECK(op.repeat >= 1);
  const double gpu_s = kernel_time_s(op, gpu, profile);
  // A host-issued run starts no earlier than the host has issued it (the essay's "Host-issued kernels").
  const double run_s = op.host_issued ? std::max(profile.expert_host_issue_us * 1e-6, gpu_s) : gpu_s;
  return op.repeat * run_s;
}

OpTimeKey op_time_key(const Op& op) {
  const auto& a = op.attention;
  return {{static_cast<std::int64_t>(op.kind), static_cast<std::int64_t>(op.dtype), static_cast<std::int64_t>(op.mem_kind),
           op.gemm.m, op.gemm.n, op.gemm.k, a.batch, a.heads_q, a.heads_kv, a.seq_q, a.seq_kv, a.head_dim,
           static_cast<std::int64_t>(a.causal), static_cast<std::int64_t>(a.kernel), op.repeat,
           static_cast<std::int64_t>(op.host_issued)},
          op.flops, op.bytes};
}

std::size_t OpTimeKeyHash::operator()(const OpTimeKey& k) const {
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a over the fields' bits
  auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 1099511628211ULL; };
  for (std::int64_t v : k.ints) mix(static_cast<std::uint64_t>(v));
  mix(std::bit_cast<std::uint64_t>(k.flops));
  mix(std::bit_cast<std::uint64_t>(k.bytes));
  return static_cast<std::size_t>(h);
}

}  // namespace cs::models
