#include "calibrate/fit/compute_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <sstream>
#include <tuple>

#include "models/compute/comm_profile.hpp"

namespace cs::calibrate {

namespace {

constexpr double kMaxEfficiency = 0.95;
// Below 1e-4 of peak after the launch overhead a point is a timing error, not a kernel: the H200 reference
// file's slowest fitted point (a small GEMM) reaches 0.008 (8e-3), and a 64 MiB copy timed at 999 s (1.4e-8)
// made the copy of every step take minutes (issue 32).
constexpr double kMinEfficiency = 1e-4;

// The 1-D search of fit_attention_pass (scripts/derive_compute_defaults.py does the same steps).
constexpr double kHalfKvMax = 16384;
constexpr double kHalfKvStep = 16;
constexpr int kGoldenIterations = 100;
// The backward's joint fit with the harness's host floor (fit_backward_with_host_floor).
constexpr double kHostFloorMaxS = 1e-3;
constexpr double kHostFloorStepS = 10e-6;
constexpr double kHalfKvCoarseStep = 64;

struct PassPoint {
  double kv;      // mean KV length, tokens
  double ideal_s; // work / (peak * balance): the time at e_max * kv / (kv + c) = 1
  double time_s;  // measured, launch overhead removed
};

struct PassCost {
  double sum_sq = 0;
  double peak_efficiency = 0;
};

// For a fixed c, the least-squares ln e_max is the mean residual.
PassCost pass_cost(const std::vector<PassPoint>& pts, double c) {
  std::vector<double> r;
  r.reserve(pts.size());
  double mean = 0;
  for (const auto& p : pts) {
    r.push_back(std::log(p.time_s) - std::log(p.ideal_s) + std::log(p.kv / (p.kv + c)));
    mean += r.back();
  }
  mean /= double(r.size());
  PassCost out;
  for (double x : r) out.sum_sq += (x - mean) * (x - mean);
  out.peak_efficiency = std::exp(-mean);
  return out;
}

// (e_max, c) minimising sum (ln t_model - ln t)^2: grid over c, then golden section within a step.
std::pair<double, double> fit_attention_pass(const std::vector<PassPoint>& pts) {
  double best_c = 0, best_s = pass_cost(pts, 0).sum_sq;
  const int n = static_cast<int>(kHalfKvMax / kHalfKvStep);
  for (int i = 1; i <= n; ++i) {
    const double c = i * kHalfKvStep;
    const double sc = pass_cost(pts, c).sum_sq;
    if (sc < best_s) best_c = c, best_s = sc;
  }
  double lo = std::max(0.0, best_c - kHalfKvStep), hi = std::min(kHalfKvMax, best_c + kHalfKvStep);
  const double g = (std::sqrt(5.0) - 1) / 2;
  for (int i = 0; i < kGoldenIterations; ++i) {
    const double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
    if (pass_cost(pts, a).sum_sq < pass_cost(pts, b).sum_sq) hi = b;
    else lo = a;
  }
  double c = 0.5 * (lo + hi);
  if (pass_cost(pts, best_c).sum_sq <= pass_cost(pts, c).sum_sq) c = best_c;
  return {pass_cost(pts, c).peak_efficiency, c};
}

template <class F>
double golden_min(F&& f, double lo, double hi) {
  const double g = (std::sqrt(5.0) - 1) / 2;
  for (int i = 0; i < kGoldenIterations; ++i) {
    const double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
    if (f(a) < f(b)) hi = b;
    else lo = a;
  }
  return 0.5 * (lo + hi);
}

struct BackwardPoint {
  double kv;       // mean KV length, tokens
  double ideal_s;  // work / (peak * balance)
  double fwd_s;    // measured forward, launch overhead included
  double fb_s;     // measured forward+backward
};

struct BackwardFit {
  double peak_efficiency = 0, half_kv = 0, host_floor_s = 0;
};

// (e_max, c, T) minimising sum (ln o_model - ln o)^2 over the observed backward times o = fb - fwd - L,
// modelled as W / (e_max kv / (kv + c)) + max(0, T - fwd): the backward op starts when both the forward
// has ended and the host has issued it (T after the start; compute_model.hpp). For fixed (c, T), ln e_max
// by Gauss-Newton from the gap-free closed form; (c, T) on a grid (smallest T on ties), then golden
// section on c and on T within a step. scripts/derive_compute_defaults.py does exactly the same.
// `fixed_floor_s` holds T instead of fitting it (the FA2 rows: compute_fit.hpp).
BackwardFit fit_backward_with_host_floor(const std::vector<BackwardPoint>& pts, double L,
                                         std::optional<double> fixed_floor_s) {
  const std::size_t n = pts.size();
  std::vector<double> a(n), o(n), gap(n);
  auto solve = [&](double c, double t_host, double* e_out) {
    double u = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const auto& p = pts[i];
      a[i] = p.ideal_s * (p.kv + c) / p.kv;
      o[i] = p.fb_s - p.fwd_s - L;
      gap[i] = std::max(0.0, t_host - p.fwd_s);
      if (o[i] - gap[i] <= 0) return std::numeric_limits<double>::infinity();
      u += std::log(a[i] / (o[i] - gap[i]));
    }
    u /= double(n);
    for (int it = 0; it < 4; ++it) {
      double num = 0, den = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const double k = a[i] * std::exp(-u), q = k / (k + gap[i]);
        num += (std::log(k + gap[i]) - std::log(o[i])) * q;
        den += q * q;
      }
      u += num / den;
    }
    double cost = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double r = std::log(a[i] * std::exp(-u) + gap[i]) - std::log(o[i]);
      cost += r * r;
    }
    if (e_out) *e_out = std::exp(u);
    return cost;
  };
  double best = std::numeric_limits<double>::infinity(), c = 0, t_host = fixed_floor_s.value_or(0);
  const int n_t = fixed_floor_s ? 0 : static_cast<int>(std::lround(kHostFloorMaxS / kHostFloorStepS));
  const int n_c = static_cast<int>(kHalfKvMax / kHalfKvCoarseStep);
  for (int i = 0; i <= n_t; ++i)
    for (int j = 0; j <= n_c; ++j) {
      const double t = fixed_floor_s ? *fixed_floor_s : i * kHostFloorStepS;
      const double cost = solve(j * kHalfKvCoarseStep, t, nullptr);
      if (cost < best) best = cost, c = j * kHalfKvCoarseStep, t_host = t;
    }
  const double c_ref = golden_min([&](double x) { return solve(x, t_host, nullptr); },
                                  std::max(0.0, c - kHalfKvCoarseStep), std::min(kHalfKvMax, c + kHalfKvCoarseStep));
  if (solve(c_ref, t_host, nullptr) < solve(c, t_host, nullptr)) c = c_ref;
  if (!fixed_floor_s) {
    const double t_ref = golden_min([&](double x) { return solve(c, x, nullptr); }, std::max(0.0, t_host - kHostFloorStepS),
                                    std::min(kHostFloorMaxS, t_host + kHostFloorStepS));
    if (solve(c, t_ref, nullptr) < solve(c, t_host, nullptr)) t_host = t_ref;
  }
  BackwardFit out;
  solve(c, t_host, &out.peak_efficiency);
  out.half_kv = c;
  out.host_floor_s = t_host;
  return out;
}

