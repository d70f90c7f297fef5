#pragma once
// Where one rank's step went, for the report's breakdown, its `comm exposed` line, the
// "exposed_comm_s_by_kind" JSON key and the GUI's breakdown bar.
//
// For one simulated rank: the time each category of its tasks ran (end - start, summed), the union of its
// kernels (compute), the union of its data-moving collectives not covered by a kernel (exposed
// communication), and for each communication category K (TP, CP, EP, DP, PP) the time a collective of
// kind K moves data while no kernel runs on that rank (the union of the rank's K intervals minus the
// union of its kernels). Kinds may overlap one another (a DP reduce-scatter under a PP send), so these
// per-kind times can add up to more than the exposed communication, which counts their union once; the
// report scales them by one common factor so that they add up to it exactly (scale_exposed_by_kind). The
// split of an interval where two kinds are exposed at once is therefore in proportion to each kind's own
// exposed time, not to what was on the critical path.
//
// Times stay integer picoseconds per rank, so that ranks that did the same work have equal RankTimes
// and the report can average over classes of equal ranks (simulation.cpp): a mirrored run (one rank per
// class, standing for `mirrors` ranks) and an unmirrored one (every rank) then give the same bytes.
#include <array>
#include <vector>

#include "sim/engine/executor.hpp"
#include "sim/engine/task_graph.hpp"

namespace cs::sim {

struct RankTimes {
  std::array<Time, kNumCategories> busy{};             // per Category: sum of its tasks' end - start
  std::array<Time, kNumCategories> exposed_by_kind{};  // per Category (compute categories 0)
  Time compute = 0;                                    // union of the rank's kernels
  Time exposed = 0;                                    // union of its collectives minus its kernels
  double flops = 0;                                    // executed FLOPs of its kernels (stream order)
  double recompute_flops = 0, optimizer_flops = 0;     // the share of those in recompute / optimizer kernels
  bool operator==(const RankTimes&) const = default;
};

// One rank's times; every task of `graph` must have run. `flops` is per task (StepPlan::flops).
RankTimes rank_times(const TaskGraph& graph, const std::vector<TaskRecord>& records, const std::vector<double>& flops,
                     int rank);

// Per-kind exposed times (seconds per rank, by Category) scaled to add up to `exposed_comm_s`.
std::array<double, kNumCategories> scale_exposed_by_kind(std::array<double, kNumCategories> by_kind, double exposed_comm_s);

}  // namespace cs::sim
