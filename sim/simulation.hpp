#pragma once
// The library's front door: scenario in, simulated step and report out. The CLI, the GUI and the tests
// all call this; it holds no global state, so several simulations may run on several threads at once.
//
// Several jobs (Scenario::jobs) share one cluster: each job's step is built on its own GPUs, the graphs
// are merged into one (ranks, collectives and tasks renumbered; groups keep their real GPUs) and run by
// one executor over one network back-end, so the jobs' flows share the fabric's links. One step of each
// job, all starting at t = 0: a job that finishes first stops loading the fabric then, and the longer
// job runs its remainder alone (the alternative, repeating the shorter job's step until the longest ends,
// would be the steady state of two long runs; one step each is what we simulate, and for jobs of equal
// step length the two agree). Each job is also run alone on the same GPUs of the same cluster; its
// slowdown is its step with the others over its step alone. With the analytical network (no contention
// by construction) every slowdown is exactly 1; with the flow network it is 1 when the jobs share no
// link and above 1 when their flows meet on one (an oversubscribed switch up-link or down-link).
#include <atomic>

#include "sim/engine/cancel.hpp"
#include "sim/engine/executor.hpp"
#include "sim/report/report.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/step/step_builder.hpp"

namespace cs::sim {

struct SimulationResult {
  StepPlan plan;               // multi-job: every job's graph merged (global_rank = GPU; mirrors per job's simulated rank)
  ExecutionResult execution;   // multi-job: the run of all jobs together
  Report report;               // multi-job: job 0's report (multi_job.jobs[0]), for callers of one job
  MultiJobReport multi_job;    // multi-job scenarios only; jobs empty otherwise
  // simulation.symmetry false, executed from the per-stage template (sim/engine/template_executor.hpp):
  // `plan` is the template (a rank per stage standing for the stage, with its own durations) and
  // `execution.records` those ranks' records, so the busiest rank's sum of squared kernel seconds
  // (sim/goodput/jitter.hpp) is the executor's, over every rank. -1: derive it from the plan.
  double busiest_kernel_square_sum = -1;
  bool from_template = false;  // the run above: report.tasks counts every rank's tasks, plan holds a stage's
};

// With simulation.symmetry false (one job) every rank is executed from a per-stage template
// (sim/engine/template_executor.hpp), byte-identical to the materialised graph's run; see SimulationResult.
SimulationResult simulate(const Scenario& scenario);
// The same, stopped with Cancelled (sim/engine/cancel.hpp) within milliseconds once *cancel becomes true;
// everything built so far is freed. A front end's Cancel; nullptr: never cancelled.
SimulationResult simulate(const Scenario& scenario, const std::atomic<bool>* cancel);
// The reference: every task of the step materialised in one task graph (with simulation.symmetry false, a
// graph of every rank, where simulate() executes every rank from a per-stage template with byte-identical
// results). For the outputs that need every rank's task records (run --trace) and for tests.
SimulationResult simulate_materialised(const Scenario& scenario);

}  // namespace cs::sim
