// Parallelism strategies in the step's task graph: the communication each one adds per step against the
// hand-computed figure, where it sits in the step, and what it does to time and memory.
//
// Volume is counted as nccl-tests' bus bytes, busbw_factor(kind, n) x size: what each rank moves through
// its links (ring all-reduce 2(n-1)/n S, all-gather / reduce-scatter / all-to-all (n-1)/n S, send/recv S).
// With pp = 1 and symmetry one rank is simulated, so the graph's collectives are one rank's.
//
// Memory formulas are held by tests/models/test_memory_model.cpp (16 B per parameter for DDP; 7B with
// ZeRO-1/2/3 over 64 GPUs; GPT-3 175B activations per layer with and without SP and selective recompute;
// micro-batches in flight under 1F1B / GPipe / interleaved); here only what the strategies add.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "models/memory/memory_model.hpp"
#include "models/workload/transformer.hpp"
#include "models/parallelism/layout.hpp"
#include "sim/network/nccl_model.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"
#include "sim/step/step_units.hpp"

using namespace cs::sim;
using cs::models::CollectiveKind;
using nlohmann::json;

namespace {

json doc_for(int gpus, int layers = 4) {
  json doc = json::parse(R"({
    "name": "strategies",
    "cluster": {"gpu": "H100-SXM", "nodes": 1, "gpus_per_node": 8, "intra_node": "nvswitch"},
    "model": {"num_layers": 4, "hidden_size": 1024, "num_attention_heads": 16, "num_query_groups": 4,
              "vocab_size": 32000, "ffn_hidden_size": 4096, "activation": "swiglu"},
    "training": {"seq_length": 2048, "global_batch_size": 8, "micro_batch_size": 1},
    "simulation": {"comm_compute_contention": 0}
  })");
  doc["cluster"]["gpus_per_node"] = gpus;
  doc["model"]["num_layers"] = layers;
  return doc;
}

struct Volume {
  double bus_bytes = 0;  // sum of busbw_factor x size
  double size = 0;       // sum of nccl-tests sizes
  int count = 0;
  std::set<std::size_t> group_sizes;
};

// Collectives of category `cat` whose member task names pass `keep`.
template <class Keep>
Volume volume(const StepPlan& plan, Category cat, Keep keep) {
  const TaskGraph& g = plan.graph;
  Volume v;
  for (const Collective& c : g.collectives()) {
    const Task& t = g.tasks()[c.members.front()];
    // The 4-byte all-reduce of clip_grad's norm is not a strategy's traffic (held by its own test below).
    if (t.category != cat || !keep(g.name(t.name)) || g.name(t.name) == "grad-norm-all-reduce") continue;
    const auto n = g.group(c.group).size();
    v.bus_bytes += busbw_factor(c.kind, static_cast<int>(n)) * c.bytes;
    v.size += c.bytes;
    ++v.count;
    v.group_sizes.insert(n);
  }
  return v;
}
Volume volume(const StepPlan& plan, Category cat) {
  return volume(plan, cat, [](const std::string&) { return true; });
}

Scenario scenario(const json& doc) { return parse_scenario(doc, "strategies.json"); }
StepPlan plan_of(const json& doc) { return build_step(scenario(doc), cs::models::default_compute_profile()); }

bool is_backward(const std::string& name) { return name.find("_bwd") != std::string::npos; }

}  // namespace

TEST_CASE("strategies: DDP and ZeRO-1/2/3 gradient and parameter traffic per step", "[sim]") {
  // One stage, DP n = 8, m = 1 micro-batch unless stated. Psi = the rank's parameters, 2 bytes each.
  //   DDP:    all-reduce of the gradients            2 (n-1)/n 2Psi
  //   ZeRO-1: reduce-scatter + all-gather of params  (n-1)/n 2Psi + (n-1)/n 2Psi  = DDP
  //   ZeRO-2: as ZeRO-1 for m = 1; it reduce-scatters every micro-batch, so m = 2 adds one more RS
  //   ZeRO-3: per unit all-gather (forward) + all-gather (backward) + reduce-scatter
  //                                                   3 (n-1)/n 2Psi = 1.5 x DDP (ZeRO paper, sec. 7)
  json doc = doc_for(8);
  const Scenario s = scenario(doc);
  const double psi = cs::models::parameters_on_rank(s.model, s.training, 0).total();
  const double n = 8, unit = (n - 1) / n * 2 * psi;

  const Volume ddp = volume(plan_of(doc), Category::dp_comm);
  CHECK(ddp.bus_bytes == Approx(2 * unit).epsilon(1e-12));
  CHECK(ddp.size == Approx(2 * psi).epsilon(1e-12));  // every gradient exactly once
  CHECK(ddp.group_sizes == std::set<std::size_t>{8});

  doc["training"]["zero_stage"] = 1;
  const Volume z1 = volume(plan_of(doc), Category::dp_comm);
  CHECK(z1.bus_bytes == Approx(2 * unit).epsilon(1e-12));

  doc["training"]["zero_stage"] = 2;
  CHECK(volume(plan_of(doc), Category::dp_comm).bus_bytes == Approx(2 * unit).epsilon(1e-12));

  doc["training"]["zero_stage"] = 3;
  const Volume z3 = volume(plan_of(doc), Category::dp_comm);
  CHECK(z3.bus_bytes == Approx(3 * unit).epsilon(1e-12));
  CHECK(z3.bus_bytes / ddp.bus_bytes == Approx(1.5).epsilon(1e-12));
  // One gather per unit and pass (embedding, 4 layers, LM head) and one reduce-scatter per unit.
  CHECK(z3.count == 3 * 6);

  SECTION("gradient accumulation: m = 2") {
    doc["training"]["global_batch_size"] = 16;
    doc["training"]["zero_stage"] = 1;  // reduces once per step: unchanged
    CHECK(volume(plan_of(doc), Category::dp_comm).bus_bytes == Approx(2 * unit).epsilon(1e-12));
    doc["training"]["zero_stage"] = 2;  // RS per micro-batch + one AG: 3 units
    CHECK(volume(plan_of(doc), Category::dp_comm).bus_bytes == Approx(3 * unit).epsilon(1e-12));
    doc["training"]["zero_stage"] = 3;  // everything per micro-batch: 6 units
    CHECK(volume(plan_of(doc), Category::dp_comm).bus_bytes == Approx(6 * unit).epsilon(1e-12));
  }
  SECTION("FSDP names map onto the stages") {
    doc["training"].erase("zero_stage");
    doc["training"]["fsdp_sharding_strategy"] = "FULL_SHARD";
    CHECK(volume(plan_of(doc), Category::dp_comm).bus_bytes == Approx(3 * unit).epsilon(1e-12));
    doc["training"]["fsdp_sharding_strategy"] = "SHARD_GRAD_OP";
    CHECK(volume(plan_of(doc), Category::dp_comm).bus_bytes == Approx(2 * unit).epsilon(1e-12));
    doc["training"]["fsdp_sharding_strategy"] = "NO_SHARD";
    CHECK(volume(plan_of(doc), Category::dp_comm).bus_bytes == Approx(2 * unit).epsilon(1e-12));
  }
}

