#include "calibrate/check/validate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <sstream>

#include "calibrate/fit/compute_fit.hpp"
#include "models/compute/comm_profile.hpp"

namespace cs::calibrate {

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

GroupSummary summarize_indices(const std::string& name, const std::vector<ValidationRow>& rows,
                               const std::vector<std::size_t>& idx) {
  GroupSummary g;
  g.group = name;
  g.points = idx.size();
  std::vector<double> ape;
  double worst = -1;
  for (auto i : idx) {
    const double e = std::abs(rows[i].error());
    ape.push_back(e);
    if (e > worst) worst = e, g.worst = i;
  }
  g.mape = ape.empty() ? 0 : std::accumulate(ape.begin(), ape.end(), 0.0) / double(ape.size());
  g.median_ape = median(ape);
  return g;
}

std::string fmt_time(double s) {
  char buf[32];
  if (s >= 1) std::snprintf(buf, sizeof buf, "%.3f s", s);
  else if (s >= 1e-3) std::snprintf(buf, sizeof buf, "%.3f ms", s * 1e3);
  else std::snprintf(buf, sizeof buf, "%.2f us", s * 1e6);
  return buf;
}

std::string pct(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", x * 100);
  return buf;
}

std::string pct_abs(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", x * 100);
  return buf;
}

std::string pad(std::string s, std::size_t w) {
  if (s.size() < w) s.resize(w, ' ');
  return s;
}

std::string lpad(const std::string& s, std::size_t w) { return s.size() < w ? std::string(w - s.size(), ' ') + s : s; }

}  // namespace

ValidationSummary summarize(const std::vector<ValidationRow>& rows) {
  ValidationSummary s;
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::size_t>> by_group;
  std::vector<std::size_t> all(rows.size());
  std::iota(all.begin(), all.end(), std::size_t{0});
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!by_group.count(rows[i].group)) order.push_back(rows[i].group);
    by_group[rows[i].group].push_back(i);
  }
  for (const auto& g : order) s.groups.push_back(summarize_indices(g, rows, by_group[g]));
  s.overall = summarize_indices("all", rows, all);
  return s;
}

models::Op op_for(const ComputeMeasurement& m) {
  models::Op op;
  op.name = m.label;
  op.dtype = m.dtype;
  switch (m.kind) {
    case ComputeKind::gemm: {
      op.kind = models::OpKind::gemm;
      op.gemm = m.gemm;
      op.flops = work_of(m);
      const double mm = double(m.gemm.m), nn = double(m.gemm.n), kk = double(m.gemm.k);
      // Operands in the math format, output in bf16 (fp32 for fp32/tf32), as the workload builder counts.
      const double out_bytes = (m.dtype == models::Dtype::fp32 || m.dtype == models::Dtype::tf32) ? 4 : 2;
      op.bytes = (mm * kk + kk * nn) * models::element_bytes(m.dtype) + mm * nn * out_bytes;
      break;
    }
    case ComputeKind::attention_fwd:
    case ComputeKind::attention_fwdbwd: {
      op.kind = models::OpKind::attention_fwd;
      op.attention = m.attention;
      ComputeMeasurement fwd = m;
      fwd.kind = ComputeKind::attention_fwd;
      op.flops = work_of(fwd);
      break;
    }
    case ComputeKind::memory_bound:
      op.kind = m.mem_kind == models::MemOpKind::optimizer ? models::OpKind::optimizer : models::OpKind::memory_bound;
      op.mem_kind = m.mem_kind;
      op.bytes = m.bytes;
      break;
  }
  return op;
}

double predict_compute_s(const ComputeMeasurement& m, const models::GpuSpec& gpu, const models::ComputeProfile& profile) {
  models::Op op = op_for(m);
  double t = models::op_time_s(op, gpu, profile);
  if (m.kind == ComputeKind::attention_fwdbwd) {
    op.kind = models::OpKind::attention_bwd;
    op.flops *= 2.5;
    // The harness's backward starts once the forward has ended and the host has issued it
    // (compute_model.hpp: the host floor of a forward+backward microbenchmark).
    // A profile without its own attention model runs on the default's, host floor included.
    const bool own = profile.attention_fwd.peak_efficiency > 0 && profile.attention_bwd.peak_efficiency > 0;
    const double floor_s = (own ? profile : models::default_compute_profile()).attention_host_floor_us * 1e-6;
    t = std::max(t, floor_s) + models::op_time_s(op, gpu, profile);
  }
  return t;
}