bool valid_efficiency(double e) { return e >= kMinEfficiency && e <= kMaxEfficiency && std::isfinite(e); }

std::string describe(double e) {
  std::ostringstream s;
  s << e;
  return s.str();
}

std::string rejected(const ComputeMeasurement& m, double e) {
  return m.where + ": " + m.label + ": efficiency " + describe(e) +
         " outside [0.0001, 0.95] after removing the launch overhead; left out of the fit";
}

// One attention kernel's rows (the native kernel's, or FlashAttention-2's): the measured table and the
// model of compute_model.hpp. Block, CTAs per SM and launch orders are kernel facts taken from the default
// profile; (e_max, c) per pass are fitted over the shapes measured both ways (forward on t_fwd - L;
// backward on t_fwdbwd - t_fwd - L, jointly with the harness's host floor unless `fixed_floor_s` holds
// it). Only rows at the kernel's most measured head_dim enter (the model has no head_dim term); the others
// are noted. Without two usable shapes no model is fitted (peak_efficiency 0).
struct AttentionKernelFit {
  std::vector<models::AttentionPoint> points;
  models::AttentionPassModel fwd, bwd;
  double host_floor_s = 0;
};

AttentionKernelFit fit_attention_kernel(const std::vector<const ComputeMeasurement*>& rows, double L, double peak,
                                        int sm_count, std::optional<double> fixed_floor_s, const std::string& kernel,
                                        std::vector<std::string>& notes) {
  const models::ComputeProfile& d = models::default_compute_profile();
  const std::string name = "attention " + (kernel.empty() ? "" : kernel + " ");
  // Forward and forward+backward of one shape (and backend) make one table row.
  using Key = std::tuple<std::string, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t>;
  std::vector<Key> order;
  std::map<Key, std::pair<double, double>> eff;    // fwd, fwdbwd (0 = not measured)
  std::map<Key, std::pair<double, double>> times;  // seconds, fwd, fwdbwd
  std::map<std::int64_t, int> shapes_at_d;
  for (const ComputeMeasurement* m : rows) {
    const auto& a = m->attention;
    const Key key{m->attention_backend, a.batch, a.heads_q, a.heads_kv, a.seq_q, a.head_dim};
    const bool fwd = m->kind == ComputeKind::attention_fwd;
    const double e = work_of(*m) / ((m->time_s - (fwd ? 1 : 2) * L) * peak);
    if (!valid_efficiency(e)) {
      notes.push_back(rejected(*m, e));
      continue;
    }
    if (!eff.count(key)) order.push_back(key), ++shapes_at_d[a.head_dim];
    (fwd ? eff[key].first : eff[key].second) = e;
    (fwd ? times[key].first : times[key].second) = m->time_s;
  }
  AttentionKernelFit out;
  std::int64_t fit_d = 0;
  for (const auto& [hd, n] : shapes_at_d)
    if (fit_d == 0 || n >= shapes_at_d[fit_d]) fit_d = hd;
  std::vector<PassPoint> fwd;
  std::vector<BackwardPoint> bwd;
  for (const auto& key : order) {
    auto [ef, efb] = eff[key];
    const auto& [backend, b, hq, hkv, s, hd] = key;
    const std::string shape_name = name + "b" + std::to_string(b) + " hq" + std::to_string(hq) + " s" + std::to_string(s);
    if (hd != fit_d) {
      notes.push_back(shape_name + " d" + std::to_string(hd) + ": the attention model has no head_dim term and is fitted at d = " +
                      std::to_string(fit_d) + "; validated, left out of the fit");
      continue;
    }
    if (ef == 0 || efb == 0) {
      notes.push_back(shape_name + ": measured " + (ef == 0 ? "forward+backward" : "forward") +
                      " only; the other takes the same efficiency");
      if (ef == 0) ef = efb;
      if (efb == 0) efb = ef;
    }
    out.points.push_back({b, hq, hkv, s, hd, ef, efb});
    const auto [t_fwd, t_fb] = times[key];
    if (t_fwd <= 0 || t_fb <= 0) continue;
    if (t_fwd - L <= 0 || t_fb - t_fwd - L <= 0) {
      notes.push_back(shape_name + ": forward or backward time not above the launch overhead; left out of the attention model");
      continue;
    }
    const models::AttentionShape shape{b, hq, hkv, s, s, hd, true};
    const double flops = 2.0 * double(b) * double(hq) * double(s) * double(s) * double(hd);
    const double kv = models::attention_mean_kv(shape);
    const auto balance = [&](const models::AttentionPassModel& pass) {
      return models::attention_dispatch_balance(shape, sm_count, pass.ctas_per_sm, d.attention_block_q, pass.heavy_first);
    };
    fwd.push_back({kv, flops / (peak * balance(d.attention_fwd)), t_fwd - L});
    bwd.push_back({kv, 2.5 * flops / (peak * balance(d.attention_bwd)), t_fwd, t_fb});
  }
  if (fwd.size() < 2) {
    if (!order.empty())
      notes.push_back(name + "model: fewer than two shapes measured forward and forward+backward; " +
                      (kernel.empty() ? "the default profile's attention model is used"
                                      : "FlashAttention-2 is predicted as the native kernel times mma_sync_fraction"));
    return out;
  }
  const auto [e_f, c_f] = fit_attention_pass(fwd);
  const BackwardFit b = fit_backward_with_host_floor(bwd, L, fixed_floor_s);
  for (auto [pass, e, c, def, dir] : {std::tuple{&out.fwd, e_f, c_f, &d.attention_fwd, "forward"},
                                      std::tuple{&out.bwd, b.peak_efficiency, b.half_kv, &d.attention_bwd, "backward"}}) {
    *pass = *def;
    pass->half_kv = c;
    pass->peak_efficiency = std::min(e, 1.0);
    if (e > 1) notes.push_back(name + dir + ": fitted peak efficiency " + describe(e) + " above 1; capped at 1");
  }
  out.host_floor_s = b.host_floor_s;
  return out;
}

}  // namespace