TEST_CASE("strategies: FSDP HYBRID_SHARD shards in the node and all-reduces across nodes", "[sim]") {
  // 2 nodes x 4 GPUs, DP 8: shard blocks of S = 4 (one node), R = 2 replicas. Per step (m = 1):
  //   2 all-gathers + 1 reduce-scatter over 4 ranks:  3 x 3/4 x 2Psi
  //   all-reduce of each 1/4 shard over 2 ranks:      2 x 1/2 x 2Psi / 4 = 1/4 x 2Psi
  // and states shard 4 ways: 16 Psi / 4 per GPU.
  json doc = doc_for(4);
  doc["cluster"]["nodes"] = 2;
  doc["cluster"]["inter_node"] = {{"fabric", "fat-tree"}, {"link", "ib-ndr400"}};
  doc["training"]["fsdp_sharding_strategy"] = "HYBRID_SHARD";
  const Scenario s = scenario(doc);
  REQUIRE(s.training.fsdp_shard_size == 4);
  const double psi = cs::models::parameters_on_rank(s.model, s.training, 0).total();
  const StepPlan plan = plan_of(doc);
  const Volume shard = volume(plan, Category::dp_comm, [](const std::string& x) { return x != "grad-all-reduce-replicas"; });
  const Volume replicas = volume(plan, Category::dp_comm, [](const std::string& x) { return x == "grad-all-reduce-replicas"; });
  CHECK(shard.group_sizes == std::set<std::size_t>{4});
  CHECK(replicas.group_sizes == std::set<std::size_t>{2});
  CHECK(shard.bus_bytes == Approx(3 * 0.75 * 2 * psi).epsilon(1e-12));
  CHECK(replicas.bus_bytes == Approx(0.25 * 2 * psi).epsilon(1e-12));
  const auto mem = cs::models::memory_per_gpu(s.model, s.training, 0);
  CHECK(mem.weights_bytes + mem.grads_bytes + mem.optimizer_bytes == Approx(16 * psi / 4).epsilon(1e-12));
  // The replicas' groups span the two nodes; the shard groups one node each.
  const TaskGraph& g = plan.graph;
  for (const Collective& c : g.collectives()) {
    const auto& gpus = g.group(c.group);
    if (gpus.size() == 2) CHECK(gpus[0] / 4 != gpus[1] / 4);
    if (gpus.size() == 4) CHECK(gpus.front() / 4 == gpus.back() / 4);
  }
  const Report r = simulate(s).report;
  CHECK(r.step_time_s > 0);
}

TEST_CASE("strategies: ZeRO-3 prefetch hides the parameter gathers behind compute", "[sim]") {
  // With overlap_param_gather the gather of unit l + 1 runs while unit l computes; without, each waits
  // its turn. The prefetching step must be faster, and no slower than the step with nothing to gather
  // plus the exposed first gather of each pass.
  json doc = doc_for(8, 8);
  doc["training"]["zero_stage"] = 3;
  const Report with = simulate(scenario(doc)).report;
  doc["training"]["overlap_param_gather"] = false;
  const Report without = simulate(scenario(doc)).report;
  CHECK(with.step_time_s < without.step_time_s);
  CHECK(with.breakdown.exposed_comm_s < without.breakdown.exposed_comm_s);
}

TEST_CASE("strategies: TP with sequence parallelism moves the same forward bytes as without", "[sim]") {
  // TP n = 4, one stage, m = 1, L = 4 layers; U = (n-1)/n x S with S = T h 2 bytes (the hidden tensor).
  // Forward, per layer: 2 all-reduces (2U each) without SP; 2 all-gathers + 2 reduce-scatters (U each)
  // with SP: 4U either way. Embedding: all-reduce 2U vs reduce-scatter U; LM head: nothing vs the
  // all-gather of its input U; the three small cross-entropy all-reduces are the same. Equal.
  // Backward: without SP 2 all-reduces per layer (4U) and the LM head's input-grad all-reduce (2U); with SP
  // the conjugates (2 all-gathers + 2 reduce-scatters, 4U) plus Megatron's re-all-gather of the saved
  // input for each column-parallel wgrad (QKV, FC1: 2U per layer; the LM head 1U) and the embedding's
  // all-gather (1U) against the head's reduce-scatter (1U): SP = non-SP + (2L + 1) U.
  json doc = doc_for(4);
  doc["training"]["tensor_model_parallel_size"] = 4;
  doc["training"]["global_batch_size"] = 1;
  const StepPlan plain = plan_of(doc);
  doc["training"]["sequence_parallel"] = true;
  const StepPlan sp = plan_of(doc);
  const double S = 2048.0 * 1024 * 2, U = 0.75 * S, L = 4;
  auto fwd = [](const std::string& x) { return !is_backward(x); };
  auto bwd = [](const std::string& x) { return is_backward(x); };
  const double ce = 3 * 1.5 * 2048 * 4;  // three fp32 all-reduces of one value per token
  CHECK(volume(plain, Category::tp_comm, fwd).bus_bytes == Approx(L * 4 * U + 2 * U + ce).epsilon(1e-12));
  CHECK(volume(sp, Category::tp_comm, fwd).bus_bytes == Approx(volume(plain, Category::tp_comm, fwd).bus_bytes).epsilon(1e-12));
  CHECK(volume(plain, Category::tp_comm, bwd).bus_bytes == Approx(L * 4 * U + 2 * U).epsilon(1e-12));
  CHECK(volume(sp, Category::tp_comm, bwd).bus_bytes == Approx(L * 4 * U + 2 * U + (2 * L + 1) * U).epsilon(1e-12));
}

