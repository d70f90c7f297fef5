// training.framework (sim/scenario/framework.hpp, calibrate/published/frameworks.json): what each
// framework refuses, with the rule named; its defaults and the mechanisms they imply (gradient dtypes in
// memory and on the wire, the DDP bucket rule); ZeRO-1's parameter all-gather behind the next forward
// (overlap_param_gather, Megatron-Core); the search enumerating only what the framework runs.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "models/memory/memory_model.hpp"
#include "sim/base/input_error.hpp"
#include "sim/explore/sweep.hpp"
#include "sim/scenario/framework.hpp"
#include "sim/scenario/scenario.hpp"
#include "tests/sim/refusal.hpp"
#include "sim/simulation.hpp"

using namespace cs::sim;
using nlohmann::json;

namespace {

// One H100 node, a 1.4B-parameter Llama-style model; 8 layers so that PP 2 and 4 divide.
json doc_for(const std::string& framework) {
  json doc = json::parse(R"({
    "name": "frameworks",
    "cluster": {"gpu": "H100-SXM", "nodes": 1, "gpus_per_node": 8, "intra_node": "nvswitch"},
    "model": {"num_layers": 8, "hidden_size": 1024, "num_attention_heads": 16, "num_query_groups": 4,
              "vocab_size": 32000, "ffn_hidden_size": 4096, "activation": "swiglu"},
    "training": {"seq_length": 2048, "global_batch_size": 8, "micro_batch_size": 1, "zero_stage": 1},
    "simulation": {"comm_compute_contention": 0}
  })");
  doc["training"]["framework"] = framework;
  return doc;
}

double duration_s(const SimulationResult& r, cs::sim::TaskId id) {
  const auto& rec = r.execution.records[id];
  return to_seconds(rec.end - rec.start);
}

}  // namespace

TEST_CASE("framework: every framework of the file loads, generic first", "[sim]") {
  const auto names = framework_names();
  REQUIRE(names.size() == 6);
  CHECK(names.front() == "generic");
  for (const char* n : {"megatron-core", "nemo", "deepspeed", "fsdp", "torchtitan"}) CHECK(find_framework(n) != nullptr);
  // NeMo is based on Megatron-Core: it refuses what Megatron-Core refuses.
  CHECK(find_framework("nemo")->refuse.size() >= find_framework("megatron-core")->refuse.size());
  for (const Framework& f : frameworks())
    for (const FrameworkRelease& r : f.releases) CHECK(r.defaults.size() == defaultable_keys().size());
}

TEST_CASE("framework: megatron-core refuses ZeRO-2 and ZeRO-3 with pipeline parallelism", "[sim]") {
  json doc = doc_for("megatron-core");
  doc["training"]["pipeline_model_parallel_size"] = 2;
  doc["training"]["zero_stage"] = 2;
  CHECK(refusal(doc) ==
        "f.json: training.zero_stage: zero_stage 2, pipeline_model_parallel_size 2: training.framework \"megatron-core\" cannot run "
        "this (rule fsdp-without-pp): ZeRO-2/3 are Megatron-FSDP's optim_grads / optim_grads_params or torch FSDP2, and "
        "Megatron-Core runs them without pipeline parallelism; its distributed optimizer (zero_stage 1) is what combines with PP "
        "[megatron/training/arguments.py validate_args: '--use-torch-fsdp2 is not supported with pipeline parallelism'; "
        "megatron/core/distributed/fsdp/mcore_fsdp_adapter.py: 'MFSDP v2 does not currently support: pipeline_model_parallel_size']");
  doc["training"]["zero_stage"] = 3;
  doc["training"]["pipeline_model_parallel_size"] = 4;
  CHECK(refusal(doc).find("zero_stage 3, pipeline_model_parallel_size 4: training.framework \"megatron-core\" cannot run this (rule fsdp-without-pp)") !=
        std::string::npos);
  // The same layouts under generic run, and the distributed optimizer with PP runs under megatron-core.
  doc["training"]["framework"] = "generic";
  CHECK_NOTHROW(parse_scenario(doc, "f.json"));
  doc["training"]["framework"] = "megatron-core";
  doc["training"]["zero_stage"] = 1;
  CHECK_NOTHROW(parse_scenario(doc, "f.json"));
}

