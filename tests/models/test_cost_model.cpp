#include <catch2/catch.hpp>

#include "models/cost/cost_model.hpp"

using namespace cs::models;

TEST_CASE("cost: rental, time and energy in closed form", "[models]") {
  // 1024 GPUs at $2 / GPU-hour: $2048 per hour. A 10 s step costs 10 / 3600 * 2048 = $5.6889.
  // 15e12 tokens at 4,194,304 tokens per step = 3,576,278.69 steps; x 10 s / 86400 = 413.92 days;
  // x $5.6889 = $20.35M. Energy: 700 W TDP, 80% busy, idle at 30%: 700 (0.8 + 0.2 * 0.3) = 602 W per
  // GPU; 1024 * 602 W * 10 s * PUE 1.2 / 3.6e6 J/kWh = 2.0548 kWh per step.
  CostInputs in;
  in.step_time_s = 10;
  in.num_gpus = 1024;
  in.price_per_gpu_hour_usd = 2;
  in.tokens_per_step = 4194304;
  in.tokens_to_train = 15e12;
  in.gpu_tdp_w = 700;
  in.gpu_busy_fraction = 0.8;
  in.pue = 1.2;
  const CostReport r = compute_cost(in);
  CHECK(r.usd_per_hour == 2048);
  CHECK(r.usd_per_step == Approx(10.0 / 3600 * 2048).epsilon(1e-12));
  CHECK(r.steps_to_train == Approx(15e12 / 4194304).epsilon(1e-12));
  CHECK(r.days_to_train == Approx(15e12 / 4194304 * 10 / 86400).epsilon(1e-12));
  CHECK(r.days_to_train == Approx(413.92).epsilon(1e-4));
  CHECK(r.usd_to_train == Approx(15e12 / 4194304 * 10.0 / 3600 * 2048).epsilon(1e-12));
  CHECK(r.energy_kwh_per_step == Approx(1024 * 602.0 * 10 * 1.2 / 3.6e6).epsilon(1e-12));
}

TEST_CASE("cost: no training target gives zero days and dollars to train", "[models]") {
  CostInputs in;
  in.step_time_s = 2;
  in.num_gpus = 8;
  in.price_per_gpu_hour_usd = 3.6;
  in.tokens_per_step = 1e6;
  in.gpu_tdp_w = 700;
  in.gpu_busy_fraction = 1.0;
  in.pue = 1.0;
  const CostReport r = compute_cost(in);
  CHECK(r.usd_per_step == Approx(2.0 / 3600 * 8 * 3.6).epsilon(1e-12));  // $0.016
  CHECK(r.steps_to_train == 0);
  CHECK(r.days_to_train == 0);
  CHECK(r.usd_to_train == 0);
  // Fully busy, PUE 1: 8 * 700 W * 2 s = 11200 J = 0.0031111 kWh.
  CHECK(r.energy_kwh_per_step == Approx(11200.0 / 3.6e6).epsilon(1e-12));
}

TEST_CASE("cost: an idle GPU draws 30% of TDP", "[models]") {
  CostInputs in;
  in.step_time_s = 3600;
  in.num_gpus = 1;
  in.price_per_gpu_hour_usd = 1;
  in.tokens_per_step = 1;
  in.gpu_tdp_w = 1000;
  in.gpu_busy_fraction = 0;
  in.pue = 1.0;
  CHECK(compute_cost(in).energy_kwh_per_step == Approx(0.3).epsilon(1e-12));
  CHECK(compute_cost(in).usd_per_step == Approx(1.0).epsilon(1e-12));
}