TEST_CASE("strategies: context parallelism passes KV around the ring, overlapped with attention", "[sim]") {
  // CP 2 x DP 2, one stage, m = 1, L = 4 layers, GQA 16 heads / 4 groups of d = 64. Each rank holds
  // T = s / cp = 1024 tokens; one KV chunk is K and V: 2 T g d 2 bytes = 2 x 1024 x 256 x 2 = 1 MiB.
  // Ring attention over cp ranks takes cp - 1 = 1 transfer step forward (the KV chunk) and 1 backward
  // (KV and the partial dK, dV: 2 chunks): per layer 3 chunks, send/recv bus factor 1.
  json doc = doc_for(4);
  doc["training"]["context_parallel_size"] = 2;
  doc["training"]["global_batch_size"] = 2;
  const StepPlan plan = plan_of(doc);
  const double kv = 2.0 * 1024 * 4 * 64 * 2;
  const Volume cp = volume(plan, Category::cp_comm);
  CHECK(cp.count == 4 * 2);
  CHECK(cp.bus_bytes == Approx(4 * 3 * kv).epsilon(1e-12));
  CHECK(cp.group_sizes == std::set<std::size_t>{2});
  // Dense gradients reduce over DP x CP = 4 ranks (CP ranks hold the same weights, different tokens).
  CHECK(volume(plan, Category::dp_comm).group_sizes == std::set<std::size_t>{4});
  // The attention of a layer runs as cp steps (forward and backward).
  int attn_steps = 0;
  for (const Task& t : plan.graph.tasks())
    if (plan.graph.name(t.name) == "attn" || plan.graph.name(t.name) == "attn_bwd") ++attn_steps;
  CHECK(attn_steps == 4 * 2 * 2);

  // Each transfer starts with the attention step it overlaps (the task emitted right after it), and the
  // next step waits for it.
  const SimulationResult r = simulate(scenario(doc));
  const auto& g = r.plan.graph;
  for (TaskId id = 0; id + 1 < g.tasks().size(); ++id) {
    if (g.tasks()[id].category != Category::cp_comm) continue;
    CHECK(r.execution.records[id].start == r.execution.records[id + 1].start);
    CHECK(r.execution.records[id + 2].start >= r.execution.records[id].end);
  }
  // Selective recompute passes the KV around again for the recomputed attention.
  doc["training"]["recompute_granularity"] = "selective";
  CHECK(volume(plan_of(doc), Category::cp_comm).bus_bytes == Approx(4 * 4 * kv).epsilon(1e-12));
}

TEST_CASE("strategies: expert parallelism all-to-alls on EP, expert grads on expert-DP", "[sim]") {
  // MoE with 4 experts, top-2, EP 2 inside DP 4 (one stage, m = 1, L = 4). Per layer the tokens are
  // dispatched and combined forward and both again backward: 4 all-to-alls of T k h 2 bytes (T = 2048,
  // k = 2, h = 1024), bus factor (ep-1)/ep = 1/2. Dense gradients all-reduce over DP 4, expert
  // gradients over the expert-data-parallel group DP / EP = 2, each exactly once.
  json doc = doc_for(4);
  doc["model"]["num_moe_experts"] = 4;
  doc["model"]["moe_router_topk"] = 2;
  doc["training"]["expert_model_parallel_size"] = 2;
  doc["training"]["global_batch_size"] = 4;
  const Scenario s = scenario(doc);
  const StepPlan plan = plan_of(doc);
  const double routed = 2048.0 * 2 * 1024 * 2;
  const Volume ep = volume(plan, Category::ep_comm);
  CHECK(ep.count == 4 * 4);
  CHECK(ep.bus_bytes == Approx(4 * 4 * 0.5 * routed).epsilon(1e-12));
  CHECK(ep.group_sizes == std::set<std::size_t>{2});
  const auto rp = cs::models::parameters_on_rank(s.model, s.training, 0);
  REQUIRE(rp.expert > 0);
  double dense = 0, expert = 0;
  for (const Collective& c : plan.graph.collectives()) {
    const Task& t = plan.graph.tasks()[c.members.front()];
    if (t.category != Category::dp_comm || plan.graph.name(t.name) == "grad-norm-all-reduce") continue;
    CHECK(c.kind == CollectiveKind::all_reduce);
    (plan.graph.group(c.group).size() == 4 ? dense : expert) += c.bytes;
  }
  CHECK(dense == Approx(2 * rp.dense).epsilon(1e-12));
  CHECK(expert == Approx(2 * rp.expert).epsilon(1e-12));
  // Expert-DP members share the EP index: ranks {0, 2} and {1, 3}.
  std::set<std::vector<int>> groups;
  for (const Collective& c : plan.graph.collectives())
    if (plan.graph.group(c.group).size() == 2 && plan.graph.tasks()[c.members.front()].category == Category::dp_comm)
      groups.insert(plan.graph.group(c.group));
  CHECK(groups == std::set<std::vector<int>>{{0, 2}});
}

TEST_CASE("layout: expert groups fold over TP x CP x DP in the order etp-ep-edp", "[sim]") {
  // TP 2, DP 4, PP 2 (16 ranks; a stage's flat index J = tp + 2 dp). ETP 2, EP 2: J = etp + 2 (ep + 2 edp)
  // -- rank 5 (J = 5): etp 1, ep 0, edp 1 -> ETP group {4, 5}, EP group {5, 7}, expert-DP {1, 5}; on
  // stage 1 every member shifts by 8. This is EP carved out of DP at a fixed TP index (Megatron without
  // folding). ETP 1, EP 4: J = ep + 4 edp -- rank 5: ep 1, edp 1 -> EP {4, 5, 6, 7}, expert-DP {1, 5}.
  const Layout a(2, 1, 4, 2, 2, 0, 2);
  CHECK(a.group(GroupKind::etp, 5) == std::vector<int>{4, 5});
  CHECK(a.group(GroupKind::ep, 5) == std::vector<int>{5, 7});
  CHECK(a.group(GroupKind::expert_dp, 5) == std::vector<int>{1, 5});
  CHECK(a.group(GroupKind::ep, 13) == std::vector<int>{13, 15});
  CHECK(a.size(GroupKind::expert_dp) == 2);
  const Layout b(2, 1, 4, 2, 4, 0, 1);
  CHECK(b.group(GroupKind::ep, 5) == std::vector<int>{4, 5, 6, 7});
  CHECK(b.group(GroupKind::expert_dp, 5) == std::vector<int>{1, 5});
  CHECK(b.group(GroupKind::etp, 5) == std::vector<int>{5});
  // Every rank is in exactly one group of each kind, and groups of one kind partition a stage.
  for (const Layout* l : {&a, &b})
    for (GroupKind g : {GroupKind::ep, GroupKind::etp, GroupKind::expert_dp})
      for (int r = 0; r < l->world_size(); ++r) {
        const auto members = l->group(g, r);
        CHECK(std::count(members.begin(), members.end(), r) == 1);
        for (int m : members) CHECK(l->group(g, m) == members);
      }
}

