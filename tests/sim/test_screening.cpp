// The search's screening tier (sim/explore/screening.hpp) against the simulation it stands in for, and
// the search's --verify path (sim/explore/sweep.hpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "sim/explore/screening.hpp"
#include "sim/explore/sweep.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"

using namespace cs::sim;
using nlohmann::json;

namespace {

// 2 nodes of 4 H100: a 16-layer, 2048-wide GPT small enough to simulate in milliseconds.
json small_doc() {
  return json::parse(R"({
    "name": "small",
    "cluster": {"gpu": "H100-SXM", "nodes": 2, "gpus_per_node": 4, "intra_node": "nvswitch",
                "inter_node": {"fabric": "fat-tree", "link": "ib-ndr400", "nics_per_node": 4}},
    "model": {"num_layers": 16, "hidden_size": 2048, "num_attention_heads": 16, "vocab_size": 32000,
              "ffn_hidden_size": 8192, "activation": "gelu"},
    "training": {"seq_length": 2048, "global_batch_size": 16, "micro_batch_size": 1, "tokens_to_train": 1e9}
  })");
}

double estimate(const Scenario& s) {
  ScreeningCache cache(s.cluster);
  const auto e = screening_step_time_s(s, cache);
  REQUIRE(e);
  return *e;
}

}  // namespace

TEST_CASE("screening: one pipeline stage without overlapped communication is the simulation to the picosecond",
          "[sim][sweep][screening]") {
  // With one stage and nothing overlapped the step is a single chain on each simulated rank: every
  // forward and backward kernel of every micro-batch, each blocking TP collective between them, then the
  // gradient buckets one after the other on the data-parallel stream (overlap_grad_reduce off: after the
  // last backward, with the compute stream idle, so no contention), the grad-norm kernel, its all-reduce,
  // Adam, and (ZeRO-1) the parameter all-gather. The executor adds nothing between tasks, so the step is
  // the sum of the durations the step builder gave the tasks and the analytical network gives the
  // collectives; the screening formula adds the same integer picoseconds in the same order.
  // The gradient accumulation kernels of the non-fused modes (after each unit's backward, none in the
  // first micro-batch under accumulate_grad) are in both sums the same way.
  for (const char* rc : {"none", "selective", "full"})
    for (int zero : {0, 1})  // ZeRO-2 reduces after every micro-batch and ZeRO-3 gathers ahead: both overlap (next test)
      for (int tp : {1, 2, 4})
        for (const char* accumulation : {"fused", "accumulate_grad", "main_grad_add", "cast_add"}) {
          json doc = small_doc();
          auto& t = doc["training"];
          t["tensor_model_parallel_size"] = tp;
          t["sequence_parallel"] = tp > 1;
          t["zero_stage"] = zero;
          t["recompute_granularity"] = rc;
          t["overlap_grad_reduce"] = false;
          t["overlap_param_gather"] = false;
          t["gradient_accumulation"] = accumulation;
          const Scenario s = parse_scenario(doc, "small.json");
          INFO("TP" << tp << " ZeRO-" << zero << " recompute " << rc << " " << accumulation);
          CHECK(estimate(s) == simulate(s).report.step_time_s);
        }
}

TEST_CASE("screening: pipelines, overlap and ZeRO-3 stay within a few percent of the simulation", "[sim][sweep][screening]") {
  // Where the closed form approximates (pipeline transfers overlapping compute, several passes sharing
  // the data-parallel stream), it stays close: the validation over 500+ layouts is bench/sweep_bench.cpp
  // --validate (docs/sweep.md); here a handful of layouts of each kind, each within 8 %.
  struct Case {
    int tp, pp, vp, cp, zero;
    const char* schedule;
  };
  for (const Case& c : {Case{1, 2, 1, 1, 1, "1f1b"}, Case{2, 2, 1, 1, 0, "gpipe"}, Case{1, 2, 4, 1, 1, "interleaved"},
                        Case{2, 1, 1, 2, 1, "1f1b"}, Case{4, 2, 1, 1, 3, "1f1b"}, Case{2, 4, 2, 1, 2, "interleaved"}, Case{2, 1, 1, 1, 2, "1f1b"}}) {
    json doc = small_doc();
    auto& t = doc["training"];
    t["tensor_model_parallel_size"] = c.tp;
    t["sequence_parallel"] = c.tp > 1;
    t["pipeline_model_parallel_size"] = c.pp;
    t["virtual_pipeline_model_parallel_size"] = c.vp;
    t["context_parallel_size"] = c.cp;
    t["pipeline_schedule"] = c.schedule;
    t["zero_stage"] = c.zero;
    const Scenario s = parse_scenario(doc, "small.json");
    const double des = simulate(s).report.step_time_s;
    INFO("TP" << c.tp << " PP" << c.pp << " VP" << c.vp << " CP" << c.cp << " ZeRO-" << c.zero << " " << c.schedule);
    CHECK(std::abs(estimate(s) - des) / des < 0.08);
  }
}

