#include "sim/report/breakdown.hpp"

#include <algorithm>
#include <cstddef>

#include "sim/base/check.hpp"
#include "sim/engine/intervals.hpp"

namespace cs::sim {

std::array<double, kNumCategories> exposed_comm_by_kind(const TaskGraph& graph, const std::vector<TaskRecord>& records,
                                                        double exposed_comm_s) {
  CS_CHECK(records.size() == graph.tasks().size());
  const auto ranks = static_cast<std::size_t>(graph.num_ranks());
  std::vector<std::vector<Interval>> compute(ranks);
  std::vector<std::array<std::vector<Interval>, kNumCategories>> comm(ranks);
  for (TaskId id = 0; id < graph.tasks().size(); ++id) {
    const Task& t = graph.tasks()[id];
    const TaskRecord& rec = records[id];
    CS_CHECK(rec.end != kNever && rec.start <= rec.end);
    if (t.collective == kNone) compute[t.rank].push_back({rec.start, rec.end});
    else comm[t.rank][static_cast<std::size_t>(t.category)].push_back({rec.start, rec.end});
  }
  std::array<double, kNumCategories> out{};
  for (std::size_t r = 0; r < ranks; ++r) {
    const auto c = merged(std::move(compute[r]));
    for (std::size_t k = 0; k < out.size(); ++k)
      if (!comm[r][k].empty()) out[k] += to_seconds(uncovered(merged(std::move(comm[r][k])), c));
  }
  double sum = 0;
  for (double& v : out) sum += v /= static_cast<double>(std::max<std::size_t>(ranks, 1));
  if (sum > 0)
    for (double& v : out) v *= exposed_comm_s / sum;
  return out;
}

}  // namespace cs::sim