TEST_CASE("strategies: MoE parallel folding, expert TP 1 under TP 2: all-to-all over TP x DP, no expert TP collective", "[sim]") {
  // 4 GPUs, TP 2 + SP, DP 2; 4 experts top-2, EP 4 with expert_tensor_parallel_size 1: the experts fold
  // over all 4 ranks (models/parallelism/layout.hpp: J = tp + 2 dp read as ep + 4 edp), one whole expert each, and the
  // expert-DP group is the rank alone. Each rank routes its sequence shard, T / TP = 1024 tokens:
  // all-to-all of 1024 x 2 x 1024 x 2 B, 4 per layer (dispatch, combine, both backward), bus factor 3/4.
  json doc = doc_for(4);
  doc["model"]["num_moe_experts"] = 4;
  doc["model"]["moe_router_topk"] = 2;
  auto& t = doc["training"];
  t["tensor_model_parallel_size"] = 2;
  t["sequence_parallel"] = true;
  t["expert_model_parallel_size"] = 4;
  t["expert_tensor_parallel_size"] = 1;
  t["global_batch_size"] = 2;
  const StepPlan plan = plan_of(doc);
  const double routed = 1024.0 * 2 * 1024 * 2;
  const Volume ep = volume(plan, Category::ep_comm);
  CHECK(ep.count == 4 * 4);
  CHECK(ep.group_sizes == std::set<std::size_t>{4});
  CHECK(ep.bus_bytes == Approx(4 * 4 * 0.75 * routed).epsilon(1e-12));
  // No TP collective around the MoE MLP: per layer only attention's all-gather / reduce-scatter pairs
  // (forward 2, backward 2 for the output's and the input's gradients).
  const Volume tp = volume(plan, Category::tp_comm, [](const std::string& n) { return n.find("mlp") != std::string::npos; });
  CHECK(tp.count == 0);
  // Whole experts per rank: one expert of 3 x 1024 x 4096 per layer; expert states not sharded further.
  const Scenario s = scenario(doc);
  const auto rp = cs::models::parameters_on_rank(s.model, s.training, 0);
  CHECK(rp.expert == 4 * 3 * 1024.0 * 4096);
  // With ETP 2 instead: EP 2 over the DP pairs, each expert split over the TP pair, which all-gathers the
  // dispatched copies and reduce-scatters the partial outputs (gathered size 2 x routed, factor 1/2).
  t["expert_model_parallel_size"] = 2;
  t["expert_tensor_parallel_size"] = 2;
  const StepPlan etp2 = plan_of(doc);
  const Volume ep2 = volume(etp2, Category::ep_comm, [](const std::string& n) { return n.rfind("a2a", 0) == 0; });
  CHECK(ep2.group_sizes == std::set<std::size_t>{2});
  CHECK(ep2.bus_bytes == Approx(4 * 4 * 0.5 * routed).epsilon(1e-12));
  const Volume etp = volume(etp2, Category::ep_comm, [](const std::string& n) { return n.find("_moe") != std::string::npos; });
  CHECK(etp.count == 4 * 4);
  CHECK(etp.group_sizes == std::set<std::size_t>{2});
  CHECK(etp.bus_bytes == Approx(4 * 4 * 0.5 * 2 * routed).epsilon(1e-12));
  const Scenario s2 = scenario(doc);
  CHECK(cs::models::parameters_on_rank(s2.model, s2.training, 0).expert == 4 * 2 * 3 * 1024.0 * 4096 / 2);
}

TEST_CASE("strategies: full recompute adds one forward of the layers, selective only attention", "[sim]") {
  // One GPU, m = 1: the step is the sum of its kernels. Full recompute re-runs every layer's forward
  // kernels before its backward (not the embedding or the LM head); selective only the attention core.
  json doc = doc_for(1);
  doc["training"]["global_batch_size"] = 1;
  const Scenario s = scenario(doc);
  const auto layer_fwd = cs::models::transformer_layer_ops(s.model, s.training).forward;
  std::set<std::string> layer_names;
  for (const auto& op : layer_fwd) layer_names.insert(op.name);
  auto run = [&](const char* granularity) {
    json d = doc;
    d["training"]["recompute_granularity"] = granularity;
    return simulate(scenario(d));
  };
  const SimulationResult none = run("none"), full = run("full"), sel = run("selective");
  auto sum = [](const SimulationResult& r, auto keep) {
    Time total = 0;
    for (TaskId id = 0; id < r.plan.graph.tasks().size(); ++id) {
      const Task& t = r.plan.graph.tasks()[id];
      if (keep(t, r.plan.graph.name(t.name))) total += t.duration;
    }
    return total;
  };
  const Time layer_forward = sum(none, [&](const Task& t, const std::string& n) {
    return t.category == Category::compute && layer_names.count(n) && t.collective == kNone;
  });
  const Time attention = sum(none, [](const Task&, const std::string& n) { return n == "attn"; });
  const Time full_re = sum(full, [](const Task& t, const std::string&) { return t.category == Category::recompute; });
  const Time sel_re = sum(sel, [](const Task& t, const std::string&) { return t.category == Category::recompute; });
  CHECK(full_re == layer_forward);
  CHECK(sel_re == attention);
  CHECK(full.execution.makespan - none.execution.makespan == layer_forward);
  CHECK(sel.execution.makespan - none.execution.makespan == attention);
  // MFU counts model FLOPs only; HFU counts the recomputed ones too.
  CHECK(full.report.mfu == Approx(none.report.mfu * to_seconds(none.execution.makespan) / to_seconds(full.execution.makespan)));
  CHECK(full.report.hfu > full.report.mfu);
}

TEST_CASE("strategies: a layout that does not fit names the stage and the excess", "[sim]") {
  // Llama 3 70B with plain DDP on 64 x 80 GB H100 (TP 8, DP 8): every GPU holds 16 B x 70.6e9 / 8 =
  // 141 GB of states alone.
  json doc = json::parse(R"({
    "name": "70b-ddp",
    "cluster": {"gpu": "H100-SXM", "nodes": 8, "gpus_per_node": 8, "intra_node": "nvswitch",
                "inter_node": {"fabric": "fat-tree", "link": "ib-ndr400"}},
    "model": {"preset": "llama3-70b"},
    "training": {"seq_length": 4096, "global_batch_size": 8, "micro_batch_size": 1,
                 "tensor_model_parallel_size": 8, "sequence_parallel": true}
  })");
  const Report r = simulate(scenario(doc)).report;
  CHECK_FALSE(r.fits_in_memory);
  CHECK(r.memory.total_bytes() > 140e9);
  const double over_gib = (r.memory.total_bytes() - r.memory_capacity_bytes) / (1024.0 * 1024 * 1024);
  char expected[64];
  std::snprintf(expected, sizeof expected, "over by %.1f GiB", over_gib);
  CHECK_THAT(to_text(r), Catch::Contains("DOES NOT FIT (stage 0 " + std::string(expected)));
  CHECK(to_json(r)["memory_gib"]["over_capacity"].get<double>() == Approx(over_gib));
}

TEST_CASE("strategies: context parallelism halves a rank's activations per layer", "[sim]") {
  // Activations scale with the tokens a rank holds, T = b s / cp (Korthikanti's formulas with s / cp).
  const Scenario one = scenario(doc_for(2));
  json doc = doc_for(2);
  doc["training"]["context_parallel_size"] = 2;
  const Scenario two = scenario(doc);
  CHECK(cs::models::activation_bytes_per_layer(two.model, two.training) ==
        Approx(cs::models::activation_bytes_per_layer(one.model, one.training) / 2).epsilon(1e-12));
}

