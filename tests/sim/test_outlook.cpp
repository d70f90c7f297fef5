// The outlook of a whole run (sim/goodput/outlook.hpp; issue 34, done-when 3): days and total cost at
// P10 / P50 / P90 from the model's error band and the failure Monte Carlo, power priced, deadlines and
// budgets checked at P90.
#include <catch2/catch.hpp>

#include <cmath>

#include <nlohmann/json.hpp>

#include "sim/goodput/goodput.hpp"
#include "sim/goodput/outlook.hpp"
#include "sim/goodput/resilience.hpp"

using namespace cs::sim;
using namespace cs::sim::goodput;
using nlohmann::json;

namespace {

// A job of 64 GPUs on 8 nodes: 1,000 steps of 10 s, $2 per GPU-hour, 0.5 kWh a step (a 180 kW draw).
Report job_report() {
  Report r;
  r.num_gpus = 64;
  r.nodes = 8;
  r.step_time_s = 10;
  r.price_per_gpu_hour_usd = 2;
  r.parameters = 1e9;
  r.tokens_to_train = 4e9;
  r.cost.steps_to_train = 1000;
  r.cost.energy_kwh_per_step = 0.5;
  return r;
}

// A scenario whose failures never happen in a run this short and whose checkpoint costs nothing, so the
// whole run is its work: mtbf 1e15 hours per unit, a 1-byte checkpoint written once at the end.
Scenario quiet_scenario() {
  Scenario s;
  s.cluster.nics_per_node = 8;
  ResilienceSpec spec;
  const double never = 1e15;
  spec.mtbf_hours = {never, never, never, never, never};
  spec.checkpoint.optimal = false;
  spec.checkpoint.interval_steps = 1000;
  spec.checkpoint.size_bytes = 1;
  s.run.resilience = spec;
  return s;
}

ErrorBand band_of(std::vector<double> errors) {
  ErrorBand b;
  b.available = true;
  b.matched = "pipeline, 9-64 GPUs";
  b.errors = std::move(errors);
  return b;
}

}  // namespace

TEST_CASE("outlook without failures: the days are the step's error band, the cost GPU time plus power", "[sim][outlook]") {
  // Residuals -10 %, 0, +20 % drawn uniformly 3,000 times: about a third each, so the nearest-rank P10 is
  // the -10 % run, P50 the unbiased one and P90 the +20 % one. The work is 1,000 x 10 s = 10,000 s =
  // 0.11574 days; a run of D days costs 64 GPUs x 24 D h x $2 + 180 kW x 24 D h x $0.10 (power = 0.5 kWh
  // per 10-s step = 180 kW, priced at the scenario's $0.10 / kWh).
  Scenario s = quiet_scenario();
  s.usd_per_kwh = 0.10;
  s.usd_per_kwh_given = true;
  Report r = job_report();
  r.step_time_band = band_of({-0.10, 0.0, 0.20});
  OutlookOptions o;
  o.draws = 3000;
  const Outlook out = run_outlook(s, r, o);
  const double days = 10000.0 / 86400;
  const double eps = 1e-6;  // the one-byte checkpoint write
  CHECK(out.days_p10 == Approx(days * 0.9).epsilon(eps));
  CHECK(out.days_p50 == Approx(days).epsilon(eps));
  CHECK(out.days_p90 == Approx(days * 1.2).epsilon(eps));
  CHECK(out.power_kw == Approx(180));
  const auto cost = [](double d) { return 64 * 24 * d * 2 + 180 * 24 * d * 0.10; };
  CHECK(out.usd_p10 == Approx(cost(days * 0.9)).epsilon(eps));
  CHECK(out.usd_p50 == Approx(cost(days)).epsilon(eps));
  CHECK(out.usd_p90 == Approx(cost(days * 1.2)).epsilon(eps));
  CHECK(out.power_usd_p50 == Approx(180 * 24 * days * 0.10).epsilon(eps));
  CHECK(out.mean_failures == 0);
  CHECK(out.band_points == 3);
  CHECK_FALSE(out.default_failures);
  CHECK_FALSE(out.default_usd_per_kwh);
}