double fitted_launch_overhead_s(const std::vector<ComputeMeasurement>& points, std::vector<std::string>& notes) {
  std::map<int, std::vector<std::pair<double, double>>> sweeps;  // kind -> (bytes, seconds)
  for (const auto& p : points)
    if (p.kind == ComputeKind::memory_bound) sweeps[static_cast<int>(p.mem_kind)].emplace_back(p.bytes, p.time_s);
  bool found = false;
  double best = 0;
  for (auto& [kind, pts] : sweeps) {
    std::sort(pts.begin(), pts.end());
    // Two smallest distinct sizes.
    std::size_t j = 1;
    while (j < pts.size() && pts[j].first == pts[0].first) ++j;
    if (j >= pts.size()) continue;
    const auto [b1, t1] = pts[0];
    const auto [b2, t2] = pts[j];
    const double intercept = t1 - b1 * (t2 - t1) / (b2 - b1);
    if (!found || intercept < best) best = intercept;
    found = true;
  }
  if (!found) {
    const double fallback = models::default_compute_profile().launch_overhead_us * 1e-6;
    notes.push_back("launch overhead: no memory-bound kernel measured at two sizes; using the default " +
                    describe(fallback * 1e6) + " us");
    return fallback;
  }
  if (best < 0) {
    notes.push_back("launch overhead: a memory-bound size sweep extrapolates to a negative time at zero bytes; using 0");
    return 0;
  }
  return best;
}