TEST_CASE("strategies: symmetric and rank-by-rank simulation agree for every strategy", "[sim]") {
  // Under symmetry one rank per stage stands for its TP / CP / DP peers; simulating every rank must give
  // the same step (the analytical network has no contention), which checks that collectives are matched
  // across ranks in the same order on every group.
  struct Case {
    const char* what;
    json training;
  };
  const std::vector<Case> cases = {
      {"ZeRO-3, PP 2", {{"zero_stage", 3}, {"pipeline_model_parallel_size", 2}, {"global_batch_size", 4}}},
      {"ZeRO-2, m = 2", {{"zero_stage", 2}, {"global_batch_size", 8}}},
      {"interleaved PP 2 x v 2, TP 2 + SP",
       {{"pipeline_model_parallel_size", 2}, {"virtual_pipeline_model_parallel_size", 2}, {"tensor_model_parallel_size", 2},
        {"sequence_parallel", true}, {"global_batch_size", 8}}},
      {"CP 2, ZeRO-1, selective", {{"context_parallel_size", 2}, {"zero_stage", 1}, {"recompute_granularity", "selective"}, {"global_batch_size", 8}}},
      {"MoE EP 2", {{"expert_model_parallel_size", 2}, {"global_batch_size", 8}}},
      {"MoE TP 2 + SP, EP 4 folded over TP x DP, ETP 1",
       {{"tensor_model_parallel_size", 2}, {"sequence_parallel", true}, {"expert_model_parallel_size", 4},
        {"expert_tensor_parallel_size", 1}, {"global_batch_size", 4}}},
      {"MoE TP 2 + SP, EP 2, ETP 2",
       {{"tensor_model_parallel_size", 2}, {"sequence_parallel", true}, {"expert_model_parallel_size", 2}, {"global_batch_size", 4}}},
  };
  for (const Case& c : cases) {
    json doc = doc_for(4, 4);
    if (std::string(c.what).rfind("MoE", 0) == 0) {
      doc["model"]["num_moe_experts"] = 4;
      doc["model"]["moe_router_topk"] = 2;
    }
    for (const auto& [k, v] : c.training.items()) doc["training"][k] = v;
    INFO(c.what);
    const Report sym = simulate(scenario(doc)).report;
    doc["simulation"]["symmetry"] = false;
    const Report full = simulate(scenario(doc)).report;
    CHECK(full.step_time_s == Approx(sym.step_time_s).epsilon(1e-9));
    CHECK(full.simulated_ranks == 4);
  }
}

TEST_CASE("strategies: tp_comm_overlap hides the SP all-gathers and reduce-scatters behind their GEMMs", "[sim]") {
  // step_builder.hpp: with tp_comm_overlap and SP, each all-gather feeding a GEMM is split into its first
  // 1/tp (waited for) and the remaining (tp-1)/tp (beside the GEMM), each reduce-scatter draining a GEMM
  // into (tp-1)/tp beside the GEMM and the last 1/tp after it. The bytes moved are the same; only when
  // they move changes. A Llama-3-8B-like layer on a slowed scale-up link (100 GB/s each way) puts the
  // GEMMs and the TP transfers at comparable times, where the overlap matters.
  json doc = doc_for(4, 4);
  doc["cluster"]["intra_node"] = {{"name", "nvswitch"}, {"gpu_bandwidth_GBps", 100}};
  doc["model"]["hidden_size"] = 4096;
  doc["model"]["num_attention_heads"] = 32;
  doc["model"]["num_query_groups"] = 8;
  doc["model"]["ffn_hidden_size"] = 14336;
  doc["training"]["seq_length"] = 4096;
  doc["training"]["tensor_model_parallel_size"] = 4;
  doc["training"]["sequence_parallel"] = true;
  doc["training"]["global_batch_size"] = 1;
  const StepPlan plain_plan = plan_of(doc);
  const Report plain = simulate(scenario(doc)).report;
  doc["training"]["tp_comm_overlap"] = true;
  const StepPlan overlap_plan = plan_of(doc);
  const Report overlap = simulate(scenario(doc)).report;
  // Same TP bus bytes, in more (split) collectives.
  CHECK(volume(overlap_plan, Category::tp_comm).bus_bytes == Approx(volume(plain_plan, Category::tp_comm).bus_bytes).epsilon(1e-12));
  CHECK(volume(overlap_plan, Category::tp_comm).count > volume(plain_plan, Category::tp_comm).count);
  // Less of it exposed, a shorter step, and the same compute.
  CHECK(overlap.breakdown.exposed_comm_s < plain.breakdown.exposed_comm_s);
  CHECK(overlap.step_time_s < plain.step_time_s);
  CHECK(overlap.breakdown.compute_s == Approx(plain.breakdown.compute_s).epsilon(1e-9));
  // In fp8 the GEMMs' input casts go before the gathers (Transformer Engine quantizes, then gathers:
  // add_quantize_casts), so fp8 splits exactly the collectives bf16 splits and moves the same TP bytes; with
  // each cast still between a gather and its GEMM no fp8 gather was split, and the count was plain's.
  json fp8 = doc;
  fp8["training"]["precision"] = "fp8";
  const StepPlan fp8_plan = plan_of(fp8);
  CHECK(volume(fp8_plan, Category::tp_comm).count == volume(overlap_plan, Category::tp_comm).count);
  CHECK(volume(fp8_plan, Category::tp_comm).bus_bytes == Approx(volume(overlap_plan, Category::tp_comm).bus_bytes).epsilon(1e-12));
  // Megatron's userbuffers overlap needs sequence parallelism: without SP (all-reduces) the scenario is
  // refused, as Megatron-LM's validate_args refuses it (it was accepted and changed nothing).
  doc["training"]["sequence_parallel"] = false;
  CHECK_THROWS_WITH(scenario(doc), Catch::Contains("training.tp_comm_overlap: needs training.sequence_parallel"));
}

TEST_CASE("strategies: gradient clipping adds one 4-byte all-reduce on DP x CP before the optimizer", "[sim]") {
  // Megatron's clip_grad: the norm of the rank's gradients, one fp32 sum of squares all-reduced, then the
  // optimizer. DP 8 x TP 1: exactly one such collective per step on the 8 DP ranks, and the optimizer
  // kernel depends on it.
  json doc = doc_for(8);
  const StepPlan plan = plan_of(doc);
  const TaskGraph& g = plan.graph;
  int count = 0;
  for (const Collective& c : g.collectives()) {
    const Task& t = g.tasks()[c.members.front()];
    if (g.name(t.name) != "grad-norm-all-reduce") continue;
    ++count;
    CHECK(c.kind == CollectiveKind::all_reduce);
    CHECK(c.bytes == 4.0);
    CHECK(g.group(c.group).size() == 8);
  }
  CHECK(count == 1);
}

namespace {

// One MoE layer (4 experts, top-2) with EP 2 over DP 2, one stage, m = 2 micro-batches, no contention.
json a2a_overlap_doc() {
  json doc = doc_for(2, 1);
  doc["model"]["num_moe_experts"] = 4;
  doc["model"]["moe_router_topk"] = 2;
  doc["training"]["expert_model_parallel_size"] = 2;
  doc["training"]["global_batch_size"] = 4;
  return doc;
}

}  // namespace

