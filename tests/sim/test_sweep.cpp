// Sweeps, layout search and capacity planning (sim/explore/sweep.hpp): worked examples on small scenarios.
#include <catch2/catch.hpp>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "sim/base/input_error.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/explore/sweep.hpp"

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

std::string fingerprint(const std::vector<SweepPoint>& points) {
  std::string s;
  for (const auto& p : points) {
    s += std::string(to_string(p.status)) + "|" + p.error + "|";
    if (p.simulated()) s += to_json(p.report).dump();
    s += "\n";
  }
  return s;
}

SweepPoint fake(double tokens_per_s, double usd_per_step) {
  SweepPoint p;
  p.status = PointStatus::simulated;
  p.valid = true;
  p.report.fits_in_memory = true;
  p.report.global_batch_size = 1;
  p.report.seq_length = 1000;
  p.report.tokens_per_s = tokens_per_s;
  p.report.cost.usd_per_step = usd_per_step;
  return p;
}

}  // namespace

TEST_CASE("sweep: --vary axes: JSON values, strings, commas inside brackets and quotes", "[sim][sweep]") {
  const SweepAxis a = parse_axis(R"(training.x=1,2.5,true,"a,b",[1,2],H100-SXM)");
  CHECK(a.path == "training.x");
  REQUIRE(a.values.size() == 6);
  CHECK(a.values[0] == json(1));
  CHECK(a.values[1] == json(2.5));
  CHECK(a.values[2] == json(true));
  CHECK(a.values[3] == json("a,b"));
  CHECK(a.values[4] == json::array({1, 2}));
  CHECK(a.values[5] == json("H100-SXM"));
  CHECK_THROWS_AS(parse_axis("training.x"), cs::InputError);
  CHECK_THROWS_AS(parse_axis("=1,2"), cs::InputError);
  CHECK_THROWS_AS(parse_axis("training.x=1,,2"), cs::InputError);
}

TEST_CASE("cartesian product: last axis fastest", "[sim][sweep]") {
  const auto c = cartesian({{"a", {1, 2}}, {"b", {"x", "y", "z"}}});
  REQUIRE(c.size() == 6);
  CHECK(c[0] == Assignment{{"a", 1}, {"b", "x"}});
  CHECK(c[1] == Assignment{{"a", 1}, {"b", "y"}});
  CHECK(c[3] == Assignment{{"a", 2}, {"b", "x"}});
  CHECK(cartesian({}).size() == 1);  // no axis: the base scenario itself
}

TEST_CASE("a sweep keeps invalid combinations with the validator's message", "[sim][sweep]") {
  SweepOptions opts;
  opts.threads = 1;
  const auto points = run_sweep(small_doc(), "small.json", {{"training.tensor_model_parallel_size", {1, 2, 3}}}, opts);
  REQUIRE(points.size() == 3);
  CHECK(points[0].simulated());
  CHECK(points[1].simulated());
  CHECK(points[1].report.tp == 2);
  CHECK(points[2].status == PointStatus::invalid);
  CHECK_FALSE(points[2].valid);
  // The message names the knob, without repeating the file name on every row.
  CHECK(points[2].error.find("training") == 0);
  CHECK(points[2].error.find("small.json") == std::string::npos);
  CHECK(points[0].report.tokens_per_s > 0);
}

TEST_CASE("sweep output is identical on 1 and 2 threads", "[sim][sweep]") {
  const std::vector<SweepAxis> axes = {{"training.tensor_model_parallel_size", {1, 2, 4, 3}},
                                       {"training.pipeline_model_parallel_size", {1, 2}},
                                       {"training.micro_batch_size", {1, 2}}};
  SweepOptions one, two;
  one.threads = 1;
  two.threads = 2;
  const auto a = run_sweep(small_doc(), "small.json", axes, one);
  const auto b = run_sweep(small_doc(), "small.json", axes, two);
  REQUIRE(a.size() == 16);
  CHECK(fingerprint(a) == fingerprint(b));
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i].assignment == b[i].assignment);
}

TEST_CASE("progress is reported once per point, cancel stops the sweep", "[sim][sweep]") {
  std::size_t calls = 0, last_done = 0;
  SweepOptions opts;
  opts.threads = 2;
  opts.progress = [&](const SweepProgress& p) {
    ++calls;  // serialised by the library
    CHECK(p.done == last_done + 1);
    last_done = p.done;
    CHECK(p.total == 4);
  };
  run_sweep(small_doc(), "small.json", {{"training.micro_batch_size", {1, 2, 4, 8}}}, opts);
  CHECK(calls == 4);

  std::atomic<bool> cancel{true};
  SweepOptions cancelled;
  cancelled.cancel = &cancel;
  const auto points = run_sweep(small_doc(), "small.json", {{"training.micro_batch_size", {1, 2}}}, cancelled);
  REQUIRE(points.size() == 2);
  CHECK(points[0].status == PointStatus::cancelled);
  CHECK(points[1].status == PointStatus::cancelled);
}

