#include "models/cost/cost_model.hpp"

#include "sim/base/check.hpp"
#include "sim/base/units.hpp"

namespace cs::models {
namespace {
// An idle GPU (clocked down, HBM refreshing, fans) draws about 30% of its TDP; a busy one its TDP.
constexpr double kIdlePowerFraction = 0.3;
}  // namespace

CostReport compute_cost(const CostInputs& in) {
  CS_CHECK(in.step_time_s >= 0);
  CS_CHECK(in.num_gpus > 0);
  CS_CHECK(in.price_per_gpu_hour_usd >= 0);
  CS_CHECK(in.tokens_to_train >= 0);
  CS_CHECK(in.tokens_to_train == 0 || in.tokens_per_step > 0);
  CS_CHECK(in.gpu_tdp_w >= 0);
  CS_CHECK(in.gpu_busy_fraction >= 0 && in.gpu_busy_fraction <= 1);
  CS_CHECK(in.pue >= 1);
  CS_CHECK(in.num_nodes >= 0 && in.node_overhead_w >= 0 && in.usd_per_kwh >= 0);
  CS_CHECK(in.node_idle_power_fraction >= 0 && in.node_idle_power_fraction <= 1);

  CostReport r;
  const double gpus = in.num_gpus;
  r.usd_per_hour = gpus * in.price_per_gpu_hour_usd;
  r.usd_per_step = in.step_time_s / kSecondsPerHour * r.usd_per_hour;
  if (in.tokens_to_train > 0) {
    r.steps_to_train = in.tokens_to_train / in.tokens_per_step;
    r.days_to_train = r.steps_to_train * in.step_time_s / kSecondsPerDay;
    r.usd_to_train = r.steps_to_train * r.usd_per_step;
    r.gpu_hours_to_train = r.steps_to_train * in.step_time_s / kSecondsPerHour * gpus;
  }
  const double gpu_power_w =
      in.gpu_tdp_w * (in.gpu_busy_fraction + (1.0 - in.gpu_busy_fraction) * kIdlePowerFraction);
  const double f_idle = in.node_idle_power_fraction;
  const double host_w = in.node_overhead_w * (f_idle + (1.0 - f_idle) * in.gpu_busy_fraction);
  const double power_w = gpus * gpu_power_w + in.num_nodes * host_w;
  r.energy_kwh_per_step = power_w * in.step_time_s * in.pue / kJoulesPerKwh;
  r.energy_kwh_to_train = r.steps_to_train * r.energy_kwh_per_step;
  r.energy_usd_per_step = r.energy_kwh_per_step * in.usd_per_kwh;
  r.energy_usd_to_train = r.energy_kwh_to_train * in.usd_per_kwh;
  return r;
}

}  // namespace cs::models