TEST_CASE("outlook: power at the default $/kWh unless the scenario prices it, 0 included", "[sim][outlook]") {
  Scenario s = quiet_scenario();
  Report r = job_report();
  const Outlook by_default = run_outlook(s, r, {});
  CHECK(by_default.default_usd_per_kwh);
  CHECK(by_default.usd_per_kwh == kDefaultUsdPerKwh);
  // No band: every draw is the simulated step. 10,000 s x 180 kW = 500 kWh at $0.0806.
  CHECK(by_default.power_usd_p50 == Approx(500 * kDefaultUsdPerKwh).epsilon(1e-6));
  s.usd_per_kwh = 0;  // a rental whose price includes power
  s.usd_per_kwh_given = true;
  const Outlook rental = run_outlook(s, r, {});
  CHECK(rental.power_usd_p50 == 0);
  CHECK(rental.usd_p50 == Approx(64 * 2 * 10000.0 / 3600).epsilon(1e-6));
}

TEST_CASE("outlook without a band: the days are the failure Monte Carlo's, draw for draw", "[sim][outlook]") {
  // With one residual there is nothing to draw, so the outlook's random stream is the resilience Monte
  // Carlo's: the same seed gives the same P10 / P50 / P90 days.
  Scenario s;
  s.cluster.nics_per_node = 8;
  s.run.resilience = ResilienceSpec{};  // Llama 3's fleet rates, the optimal interval
  Report r = job_report();
  r.num_gpus = 16384, r.nodes = 2048;
  r.cost.steps_to_train = 200000;  // 23 days of 10-s steps: dozens of failures
  OutlookOptions o;
  o.draws = 500;
  o.seed = 7;
  const Outlook out = run_outlook(s, r, o);
  const ResilienceResult mc = analyse_resilience(*s.run.resilience, job_facts(s, r, r.step_time_s), 500, 7);
  CHECK(out.days_p10 == mc.p10_days);
  CHECK(out.days_p50 == mc.p50_days);
  CHECK(out.days_p90 == mc.p90_days);
  CHECK(out.mean_failures == Approx(mc.mc_mean_failures));
  CHECK(out.days_p10 < out.days_p90);  // failures spread the runs
  CHECK_FALSE(out.default_failures);
  // Without a resilience section the defaults are sampled, and the outlook says so.
  Scenario bare;
  bare.cluster.nics_per_node = 8;
  const Outlook defaults = run_outlook(bare, r, o);
  CHECK(defaults.default_failures);
  CHECK(defaults.days_p50 == out.days_p50);
  CHECK(outlook_basis_text(defaults).find("resilience defaults") != std::string::npos);
}

TEST_CASE("outlook: deterministic per seed, --for-days tokens, JSON", "[sim][outlook]") {
  Scenario s;
  s.cluster.nics_per_node = 8;
  Report r = job_report();
  r.num_gpus = 16384, r.nodes = 2048;
  r.cost.steps_to_train = 200000;
  r.step_time_band = band_of({-0.05, 0.02, 0.08, 0.15});
  OutlookOptions o;
  o.draws = 400;
  o.for_days = 10;
  const Outlook a = run_outlook(s, r, o), b = run_outlook(s, r, o);
  CHECK(to_json(a).dump() == to_json(b).dump());
  o.seed = 2;
  CHECK(to_json(run_outlook(s, r, o)).dump() != to_json(a).dump());
  // In N days a run of D days trains N / D of its tokens; the pessimistic tokens pair with the P90 days.
  CHECK(a.tokens_p10 == Approx(4e9 * 10 / a.days_p90));
  CHECK(a.tokens_p50 == Approx(4e9 * 10 / a.days_p50));
  CHECK(a.tokens_p90 == Approx(4e9 * 10 / a.days_p10));
  const json j = to_json(a);
  CHECK(j["days"]["p90"] == a.days_p90);
  CHECK(j["total_usd"]["p50"] == a.usd_p50);
  CHECK(j["error_band"]["points"] == 4);
  CHECK(j["for_days"]["tokens"]["p10"] == a.tokens_p10);
  CHECK(a.usd_p10 <= a.usd_p50);
  CHECK(a.usd_p50 <= a.usd_p90);
}

TEST_CASE("outlook: a Monte Carlo past the interruption bound is refused with the --runs to give", "[sim][outlook]") {
  // 2e5 steps of 10 s on 16,384 GPUs expect ~60 interruptions; 1e7 draws would sample ~6e8 > 1e8.
  Scenario s;
  s.cluster.nics_per_node = 8;
  Report r = job_report();
  r.num_gpus = 16384, r.nodes = 2048;
  r.cost.steps_to_train = 200000;
  OutlookOptions o;
  o.draws = 10000000;
  CHECK_THROWS_WITH(run_outlook(s, r, o), Catch::StartsWith("--runs 10000000: the outlook would sample about") &&
                                              Catch::Contains("give --runs"));
}
