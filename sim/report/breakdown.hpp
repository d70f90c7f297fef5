#pragma once
// Exposed communication by kind: which collectives the schedule failed to hide, for the report's
// `comm exposed` line, its "exposed_comm_s_by_kind" JSON key and the GUI's breakdown bar.
//
// For each simulated rank and each communication category K (TP, CP, EP, DP, PP), the time a collective
// of kind K moves data while no kernel runs on that rank (the union of the rank's K intervals minus the
// union of its kernels), averaged over ranks. Kinds may overlap one another (a DP reduce-scatter under a
// PP send), so these per-kind times can add up to more than the report's exposed_comm_s, which counts
// their union once; they are scaled by one common factor so that they add up to exposed_comm_s exactly.
// The split of an interval where two kinds are exposed at once is therefore in proportion to each kind's
// own exposed time, not to what was on the critical path.
#include <array>
#include <vector>

#include "sim/engine/executor.hpp"
#include "sim/engine/task_graph.hpp"

namespace cs::sim {

// Indexed by Category; the compute categories are 0. `exposed_comm_s` is the step's exposed
// communication per rank (Report::breakdown.exposed_comm_s); every task of `graph` must have run.
std::array<double, kNumCategories> exposed_comm_by_kind(const TaskGraph& graph, const std::vector<TaskRecord>& records,
                                                        double exposed_comm_s);

}  // namespace cs::sim
