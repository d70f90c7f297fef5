// Sweeps and capacity plans over whole runs (issue 17): with a resilience or data_pipeline section every
// point's days and dollars are the effective ones (failures, checkpoints, restarts, input stalls), and the
// plan ranks and constrains by them.
#include <catch2/catch.hpp>

#include <limits>
#include <map>

#include <nlohmann/json.hpp>

#include "sim/explore/sweep.hpp"

using namespace cs::sim;
using nlohmann::json;

namespace {

SweepPoint priced(double usd_per_step, double tokens_per_s, std::optional<double> slowdown) {
  SweepPoint p;
  p.status = PointStatus::simulated;
  p.valid = true;
  p.report.fits_in_memory = true;
  p.report.global_batch_size = 1;
  p.report.seq_length = 1;
  p.report.cost.usd_per_step = usd_per_step;
  p.report.tokens_per_s = tokens_per_s;
  if (slowdown) {
    p.whole_run = SweepPoint::WholeRun{};
    p.whole_run->slowdown = *slowdown;
    p.whole_run->goodput = 1 / *slowdown;
  }
  return p;
}

// A 1.3B-parameter model on H100 nodes of 4 GPUs, for plans over 4 and 8 GPUs.
json small_plan(double tokens_to_train) {
  json doc = json::parse(R"({
    "name": "small",
    "cluster": {"gpu": "H100-SXM", "nodes": 2, "gpus_per_node": 4, "intra_node": "nvswitch",
                "inter_node": {"fabric": "fat-tree", "link": "ib-ndr400", "nics_per_node": 4}},
    "model": {"num_layers": 16, "hidden_size": 2048, "num_attention_heads": 16, "vocab_size": 32000,
              "ffn_hidden_size": 8192, "activation": "gelu"},
    "training": {"seq_length": 2048, "global_batch_size": 16, "micro_batch_size": 1}
  })");
  doc["training"]["tokens_to_train"] = tokens_to_train;
  return doc;
}

}  // namespace

TEST_CASE("plans over whole runs: ranking uses the effective cost and throughput", "[sim][sweep][goodput]") {
  // b is 10% cheaper per failure-free step, but its whole run takes 1.2x as long (a larger job, more
  // failures): effective $ per token 0.9 x 1.2 = 1.08 > 1, tokens/s 1100 / 1.2 = 917 < 1000. a wins both.
  const std::vector<SweepPoint> failure_free = {priced(1.0, 1000, std::nullopt), priced(0.9, 1100, std::nullopt)};
  CHECK(rank_points(failure_free, Objective::usd_per_token) == std::vector<std::size_t>{1, 0});
  CHECK(rank_points(failure_free, Objective::tokens_per_s) == std::vector<std::size_t>{1, 0});
  const std::vector<SweepPoint> whole = {priced(1.0, 1000, 1.0), priced(0.9, 1100, 1.2)};
  CHECK(whole[1].usd_per_token() == Approx(1.08));
  CHECK(whole[1].tokens_per_s() == Approx(1100 / 1.2));
  CHECK(rank_points(whole, Objective::usd_per_token) == std::vector<std::size_t>{0, 1});
  CHECK(rank_points(whole, Objective::tokens_per_s) == std::vector<std::size_t>{0, 1});
}

