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

bool valid_efficiency(double e) { return e > 0 && e <= kMaxEfficiency && std::isfinite(e); }

std::string describe(double e) {
  std::ostringstream s;
  s << e;
  return s.str();
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