TEST_CASE("screening: the 2021-2022 pipeline transfers stay within a few percent of the simulation", "[sim][sweep][screening]") {
  // pipeline_tensor_split (1/tp on the wire, the receiver's TP all-gathers before the pass) and
  // pipeline_p2p_blocking (the next pass after the send's end; the receiver's rendezvous is the
  // simulation's alone) on pipelines without sequence parallelism, each within 8 % as above.
  struct Case {
    int tp, pp, vp;
    const char* schedule;
  };
  for (const Case& c : {Case{2, 2, 1, "1f1b"}, Case{4, 2, 1, "1f1b"}, Case{2, 4, 2, "interleaved"}})
    for (const char* split : {"none", "scatter_gather", "partitioned"})
      for (bool blocking : {false, true}) {
        json doc = small_doc();
        auto& t = doc["training"];
        t["tensor_model_parallel_size"] = c.tp;
        t["pipeline_model_parallel_size"] = c.pp;
        t["virtual_pipeline_model_parallel_size"] = c.vp;
        t["pipeline_schedule"] = c.schedule;
        t["pipeline_tensor_split"] = split;
        t["pipeline_p2p_blocking"] = blocking;
        const Scenario s = parse_scenario(doc, "small.json");
        const double des = simulate(s).report.step_time_s;
        INFO("TP" << c.tp << " PP" << c.pp << " VP" << c.vp << " " << c.schedule << " " << split << (blocking ? " blocking" : ""));
        CHECK(std::abs(estimate(s) - des) / des < 0.08);
      }
}

TEST_CASE("screening: the periodic extrapolation over many micro-batches equals the full recurrence", "[sim][sweep][screening]") {
  // With m micro-batches the formula runs the schedule's recurrence into its steady phase and skips the
  // periods after the first whose state is the one before shifted by one amount (screening.cpp); the
  // figure must be the recurrence over all m to the picosecond. 256 micro-batches of 1F1B, GPipe and interleaved
  // pipelines, each ZeRO stage, with and without overlapped gradient reduction and parameter gathers.
  struct Case {
    int tp, pp, vp, zero;
    const char* schedule;
    bool overlap;
    const char* accumulation = "fused";
  };
  int extrapolated = 0, zero3_extrapolated = 0;
  for (const Case& c : {Case{1, 2, 1, 0, "1f1b", true}, Case{1, 4, 1, 1, "1f1b", false}, Case{2, 2, 1, 2, "gpipe", true},
                        Case{1, 2, 4, 1, "interleaved", true}, Case{2, 4, 2, 2, "interleaved", true}, Case{1, 2, 2, 3, "interleaved", true},
                        Case{1, 4, 1, 3, "1f1b", false}, Case{2, 2, 1, 0, "1f1b", false}, Case{1, 4, 1, 0, "1f1b", false, "accumulate_grad"},
                        Case{1, 2, 4, 1, "interleaved", true, "cast_add"}}) {
    json doc = small_doc();
    auto& t = doc["training"];
    t["global_batch_size"] = 256 * (8 / (c.tp * c.pp));  // 256 micro-batches of 1 on each of the DP replicas
    t["tensor_model_parallel_size"] = c.tp;
    t["sequence_parallel"] = c.tp > 1;
    t["pipeline_model_parallel_size"] = c.pp;
    t["virtual_pipeline_model_parallel_size"] = c.vp;
    t["pipeline_schedule"] = c.schedule;
    t["zero_stage"] = c.zero;
    t["overlap_grad_reduce"] = c.overlap;
    t["overlap_param_gather"] = c.overlap;
    t["gradient_accumulation"] = c.accumulation;
    const Scenario s = parse_scenario(doc, "small.json");
    REQUIRE(s.training.num_micro_batches() == 256);
    ScreeningCache fast(s.cluster), full(s.cluster);
    full.set_extrapolation(false);
    const auto a = screening_step_time_s(s, fast), b = screening_step_time_s(s, full);
    REQUIRE(a);
    REQUIRE(b);
    INFO("TP" << c.tp << " PP" << c.pp << " VP" << c.vp << " ZeRO-" << c.zero << " " << c.schedule << " overlap " << c.overlap << " "
              << c.accumulation);
    CHECK(*a == *b);
    extrapolated += fast.extrapolated();
    if (c.zero == 3) zero3_extrapolated += fast.extrapolated();
  }
  CHECK(extrapolated > 0);  // the shortcut was taken, not only the full recurrence compared with itself
  CHECK(zero3_extrapolated > 0);  // ZeRO-3 too: its gathers and reduce-scatters settle into the period
}