TEST_CASE("on_worker_start runs once on each worker thread, before its points", "[sim][sweep]") {
  std::mutex mutex;
  std::set<std::thread::id> started, evaluated_on;
  bool evaluated_before_start = false;
  SweepOptions opts;
  opts.threads = 3;
  opts.on_worker_start = [&] {
    const std::lock_guard<std::mutex> lock(mutex);
    CHECK(started.insert(std::this_thread::get_id()).second);  // once per thread
  };
  opts.progress = [&](const SweepProgress&) {  // runs on the worker that finished the point
    const std::lock_guard<std::mutex> lock(mutex);
    evaluated_on.insert(std::this_thread::get_id());
    evaluated_before_start = evaluated_before_start || !started.count(std::this_thread::get_id());
  };
  const auto points = run_sweep(small_doc(), "small.json", {{"training.micro_batch_size", {1, 2, 4, 8}}}, opts);
  REQUIRE(points.size() == 4);
  CHECK(started.size() == 3);
  CHECK_FALSE(evaluated_before_start);
  for (const auto& id : evaluated_on) CHECK(started.count(id) == 1);
}

TEST_CASE("Pareto front on (time, cost): hand-checked", "[sim][sweep]") {
  // usd per token = usd_per_step / 1000.  A fast and dear, B slow and cheap, C slower and dearer than A
  // (dominated), D a copy of A (tie: the first is kept), E faster than everything but dearest, F does
  // not fit (never on the front).
  std::vector<SweepPoint> p = {fake(100, 2.0), fake(50, 1.0), fake(80, 3.0), fake(100, 2.0), fake(120, 5.0), fake(200, 0.5)};
  p[5].report.fits_in_memory = false;
  const auto front = pareto_front(p);
  CHECK(front == std::vector<std::size_t>{4, 0, 1});
  CHECK(rank_points(p, Objective::tokens_per_s) == std::vector<std::size_t>{4, 0, 3, 2, 1});
  CHECK(rank_points(p, Objective::usd_per_token) == std::vector<std::size_t>{1, 0, 3, 2, 4});
}

TEST_CASE("dominance: the same layout with a lighter recompute that fits is never slower", "[sim][sweep]") {
  auto point = [](int tp, int zero, const char* rc, PointStatus s) {
    SweepPoint p;
    p.status = s;
    p.report.dp = 4;  // several replicas: ZeRO stages are distinct layouts
    p.assignment = {{"training.tensor_model_parallel_size", tp}, {"training.zero_stage", zero}, {"training.recompute_granularity", rc}};
    return p;
  };
  std::vector<SweepPoint> p = {point(2, 0, "none", PointStatus::not_fitting), point(2, 0, "selective", PointStatus::pending),
                               point(2, 0, "full", PointStatus::pending),      point(2, 1, "full", PointStatus::pending),
                               point(4, 0, "full", PointStatus::pending),      point(4, 0, "none", PointStatus::invalid)};
  mark_dominated(p);
  CHECK(p[0].status == PointStatus::not_fitting);
  CHECK(p[1].status == PointStatus::pending);    // the lightest recompute that fits
  CHECK(p[2].status == PointStatus::dominated);  // selective fits: full is never faster
  CHECK(p[3].status == PointStatus::pending);    // another ZeRO stage is another layout
  CHECK(p[4].status == PointStatus::pending);    // nothing lighter fits for TP 4
  CHECK(p[5].status == PointStatus::invalid);
}

TEST_CASE("dominance: ZeRO-2 against a fitting ZeRO-1, and every stage against ZeRO-0 with one replica", "[sim][sweep]") {
  auto point = [](int tp, int zero, const char* rc, int dp) {
    SweepPoint p;
    p.status = PointStatus::pending;
    p.report.dp = dp;
    p.assignment = {{"training.tensor_model_parallel_size", tp}, {"training.zero_stage", zero}, {"training.recompute_granularity", rc}};
    return p;
  };
  std::vector<SweepPoint> p = {point(2, 0, "full", 4), point(2, 1, "full", 4), point(2, 2, "none", 4), point(2, 2, "full", 4),
                               point(2, 3, "none", 4), point(8, 0, "full", 1), point(8, 1, "full", 1), point(8, 3, "none", 1)};
  mark_dominated(p);
  CHECK(p[0].status == PointStatus::pending);    // DDP against ZeRO-1: not ordered
  CHECK(p[1].status == PointStatus::pending);
  CHECK(p[2].status == PointStatus::pending);    // ZeRO-1 fits only with full recompute: not lighter
  CHECK(p[3].status == PointStatus::dominated);  // ZeRO-1 with the same recompute fits
  CHECK(p[4].status == PointStatus::pending);    // ZeRO-3 is simulated: its gathers overlap
  CHECK(p[5].status == PointStatus::pending);
  CHECK(p[6].status == PointStatus::dominated);  // one replica: ZeRO-1 is ZeRO-0
  CHECK(p[7].status == PointStatus::pending);    // ZeRO-0 fits only with full recompute
}

