#include "gui/app/sweep.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "gui/app/scenario_document.hpp"
#include "sim/scenario/input_error.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"

namespace cs::gui {

using nlohmann::json;

namespace {

long long int_at(const json& doc, const std::string& path, long long fallback) {
  const json* v = find_path(doc, path);
  return v && v->is_number() ? v->get<long long>() : fallback;
}

}  // namespace

std::vector<SweepPoint> plan_sweep(const json& doc) {
  const long long nodes = std::max(1LL, int_at(doc, "cluster.nodes", 1));
  const long long gpn = std::max(1LL, int_at(doc, "cluster.gpus_per_node", 8));
  const long long tp0 = int_at(doc, "training.tensor_model_parallel_size", 1);
  const long long pp0 = int_at(doc, "training.pipeline_model_parallel_size", 1);

  // Keyed by (nodes, tp, pp) so a point in both sets is simulated once.
  std::map<std::tuple<long long, long long, long long>, SweepPoint> points;
  auto add = [&](long long n, long long tp, long long pp, bool scaling) {
    if (n < 1) return;
    SweepPoint& p = points[{n, tp, pp}];
    p.nodes = static_cast<int>(n);
    p.tp = static_cast<int>(tp);
    p.pp = static_cast<int>(pp);
    p.gpus = static_cast<int>(n * gpn);
    p.overrides = {"cluster.nodes=" + std::to_string(n), "training.tensor_model_parallel_size=" + std::to_string(tp),
                   "training.pipeline_model_parallel_size=" + std::to_string(pp)};
    p.layout = true;  // every point is a layout on the cost-vs-time plot
    if (scaling) p.scaling = true;
    p.current = p.current || (n == nodes && tp == tp0 && pp == pp0);
  };
  std::set<long long> scale_nodes;
  for (long long n : {nodes / 4, nodes / 2, nodes, nodes * 2, nodes * 4})
    if (n >= 1 && (n == nodes || n * 4 == nodes || n * 2 == nodes || n == nodes * 2 || n == nodes * 4)) scale_nodes.insert(n);
  for (long long n : scale_nodes) add(n, tp0, pp0, true);
  for (long long n : {nodes / 2, nodes, nodes * 2}) {
    if (n < 1 || (n != nodes && n * 2 != nodes && n != nodes * 2)) continue;
    for (long long tp = 1; tp <= gpn; tp *= 2)
      for (long long pp : {1, 2, 4, 8, 16}) add(n, tp, pp, false);
  }
  std::vector<SweepPoint> out;
  for (auto& [key, p] : points) out.push_back(std::move(p));
  return out;
}

void run_sweep_point(const json& doc, const std::string& file, SweepPoint& point) {
  try {
    json d = doc;
    for (const auto& o : point.overrides) sim::apply_override(d, o, file);
    if (d.contains("training") && d["training"].is_object()) d["training"].erase("data_parallel_size");
    const sim::Scenario s = sim::parse_scenario(d, file);
    const sim::Report r = sim::simulate(s).report;
    point.valid = true;
    point.dp = r.dp;
    point.fits = r.fits_in_memory;
    point.step_time_s = r.step_time_s;
    point.tokens_per_s = r.tokens_per_s;
    point.mfu = r.mfu;
    if (r.tokens_to_train > 0) {
      point.days_to_train = r.cost.days_to_train;
      point.usd_to_train = r.cost.usd_to_train;
    } else {
      const double seconds = 1e9 / r.tokens_per_s;
      point.days_to_train = seconds / 86400;
      point.usd_to_train = seconds / 3600 * r.num_gpus * r.price_per_gpu_hour_usd;
    }
  } catch (const std::exception& e) {
    point.valid = false;
    point.error = e.what();
  }
}

void mark_pareto(std::vector<SweepPoint>& points) {
  for (auto& p : points) p.pareto = false;
  for (auto& p : points) {
    if (!p.layout || !p.valid || !p.fits) continue;
    bool dominated = false;
    for (const auto& q : points) {
      if (&q == &p || !q.layout || !q.valid || !q.fits) continue;
      if (q.days_to_train <= p.days_to_train && q.usd_to_train <= p.usd_to_train &&
          (q.days_to_train < p.days_to_train || q.usd_to_train < p.usd_to_train)) {
        dominated = true;
        break;
      }
    }
    p.pareto = !dominated;
  }
}

std::string point_label(const SweepPoint& p) {
  return std::to_string(p.nodes) + " nodes (" + std::to_string(p.gpus) + " GPUs) TP" + std::to_string(p.tp) + " PP" +
         std::to_string(p.pp) + (p.valid ? " DP" + std::to_string(p.dp) : std::string{});
}

}  // namespace cs::gui
