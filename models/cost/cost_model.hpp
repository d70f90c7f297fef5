#pragma once
// Cost: rented GPU-hours at a $/GPU-hour price and energy at the GPUs' power.
//   usd_per_step = step_time_s / 3600 * gpus * price;   steps = tokens_to_train / tokens_per_step;
//   days_to_train = steps * step_time_s / 86400;         usd_to_train = steps * usd_per_step.
// Energy: each GPU at its TDP scaled by its busy fraction (idle at 30% of TDP), plus each node's host
// power (CPUs, memory, NICs, switches, fans: node_overhead_w, drawn whatever the GPUs do), times the
// data centre's PUE:
//   energy_kwh_per_step = (gpus * gpu_power_w + nodes * node_overhead_w) * step_time_s * pue / 3.6e6
// and at usd_per_kwh its price. Energy is reported beside the rental price, not added to it (a rented
// GPU-hour includes its power; an owned cluster pays the energy and not the rent).
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
  int num_nodes = 0;
  double node_overhead_w = 0;
  double usd_per_kwh = 0;  // 0: energy not priced
};

struct CostReport {
  double usd_per_step = 0;
  double usd_per_hour = 0;
  double steps_to_train = 0;
  double days_to_train = 0;
  double usd_to_train = 0;
  double gpu_hours_to_train = 0;
  double energy_kwh_per_step = 0;
  double energy_kwh_to_train = 0;
  double energy_usd_per_step = 0;
  double energy_usd_to_train = 0;
};

CostReport compute_cost(const CostInputs& in);

}  // namespace cs::models