TEST_CASE("layout search: counts add up, ranking is by the objective, pruning does not change the winner",
          "[sim][sweep]") {
  SearchOptions opts;
  opts.run.threads = 2;
  const SearchResult r = search_layouts(small_doc(), "small.json", opts, Objective::tokens_per_s);
  const auto& c = r.counts;
  CHECK(c.enumerated == r.points.size());
  CHECK(c.invalid + c.not_fitting + c.dominated + c.simulated + c.cancelled == c.enumerated);
  CHECK(c.cancelled == 0);
  REQUIRE(c.simulated > 0);
  REQUIRE(r.ranked.size() == c.simulated);
  for (std::size_t k = 1; k < r.ranked.size(); ++k)
    CHECK(r.points[r.ranked[k - 1]].report.tokens_per_s >= r.points[r.ranked[k]].report.tokens_per_s);
  for (std::size_t i : r.ranked) {
    CHECK(r.points[i].report.tp <= 4);  // TP stays inside the 4-GPU node by default
    CHECK(r.points[i].fits());
  }
  // Exhaustive: the dominated layouts simulated too; none of them beats the pruned search's best.
  opts.exhaustive = true;
  const SearchResult all = search_layouts(small_doc(), "small.json", opts, Objective::tokens_per_s);
  CHECK(all.counts.dominated == 0);
  CHECK(all.counts.simulated == c.simulated + c.dominated);
  REQUIRE_FALSE(all.ranked.empty());
  CHECK(all.points[all.ranked[0]].report.tokens_per_s == Approx(r.points[r.ranked[0]].report.tokens_per_s).epsilon(1e-12));
  CHECK(all.points[all.ranked[0]].assignment == r.points[r.ranked[0]].assignment);
  // Each rule on its own: a dominated layout, simulated, is never faster than the fastest layout of the
  // pruned search that differs from it only in recompute and ZeRO stage.
  auto family = [](const Assignment& a) {
    std::string key;
    for (const auto& [path, v] : a)
      if (path != "training.recompute_granularity" && path != "training.zero_stage") key += path + "=" + v.dump() + ";";
    return key;
  };
  std::map<std::string, double> best_kept;
  for (std::size_t i : r.ranked) best_kept.emplace(family(r.points[i].assignment), r.points[i].report.tokens_per_s);
  int checked = 0;
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    if (r.points[i].status != PointStatus::dominated) continue;
    REQUIRE(all.points[i].status == PointStatus::simulated);
    const auto kept = best_kept.find(family(r.points[i].assignment));
    REQUIRE(kept != best_kept.end());
    CHECK(all.points[i].report.tokens_per_s <= kept->second * (1 + 1e-9));
    ++checked;
  }
  CHECK(checked == static_cast<int>(c.dominated));

  // Same result on one thread.
  opts.exhaustive = false;
  opts.run.threads = 1;
  const SearchResult one = search_layouts(small_doc(), "small.json", opts, Objective::tokens_per_s);
  CHECK(fingerprint(one.points) == fingerprint(r.points));
  CHECK(one.ranked == r.ranked);
}

TEST_CASE("search space: TP divides heads and stays in the node unless allowed across nodes", "[sim][sweep]") {
  SearchOptions opts;
  const auto in_node = enumerate_layouts(small_doc(), "small.json", opts);
  opts.allow_tp_across_nodes = true;
  const auto across = enumerate_layouts(small_doc(), "small.json", opts);
  auto max_tp = [](const std::vector<Assignment>& v) {
    int m = 0;
    for (const auto& a : v)
      for (const auto& [path, value] : a)
        if (path == "training.tensor_model_parallel_size") m = std::max(m, value.get<int>());
    return m;
  };
  CHECK(max_tp(in_node) == 4);
  CHECK(max_tp(across) == 8);
  CHECK(across.size() > in_node.size());
}