TEST_CASE("screening over whole runs: estimated points carry the whole run, ranked as the simulation ranks it", "[sim][sweep][screening][goodput]") {
  // The whole run is closed-form in the step (goodput::analyse_run: failures, checkpoints, restarts), so
  // where the estimate is the simulation's step to the picosecond (one stage, nothing overlapped: the
  // first test) the estimated whole run is the simulated one, and the screened order (effective tokens/s
  // and $ per token) is the verified order.
  json doc = small_doc();
  doc["training"]["tokens_to_train"] = 1e10;
  doc["training"]["overlap_grad_reduce"] = false;
  doc["training"]["overlap_param_gather"] = false;
  doc["resilience"] = {{"checkpoint", {{"interval_s", 21600}}}};
  std::vector<Assignment> layouts;
  for (int tp : {1, 2, 4})
    for (int zero : {0, 1})
      for (const char* rc : {"none", "full"})
        layouts.push_back({{"training.tensor_model_parallel_size", tp}, {"training.sequence_parallel", tp > 1},
                           {"training.zero_stage", zero}, {"training.recompute_granularity", rc}});
  SweepOptions screen;
  screen.threads = 1;
  screen.simulate = false;
  screen.estimate = true;
  std::vector<SweepPoint> estimated = run_points(doc, "small.json", layouts, screen);
  SweepOptions run;
  run.threads = 1;
  const std::vector<SweepPoint> simulated = run_points(doc, "small.json", layouts, run);
  for (std::size_t i = 0; i < layouts.size(); ++i) {
    INFO("layout " << i);
    REQUIRE(estimated[i].estimate_step_time_s);
    REQUIRE(estimated[i].whole_run);
    REQUIRE(simulated[i].whole_run);
    CHECK(*estimated[i].estimate_step_time_s == simulated[i].report.step_time_s);
    CHECK(estimated[i].whole_run->goodput == simulated[i].whole_run->goodput);
    CHECK(estimated[i].whole_run->goodput < 1);  // failures and checkpoints cost something
    CHECK(estimated[i].days_to_train() == Approx(simulated[i].days_to_train()).epsilon(1e-12));
    estimated[i].status = PointStatus::simulated;  // rank_points ranks simulated points: rank the estimates alike
  }
  CHECK(rank_points(estimated, Objective::tokens_per_s) == rank_points(simulated, Objective::tokens_per_s));
  CHECK(rank_points(estimated, Objective::usd_per_token) == rank_points(simulated, Objective::usd_per_token));
}

