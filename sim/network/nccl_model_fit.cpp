#include "sim/network/nccl_model_fit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <set>

#include "sim/base/input_error.hpp"

namespace cs::sim {

namespace {

using models::CollectiveKind;

// Rounds of coordinate descent (6 left the doubled 2-node log's 2 MiB size 5.1 % off, 20 leave it at
// 0.1 %; a fit takes about half a second), scan steps of one coordinate, the golden ratio's conjugate.
constexpr int kRounds = 20;
constexpr int kScanSteps = 240;
constexpr double kGolden = 0.6180339887498949;

// Minimises f over [lo, hi]: the best of a uniform scan, then golden-section search in the cells beside it.
double minimise(const std::function<double(double)>& f, double lo, double hi) {
  double best_x = lo, best_f = f(lo);
  const double step = (hi - lo) / kScanSteps;
  for (int i = 1; i <= kScanSteps; ++i) {
    const double x = lo + step * i, v = f(x);
    if (v < best_f) best_f = v, best_x = x;
  }
  double a = std::max(lo, best_x - step), b = std::min(hi, best_x + step);
  double c = b - kGolden * (b - a), d = a + kGolden * (b - a);
  double fc = f(c), fd = f(d);
  for (int it = 0; it < 60; ++it) {
    if (fc < fd) {
      b = d, d = c, fd = fc;
      c = b - kGolden * (b - a), fc = f(c);
    } else {
      a = c, c = d, fc = fd;
      d = a + kGolden * (b - a), fd = f(d);
    }
  }
  const double x = 0.5 * (a + b);
  return f(x) <= best_f ? x : best_x;
}

std::string size_text(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  return buf;
}

}  // namespace

NcclFit fit_nccl_constants(CollectiveKind kind, std::span<const NcclFitSample> samples, const GroupGeometry& g,
                           const std::string& forced) {
  NcclFit fit;
  fit.scope = g.multi_node ? CommScope::inter_node : CommScope::intra_node;
  struct Use {
    NcclFitSample s;
    AlgorithmChoice choice;
  };
  std::vector<Use> used;
  for (const auto& s : samples) {
    if (!(s.size_bytes > 0) || !(s.time_s > 0) || !std::isfinite(s.size_bytes) || !std::isfinite(s.time_s)) {
      fit.ignored.push_back(s.where + ": " + size_text(s.size_bytes) + ": no data moved (size or time 0)");
      continue;
    }
    used.push_back({s, choose_algorithm(kind, s.size_bytes, g, forced)});
  }
  if (used.empty() || g.ranks < 2) throw InputError("no measured size with data to move: nothing to fit the NCCL model to");

  NcclCalibration cal;
  ScopeConstants& sc = cal.at(kind, fit.scope);
  sc.calibrated = true;
  auto choice_of = [&](const Use& u) {
    bool ok = false;
    return estimate(kind, u.s.size_bytes, g, u.choice.algorithm, u.choice.protocol, &ok, &cal);
  };
  auto time_of = [&](const Use& u) { return to_seconds(choice_of(u).duration); };
  std::array<int, 3> per_protocol{};
  bool any_ring = false, any_ll_ring = false;  // rings under LL128 / Simple, under LL
  for (const auto& u : used) {
    ++per_protocol[static_cast<std::size_t>(u.choice.protocol)];
    const bool ring = u.choice.algorithm == NcclAlgorithm::ring;
    (u.choice.protocol == NcclProtocol::ll ? any_ll_ring : any_ring) |= ring;
  }
  // The smallest hop latency of the tier among the protocols used: d stays above its negative.
  double min_hop_us = 1e9;
  for (const auto& u : used) {
    const ProtocolSpec& ps = protocol_spec(u.choice.protocol);
    const double h = fit.scope == CommScope::inter_node ? ps.hop_latency_network_us + g.network_hop_extra_s * 1e6
                                                         : ps.hop_latency_nvlink_us + g.scaleup_hop_extra_s * 1e6;
    min_hop_us = std::min(min_hop_us, h);
  }
  // The hop latency is fitted only where sizes show it: two or more whose default latency is a quarter of
  // their time or more (a sweep of large messages alone leaves it at the table's).
  int latency_sizes = 0;
  for (const auto& u : used) latency_sizes += u.choice.latency * 4 >= u.choice.duration ? 1 : 0;
  fit.latency_fitted = latency_sizes >= 2;
  std::vector<bool> kept(used.size(), true);
  // What the coordinate steps lower: sum |ln(model / measured)| over the kept points (-1: all, each size
  // alike: the hop latency and the pipeline chunks), and, for protocol p's bandwidth scale, the same
  // over p's points weighted by each one's measured time (a protocol's bandwidth is read where it moves
  // the data: on the 2-node A100 PCIe log LL's time per byte doubles from 8 KiB to 1 MiB, which no
  // linear transfer term follows, and unweighted the scale would be set by the mid sizes, 1 MiB 15 % off).
  auto objective = [&](int protocol) {
    double sum = 0;
    for (std::size_t i = 0; i < used.size(); ++i) {
      if (!kept[i] || (protocol >= 0 && static_cast<int>(used[i].choice.protocol) != protocol)) continue;
      sum += (protocol >= 0 ? used[i].s.time_s : 1.0) * std::abs(std::log(time_of(used[i]) / used[i].s.time_s));
    }
    return sum;
  };
  auto descend = [&] {
    for (int round = 0; round < kRounds; ++round) {
      for (int p = 0; p < 3; ++p) {
        if (per_protocol[static_cast<std::size_t>(p)] == 0) continue;
        double& s = sc.bandwidth_scale[static_cast<std::size_t>(p)];
        s = std::exp(minimise([&](double u) { s = std::exp(u); return objective(p); }, std::log(1e-3), std::log(1e3)));
      }
      double& d = sc.hop_latency_extra_us;
      if (fit.latency_fitted) d = minimise([&](double x) { d = x; return objective(-1); }, -0.95 * min_hop_us, 1e4);
      for (double* chunk : {any_ring ? &sc.ring_chunk_bytes : nullptr, any_ll_ring ? &sc.ring_chunk_bytes_ll : nullptr}) {
        if (!chunk) continue;
        double& c = *chunk;
        c = std::exp(minimise([&](double u) { c = std::exp(u); return objective(-1); }, std::log(1024.0), std::log(1e9)));
      }
    }
  };
  descend();
  // Robustness: points whose error is far outside the rest (3 robust sigmas, and at least 25 %) are
  // left out and the constants refitted once -- a size that ran another protocol than the tuner's
  // choice, a broken row.
  {
    std::vector<double> r(used.size());
    for (std::size_t i = 0; i < used.size(); ++i) r[i] = std::abs(std::log(time_of(used[i]) / used[i].s.time_s));
    std::vector<double> sorted = r;
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2), sorted.end());
    const double limit = std::max(3 * 1.4826 * sorted[sorted.size() / 2], std::log(1.25));
    bool dropped = false;
    for (std::size_t i = 0; i < used.size(); ++i)
      if (r[i] > limit) {
        kept[i] = false;
        dropped = true;
        char why[160];
        std::snprintf(why, sizeof why, ": outlier (%+.0f%% off the fit of the other sizes), left out and refitted",
                      100 * (time_of(used[i]) / used[i].s.time_s - 1));
        fit.ignored.push_back(used[i].s.where + ": " + size_text(used[i].s.size_bytes) + why);
      }
    if (dropped) {
      // A protocol left without a kept point is fitted no more.
      per_protocol = {};
      for (std::size_t i = 0; i < used.size(); ++i)
        if (kept[i]) ++per_protocol[static_cast<std::size_t>(used[i].choice.protocol)];
      descend();
    }
  }
  for (int p = 0; p < 3; ++p) fit.protocol_measured[static_cast<std::size_t>(p)] = per_protocol[static_cast<std::size_t>(p)] > 0;
  std::vector<bool> bandwidth(used.size());
  for (std::size_t i = 0; i < used.size(); ++i) {
    const AlgorithmChoice c = choice_of(used[i]);
    bandwidth[i] = (c.duration - c.latency) * 2 >= c.duration;
  }
  // Protocols never measured take the nearest measured one's scale.
  for (int p = 0; p < 3; ++p) {
    if (fit.protocol_measured[static_cast<std::size_t>(p)]) continue;
    for (NcclProtocol q : {NcclProtocol::simple, NcclProtocol::ll128, NcclProtocol::ll})
      if (fit.protocol_measured[static_cast<std::size_t>(q)]) {
        sc.bandwidth_scale[static_cast<std::size_t>(p)] = sc.bandwidth_scale[static_cast<std::size_t>(q)];
        break;
      }
  }
  fit.constants = sc;
  double abs_sum = 0, default_sum = 0;
  for (std::size_t i = 0; i < used.size(); ++i) {
    NcclFitPoint pt;
    pt.size_bytes = used[i].s.size_bytes;
    pt.measured_s = used[i].s.time_s;
    pt.default_s = to_seconds(used[i].choice.duration);
    pt.fitted_s = time_of(used[i]);
    pt.algorithm = used[i].choice.algorithm;
    pt.protocol = used[i].choice.protocol;
    pt.bandwidth_bound = bandwidth[i];
    pt.kept = kept[i];
    pt.where = used[i].s.where;
    abs_sum += std::abs(pt.error());
    default_sum += std::abs(pt.default_error());
    fit.points.push_back(std::move(pt));
  }
  fit.mape = abs_sum / static_cast<double>(used.size());
  fit.default_mape = default_sum / static_cast<double>(used.size());
  return fit;
}

