#pragma once
// The outlook of a whole training run: days and total cost at P10 / P50 / P90, combining the two
// uncertainties the simulator knows of:
//
//  1. The model's own error. A simulated step time s is not the real one; on comparable published runs
//     the real step was s (1 + e) with e one of the residuals of the report's error band
//     (sim/report/error_band.hpp: the rows of its class in calibrate/published/residuals.json). Each draw
//     takes one of those residuals, uniformly (a bootstrap of the class: with a handful of rows per class
//     a fitted distribution would claim more than the data holds, so P10 and P90 are never outside the
//     range already seen).
//  2. Failures. The whole run of W = steps x s (1 + e) seconds of work, cut by checkpoints every K steps
//     (the interval the scenario's resilience section asks for, or the optimum for the simulated step),
//     is sampled once by the failure Monte Carlo (resilience.hpp, sample_run). A scenario without a
//     resilience section is sampled with the section's defaults (Llama 3's fleet rates; docs/goodput.md),
//     and the outlook says so: a plan that ignored failures would call its P90 what is really a P50.
//
// The draws are independent (the simulator's error on a layout does not change how often its GPUs fail),
// so draw i is: e_i ~ residuals, then one sampled run of the job whose step is s (1 + e_i). The days of the
// draws give P10 / P50 / P90 (nearest rank, rng.hpp). Each draw's total cost is
//     GPU time:  gpus x wall hours x $/GPU-hour
//     power:     P x wall hours x $/kWh,   P = the report's energy per step / its step time (GPUs at their
//                busy fraction, the hosts, times the PUE; models/cost/cost_model.hpp)
// charged over the whole wall time, restarts and checkpoint stalls included (an upper bound: a node that
// waits for a restart draws less). The price of a kWh is cluster.usd_per_kwh, else kDefaultUsdPerKwh: a
// rental whose price includes power sets cluster.usd_per_kwh to 0.
//
// Deterministic: the draws come from Rng(seed) (rng.hpp), the same on every platform.
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "sim/report/report.hpp"
#include "sim/scenario/scenario.hpp"

namespace cs::sim::goodput {

// US industrial electricity, 2023 average: 8.06 cents per kWh (U.S. Energy Information Administration,
// Electric Power Annual 2023, released October 2024: average revenue per kWh sold to industrial customers,
// U.S. total; EIA's Electric Power Monthly tables 5.3 / 5.6 give the same series). Data centres buy at
// industrial rates, from 6 to 19 cents by state in the same table; the figure is a stated default, not a quote.
inline constexpr double kDefaultUsdPerKwh = 0.0806;

struct OutlookOptions {
  int draws = 1000;
  std::uint64_t seed = 1;
  double for_days = 0;  // > 0: also the tokens trained in that many days at P10 / P50 / P90
};

struct Outlook {
  int draws = 0;
  std::uint64_t seed = 0;
  std::string band;              // the error band's class ("pipeline, 65-512 GPUs, infiniband"), "" if none
  std::size_t band_points = 0;   // residuals drawn from (0: the model's error is not drawn)
  bool out_of_domain = false;    // the band's report is outside anything validated
  std::string out_of_domain_why; // its reasons, "; "-joined ("GPU B200 never compared (validated: ...)")
  bool default_failures = false; // the scenario has no resilience section: its defaults were sampled
  double usd_per_kwh = 0;
  bool default_usd_per_kwh = false;
  double power_kw = 0;           // average draw of the job, PUE included
  double days_p10 = 0, days_p50 = 0, days_p90 = 0;
  double usd_p10 = 0, usd_p50 = 0, usd_p90 = 0;  // total: GPU time + power
  double power_usd_p50 = 0;      // the power share of the P50 draw's total
  double mean_failures = 0;
  // for_days > 0: tokens trained in for_days days (the run's throughput over its own wall time, failures
  // and the model's error included); p10 is the pessimistic end (it pairs with days_p90).
  double for_days = 0, tokens_p10 = 0, tokens_p50 = 0, tokens_p90 = 0;
};

// The outlook of the simulated report `r` of scenario `s` (a single-job scenario with tokens_to_train).
// Throws InputError (no file; the caller adds it) when the run never finishes or the draws would sample
// more than kMaxMonteCarloInterruptions interruptions.
Outlook run_outlook(const Scenario& s, const Report& r, const OutlookOptions& options);

nlohmann::json to_json(const Outlook& o);
// "P10 / P50 / P90: 84.1 / 88.0 / 95.3 days, $12.9M / $13.4M / $14.5M (power $0.42M at P50)"
std::string outlook_text(const Outlook& o);
// What the draws are, once above a table of outlooks: "1000 draws (seed 1) of ...".
std::string outlook_basis_text(const Outlook& o);

}  // namespace cs::sim::goodput
