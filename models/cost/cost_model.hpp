#pragma once
// Cost: rented GPU-hours at a $/GPU-hour price and energy at the GPUs' power.
//   usd_per_step = step_time_s / 3600 * gpus * price;   steps = tokens_to_train / tokens_per_step;
//   days_to_train = steps * step_time_s / 86400;         usd_to_train = steps * usd_per_step.
// Energy: each GPU at its TDP scaled by its busy fraction u (idle at 30% of TDP), plus each node's host
// power (CPUs, memory, NICs, switches, fans), times the data centre's PUE. node_overhead_w is the host's
// maximum (the DGX datasheets' system maximum less the GPUs' TDP, gpu_catalog.hpp); a host whose GPUs
// wait draws less: its CPUs idle, its fans slow down. It is scaled linearly between an idle share
// f_idle and all of it with the same load u:
//   host_w = node_overhead_w * (f_idle + (1 - f_idle) u)
//   energy_kwh_per_step = (gpus * gpu_power_w + nodes * host_w) * step_time_s * pue / 3.6e6
// f_idle = kHostIdlePowerFraction = 0.5 unless the scenario gives cluster.node_idle_power_fraction.
// Where 0.5 comes from: the DGX H100 datasheet gives a 10.2 kW system maximum, and the typical draw of
// a DGX H100 under AI workloads is quoted at 6.5-8.5 kW (supercluster.blog, "AI Supercluster: NVIDIA DGX
// Power, Cooling, and Efficiency"); with the eight GPUs near their 700 W (5.6 kW) that leaves 0.9-2.9 kW
// of the host's 4.6 kW maximum. CPUs idle far below their maximum while the NICs, NVSwitches, SSDs and
// memory of a GPU node draw close to constant power. Half is a middle estimate, not a measurement, which
// is why it is a scenario knob.
namespace cs::models {

inline constexpr double kHostIdlePowerFraction = 0.5;

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
  double node_overhead_w = 0;     // host power per node at full load
  double node_idle_power_fraction = kHostIdlePowerFraction;  // its share drawn with the GPUs idle
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