models::NcclConstants to_profile(const NcclFit& fit, int nodes, const std::string& nic) {
  models::NcclConstants c;
  c.fitted = true;
  c.nodes = nodes;
  c.nic = nodes > 1 ? nic : std::string();
  c.bandwidth_scale_ll = fit.constants.bandwidth_scale[static_cast<std::size_t>(NcclProtocol::ll)];
  c.bandwidth_scale_ll128 = fit.constants.bandwidth_scale[static_cast<std::size_t>(NcclProtocol::ll128)];
  c.bandwidth_scale_simple = fit.constants.bandwidth_scale[static_cast<std::size_t>(NcclProtocol::simple)];
  c.hop_latency_extra_us = fit.constants.hop_latency_extra_us;
  c.ring_chunk_bytes = fit.constants.ring_chunk_bytes;
  c.ring_chunk_bytes_ll = fit.constants.ring_chunk_bytes_ll;
  return c;
}

NcclCalibration nccl_calibration(const models::CommProfile& profile, const std::string& source) {
  NcclCalibration cal;
  cal.source = source;
  std::array<std::array<const models::CommFit*, 2>, kNumCollectiveKinds> best{};
  for (const auto& f : profile.fits) {
    if (!f.nccl.fitted) continue;
    const CommScope scope = f.level == models::CommLevel::network ? CommScope::inter_node : CommScope::intra_node;
    const models::CommFit*& b = best[static_cast<std::size_t>(f.collective)][static_cast<std::size_t>(scope)];
    if (!b || f.ranks > b->ranks || (f.ranks == b->ranks && f.points > b->points)) b = &f;
  }
  for (int k = 0; k < kNumCollectiveKinds; ++k)
    for (int s = 0; s < 2; ++s) {
      const models::CommFit* f = best[static_cast<std::size_t>(k)][static_cast<std::size_t>(s)];
      if (!f) continue;
      ScopeConstants& sc = cal.by_kind[static_cast<std::size_t>(k)][static_cast<std::size_t>(s)];
      sc.calibrated = true;
      sc.bandwidth_scale = {f->nccl.bandwidth_scale_ll, f->nccl.bandwidth_scale_ll128, f->nccl.bandwidth_scale_simple};
      sc.hop_latency_extra_us = f->nccl.hop_latency_extra_us;
      sc.ring_chunk_bytes = f->nccl.ring_chunk_bytes;
      sc.ring_chunk_bytes_ll = f->nccl.ring_chunk_bytes_ll;
    }
  return cal;
}

