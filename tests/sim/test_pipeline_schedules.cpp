// Pipeline schedules: the orders themselves, the interleaved bubble worked by hand on a direct graph and
// through whole scenarios, and a property test that every combination of strategies completes.
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "fixed_network.hpp"
#include "sim/engine/executor.hpp"
#include "sim/base/input_error.hpp"
#include "models/parallelism/pipeline_schedule.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"
#include "sim/step/step_builder.hpp"

using namespace cs::sim;
using cs::sim::testing::FixedNetwork;
using nlohmann::json;

namespace {

// Runs the schedule of every stage on a direct graph: one compute task per action (forward chunk f,
// backward chunk b), the pipeline dependencies as cross-rank edges (zero-cost transfers). Returns the
// makespan and checks every stage's compute adds up to m v (f + b).
Time run_schedule(PipelineSchedule schedule, int p, int m, int v, Time f, Time b) {
  TaskGraph g(p);
  // (forward?, stage, chunk, micro-batch) -> task
  std::map<std::tuple<bool, int, int, int>, TaskId> task;
  std::vector<std::vector<PipelineAction>> orders;
  for (int s = 0; s < p; ++s) orders.push_back(pipeline_order(schedule, p, m, s, v));
  for (int s = 0; s < p; ++s)
    for (const PipelineAction& a : orders[static_cast<std::size_t>(s)]) {
      Task t;
      t.rank = static_cast<std::uint32_t>(s);
      t.duration = a.forward ? f : b;
      t.micro_batch = a.micro_batch;
      task[{a.forward, s, a.chunk, a.micro_batch}] = g.add_task(t);
    }
  for (const auto& [key, id] : task) {
    const auto [fwd, s, c, j] = key;
    if (fwd) {
      // Needs the forward of the previous virtual stage in layer order: (s - 1, c) or (p - 1, c - 1).
      if (s > 0) g.add_dependency(task.at({true, s - 1, c, j}), id);
      else if (c > 0) g.add_dependency(task.at({true, p - 1, c - 1, j}), id);
    } else {
      // Needs the backward of the next virtual stage, or this chunk's own forward at the very end.
      if (s + 1 < p) g.add_dependency(task.at({false, s + 1, c, j}), id);
      else if (c + 1 < v) g.add_dependency(task.at({false, 0, c + 1, j}), id);
      else g.add_dependency(task.at({true, s, c, j}), id);
    }
  }
  g.freeze();
  FixedNetwork net({});
  const auto r = execute(g, net, {});
  for (int s = 0; s < p; ++s) {
    Time busy = 0;
    for (TaskId id : g.stream_tasks(s, StreamKind::compute)) busy += r.records[id].end - r.records[id].start;
    REQUIRE(busy == static_cast<Time>(m) * v * (f + b));
  }
  return r.makespan;
}

json tiny_doc() {
  // 24 small layers: divisible by every p v with p <= 4, v <= 3 except 9.
  return json::parse(R"({
    "name": "tiny",
    "cluster": {"gpu": "H100-SXM", "nodes": 1, "gpus_per_node": 8, "intra_node": "nvswitch"},
    "model": {"num_layers": 24, "hidden_size": 256, "num_attention_heads": 8, "vocab_size": 512,
              "ffn_hidden_size": 1024, "activation": "swiglu"},
    "training": {"seq_length": 512, "global_batch_size": 8, "micro_batch_size": 1},
    "simulation": {"comm_compute_contention": 0}
  })");
}

}  // namespace

