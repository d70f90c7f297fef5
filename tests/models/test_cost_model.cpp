#include <catch2/catch.hpp>

#include "models/cost_model.hpp"

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