std::optional<models::ComputeProfile> fit_compute_profile(const std::vector<ComputeMeasurement>& points,
                                                          const models::GpuSpec& gpu, int sm_count,
                                                          const std::string& source, std::vector<std::string>& notes) {
  if (points.empty()) return std::nullopt;
  models::ComputeProfile p;
  p.source = source;
  p.sm_count = sm_count > 0 ? sm_count : gpu.sm_count;
  p.matmul_ceiling_fraction = gpu.matmul_ceiling_fraction;
  p.peak_tflops_bf16 = gpu.peak_tflops_bf16;
  const double L = fitted_launch_overhead_s(points, notes);
  p.launch_overhead_us = L * 1e6;
  const double peak_bf16 = gpu.peak_tflops_bf16 * 1e12;
  const double hbm = gpu.hbm_tbps * 1e12;

  auto reject = [&](const ComputeMeasurement& m, double e) { notes.push_back(rejected(m, e)); };

  // GEMM table: bf16 rows, in file order.
  for (const auto& m : points) {
    if (m.kind != ComputeKind::gemm || m.dtype != models::Dtype::bf16) continue;
    const double e = work_of(m) / ((m.time_s - L) * peak_bf16);
    if (!valid_efficiency(e)) {
      reject(m, e);
      continue;
    }
    p.gemm.push_back({m.gemm.m, m.gemm.n, m.gemm.k, e});
  }

  // Attention: the native kernel's rows (PyTorch's default SDPA), and FlashAttention-2's with a model of
  // their own under the native fit's host floor. Forced-cuDNN rows are validated, not fitted (compute_fit.hpp).
  std::vector<const ComputeMeasurement*> native, flash2;
  std::map<std::string, int> cudnn_points;  // per file
  for (const auto& m : points) {
    if (m.kind != ComputeKind::attention_fwd && m.kind != ComputeKind::attention_fwdbwd) continue;
    if (m.attention.kernel == models::AttentionImpl::flash2) flash2.push_back(&m);
    else if (m.attention_backend == "cudnn") ++cudnn_points[m.where.substr(0, m.where.find(": "))];
    else native.push_back(&m);
  }
  for (const auto& [file, n] : cudnn_points)
    notes.push_back(file + ": " + std::to_string(n) + " forced-cuDNN attention points: validated against the native "
                    "model, not fitted into it (calibrate/fit/compute_fit.hpp)");
  const models::ComputeProfile& d = models::default_compute_profile();
  p.attention_block_q = d.attention_block_q;
  const AttentionKernelFit fused = fit_attention_kernel(native, L, peak_bf16, p.sm_count, std::nullopt, "", notes);
  p.attention = fused.points;
  if (fused.fwd.peak_efficiency > 0) {
    p.attention_fwd = fused.fwd;
    p.attention_bwd = fused.bwd;
    p.attention_host_floor_us = fused.host_floor_s * 1e6;
  }
  if (!flash2.empty()) {
    const double floor_us = fused.fwd.peak_efficiency > 0 ? p.attention_host_floor_us : d.attention_host_floor_us;
    const AttentionKernelFit fa2 = fit_attention_kernel(flash2, L, peak_bf16, p.sm_count, floor_us * 1e-6, "flash2", notes);
    if (fa2.fwd.peak_efficiency > 0)
      p.attention_flash2 = models::Flash2AttentionModel{gpu.mma_sync_fraction, fa2.fwd, fa2.bwd, fa2.points};
  }

  // Memory-bound table.
  for (const auto& m : points) {
    if (m.kind != ComputeKind::memory_bound) continue;
    const double e = m.bytes / ((m.time_s - L) * hbm);
    if (!valid_efficiency(e)) {
      reject(m, e);
      continue;
    }
    p.memory_bound.push_back({m.mem_kind, m.bytes, e});
  }
  std::stable_sort(p.memory_bound.begin(), p.memory_bound.end(), [](const auto& a, const auto& b) {
    const auto ka = models::to_string(a.kind), kb = models::to_string(b.kind);
    return ka != kb ? ka < kb : a.bytes < b.bytes;
  });

  // fp8 speed-up over bf16 at the same shape.
  std::vector<double> ratios;
  for (const auto& m : points) {
    if (m.kind != ComputeKind::gemm || m.dtype != models::Dtype::fp8) continue;
    if (!gpu.has_fp8()) {
      notes.push_back(m.where + ": fp8 GEMM on a GPU without fp8 peak in the catalog; left out");
      continue;
    }
    double bf16_s = m.bf16_reference_s;
    if (bf16_s <= 0) {
      double sum = 0;
      int n = 0;
      for (const auto& o : points)
        if (o.kind == ComputeKind::gemm && o.dtype == models::Dtype::bf16 && o.gemm.m == m.gemm.m &&
            o.gemm.n == m.gemm.n && o.gemm.k == m.gemm.k)
          sum += o.time_s, ++n;
      if (n == 0) {
        notes.push_back(m.where + ": " + m.label + ": no bf16 GEMM of the same shape; not used for the fp8 ratio");
        continue;
      }
      bf16_s = sum / n;
    }
    const double f = work_of(m);
    const double e8 = f / ((m.time_s - L) * gpu.peak_tflops_fp8 * 1e12);
    const double e16 = f / ((bf16_s - L) * peak_bf16);
    if (e8 > 0 && e16 > 0) ratios.push_back(e8 / e16);
  }
  p.fp8_gemm_speedup_efficiency =
      ratios.empty() ? models::default_compute_profile().fp8_gemm_speedup_efficiency
                     : std::accumulate(ratios.begin(), ratios.end(), 0.0) / double(ratios.size());
  if (p.gemm.empty() && p.attention.empty() && !p.attention_flash2 && p.memory_bound.empty()) return std::nullopt;
  return p;
}

}  // namespace cs::calibrate