std::string compute_group(const ComputeMeasurement& m) {
  switch (m.kind) {
    case ComputeKind::gemm: return "gemm " + std::string(models::to_string(m.dtype));
    case ComputeKind::attention_fwd:
    case ComputeKind::attention_fwdbwd:
      return std::string(m.kind == ComputeKind::attention_fwd ? "attention fwd" : "attention fwd+bwd") +
             (m.attention_backend.empty() ? "" : " " + m.attention_backend);
    case ComputeKind::memory_bound: return "memory-bound " + std::string(models::to_string(m.mem_kind));
  }
  return "compute";
}

std::vector<ValidationRow> validate_compute(const std::vector<ComputeMeasurement>& points, const models::GpuSpec& gpu,
                                            const models::ComputeProfile& profile) {
  std::vector<ValidationRow> rows;
  for (const auto& m : points)
    rows.push_back({compute_group(m), m.label, m.where, m.time_s, predict_compute_s(m, gpu, profile)});
  return rows;
}

std::vector<ValidationRow> validate_compute_leave_one_out(const std::vector<ComputeMeasurement>& points,
                                                          const models::GpuSpec& gpu, int sm_count) {
  std::vector<ValidationRow> rows;
  auto same_attention_shape = [](const ComputeMeasurement& a, const ComputeMeasurement& b) {
    const bool att_a = a.kind == ComputeKind::attention_fwd || a.kind == ComputeKind::attention_fwdbwd;
    const bool att_b = b.kind == ComputeKind::attention_fwd || b.kind == ComputeKind::attention_fwdbwd;
    return att_a && att_b && a.attention.batch == b.attention.batch && a.attention.heads_q == b.attention.heads_q &&
           a.attention.heads_kv == b.attention.heads_kv && a.attention.seq_q == b.attention.seq_q &&
           a.attention.head_dim == b.attention.head_dim && a.attention.kernel == b.attention.kernel &&
           a.attention_backend == b.attention_backend;
  };
  for (std::size_t i = 0; i < points.size(); ++i) {
    std::vector<ComputeMeasurement> rest;
    rest.reserve(points.size());
    for (std::size_t j = 0; j < points.size(); ++j)
      if (j != i && !same_attention_shape(points[i], points[j])) rest.push_back(points[j]);
    std::vector<std::string> ignored;
    auto profile = fit_compute_profile(rest, gpu, sm_count, "leave-one-out", ignored);
    const models::ComputeProfile& p = profile ? *profile : models::default_compute_profile();
    rows.push_back({compute_group(points[i]), points[i].label, points[i].where, points[i].time_s,
                    predict_compute_s(points[i], gpu, p)});
  }
  return rows;
}

std::string validation_text(const std::vector<ValidationRow>& rows, const ValidationSummary& summary,
                            std::size_t max_rows) {
  std::ostringstream out;
  std::vector<std::size_t> idx(rows.size());
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  // Keep file order within a group, groups in order of first appearance; with a row limit show the worst.
  if (max_rows > 0 && rows.size() > max_rows) {
    std::stable_sort(idx.begin(), idx.end(),
                     [&](auto a, auto b) { return std::abs(rows[a].error()) > std::abs(rows[b].error()); });
    idx.resize(max_rows);
    out << "worst " << max_rows << " of " << rows.size() << " points:\n";
  }
  std::size_t wl = 5, wg = 5;
  for (auto i : idx) wl = std::max(wl, rows[i].label.size()), wg = std::max(wg, rows[i].group.size());
  out << pad("group", wg) << "  " << pad("point", wl) << "  " << lpad("measured", 11) << "  " << lpad("predicted", 11)
      << "  " << lpad("error", 8) << "\n";
  for (auto i : idx) {
    const auto& r = rows[i];
    out << pad(r.group, wg) << "  " << pad(r.label, wl) << "  " << lpad(fmt_time(r.measured_s), 11) << "  "
        << lpad(fmt_time(r.predicted_s), 11) << "  " << lpad(pct(r.error()), 8) << "\n";
  }
  out << "\n";
  std::size_t wsg = 5;
  for (const auto& g : summary.groups) wsg = std::max(wsg, g.group.size());
  out << pad("group", wsg) << "  " << lpad("points", 6) << "  " << lpad("MAPE", 7) << "  " << lpad("median", 7)
      << "  worst\n";
  auto line = [&](const GroupSummary& g) {
    if (g.points == 0) return;
    const auto& w = rows[g.worst];
    out << pad(g.group, wsg) << "  " << lpad(std::to_string(g.points), 6) << "  " << lpad(pct_abs(g.mape), 7) << "  "
        << lpad(pct_abs(g.median_ape), 7) << "  " << pct(w.error()) << " " << w.label << " (" << w.where << ")\n";
  };
  for (const auto& g : summary.groups) line(g);
  line(summary.overall);
  return out.str();
}

}  // namespace cs::calibrate