TEST_CASE("pipeline schedules: interleaved order follows Megatron's warm-up and chunk mapping", "[sim]") {
  // p = 4, v = 2, m = 8: stage s warms up with (p - s - 1) 2 + (v - 1) p forwards: 10, 8, 6, 4.
  const int p = 4, v = 2, m = 8;
  for (int s = 0; s < p; ++s) {
    const auto order = pipeline_order(PipelineSchedule::interleaved, p, m, s, v);
    REQUIRE(order.size() == static_cast<std::size_t>(2 * m * v));
    // The warm-up forwards, then the first steady-state forward, then the first backward.
    int leading = 0;
    while (order[static_cast<std::size_t>(leading)].forward) ++leading;
    CHECK(leading == (p - s - 1) * 2 + (v - 1) * p + 1);
    // Every (chunk, micro-batch) runs forward once and backward once, the forward first.
    std::set<std::pair<int, int>> fwd, bwd;
    for (const auto& a : order) {
      if (a.forward) {
        CHECK(fwd.insert({a.chunk, a.micro_batch}).second);
      } else {
        CHECK(fwd.count({a.chunk, a.micro_batch}) == 1);
        CHECK(bwd.insert({a.chunk, a.micro_batch}).second);
      }
    }
    CHECK(fwd.size() == static_cast<std::size_t>(m * v));
    CHECK(bwd.size() == static_cast<std::size_t>(m * v));
  }
  // Virtual micro-batch k = 0..15 in groups of p per chunk: forwards run mb 0-3 on chunk 0, then mb 0-3
  // on chunk 1, then mb 4-7 on chunk 0, ...; backwards start from the last chunk.
  const auto order = pipeline_order(PipelineSchedule::interleaved, p, m, 0, v);
  CHECK(order[0].chunk == 0);
  CHECK(order[3].micro_batch == 3);
  CHECK(order[4].chunk == 1);
  CHECK(order[4].micro_batch == 0);
  CHECK(order[8].chunk == 0);
  CHECK(order[8].micro_batch == 4);
  CHECK(order[10].forward);     // k = 10: first steady-state forward
  CHECK_FALSE(order[11].forward);  // backward k = 0: the last chunk of micro-batch 0
  CHECK(order[11].chunk == 1);
  CHECK(order[11].micro_batch == 0);
}

TEST_CASE("pipeline schedules: interleaved bubble is 1/v of 1F1B's, worked by hand", "[sim]") {
  // Equal stage times, free transfers. Plain 1F1B with a whole stage forward F and backward B per
  // micro-batch: step = (m + p - 1)(F + B), bubble (p - 1)(F + B). Interleaved with v chunks, each chunk
  // F / v and B / v: step = m (F + B) + (p - 1)(F + B) / v, bubble (p - 1)(F + B) / v.
  // p = 4, m = 8, F = 6, B = 12 (units of 1 us; divisible by v = 2 and 3):
  //   1F1B:              step = 11 x 18 = 198, bubble = 3 x 18 = 54 = (p-1)/m = 3/8 of the ideal 144;
  //   interleaved v = 2: step = 144 + 27 = 171, bubble 27 = 54 / 2 (3/16 of 144);
  //   interleaved v = 3: step = 144 + 18 = 162, bubble 18 = 54 / 3 (1/8 of 144).
  const Time us = 1'000'000;  // picoseconds
  const int p = 4, m = 8;
  const Time F = 6 * us, B = 12 * us;
  const Time one = run_schedule(PipelineSchedule::one_f_one_b, p, m, 1, F, B);
  CHECK(one == 198 * us);
  const Time two = run_schedule(PipelineSchedule::interleaved, p, m, 2, F / 2, B / 2);
  CHECK(two == 171 * us);
  const Time three = run_schedule(PipelineSchedule::interleaved, p, m, 3, F / 3, B / 3);
  CHECK(three == 162 * us);
  const Time ideal = m * (F + B);
  CHECK(static_cast<double>(two - ideal) / static_cast<double>(one - ideal) == Approx(0.5));
  CHECK(static_cast<double>(three - ideal) / static_cast<double>(one - ideal) == Approx(1.0 / 3.0));
}

TEST_CASE("pipeline schedules: a real model's interleaved bubble is about 1/v of 1F1B's", "[sim]") {
  // 32 equal layers, p = 4, m = 8, a 128-token vocabulary (embedding and LM head negligible), 16 MB
  // activations over NVLink (~50 us against ~2.5 ms per chunk): stage times equal within ~1-2%, so
  // bubble(v) / bubble(1) = 1/v up to the v-fold more (small) pipeline transfers.
  json doc = json::parse(R"({
    "name": "interleaved",
    "cluster": {"gpu": "H100-SXM", "nodes": 1, "gpus_per_node": 4, "intra_node": "nvswitch"},
    "model": {"num_layers": 32, "hidden_size": 4096, "num_attention_heads": 32, "vocab_size": 128,
              "ffn_hidden_size": 16384, "activation": "gelu"},
    "training": {"seq_length": 2048, "global_batch_size": 8, "micro_batch_size": 1,
                 "pipeline_model_parallel_size": 4},
    "simulation": {"comm_compute_contention": 0}
  })");
  const Report one = simulate(parse_scenario(doc, "t.json")).report;
  doc["training"]["virtual_pipeline_model_parallel_size"] = 2;
  const Report two = simulate(parse_scenario(doc, "t.json")).report;
  doc["training"]["virtual_pipeline_model_parallel_size"] = 4;
  const Report four = simulate(parse_scenario(doc, "t.json")).report;
  CHECK(two.schedule == "interleaved");
  CHECK(two.breakdown.pipeline_bubble_s / one.breakdown.pipeline_bubble_s == Approx(0.5).epsilon(0.05));
  CHECK(four.breakdown.pipeline_bubble_s / one.breakdown.pipeline_bubble_s == Approx(0.25).epsilon(0.08));
  // The compute is the same; only the bubble moved.
  CHECK(two.breakdown.compute_s == Approx(one.breakdown.compute_s).epsilon(1e-3));
}

