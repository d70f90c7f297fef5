#include "sim/goodput/outlook.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/base/check.hpp"
#include "sim/base/input_error.hpp"
#include "sim/goodput/goodput.hpp"
#include "sim/goodput/resilience.hpp"
#include "sim/goodput/rng.hpp"
#include "sim/report/format.hpp"

namespace cs::sim::goodput {

Outlook run_outlook(const Scenario& s, const Report& r, const OutlookOptions& options) {
  CS_CHECK(options.draws > 0 && r.step_time_s > 0 && r.cost.steps_to_train > 0 && r.num_gpus > 0);
  Outlook out;
  out.draws = options.draws;
  out.seed = options.seed;
  out.default_failures = !s.run.resilience;
  const ResilienceSpec spec = s.run.resilience ? *s.run.resilience : ResilienceSpec{};
  const double step_s = step_with_input_s(s, r);
  // The run as the failure model sees it for the simulated step: the interval in steps, the checkpoint
  // stall, the restart, the failure rate (throws InputError when it never finishes).
  const ResilienceResult base = analyse_resilience(spec, job_facts(s, r, step_s), 0, options.seed);
  const double per_run = base.expected.failures + 1;
  if (per_run * options.draws > kMaxMonteCarloInterruptions) {
    char line[320];
    std::snprintf(line, sizeof line,
                  "--runs %d: the outlook would sample about %.3g interruptions (%.3g a run); at most %g in all: give --runs %.0f or fewer",
                  options.draws, per_run * options.draws, per_run, kMaxMonteCarloInterruptions,
                  std::max(1.0, std::floor(kMaxMonteCarloInterruptions / per_run)));
    throw InputError(line);
  }
  RunModel model = base.model;
  model.max_failures = 1000 * per_run + 1e6;  // as the run's own Monte Carlo: far past any chance count

  const ErrorBand& band = r.step_time_band;
  const std::vector<double> no_error{0.0};
  const std::vector<double>& errors = band.available && !band.errors.empty() ? band.errors : no_error;
  if (band.available) {
    out.band = band.matched;
    out.band_points = band.errors.size();
    out.out_of_domain = band.out_of_domain;
    for (const std::string& why : band.out_of_domain_reasons) out.out_of_domain_why += (out.out_of_domain_why.empty() ? "" : "; ") + why;
  }
  out.default_usd_per_kwh = !s.usd_per_kwh_given;
  out.usd_per_kwh = s.usd_per_kwh_given ? s.usd_per_kwh : kDefaultUsdPerKwh;
  out.power_kw = r.cost.energy_kwh_per_step * 3600 / r.step_time_s;

  struct Draw {
    double days, usd, power_usd;
  };
  std::vector<Draw> draws;
  draws.reserve(static_cast<std::size_t>(options.draws));
  Rng rng(options.seed);
  double failures = 0;
  const double n = static_cast<double>(errors.size());
  for (int i = 0; i < options.draws; ++i) {
    // One residual (or none): nothing to draw, so the runs are the failure Monte Carlo's, draw for draw.
    const auto k = errors.size() == 1 ? 0 : std::min(errors.size() - 1, static_cast<std::size_t>(rng.uniform() * n));
    const double scale = 1 + errors[k];  // e > -1: a real step is never negative
    RunModel m = model;
    m.work_s *= scale;
    m.interval_s *= scale;  // the same checkpoint interval in steps
    if (m.async) m.interval_s = std::max(m.interval_s, m.write_s);
    const Outcome o = sample_run(m, rng);
    const double hours = o.total_s / 3600;
    const double power_usd = out.power_kw * hours * out.usd_per_kwh;
    draws.push_back({o.total_s / 86400, r.num_gpus * hours * r.price_per_gpu_hour_usd + power_usd, power_usd});
    failures += o.failures;
  }
  out.mean_failures = failures / options.draws;
  std::vector<double> days;
  days.reserve(draws.size());
  for (const Draw& d : draws) days.push_back(d.days);
  std::sort(days.begin(), days.end());
  out.days_p10 = nearest_rank(days, 0.10);
  out.days_p50 = nearest_rank(days, 0.50);
  out.days_p90 = nearest_rank(days, 0.90);
  // Cost rises with the wall time of a draw, so sorting by cost sorts by days; the P50 draw's power share
  // is read off the same sorted order (ties: the enumeration order, stable).
  std::stable_sort(draws.begin(), draws.end(), [](const Draw& a, const Draw& b) { return a.usd < b.usd; });
  std::vector<double> usd;
  usd.reserve(draws.size());
  for (const Draw& d : draws) usd.push_back(d.usd);
  out.usd_p10 = nearest_rank(usd, 0.10);
  out.usd_p50 = nearest_rank(usd, 0.50);
  out.usd_p90 = nearest_rank(usd, 0.90);
  out.power_usd_p50 = draws[nearest_rank_index(draws.size(), 0.50)].power_usd;
  if (options.for_days > 0) {
    // A run of D days trains tokens_to_train; in N days it trains N / D of them (the same throughput over
    // the same kind of run: failures per day do not depend on the length). Fewer days is more tokens, so
    // the pessimistic P10 of tokens is the P90 of days.
    out.for_days = options.for_days;
    out.tokens_p10 = r.tokens_to_train * options.for_days / out.days_p90;
    out.tokens_p50 = r.tokens_to_train * options.for_days / out.days_p50;
    out.tokens_p90 = r.tokens_to_train * options.for_days / out.days_p10;
  }
  return out;
}

nlohmann::json to_json(const Outlook& o) {
  nlohmann::json j = {{"draws", o.draws},
                      {"seed", o.seed},
                      {"error_band", {{"class", o.band}, {"points", o.band_points}, {"out_of_domain", o.out_of_domain}, {"out_of_domain_why", o.out_of_domain_why}}},
                      {"failures", {{"defaults", o.default_failures}, {"mean", o.mean_failures}}},
                      {"days", {{"p10", o.days_p10}, {"p50", o.days_p50}, {"p90", o.days_p90}}},
                      {"total_usd", {{"p10", o.usd_p10}, {"p50", o.usd_p50}, {"p90", o.usd_p90}}},
                      {"power", {{"kw", o.power_kw}, {"usd_per_kwh", o.usd_per_kwh}, {"default_price", o.default_usd_per_kwh},
                                 {"usd_p50", o.power_usd_p50}}}};
  if (o.for_days > 0)
    j["for_days"] = {{"days", o.for_days}, {"tokens", {{"p10", o.tokens_p10}, {"p50", o.tokens_p50}, {"p90", o.tokens_p90}}}};
  return j;
}

std::string outlook_text(const Outlook& o) {
  std::string t = "P10 / P50 / P90: " + fmt("%.1f", o.days_p10) + " / " + fmt("%.1f", o.days_p50) + " / " + fmt("%.1f", o.days_p90) +
                  " days, " + money(o.usd_p10) + " / " + money(o.usd_p50) + " / " + money(o.usd_p90) + " (power " +
                  money(o.power_usd_p50) + " at P50)";
  if (o.for_days > 0)
    t += "; in " + fmt("%g", o.for_days) + " days " + fmt("%.3g", o.tokens_p10) + " / " + fmt("%.3g", o.tokens_p50) + " / " +
         fmt("%.3g", o.tokens_p90) + " tokens";
  return t;
}

std::string outlook_basis_text(const Outlook& o) {
  std::string t = std::to_string(o.draws) + " draws (seed " + std::to_string(o.seed) + ") of the model's error on comparable validated runs";
  t += " (each row's error band) x the failure Monte Carlo";
  if (o.default_failures) t += " (resilience defaults: the scenario has no resilience section)";
  t += "; total cost = GPU-hours x $/GPU-h + power and cooling at " + fmt("$%.4g/kWh", o.usd_per_kwh);
  t += o.default_usd_per_kwh ? " (default, EIA 2023 US industrial; cluster.usd_per_kwh sets it, 0 when the rental price includes power)"
                             : " (cluster.usd_per_kwh)";
  return t;
}

}  // namespace cs::sim::goodput
