#include "sim/report/breakdown.hpp"

#include <algorithm>
#include <cstddef>

#include "sim/base/check.hpp"
#include "sim/engine/intervals.hpp"

namespace cs::sim {

RankTimes rank_times(const TaskGraph& graph, const std::vector<TaskRecord>& records, const std::vector<double>& flops,
                     int rank) {
  CS_CHECK(records.size() == graph.tasks().size() && flops.size() == graph.tasks().size());
  RankTimes out;
  std::vector<Interval> compute, comm;
  std::array<std::vector<Interval>, kNumCategories> comm_by_kind;
  // Stream by stream, each in issue order (the compute stream's kernels come out sorted by start).
  for (int s = 0; s < kStreamsPerRank; ++s)
    for (const TaskId id : graph.stream_tasks(rank, static_cast<StreamKind>(s))) {
      const Task& t = graph.tasks()[id];
      const TaskRecord& rec = records[id];
      CS_CHECK(rec.end != kNever && rec.start <= rec.end);
      if (t.stream == StreamKind::offload) continue;  // host copies: neither a kernel nor communication
      out.busy[static_cast<std::size_t>(t.category)] += rec.end - rec.start;
      if (t.collective == kNone) {
        compute.push_back({rec.start, rec.end});
        out.flops += flops[id];
        if (t.category == Category::recompute) out.recompute_flops += flops[id];
        if (t.category == Category::optimizer) out.optimizer_flops += flops[id];
      } else {
        comm.push_back({rec.start, rec.end});
        comm_by_kind[static_cast<std::size_t>(t.category)].push_back({rec.start, rec.end});
      }
    }
  const auto c = merged(std::move(compute));
  for (const Interval& x : c) out.compute += x.end - x.begin;
  out.exposed = uncovered(merged(std::move(comm)), c);
  for (std::size_t k = 0; k < comm_by_kind.size(); ++k)
    if (!comm_by_kind[k].empty()) out.exposed_by_kind[k] = uncovered(merged(std::move(comm_by_kind[k])), c);
  return out;
}

std::array<double, kNumCategories> scale_exposed_by_kind(std::array<double, kNumCategories> by_kind, double exposed_comm_s) {
  double sum = 0;
  for (double v : by_kind) sum += v;
  if (sum > 0)
    for (double& v : by_kind) v *= exposed_comm_s / sum;
  return by_kind;
}

}  // namespace cs::sim