TEST_CASE("search space: MoE experts fold over TP x CP x DP, with expert TP = TP or whole experts", "[sim][sweep]") {
  // 8 GPUs, 8 experts. Under TP 4 there are 2 DP ranks: expert TP 4 allows EP 1, 2 (dividing CP x DP);
  // whole experts (expert TP 1) allow EP dividing TP x CP x DP = 8 (with CP 1): 1, 2, 4, 8.
  json doc = small_doc();
  doc["model"]["num_moe_experts"] = 8;
  doc["model"]["moe_router_topk"] = 2;
  std::set<std::pair<int, int>> at_tp4_pp1_cp1;  // (ep, etp)
  for (const auto& a : enumerate_layouts(doc, "small.json", SearchOptions{})) {
    std::map<std::string, json> v(a.begin(), a.end());
    if (v["training.tensor_model_parallel_size"] == 4 && v["training.pipeline_model_parallel_size"] == 1 &&
        v["training.context_parallel_size"] == 1)
      at_tp4_pp1_cp1.insert({v["training.expert_model_parallel_size"].get<int>(), v["training.expert_tensor_parallel_size"].get<int>()});
  }
  CHECK(at_tp4_pp1_cp1 == std::set<std::pair<int, int>>{{1, 4}, {2, 4}, {1, 1}, {2, 1}, {4, 1}, {8, 1}});
}

TEST_CASE("70B with plain DDP on 80 GB GPUs does not fit", "[sim][sweep]") {
  const std::string file = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/llama3-70b-h100x256.json";
  const json doc = read_json_file(file);
  const Assignment ddp = {{"training.tensor_model_parallel_size", 1}, {"training.sequence_parallel", false},
                          {"training.pipeline_model_parallel_size", 1}, {"training.zero_stage", 0},
                          {"training.recompute_granularity", "full"}};
  // Screened before simulation (the search's path)...
  const SweepPoint screened = evaluate_point(doc, file, ddp, true);
  CHECK(screened.valid);
  CHECK(screened.status == PointStatus::not_fitting);
  CHECK_FALSE(screened.fits());
  // 16 bytes per parameter x 70.6e9 parameters = 1.05 TiB before activations.
  CHECK(screened.report.memory.total_bytes() > 1000.0 * 1073741824.0);
  CHECK(screened.error.find("H100-SXM has 80.0 GiB") != std::string::npos);
  // ...and flagged when simulated anyway (a plain sweep's path, as `clustersim run` does).
  const SweepPoint simulated = evaluate_point(doc, file, ddp, false);
  CHECK(simulated.simulated());
  CHECK_FALSE(simulated.report.fits_in_memory);
  CHECK_FALSE(simulated.fits());
}

TEST_CASE("capacity planning: cheapest and fastest under a deadline, Pareto front", "[sim][sweep]") {
  CapacityOptions opts;
  opts.gpu_counts = {4, 8};
  opts.gpu_types = {"H100-SXM", "A100-80GB"};
  opts.search.run.threads = 2;
  const CapacityResult r = plan_capacity(small_doc(), "small.json", opts);
  CHECK(r.tokens_to_train == 1e9);
  CHECK(r.skipped.empty());
  REQUIRE(r.cheapest);
  REQUIRE(r.fastest);
  const auto& cheapest = r.points[*r.cheapest];
  const auto& fastest = r.points[*r.fastest];
  for (std::size_t i : r.ranked) {
    CHECK(r.points[i].usd_per_token() >= cheapest.usd_per_token());
    CHECK(r.points[i].report.cost.days_to_train >= fastest.report.cost.days_to_train);
  }
  // Both ends of the front are the fastest and the cheapest plans.
  REQUIRE_FALSE(r.pareto.empty());
  CHECK(r.pareto.front() == *r.fastest);
  CHECK(r.points[r.pareto.back()].usd_per_token() == cheapest.usd_per_token());
  // Several GPU types and counts took part.
  bool a100 = false, h100 = false, eight = false;
  for (std::size_t i : r.ranked) {
    a100 |= r.points[i].report.gpu == "A100-80GB";
    h100 |= r.points[i].report.gpu == "H100-SXM";
    eight |= r.points[i].report.num_gpus == 8;
  }
  CHECK((a100 && h100 && eight));

  // A deadline shorter than the fastest plan leaves nothing.
  CapacityOptions tight = opts;
  tight.deadline_days = fastest.report.cost.days_to_train * 0.5;
  const CapacityResult none = plan_capacity(small_doc(), "small.json", tight);
  CHECK_FALSE(none.cheapest);
  CHECK_FALSE(none.fastest);

  // Bad input names the file and the path.
  json no_tokens = small_doc();
  no_tokens["training"].erase("tokens_to_train");
  CHECK_THROWS_WITH(plan_capacity(no_tokens, "small.json", opts), Catch::Contains("small.json: training.tokens_to_train"));
  CapacityOptions odd = opts;
  odd.gpu_counts = {6};
  CHECK_THROWS_WITH(plan_capacity(small_doc(), "small.json", odd), Catch::Contains("--gpus 6"));
}
