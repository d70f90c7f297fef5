// Symmetry by orbits of equal ranks (sim/step/orbits.hpp): on a heterogeneous cluster the step builder
// simulates one rank per class of ranks that a permutation of equal TP / CP / DP indices maps onto one
// another, and the report equals the reference run (`simulation.symmetry: false`, every rank) byte for
// byte with the analytical network.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/report/report.hpp"
#include "sim/report/trace.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"
#include "sim/step/orbits.hpp"

using namespace cs::sim;
using nlohmann::json;

namespace {

// TP8 DP4 PP2 on 64 H100 (8 nodes of 8, a fat-tree of NDR400): rank r = tp + 8 (dp + 4 pp), node r / 8,
// so a node is one TP group and stage 0 is nodes 0-3. Four small layers, 8 micro-batches.
json tp8_dp4_pp2() {
  return json::parse(R"json({"name": "orbits",
    "cluster": {"gpu": "H100-SXM", "nodes": 8, "gpus_per_node": 8,
                "inter_node": {"fabric": "fat-tree", "link": "ib-ndr400", "nics_per_node": 8}},
    "model": {"num_layers": 4, "hidden_size": 1024, "num_attention_heads": 16, "ffn_hidden_size": 4096,
              "vocab_size": 32000},
    "training": {"seq_length": 1024, "global_batch_size": 32, "micro_batch_size": 1,
                 "tensor_model_parallel_size": 8, "pipeline_model_parallel_size": 2,
                 "sequence_parallel": true, "zero_stage": 1},
    "simulation": {"comm_compute_contention": 0.2}})json");
}

json with_stragglers(json doc, const std::vector<std::pair<int, double>>& slow) {
  json list = json::array();
  for (const auto& [gpu, f] : slow) list.push_back({{"gpu", gpu}, {"slowdown", f}});
  doc["cluster"]["stragglers"] = list;
  return doc;
}

SimulationResult sim(const json& doc) { return simulate(parse_scenario(doc, "orbits.json")); }

// The report without the "simulator" block (simulated ranks, tasks, events: the work saved).
json body(const Report& r) {
  json j = to_json(r);
  j.erase("simulator");
  return j;
}

// Batched (orbits) and reference runs of `doc`: equal reports, text and JSON; returns the batched run's
// simulated ranks.
int check_against_reference(const json& doc) {
  const SimulationResult batched = sim(doc);
  json ref_doc = doc;
  ref_doc["simulation"]["symmetry"] = false;
  const SimulationResult ref = sim(ref_doc);
  const Scenario s = parse_scenario(doc, "orbits.json");
  REQUIRE(ref.report.simulated_ranks == s.training.tp * s.training.cp * s.training.dp * s.training.pp);
  CHECK(body(batched.report).dump(2) == body(ref.report).dump(2));
  CHECK(to_text(batched.report).substr(0, to_text(batched.report).find("simulator")) ==
        to_text(ref.report).substr(0, to_text(ref.report).find("simulator")));
  int stood_for = 0;
  for (int m : batched.plan.mirrors) stood_for += m;
  CHECK(stood_for == ref.report.simulated_ranks);  // every real rank in exactly one class
  return batched.report.simulated_ranks;
}

}  // namespace