TEST_CASE("search --verify: the best K by the estimate are simulated, the others keep their estimate", "[sim][sweep][screening]") {
  SearchOptions opts;
  opts.run.threads = 2;
  opts.verify = 6;
  const SearchResult r = search_layouts(small_doc(), "small.json", opts, Objective::tokens_per_s);
  const auto& c = r.counts;
  CHECK(c.simulated == 6);
  REQUIRE(c.estimated > 0);
  CHECK(c.invalid + c.not_fitting + c.dominated + c.simulated + c.estimated + c.cancelled == c.enumerated);
  CHECK(c.cancelled == 0);
  REQUIRE(r.ranked.size() == c.simulated + c.estimated);
  // Simulated first (by their simulated throughput), then the estimated ones by their estimate.
  for (std::size_t k = 0; k < r.ranked.size(); ++k) {
    const SweepPoint& p = r.points[r.ranked[k]];
    CHECK(p.estimate_step_time_s.has_value());
    CHECK(p.simulated() == (k < 6));
    if (k > 0 && k != 6) CHECK(r.points[r.ranked[k - 1]].report.tokens_per_s >= p.report.tokens_per_s);
  }
  // Every simulated point's estimate is at least as good as every estimated point's.
  double worst_verified = 1e300, best_left = 0;
  for (const SweepPoint& p : r.points) {
    if (p.simulated()) worst_verified = std::min(worst_verified, 1 / *p.estimate_step_time_s);
    if (p.estimated()) best_left = std::max(best_left, 1 / *p.estimate_step_time_s);
  }
  CHECK(worst_verified >= best_left);
  // An estimated point's report carries the estimate.
  const SweepPoint& e = r.points[r.ranked.back()];
  CHECK(e.estimated());
  CHECK(e.report.step_time_s == *e.estimate_step_time_s);
  CHECK(to_json(e).contains("estimate"));
  CHECK_FALSE(to_json(e).contains("report"));

  // The same winner as simulating everything (the screening tier's purpose), and verify 0 is that.
  opts.verify = 0;
  const SearchResult all = search_layouts(small_doc(), "small.json", opts, Objective::tokens_per_s);
  CHECK(all.counts.estimated == 0);
  CHECK(all.counts.simulated == c.simulated + c.estimated);
  CHECK(all.points[all.ranked[0]].assignment == r.points[r.ranked[0]].assignment);
}

TEST_CASE("search shards: every shard simulates its own share of the verified layouts, the merge is the whole", "[sim][sweep][screening]") {
  SearchOptions opts;
  opts.run.threads = 1;
  opts.verify = 7;
  const SearchResult whole = search_layouts(small_doc(), "small.json", opts, Objective::tokens_per_s);
  std::vector<std::vector<SweepPoint>> parts;
  std::size_t simulated = 0;
  for (int i = 0; i < 3; ++i) {
    opts.run.shard = {i, 3};
    parts.push_back(search_layouts(small_doc(), "small.json", opts, Objective::tokens_per_s).points);
    for (const auto& p : parts.back()) simulated += p.simulated();
  }
  CHECK(simulated == 7);  // 3 + 2 + 2: each verified layout simulated once
  for (std::size_t i = 0; i < whole.points.size(); ++i) {
    const SweepPoint* pick = nullptr;
    for (const auto& part : parts)
      if (part[i].status != PointStatus::pending) {
        pick = &part[i];
        break;
      }
    REQUIRE(pick);
    CHECK(pick->status == whole.points[i].status);
    CHECK(to_json(*pick).dump() == to_json(whole.points[i]).dump());
  }
}

TEST_CASE("screening: a cluster of unequal GPUs is left to the simulation", "[sim][sweep][screening]") {
  // A straggler makes ranks unequal (sim/scenario/heterogeneity.hpp): the closed form, which prices one
  // rank per stage, does not cover it, so the search simulates such a layout whatever its rank.
  json doc = small_doc();
  doc["cluster"]["stragglers"] = json::parse(R"([{"gpu": 1, "slowdown": 1.25}])");
  const Scenario s = parse_scenario(doc, "small.json");
  ScreeningCache cache(s.cluster);
  CHECK_FALSE(screening_step_time_s(s, cache).has_value());
  SearchOptions opts;
  opts.run.threads = 2;
  opts.verify = 2;
  const SearchResult r = search_layouts(doc, "small.json", opts, Objective::tokens_per_s);
  CHECK(r.counts.estimated == 0);
  CHECK(r.counts.simulated > 2);
}