TEST_CASE("strategies: overlap_moe_expert_parallel_comm hides a paired pass's all-to-alls behind the other's compute", "[sim]") {
  // Without the key the four all-to-alls of each pass (dispatch, combine; their backwards) block: the step
  // is F0 B0 F1 B1 with 8 all-to-alls of one size exposed, A each (T k h 2 bytes = 2048 x 2 x 1024 x 2 over
  // EP 2; the same duration every time, nothing else on the fabric then). With it (Megatron-Core's combined
  // 1F1B without pipelining: F0 alone, then F1 and B0 layer by layer, then B1) the pair's four all-to-alls
  // run on the comm stream beside the other pass's compute: combine_bwd(B0) beside F1's attention, router
  // and permute; dispatch(F1) beside B0's expert dgrads and wgrads; dispatch_bwd(B0) beside F1's experts;
  // combine(F1) beside B0's router, norm and attention backward. Each of those windows is longer than A
  // here (a 1024-wide layer's attention or experts at 2048 tokens take hundreds of microseconds, an 8 MiB
  // all-to-all on NVSwitch tens), so all four hide: the step is 4 A shorter, the compute the same, and
  // exactly 4 A of all-to-all is left exposed (F0's and B1's).
  json doc = a2a_overlap_doc();
  const SimulationResult off = simulate(scenario(doc));
  doc["training"]["overlap_moe_expert_parallel_comm"] = true;
  const SimulationResult on = simulate(scenario(doc));

  std::vector<double> a2a;
  for (std::size_t i = 0; i < off.plan.graph.tasks().size(); ++i) {
    const Task& t = off.plan.graph.tasks()[i];
    if (t.category == Category::ep_comm) a2a.push_back(to_seconds(off.execution.records[i].end - off.execution.records[i].start));
  }
  REQUIRE(a2a.size() == 8);
  const double A = a2a.front();
  for (double x : a2a) CHECK(x == Approx(A).epsilon(1e-9));
  CHECK(A > 0);
  const auto ep = static_cast<std::size_t>(Category::ep_comm);
  CHECK(off.report.exposed_comm_s_by_kind[ep] == Approx(8 * A).epsilon(1e-6));
  CHECK(off.report.step_time_s - on.report.step_time_s == Approx(4 * A).epsilon(1e-6));
  CHECK(on.report.exposed_comm_s_by_kind[ep] == Approx(4 * A).epsilon(1e-6));
  CHECK(on.report.breakdown.compute_s == Approx(off.report.breakdown.compute_s).epsilon(1e-9));
  // The same collectives, bytes and tasks, only placed differently.
  CHECK(volume(on.plan, Category::ep_comm).bus_bytes == Approx(volume(off.plan, Category::ep_comm).bus_bytes).epsilon(1e-12));
  CHECK(on.plan.graph.tasks().size() == off.plan.graph.tasks().size());
}

TEST_CASE("strategies: overlap_moe_expert_parallel_comm with interleaved pipelining pairs the steady state", "[sim]") {
  // PP 2 x VP 2 (2 layers per chunk), EP 2 x DP 2, m = 4: Megatron-Core's interleaved schedule with one more
  // warm-up forward, then forward k + 1 with backward k. It runs (no deadlock between the stages), hides some
  // all-to-all, keeps the compute, and the rank-by-rank run agrees with the symmetric one.
  json doc = a2a_overlap_doc();
  doc["cluster"]["gpus_per_node"] = 8;
  doc["model"]["num_layers"] = 8;
  doc["training"]["pipeline_model_parallel_size"] = 2;
  doc["training"]["virtual_pipeline_model_parallel_size"] = 2;
  doc["training"]["global_batch_size"] = 32;
  doc["training"]["expert_model_parallel_size"] = 4;
  const Report off = simulate(scenario(doc)).report;
  doc["training"]["overlap_moe_expert_parallel_comm"] = true;
  const Report on = simulate(scenario(doc)).report;
  CHECK(on.step_time_s < off.step_time_s);
  CHECK(on.breakdown.exposed_comm_s < off.breakdown.exposed_comm_s);
  CHECK(on.breakdown.compute_s == Approx(off.breakdown.compute_s).epsilon(1e-9));
  doc["simulation"]["symmetry"] = false;
  CHECK(simulate(scenario(doc)).report.step_time_s == Approx(on.step_time_s).epsilon(1e-9));
}

TEST_CASE("strategies: overlap_moe_expert_parallel_comm changes nothing without expert parallelism", "[sim]") {
  // EP 1: no all-to-all to hide; the step is the plain one (kept, not refused, so that a layout search
  // over a base scenario with the flag can visit EP 1, as tp_comm_overlap at TP 1).
  json doc = a2a_overlap_doc();
  doc["training"]["expert_model_parallel_size"] = 1;
  const double plain = simulate(scenario(doc)).report.step_time_s;
  doc["training"]["overlap_moe_expert_parallel_comm"] = true;
  CHECK(simulate(scenario(doc)).report.step_time_s == plain);
}

TEST_CASE("strategies: overlap_moe_expert_parallel_comm with pipelining needs the interleaved schedule", "[sim]") {
  json doc = a2a_overlap_doc();
  doc["cluster"]["gpus_per_node"] = 4;
  doc["model"]["num_layers"] = 2;
  doc["training"]["pipeline_model_parallel_size"] = 2;
  doc["training"]["overlap_moe_expert_parallel_comm"] = true;
  CHECK_THROWS_WITH(scenario(doc), "strategies.json: training.overlap_moe_expert_parallel_comm: needs the interleaved schedule "
                                   "(training.virtual_pipeline_model_parallel_size > 1) with pipeline_model_parallel_size > 1, as Megatron-Core does");
}

TEST_CASE("strategies: overlap_moe_expert_parallel_comm refuses full recompute", "[sim]") {
  json doc = a2a_overlap_doc();
  doc["training"]["recompute_granularity"] = "full";
  doc["training"]["overlap_moe_expert_parallel_comm"] = true;
  CHECK_THROWS_WITH(scenario(doc), "strategies.json: training.overlap_moe_expert_parallel_comm: cannot run with "
                                   "training.recompute_granularity \"full\" (Megatron-Core refuses it)");
}

TEST_CASE("strategies: overlap_moe_expert_parallel_comm is modelled with ZeRO 0 or 1 only", "[sim]") {
  json doc = a2a_overlap_doc();
  doc["training"]["zero_stage"] = 2;
  doc["training"]["overlap_moe_expert_parallel_comm"] = true;
  CHECK_THROWS_WITH(scenario(doc), "strategies.json: training.overlap_moe_expert_parallel_comm: is modelled with training.zero_stage 0 "
                                   "or 1 only (Megatron-Core's DDP and distributed optimizer)");
}

