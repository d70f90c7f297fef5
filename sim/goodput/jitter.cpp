#include "sim/goodput/jitter.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "sim/base/check.hpp"
#include "sim/goodput/rng.hpp"

namespace cs::sim::goodput {

StepDistribution simulate_steps(const JitterJob& job, int steps, std::uint64_t seed) {
  CS_CHECK(steps > 0 && job.sync_ranks > 0);
  StepDistribution d;
  d.steps = steps;
  d.seed = seed;
  d.cv = job.cv;
  d.sync_ranks = job.sync_ranks;
  d.sigma_s = job.cv * std::sqrt(job.kernel_square_sum_s2);
  d.deterministic_s = job.step_s;
  std::vector<double> t(static_cast<std::size_t>(steps), job.step_s);
  if (d.sigma_s > 0) {
    Rng rng(seed);
    for (double& s : t) {
      double worst = -INFINITY;
      for (int r = 0; r < job.sync_ranks; ++r) worst = std::max(worst, rng.normal());
      s = std::max(0.0, job.step_s + d.sigma_s * worst);
    }
  }
  double sum = 0;
  for (double s : t) sum += s;
  d.mean_s = d.sigma_s > 0 ? sum / steps : job.step_s;
  std::sort(t.begin(), t.end());
  d.p50_s = nearest_rank(t, 0.50);
  d.p90_s = nearest_rank(t, 0.90);
  d.p99_s = nearest_rank(t, 0.99);
  d.max_s = t.back();
  return d;
}

}  // namespace cs::sim::goodput
