// Whole steps through the library front door: effects that must come out of the simulation.
#include <catch2/catch.hpp>

#include <thread>

#include <nlohmann/json.hpp>

#include "sim/scenario/scenario.hpp"
#include "models/compute/compute_model.hpp"
#include "models/workload/transformer.hpp"
#include "sim/base/input_error.hpp"
#include "sim/simulation.hpp"

using namespace cs::sim;
using nlohmann::json;

namespace {

json base_doc() {
  return json::parse(R"({
    "name": "test",
    "cluster": {"gpu": "H100-SXM", "nodes": 1, "gpus_per_node": 4, "intra_node": "nvswitch"},
    "model": {"num_layers": 32, "hidden_size": 4096, "num_attention_heads": 32, "vocab_size": 128,
              "ffn_hidden_size": 16384, "activation": "gelu"},
    "training": {"seq_length": 2048, "global_batch_size": 8, "micro_batch_size": 1,
                 "pipeline_model_parallel_size": 4},
    "simulation": {"comm_compute_contention": 0}
  })");
}

Report run(const json& doc) { return simulate(parse_scenario(doc, "test.json")).report; }

// Data parallel over 4 nodes of 8, one micro-batch per step, no TP or PP, no contention: all
// communication is the DP gradient reduction.
json dp_only_doc() {
  json doc = base_doc();
  doc["cluster"] = json::parse(R"({"gpu": "H100-SXM", "nodes": 4, "gpus_per_node": 8, "intra_node": "nvswitch",
      "inter_node": {"fabric": "fat-tree", "link": "roce-100g", "nics_per_node": 2}})");
  doc["model"]["vocab_size"] = 32000;
  doc["training"] = json::parse(R"({"seq_length": 2048, "global_batch_size": 32, "micro_batch_size": 1})");
  return doc;
}

}  // namespace

TEST_CASE("simulation: 1F1B bubble of a real model is (p-1)/(m+p-1)", "[sim]") {
  // 32 identical layers over p = 4 stages, m = 8 micro-batches, a 128-token vocabulary so that the
  // embedding and LM head on the end stages are negligible, activations moved over NVLink (16 MB per
  // micro-batch: ~50 us against ~10 ms of compute per stage and micro-batch). Stage times are then equal to
  // well under 1%, and the bubble must be (p-1)/(m+p-1) = 3/11 of the pipelined part of the step, which
  // is everything but the optimizer step that follows the pipeline flush.
  const Report r = run(base_doc());
  REQUIRE(r.num_micro_batches == 8);
  const double optimizer = r.busy_s[static_cast<std::size_t>(Category::optimizer)];
  REQUIRE(optimizer > 0);
  const double pipelined = r.step_time_s - optimizer;
  REQUIRE(r.breakdown.pipeline_bubble_s / pipelined == Approx(3.0 / 11.0).epsilon(0.01));
  // And the pipelined part is (m + p - 1) stage-times: forward+backward per rank covers m of them.
  REQUIRE(pipelined == Approx((r.breakdown.compute_s - optimizer) * 11.0 / 8.0).epsilon(0.01));
}

TEST_CASE("simulation: more micro-batches shrink the bubble as (p-1)/(m+p-1)", "[sim]") {
  json doc = base_doc();
  doc["training"]["global_batch_size"] = 32;  // m = 32
  const Report r = run(doc);
  const double pipelined = r.step_time_s - r.busy_s[static_cast<std::size_t>(Category::optimizer)];
  REQUIRE(r.breakdown.pipeline_bubble_s / pipelined == Approx(3.0 / 35.0).epsilon(0.02));
}

TEST_CASE("simulation: DP gradient reduction overlaps backward, turning overlap off adds the hidden part", "[sim]") {
  // Data parallel over 4 nodes, one micro-batch per step, no TP or PP, no contention: all communication
  // is the DP gradient reduction. With overlap the buckets reduce while backward continues; without, the
  // same buckets reduce after backward. So step_off - step_on = total_comm - exposed_on exactly.
  json doc = dp_only_doc();
  const Report on = run(doc);
  doc["training"]["overlap_grad_reduce"] = false;
  const Report off = run(doc);
  const double total = on.busy_s[static_cast<std::size_t>(Category::dp_comm)];
  REQUIRE(total > 0);
  REQUIRE(on.breakdown.exposed_comm_s < total);
  REQUIRE(on.breakdown.exposed_comm_s > 0);  // the last bucket cannot hide
  REQUIRE(off.busy_s[static_cast<std::size_t>(Category::dp_comm)] == Approx(total).epsilon(1e-12));
  REQUIRE(off.breakdown.exposed_comm_s == Approx(total).epsilon(1e-9));
  REQUIRE(off.step_time_s - on.step_time_s == Approx(total - on.breakdown.exposed_comm_s).epsilon(1e-6));
}

