// Every rank executed from the per-stage template (sim/engine/template_executor.hpp): with
// `simulation.symmetry: false` simulate() runs each real rank off its stage's task list, and everything it
// reports equals the run of the materialised graph of every rank (simulate_materialised) byte for byte,
// the simulator block included (the same tasks and events), with both networks.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/compute/compute_model.hpp"
#include "sim/engine/template_executor.hpp"
#include "sim/engine/time.hpp"
#include "sim/report/report.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"
#include "sim/step/step_budget.hpp"
#include "sim/step/step_builder.hpp"

using namespace cs::sim;
using nlohmann::json;

namespace {

// TP8 DP4 PP2 on 64 H100 (8 nodes of 8, NDR400 fat-tree): rank r = tp + 8 (dp + 4 pp); four small layers.
json base() {
  return json::parse(R"json({"name": "template",
    "cluster": {"gpu": "H100-SXM", "nodes": 8, "gpus_per_node": 8,
                "inter_node": {"fabric": "fat-tree", "link": "ib-ndr400", "nics_per_node": 8}},
    "model": {"num_layers": 4, "hidden_size": 1024, "num_attention_heads": 16, "ffn_hidden_size": 4096,
              "vocab_size": 32000},
    "training": {"seq_length": 1024, "global_batch_size": 32, "micro_batch_size": 1,
                 "tensor_model_parallel_size": 8, "pipeline_model_parallel_size": 2,
                 "sequence_parallel": true, "zero_stage": 1},
    "simulation": {"comm_compute_contention": 0.2, "symmetry": false}})json");
}

json with_network(json doc, const char* network) {
  doc["simulation"]["network"] = network;
  return doc;
}

// The busiest rank's sum of squared kernel seconds, from a materialised plan (sim/goodput/goodput.cpp).
double kernel_square_sum(const StepPlan& plan) {
  std::vector<double> per_rank(static_cast<std::size_t>(plan.graph.num_ranks()), 0.0);
  for (const Task& t : plan.graph.tasks())
    if (t.stream == StreamKind::compute) per_rank[t.rank] += to_seconds(t.duration) * to_seconds(t.duration);
  return *std::max_element(per_rank.begin(), per_rank.end());
}

// Template run against the materialised reference: equal reports (JSON and text, simulator block
// included), equal busiest kernel square sums, and each stage representative's records equal to that
// rank's records in the reference, task by task.
void check_template(const json& doc) {
  const Scenario s = parse_scenario(doc, "template.json");
  const int world = s.training.tp * s.training.cp * s.training.dp * s.training.pp;
  const SimulationResult fast = simulate(s);
  const SimulationResult ref = simulate_materialised(s);
  REQUIRE(fast.plan.graph.num_ranks() == s.training.pp);  // the template: a rank per stage
  REQUIRE(ref.plan.graph.num_ranks() == world);
  CHECK(fast.report.simulated_ranks == world);
  CHECK(to_json(fast.report).dump(2) == to_json(ref.report).dump(2));
  CHECK(to_text(fast.report) == to_text(ref.report));
  CHECK(fast.busiest_kernel_square_sum == kernel_square_sum(ref.plan));
  for (int k = 0; k < fast.plan.graph.num_ranks(); ++k) {
    const int rep = fast.plan.global_rank[static_cast<std::size_t>(k)];
    for (int st = 0; st < kStreamsPerRank; ++st) {
      const auto& mine = fast.plan.graph.stream_tasks(k, static_cast<StreamKind>(st));
      const auto& theirs = ref.plan.graph.stream_tasks(rep, static_cast<StreamKind>(st));
      REQUIRE(mine.size() == theirs.size());
      for (std::size_t i = 0; i < mine.size(); ++i) {
        const TaskRecord& a = fast.execution.records[mine[i]];
        const TaskRecord& b = ref.execution.records[theirs[i]];
        CHECK((a.arrive == b.arrive && a.start == b.start && a.end == b.end));
        CHECK(fast.plan.graph.tasks()[mine[i]].duration == ref.plan.graph.tasks()[theirs[i]].duration);
      }
    }
  }
}

}  // namespace

