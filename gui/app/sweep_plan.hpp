#pragma once
// The GUI's sweep around the document: which points the scaling curve and the cost-vs-time view show.
// Everything about a point is the library's: each is an assignment of `--set` paths evaluated by
// sim/explore (sim::run_points: parse_scenario, simulate), its days and dollars to train are its report's
// cost, and the Pareto front is sim::pareto_front. This file only chooses the assignments.
//
// Scaling curve (strong scaling): cluster.nodes at 1/4, 1/2, 1, 2 and 4 times the document's, same
// layout and global batch. Efficiency = (tokens/s per GPU) / (tokens/s per GPU of the smallest point
// that ran).
// Cost vs time: nodes at 1/2, 1 and 2 times, tensor parallel 1..gpus_per_node (powers of two), pipeline
// parallel 1, 2, 4, 8, 16; combinations the library rejects are left out with its message. Every point
// of the plan, the scaling ones included, is a layout on the cost-vs-time plot.
//
// Every assignment starts with the layout (kLayoutEntries entries: nodes, TP, PP), which is what
// loading a point applies to the document, followed by what the sweep alone needs: DP derived
// (training.data_parallel_size null) and, when the document sets no tokens_to_train, 1e9 tokens, so
// that the reports' days and dollars to train are per billion tokens.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/explore/sweep.hpp"

namespace cs::gui {

inline constexpr std::size_t kLayoutEntries = 3;
// Tokens the sweep prices when the document sets none.
inline constexpr double kSweepTokensWhenUnset = 1e9;

struct SweepPlan {
  std::vector<sim::Assignment> assignments;  // ordered by (nodes, TP, PP); no two alike
  std::vector<std::size_t> scaling;          // the scaling curve's points, fewest nodes first
  std::optional<std::size_t> current;        // the document's own layout
  bool per_billion_tokens = false;           // the document sets no tokens_to_train
};

SweepPlan plan_sweep(const nlohmann::json& doc);

// A planned sweep and what sim/explore made of it.
struct SweepResult {
  SweepPlan plan;
  std::vector<sim::SweepPoint> points;  // sim::run_points over plan.assignments, in their order
  std::vector<std::size_t> pareto;      // sim::pareto_front(points), fastest first
  std::string error;                    // the sweep as a whole failed (points then empty)

  bool on_front(std::size_t i) const;
  bool is_current(std::size_t i) const { return plan.current == i; }
};

// The entries that make the point's layout from the document (the first kLayoutEntries).
sim::Assignment layout_of(const sim::SweepPoint& p);
// A short label: "8 nodes (64 GPUs) TP4 PP2 DP8" (GPUs and DP when the point validated).
std::string point_label(const sim::SweepPoint& p);

}  // namespace cs::gui
