#include "models/compute_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

#include "models/check.hpp"

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
  CS_MODELS_CHECK(m > 0 && n > 0 && sm_count > 0);
  const std::int64_t tiles = ceil_div(m, kTileM) * ceil_div(n, kTileN);
  const std::int64_t waves = ceil_div(tiles, sm_count);
  return static_cast<double>(tiles) / static_cast<double>(waves * sm_count);
}

// A calibration profile may leave a table empty; the default H200 table stands in for it.
const ComputeProfile& gemm_source(const ComputeProfile& p) {
  return p.gemm.empty() ? default_compute_profile() : p;
}
const ComputeProfile& attention_source(const ComputeProfile& p) {
  return p.attention.empty() ? default_compute_profile() : p;
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
    CS_MODELS_CHECK(wsum > 0);
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
// have fp8; elsewhere peak_tflops(fp8) is the bf16 peak and the efficiency is bf16's.
double dtype_factor(Dtype d, const GpuSpec& gpu, const ComputeProfile& p) {
  if (d == Dtype::fp8 && gpu.has_fp8() && p.fp8_gemm_speedup_efficiency > 0) {
    return p.fp8_gemm_speedup_efficiency;
  }
  return 1.0;
}

double hbm_bytes_per_s(const GpuSpec& gpu) { return gpu.hbm_tbps * 1e12; }

}  // namespace

double gemm_efficiency(const GemmShape& shape, const GpuSpec& gpu, const ComputeProfile& profile) {
  CS_MODELS_CHECK(shape.m > 0 && shape.n > 0 && shape.k > 0);
  CS_MODELS_CHECK(gpu.sm_count > 0);
  const ComputeProfile& p = gemm_source(profile);
  CS_MODELS_CHECK(p.sm_count > 0);

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
  e *= wave_quantization(shape.m, shape.n, gpu.sm_count);
  return std::clamp(e, kMinEfficiency, std::min(kMaxEfficiency, max_eff));
}

double attention_efficiency(const AttentionShape& shape, bool backward, const GpuSpec& gpu,
                            const ComputeProfile& profile) {
  (void)gpu;  // fractions of peak carry across GPUs unchanged (compute_model.hpp)
  CS_MODELS_CHECK(shape.batch > 0 && shape.heads_q > 0 && shape.seq_q > 0 && shape.seq_kv > 0);
  const ComputeProfile& p = attention_source(profile);

  const double seq = std::sqrt(double(shape.seq_q) * double(shape.seq_kv));
  const double bh = double(shape.batch) * double(shape.heads_q);
  double min_s = std::numeric_limits<double>::infinity(), max_s = 0, min_bh = min_s, max_bh = 0;
  for (const auto& a : p.attention) {
    const double abh = double(a.batch) * double(a.heads_q);
    min_s = std::min(min_s, double(a.seq)), max_s = std::max(max_s, double(a.seq));
    min_bh = std::min(min_bh, abh), max_bh = std::max(max_bh, abh);
  }
  const double ls = std::log(std::clamp(seq, min_s, max_s));
  const double lbh = std::log(std::clamp(bh, min_bh, max_bh));

  NearestMean<16> fwd, fwdbwd;  // every point (the attention table is small)
  for (const auto& a : p.attention) {
    const double d2 = sq(ls - std::log(double(a.seq))) +
                      sq(lbh - std::log(double(a.batch) * double(a.heads_q)));
    fwd.add(d2, a.fwd_efficiency);
    fwdbwd.add(d2, a.fwdbwd_efficiency);
  }
  const double e_fwd = fwd.mean();
  double e = e_fwd;
  if (backward) {
    // fwd+bwd does 3.5 F in time 3.5 F / (e_fb P); the forward's share is F / (e_f P); the backward
    // does the other 2.5 F in the remainder.
    const double e_fb = fwdbwd.mean();
    const double rest = 3.5 / e_fb - 1.0 / e_fwd;
    e = rest > 0 ? 2.5 / rest : e_fb;
  }
  // Fewer CTAs (short sequences, few heads) than the table's edge: the kernel takes as long as at the
  // edge, so efficiency scales down with the work.
  if (seq < min_s) e *= seq / min_s;
  if (bh < min_bh) e *= bh / min_bh;
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

double op_time_s(const Op& op, const GpuSpec& gpu, const ComputeProfile& profile) {
  CS_MODELS_CHECK(op.kind != OpKind::collective);
  CS_MODELS_CHECK(op.flops >= 0 && op.bytes >= 0);
  CS_MODELS_CHECK(gpu.hbm_tbps > 0);
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
      const double math_s = flops / (eff * tensor_peak_flops(gpu, op.dtype));
      return launch_s + std::max(math_s, operand_time_s(op.bytes));
    }
    case OpKind::attention_fwd:
    case OpKind::attention_bwd: {
      const double eff = clamp_efficiency(
          attention_efficiency(op.attention, op.kind == OpKind::attention_bwd, gpu, profile) *
          dtype_factor(op.dtype, gpu, profile));
      const double math_s = op.flops / (eff * tensor_peak_flops(gpu, op.dtype));
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
  CS_MODELS_CHECK(false);
  return 0;
}

}  // namespace cs::models