std::vector<CalibrationUse> calibration_uses(const NcclCalibration& calibration) {
  std::vector<CalibrationUse> out;
  for (int k = 0; k < kNumCollectiveKinds; ++k)
    for (CommScope s : {CommScope::intra_node, CommScope::inter_node})
      out.push_back({static_cast<CollectiveKind>(k), s, calibration.at(static_cast<CollectiveKind>(k), s).calibrated});
  return out;
}

std::string calibration_mismatch(const models::CommProfile& profile, const std::string& source, const std::string& gpu,
                                 const topo::ClusterSpec& cluster, int ranks) {
  std::set<std::string> gpus, nics, rank_counts;
  bool differs = false;
  for (const auto& f : profile.fits) {
    if (!f.nccl.fitted) continue;
    gpus.insert(f.gpu.empty() ? "an unknown GPU" : f.gpu);
    rank_counts.insert(std::to_string(f.ranks));
    if (f.level == models::CommLevel::network) nics.insert(f.nccl.nic);
    differs = differs || (!f.gpu.empty() && f.gpu != gpu) || f.ranks != ranks ||
              (f.level == models::CommLevel::network && cluster.nodes > 1 && f.nccl.nic != cluster.nic.name);
  }
  if (!differs) return {};
  auto join = [](const std::set<std::string>& s) {
    std::string out;
    for (const auto& x : s) out += (out.empty() ? "" : "/") + x;
    return out;
  };
  std::string measured = join(gpus) + (nics.empty() ? "" : ", " + join(nics)) + ", " + join(rank_counts) + " ranks";
  std::string here = gpu + (cluster.nodes > 1 ? ", " + cluster.nic.name : "") + ", " + std::to_string(ranks) + " ranks";
  return "calibration profile " + source + " was measured on " + measured + "; this scenario runs " + here +
         ": its NCCL constants are applied as fitted, by the algorithms' structure";
}

}  // namespace cs::sim
