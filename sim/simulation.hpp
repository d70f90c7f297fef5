#pragma once
// The library's front door: scenario in, simulated step and report out. The CLI, the GUI and the tests
// all call this; it holds no global state, so several simulations may run on several threads at once.
#include "sim/executor.hpp"
#include "sim/report.hpp"
#include "sim/scenario.hpp"
#include "sim/step_builder.hpp"

namespace cs::sim {

struct SimulationResult {
  StepPlan plan;
  ExecutionResult execution;
  Report report;
};

SimulationResult simulate(const Scenario& scenario);

}  // namespace cs::sim