TEST_CASE("orbits: class counts of one straggler at TP8 DP4 PP2, by hand", "[sim][orbits]") {
  // GPU 11 = tp 3 + 8 (dp 1 + 4 pp 0). TP axis: index 3 differs from the others at (dp 1, pp 0), and
  // indices 0-2, 4-7 agree everywhere: two types, {0,1,2,4,5,6,7} (rep 0, 7 indices) and {3} (rep 3).
  // DP axis likewise: {0, 2, 3} (rep 0, 3 indices) and {1} (rep 1). CP has one index. PP is never
  // permuted, so every stage gets the product: 2 x 2 = 4 classes per stage, 8 simulated ranks, of sizes
  // 7 x 3 = 21, 1 x 3 = 3, 7 x 1 = 7, 1 x 1 = 1 (= 32 ranks a stage), in global rank order
  // (pp, dp type, tp type): ranks 0, 3, 8, 11 and 32, 35, 40, 43.
  const json doc = with_stragglers(tp8_dp4_pp2(), {{11, 1.3}});
  const Orbits o = find_orbits(parse_scenario(doc, "orbits.json"));
  REQUIRE(o.batched);
  CHECK(o.rep[0] == std::vector<int>{0, 3});
  CHECK(o.count[0] == std::vector<int>{7, 1});
  CHECK(o.rep[2] == std::vector<int>{0, 1});
  CHECK(o.count[2] == std::vector<int>{3, 1});
  CHECK(o.classes_per_stage() == 4);
  const SimulationResult r = sim(doc);
  CHECK(r.plan.global_rank == std::vector<int>{0, 3, 8, 11, 32, 35, 40, 43});
  CHECK(r.plan.mirrors == std::vector<int>{21, 3, 7, 1, 21, 3, 7, 1});
  // The classes' GPUs, representative first: rank 3's class is tp 3 of replicas 0, 2, 3 (GPUs 3, 19, 27);
  // rank 11 stands for itself.
  REQUIRE(r.plan.class_gpus.size() == 8);
  CHECK(r.plan.class_gpus[1] == std::vector<int>{3, 19, 27});
  CHECK(r.plan.class_gpus[3] == std::vector<int>{11});
  CHECK(r.plan.class_gpus[0].size() == 21);
  // The trace lists them on each representative's compute row.
  const std::filesystem::path trace = std::filesystem::temp_directory_path() / "clustersim-orbits-trace.json";
  write_trace(parse_scenario(doc, "orbits.json"), {r.plan.graph, r.plan.global_rank, r.execution, r.report.step_time_s, &r.plan.class_gpus},
              trace.string());
  std::ifstream in(trace);
  const json t = json::parse(in);
  std::filesystem::remove(trace);
  int listed = 0;
  for (const json& ev : t["traceEvents"])
    if (ev["ph"] == "M" && ev["name"] == "thread_name" && ev["args"].contains("stands_for")) {
      ++listed;
      if (ev["args"]["name"] == "GPU 3 compute") CHECK(ev["args"]["stands_for"] == json({3, 19, 27}));
    }
  CHECK(listed == 8);
  // Two stragglers with the same TP index in different replicas and stages (GPU 3 = tp 3, dp 0, pp 0;
  // GPU 58 = tp 2, dp 3, pp 1): TP types {2}, {3}, the rest (3 types); DP types {0}, {3}, {1, 2}
  // (rep 1): 9 classes per stage.
  const Orbits two = find_orbits(parse_scenario(with_stragglers(tp8_dp4_pp2(), {{3, 1.2}, {58, 1.2}}), "orbits.json"));
  CHECK(two.rep[0] == std::vector<int>{0, 2, 3});
  CHECK(two.rep[2] == std::vector<int>{0, 1, 3});
  CHECK(two.count[2] == std::vector<int>{1, 2, 1});
  CHECK(two.classes_per_stage() == 9);
  // A homogeneous cluster: one class per stage, as the one-rank-per-stage mirroring always had.
  const Orbits same = find_orbits(parse_scenario(tp8_dp4_pp2(), "orbits.json"));
  CHECK(same.batched);
  CHECK(same.classes_per_stage() == 1);
  // symmetry false: the reference, every rank.
  json off = doc;
  off["simulation"]["symmetry"] = false;
  CHECK_FALSE(find_orbits(parse_scenario(off, "orbits.json")).batched);
}

TEST_CASE("orbits: one straggler, batched equals every rank simulated (analytical)", "[sim][orbits]") {
  const json doc = with_stragglers(tp8_dp4_pp2(), {{11, 1.3}});
  CHECK(check_against_reference(doc) == 8);
  // The straggler is felt: its stage waits for it (a homogeneous run is faster).
  CHECK(sim(doc).report.step_time_s > sim(tp8_dp4_pp2()).report.step_time_s * 1.01);  // +1.75%
}

TEST_CASE("orbits: two stragglers in different replicas and stages equal the reference", "[sim][orbits]") {
  CHECK(check_against_reference(with_stragglers(tp8_dp4_pp2(), {{3, 1.2}, {58, 1.15}})) == 18);
}

TEST_CASE("orbits: node groups of two GPU types equal the reference", "[sim][orbits]") {
  // Nodes 0-1 and 4-5 H100, 2-3 and 6-7 H200: per stage, DP indices {0, 1} and {2, 3} (nodes dp + 4 pp):
  // 2 DP types, 1 TP type: 2 classes a stage, 4 simulated ranks.
  json doc = tp8_dp4_pp2();
  doc["cluster"]["node_groups"] = json::array({{{"gpu", "H100-SXM"}, {"nodes", 2}}, {{"gpu", "H200"}, {"nodes", 2}},
                                               {{"gpu", "H100-SXM"}, {"nodes", 2}}, {{"gpu", "H200"}, {"nodes", 2}}});
  CHECK(check_against_reference(doc) == 4);
  // Whole stages of one type (nodes 0-3 H100 = stage 0, 4-7 H200 = stage 1): one class a stage.
  doc["cluster"]["node_groups"] = json::array({{{"gpu", "H100-SXM"}, {"nodes", 4}}, {{"gpu", "H200"}, {"nodes", 4}}});
  CHECK(check_against_reference(doc) == 2);
}

