#pragma once
// Compute jitter and the synchronous step.
//
// Each kernel of duration d takes d (1 + cv Z) with Z standard normal, independent per kernel, rank and
// step. A rank's compute of kernels d_1..d_n is then off by a normal of standard deviation
// sigma = cv sqrt(sum d_i^2) (a sum of independent normals is normal, so this is exact, not a
// central-limit approximation). The step is synchronous: every rank joins the gradient reduction and
// the optimizer step, so a step ends when the slowest rank does. The model (documented simplification,
// instead of re-running the event simulation per kernel): step_k = deterministic step + sigma max_r Z_rk
// over the N synchronising ranks (all GPUs of the job), clamped at >= 0. Its quantiles are those of the
// maximum of N normals: the q-quantile is step + sigma Phi^-1(q^(1/N)). As N grows the whole
// distribution shifts right (the median straggler tax grows like sigma sqrt(2 ln N)) while its spread
// narrows (the maximum concentrates), so p99/p50 of the step moves as those two quantiles say.
// With cv = 0 every step is exactly the deterministic step.
#include <cstdint>

namespace cs::sim::goodput {

struct JitterJob {
  double step_s = 0;
  double kernel_square_sum_s2 = 0;  // sum of the squared kernel durations of the busiest rank
  int sync_ranks = 1;
  double cv = 0;
};

struct StepDistribution {
  int steps = 0;
  std::uint64_t seed = 0;
  double cv = 0, sigma_s = 0;
  int sync_ranks = 0;
  double deterministic_s = 0, mean_s = 0, p50_s = 0, p90_s = 0, p99_s = 0, max_s = 0;
};

StepDistribution simulate_steps(const JitterJob& job, int steps, std::uint64_t seed);

}  // namespace cs::sim::goodput