TEST_CASE("strategies: gradient accumulation without the fusion adds one kernel per unit and micro-batch", "[sim]") {
  // One GPU, m = 8 micro-batches, nothing else on the streams: the step is the sum of its kernels. Fused
  // (the default) has no accumulation kernel; accumulate_grad (autograd's .grad +=) one after each unit's
  // backward in micro-batches 1..7 (the first micro-batch's gradient is kept as it is); main_grad_add and
  // cast_add one in each of the 8. The step grows by exactly their durations.
  json doc = doc_for(1);
  REQUIRE(scenario(doc).training.num_micro_batches() == 8);
  auto run = [&](const char* mode) {
    json d = doc;
    d["training"]["gradient_accumulation"] = mode;
    return simulate(scenario(d));
  };
  auto kernels = [](const SimulationResult& r, int* count) {
    Time total = 0;
    *count = 0;
    std::set<int> micro_batches;
    for (const Task& t : r.plan.graph.tasks())
      if (r.plan.graph.name(t.name) == "grad_accumulation") {
        total += t.duration;
        ++*count;
        micro_batches.insert(t.micro_batch);
      }
    return std::make_pair(total, micro_batches);
  };
  const SimulationResult fused = run("fused");
  int n = 0;
  CHECK(kernels(fused, &n).first == 0);
  CHECK(n == 0);
  const Scenario base = scenario(doc);
  const std::size_t units = stage_units(base.model, base.training, 0).chunks.front().size();
  REQUIRE(units == 6);  // embedding, 4 layers, LM head
  const SimulationResult autograd = run("accumulate_grad");
  const auto [autograd_time, autograd_mbs] = kernels(autograd, &n);
  CHECK(n == 7 * 6);
  CHECK(autograd_mbs == std::set<int>{1, 2, 3, 4, 5, 6, 7});
  CHECK(autograd.execution.makespan - fused.execution.makespan == autograd_time);
  const SimulationResult hook = run("main_grad_add");
  const auto [hook_time, hook_mbs] = kernels(hook, &n);
  CHECK(n == 8 * 6);
  CHECK(hook_mbs.size() == 8);
  CHECK(hook.execution.makespan - fused.execution.makespan == hook_time);
  const SimulationResult cast = run("cast_add");
  const auto [cast_time, cast_mbs] = kernels(cast, &n);
  CHECK(n == 8 * 6);
  CHECK(cast.execution.makespan - fused.execution.makespan == cast_time);
  // generic's gradient buffer is bf16: 6 B a parameter under accumulate_grad and main_grad_add, 10 B under
  // cast_add (models::grad_accumulation_op); the same kernels, so the same per-kernel ratio of bytes.
  CHECK(cast_time > hook_time);
  CHECK(hook_time > autograd_time);
}

TEST_CASE("strategies: gradient accumulation without the fusion is modelled with ZeRO 0 or 1 only", "[sim]") {
  json doc = doc_for(8);
  doc["training"]["zero_stage"] = 2;
  doc["training"]["gradient_accumulation"] = "main_grad_add";
  CHECK_THROWS_WITH(scenario(doc), "strategies.json: training.gradient_accumulation: \"main_grad_add\" is modelled with training.zero_stage 0 "
                                   "or 1 only (the whole gradient accumulated on each rank)");
}

TEST_CASE("strategies: gradient accumulation kernels under overlap_moe_expert_parallel_comm, one per unit and micro-batch", "[sim]") {
  // The paired passes (combined 1F1B) run the same accumulation kernels as the plain schedule: rank 0 of
  // the one-MoE-layer model (embedding, layer, LM head: 3 units) over m = 2 micro-batches, main_grad_add:
  // 3 x 2 kernels, on the compute stream, so the step is longer than fused.
  json doc = a2a_overlap_doc();
  doc["training"]["overlap_moe_expert_parallel_comm"] = true;
  REQUIRE(scenario(doc).training.num_micro_batches() == 2);
  const SimulationResult fused = simulate(scenario(doc));
  doc["training"]["gradient_accumulation"] = "main_grad_add";
  const SimulationResult added = simulate(scenario(doc));
  int count = 0;
  for (const Task& t : added.plan.graph.tasks())
    if (t.rank == 0 && added.plan.graph.name(t.name) == "grad_accumulation") ++count;
  CHECK(count == 3 * 2);
  CHECK(added.execution.makespan > fused.execution.makespan);
}

namespace {
// Two GPUs of TP 2 on each of two pipeline stages, no sequence parallelism: m = 8 micro-batches of one
// 2048-token sequence, so a pipeline tensor is 2048 x 1024 x 2 B = 4 MiB.
json pipeline_doc() {
  json doc = doc_for(4);
  doc["training"]["tensor_model_parallel_size"] = 2;
  doc["training"]["pipeline_model_parallel_size"] = 2;
  return doc;
}
constexpr double kPipelineTensor = 2048.0 * 1024 * 2;

// The bytes of the collectives of category `cat` and kind `kind` named `name`, one entry per collective.
std::multiset<double> collective_bytes(const StepPlan& plan, Category cat, CollectiveKind kind, const std::string& name) {
  const TaskGraph& g = plan.graph;
  std::multiset<double> out;
  for (const Collective& c : g.collectives()) {
    const Task& t = g.tasks()[c.members.front()];
    if (t.category == cat && c.kind == kind && g.name(t.name) == name) out.insert(c.bytes);
  }
  return out;
}
}  // namespace

