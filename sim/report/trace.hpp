#pragma once
// Chrome / Perfetto trace of a simulated step (the JSON "traceEvents" format that ui.perfetto.dev and
// chrome://tracing load): one process per node, one thread per GPU stream, one complete ("X") event per
// task while it runs, with the micro-batch and, for collectives, the bytes and group size as args.
// Written to a temporary file and renamed, so a reader never sees half a trace.
#include <string>

#include "sim/report/output_file.hpp"  // write_file_atomically, which the trace and other outputs share
#include <vector>

#include "sim/engine/executor.hpp"
#include "sim/engine/task_graph.hpp"
#include "sim/scenario/scenario.hpp"

namespace cs::sim {

// graph: the step as run; global_rank[r]: the GPU of simulated rank r; execution: when each task ran;
// step_time_s: the step (multi-job: the makespan); class_gpus (optional, StepPlan::class_gpus): the GPUs
// each simulated rank stands for, listed on its compute stream's thread name as "stands_for".
struct TraceInput {
  const TaskGraph& graph;
  const std::vector<int>& global_rank;
  const ExecutionResult& execution;
  double step_time_s = 0;
  const std::vector<std::vector<int>>* class_gpus = nullptr;
};
void write_trace(const Scenario& scenario, const TraceInput& run, const std::string& path);

}  // namespace cs::sim
