#include "gui/app/sweep_plan.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "gui/app/scenario_document.hpp"

namespace cs::gui {

using nlohmann::json;

namespace {

long long int_at(const json& doc, const std::string& path, long long fallback) {
  const json* v = find_path(doc, path);
  return v && v->is_number() ? v->get<long long>() : fallback;
}

const json* value_of(const sim::SweepPoint& p, const std::string& path) {
  for (const auto& [k, v] : p.assignment)
    if (k == path) return &v;
  return nullptr;
}

}  // namespace

SweepPlan plan_sweep(const json& doc) {
  const long long nodes = std::max(1LL, int_at(doc, "cluster.nodes", 1));
  const long long gpn = std::max(1LL, int_at(doc, "cluster.gpus_per_node", 8));
  const long long tp0 = int_at(doc, "training.tensor_model_parallel_size", 1);
  const long long pp0 = int_at(doc, "training.pipeline_model_parallel_size", 1);
  const json* tokens = find_path(doc, "training.tokens_to_train");

  SweepPlan plan;
  plan.per_billion_tokens = !(tokens && tokens->is_number() && tokens->get<double>() > 0);
  // Keyed by (nodes, tp, pp) so a point of both the curve and the grid is simulated once.
  std::map<std::tuple<long long, long long, long long>, bool> points;  // -> on the scaling curve
  std::set<long long> scale_nodes;
  for (long long n : {nodes / 4, nodes / 2, nodes, nodes * 2, nodes * 4})
    if (n >= 1 && (n == nodes || n * 4 == nodes || n * 2 == nodes || n == nodes * 2 || n == nodes * 4)) scale_nodes.insert(n);
  for (long long n : scale_nodes) points[{n, tp0, pp0}] = true;
  for (long long n : {nodes / 2, nodes, nodes * 2}) {
    if (n < 1 || (n != nodes && n * 2 != nodes && n != nodes * 2)) continue;
    for (long long tp = 1; tp <= gpn; tp *= 2)
      for (long long pp : {1, 2, 4, 8, 16}) points.emplace(std::make_tuple(n, tp, pp), false);
  }
  for (const auto& [key, scaling] : points) {
    const auto [n, tp, pp] = key;
    sim::Assignment a{{"cluster.nodes", n},
                      {"training.tensor_model_parallel_size", tp},
                      {"training.pipeline_model_parallel_size", pp},
                      {"training.data_parallel_size", nullptr}};
    if (plan.per_billion_tokens) a.emplace_back("training.tokens_to_train", kSweepTokensWhenUnset);
    const std::size_t i = plan.assignments.size();
    if (scaling) plan.scaling.push_back(i);  // the map is ordered by nodes first
    if (n == nodes && tp == tp0 && pp == pp0) plan.current = i;
    plan.assignments.push_back(std::move(a));
  }
  return plan;
}

bool SweepResult::on_front(std::size_t i) const { return std::find(pareto.begin(), pareto.end(), i) != pareto.end(); }

sim::Assignment layout_of(const sim::SweepPoint& p) {
  const auto n = std::min(kLayoutEntries, p.assignment.size());
  return sim::Assignment(p.assignment.begin(), p.assignment.begin() + static_cast<std::ptrdiff_t>(n));
}

std::string point_label(const sim::SweepPoint& p) {
  auto num = [&](const char* path) {
    const json* v = value_of(p, path);
    return v ? v->dump() : std::string("?");
  };
  const std::string nodes = num("cluster.nodes");
  std::string label = nodes + (nodes == "1" ? " node" : " nodes");
  if (p.valid) label += " (" + std::to_string(p.report.num_gpus) + " GPUs)";
  label += " TP" + num("training.tensor_model_parallel_size") + " PP" + num("training.pipeline_model_parallel_size");
  if (p.valid) label += " DP" + std::to_string(p.report.dp);
  return label;
}

}  // namespace cs::gui