TEST_CASE("simulation: exposed communication by kind is DP alone when DP is the only communication", "[sim]") {
  // The data-parallel scenario above: no TP, CP, EP or PP, so every exposed second is a DP collective's
  // and exposed_comm_s_by_kind holds all of exposed_comm_s under dp_comm and 0 elsewhere, with overlap
  // (the last bucket) and without (all of the reduction: exposed = DP busy time).
  json doc = dp_only_doc();
  for (const bool overlap : {true, false}) {
    doc["training"]["overlap_grad_reduce"] = overlap;
    const Report r = run(doc);
    INFO("overlap_grad_reduce " << overlap);
    REQUIRE(r.breakdown.exposed_comm_s > 0);
    for (int k = 0; k < kNumCategories; ++k) {
      const auto c = static_cast<Category>(k);
      INFO(to_string(c));
      if (c == Category::dp_comm) CHECK(r.exposed_comm_s_by_kind[static_cast<std::size_t>(k)] == Approx(r.breakdown.exposed_comm_s).epsilon(1e-12));
      else CHECK(r.exposed_comm_s_by_kind[static_cast<std::size_t>(k)] == 0);
    }
    if (!overlap)
      CHECK(r.exposed_comm_s_by_kind[static_cast<std::size_t>(Category::dp_comm)] ==
            Approx(r.busy_s[static_cast<std::size_t>(Category::dp_comm)]).epsilon(1e-9));
    // The report prints it: one line of text, one JSON object keyed by kind.
    CHECK_THAT(to_text(r), Catch::Contains("comm exposed  dp_comm "));
    const json j = to_json(r).at("exposed_comm_s_by_kind");
    CHECK(j.size() == 5);
    CHECK(j.at("dp_comm").get<double>() == r.exposed_comm_s_by_kind[static_cast<std::size_t>(Category::dp_comm)]);
    CHECK(j.at("tp_comm").get<double>() == 0);
  }
}

TEST_CASE("simulation: exposed communication by kind splits TP and PP and adds up to the exposed total", "[sim]") {
  // TP 2 x PP 2 on one node: TP collectives block the compute stream (always exposed), PP sends and
  // receives are exposed where a stage waits on its neighbour. Both kinds show, nothing else does, and
  // the kinds add up to exposed_comm_s.
  json doc = base_doc();
  doc["training"]["tensor_model_parallel_size"] = 2;
  doc["training"]["pipeline_model_parallel_size"] = 2;
  const Report r = run(doc);
  const auto at = [&](Category c) { return r.exposed_comm_s_by_kind[static_cast<std::size_t>(c)]; };
  CHECK(at(Category::tp_comm) > 0);
  CHECK(at(Category::pp_comm) > 0);
  CHECK(at(Category::cp_comm) == 0);
  CHECK(at(Category::ep_comm) == 0);
  CHECK(at(Category::dp_comm) == 0);  // DP 1
  double sum = 0;
  for (double v : r.exposed_comm_s_by_kind) sum += v;
  CHECK(sum == Approx(r.breakdown.exposed_comm_s).epsilon(1e-12));
  CHECK(at(Category::tp_comm) <= r.busy_s[static_cast<std::size_t>(Category::tp_comm)] * (1 + 1e-12));
}

TEST_CASE("simulation: symmetric and full simulation agree", "[sim]") {
  // Mirroring one rank per stage must give the same step as simulating every rank (here 2 TP x 2 DP x 2 PP
  // = 8 ranks) when nothing distinguishes the mirrored ranks.
  json doc = base_doc();
  doc["cluster"]["gpus_per_node"] = 8;
  doc["training"]["tensor_model_parallel_size"] = 2;
  doc["training"]["pipeline_model_parallel_size"] = 2;
  doc["training"]["global_batch_size"] = 16;
  const Report sym = run(doc);
  doc["simulation"]["symmetry"] = false;
  const Report full = run(doc);
  REQUIRE(sym.simulated_ranks == 2);
  REQUIRE(full.simulated_ranks == 8);
  REQUIRE(full.step_time_s == Approx(sym.step_time_s).epsilon(1e-12));
  REQUIRE(full.breakdown.exposed_comm_s == Approx(sym.breakdown.exposed_comm_s).epsilon(1e-9));
}