TEST_CASE("template: homogeneous TP8 DP4 PP2 equals the materialised run, both networks", "[sim][template]") {
  check_template(with_network(base(), "analytical"));
  check_template(with_network(base(), "flow"));
}

TEST_CASE("template: stragglers equal the materialised run, both networks", "[sim][template]") {
  json doc = base();
  doc["cluster"]["stragglers"] = json::array({{{"gpu", 11}, {"slowdown", 1.3}}, {{"gpu", 50}, {"slowdown", 1.15}}, {{"node", 5}, {"slowdown", 1.05}}});
  check_template(with_network(doc, "analytical"));
  check_template(with_network(doc, "flow"));
}

TEST_CASE("template: speed variation (every rank distinct) equals the materialised run, both networks", "[sim][template]") {
  json doc = base();
  doc["cluster"]["speed_variation"] = {{"cv", 0.03}, {"seed", 7}};
  check_template(with_network(doc, "analytical"));
  check_template(with_network(doc, "flow"));
}

TEST_CASE("template: node groups of two GPU types equal the materialised run", "[sim][template]") {
  // Stage 0 on nodes 0-3: H100 on nodes 0-1, H200 on nodes 2-3, so a stage's ranks run two GPU types.
  json doc = base();
  doc["cluster"]["node_groups"] = json::array({{{"gpu", "H100-SXM"}, {"nodes", 2}}, {{"gpu", "H200"}, {"nodes", 6}}});
  check_template(with_network(doc, "analytical"));
  check_template(with_network(doc, "flow"));
}

TEST_CASE("template: TP, CP, DP and PP interleaved with ZeRO-3 equal the materialised run", "[sim][template]") {
  // TP2 CP2 DP4 PP2 (32 GPUs), ring attention, interleaved 1F1B with two virtual stages, FSDP-style ZeRO-3
  // with prefetch, a straggler.
  json doc = base();
  doc["cluster"]["nodes"] = 4;
  doc["training"]["tensor_model_parallel_size"] = 2;
  doc["training"]["context_parallel_size"] = 2;
  doc["training"]["virtual_pipeline_model_parallel_size"] = 2;
  doc["training"]["zero_stage"] = 3;
  doc["training"]["global_batch_size"] = 16;
  doc["cluster"]["stragglers"] = json::array({{{"gpu", 9}, {"slowdown", 1.2}}});
  check_template(with_network(doc, "analytical"));
  check_template(with_network(doc, "flow"));
}

TEST_CASE("template: ZeRO-1 gathering in the forward, ZeRO-2 and DDP equal the materialised run", "[sim][template]") {
  for (const int zero : {0, 1, 2}) {
    json doc = base();
    doc["training"]["zero_stage"] = zero;
    doc["training"]["tensor_model_parallel_size"] = 4;  // DP8 across nodes
    doc["training"]["overlap_param_gather"] = true;
    doc["cluster"]["stragglers"] = json::array({{{"gpu", 3}, {"slowdown", 1.1}}});
    check_template(with_network(doc, zero == 1 ? "flow" : "analytical"));
  }
}

TEST_CASE("template: MoE expert groups equal the materialised run", "[sim][template]") {
  // TP2 DP4 EP2 on one node: the expert groups fold the DP index (orbits fall back to every rank with a
  // straggler); the template covers it, since each expert group's mirrors still partition the stage.
  json doc = base();
  doc["cluster"]["nodes"] = 2;
  doc["model"]["num_moe_experts"] = 4;
  doc["model"]["moe_router_topk"] = 2;
  doc["training"]["tensor_model_parallel_size"] = 2;
  doc["training"]["expert_model_parallel_size"] = 2;
  doc["training"]["global_batch_size"] = 8;
  doc["cluster"]["stragglers"] = json::array({{{"gpu", 2}, {"slowdown", 1.2}}});
  check_template(with_network(doc, "analytical"));
  check_template(with_network(doc, "flow"));
}

