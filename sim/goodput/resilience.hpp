#pragma once
// Failures and checkpoints over a whole training run.
//
// The job fails when any of its components does: with exponential lifetimes of MTBF m_c per unit and
// n_c units of class c, the job's failure rate is lambda = sum_c n_c / m_c (GPUs and software per GPU,
// hosts and the network per node, NICs per NIC; goodput_spec.hpp has the defaults and their source).
//
// The run is W seconds of useful work (steps x step time, input stalls included), cut into segments of
// T seconds of work each followed by a checkpoint stall C (synchronous: the whole write; asynchronous:
// the snapshot to host memory, the write then runs in the background for Wb seconds). A failure loses
// the work since the last committed checkpoint and costs a restart R (detection, scheduling, process
// start, NCCL init, checkpoint load); a failure during a restart starts it again.
//
// Expected time of one segment of length a = T + C that must run failure-free (Daly 2006, "A higher
// order estimate of the optimum checkpoint interval for restart dumps"):
//     S(a) = (e^{lambda a} - 1) e^{lambda R} / lambda
// with failures per segment (e^{lambda a} - 1) e^{lambda R}, restart time (e^{lambda a} - 1)(e^{lambda R} - 1)/lambda
// and rework (e^{lambda a} - 1)/lambda - a (the work and partial checkpoints a failure throws away).
// Goodput = W / E[total]; to first order in lambda T, 1 - C/T - lambda (T/2 + R). The optimal interval
// minimises S(T + C)/T; Young (1974) / Daly give sqrt(2 C / lambda) to first order.
// Asynchronous checkpoints: a failure in the first Wb seconds of a segment (before the previous write has
// committed) also loses the previous segment's T; the expectation adds failures x (Wb / a) x T (first
// order in Wb / a), the Monte Carlo simulates the commit exactly. T is held >= Wb (one write in flight).
//
// Ignored: planned maintenance, spare-node pools (a restart always finds a node), correlated failures,
// checkpoint writes sharing the data pipeline's bandwidth, a failed node taking its local NVMe copy with it.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "sim/goodput/rng.hpp"
#include "sim/scenario/goodput_spec.hpp"

namespace cs::sim::goodput {

// What the run model needs to know about the job.
struct JobFacts {
  int gpus = 0, nodes = 0, nics = 0;
  double step_s = 0;           // one step, input stalls included
  double steps = 0;            // steps to train
  double checkpoint_bytes = 0; // the whole job's checkpoint
  double price_per_gpu_hour_usd = 0;
  double tokens = 0;           // tokens to train
};

// Per-class failure rates of the job, per hour.
struct FailureRates {
  double gpu = 0, host = 0, nic = 0, network = 0, software = 0;
  double total_per_hour() const { return gpu + host + nic + network + software; }
};
FailureRates job_failure_rates(const MtbfHours& m, const JobFacts& job);

// The cost model the expectation and the Monte Carlo share (all seconds, rate per second).
struct RunModel {
  double work_s = 0;      // W
  double lambda = 0;      // per second
  double stall_s = 0;     // C: checkpoint stall per checkpoint
  double write_s = 0;     // Wb: background write (async), 0 for sync
  double restart_s = 0;   // R
  double interval_s = 0;  // T
  bool async = false;
  // sample_run throws InputError past this many interruptions in one run (a hang guard: analyse_resilience
  // sets it far beyond the expectation).
  double max_failures = std::numeric_limits<double>::infinity();
};

struct Outcome {
  double total_s = 0, failures = 0, rework_s = 0, restart_s = 0, checkpoint_s = 0;
};
// The expected outcome (see the header essay).
Outcome expected_outcome(const RunModel& m);
// The interval (seconds of work) that minimises the expected time per unit of work, for T in
// [t_min, t_max]; golden-section search on log T.
double optimal_interval_s(RunModel m, double t_min, double t_max);
// One sampled run.
Outcome sample_run(const RunModel& m, Rng& rng);

struct ResilienceResult {
  FailureRates rates;               // per hour
  double mtti_hours = 0;            // 1 / rate
  double checkpoint_bytes = 0, write_s = 0, stall_s = 0, load_s = 0;
  std::string target;
  bool async = false;
  double restart_s = 0, nccl_init_s = 0;
  double interval_s = 0;            // used (whole steps)
  double interval_steps = 0;
  bool interval_optimal = false;
  bool interval_raised = false;     // async: raised to the write time
  double optimal_interval_s = 0, optimal_interval_steps = 0, young_daly_s = 0;
  double work_s = 0;
  Outcome expected;
  double goodput = 0, effective_days = 0, gpu_hours = 0, usd = 0, usd_per_token = 0;
  double goodput_at_optimal = 0;
  RunModel model;                   // the run as modelled (interval used): what the Monte Carlo samples
  // Monte Carlo (runs > 0)
  int runs = 0;
  std::uint64_t seed = 0;
  double mc_mean_days = 0, p10_days = 0, p50_days = 0, p90_days = 0, mc_mean_failures = 0;
};

// The bounds that keep the run model finite and the Monte Carlo short (docs/goodput.md, "Bounds"):
// a run whose expected wall time is more than 1 / kMinGoodput times its work never finishes in practice
// (its failures come faster than it makes progress) and is refused; the Monte Carlo samples at most
// kMaxMonteCarloInterruptions expected interruptions over all its runs (measured: 1.33e8 of them in 9 s
// of CPU, so the bound is about 7 s; a 16k-GPU run's 400 interruptions allow 250,000 runs).
inline constexpr double kMinGoodput = 1e-3;
inline constexpr double kMaxMonteCarloInterruptions = 1e8;

// Throws InputError, its message a JSON path ("resilience: ...") or an option ("--runs N: ..."), without
// the file (analyse_run adds it), when the run never finishes or the Monte Carlo would be too long.
ResilienceResult analyse_resilience(const ResilienceSpec& spec, const JobFacts& job, int runs, std::uint64_t seed);

}  // namespace cs::sim::goodput
