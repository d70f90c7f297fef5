#pragma once
// What the GUI keeps of one simulation: the library's report (every number the charts show, the
// exposed communication by kind included) plus the timeline of the executed task graph, extracted on
// the worker thread so the UI thread only draws.
//
// Timeline: one row per simulated rank and stream that ran anything, its tasks (start, end, category,
// name) in start order. Tasks of one stream run one at a time, so a row's bars are sorted by start and
// by end alike, which lets the painter binary-search the visible window.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <optional>

#include "sim/goodput/goodput.hpp"
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
  std::vector<int> mirrors;  // real ranks each simulated rank stands for (its class of equal ranks)
};

struct SimOutcome {
  sim::Report report;            // multi-job: job 0's (multi_job.jobs[0])
  sim::MultiJobReport multi_job; // multi-job scenarios only; jobs empty otherwise
  std::shared_ptr<const TimelineData> timeline;
  double wall_s = 0;  // how long the simulation took on the worker
  // The whole run (resilience / data_pipeline sections; docs/goodput.md); nullopt without them.
  std::optional<sim::goodput::RunReport> run;

  bool multi() const { return !multi_job.jobs.empty(); }
  // Job j's report (0-based); the only report for a single-job scenario.
  const sim::Report& job(int j) const {
    return multi() && j >= 0 && j < static_cast<int>(multi_job.jobs.size()) ? multi_job.jobs[static_cast<std::size_t>(j)] : report;
  }
};

TimelineData make_timeline(const sim::SimulationResult& result);
SimOutcome make_outcome(const sim::SimulationResult& result);

}  // namespace cs::gui
