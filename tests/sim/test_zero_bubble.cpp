// Zero-bubble pipeline schedules (ZB-H1, ZBV; models/parallelism/pipeline_schedule.hpp): their orders,
// their bubbles worked by hand on a direct graph, the step builder's B and W tasks, their activation memory,
// and the validator's refusals.
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "fixed_network.hpp"
#include "models/memory/memory_model.hpp"
#include "models/memory/weight_pass_memory.hpp"
#include "models/parallelism/pipeline_schedule.hpp"
#include "sim/base/input_error.hpp"
#include "sim/engine/executor.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"

using namespace cs::sim;
using cs::sim::testing::FixedNetwork;
using nlohmann::json;

namespace {

// "F3 B0 W0 ..." of stage `s` (chunk digit after the letter for ZBV: "F1.3").
std::string order_string(PipelineSchedule schedule, int p, int m, int s, int v) {
  std::string out;
  for (const PipelineAction& a : pipeline_order(schedule, p, m, s, v)) {
    if (!out.empty()) out += ' ';
    out += a.forward ? 'F' : a.part == BackwardPart::input ? 'B' : a.part == BackwardPart::weight ? 'W' : 'b';
    if (v > 1) out += std::to_string(a.chunk) + ".";
    out += std::to_string(a.micro_batch);
  }
  return out;
}

// Runs every stage's order on a direct graph: one compute task per action, forward f, B b, W w, a whole
// backward b + w; free transfers. Dependencies: a forward needs the previous virtual stage's forward, a B
// (or whole backward) the next virtual stage's, the last virtual stage's its own forward, a W its own B.
// Virtual stages in layer order: 1F1B / ZB-H1 stage s; ZBV rank s chunk 0 is s, chunk 1 is 2p - 1 - s.
// Returns each rank's end (the makespan is the largest).
std::vector<Time> run_schedule(PipelineSchedule schedule, int p, int m, Time f, Time b, Time w) {
  const int v = schedule == PipelineSchedule::zbv ? 2 : 1;
  auto vstage = [&](int s, int c) { return c == 0 ? s : 2 * p - 1 - s; };
  TaskGraph g(p);
  std::map<std::tuple<int, int, int>, TaskId> task;  // (kind 0 F / 1 B / 2 W, virtual stage, mb)
  for (int s = 0; s < p; ++s)
    for (const PipelineAction& a : pipeline_order(schedule, p, m, s, v)) {
      Task t;
      t.rank = static_cast<std::uint32_t>(s);
      const int kind = a.forward ? 0 : a.part == BackwardPart::weight ? 2 : 1;
      t.duration = kind == 0 ? f : kind == 2 ? w : a.part == BackwardPart::whole ? b + w : b;
      t.micro_batch = a.micro_batch;
      REQUIRE(task.emplace(std::make_tuple(kind, vstage(s, a.chunk), a.micro_batch), g.add_task(t)).second);
    }
  const int last = p * v - 1;
  for (const auto& [key, id] : task) {
    const auto [kind, k, j] = key;
    if (kind == 0 && k > 0) g.add_dependency(task.at({0, k - 1, j}), id);
    if (kind == 1) g.add_dependency(task.at(k == last ? std::make_tuple(0, k, j) : std::make_tuple(1, k + 1, j)), id);
    if (kind == 2) g.add_dependency(task.at({1, k, j}), id);
  }
  g.freeze();
  FixedNetwork net({});
  const auto r = execute(g, net, {});
  std::vector<Time> end(static_cast<std::size_t>(p), 0);
  for (int s = 0; s < p; ++s)
    for (TaskId id : g.stream_tasks(s, StreamKind::compute)) end[static_cast<std::size_t>(s)] = std::max(end[static_cast<std::size_t>(s)], r.records[id].end);
  return end;
}
Time makespan(const std::vector<Time>& ends) { return *std::max_element(ends.begin(), ends.end()); }

json tiny_doc() {
  return json::parse(R"({
    "name": "tiny",
    "cluster": {"gpu": "H100-SXM", "nodes": 1, "gpus_per_node": 4, "intra_node": "nvswitch"},
    "model": {"num_layers": 16, "hidden_size": 1024, "num_attention_heads": 16, "vocab_size": 512,
              "ffn_hidden_size": 4096, "activation": "swiglu"},
    "training": {"seq_length": 2048, "global_batch_size": 8, "micro_batch_size": 1, "pipeline_model_parallel_size": 4},
    "simulation": {"comm_compute_contention": 0}
  })");
}