TEST_CASE("framework: megatron-core refuses overlap_param_gather without the distributed optimizer or grad overlap", "[sim]") {
  json doc = doc_for("megatron-core");
  doc["training"]["zero_stage"] = 0;
  doc["training"]["overlap_param_gather"] = true;
  CHECK(refusal(doc) ==
        "f.json: training.overlap_param_gather: zero_stage 0, overlap_param_gather true: training.framework \"megatron-core\" cannot "
        "run this (rule param-gather-needs-distributed-optimizer): --overlap-param-gather only supported with distributed optimizer "
        "or Megatron-FSDP (zero_stage >= 1) [megatron/training/arguments.py validate_args]");
  doc["training"]["zero_stage"] = 1;
  doc["training"]["overlap_grad_reduce"] = false;
  CHECK(refusal(doc).find("(rule param-gather-needs-grad-reduce-overlap): must use --overlap-param-gather with --overlap-grad-reduce") !=
        std::string::npos);
}

TEST_CASE("framework: nemo refuses what megatron-core refuses", "[sim]") {
  json doc = doc_for("nemo");
  doc["training"]["pipeline_model_parallel_size"] = 2;
  doc["training"]["zero_stage"] = 3;
  CHECK(refusal(doc).find("training.zero_stage: zero_stage 3, pipeline_model_parallel_size 2: training.framework \"nemo\" cannot run this "
                          "(rule fsdp-without-pp)") != std::string::npos);
  doc["training"]["pipeline_model_parallel_size"] = 1;
  doc["training"]["zero_stage"] = 0;
  doc["training"]["overlap_param_gather"] = true;
  CHECK(refusal(doc).find("training.framework \"nemo\" cannot run this (rule param-gather-needs-distributed-optimizer)") != std::string::npos);
}

TEST_CASE("framework: deepspeed refuses ZeRO-2/3 with PP and an interleaved pipeline", "[sim]") {
  json doc = doc_for("deepspeed");
  doc["training"]["pipeline_model_parallel_size"] = 2;
  doc["training"]["zero_stage"] = 2;
  CHECK(refusal(doc) ==
        "f.json: training.zero_stage: zero_stage 2, pipeline_model_parallel_size 2: training.framework \"deepspeed\" cannot run this "
        "(rule zero2-3-without-pp): ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism (ZeRO-1 is what combines with PP) "
        "[deepspeed/runtime/pipe/engine.py PipelineEngine.__init__: assert zero_optimization_stage() < ZeroStageEnum.gradients]");
  doc["training"]["zero_stage"] = 1;
  doc["training"]["virtual_pipeline_model_parallel_size"] = 2;
  CHECK(refusal(doc).find("training.virtual_pipeline_model_parallel_size: virtual_pipeline_model_parallel_size 2: training.framework "
                          "\"deepspeed\" cannot run this (rule pipeline-is-1f1b)") != std::string::npos);
  doc["training"]["virtual_pipeline_model_parallel_size"] = 1;
  CHECK_NOTHROW(parse_scenario(doc, "f.json"));  // ZeRO-1 with PP: DeepSpeed's PipelineEngine runs it
}

TEST_CASE("framework: fsdp refuses ZeRO-1 and expert parallelism", "[sim]") {
  json doc = doc_for("fsdp");
  CHECK(refusal(doc) ==
        "f.json: training.zero_stage: zero_stage 1: training.framework \"fsdp\" cannot run this (rule no-optimizer-only-sharding): FSDP "
        "shards gradients with the optimizer states or not at all: its strategies are FULL_SHARD, SHARD_GRAD_OP, HYBRID_SHARD and "
        "NO_SHARD (zero_stage 3, 2, 3 within a node, 0) [torch/distributed/fsdp/api.py ShardingStrategy]");
  doc["training"]["zero_stage"] = 3;
  doc["model"]["num_moe_experts"] = 8;
  doc["model"]["moe_router_topk"] = 2;
  doc["training"]["expert_model_parallel_size"] = 2;
  CHECK(refusal(doc).find("training.expert_model_parallel_size: expert_model_parallel_size 2: training.framework \"fsdp\" cannot run this "
                          "(rule no-expert-parallelism)") != std::string::npos);
  doc["training"]["expert_model_parallel_size"] = 1;
  doc["training"].erase("zero_stage");
  doc["training"]["fsdp_sharding_strategy"] = "FULL_SHARD";
  CHECK_NOTHROW(parse_scenario(doc, "f.json"));
}