TEST_CASE("capacity plan with resilience: effective days and dollars, deadline on the effective days", "[sim][sweep][goodput]") {
  json doc = small_plan(1e10);
  doc["resilience"] = {{"checkpoint", {{"interval_s", 21600}}}};
  CapacityOptions opts;
  opts.gpu_counts = {4, 8};
  opts.search.run.threads = 2;
  const CapacityResult r = plan_capacity(doc, "small.json", opts);
  REQUIRE(r.cheapest);
  REQUIRE(r.fastest);
  REQUIRE_FALSE(r.ranked.empty());
  double fastest_failure_free = 1e300, shortest_p90 = 1e300;
  for (std::size_t i : r.ranked) {
    const SweepPoint& p = r.points[i];
    REQUIRE(p.whole_run);
    // Failures and checkpoints only add time: the effective run is longer and dearer than the ideal one.
    CHECK(p.whole_run->goodput < 1);
    CHECK(p.days_to_train() == p.whole_run->effective_days);
    CHECK(p.days_to_train() > p.report.cost.days_to_train);
    CHECK(p.usd_to_train() > p.report.cost.usd_to_train);
    CHECK(p.usd_to_train() >= r.points[*r.cheapest].usd_to_train() * (1 - 1e-12));
    CHECK(p.days_to_train() >= r.points[*r.fastest].days_to_train() * (1 - 1e-12));
    fastest_failure_free = std::min(fastest_failure_free, p.report.cost.days_to_train);
    // The deadline is checked at the outlook's P90, which samples this run's failures and checkpoints.
    REQUIRE(p.outlook);
    CHECK_FALSE(p.outlook->default_failures);
    shortest_p90 = std::min(shortest_p90, p.outlook->days_p90);
  }
  CHECK(to_json(r.points[*r.cheapest]).contains("whole_run"));
  // A deadline the failure-free fastest plan would meet, but no whole run does at P90: no plan.
  CHECK(shortest_p90 > fastest_failure_free);
  CapacityOptions tight = opts;
  tight.deadline_days = shortest_p90 * (1 - 1e-9);
  const CapacityResult none = plan_capacity(doc, "small.json", tight);
  CHECK_FALSE(none.fastest);
  CHECK_FALSE(none.cheapest);
}

TEST_CASE("capacity plan with the screening tier: every GPU type and count gets simulated layouts", "[sim][sweep]") {
  // --verify 2 over 2 GPU types x 2 counts: ceil(2 / 4) = 1 layout per pair by cost and 1 by speed are
  // simulated, so each pair's row and the constrained plans come from the simulation, not the estimate.
  const json doc = small_plan(1e10);
  CapacityOptions opts;
  opts.gpu_counts = {4, 8};
  opts.gpu_types = {"H100-SXM", "A100-80GB"};
  opts.search.verify = 2;
  opts.search.run.threads = 2;
  const CapacityResult r = plan_capacity(doc, "small.json", opts);
  std::map<std::pair<std::string, int>, int> simulated;
  for (const auto& p : r.points)
    if (p.simulated()) ++simulated[{p.report.gpu, p.report.num_gpus}];
  CHECK(simulated.size() == 4);
  for (const auto& [pair, n] : simulated) {
    INFO(pair.first << " x " << pair.second);
    CHECK(n >= 1);
    CHECK(n <= 2);
  }
  REQUIRE(r.cheapest);
  CHECK(r.points[*r.cheapest].simulated());
}

TEST_CASE("capacity plan: each simulated layout has an outlook, the deadline checked at its P90", "[sim][sweep][goodput][outlook]") {
  const json doc = small_plan(1e11);
  CapacityOptions opts;
  opts.gpu_counts = {4, 8};
  opts.search.run.threads = 2;
  opts.outlook.draws = 200;
  const CapacityResult r = plan_capacity(doc, "small.json", opts);
  REQUIRE(r.fastest);
  for (std::size_t i : r.ranked) {
    const SweepPoint& p = r.points[i];
    if (!p.simulated()) continue;
    REQUIRE(p.outlook);
    CHECK(p.outlook->days_p10 <= p.outlook->days_p50);
    CHECK(p.outlook->days_p50 <= p.outlook->days_p90);
    CHECK(p.outlook->default_failures);
    CHECK(to_json(p).contains("outlook"));
  }
  const goodput::Outlook& best = *r.points[*r.fastest].outlook;
  // A deadline the fastest plan's point estimate meets but its P90 does not: it is no longer chosen.
  REQUIRE(best.days_p90 > r.points[*r.fastest].days_to_train());
  CapacityOptions tight = opts;
  tight.deadline_days = best.days_p90 * (1 - 1e-9);
  const CapacityResult at_p90 = plan_capacity(doc, "small.json", tight);
  CHECK((!at_p90.fastest || *at_p90.fastest != *r.fastest));
  if (at_p90.fastest) CHECK(at_p90.points[*at_p90.fastest].outlook->days_p90 <= tight.deadline_days);
  // A budget below every plan's P90 total leaves none.
  CapacityOptions poor = opts;
  double lowest = std::numeric_limits<double>::infinity();
  for (const SweepPoint& p : r.points)
    if (p.outlook) lowest = std::min(lowest, p.outlook->usd_p90);
  poor.budget_usd = lowest * (1 - 1e-9);
  const CapacityResult none = plan_capacity(doc, "small.json", poor);
  CHECK_FALSE(none.cheapest);
  CHECK_FALSE(none.fastest);
}
