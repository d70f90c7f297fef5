#include "calibrate/fit/comm_fit.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <Eigen/Dense>

namespace cs::calibrate {

namespace {

constexpr double kHuberC = 1.345;
constexpr double kMadToSigma = 1.4826;
constexpr int kMaxIterations = 200;
constexpr double kConverged = 1e-12;

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2 == 1) return *mid;
  const double hi = *mid;
  const double lo = *std::max_element(v.begin(), mid);
  return 0.5 * (lo + hi);
}

struct Line {
  double alpha = 0;  // seconds
  double g = 0;      // seconds per bus byte (1 / beta)
};

// Weighted least squares for t = alpha + g x with weights w (already including 1/t^2); alpha >= 0.
Line solve(std::span<const double> x, std::span<const double> t, const std::vector<double>& w, double x_scale) {
  const Eigen::Index n = static_cast<Eigen::Index>(x.size());
  Eigen::MatrixXd a(n, 2);
  Eigen::VectorXd b(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double sw = std::sqrt(w[static_cast<std::size_t>(i)]);
    a(i, 0) = sw;
    a(i, 1) = sw * x[static_cast<std::size_t>(i)] / x_scale;
    b(i) = sw * t[static_cast<std::size_t>(i)];
  }
  const Eigen::Vector2d s = a.colPivHouseholderQr().solve(b);
  Line l{s(0), s(1) / x_scale};
  if (l.alpha < 0) {
    // alpha pinned at 0: g = sum w x t / sum w x^2
    double num = 0, den = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      num += w[i] * x[i] * t[i];
      den += w[i] * x[i] * x[i];
    }
    l = {0.0, den > 0 ? num / den : 0.0};
  }
  return l;
}

}  // namespace

AlphaBetaFit fit_alpha_beta(std::span<const double> x, std::span<const double> t) {
  if (x.size() != t.size()) throw InputError("alpha-beta fit: sizes and times differ in count");
  std::set<double> distinct(x.begin(), x.end());
  if (distinct.size() < 2) throw InputError("needs at least two distinct message sizes");
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!(t[i] > 0) || !(x[i] >= 0) || !std::isfinite(t[i]) || !std::isfinite(x[i]))
      throw InputError("alpha-beta fit: every time must be positive and every size non-negative");

  const double x_scale = std::max(1.0, *std::max_element(x.begin(), x.end()));
  const std::size_t n = x.size();
  std::vector<double> base(n), huber(n, 1.0), w(n), r(n);
  for (std::size_t i = 0; i < n; ++i) base[i] = 1.0 / (t[i] * t[i]);

  Line line;
  for (int it = 0; it < kMaxIterations; ++it) {
    for (std::size_t i = 0; i < n; ++i) w[i] = base[i] * huber[i];
    const Line next = solve(x, t, w, x_scale);
    for (std::size_t i = 0; i < n; ++i) r[i] = (t[i] - next.alpha - next.g * x[i]) / t[i];
    std::vector<double> abs_r(n);
    for (std::size_t i = 0; i < n; ++i) abs_r[i] = std::abs(r[i]);
    const double scale = kMadToSigma * median(abs_r);
    const bool done = it > 0 && std::abs(next.alpha - line.alpha) <= kConverged * (std::abs(line.alpha) + 1e-12) &&
                      std::abs(next.g - line.g) <= kConverged * std::abs(line.g);
    line = next;
    if (done || scale <= 1e-12) break;
    for (std::size_t i = 0; i < n; ++i)
      huber[i] = abs_r[i] <= kHuberC * scale ? 1.0 : kHuberC * scale / abs_r[i];
  }
  if (!(line.g > 0)) throw InputError("no positive bandwidth fits these times (do they fall with size?)");

  AlphaBetaFit f;
  f.alpha_s = line.alpha;
  f.beta_Bps = 1.0 / line.g;
  f.relative_error.resize(n);
  double log_mean = 0;
  for (std::size_t i = 0; i < n; ++i) log_mean += std::log(t[i]);
  log_mean /= double(n);
  double ss_res = 0, ss_tot = 0, abs_sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double p = line.alpha + line.g * x[i];
    const double e = (p - t[i]) / t[i];
    f.relative_error[i] = e;
    abs_sum += std::abs(e);
    ss_res += std::pow(std::log(t[i]) - std::log(p), 2);
    ss_tot += std::pow(std::log(t[i]) - log_mean, 2);
    if (std::abs(e) > std::abs(f.worst_error)) f.worst_error = e, f.worst = i;
    if (huber[i] < 1.0) ++f.downweighted;
  }
  f.mape = abs_sum / double(n);
  f.r2 = ss_tot > 0 ? 1.0 - ss_res / ss_tot : 1.0;
  return f;
}

models::CommLevel level_of(const CommMeasurement& m) {
  return m.nodes > 1 ? models::CommLevel::network : models::CommLevel::nvlink;
}

std::string gpu_of(const CommMeasurement& m) {
  const models::GpuSpec* g = guess_gpu(m.gpu);
  return g ? g->name : m.gpu;
}

std::string group_name(const models::CommFit& f) {
  return (f.gpu.empty() ? std::string() : f.gpu + " ") + std::string(models::to_string(f.collective)) + " " + f.algorithm + " " + std::to_string(f.ranks) +
         " ranks " + std::string(models::to_string(f.level));
}

std::vector<CommGroupFit> fit_comm(const MeasurementSet& set, std::vector<std::string>& notes) {
  using Key = std::tuple<std::string, int, std::string, int, int>;  // gpu, collective, algorithm, ranks, level
  std::map<Key, std::vector<std::size_t>> groups;                    // ordered: deterministic output
  for (std::size_t i = 0; i < set.comm.size(); ++i) {
    const auto& m = set.comm[i];
    groups[{gpu_of(m), static_cast<int>(m.collective), m.algorithm, m.ranks, static_cast<int>(level_of(m))}].push_back(i);
  }
  std::vector<CommGroupFit> out;
  for (const auto& [key, members] : groups) {
    const auto& first = set.comm[members.front()];
    CommGroupFit g;
    g.fit.collective = first.collective;
    g.fit.algorithm = first.algorithm;
    g.fit.ranks = first.ranks;
    g.fit.level = level_of(first);
    g.fit.gpu = gpu_of(first);
    g.members = members;
    std::vector<double> x, t;
    const double factor = models::bus_bandwidth_factor(first.collective, first.ranks);
    for (auto i : members) {
      x.push_back(factor * set.comm[i].size_bytes);
      t.push_back(set.comm[i].time_s);
    }
    try {
      const AlphaBetaFit f = fit_alpha_beta(x, t);
      g.fit.alpha_us = f.alpha_s * 1e6;
      g.fit.beta_GBps = f.beta_Bps * 1e-9;
      g.fit.r2 = f.r2;
      g.fit.points = static_cast<int>(members.size());
      g.quality.group = group_name(g.fit);
      g.quality.points = g.fit.points;
      g.quality.mape = f.mape;
      g.quality.worst = set.comm[members[f.worst]].where;
      g.quality.worst_error = f.worst_error;
      out.push_back(std::move(g));
    } catch (const InputError& e) {
      notes.push_back(first.where + ": " + group_name(g.fit) + ": not fitted: " + e.what());
    }
  }
  return out;
}

}  // namespace cs::calibrate
