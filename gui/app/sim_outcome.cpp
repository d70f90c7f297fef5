#include "gui/app/sim_outcome.hpp"

#include "sim/engine/intervals.hpp"

#include <algorithm>

namespace cs::gui {

using sim::Time;


TimelineData make_timeline(const sim::SimulationResult& result) {
  const sim::TaskGraph& g = result.plan.graph;
  TimelineData data;
  data.makespan = result.execution.makespan;
  data.mirrors = result.plan.mirrors;
  // Names are interned by the graph; copy the ones used.
  std::vector<std::uint32_t> remap;
  for (int rank = 0; rank < g.num_ranks(); ++rank) {
    for (int s = 0; s < sim::kStreamsPerRank; ++s) {
      const auto stream = static_cast<sim::StreamKind>(s);
      const auto& ids = g.stream_tasks(rank, stream);
      if (ids.empty()) continue;
      TimelineRow row;
      row.rank = rank;
      row.stream = stream;
      const int gpu = rank < static_cast<int>(result.plan.global_rank.size()) ? result.plan.global_rank[static_cast<std::size_t>(rank)] : rank;
      row.label = "rank " + std::to_string(rank) + " (GPU " + std::to_string(gpu) + ") " + sim::to_string(stream);
      row.bars.reserve(ids.size());
      for (sim::TaskId id : ids) {
        const sim::Task& t = g.tasks()[id];
        const sim::TaskRecord& rec = result.execution.records[id];
        if (rec.start == sim::kNever || rec.end == sim::kNever) continue;
        if (t.name >= remap.size()) remap.resize(t.name + 1, UINT32_MAX);
        if (remap[t.name] == UINT32_MAX) {
          remap[t.name] = static_cast<std::uint32_t>(data.names.size());
          data.names.push_back(g.name(t.name));
        }
        row.bars.push_back({rec.start, rec.end, remap[t.name], t.category, t.micro_batch});
      }
      std::sort(row.bars.begin(), row.bars.end(), [](const TimelineBar& a, const TimelineBar& b) {
        return a.start != b.start ? a.start < b.start : a.end < b.end;
      });
      data.rows.push_back(std::move(row));
    }
  }
  return data;
}

std::array<double, sim::kNumCategories> exposed_comm_by_kind(const sim::SimulationResult& result) {
  const sim::TaskGraph& g = result.plan.graph;
  const auto ranks = static_cast<std::size_t>(g.num_ranks());
  std::vector<std::vector<sim::Interval>> compute(ranks);
  std::vector<std::array<std::vector<sim::Interval>, sim::kNumCategories>> comm(ranks);
  for (sim::TaskId id = 0; id < g.tasks().size(); ++id) {
    const sim::Task& t = g.tasks()[id];
    const sim::TaskRecord& rec = result.execution.records[id];
    if (rec.start == sim::kNever || rec.end == sim::kNever) continue;
    if (t.collective == sim::kNone) compute[t.rank].push_back({rec.start, rec.end});
    else comm[t.rank][static_cast<std::size_t>(t.category)].push_back({rec.start, rec.end});
  }
  std::array<double, sim::kNumCategories> out{};
  for (std::size_t r = 0; r < ranks; ++r) {
    const auto c = sim::merged(std::move(compute[r]));
    for (std::size_t k = 0; k < out.size(); ++k)
      out[k] += sim::to_seconds(sim::uncovered(sim::merged(std::move(comm[r][k])), c));
  }
  double sum = 0;
  for (double& v : out) sum += v /= static_cast<double>(std::max<std::size_t>(ranks, 1));
  const double target = result.report.breakdown.exposed_comm_s;
  if (sum > 0)
    for (double& v : out) v *= target / sum;
  return out;
}

SimOutcome make_outcome(const sim::SimulationResult& result) {
  SimOutcome o;
  o.report = result.report;
  o.exposed_s = exposed_comm_by_kind(result);
  o.timeline = std::make_shared<const TimelineData>(make_timeline(result));
  return o;
}

}  // namespace cs::gui