TEST_CASE("framework: torchtitan refuses ZeRO-1 and fp16", "[sim]") {
  json doc = doc_for("torchtitan");
  CHECK(refusal(doc).find("training.zero_stage: zero_stage 1: training.framework \"torchtitan\" cannot run this (rule no-optimizer-only-sharding)") !=
        std::string::npos);
  doc["training"]["zero_stage"] = 3;
  doc["training"]["precision"] = "fp16";
  CHECK(refusal(doc) ==
        "f.json: training.precision: precision fp16: training.framework \"torchtitan\" cannot run this (rule no-fp16): "
        "mixed_precision_param is bfloat16 or float32 [torchtitan/config/configs.py: mixed_precision_param: "
        "Literal['bfloat16', 'float32']]");
  // FSDP2 with PP is what torchtitan composes.
  doc["training"]["precision"] = "bf16";
  doc["training"]["pipeline_model_parallel_size"] = 2;
  CHECK_NOTHROW(parse_scenario(doc, "f.json"));
}

TEST_CASE("framework: an unknown framework or release names the choices", "[sim]") {
  json doc = doc_for("megatron");
  CHECK(refusal(doc) ==
        "f.json: training.framework: unknown value \"megatron\" (did you mean \"megatron-core\"? expected one of: generic, megatron-core, "
        "nemo, deepspeed, fsdp, torchtitan)");
  doc = doc_for("nemo");
  doc["training"]["framework_release"] = "1.0";
  CHECK(refusal(doc) ==
        "f.json: training.framework_release: unknown release \"1.0\" of framework \"nemo\" (expected one of: 2.x-performance, 2.x)");
}

