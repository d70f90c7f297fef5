#pragma once
// What the GUI keeps of one simulation: the library's report plus the two things the charts need from
// the executed task graph, extracted on the worker thread so the UI thread only draws.
//
// Timeline: one row per simulated rank and stream that ran anything, its tasks (start, end, category,
// name) in start order. Tasks of one stream run one at a time, so a row's bars are sorted by start and
// by end alike, which lets the painter binary-search the visible window.
// Exposed communication by kind: for each simulated rank, the time a collective of kind K moves data
// while no kernel runs, averaged over ranks. Kinds may overlap one another (a DP reduce-scatter under a
// PP send), so the per-kind times are scaled to add up to the report's exposed_comm_s, which counts the
// union once.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/simulation.hpp"

namespace cs::gui {

struct TimelineBar {
  sim::Time start = 0, end = 0;
  std::uint32_t name = 0;  // index into TimelineData::names
  sim::Category category = sim::Category::compute;
  std::int32_t micro_batch = -1;
};

struct TimelineRow {
  std::string label;  // "rank 0 (GPU 0) compute"
  int rank = 0;
  sim::StreamKind stream = sim::StreamKind::compute;
  std::vector<TimelineBar> bars;
};

struct TimelineData {
  std::vector<TimelineRow> rows;
  std::vector<std::string> names;
  sim::Time makespan = 0;
  int mirrors = 1;
};

struct SimOutcome {
  sim::Report report;
  std::array<double, sim::kNumCategories> exposed_s{};  // per comm category, sums to exposed_comm_s
  std::shared_ptr<const TimelineData> timeline;
  double wall_s = 0;  // how long the simulation took on the worker
};

TimelineData make_timeline(const sim::SimulationResult& result);
std::array<double, sim::kNumCategories> exposed_comm_by_kind(const sim::SimulationResult& result);
SimOutcome make_outcome(const sim::SimulationResult& result);

}  // namespace cs::gui
