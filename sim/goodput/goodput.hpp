#pragma once
// The whole run around one simulated step: input stalls (data_stall.hpp), failures and checkpoints
// (resilience.hpp) and the step-time distribution under jitter (jitter.hpp), computed from a scenario
// and its simulated step. Only what the scenario or the command line asks for is computed, and only
// that is printed: a scenario without resilience / data_pipeline and a run without --steps report
// exactly what they did before (docs/goodput.md lists the keys).
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "sim/goodput/data_stall.hpp"
#include "sim/goodput/jitter.hpp"
#include "sim/goodput/resilience.hpp"
#include "sim/simulation.hpp"

namespace cs::sim::goodput {

struct RunOptions {
  int runs = 0;            // Monte Carlo runs of the whole run (resilience); 0: none
  std::uint64_t seed = 1;  // for the Monte Carlo and the jitter
  int steps = 0;           // steps of the step-time distribution; 0: none
};

struct RunReport {
  std::optional<DataStallResult> data;
  std::optional<ResilienceResult> resilience;
  std::optional<StepDistribution> steps;
  bool empty() const { return !data && !resilience && !steps; }
};

// Throws InputError for options the scenario cannot honour (--runs without resilience, a multi-job run);
// call it before simulating. analyse_run() checks the same.
void check_run_options(const Scenario& s, const RunOptions& options);
RunReport analyse_run(const Scenario& s, const SimulationResult& result, const RunOptions& options);
// What the run model knows of the job of report `rep`, whose step (input stalls included) is step_s.
JobFacts job_facts(const Scenario& s, const Report& rep, double step_s);
// The report's step with the input stalls of the scenario's data_pipeline (its step without one).
double step_with_input_s(const Scenario& s, const Report& rep);
// The checkpoint of the job: bf16 weights + fp32 optimizer state (master weights, two moments) of every
// parameter once, the memory model's 2 + 12 bytes per parameter before sharding.
double checkpoint_bytes(double parameters);

// Adds "data_pipeline", "resilience", "step_distribution" to a report's JSON (only those computed).
void add_json(nlohmann::json& report, const RunReport& r);
std::string to_text(const RunReport& r);

}  // namespace cs::sim::goodput