TEST_CASE("framework: defaults follow the framework and its release", "[sim]") {
  // generic: clustersim's defaults before frameworks (bf16 gradients, both overlaps on, a 4e7 bucket).
  const Scenario g = parse_scenario(doc_for("generic"), "f.json");
  CHECK(g.training.main_grads_dtype == cs::models::Dtype::bf16);
  CHECK(g.training.grad_reduce_dtype == cs::models::Dtype::bf16);
  CHECK(g.training.overlap_grad_reduce);
  CHECK(g.training.overlap_param_gather);
  CHECK_FALSE(g.training.param_gather_overlaps_forward);  // generic: only when the scenario gives the flag
  CHECK(g.training.grad_bucket_params == 4e7);
  // Megatron-LM's command-line defaults: no overlaps, fp32 main grads reduced in fp32 under bf16, and with
  // overlap_grad_reduce off one bucket.
  const Scenario mc = parse_scenario(doc_for("megatron-core"), "f.json");
  CHECK(mc.training.main_grads_dtype == cs::models::Dtype::fp32);
  CHECK(mc.training.grad_reduce_dtype == cs::models::Dtype::fp32);
  CHECK_FALSE(mc.training.overlap_grad_reduce);
  CHECK_FALSE(mc.training.overlap_param_gather);
  CHECK(mc.training.grad_bucket_params == 1e15);
  // With overlap: max(4e7, 1e6 x DP): DP 8 gives 4e7; DP 64 (8 nodes) 6.4e7.
  json doc = doc_for("megatron-core");
  doc["training"]["overlap_grad_reduce"] = true;
  CHECK(parse_scenario(doc, "f.json").training.grad_bucket_params == 4e7);
  doc["cluster"]["nodes"] = 8;
  doc["cluster"]["inter_node"] = {{"fabric", "fat-tree"}, {"link", "ib-ndr400"}};
  doc["training"]["global_batch_size"] = 64;
  CHECK(parse_scenario(doc, "f.json").training.grad_bucket_params == 6.4e7);
  // simulation.grad_bucket_params replaces the framework's rule.
  doc["simulation"]["grad_bucket_params"] = 1e6;
  CHECK(parse_scenario(doc, "f.json").training.grad_bucket_params == 0);
  // NeMo's performance recipe: tp_comm_overlap on Hopper with TP and SP, bf16 reduction; its base recipe
  // reduces in fp32 without the TP overlap.
  doc = doc_for("nemo");
  doc["training"]["tensor_model_parallel_size"] = 2;
  doc["training"]["sequence_parallel"] = true;
  const Scenario perf = parse_scenario(doc, "f.json");
  CHECK(perf.training.framework_release == "2.x-performance");
  CHECK(perf.training.tp_comm_overlap);
  CHECK(perf.training.grad_reduce_dtype == cs::models::Dtype::bf16);
  CHECK(perf.training.param_gather_overlaps_forward);
  doc["cluster"]["gpu"] = "A100-80GB";
  CHECK_FALSE(parse_scenario(doc, "f.json").training.tp_comm_overlap);
  doc["cluster"]["gpu"] = "H100-SXM";
  doc["training"]["framework_release"] = "2.x";
  const Scenario base = parse_scenario(doc, "f.json");
  CHECK_FALSE(base.training.tp_comm_overlap);
  CHECK(base.training.grad_reduce_dtype == cs::models::Dtype::fp32);
  // DeepSpeed: overlap_comm only for ZeRO-3; a 5e8-element reduce bucket.
  doc = doc_for("deepspeed");
  const Scenario ds1 = parse_scenario(doc, "f.json");
  CHECK_FALSE(ds1.training.overlap_grad_reduce);
  CHECK(ds1.training.grad_bucket_params == 5e8);
  doc["training"]["zero_stage"] = 3;
  CHECK(parse_scenario(doc, "f.json").training.overlap_grad_reduce);
  // A value the scenario gives wins over the framework's.
  doc = doc_for("megatron-core");
  doc["training"]["main_grads_dtype"] = "bf16";
  CHECK(parse_scenario(doc, "f.json").training.main_grads_dtype == cs::models::Dtype::bf16);
}

TEST_CASE("framework: Megatron's fp32 main grads cost 2 more bytes per parameter and double the reduce-scatter", "[sim]") {
  // ZeRO-1 over DP 8, pp = 1, m = 1: gradients unsharded, Psi bytes x element size. The memory figure
  // grows by 2 Psi (4 B against 2 B per gradient); the bucketed reduce-scatter moves Psi x 4 B instead of
  // Psi x 2 B (the same buckets: simulation.grad_bucket_params fixes them for both).
  json doc = doc_for("generic");
  doc["simulation"]["grad_bucket_params"] = 4e7;
  const Scenario bf = parse_scenario(doc, "f.json");
  doc["training"]["framework"] = "megatron-core";
  doc["training"]["overlap_grad_reduce"] = true;
  const Scenario fp = parse_scenario(doc, "f.json");
  const double psi = cs::models::parameters_on_rank(bf.model, bf.training, 0).total();
  const auto mem_bf = cs::models::memory_per_gpu(bf.model, bf.training, 0), mem_fp = cs::models::memory_per_gpu(fp.model, fp.training, 0);
  CHECK(mem_bf.grads_bytes == Approx(2 * psi).epsilon(1e-12));
  CHECK(mem_fp.grads_bytes == Approx(4 * psi).epsilon(1e-12));
  auto rs_bytes = [](const Scenario& s) {
    const StepPlan plan = build_step(s, cs::models::default_compute_profile());
    double bytes = 0;
    for (const Collective& c : plan.graph.collectives())
      if (plan.graph.name(plan.graph.tasks()[c.members.front()].name) == "grad-reduce-scatter") bytes += c.bytes;
    return bytes;
  };
  CHECK(rs_bytes(bf) == Approx(2 * psi).epsilon(1e-12));
  CHECK(rs_bytes(fp) == Approx(4 * psi).epsilon(1e-12));
}