std::string error_of(const json& doc) {
  try {
    parse_scenario(doc, "t.json");
  } catch (const cs::InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("zero bubble: ZB-H1 and ZBV orders are PyTorch's", "[sim]") {
  // torch/distributed/pipelining/schedules.py @ 1fd7abc: ZB-H1 stage s runs 1F1B's p - s - 1 warm-up
  // forwards, then F B pairs, holding back the W of its first s steady-state Bs; p = 4, m = 8.
  CHECK(order_string(PipelineSchedule::zb_h1, 4, 8, 0, 1) ==
        "F0 F1 F2 F3 B0 W0 F4 B1 W1 F5 B2 W2 F6 B3 W3 F7 B4 W4 B5 W5 B6 W6 B7 W7");
  CHECK(order_string(PipelineSchedule::zb_h1, 4, 8, 3, 1) ==
        "F0 B0 F1 B1 F2 B2 F3 B3 W0 F4 B4 W1 F5 B5 W2 F6 B6 W3 F7 B7 W4 W5 W6 W7");
  // ZBV rank 0 (chunk 0 = virtual stage 0, chunk 1 = virtual stage 7): 2p - 1 = 7 forwards of chunk 0,
  // then p times F B W of chunk 1, then the steady F0 B0 W0 F1 B1 W1, then the cool-down.
  CHECK(order_string(PipelineSchedule::zbv, 4, 8, 0, 2) ==
        "F0.0 F0.1 F0.2 F0.3 F0.4 F0.5 F0.6 F1.0 B1.0 W1.0 F1.1 B1.1 W1.1 F1.2 B1.2 W1.2 F1.3 B1.3 W1.3 "
        "F0.7 B0.0 W0.0 F1.4 B1.4 W1.4 B0.1 W0.1 F1.5 B1.5 W1.5 B0.2 W0.2 F1.6 B1.6 W1.6 B0.3 W0.3 "
        "F1.7 B1.7 W1.7 B0.4 W0.4 B0.5 W0.5 B0.6 W0.6 B0.7 W0.7");
  // Every (chunk, micro-batch) runs F, then B, then W, once each, on every stage, for any m.
  for (const auto schedule : {PipelineSchedule::zb_h1, PipelineSchedule::zbv})
    for (int p = 1; p <= 5; ++p)
      for (int m = 1; m <= 3 * p + 1; ++m)
        for (int s = 0; s < p; ++s) {
          const int v = schedule == PipelineSchedule::zbv ? 2 : 1;
          std::map<std::pair<int, int>, int> state;
          for (const PipelineAction& a : pipeline_order(schedule, p, m, s, v)) {
            int& st = state[{a.chunk, a.micro_batch}];
            const int expect = a.forward ? 0 : a.part == BackwardPart::input ? 1 : 2;
            INFO("p " << p << " m " << m << " s " << s);
            CHECK(st == expect);
            st = expect + 1;
          }
          CHECK(state.size() == static_cast<std::size_t>(m * v));
        }
}

TEST_CASE("zero bubble: ZB-H1's bubble is a third of 1F1B's, worked by hand", "[sim]") {
  // p = 4, m = 8, F = B = W = 1 unit (a whole backward B + W = 2), free transfers.
  // 1F1B: step = (m + p - 1)(F + B + W) = 11 x 3 = 33; the ideal m (F + B + W) = 24, bubble 9 = (p - 1) 3.
  // ZB-H1: micro-batch 0's forward reaches stage s at time s F; the stage then runs its p - s - 1 warm-up
  // forwards and one more, to s + (p - s) F = p. Micro-batch 0's B starts on the last stage at p F and on
  // stage s at p F + (p - 1 - s) B, so stage s idles (p - 1 - s) B there. From then on the Ws it held back
  // fill every wait (the order's point: stage s defers s Ws, the time the B wave takes to return), so its
  // whole idle time is s F + (p - 1 - s) B: with F = B = W = 1, p - 1 = 3 units on every stage, and every
  // stage ends at 24 + 3 = 27 (the paper's bubble (p - 1)(F + B - W), a third of 1F1B's 9).
  const Time us = 1'000'000;
  const auto one = run_schedule(PipelineSchedule::one_f_one_b, 4, 8, us, us, us);
  const auto zb = run_schedule(PipelineSchedule::zb_h1, 4, 8, us, us, us);
  CHECK(makespan(one) == 33 * us);
  CHECK(makespan(zb) == 27 * us);
  CHECK(static_cast<double>(makespan(zb) - 24 * us) / static_cast<double>(makespan(one) - 24 * us) == Approx(1.0 / 3.0));
  // Unequal passes, F = 2, B = 2, W = 1: stage 0 idles (p - 1) B = 6 before micro-batch 0's B and then
  // once per cool-down B its single pending W cannot cover, B - W = 1, three times: 9 = (p - 1)(F + B - W),
  // on the ideal m (F + B + W) = 40: step 49. 1F1B: (m + p - 1)(F + B + W) = 11 x 5 = 55.
  CHECK(makespan(run_schedule(PipelineSchedule::zb_h1, 4, 8, 2 * us, 2 * us, us)) == 49 * us);
  CHECK(makespan(run_schedule(PipelineSchedule::one_f_one_b, 4, 8, 2 * us, 2 * us, us)) == 55 * us);
}

TEST_CASE("zero bubble: ZBV waits only for the first forward, worked by hand", "[sim]") {
  // p = 4, m = 8, two chunks per rank, each chunk F = B = W = 1 unit (a rank's whole stage is 2 + 2 + 2),
  // free transfers. Rank s's first action needs the first micro-batch's chunk-0 forward on ranks 0..s-1:
  // it starts at s. From then on its order never waits (checked by the makespans below: a rank that
  // waited again would end later), so rank s ends at s + m x 6 = s + 48 and the step is 48 + (p - 1) = 51.
  // Against 1F1B on the same work (F = 2, B + W = 4 per micro-batch): (m + p - 1) 6 = 66, bubble 18; ZB-H1
  // (F = B = W = 2): 48 + 3 x 2 = 54, bubble 6; ZBV: bubble 3.
  const Time us = 1'000'000;
  const auto zbv = run_schedule(PipelineSchedule::zbv, 4, 8, us, us, us);
  for (int s = 0; s < 4; ++s) CHECK(zbv[static_cast<std::size_t>(s)] == (48 + s) * us);
  CHECK(makespan(zbv) == 51 * us);
  CHECK(makespan(run_schedule(PipelineSchedule::one_f_one_b, 4, 8, 2 * us, 2 * us, 2 * us)) == 66 * us);
  CHECK(makespan(run_schedule(PipelineSchedule::zb_h1, 4, 8, 2 * us, 2 * us, 2 * us)) == 54 * us);
  // Fewer micro-batches than 2p - 1 (the actions of the padding micro-batches dropped) still complete.
  for (int m = 1; m <= 8; ++m) CHECK(makespan(run_schedule(PipelineSchedule::zbv, 4, m, us, us, us)) >= static_cast<Time>(6 * m) * us);
}

TEST_CASE("zero bubble: the step builder runs B and W apart and the bubble shrinks", "[sim]") {
  json doc = tiny_doc();
  const SimulationResult one = simulate(parse_scenario(doc, "t.json"));
  doc["training"]["pipeline_schedule"] = "zb-h1";
  const SimulationResult zb = simulate(parse_scenario(doc, "t.json"));
  doc["training"]["virtual_pipeline_model_parallel_size"] = 2;
  doc["training"]["pipeline_schedule"] = "zbv";
  const SimulationResult zbv = simulate(parse_scenario(doc, "t.json"));
  CHECK(zb.report.schedule == "zb-h1");
  CHECK(zbv.report.schedule == "zbv");
  // The same kernels, rearranged: compute time equal, bubble smaller.
  CHECK(zb.report.breakdown.compute_s == Approx(one.report.breakdown.compute_s).epsilon(1e-6));
  // The passes' times on stage 1 (micro-batch 0, in issue order: the forward up to the first gradient
  // kernel, then B; W is the wgrad GEMMs): here F 1.28 ms, B 1.67 ms (attention's backward is twice its
  // forward), W 0.77 ms. The paper's bubbles (p - 1)(F + B - W) and (p - 1)(F + B + W) give the ratio
  // 0.586; the simulation adds the transfers and the first and last stages' embedding and LM head, so it
  // is held to that within 0.05.
  const auto& og = zb.plan.graph;
  double F = 0, B = 0, W = 0;
  bool in_backward = false;
  for (TaskId id = 0; id < og.tasks().size(); ++id) {
    const Task& t = og.tasks()[id];
    if (t.rank != 1 || t.stream != StreamKind::compute || t.micro_batch != 0) continue;
    const std::string name(og.name(t.name));
    const double dur = static_cast<double>(zb.execution.records[id].end - zb.execution.records[id].start);
    in_backward = in_backward || name.find("grad") != std::string::npos || name.find("bwd") != std::string::npos;
    (name.ends_with("_wgrad") ? W : in_backward ? B : F) += dur;
  }
  REQUIRE(W > 0);
  CHECK(zb.report.breakdown.pipeline_bubble_s / one.report.breakdown.pipeline_bubble_s == Approx((F + B - W) / (F + B + W)).margin(0.05));
  CHECK(zbv.report.breakdown.pipeline_bubble_s < zb.report.breakdown.pipeline_bubble_s);
  CHECK(zb.report.step_time_s < one.report.step_time_s);
  CHECK(zbv.report.step_time_s < zb.report.step_time_s);
  // On stage 0 of ZB-H1 the first W (micro-batch 0's wgrads) runs after B of micro-batch 0 and before the
  // forward of micro-batch 4: every wgrad GEMM of micro-batch 0 ends before micro-batch 4's first kernel
  // starts, and after micro-batch 0's last dgrad.
  const auto& g = zb.plan.graph;
  Time last_wgrad0 = 0, first_mb4 = kNever, last_dgrad0 = 0, first_wgrad0 = kNever;
  for (TaskId id = 0; id < g.tasks().size(); ++id) {
    const Task& t = g.tasks()[id];
    if (t.rank != 0 || t.stream != StreamKind::compute) continue;
    const std::string name(g.name(t.name));
    const auto& rec = zb.execution.records[id];
    if (t.micro_batch == 0 && name.ends_with("_wgrad")) last_wgrad0 = std::max(last_wgrad0, rec.end), first_wgrad0 = std::min(first_wgrad0, rec.start);
    if (t.micro_batch == 0 && name.ends_with("_dgrad")) last_dgrad0 = std::max(last_dgrad0, rec.end);
    if (t.micro_batch == 4) first_mb4 = std::min(first_mb4, rec.start);
  }
  CHECK(first_wgrad0 >= last_dgrad0);
  CHECK(last_wgrad0 <= first_mb4);
}

TEST_CASE("zero bubble: deferred Ws keep their inputs and output gradients alive", "[models]") {
  // ZB-H1, p = 4, m = 8: stage 0 holds p = 4 micro-batches' activations at its peak and no pending W
  // (it runs each W right after its B), as 1F1B does; stage 3 holds back 3 Ws: at its peak (F3, before
  // B3) it holds micro-batch 3's activations and the W data of micro-batches 0-2, against 1F1B's one
  // micro-batch. Per layer the W data is weight_pass_bytes_per_layer: T = 2048 tokens, h = 1024, f = 4096,
  // 16 heads of 64, TP 1, bf16: X = 2 T (h + h + h + f) = 2 T 7168, dY = 2 T (3 h + h + 2 f + h) = 2 T 13312,
  // 2 T 20480 = 83,886,080 bytes; 4 layers a stage.
  const Scenario one = parse_scenario(tiny_doc(), "t.json");
  json doc = tiny_doc();
  doc["training"]["pipeline_schedule"] = "zb-h1";
  const Scenario zb = parse_scenario(doc, "t.json");
  CHECK(cs::models::weight_pass_bytes_per_layer(zb.model, zb.training, true) == 2.0 * 2048 * 20480);
  const auto a0 = cs::models::memory_per_gpu(one.model, one.training, 0), z0 = cs::models::memory_per_gpu(zb.model, zb.training, 0);
  CHECK(z0.activations_bytes == a0.activations_bytes);
  const auto a3 = cs::models::memory_per_gpu(one.model, one.training, 3), z3 = cs::models::memory_per_gpu(zb.model, zb.training, 3);
  CHECK(z3.activations_bytes - a3.activations_bytes == Approx(3.0 * 4 * 2.0 * 2048 * 20480));
}

TEST_CASE("zero bubble: the validator says what each schedule needs", "[sim]") {
  json doc = tiny_doc();
  doc["training"]["pipeline_schedule"] = "zbv";  // vp 1
  CHECK_THAT(error_of(doc), Catch::Contains("t.json") && Catch::Contains("training.pipeline_schedule") &&
                                Catch::Contains("virtual_pipeline_model_parallel_size 2"));
  doc["training"]["virtual_pipeline_model_parallel_size"] = 2;
  CHECK(error_of(doc).empty());
  doc["training"]["pipeline_schedule"] = "zb-h1";  // vp 2
  CHECK_THAT(error_of(doc), Catch::Contains("training.pipeline_schedule") && Catch::Contains("one model chunk per rank"));
  doc = tiny_doc();
  doc["training"]["pipeline_schedule"] = "zb-h1";
  doc["training"]["pipeline_p2p_blocking"] = true;
  CHECK_THAT(error_of(doc), Catch::Contains("training.pipeline_schedule") && Catch::Contains("pipeline_p2p_blocking"));
  doc = tiny_doc();
  doc["training"]["pipeline_schedule"] = "zb-h1";
  doc["cluster"]["gpus_per_node"] = 8;
  doc["training"]["zero_stage"] = 3;
  CHECK_THAT(error_of(doc), Catch::Contains("training.pipeline_schedule") && Catch::Contains("zero_stage"));
  doc = tiny_doc();
  doc["training"]["pipeline_schedule"] = "zb-h2";
  CHECK_THAT(error_of(doc), Catch::Contains("training.pipeline_schedule") && Catch::Contains("zb-h1"));
}

TEST_CASE("zero bubble: every combination of strategies completes under ZB-H1 and ZBV (property, fixed seed)", "[sim]") {
  // Random small layouts (p in 1..4, m = p or 2p or 3, TP / CP / DP in {1, 2}, ZeRO 0-2, recompute, overlap,
  // sequence parallelism, dense or MoE with EP in {1, 2}, symmetry on or off, sometimes LoRA), run under both
  // zero-bubble schedules. Each must finish (the executor throws on a deadlock, naming the blocked ranks), the
  // breakdown partition the step, the compute equal 1F1B's on the same layout (the same kernels, reordered:
  // under ZBV chunk 1's layers move to another rank but every rank still runs as many), and the same layout
  // simulated twice give the same report.
  std::mt19937 rng(20261206);
  auto pick = [&](std::initializer_list<int> xs) {
    std::vector<int> v(xs);
    return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
  };
  std::set<std::string> seen;
  for (int trial = 0; trial < 24; ++trial) {
    const bool zbv = trial % 2 == 1;
    const int p = zbv ? pick({2, 4}) : pick({1, 2, 3, 4}), tp = pick({1, 2}), cp = pick({1, 2}), dp = pick({1, 2});
    const int m = pick({p, 2 * p, 3});
    const bool moe = pick({0, 1}) == 1;
    const int ep = moe && dp == 2 ? pick({1, 2}) : 1;
    json doc = tiny_doc();
    doc["model"]["num_layers"] = 24;
    doc["model"]["hidden_size"] = 256;
    doc["model"]["num_attention_heads"] = 8;
    doc["model"]["ffn_hidden_size"] = 1024;
    doc["cluster"]["gpus_per_node"] = p * tp * cp * dp;
    if (moe) {
      doc["model"]["num_moe_experts"] = 4;
      doc["model"]["moe_router_topk"] = 2;
    }
    auto& t = doc["training"];
    t["seq_length"] = 512;
    t["pipeline_model_parallel_size"] = p;
    t["virtual_pipeline_model_parallel_size"] = zbv ? 2 : 1;
    t["tensor_model_parallel_size"] = tp;
    t["context_parallel_size"] = cp;
    t["expert_model_parallel_size"] = ep;
    t["sequence_parallel"] = tp > 1 && (moe || pick({0, 1}) == 1);
    t["global_batch_size"] = m * dp;
    t["zero_stage"] = pick({0, 1, 2});
    t["recompute_granularity"] = std::vector<std::string>{"none", "selective", "full"}[static_cast<std::size_t>(pick({0, 1, 2}))];
    t["overlap_grad_reduce"] = pick({0, 1}) == 1;
    if (pick({0, 0, 1}) == 1) t["finetune"] = {{"method", "lora"}, {"dim", 8}};
    doc["simulation"]["symmetry"] = pick({0, 1}) == 1;
    json base = doc;
    t["pipeline_schedule"] = zbv ? "zbv" : "zb-h1";
    INFO("case " << trial << ": " << doc.dump());
    const Scenario scenario = parse_scenario(doc, "t.json");
    const SimulationResult r = simulate(scenario);
    const Breakdown& b = r.report.breakdown;
    CHECK(b.compute_s + b.exposed_comm_s + b.pipeline_bubble_s + b.other_s == Approx(r.report.step_time_s).epsilon(1e-9));
    CHECK(b.pipeline_bubble_s >= 0);
    CHECK(r.report.mfu <= 1.0);
    if (zbv) base["training"]["pipeline_schedule"] = "interleaved";
    if (!zbv || m % p == 0) {
      const SimulationResult ref = simulate(parse_scenario(base, "t.json"));
      CHECK(b.compute_s == Approx(ref.report.breakdown.compute_s).epsilon(1e-6));
    }
    CHECK(to_json(simulate(scenario).report).dump() == to_json(r.report).dump());
    seen.insert(r.report.schedule);
  }
  CHECK(seen == std::set<std::string>{"zb-h1", "zbv"});
}