TEST_CASE("pipeline schedules: the validator explains what the interleaved schedule needs", "[sim]") {
  auto error_of = [](const json& doc) -> std::string {
    try {
      parse_scenario(doc, "t.json");
    } catch (const cs::InputError& e) {
      return e.what();
    }
    return "";
  };
  json doc = tiny_doc();
  doc["training"]["pipeline_model_parallel_size"] = 4;
  doc["training"]["virtual_pipeline_model_parallel_size"] = 2;
  doc["training"]["global_batch_size"] = 6;  // dp 2, m = 3: not a multiple of p = 4
  CHECK_THAT(error_of(doc), Catch::Contains("training.global_batch_size") && Catch::Contains("multiple of pipeline_model_parallel_size"));
  doc = tiny_doc();
  doc["training"]["virtual_pipeline_model_parallel_size"] = 2;  // pp = 1
  CHECK_THAT(error_of(doc), Catch::Contains("training.virtual_pipeline_model_parallel_size") && Catch::Contains(">= 2"));
  doc = tiny_doc();
  doc["training"]["pipeline_model_parallel_size"] = 2;
  doc["training"]["pipeline_schedule"] = "interleaved";  // vp = 1
  CHECK_THAT(error_of(doc), Catch::Contains("training.pipeline_schedule") && Catch::Contains("virtual_pipeline_model_parallel_size > 1"));
  doc["training"]["virtual_pipeline_model_parallel_size"] = 2;
  CHECK(error_of(doc).empty());
}