TEST_CASE("framework: ZeRO-1's parameter all-gather hides behind the next forward with overlap_param_gather", "[sim]") {
  // Megatron-Core, ZeRO-1 over DP 8 on one node, pp = 1, one micro-batch of 4 x 8192 tokens (a layer's
  // forward, ~1 TFLOP, takes longer than gathering a 4e7-parameter bucket), no compute slowdown from
  // communication (comm_compute_contention 0).
  // Parameters (Megatron's shapes, vocab 32000 = 250 x 128 unpadded): embedding 32000 x 1024 = 32,768,000;
  // a layer: QKV 1024 x (16 + 2 x 4) x 64 = 1,572,864, out-proj 1024 x 1024 = 1,048,576, SwiGLU MLP
  // 3 x 1024 x 4096 = 12,582,912, two RMSNorms 2048: 15,206,400; head: final norm 1024 + LM head
  // 32,768,000 = 32,769,024. Psi = 32,768,000 + 8 x 15,206,400 + 32,769,024 = 187,188,224.
  // Buckets of 4e7 cut in backward order: {L7, head} 47,975,424; {L4..L6} 45,619,200; {L1..L3} 45,619,200;
  // {embedding, L0} 47,974,400 -- in forward order b0 = {embedding, L0}, b1 = {L1..L3}, b2 = {L4..L6},
  // b3 = {L7, head}.
  // Without the flag one gather of Psi x 2 bytes follows the optimizer step, nothing to hide it: exposed
  // T(Psi). With it, b0's gather is waited for before the embedding (exposed T(b0)), and each of b1..b3
  // runs behind the forward of the bucket before it. So the step shortens by T(Psi) - T(b0), and the
  // exposed DP communication by the same.
  json doc = doc_for("megatron-core");
  doc["training"]["seq_length"] = 8192;
  doc["training"]["micro_batch_size"] = 4;
  doc["training"]["global_batch_size"] = 32;
  doc["training"]["overlap_grad_reduce"] = true;
  doc["training"]["overlap_param_gather"] = true;
  const Scenario with_s = parse_scenario(doc, "f.json");
  REQUIRE(with_s.training.param_gather_overlaps_forward);
  const SimulationResult with = simulate(with_s);
  doc["training"]["overlap_param_gather"] = false;
  const SimulationResult without = simulate(parse_scenario(doc, "f.json"));

  auto gathers = [](const SimulationResult& r) {
    std::vector<std::pair<double, TaskId>> out;  // (bytes, task)
    const TaskGraph& g = r.plan.graph;
    for (const Collective& c : g.collectives())
      if (g.name(g.tasks()[c.members.front()].name) == "param-all-gather") out.emplace_back(c.bytes, c.members.front());
    return out;
  };
  const auto w = gathers(with), wo = gathers(without);
  const double psi = 187188224;
  REQUIRE(wo.size() == 1);
  CHECK(wo[0].first == Approx(2 * psi).epsilon(1e-12));
  REQUIRE(w.size() == 4);
  CHECK(w[0].first == Approx(2 * 47974400.0).epsilon(1e-12));
  CHECK(w[1].first == Approx(2 * 45619200.0).epsilon(1e-12));
  CHECK(w[2].first == Approx(2 * 45619200.0).epsilon(1e-12));
  CHECK(w[3].first == Approx(2 * 47975424.0).epsilon(1e-12));
  const double t_psi = duration_s(without, wo[0].second), t_b0 = duration_s(with, w[0].second);
  const auto dp = static_cast<std::size_t>(Category::dp_comm);
  INFO("T(Psi) " << t_psi << " s, T(b0) " << t_b0 << " s");
  CHECK(t_b0 < t_psi);
  CHECK(without.report.step_time_s - with.report.step_time_s == Approx(t_psi - t_b0).epsilon(1e-6));
  CHECK(without.report.exposed_comm_s_by_kind[dp] - with.report.exposed_comm_s_by_kind[dp] == Approx(t_psi - t_b0).epsilon(1e-6));
  // Under generic the default keeps the gather after the optimizer (the scenarios' numbers before
  // frameworks); giving the flag turns the overlap on there too.
  json gen = doc;
  gen["training"]["framework"] = "generic";
  gen["training"].erase("overlap_param_gather");
  CHECK_FALSE(parse_scenario(gen, "f.json").training.param_gather_overlaps_forward);
  gen["training"]["overlap_param_gather"] = true;
  CHECK(parse_scenario(gen, "f.json").training.param_gather_overlaps_forward);
  // DeepSpeed gathers inside the optimizer step; it refuses the flag below ZeRO-3.
  json ds = doc;
  ds["training"]["framework"] = "deepspeed";
  ds["training"]["overlap_param_gather"] = true;
  CHECK(refusal(ds).find("(rule no-param-gather-overlap-below-zero3)") != std::string::npos);
}

