#include "gui/app/sim_outcome.hpp"

#include <algorithm>

#include "sim/engine/cancel.hpp"

namespace cs::gui {

TimelineData make_timeline(const sim::SimulationResult& result) {
  const sim::TaskGraph& g = result.plan.graph;
  TimelineData data;
  data.makespan = result.execution.makespan;
  data.mirrors = result.plan.mirrors;  // per simulated rank (its class of equal ranks)
  // Names are interned by the graph; copy the ones used.
  std::vector<std::uint32_t> remap;
  for (int rank = 0; rank < g.num_ranks(); ++rank) {
    for (int s = 0; s < sim::kStreamsPerRank; ++s) {
      sim::poll_cancel();  // a huge step's timeline takes a while to copy and sort
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

SimOutcome make_outcome(const sim::SimulationResult& result) {
  SimOutcome o;
  o.report = result.report;
  o.multi_job = result.multi_job;
  o.timeline = std::make_shared<const TimelineData>(make_timeline(result));
  return o;
}

}  // namespace cs::gui