TEST_CASE("pipeline schedules: every combination of strategies completes (property, fixed seed)", "[sim]") {
  // Random small layouts: p in 1..4, v in 1..3 (p >= 2, p v | 24 layers), m a multiple of p, tp and cp in
  // {1, 2}, ZeRO 0-3, recompute and overlap settings, dense or MoE with ep in {1, 2}, simulated with
  // symmetry or rank by rank. Each must finish (the executor throws on deadlock, naming the blocked
  // ranks), satisfy the report's self-checks (step >= compute on every rank, MFU <= 1), and have a
  // non-negative pipeline bubble. Whatever the layout, the report must also add up:
  //  - every task ran, within the step;
  //  - compute + exposed comm + bubble + other = the step (the four partition each rank's timeline);
  //  - the idle time is bubble with pipeline parallelism and "other" without (never both);
  //  - exposed comm <= the comm busy time (the exposed part is a subset of the union of the collectives,
  //    itself at most their sum), kind by kind, and the kinds add up to the exposed total;
  //  - throughput x step = the tokens of the global batch;
  //  - the same layout simulated again gives the same report, byte for byte.
  // And the draw covers what it claims to: all three schedules, every ZeRO stage, dense and MoE.
  std::mt19937 rng(20240611);
  auto pick = [&](std::initializer_list<int> xs) {
    std::vector<int> v(xs);
    return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
  };
  std::set<std::string> schedules;
  std::set<int> zero_stages;
  std::set<bool> moe_seen;
  for (int trial = 0; trial < 40; ++trial) {
    const int p = pick({1, 2, 3, 4}), tp = pick({1, 2}), cp = pick({1, 2}), dp = pick({1, 2});
    int v = p >= 2 ? pick({1, 2, 3}) : 1;
    if (24 % (p * v) != 0) v = 1;
    const int m = p * pick({1, 2});
    const bool moe = pick({0, 1}) == 1;
    const int ep = moe && dp == 2 ? pick({1, 2}) : 1;
    json doc = tiny_doc();
    const int world = p * tp * cp * dp;
    doc["cluster"]["gpus_per_node"] = world;
    if (moe) {
      doc["model"]["num_moe_experts"] = 4;
      doc["model"]["moe_router_topk"] = 2;
    }
    auto& t = doc["training"];
    t["pipeline_model_parallel_size"] = p;
    t["virtual_pipeline_model_parallel_size"] = v;
    t["tensor_model_parallel_size"] = tp;
    t["context_parallel_size"] = cp;
    t["expert_model_parallel_size"] = ep;
    // Megatron-Core requires sequence parallelism for MoE with TP; experts then fold over TP x CP x DP
    // with an expert TP of TP or 1.
    t["sequence_parallel"] = tp > 1 && (moe || pick({0, 1}) == 1);
    if (moe && tp > 1) t["expert_tensor_parallel_size"] = pick({1, 2});
    t["global_batch_size"] = m * dp;
    t["zero_stage"] = pick({0, 1, 2, 3});
    t["recompute_granularity"] = std::vector<std::string>{"none", "selective", "full"}[static_cast<std::size_t>(pick({0, 1, 2}))];
    t["overlap_grad_reduce"] = pick({0, 1}) == 1;
    t["overlap_param_gather"] = pick({0, 1}) == 1;
    if (v == 1 && p > 1 && pick({0, 1}) == 1) t["pipeline_schedule"] = "gpipe";
    doc["simulation"]["symmetry"] = pick({0, 1, 1}) == 1;
    INFO("case " << trial << ": " << doc.dump());
    const Scenario scenario = parse_scenario(doc, "t.json");
    const SimulationResult r = simulate(scenario);
    CHECK(r.report.step_time_s > 0);
    CHECK(r.report.breakdown.pipeline_bubble_s >= 0);
    CHECK(r.report.breakdown.other_s >= 0);
    CHECK(r.report.mfu <= 1.0);

    const Report& rep = r.report;
    const double step = rep.step_time_s;
    REQUIRE(r.execution.records.size() == r.plan.graph.tasks().size());
    std::size_t outside = 0;  // tasks that never ran, or ran outside the step
    for (const TaskRecord& rec : r.execution.records)
      outside += rec.end == kNever || rec.start > rec.end || rec.end > r.execution.makespan;
    CHECK(outside == 0);
    const Breakdown& b = rep.breakdown;
    CHECK(b.compute_s + b.exposed_comm_s + b.pipeline_bubble_s + b.other_s == Approx(step).epsilon(1e-9));
    CHECK(b.compute_s > 0);
    CHECK(b.exposed_comm_s >= 0);
    if (p > 1) CHECK(b.other_s == 0);
    else CHECK(b.pipeline_bubble_s == 0);
    double comm_busy = 0, by_kind = 0;
    for (int k = 0; k < kNumCategories; ++k) {
      const auto kind = static_cast<std::size_t>(k);
      const double exposed = rep.exposed_comm_s_by_kind[kind];
      INFO(to_string(static_cast<Category>(k)) << ": exposed " << exposed << " s, busy " << rep.busy_s[kind] << " s");
      CHECK(exposed >= 0);
      CHECK(exposed <= rep.busy_s[kind] * (1 + 1e-9));
      if (!is_comm(static_cast<Category>(k))) CHECK(exposed == 0);
      else comm_busy += rep.busy_s[kind];
      by_kind += exposed;
    }
    CHECK(b.exposed_comm_s <= comm_busy * (1 + 1e-9));
    CHECK(by_kind == Approx(b.exposed_comm_s).epsilon(1e-9).margin(1e-15));
    CHECK(rep.tokens_per_s * step == Approx(static_cast<double>(m * dp) * 512).epsilon(1e-9));
    CHECK(to_json(simulate(scenario).report).dump() == to_json(rep).dump());

    schedules.insert(rep.schedule);
    zero_stages.insert(rep.zero_stage);
    moe_seen.insert(moe);
  }
  CHECK(schedules == std::set<std::string>{"1f1b", "gpipe", "interleaved"});
  CHECK(zero_stages == std::set<int>{0, 1, 2, 3});
  CHECK(moe_seen == std::set<bool>{false, true});
}