TEST_CASE("template: random small scenarios equal the materialised run", "[sim][template]") {
  // 40 draws over TP 1-8, CP 1-2, PP 1-4, ZeRO 0-3, interleaving, stragglers by GPU and by node, speed
  // variation, two node groups, both networks, on 32-128 GPUs.
  std::mt19937 rng(20261201);
  auto pick = [&](std::vector<int> v) { return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)]; };
  for (int draw = 0; draw < 40; ++draw) {
    json doc = base();
    const int nodes = pick({4, 8, 16});
    const int tp = pick({1, 2, 4, 8}), cp = pick({1, 1, 2}), pp = pick({1, 2, 4});
    const int gpus = nodes * 8;
    if (gpus % (tp * cp * pp) != 0) continue;
    const int dp = gpus / (tp * cp * pp);
    doc["cluster"]["nodes"] = nodes;
    doc["model"]["num_layers"] = 8;  // divisible by pp x vp
    doc["training"]["tensor_model_parallel_size"] = tp;
    doc["training"]["context_parallel_size"] = cp;
    doc["training"]["pipeline_model_parallel_size"] = pp;
    doc["training"]["sequence_parallel"] = tp > 1;
    doc["training"]["zero_stage"] = pick({0, 1, 2, 3});
    doc["training"]["global_batch_size"] = dp * pick({4, 8});  // a multiple of pp micro-batches (interleaving)
    if (pp > 1 && pick({0, 1}) == 1) doc["training"]["virtual_pipeline_model_parallel_size"] = 2;
    switch (pick({0, 1, 2, 3})) {
      case 1: doc["cluster"]["stragglers"] = json::array({{{"gpu", pick({0, 5, 17, 30})}, {"slowdown", 1.25}}}); break;
      case 2: doc["cluster"]["speed_variation"] = {{"cv", 0.02}, {"seed", draw}}; break;
      case 3: doc["cluster"]["node_groups"] = json::array({{{"gpu", "H100-SXM"}, {"nodes", nodes / 2}}, {{"gpu", "H200"}, {"nodes", nodes / 2}}}); break;
      default: break;
    }
    doc = with_network(doc, pick({0, 1}) == 1 ? "flow" : "analytical");
    INFO(doc.dump());
    check_template(doc);
  }
}

TEST_CASE("template: the step budget counts a template run, not the graph of every rank", "[sim][template]") {
  // Llama-3 405B on 16,384 H100 one by one: 10^8 tasks, 9 GiB materialised, a few hundred MiB from the
  // template; the default 4 GiB limit no longer refuses it, and the materialised reference still is.
  const std::string f = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/llama3-405b-h100x16384.json";
  const Scenario s = load_scenario(f, {"simulation.symmetry=false"});
  const StepEstimate fast = estimate_step(s), full = estimate_step(s, true);
  CHECK(fast.tasks == full.tasks);
  CHECK(fast.memory_bytes < 1.0 * (1ull << 30));
  CHECK(full.memory_bytes > 8.0 * (1ull << 30));
  CHECK_NOTHROW(check_budget(s));
  CHECK_THROWS(check_budget(s, true));
}