TEST_CASE("framework: the layout search enumerates only what the framework runs", "[sim]") {
  // Llama-3 70B on 256 H100 (scenarios/llama3-70b-h100x256.json): under megatron-core and deepspeed no
  // ZeRO-2/3 layout with PP > 1 is enumerated (their rules refuse it); under generic there are some.
  const json base = read_json_file(std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/llama3-70b-h100x256.json");
  auto count_zero23_pp = [&](const std::string& framework, std::size_t& total) {
    json doc = base;
    doc["training"]["framework"] = framework;
    doc["training"].erase("tp_comm_overlap");  // the base's flag, which deepspeed does not drive
    std::size_t n = 0;
    const auto layouts = enumerate_layouts(doc, "s.json", SearchOptions{});
    total = layouts.size();
    for (const Assignment& a : layouts) {
      int zero = 0, pp = 1;
      for (const auto& [path, v] : a) {
        if (path == "training.zero_stage") zero = v.get<int>();
        if (path == "training.pipeline_model_parallel_size") pp = v.get<int>();
      }
      n += zero >= 2 && pp > 1;
    }
    return n;
  };
  std::size_t generic_total = 0, mc_total = 0, ds_total = 0;
  CHECK(count_zero23_pp("generic", generic_total) > 0);
  CHECK(count_zero23_pp("megatron-core", mc_total) == 0);
  CHECK(count_zero23_pp("deepspeed", ds_total) == 0);
  CHECK(mc_total > 0);
  CHECK(mc_total < generic_total);
  CHECK(ds_total < mc_total);  // DeepSpeed also has no interleaved schedule and no ring CP
}

TEST_CASE("framework: deepspeed and torchtitan refuse Megatron-Core's EP all-to-all overlap", "[sim]") {
  json doc = doc_for("deepspeed");
  doc["model"]["num_moe_experts"] = 8;
  doc["model"]["moe_router_topk"] = 2;
  doc["training"]["expert_model_parallel_size"] = 2;
  doc["training"]["overlap_moe_expert_parallel_comm"] = true;
  CHECK(refusal(doc) ==
        "f.json: training.overlap_moe_expert_parallel_comm: overlap_moe_expert_parallel_comm true: training.framework \"deepspeed\" cannot "
        "run this (rule no-combined-1f1b): overlap_moe_expert_parallel_comm is Megatron-Core's combined 1F1B schedule "
        "(megatron/core/pipeline_parallel/combined_1f1b.py); DeepSpeed's pipeline engine runs one pass at a time "
        "[deepspeed/runtime/pipe/schedule.py TrainSchedule (one ForwardPass or BackwardPass per step)]");
  doc["training"]["framework"] = "torchtitan";
  doc["training"]["zero_stage"] = 0;
  CHECK(refusal(doc).find("training.overlap_moe_expert_parallel_comm: overlap_moe_expert_parallel_comm true: training.framework "
                          "\"torchtitan\" cannot run this (rule no-combined-1f1b)") != std::string::npos);
  doc["training"]["framework"] = "megatron-core";
  doc["training"]["zero_stage"] = 1;
  CHECK_NOTHROW(parse_scenario(doc, "f.json"));
}
