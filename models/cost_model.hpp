#pragma once
// Cost: rented GPU-hours at a $/GPU-hour price and energy at the GPUs' power.
//   usd_per_step = step_time_s / 3600 * gpus * price;   steps = tokens_to_train / tokens_per_step;
//   days_to_train = steps * step_time_s / 86400;         usd_to_train = steps * usd_per_step.
// Energy counts each GPU at its TDP scaled by busy fraction (idle at 30% of TDP), plus a PUE; this is
// reported for information and not part of the rental price.
namespace cs::models {

struct CostInputs {
  double step_time_s = 0;
  int num_gpus = 0;
  double price_per_gpu_hour_usd = 0;
  double tokens_per_step = 0;
  double tokens_to_train = 0;  // 0: days/usd to train are 0 (not asked)
  double gpu_tdp_w = 0;
  double gpu_busy_fraction = 0;
  double pue = 1.2;
};

struct CostReport {
  double usd_per_step = 0;
  double usd_per_hour = 0;
  double steps_to_train = 0;
  double days_to_train = 0;
  double usd_to_train = 0;
  double energy_kwh_per_step = 0;
};

CostReport compute_cost(const CostInputs& in);

}  // namespace cs::models