TEST_CASE("simulation: mirrored and unmirrored reports are byte-identical for identical ranks", "[sim]") {
  // Nothing distinguishes the TP / DP peers of a stage here (no stragglers, one job), so simulating one
  // rank per stage and mirroring it, or simulating all 2 TP x 2 DP x 2 PP = 8 ranks, must print the same
  // report, text and JSON, byte for byte. Only the "simulator" block differs: it says how much work the
  // simulator did (simulated ranks, tasks, events), which is the point of mirroring. Interleaved PP with
  // TP + SP and tp_comm_overlap, ZeRO-1, compute slowed by concurrent NCCL kernels, on one node and with
  // DP across four, so that every kind of task (TP overlap chunks, PP send/recv, DP buckets, the
  // optimizer) and every report average is there.
  json doc = base_doc();
  doc["model"]["num_layers"] = 8;
  doc["training"]["tensor_model_parallel_size"] = 2;
  doc["training"]["sequence_parallel"] = true;
  doc["training"]["tp_comm_overlap"] = true;
  doc["training"]["pipeline_model_parallel_size"] = 2;
  doc["training"]["virtual_pipeline_model_parallel_size"] = 2;
  doc["training"]["zero_stage"] = 1;
  doc["training"]["global_batch_size"] = 8;
  doc["simulation"]["comm_compute_contention"] = 0.2;
  struct Case {
    const char* what;
    const char* network;
    int nodes, gpus_per_node;
  };
  for (const Case& c : {Case{"analytical, one node", "analytical", 1, 8}, Case{"analytical, DP across nodes", "analytical", 4, 2},
                        Case{"flow, DP across nodes", "flow", 4, 2}}) {
    INFO(c.what);
    json d = doc;
    d["simulation"]["network"] = c.network;
    d["cluster"]["nodes"] = c.nodes;
    d["cluster"]["gpus_per_node"] = c.gpus_per_node;
    if (c.nodes > 1) d["cluster"]["inter_node"] = {{"fabric", "fat-tree"}, {"link", "ib-ndr400"}, {"nics_per_node", 2}};
    const Report mirrored = run(d);
    d["simulation"]["symmetry"] = false;
    const Report every = run(d);
    REQUIRE(mirrored.simulated_ranks == 2);
    REQUIRE(every.simulated_ranks == 8);
    json a = to_json(mirrored), b = to_json(every);
    a.erase("simulator");
    b.erase("simulator");
    if (std::string(c.network) == "flow") {
      // The flow network times the same flows either way (the fabric carries every mirrored group's
      // flows), but a mirrored run leaves the intra-node flows of the ranks it does not simulate off the
      // scale-up links (flow_network.hpp), so its per-link statistics sum other links in another order:
      // equal up to the last digits here, and not in general (a node shared by groups of several kinds).
      REQUIRE(a["utilization"]["links"].size() == b["utilization"]["links"].size());
      for (std::size_t i = 0; i < a["utilization"]["links"].size(); ++i) {
        CHECK(b["utilization"]["links"][i]["bytes_per_gpu"].get<double>() ==
              Approx(a["utilization"]["links"][i]["bytes_per_gpu"].get<double>()).epsilon(1e-12));
        CHECK(b["utilization"]["links"][i]["name"] == a["utilization"]["links"][i]["name"]);
      }
      a["utilization"].erase("links");
      b["utilization"].erase("links");
    }
    CHECK(b.dump(2) == a.dump(2));
    CHECK(to_text(every) == to_text(mirrored));
  }
}

TEST_CASE("simulation: the same scenario gives byte-identical reports, also on two threads at once", "[sim]") {
  const Scenario s = parse_scenario(base_doc(), "test.json");
  const std::string once = to_json(simulate(s).report).dump();
  std::string a, b;
  std::thread t1([&] { a = to_json(simulate(s).report).dump(); });
  std::thread t2([&] { b = to_json(simulate(s).report).dump(); });
  t1.join();
  t2.join();
  REQUIRE(a == once);
  REQUIRE(b == once);
}

TEST_CASE("simulation: self-checks hold on a realistic step", "[sim]") {
  json doc = base_doc();
  doc["model"] = json::parse(R"({"preset": "llama3-8b"})");
  doc["training"]["pipeline_model_parallel_size"] = 2;
  doc["training"]["tensor_model_parallel_size"] = 2;
  doc["training"]["global_batch_size"] = 16;
  const Report r = run(doc);
  REQUIRE(r.mfu > 0.2);
  REQUIRE(r.mfu < 1.0);
  REQUIRE(r.hfu >= r.mfu * 0.9);
  const double sum = r.breakdown.compute_s + r.breakdown.exposed_comm_s + r.breakdown.pipeline_bubble_s + r.breakdown.other_s;
  REQUIRE(sum == Approx(r.step_time_s).epsilon(1e-9));
}