TEST_CASE("orbits: TP, CP, DP and PP together with stragglers equal the reference", "[sim][orbits]") {
  // TP2 CP2 DP4 PP2 on 32 GPUs (4 nodes of 8): rank = tp + 2 (cp + 2 (dp + 4 pp)). GPU 5 = tp 1, cp 0,
  // dp 1, pp 0; GPU 30 = tp 0, cp 1, dp 3, pp 1. TP types {0}, {1}; CP types {0}, {1}; DP types {0, 2},
  // {1}, {3}: 2 x 2 x 3 = 12 classes a stage, 24 simulated ranks. Interleaved, ring attention, ZeRO-1.
  json doc = tp8_dp4_pp2();
  doc["cluster"]["nodes"] = 4;
  doc["training"]["tensor_model_parallel_size"] = 2;
  doc["training"]["context_parallel_size"] = 2;
  doc["training"]["seq_length"] = 2048;
  doc["training"]["virtual_pipeline_model_parallel_size"] = 2;
  doc = with_stragglers(doc, {{5, 1.25}, {30, 1.1}});
  const Orbits o = find_orbits(parse_scenario(doc, "orbits.json"));
  CHECK(o.types(0) == 2);
  CHECK(o.types(1) == 2);
  CHECK(o.rep[2] == std::vector<int>{0, 1, 3});
  CHECK(check_against_reference(doc) == 24);
}

TEST_CASE("orbits: speed variation makes every rank its own class, still equal to the reference", "[sim][orbits]") {
  // Every GPU draws its own factor: no two indices of an axis agree at every other coordinate, so each
  // axis has as many types as indices and there are as many classes as ranks (each standing for itself).
  json doc = tp8_dp4_pp2();
  doc["cluster"]["nodes"] = 4;
  doc["training"]["tensor_model_parallel_size"] = 4;
  doc["training"]["pipeline_model_parallel_size"] = 2;  // TP4 DP4 PP2 = 32 ranks
  doc["cluster"]["speed_variation"] = {{"cv", 0.03}, {"seed", 7}};
  const Orbits o = find_orbits(parse_scenario(doc, "orbits.json"));
  CHECK(o.classes_per_stage() == 16);
  CHECK(check_against_reference(doc) == 32);
}

TEST_CASE("orbits: MoE expert groups that cut across the DP classes fall back to every rank", "[sim][orbits]") {
  // TP2 DP4 EP2, flat index j = tp + 2 dp read as etp-ep-edp: ep = dp % 2, edp = dp / 2, so an EP group
  // is DP indices {0, 1} or {2, 3}. A straggler at dp 1 makes DP types {0, 2, 3} and {1}; swapping dp 0 and
  // 2 maps EP group {0, 1} to {2, 1}, no EP group: the product structure does not hold, every rank is
  // simulated. Without the straggler the mirroring of one rank per stage stays.
  json doc = tp8_dp4_pp2();
  doc["cluster"]["nodes"] = 1;
  doc["model"]["num_moe_experts"] = 4;
  doc["model"]["moe_router_topk"] = 2;
  doc["training"]["tensor_model_parallel_size"] = 2;
  doc["training"]["pipeline_model_parallel_size"] = 1;
  doc["training"]["expert_model_parallel_size"] = 2;
  doc["training"]["global_batch_size"] = 8;
  const Orbits same = find_orbits(parse_scenario(doc, "orbits.json"));
  CHECK(same.batched);
  CHECK(same.classes_per_stage() == 1);
  doc = with_stragglers(doc, {{2, 1.2}});  // GPU 2 = tp 0, dp 1
  const Orbits o = find_orbits(parse_scenario(doc, "orbits.json"));
  CHECK_FALSE(o.batched);
  CHECK(o.fallback == "the expert groups (etp-ep-edp folding) do not respect the classes of equal DP indices");
  CHECK(sim(doc).report.simulated_ranks == 8);
}

TEST_CASE("orbits: flow network, batched against every rank", "[sim][orbits]") {
  // The flow back-end times the same flows either way: every class's representative puts its members'
  // inter-node flows on the fabric. What differs (docs/symmetry.md): a batched run leaves the peers'
  // intra-node flows off the scale-up links, so the per-link statistics differ, and the least-loaded
  // path choice may see flows in another start order. Here the step and the breakdown agree.
  const json doc = with_stragglers(tp8_dp4_pp2(), {{11, 1.3}});
  json flow = doc;
  flow["simulation"]["network"] = "flow";
  const SimulationResult batched = sim(flow);
  flow["simulation"]["symmetry"] = false;
  const SimulationResult ref = sim(flow);
  CHECK(batched.report.simulated_ranks == 8);
  json a = body(batched.report), b = body(ref.report);
  a["utilization"].erase("links");
  b["utilization"].erase("links");
  CHECK(a.dump(2) == b.dump(2));
}
