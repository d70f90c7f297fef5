// DualPipeV (models/parallelism/pipeline_schedule.hpp; deepseek-ai/DualPipe dualpipe/dualpipev.py @
// 3da1bbea53606543d7f5f232338fc58096db30e3): its order, its bubble worked by hand on a direct graph, its
// activations in flight, the step builder's overlapped pairs hiding the all-to-alls, and the validator's
// refusals.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "fixed_network.hpp"
#include "models/parallelism/pipeline_schedule.hpp"
#include "sim/base/input_error.hpp"
#include "sim/engine/executor.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"

using namespace cs::sim;
using cs::sim::testing::FixedNetwork;
using nlohmann::json;

namespace {

// "F0.3&b1.1 ..." of rank s: F forward, B a split backward's input-gradient pass, W its weight-gradient
// pass, b a whole backward; the chunk, a dot, the micro-batch; '&' joins a forward to the backward it
// runs overlapped with.
std::string order_string(int p, int m, int s) {
  std::string out;
  bool joined = false;
  for (const PipelineAction& a : pipeline_order(PipelineSchedule::dualpipev, p, m, s, 2)) {
    if (!out.empty() && !joined) out += ' ';
    out += a.forward ? 'F' : a.part == BackwardPart::input ? 'B' : a.part == BackwardPart::weight ? 'W' : 'b';
    out += std::to_string(a.chunk) + "." + std::to_string(a.micro_batch);
    joined = a.paired_with_next;
    if (joined) out += '&';
  }
  return out;
}

// Every rank's order on a direct graph, one compute task per action (forward f, B b, W w, a whole backward
// b + w) and one per overlapped pair (f + b + w: on a graph without communication nothing overlaps, so
// F&B = F + B); free transfers. Virtual stage of rank s's chunk c: s or 2p - 1 - s. A forward needs the
// previous virtual stage's forward, a B (or whole backward) the next virtual stage's, the last virtual
// stage's its own forward, a W its own B; a pair needs what both of its passes need. Returns each rank's end.
std::vector<Time> run_dualpipev(int p, int m, Time f, Time b, Time w) {
  auto vstage = [&](int s, int c) { return c == 0 ? s : 2 * p - 1 - s; };
  TaskGraph g(p);
  std::map<std::tuple<int, int, int>, TaskId> task;  // (kind 0 F / 1 B / 2 W, virtual stage, mb)
  for (int s = 0; s < p; ++s) {
    const auto order = pipeline_order(PipelineSchedule::dualpipev, p, m, s, 2);
    for (std::size_t k = 0; k < order.size(); ++k) {
      const PipelineAction& a = order[k];
      Task t;
      t.rank = static_cast<std::uint32_t>(s);
      t.micro_batch = a.micro_batch;
      const int kind = a.forward ? 0 : a.part == BackwardPart::weight ? 2 : 1;
      t.duration = kind == 0 ? f : kind == 2 ? w : a.part == BackwardPart::whole ? b + w : b;
      if (a.paired_with_next) t.duration = f + b + w;
      const TaskId id = g.add_task(t);
      REQUIRE(task.emplace(std::make_tuple(kind, vstage(s, a.chunk), a.micro_batch), id).second);
      if (a.paired_with_next) {
        const PipelineAction& bw = order[++k];
        REQUIRE(task.emplace(std::make_tuple(1, vstage(s, bw.chunk), bw.micro_batch), id).second);
      }
    }
  }
  const int last = 2 * p - 1;
  for (const auto& [key, id] : task) {
    const auto [kind, k, j] = key;
    auto need = [&](std::tuple<int, int, int> dep) {
      if (task.at(dep) != id) g.add_dependency(task.at(dep), id);
    };
    if (kind == 0 && k > 0) need({0, k - 1, j});
    if (kind == 1) need(k == last ? std::make_tuple(0, k, j) : std::make_tuple(1, k + 1, j));
    if (kind == 2) need({1, k, j});
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

// One MoE layer per chunk (4 experts, top-2), PP 2 x VP 2 (4 layers), EP 2 over DP 2 on 4 GPUs, m = 4.
json moe_doc() {
  return json::parse(R"({
    "name": "dualpipe",
    "cluster": {"gpu": "H100-SXM", "nodes": 1, "gpus_per_node": 4, "intra_node": "nvswitch"},
    "model": {"num_layers": 4, "hidden_size": 1024, "num_attention_heads": 16, "num_query_groups": 4,
              "vocab_size": 32000, "ffn_hidden_size": 4096, "activation": "swiglu",
              "num_moe_experts": 4, "moe_router_topk": 2},
    "training": {"seq_length": 2048, "global_batch_size": 8, "micro_batch_size": 1,
                 "pipeline_model_parallel_size": 2, "virtual_pipeline_model_parallel_size": 2,
                 "expert_model_parallel_size": 2, "pipeline_schedule": "dualpipev"},
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

TEST_CASE("dualpipe: DualPipeV's order is DualPipeV.step's eight steps", "[sim]") {
  // p = 2 ranks (4 virtual stages), m = 4 = 2p, dualpipev.py @ 3da1bbe. Rank 0: step 1 2(p - s - 1) = 2 F0;
  // step 2 s + 1 = 1 (F0, F1); step 3 1 (B1 split, W, F1); step 4 m - 2p + s + 1 = 1 (F0 & B1, F1 & B0);
  // step 5 1 (B1, F1 & B0); step 6 1 (B1, B0), rank 0 even: the split starts after the first B1 of
  // i = (s + 1) / 2 = 0, so B0 is split; step 7 1 (W, B0 split); step 8 1 W. Rank 1 (the last): no step 1;
  // step 2 twice (F0, F1); step 4 twice, its first F0 and B1 not overlapped; step 6 twice, rank 1 odd: split
  // from before B1 of i = 1; step 8 two Ws, the queue's order.
  CHECK(order_string(2, 4, 0) == "F0.0 F0.1 F0.2 F1.0 B1.0 W1.0 F1.1 F0.3&b1.1 F1.2&b0.0 b1.2 F1.3&b0.1 b1.3 B0.2 W0.2 B0.3 W0.3");
  CHECK(order_string(2, 4, 1) == "F0.0 F1.0 F0.1 F1.1 F0.2 b1.0 F1.2&b0.0 F0.3&b1.1 F1.3&b0.1 b1.2 b0.2 B1.3 B0.3 W1.3 W0.3");
  // Every rank runs every forward, B and W once, for every p and m >= 2p.
  for (int p = 1; p <= 6; ++p)
    for (int m = 2 * p; m <= 2 * p + 5; ++m)
      for (int s = 0; s < p; ++s) {
        std::map<std::tuple<int, int, int>, int> seen;  // (0 forward / 1 B or whole / 2 split B / 3 W, chunk, mb)
        for (const PipelineAction& a : pipeline_order(PipelineSchedule::dualpipev, p, m, s, 2)) {
          const int kind = a.forward ? 0 : a.part == BackwardPart::weight ? 3 : 1;
          ++seen[{kind, a.chunk, a.micro_batch}];
          if (a.part == BackwardPart::input) ++seen[{2, a.chunk, a.micro_batch}];
        }
        for (int c = 0; c < 2; ++c)
          for (int j = 0; j < m; ++j) {
            CHECK(seen[{0, c, j}] == 1);
            CHECK(seen[{1, c, j}] == 1);
            CHECK(seen[{3, c, j}] == seen[{2, c, j}]);  // a W for each split backward, none for a whole one
          }
      }
}

TEST_CASE("dualpipe: DualPipeV's bubble is the DualPipe table's, worked by hand", "[sim]") {
  // p = 2 ranks (PP = 4 stages), m = 4, F = B = W = 1 unit (a whole backward 2, an overlapped pair F&B = 3
  // without communication to hide). The ideal per rank is m x 2 chunks x (F + B + W) = 24. Traced by hand
  // on the orders of the test above (time: rank 0's actions | rank 1's):
  //   0-3  F0.0 F0.1 F0.2          | 1-6 F0.0 F1.0 F0.1 F1.1 F0.2 (F0.j waits for rank 0's F0.j)
  //   3-7  F1.0 B1.0 W1.0, then F1.1 waits for rank 1's F1.1 (5) and runs 6-7
  //   7-10 F0.3&b1.1               | 6-8 b1.0 (after rank 0's B1.0 at 5), 8-11 F1.2&b0.0
  //   11-14 F1.2&b0.0, 14-16 b1.2  | 11-14 F0.3&b1.1 (after rank 0's pair at 10), 14-17 F1.3&b0.1
  //   17-20 F1.3&b0.1, 20-22 b1.3  | 17-19 b1.2, 19-21 b0.2, 22-23 B1.3 (after rank 0's b1.3), 23-24 B0.3
  //   22-23 B0.2, 23-24 W0.2, 24-25 B0.3 (after rank 1's), 25-26 W0.3 | 24-26 W1.3 W0.3
  // Both ranks end at 26: a bubble of 2 = (PP/2 - 1)(F&B + B - 3W) = 1 x (3 + 2 - 3), the DualPipe
  // repository's table (README.md @ 3da1bbe).
  const Time us = 1'000'000;
  const auto two = run_dualpipev(2, 4, us, us, us);
  CHECK(two[0] == 26 * us);
  CHECK(two[1] == 26 * us);
  // p = 4 (PP = 8), m = 8 and 16: the same formula, (4 - 1)(3 + 2 - 3) = 6 over the ideal 6 m.
  CHECK(makespan(run_dualpipev(4, 8, us, us, us)) == (48 + 6) * us);
  CHECK(makespan(run_dualpipev(4, 16, us, us, us)) == (96 + 6) * us);
}

TEST_CASE("dualpipe: DualPipeV holds PP + 1 chunks of activations", "[models]") {
  // p = 2, m = 4 (orders above). Rank 0 after F0.3: chunk 0 holds micro-batches 0-3 (no B0 yet), chunk 1
  // micro-batch 1 (B1.0 ran): 5 = PP + 1 with PP = 4 stages, the table's "activation per device"; the
  // pending W of B1.0 ran right after it. Rank 1 reaches 5 first after F0.2: chunk 0 0-2, chunk 1 0-1.
  const InFlight r0 = split_in_flight(PipelineSchedule::dualpipev, 2, 4, 0, 2, 0.5);
  CHECK(r0.full == std::vector<int>{4, 1});
  CHECK(r0.weight == std::vector<int>{0, 0});
  const InFlight r1 = split_in_flight(PipelineSchedule::dualpipev, 2, 4, 1, 2, 0.5);
  CHECK(r1.full == std::vector<int>{3, 2});
}

TEST_CASE("dualpipe: DualPipeV's pairs hide the all-to-alls that ZBV leaves exposed", "[sim]") {
  // The same V (two chunks a rank, one MoE layer each, EP 2), the same kernels: ZBV runs every pass alone,
  // so each of its 8 all-to-alls per micro-batch and chunk pair blocks; DualPipeV runs its steady state as
  // forward/backward pairs, layer by layer, with each pass's all-to-alls beside the other's compute
  // (step_builder.cpp run_pair). Compute the same, exposed expert-parallel communication less; at m = 8
  // micro-batches the step is shorter too (at the minimum m = 2p = 4 DualPipeV's longer warm-up and
  // cool-down outweigh what its 4 pairs hide: 20.75 against 20.62 ms here).
  json doc = moe_doc();
  doc["training"]["global_batch_size"] = 16;
  const SimulationResult dual = simulate(parse_scenario(doc, "t.json"));
  doc["training"]["pipeline_schedule"] = "zbv";
  const SimulationResult zbv = simulate(parse_scenario(doc, "t.json"));
  CHECK(dual.report.schedule == "dualpipev");
  const auto ep = static_cast<std::size_t>(Category::ep_comm);
  CHECK(dual.report.breakdown.compute_s == Approx(zbv.report.breakdown.compute_s).epsilon(1e-9));
  CHECK(dual.report.exposed_comm_s_by_kind[ep] < zbv.report.exposed_comm_s_by_kind[ep]);
  CHECK(dual.report.step_time_s < zbv.report.step_time_s);
  // Every rank simulated on its own gives the same step as the symmetric run.
  doc["training"]["pipeline_schedule"] = "dualpipev";
  doc["simulation"]["symmetry"] = false;
  CHECK(simulate(parse_scenario(doc, "t.json")).report.step_time_s == Approx(dual.report.step_time_s).epsilon(1e-9));
}

TEST_CASE("dualpipe: the validator says what DualPipeV needs", "[sim]") {
  CHECK(error_of(moe_doc()).empty());
  json doc = moe_doc();
  doc["training"]["virtual_pipeline_model_parallel_size"] = 1;
  CHECK_THAT(error_of(doc), Catch::Contains("t.json") && Catch::Contains("training.pipeline_schedule") &&
                                Catch::Contains("virtual_pipeline_model_parallel_size 2"));
  doc = moe_doc();
  doc["training"]["global_batch_size"] = 6;  // m = 3 < 2p = 4
  CHECK_THAT(error_of(doc), Catch::Contains("t.json") && Catch::Contains("training.global_batch_size") &&
                                Catch::Contains("at least 2 x pipeline_model_parallel_size = 4 micro-batches per step (got 3)"));
  doc = moe_doc();
  doc["training"]["zero_stage"] = 2;
  CHECK_THAT(error_of(doc), Catch::Contains("t.json") && Catch::Contains("training.zero_stage") && Catch::Contains("\"dualpipev\""));
  doc = moe_doc();
  doc["training"]["recompute_granularity"] = "full";
  CHECK_THAT(error_of(doc), Catch::Contains("t.json") && Catch::Contains("training.recompute_granularity"));
  doc = moe_doc();
  doc["training"]["pipeline_p2p_blocking"] = true;
  CHECK_THAT(error_of(doc), Catch::Contains("training.pipeline_schedule") && Catch::Contains("pipeline_p2p_blocking"));
}