namespace {

// Attention-forward tasks ("attn") of each simulated rank: one per transformer layer and micro-batch.
std::vector<int> attention_tasks_per_rank(const json& doc) {
  const Scenario s = parse_scenario(doc, "t.json");
  const StepPlan plan = build_step(s, cs::models::default_compute_profile());
  std::vector<int> n(plan.global_rank.size(), 0);
  for (const Task& t : plan.graph.tasks())
    if (t.stream == StreamKind::compute && plan.graph.name(t.name) == "attn") ++n[t.rank];
  return n;
}

}  // namespace

TEST_CASE("pipeline split: the step builder gives each stage and chunk its own layers", "[sim]") {
  json doc = tiny_doc();  // 24 layers, 8 micro-batches
  doc["model"]["num_layers"] = 22;
  doc["cluster"]["gpus_per_node"] = 4;
  doc["training"]["pipeline_model_parallel_size"] = 4;
  SECTION("account_for_embedding / loss: (22 + 2) / 4 = 6, first and last stage 5") {
    doc["training"]["account_for_embedding_in_pipeline_split"] = true;
    doc["training"]["account_for_loss_in_pipeline_split"] = true;
    CHECK(attention_tasks_per_rank(doc) == std::vector<int>{5 * 8, 6 * 8, 6 * 8, 5 * 8});
  }
  SECTION("interleaved, VP 2: (22 + 2) / 8 = 3 per chunk, chunk 0 of stage 0 and chunk 1 of stage 3 hold 2") {
    doc["training"]["virtual_pipeline_model_parallel_size"] = 2;
    doc["training"]["account_for_embedding_in_pipeline_split"] = true;
    doc["training"]["account_for_loss_in_pipeline_split"] = true;
    CHECK(attention_tasks_per_rank(doc) == std::vector<int>{5 * 8, 6 * 8, 6 * 8, 5 * 8});
  }
  SECTION("decoder_first/last_pipeline_num_layers 4 and 6: the middle stages (22 - 10) / 2 = 6") {
    doc["training"]["decoder_first_pipeline_num_layers"] = 4;
    doc["training"]["decoder_last_pipeline_num_layers"] = 6;
    CHECK(attention_tasks_per_rank(doc) == std::vector<int>{4 * 8, 6 * 8, 6 * 8, 6 * 8});
  }
}

TEST_CASE("pipeline split: the slowest stage sets the 1F1B step, worked by hand", "[sim]") {
  // 12 equal layers on p = 2, m = 8, a 128-token vocabulary (embedding and LM head negligible), no
  // contention. With per-stage times t_0, t_1 (forward 1/3, backward 2/3 of them) and stage 1 the
  // slower, stage 1 runs its m forward-backward pairs back to back after stage 0's first forward, and
  // stage 0's last backward follows: step = t_0 / 3 + m t_1 + 2 t_0 / 3. In units of one layer's
  // forward + backward u: even 6 / 6 gives 2 + 48 + 4 = 54 u (= (m + p - 1) 6 u); 4 / 8 gives 4/3 + 64 +
  // 8/3 = 68 u. The bubble grows with the slowest stage, and it comes out of the schedule.
  json doc = json::parse(R"({
    "name": "uneven",
    "cluster": {"gpu": "H100-SXM", "nodes": 1, "gpus_per_node": 2, "intra_node": "nvswitch"},
    "model": {"num_layers": 12, "hidden_size": 4096, "num_attention_heads": 32, "vocab_size": 128,
              "ffn_hidden_size": 16384, "activation": "gelu"},
    "training": {"seq_length": 2048, "global_batch_size": 8, "micro_batch_size": 1,
                 "pipeline_model_parallel_size": 2},
    "simulation": {"comm_compute_contention": 0}
  })");
  const Report even = simulate(parse_scenario(doc, "t.json")).report;
  doc["training"]["decoder_first_pipeline_num_layers"] = 4;
  const Report uneven = simulate(parse_scenario(doc, "t.json")).report;
  CHECK(uneven.step_time_s / even.step_time_s == Approx(68.0 / 54.0).epsilon(0.03));
  // The same work in total: the uneven step's extra time is idle time of the lighter stage.
  CHECK(uneven.breakdown.pipeline_bubble_s > even.breakdown.pipeline_bubble_s);
}