TEST_CASE("cost: node overhead, PUE, GPU-hours and the price of energy in closed form", "[models]") {
  // 64 GPUs on 8 nodes, fully busy at 700 W, 4,600 W of host power per node (a DGX H100's 10.2 kW less
  // its GPUs), PUE 1.3, a 5 s step: (64 x 700 + 8 x 4600) x 5 x 1.3 / 3.6e6 = 81,600 x 6.5 / 3.6e6
  // = 0.147333 kWh. 1e12 tokens at 1,048,576 tokens a step: 953,674.3 steps; 953,674.3 x 5 s / 3600
  // x 64 = 84,771.05 GPU-hours; 140,508.6 kWh; at $0.12 / kWh $16,861.
  CostInputs in;
  in.step_time_s = 5;
  in.num_gpus = 64;
  in.num_nodes = 8;
  in.price_per_gpu_hour_usd = 2;
  in.tokens_per_step = 1048576;
  in.tokens_to_train = 1e12;
  in.gpu_tdp_w = 700;
  in.gpu_busy_fraction = 1.0;
  in.node_overhead_w = 4600;
  in.pue = 1.3;
  in.usd_per_kwh = 0.12;
  const CostReport r = compute_cost(in);
  const double steps = 1e12 / 1048576;
  CHECK(r.energy_kwh_per_step == Approx(81600.0 * 5 * 1.3 / 3.6e6).epsilon(1e-12));
  CHECK(r.gpu_hours_to_train == Approx(steps * 5 / 3600 * 64).epsilon(1e-12));
  CHECK(r.gpu_hours_to_train == Approx(84771.05).epsilon(1e-6));
  CHECK(r.energy_kwh_to_train == Approx(steps * r.energy_kwh_per_step).epsilon(1e-12));
  CHECK(r.energy_usd_per_step == Approx(0.12 * r.energy_kwh_per_step).epsilon(1e-12));
  CHECK(r.energy_usd_to_train == Approx(0.12 * r.energy_kwh_to_train).epsilon(1e-12));
  // Energy is not part of the rental price.
  CHECK(r.usd_per_step == Approx(5.0 / 3600 * 128).epsilon(1e-12));
  // Unpriced energy costs nothing. With the GPUs idle the host draws its idle share of its maximum
  // (kHostIdlePowerFraction = 0.5): 64 x 210 W + 8 x 2300 W.
  in.usd_per_kwh = 0;
  in.gpu_busy_fraction = 0;
  const CostReport idle = compute_cost(in);
  CHECK(idle.energy_usd_per_step == 0);
  CHECK(idle.energy_kwh_per_step == Approx((64 * 210.0 + 8 * 2300) * 5 * 1.3 / 3.6e6).epsilon(1e-12));
}

TEST_CASE("cost: host power scales between its idle share and its maximum with the GPUs' load", "[models]") {
  // One node of 8 GPUs at 700 W, 4,600 W of host power at full load, PUE 1, a 3,600 s step (energy in
  // kWh = average watts / 1000). GPUs busy u: GPU power 700 (u + 0.3 (1 - u)); host 4600 (f + (1 - f) u).
  //   u = 0.6, f = 0.5: GPUs 8 x 700 x 0.72 = 4032 W, host 4600 x 0.8 = 3680 W -> 7.712 kWh;
  //   u = 0.6, f = 0.2: host 4600 x 0.68 = 3128 W -> 7.160 kWh; u = 1: host 4600 W whatever f.
  CostInputs in;
  in.step_time_s = 3600;
  in.num_gpus = 8;
  in.num_nodes = 1;
  in.gpu_tdp_w = 700;
  in.node_overhead_w = 4600;
  in.pue = 1.0;
  in.gpu_busy_fraction = 0.6;
  CHECK(in.node_idle_power_fraction == kHostIdlePowerFraction);
  CHECK(compute_cost(in).energy_kwh_per_step == Approx(7.712).epsilon(1e-12));
  in.node_idle_power_fraction = 0.2;
  CHECK(compute_cost(in).energy_kwh_per_step == Approx(7.160).epsilon(1e-12));
  in.gpu_busy_fraction = 1.0;
  CHECK(compute_cost(in).energy_kwh_per_step == Approx((5600.0 + 4600) / 1000).epsilon(1e-12));
}
