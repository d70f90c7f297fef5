#include "calibrate/compute_fit.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <sstream>
#include <tuple>

#include "models/comm_profile.hpp"

namespace cs::calibrate {

namespace {

constexpr double kMaxEfficiency = 0.95;

// The 1-D search of fit_attention_pass (scripts/derive_compute_defaults.py does the same steps).
constexpr double kHalfKvMax = 16384;
constexpr double kHalfKvStep = 16;
constexpr int kGoldenIterations = 100;

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

bool valid_efficiency(double e) { return e > 0 && e <= kMaxEfficiency && std::isfinite(e); }

std::string describe(double e) {
  std::ostringstream s;
  s << e;
  return s.str();
}

// The attention kernel model (models/compute_model.hpp): block, CTAs per SM and launch orders are
// kernel facts taken from the default profile; (e_max, c) per pass are fitted over the shapes measured
// both ways (forward on t_fwd - L, backward on t_fwdbwd - t_fwd - L). Without two such shapes the
// profile keeps no attention model and the default's stands in.
template <class Key>
void fit_attention_model(models::ComputeProfile& p, const std::vector<Key>& shapes,
                         const std::map<Key, std::pair<double, double>>& times, double L, double peak,
                         std::vector<std::string>& notes) {
  const models::ComputeProfile& d = models::default_compute_profile();
  p.attention_block_q = d.attention_block_q;
  std::vector<PassPoint> fwd, bwd;
  for (const auto& key : shapes) {
    const auto [b, hq, hkv, s, hd] = key;
    const auto it = times.find(key);
    if (it == times.end() || it->second.first <= 0 || it->second.second <= 0) continue;
    const double t_f = it->second.first - L, t_b = it->second.second - it->second.first - L;
    if (t_f <= 0 || t_b <= 0) {
      notes.push_back("attention b" + std::to_string(b) + " hq" + std::to_string(hq) + " s" + std::to_string(s) +
                      ": forward or backward time not above the launch overhead; left out of the attention model");
      continue;
    }
    const models::AttentionShape shape{b, hq, hkv, s, s, hd, true};
    const double flops = 2.0 * double(b) * double(hq) * double(s) * double(s) * double(hd);
    const double kv = models::attention_mean_kv(shape);
    const auto balance = [&](const models::AttentionPassModel& pass) {
      return models::attention_dispatch_balance(shape, p.sm_count, pass.ctas_per_sm, p.attention_block_q,
                                                pass.heavy_first);
    };
    fwd.push_back({kv, flops / (peak * balance(d.attention_fwd)), t_f});
    bwd.push_back({kv, 2.5 * flops / (peak * balance(d.attention_bwd)), t_b});
  }
  if (fwd.size() < 2) {
    if (!shapes.empty())
      notes.push_back("attention: fewer than two shapes measured forward and forward+backward; the default "
                      "profile's attention model is used");
    return;
  }
  for (auto [pass, pts, def, name] :
       {std::tuple{&p.attention_fwd, &fwd, &d.attention_fwd, "forward"},
        std::tuple{&p.attention_bwd, &bwd, &d.attention_bwd, "backward"}}) {
    const auto [e, c] = fit_attention_pass(*pts);
    *pass = *def;
    pass->half_kv = c;
    pass->peak_efficiency = std::min(e, 1.0);
    if (e > 1)
      notes.push_back(std::string("attention ") + name + ": fitted peak efficiency " + describe(e) +
                      " above 1; capped at 1");
  }
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
  const double L = fitted_launch_overhead_s(points, notes);
  p.launch_overhead_us = L * 1e6;
  const double peak_bf16 = gpu.peak_tflops_bf16 * 1e12;
  const double hbm = gpu.hbm_tbps * 1e12;

  auto reject = [&](const ComputeMeasurement& m, double e) {
    notes.push_back(m.where + ": " + m.label + ": efficiency " + describe(e) +
                    " outside (0, 0.95] after removing the launch overhead; left out of the fit");
  };

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

  // Attention: forward and forward+backward of one shape make one table row.
  using ShapeKey = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t>;
  std::vector<ShapeKey> order;
  std::map<ShapeKey, std::pair<double, double>> att;  // efficiencies fwd, fwdbwd (0 = not measured)
  std::map<ShapeKey, std::pair<double, double>> att_s;  // kernel times fwd, fwdbwd, seconds
  for (const auto& m : points) {
    if (m.kind != ComputeKind::attention_fwd && m.kind != ComputeKind::attention_fwdbwd) continue;
    const auto& a = m.attention;
    const ShapeKey key{a.batch, a.heads_q, a.heads_kv, a.seq_q, a.head_dim};
    const bool fwd = m.kind == ComputeKind::attention_fwd;
    const double e = work_of(m) / ((m.time_s - (fwd ? 1 : 2) * L) * peak_bf16);
    if (!valid_efficiency(e)) {
      reject(m, e);
      continue;
    }
    if (!att.count(key)) order.push_back(key);
    (fwd ? att[key].first : att[key].second) = e;
    (fwd ? att_s[key].first : att_s[key].second) = m.time_s;
  }
  for (const auto& key : order) {
    auto [ef, efb] = att[key];
    const auto [b, hq, hkv, s, d] = key;
    if (ef == 0 || efb == 0) {
      notes.push_back("attention b" + std::to_string(b) + " hq" + std::to_string(hq) + " s" + std::to_string(s) +
                      ": measured " + (ef == 0 ? "forward+backward" : "forward") +
                      " only; the other takes the same efficiency");
      if (ef == 0) ef = efb;
      if (efb == 0) efb = ef;
    }
    p.attention.push_back({b, hq, hkv, s, d, ef, efb});
  }
  fit_attention_model(p, order, att_s, L, peak_bf16, notes);

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
  if (p.gemm.empty() && p.attention.empty() && p.memory_bound.empty()) return std::nullopt;
  return p;
}

}  // namespace cs::calibrate