TEST_CASE("strategies: pipeline_tensor_split sends 1/tp of each pipeline tensor and all-gathers it over TP", "[sim]") {
  // none: every transfer carries the whole 4 MiB tensor, no gather. scatter_gather (Megatron-LM's
  // --scatter-gather-tensors-in-pipeline): 4 MiB / tp = 2 MiB on the wire, and the receiver all-gathers the
  // 4 MiB tensor over its TP pair: stage 1 the 8 activations, stage 0 the 8 gradients. partitioned
  // (DeepSpeed's PipelineEngine): stage 0 also re-gathers its own 8 outputs before their backward.
  json doc = pipeline_doc();
  REQUIRE(scenario(doc).training.num_micro_batches() == 8);
  auto plan = [&](const char* split) {
    json d = doc;
    d["training"]["pipeline_tensor_split"] = split;
    return plan_of(d);
  };
  const auto count = [](const std::multiset<double>& b, double bytes) { return std::make_pair(b.size(), b.size() == b.count(bytes)); };
  const StepPlan none = plan("none");
  for (const char* n : {"send-activation", "recv-gradient"})  // a transfer is named by its first member: stage 0
    CHECK(count(collective_bytes(none, Category::pp_comm, CollectiveKind::send_recv, n), kPipelineTensor) == std::make_pair(std::size_t{8}, true));
  CHECK(collective_bytes(none, Category::pp_comm, CollectiveKind::all_gather, "gather-activation").empty());

  const StepPlan sg = plan("scatter_gather");
  for (const char* n : {"send-activation", "recv-gradient"})  // a transfer is named by its first member: stage 0
    CHECK(count(collective_bytes(sg, Category::pp_comm, CollectiveKind::send_recv, n), kPipelineTensor / 2) == std::make_pair(std::size_t{8}, true));
  CHECK(count(collective_bytes(sg, Category::pp_comm, CollectiveKind::all_gather, "gather-activation"), kPipelineTensor) ==
        std::make_pair(std::size_t{8}, true));
  CHECK(count(collective_bytes(sg, Category::pp_comm, CollectiveKind::all_gather, "gather-gradient"), kPipelineTensor) ==
        std::make_pair(std::size_t{8}, true));
  CHECK(collective_bytes(sg, Category::pp_comm, CollectiveKind::all_gather, "regather-output").empty());

  const StepPlan part = plan("partitioned");
  CHECK(count(collective_bytes(part, Category::pp_comm, CollectiveKind::all_gather, "regather-output"), kPipelineTensor) ==
        std::make_pair(std::size_t{8}, true));
  CHECK(count(collective_bytes(part, Category::pp_comm, CollectiveKind::all_gather, "gather-gradient"), kPipelineTensor) ==
        std::make_pair(std::size_t{8}, true));

  // Under sequence parallelism each TP rank already holds 1/tp: the split changes nothing (Megatron-LM
  // @ cfd2e216: "scatter_gather_tensors_in_pipeline and not args.sequence_parallel").
  doc["training"]["sequence_parallel"] = true;
  const StepPlan sp = plan("partitioned");
  CHECK(count(collective_bytes(sp, Category::pp_comm, CollectiveKind::send_recv, "send-activation"), kPipelineTensor / 2) ==
        std::make_pair(std::size_t{8}, true));
  CHECK(collective_bytes(sp, Category::pp_comm, CollectiveKind::all_gather, "gather-activation").empty());
  CHECK(collective_bytes(sp, Category::pp_comm, CollectiveKind::all_gather, "regather-output").empty());
}

TEST_CASE("strategies: pipeline_p2p_blocking posts receives after the pass before and holds the next pass for the sends", "[sim]") {
  // Blocking (Megatron-LM 2021-2022's _communicate, DeepSpeed's dist.send / dist.recv): under 1F1B every
  // pass is followed by a communication point, so (a) every receive but a stage's first starts no earlier
  // than the end of the compute before it on its rank, and (b) the first compute after a send starts no
  // earlier than the send's end. Non-blocking, the receives are posted ahead: (a) fails for some receive.
  // The step can only grow.
  json doc = pipeline_doc();
  const SimulationResult async = simulate(scenario(doc));
  doc["training"]["pipeline_p2p_blocking"] = true;
  const SimulationResult blocking = simulate(scenario(doc));
  CHECK(blocking.execution.makespan >= async.execution.makespan);
  auto check = [](const SimulationResult& r, bool expect_blocking) {
    const TaskGraph& g = r.plan.graph;
    const auto& rec = r.execution.records;
    bool receives_after_compute = true;
    int receives = 0, sends = 0;
    for (int rank = 0; rank < g.num_ranks(); ++rank) {
      const auto& compute = g.stream_tasks(rank, StreamKind::compute);
      // The end of the last compute task of `rank` that starts before time t (kNever: none).
      auto compute_end_before = [&](Time t) {
        Time end = -1;
        for (TaskId c : compute)
          if (rec[c].start < t) end = std::max(end, rec[c].end);
        return end;
      };
      for (StreamKind s : {StreamKind::pp_recv_fwd, StreamKind::pp_recv_bwd}) {
        const auto& tasks = g.stream_tasks(rank, s);
        for (std::size_t i = 0; i < tasks.size(); ++i) {
          const Time before = compute_end_before(rec[tasks[i]].start);
          if (before < 0) continue;  // the stage's first receive
          ++receives;
          if (rec[tasks[i]].start < before) receives_after_compute = false;
        }
      }
      if (!expect_blocking) continue;
      for (StreamKind s : {StreamKind::pp_send_fwd, StreamKind::pp_send_bwd})
        for (TaskId t : g.stream_tasks(rank, s)) {
          // The first compute task that was issued after the send's pass: the first to start at or after
          // the send's start.
          Time next = kNever;
          for (TaskId c : compute)
            if (rec[c].start >= rec[t].start) next = std::min(next, rec[c].start);
          if (next == kNever) continue;  // after the last pass: the optimizer waits below
          ++sends;
          CHECK(next >= rec[t].end);
        }
    }
    CHECK(receives > 0);
    if (expect_blocking) CHECK(sends > 0);
    return receives_after_compute;
  };
  CHECK(check(blocking, true));
  CHECK_FALSE(check(async, false));
}

TEST_CASE("strategies: pipeline_p2p_blocking under the interleaved schedule runs its steady pairs between points", "[sim]") {
  // Interleaved (Megatron-LM's forward k, backward k, then one send_forward_backward_recv_forward_backward):
  // no point between a steady-state forward and its backward, so the backward does not wait for that
  // forward's send (waiting would deadlock: the peer posts the matching receive only after its own
  // backward). The step completes, and it is no shorter than with asynchronous transfers.
  json doc = pipeline_doc();
  doc["model"]["num_layers"] = 8;
  doc["training"]["virtual_pipeline_model_parallel_size"] = 2;
  const double async = simulate(scenario(doc)).report.step_time_s;
  for (const char* split : {"none", "scatter_gather"}) {
    doc["training"]["pipeline_p2p_blocking"] = true;
    doc["training"]["pipeline_tensor_split"] = split;
    INFO(split);
    const double blocking = simulate(scenario(doc)).report.step_time_s;
    CHECK(blocking > 0);
    if (std::string(split) == "none") CHECK(blocking >= async);
  }
}

TEST_CASE("strategies: pipeline_tensor_split cannot run with overlap_moe_expert_parallel_comm", "[sim]") {
  json doc = a2a_overlap_doc();
  doc["training"]["overlap_moe_expert_parallel_comm"] = true;
  doc["training"]["pipeline_tensor_split"] = "scatter_gather";
  CHECK_THROWS_WITH(scenario(doc), "strategies.json: training.overlap_moe_expert_parallel_comm: cannot run with "
                                   "training.pipeline_tensor_split \"scatter_gather\" (Megatron-Core sends whole pipeline tensors)");
}

TEST_CASE("strategies: pipeline_p2p_blocking cannot run with overlap_moe_expert_parallel_comm", "[sim]") {
  json doc = a2a_overlap_doc();
  doc["training"]["overlap_moe_expert_parallel_comm"] = true;
  doc["training"]["pipeline_p2p_blocking"] = true;
  CHECK_THROWS_WITH(scenario(doc), "strategies.json: training.overlap_moe_expert_parallel_comm: cannot run with "
                                   "training.pipeline_p2p_blocking (Megatron-Core's combined 1F1B sends asynchronously)");
}