TEST_CASE("template: the in-flight table answers for every instance in flight, through its growth and ends in any order", "[sim][template]") {
  // TemplateInstances keeps the collectives in flight in an open-addressing table (linear probing, at most
  // half full, 1,024 slots to start, doubled by re-inserting; an end pulls later entries of its probe run
  // back into the hole). Driven directly: 1,400 instances begun (the table grows 1,024 -> 2,048 -> 4,096), each answering with the template collective and meeting it was begun with, then ended in a
  // random order, every one still in flight found after each end and every ended one answering from the
  // static table again. One stage (PP 1), so every rank meets in every template collective.
  json doc = base();
  doc["training"]["pipeline_model_parallel_size"] = 1;
  doc["training"]["tensor_model_parallel_size"] = 2;
  const Scenario s = parse_scenario(doc, "template.json");
  StepTemplatePlan t = build_step_template(s, cs::models::default_compute_profile());
  REQUIRE(t.fallback.empty());
  t.spec.graph = &t.plan.graph;
  const TemplateInstances table(t.spec);
  const auto ncoll = static_cast<std::uint32_t>(t.plan.graph.collectives().size());
  const auto nranks = t.spec.num_ranks();
  const std::uint32_t n = 1400;
  REQUIRE(table.num_collectives() >= n);
  REQUIRE(ncoll > 0);
  struct Begun {
    std::uint32_t collective;
    TemplateInstances::Meeting where;
  };
  std::vector<Begun> begun;
  for (std::uint32_t k = 0; k < n; ++k) {
    const std::uint32_t c = (k * 7) % ncoll, r = (k * 13) % nranks;
    begun.push_back({c, table.meeting(c, r)});
    table.begin(k, c, begun.back().where);
  }
  auto answers = [&](std::uint32_t k) {
    const auto of = table.of(k);
    const auto run = table.running(k);
    const auto want = table.ranks(begun[k].where);
    return of.collective == begun[k].collective && of.group == begun[k].where.group && run.collective == begun[k].collective &&
           std::equal(run.members.begin(), run.members.end(), want.begin(), want.end());
  };
  for (std::uint32_t k = 0; k < n; ++k) REQUIRE(answers(k));
  // The static answer of an instance not in flight (every id beyond those begun).
  std::vector<std::uint32_t> order(n);
  for (std::uint32_t k = 0; k < n; ++k) order[k] = k;
  std::mt19937 rng(20261207);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<char> live(n, 1);
  for (std::size_t i = 0; i < order.size(); ++i) {
    table.end(order[i]);
    live[order[i]] = 0;
    if (i % 97 == 0 || i + 1 == order.size())  // every in-flight one still found (a sample of the ends)
      for (std::uint32_t k = 0; k < n; ++k)
        if (live[k]) REQUIRE(answers(k));
  }
  // Ended: the instance's own template collective and group again (of_), as for one never begun.
  const TemplateInstances fresh(t.spec);
  for (std::uint32_t k = 0; k < n; ++k) {
    CHECK(table.of(k).collective == fresh.of(k).collective);
    CHECK(table.of(k).group == fresh.of(k).group);
  }
}

TEST_CASE("template: every rank of the 405B layout on 131,072 GPUs gives the mirrored report", "[sim][template][slow]") {
  // Issue 33: where the ranks are identical, simulating each of them (simulation.symmetry false, from the
  // per-stage template) and simulating one per class (the default) must agree to the last digit. Llama-3
  // 405B grown by data parallelism to 131,072 H100 on a 3-tier fat tree (bench/scenarios), analytical
  // network: 8 x 10^8 tasks, so the budget's task limit is raised (the default refuses it); about 100 s and
  // 1.4 GB on one core. Everything but the simulator's own counts (ranks, tasks, events) must be equal.
  const std::string f = std::string(CLUSTERSIM_SOURCE_DIR) + "/bench/scenarios/llama3-405b-h100x131k-3tier.json";
  const Scenario mirrored = load_scenario(f, {"simulation.network=analytical"});
  const Scenario every = load_scenario(f, {"simulation.network=analytical", "simulation.symmetry=false", "simulation.max_tasks=1e9"});
  json a = to_json(simulate(mirrored).report), b = to_json(simulate(every).report);
  CHECK(a.at("simulator").at("simulated_ranks") == 16);
  CHECK(b.at("simulator").at("simulated_ranks") == 131072);
  a.erase("simulator");
  b.erase("simulator");
  CHECK(a == b);
}