namespace {

// One GPU, no communication: every kernel of the step runs back to back on its compute stream, so a
// kernel added to every layer lengthens the step by exactly its time (models::op_time_s) per layer.
json one_gpu_moe_doc() {
  return json::parse(R"({
    "name": "moe-one-gpu",
    "cluster": {"gpu": "H100-SXM", "nodes": 1, "gpus_per_node": 1, "intra_node": "nvswitch"},
    "model": {"num_layers": 4, "hidden_size": 1024, "num_attention_heads": 16, "num_query_groups": 4,
              "kv_channels": 64, "vocab_size": 32000, "ffn_hidden_size": 1024, "activation": "swiglu",
              "num_moe_experts": 8, "moe_router_topk": 2, "position_embedding_type": "rope"},
    "training": {"seq_length": 2048, "global_batch_size": 1, "micro_batch_size": 1},
    "simulation": {"comm_compute_contention": 0}
  })");
}

double added_time(const json& doc, const std::string& prefix_fwd, const std::string& prefix_bwd) {
  const Scenario s = parse_scenario(doc, "test.json");
  const cs::models::LayerOps ops = cs::models::transformer_layer_ops(s.model, s.training);
  double t = 0;
  for (const auto* list : {&ops.forward, &ops.backward})
    for (const auto& op : *list)
      if (op.name.rfind(prefix_fwd, 0) == 0 || op.name.rfind(prefix_bwd, 0) == 0)
        t += cs::models::op_time_s(op, s.gpu, cs::models::default_compute_profile());
  return t;
}

std::string only_parse_error(const json& doc) {
  try {
    parse_scenario(doc, "s.json");
  } catch (const cs::InputError& e) {
    REQUIRE(e.messages().size() == 1);
    return e.messages()[0];
  }
  FAIL("no error");
  return {};
}

}  // namespace

TEST_CASE("simulation: the experts' FC2 bias (add_bias_linear) adds its kernels to every layer's step", "[sim]") {
  json doc = one_gpu_moe_doc();
  const Report plain = run(doc);
  doc["model"]["add_bias_linear"] = true;
  const Scenario s = parse_scenario(doc, "test.json");
  CHECK(s.model.add_bias_linear);
  const Report biased = run(doc);
  // 4 layers x (forward b * p, add, cat; backward the 4 per-expert gradient kernels and the cat): the
  // ops' own times (their bytes by hand in test_transformer.cpp). The bias parameters (per layer
  // 320 + 1024 + 8 x (1 + 2048 + 1024)) also lengthen the optimizer step by their fused-Adam traffic,
  // under 1e-4 of the difference.
  const double layer = added_time(doc, "fc2_bias", "fc2_bias");
  CHECK(layer > 0);
  CHECK(biased.step_time_s - plain.step_time_s == Approx(4 * layer).epsilon(1e-3));
}

TEST_CASE("simulation: Megatron-Core's unfused RoPE (apply_rope_fusion false) replaces the fused kernel in every layer", "[sim]") {
  json doc = one_gpu_moe_doc();
  const Report fused = run(doc);
  const double fused_layer = added_time(doc, "rope", "rope_bwd");
  doc["model"]["apply_rope_fusion"] = false;
  CHECK_FALSE(parse_scenario(doc, "test.json").model.rope_fusion);
  const Report unfused = run(doc);
  const double unfused_layer = added_time(doc, "rope", "rope_bwd");
  CHECK(unfused_layer > fused_layer);
  CHECK(unfused.step_time_s - fused.step_time_s == Approx(4 * (unfused_layer - fused_layer)).epsilon(1e-6));
}

TEST_CASE("scenario: add_bias_linear and apply_rope_fusion take booleans", "[sim]") {
  json doc = one_gpu_moe_doc();
  doc["model"]["add_bias_linear"] = 1;
  CHECK(only_parse_error(doc) == "s.json: model.add_bias_linear: expected true or false, got an integer 1");
  doc = one_gpu_moe_doc();
  doc["model"]["apply_rope_fusion"] = "no";
  CHECK(only_parse_error(doc) == "s.json: model.apply_rope_fusion: expected true or false, got a string \"no\"");
}
