// Validation against published training runs (sim/validation/validate_training.hpp): the sources' FLOP conventions
// by hand, the conversion of entries to scenarios, and the whole of calibrate/published/published-train.json
// held to the accuracy it reaches today.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "models/memory/memory_model.hpp"
#include "sim/base/input_error.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/validation/validate_training.hpp"

using namespace cs::sim;
using nlohmann::json;

namespace {

const std::string kPublished = std::string(CLUSTERSIM_SOURCE_DIR) + "/calibrate/published/published-train.json";

json entry() {
  return json::parse(R"json({
    "id": "t", "kind": "training", "group": "g", "confidence": "high",
    "model": {"name": "GPT-1.7B", "arch": "dense_transformer", "layers": 24, "hidden": 2304, "heads": 24,
              "kv_heads": 24, "ffn_hidden": 9216, "vocab": 51200},
    "cluster": {"gpu": "A100-SXM4-80GB", "count": 32, "gpus_per_node": 8, "nodes": 4,
                "inter_node": "8x Mellanox HDR 200Gb/s InfiniBand HCAs per node (Selene)"},
    "parallel": {"tp": 1, "pp": 1, "dp": 32, "cp": 1, "ep": 1, "vp": null, "sp": null, "zero": null, "fsdp": null,
                 "recompute": "full"},
    "batch": {"global": 512, "micro": null, "seq": 2048},
    "precision": "mixed", "framework": "Megatron-LM",
    "measured": {"tflops_per_gpu": 137}, "notes": "F=96*B*s*l*h^2*(1+s/6h+V/16lh)"
  })json");
}

// The published runs as the converter turns them into scenarios, looked up by id.
struct ConvertedPoints {
  std::vector<TrainingPoint> points = convert_published_training(read_json_file(kPublished), kPublished);
  json training_of(const std::string& id) const {
    for (const auto& p : points)
      if (p.id == id) return p.scenario["training"];
    FAIL("no point " << id);
    return json();
  }
  // Whether the point's assumptions mention `text`.
  bool says(const std::string& id, const std::string& text) const {
    for (const auto& p : points)
      if (p.id == id)
        return std::any_of(p.assumptions.begin(), p.assumptions.end(), [&](const std::string& a) { return a.find(text) != std::string::npos; });
    return false;
  }
};

}  // namespace

TEST_CASE("FLOP conventions of the sources, by hand", "[sim][validate]") {
  // SC'21: 96 B s l h^2 (1 + s/6h + V/16lh). B=512, s=2048, l=24, h=2304, V=51200:
  // 96 * 512 * 2048 * 24 * 2304^2 = 2415919104 * 5308416 = 1.282470e16;
  // 1 + 2048/13824 + 51200/(16 * 24 * 2304) = 1 + 0.148148 + 0.057870 = 1.206019
  CHECK(sc21_flops_per_step(512, 2048, 24, 2304, 51200) == Approx(1.282470e16 * 1.206019).epsilon(1e-5));
  // Megatron's num_floating_point_operations for GPT (MHA, 4h GeLU MLP) is 72 B s l h^2 (1 + s/6h + V/12lh).
  MegatronFlopsInput in{8, 4096, 32, 4096, 32, 32, 16384, 50304, false, 1};
  const double b = 8, s = 4096, l = 32, h = 4096, v = 50304;
  CHECK(megatron_model_flops_per_step(in) == Approx(72 * b * s * l * h * h * (1 + s / (6 * h) + v / (12 * l * h))).epsilon(1e-12));
  // With full recompute the SC'21 figure is 4/3 of the model FLOPs when V and s terms are dropped.
  CHECK(sc21_flops_per_step(1, 1, 1, 1e6, 0) / 72e12 == Approx(4.0 / 3).epsilon(1e-3));
}

TEST_CASE("an entry becomes a scenario: GPU name, network, layout defaults, measured throughput", "[sim][validate]") {
  const json doc = json::array({entry()});
  const auto points = convert_published_training(doc, "p.json");
  REQUIRE(points.size() == 1);
  const TrainingPoint& p = points[0];
  REQUIRE_FALSE(p.skipped);
  CHECK(p.scenario["cluster"]["gpu"] == "A100-80GB");
  CHECK(p.scenario["cluster"]["nodes"] == 4);
  CHECK(p.scenario["cluster"]["inter_node"]["link"] == "ib-hdr200");
  CHECK(p.scenario["training"]["recompute_granularity"] == "full");
  CHECK(p.scenario["training"]["micro_batch_size"] == 1);  // not published: assumed, and said so
  CHECK(p.scenario["training"]["overlap_grad_reduce"] == false);
  CHECK_FALSE(p.assumptions.empty());
  // tokens/s/GPU = B s / (F / (137e12 x 32)) / 32
  const double step = sc21_flops_per_step(512, 2048, 24, 2304, 51200) / (137e12 * 32);
  CHECK(p.measured_tokens_per_s_per_gpu == Approx(512.0 * 2048 / step / 32).epsilon(1e-12));
  CHECK_NOTHROW(parse_scenario(p.scenario, "p.json"));
  // Megatron-LM of 2021 had no flash kernel: unfused attention, and its default dropout 0.1 / 0.1.
  CHECK(p.scenario["model"]["attention_backend"] == "unfused");
  CHECK(p.scenario["model"]["attention_dropout"] == 0.1);
  CHECK(p.scenario["model"]["hidden_dropout"] == 0.1);
  // Megatron-Core (NeMo, Megatron-Bridge) runs Transformer Engine's fused kernel: the profile's own.
  json mcore = entry();
  mcore["framework"] = "NeMo 24.07 (Megatron-Core)";
  const auto mc = convert_published_training(json::array({mcore}), "p.json");
  REQUIRE(mc.size() == 1);
  CHECK_FALSE(mc[0].scenario["model"].contains("attention_backend"));
  CHECK_FALSE(mc[0].scenario["model"].contains("attention_dropout"));

  // llm-foundry's 2023 A100 runs ("attn_impl triton", the benchmark scripts' default) ran the Triton
  // FlashAttention kernel, which its author puts slightly slower than the CUDA FlashAttention v1 kernel:
  // FlashAttention v1, said so.
  json mpt = entry();
  mpt["framework"] = "MosaicML Composer + llm-foundry (PyTorch FSDP)";
  mpt["model"]["note"] = "MPT: ALiBi, FlashAttention in Triton (attn_impl triton), no GQA";
  const auto mp = convert_published_training(json::array({mpt}), "p.json");
  REQUIRE(mp.size() == 1);
  CHECK(mp[0].scenario["model"]["attention_backend"] == "flash1");
  CHECK(mp[0].scenario["model"]["position_embedding_type"] == "none");  // ALiBi has no kernel of its own
  bool said = false;
  for (const auto& a : mp[0].assumptions) said = said || a.find("attention through the Triton FlashAttention kernel (attn_impl triton, the benchmark scripts' default), taken as FlashAttention v1 (flash1)") != std::string::npos;
  CHECK(said);

  // Megatron-Bridge's gpt-oss recipes ("per recipe" in the file) recompute layernorm and moe_act.
  json oss = entry();
  oss["framework"] = "Megatron-Bridge 26.04";
  oss["model"]["name"] = "gpt-oss-120b";
  oss["parallel"]["recompute"] = "per recipe (not in table)";
  const auto op = convert_published_training(json::array({oss}), "p.json");
  REQUIRE(op.size() == 1);
  CHECK(op[0].scenario["training"]["recompute_granularity"] == "selective");
  CHECK(op[0].scenario["training"]["recompute_modules"] == json::array({"layernorm", "moe_act"}));
  // The GPT-OSS provider's biases (add_bias_linear) and YaRN RoPE (factor 32, mscale 1.347: Megatron-
  // Core's unfused RoPE), each said in the assumptions.
  CHECK(op[0].scenario["model"]["add_bias_linear"] == true);
  CHECK(op[0].scenario["model"]["apply_rope_fusion"] == false);
  bool biases_said = false, rope_said = false;
  for (const auto& a : op[0].assumptions) {
    biases_said = biases_said || a.find("TEGroupedMLP._apply_bias") != std::string::npos;
    rope_said = rope_said || a.find("unfused RoPE") != std::string::npos;
  }
  CHECK(biases_said);
  CHECK(rope_said);
  // Other families keep the defaults (no bias, fused RoPE).
  CHECK_FALSE(mp[0].scenario["model"].contains("add_bias_linear"));
  CHECK_FALSE(mp[0].scenario["model"].contains("apply_rope_fusion"));

  // An architecture the workload model cannot express is skipped with the reason, not dropped.
  json mamba = entry();
  mamba["model"]["arch"] = "hybrid_mamba_moe";
  const auto skipped = convert_published_training(json::array({mamba}), "p.json");
  REQUIRE(skipped.size() == 1);
  CHECK(skipped[0].skipped);
  CHECK(skipped[0].skip_reason.find("Mamba") != std::string::npos);

  // Not a published-training document: a clear error naming the file.
  CHECK_FALSE(is_published_training(json::object()));
  CHECK_THROWS_WITH(convert_published_training(json::array({json{{"kind", "nccl"}}}), "x.json"), Catch::Contains("x.json"));
}

TEST_CASE("published training runs: predicted vs measured", "[sim][validate][slow]") {
  // The file is in the repository: without it the test fails, it is never skipped.
  REQUIRE(std::filesystem::exists(kPublished));
  const TrainingValidation v = validate_published_training(read_json_file(kPublished), kPublished, 0);
  REQUIRE(v.points.size() == 165);
  // Qwen3-235B's EP 32 on 16 DP ranks is expressible with expert TP 1 (MoE parallel folding).
  for (const auto& p : v.points)
    if (p.id.find("Qwen3_235B") != std::string::npos) {
      INFO(p.id);
      CHECK_FALSE(p.skipped);
    }
  for (const auto& p : v.points) {
    INFO(p.id);
    if (p.skipped) {
      CHECK_FALSE(p.skip_reason.empty());  // every skipped entry says why
    } else {
      CHECK(p.measured_tokens_per_s_per_gpu > 0);
      CHECK(std::isfinite(p.error));
    }
  }
  const auto summary = [&](const std::string& key) {
    for (const auto& s : v.by_confidence)
      if (s.key == key) return s;
    for (const auto& s : v.by_group)
      if (s.key == key) return s;
    FAIL("no summary " << key);
    return ValidationSummary{};
  };

  // High-confidence points. The target of issue 4 is every point within 15% and a mean absolute error
  // below 10%. The mean is met (9.3%); "every point" is not (127 of 153), and cannot be while the file
  // holds the same Qwen3-30B layout at 9058 and 5113 tokens/s (26.02.01 / 26.02) and 10494 / 5275
  // (25.09 tokendrop / 25.11): no model matches both, hence the max bound. These assertions hold today's
  // honest bound so that a regression fails; tighten them as the model improves. The other misses:
  //  - SC'21, run with the paper's scripts' micro-batches, overlap and interleaving: 6-19% fast.
  //  - gpt-oss 8-11% fast (26.x, micro-batch 1; 21-25% before its biases and unfused YaRN RoPE) and
  //    Qwen3-30B EP16 15-17% slow (its recipes' HybridEP
  //    dispatcher, one copy per token and node over InfiniBand, not modelled; docs/validation.md).
  //  - Qwen3-235B (TP2 PP8 VP4, EP32 folded over TP x DP with expert TP 1, the recipe's TP overlap off):
  //    dropless 11-18% slow, the recipe's moe_a2a_overlap (the EP all-to-all hidden behind another
  //    micro-batch) not modelled; the 25.09 tokendrop row +15%.
  //  - MPT: the four 8-GPU 13B runs on 40 GB, 16-19% fast where their 16-128-GPU siblings are within
  //    3%; 70B on 64 x 40 GB +49%; 30B at 8k +34%; 1B at 32 GPUs +24% (its siblings within 5%).
  //  - BLOOM +19% (Megatron-DeepSpeed, 2022; +20% before its BF16_Optimizer's per-micro-batch cast and add, +14%
  //    with it, +19% with its PipelineEngine's partitioned pipeline tensors) and NeMo 24.07 GPT3-5B +16%.
  const auto high = summary("high");
  INFO("high: " << high.compared << " compared, mean |error| " << high.mean_abs_error << ", within 15% " << high.within_15pct
                << ", worst " << high.worst_id << " " << high.max_abs_error);
  CHECK(high.compared >= 153);
  CHECK(high.mean_abs_error < 0.092);  // today 8.9% (9.3% before the lightest-saving rule for runs predicted not to fit)
  // Every run that ran is predicted to fit, with the lightest memory saving its entry leaves open
  // (Nemotron-340B, gpt-oss-120B 25.11 and both Qwen3-30B PP2 rows: full recompute, each said so).
  CHECK(high.failed == 0);
  CHECK(high.within_15pct >= 131);     // of 153
  CHECK(high.max_abs_error < 1.5);
  // Each entry runs under its stack's training.framework and release (framework-defaults.json
  // training_framework), and FP8 GEMM inputs are stored in 1 byte (Transformer Engine). The file's
  // self-contradiction is reported apart, in the "conflicting" line: Qwen3-30B PP2 VP12 at 9058 (26.02.01)
  // and 5113 (26.02) tokens/s, the same stated run 1.77x apart (> 1.15 / 0.85), and Qwen3-30B PP2 VP24
  // mbs2 at 10494 (25.09, precision unstated, read as FP8) and 5275 (25.11, FP8-CS), 1.99x apart: the
  // converter builds one scenario for both, so no prediction is within 15% of both. Megatron-Bridge's
  // performance scripts' bf16 gradient reduction, its Qwen3-235B H100 recipe's TP overlap off and the
  // fp8 casts' transposed copy (4 bytes per element on Hopper), each from the stack's source, move the
  // 151 points of before from 8.28% to 8.37% (no closer: they slow the FP8 runs that were already slow);
  // the 149 left after the second conflict: 7.9%, 127 within 15%. Each stack's gradient accumulation
  // kernel as its code ran it (SC'21's autograd .grad +=, Megatron-LM 2022's fp16 main_grad hook, BLOOM's
  // BF16_Optimizer cast and add): 7.92% -> 7.81% (8.37% -> 8.27% over the 151), 128 within 15%.
  // The pipeline transfers of those codes (Megatron-LM's scatter-gather and blocking _communicate,
  // DeepSpeed's partitioned blocking PipelineEngine) move it the other way, 7.81% -> 7.86% (8.27% ->
  // 8.31%), 127 within 15%: BLOOM +13.6% -> +18.7% (its 4 x 100G Omni-Path NICs carry 1/4 of each
  // pipeline tensor), SC'21 9.0% -> 9.3%, Korthikanti 3.8% -> 3.7%.
  // gpt-oss as Megatron-Core runs it (the provider's add_bias_linear: the experts' FC2 bias through
  // TEGroupedMLP._apply_bias, 33 + 65 kernels a layer; YaRN's mscale forcing the unfused RoPE, 24 + 14
  // kernels): its 26.x rows +21..+25% -> +8..+11%, 25.11 +2.8% -> -7.6%; 7.86% -> 7.51% (8.31% ->
  // 7.97% over the 151), 127 -> 131 within 15%.
  // Issue 31: the DeepSeek-V3 1024-H100 run is compared (MLA, shared experts, MTP, Bridge's layout), -36.2%
  // (its EP64 all-to-all crosses 8 nodes; Bridge's HybridEP dispatcher is not modelled): 7.51% over 149 ->
  // 7.71% over 150, 132 within 15%.
  // Session 17 (issue 31): the recipes' flex token dispatchers (the Qwen3-30B H100 EP-16 runs -16% -> +36%:
  // the all-to-all over InfiniBand a quarter of what every routed copy sends) and the Megatron-Core release's
  // probabilities applied in the experts' activation (six runs the memory ladder pushed to full recompute now
  // fit their recipe: Nemotron 3 Nano -5..-8% -> +22..+27%, Qwen3-30B 25.11 +64% -> +120%): 7.71% -> 8.50%.
  // Both are the frameworks' mechanisms; what they expose is the small fine-grained MoE layer's
  // over-prediction (docs/validation.md), not fitted away.
  // Session 19 (issue 31): the MoE experts' forward kernels are host-issued behind the dispatcher's
  // device-to-host synchronisation (models/compute/compute_model.hpp "Host-issued kernels"; Megatron-Core's
  // token_dispatcher.py / experts.py): each takes at least 60 us, the small fine-grained layers' cost. Qwen3-30B
  // H100 EP-16 +35..+37% -> +12..+13%, Nemotron 3 Nano +22..+27% -> +9..+14%, gpt-oss-120B +8..+11% ->
  // -4..-1%, Qwen3-235B 2 points lower each: 8.50% -> 7.55%, 131 -> 138 within 15%.
  // Session 22 (issue 29): an fp8 GEMM's cast goes before the sequence-parallel all-gather in front of it,
  // as Transformer Engine quantizes before it gathers (models/workload/transformer.cpp add_quantize_casts),
  // so tp_comm_overlap overlaps that gather with its GEMM in fp8 as in bf16: Megatron-Bridge's H100 Llama 3
  // 70B / 405B rows 5-8 points faster, NeMo 24.07's fp8 rows 1-5: 7.55% -> 6.93%, 138 within 15%.
  // Session 23 (issue 29): a ring's pipeline fill is a chunk per channel, and a ring across nodes runs on
  // NCCL's channels there (two per NIC its node's ranks use), so a one-GPU-a-node data-parallel ring fills
  // with 1/8 of the bytes: NeMo 24.07's GPT-3 20B (TP2, DP32) fp8 +8.0% -> +9.3%, Nemotron-8B +14.98% ->
  // +15.29%, which leaves 15% by 0.3 points: 137 within 15%.
  CHECK(high.conflicting == 4);
  CHECK(high.mean_abs_error < 0.0705);  // today 6.94% over the other 154
  CHECK(high.within_15pct >= 137);      // of 154
  CHECK(summary("conflicting").compared == 4);

  // NeMo 24.03 long-sequence runs (4k..1M tokens, CP up to 32) meet the target: attention through
  // flash-attn 2 (its curve measured on the H200, 0.52-0.58 of cuDNN's rate) and TP-communication overlap.
  // Mean |error| 4.0% (6.5% with FA2 at the paper's 2/3); the longest, 512k and 1M, now 9-11% slow.
  const auto longseq = summary("nemo_long_sequence_CP_H100_FP8");
  CHECK(longseq.compared == 9);
  CHECK(longseq.within_15pct == longseq.compared);
  CHECK(longseq.mean_abs_error < 0.10);

  // Groups near or at the issue's target today, held to their current bound.
  const auto korthikanti = summary("megatron_korthikanti_recompute_A100");
  CHECK(korthikanti.compared == 9);
  CHECK(korthikanti.within_15pct == korthikanti.compared);  // meets the target: every point within 15%
  // and the mean below 10%: today 3.8% (3.0% before the fp16 main_grad.add_ hook of every micro-batch,
  // which Megatron-LM ran under --fp16 until September 2022, made the DP 1 points 4-5% slower)
  CHECK(korthikanti.mean_abs_error < 0.04);
  const auto sc21 = summary("megatron_sc21_weak_scaling_A100");
  CHECK(sc21.compared == 10);
  // The runs as the paper's own scripts ran them (Megatron-LM examples/sc21/run_table_1.sh @ de7dc40):
  // micro-batches 16..1, torch DDP's overlapped all-reduce up to 18.4B, interleaved chunks from 76B,
  // --fp16. With them every point is 6-19% fast (mean 10.7%, all positive): the micro-batch of 1 assumed
  // before made 7.5B and 18.4B 19-21% slow and hid it (7.8% then). The A100 of the 2020 container
  // (pytorch 20.12) is what is left to model. With autograd's per-micro-batch .grad += (6 B a parameter,
  // the code of the time had no gradient accumulation fusion) the pipelined points move 1-4.5% closer:
  // mean 9.0%, every point still fast (3.7-18.6%). The code's pipeline scatter-gather (1/8 of each tensor
  // between nodes) and blocking transfers: 9.3% (4.2-18.6%).
  CHECK(sc21.mean_abs_error < 0.095);
  CHECK(sc21.max_abs_error < 0.22);
  const auto mpt = summary("mosaicml_llmfoundry_MPT_FSDP");
  CHECK(mpt.compared == 81);
  // llm-foundry's 2023 runs through FlashAttention v1 (their Triton kernel's nearest, half FA2's rate) and A100 GEMMs
  // carried by the A100's ceiling and SM rate: mean |error| 6.6%, 73 of 81 within 15% (11.9% and 58 with
  // neither).
  CHECK(mpt.mean_abs_error < 0.07);
  CHECK(mpt.within_15pct >= 73);
  // Llama-3 70B on 64 H100 in FP8 (Megatron-Bridge, interleaved 1F1B, TP-communication overlap): within 12%
  // each (today -3.8..-6.8%, the fp8 all-gathers overlapped with their GEMMs; -9..-11.3% while each fp8 cast
  // stood between a gather and its GEMM; -8..-10.5% before the fp8 casts wrote Hopper's transposed copy, 4 bytes per
  // element instead of 3; -3..-6% while the LM head ran in fp8, which Megatron-Core's output layer, a
  // plain ColumnParallelLinear outside Transformer Engine, does not).
  for (const auto& p : v.points)
    if (!p.skipped && p.id.find("LLAMA3_70B") != std::string::npos) {
      INFO(p.id);
      CHECK(std::abs(p.error) < 0.12);
    }
}

TEST_CASE("validate: each stack's gradient accumulation kernel, as its code ran it", "[sim][validate]") {
  // SC'21 (Megatron-LM @ de7dc40f, fp16, no grad buffers): autograd's .grad +=; Korthikanti et al. (2022,
  // --fp16: gradient_accumulation_fusion off, the contiguous buffer's main_grad.add_ hook); BLOOM
  // (DeepSpeed's BF16_Optimizer: bf16 gradient cast to its fp32 buffer, then added; reduced in bf16); the
  // Megatron-Core / NeMo / Bridge and llm-foundry runs keep the default (fused, no scenario key).
  const ConvertedPoints points;
  auto training_of = [&](const std::string& id) { return points.training_of(id); };
  auto says = [&](const std::string& id, const std::string& text) { return points.says(id, text); };
  CHECK(training_of("sc21_t1_529.6B")["gradient_accumulation"] == "accumulate_grad");
  CHECK(training_of("sc21_t1_1.7B")["gradient_accumulation"] == "accumulate_grad");
  CHECK(says("sc21_t1_529.6B", "PyTorch autograd in the fp16 .grad"));
  CHECK(training_of("korthikanti_530B_full_recompute")["gradient_accumulation"] == "main_grad_add");
  CHECK(says("korthikanti_530B_full_recompute", "param.main_grad.add_(param.grad.data)"));
  const json bloom = training_of("bloom_176b_384gpu");
  CHECK(bloom["gradient_accumulation"] == "cast_add");
  CHECK(bloom["main_grads_dtype"] == "fp32");
  CHECK(bloom["grad_reduce_dtype"] == "bf16");
  CHECK(says("bloom_176b_384gpu", "BF16_Optimizer"));
  CHECK_FALSE(training_of("mpt_a100_40gb_13b_s2048_8gpu_bf16_ac_mb4").contains("gradient_accumulation"));
  CHECK_FALSE(training_of("nemo2407_h100_fp8_GPT3-5B_64gpu").contains("gradient_accumulation"));
  CHECK_FALSE(training_of("mtnlg_530b_2240gpu").contains("gradient_accumulation"));  // not read from its code: left fused
}

TEST_CASE("validate: each stack's pipeline transfers, as its code moved them", "[sim][validate]") {
  // Megatron-LM 2021-2022 (SC'21 @ de7dc40f, Korthikanti et al.): --scatter-gather-tensors-in-pipeline on
  // by default (a no-op under sequence parallelism) and _communicate's wait + torch.cuda.synchronize();
  // Megatron-DeepSpeed (BLOOM, MT-NLG): DeepSpeed's PipelineEngine, partitioned tensors over TP and
  // blocking dist.send / dist.recv; the Megatron-Core / NeMo / Bridge and llm-foundry runs keep the
  // defaults (no scenario key: whole tensors, sent on their own streams).
  const ConvertedPoints points;
  auto training_of = [&](const std::string& id) { return points.training_of(id); };
  auto says = [&](const std::string& id, const std::string& text) { return points.says(id, text); };
  for (const char* id : {"sc21_t1_529.6B", "korthikanti_530B_full_recompute", "korthikanti_530B_selective_sp"}) {
    INFO(id);
    CHECK(training_of(id)["pipeline_tensor_split"] == "scatter_gather");
    CHECK(training_of(id)["pipeline_p2p_blocking"] == true);
    CHECK(says(id, "torch.cuda.synchronize()"));
  }
  for (const char* id : {"bloom_176b_384gpu", "mtnlg_530b_2240gpu"}) {
    INFO(id);
    CHECK(training_of(id)["pipeline_tensor_split"] == "partitioned");
    CHECK(training_of(id)["pipeline_p2p_blocking"] == true);
    CHECK(says(id, "DeepSpeed's PipelineEngine"));
  }
  for (const char* id : {"mpt_a100_40gb_13b_s2048_8gpu_bf16_ac_mb4", "nemo2407_h100_fp8_GPT3-5B_64gpu"}) {
    INFO(id);
    CHECK_FALSE(training_of(id).contains("pipeline_tensor_split"));
    CHECK_FALSE(training_of(id).contains("pipeline_p2p_blocking"));
  }
}

TEST_CASE("validate is honest: every field of an entry is mapped or listed as not understood", "[sim][validate]") {
  json e = entry();
  e["parallel"]["zero"] = 1;                  // a ZeRO stage given as an integer: understood
  e["parallel"]["sp"] = "likely (TP>1)";      // words where a boolean belongs: not understood
  e["parallel"]["weird_knob"] = "on";         // a field the converter has no mapping for
  e["model"]["moe"] = {{"capacity_factor", 1.25}};  // token dropping is not modelled
  const auto points = convert_published_training(json::array({e}), "p.json");
  REQUIRE(points.size() == 1);
  const TrainingPoint& p = points[0];
  REQUIRE_FALSE(p.skipped);
  CHECK(p.scenario["training"]["zero_stage"] == 1);
  std::vector<std::string> not_understood;
  for (const auto& a : p.assumptions)
    if (a.rfind("not understood: ", 0) == 0) not_understood.push_back(a);
  // Exactly the three fields above, each with its value and what was used instead; "mixed" precision,
  // "full" recompute, the HDR200 network, NVSwitch nodes and the numbers are all mapped.
  CHECK(not_understood == std::vector<std::string>{
                              "not understood: model.moe.capacity_factor = 1.25 (not modelled; ignored)",
                              "not understood: parallel.sp = \"likely (TP>1)\" (sequence parallelism from the framework's default)",
                              "not understood: parallel.weird_knob = \"on\" (not modelled; ignored)"});
  // ZeRO in words.
  json words = entry();
  words["parallel"]["zero"] = "DeepSpeed ZeRO stage 2";
  const auto w = convert_published_training(json::array({words}), "p.json");
  CHECK(w[0].scenario["training"]["zero_stage"] == 2);
}

TEST_CASE("validate is honest: a run that ran gets the lightest memory saving that fits, or counts as failed", "[sim][validate]") {
  // GPT-1.7B (24 layers, h 2304, 24 heads, V 51200) at micro-batch 8, seq 2048 on 8 x A100-40GB, TP 1, no
  // optimizer sharding (Megatron-LM 2021, unfused attention). Weights, grads and Adam: 16 B x 1.7e9 = 27 GB.
  // Activations per layer and micro-batch (Korthikanti eq. 2, 16-bit):
  //   s b h (34 + 5 a s / h) = 2048 * 8 * 2304 * (34 + 5 * 24 * 2048 / 2304) = 5.3 GB, x 24 layers = 127 GB;
  //   selective keeps 34 s b h = 1.28 GB per layer, 31 GB: 58 GB with the weights, neither fits in 40 GB;
  //   full keeps the layer inputs 2 s b h = 75 MB per layer (1.8 GB) plus the fp32 logits 4 s b V = 3.4 GB:
  //   ~32 GB, fits. Sequence parallelism is not open (TP 1). Between them Megatron's recompute_method block
  //   checkpoints the first k layers and keeps the other 24 - k whole (5.3 GB each, no recompute): room for
  //   one, k = 23 (~37.5 GB; k = 22 needs ~43 GB > 40 GiB). So: recompute not stated -> block 23 assumed;
  // recompute stated "none" -> the stated layout stands and the point fails, its error still counted.
  json open = entry();
  open["id"] = "open";
  open["cluster"] = {{"gpu", "A100-SXM4-40GB"}, {"count", 8}, {"gpus_per_node", 8}, {"nodes", 1}};
  open["batch"] = {{"global", 64}, {"micro", 8}, {"seq", 2048}};
  open["parallel"]["dp"] = 8;
  open["parallel"]["recompute"] = "not stated";
  json stated = open;
  stated["id"] = "stated";
  stated["parallel"]["recompute"] = "none";
  const TrainingValidation v = validate_published_training(json::array({open, stated}), "p.json", 1);
  REQUIRE(v.points.size() == 2);
  const TrainingPoint& a = v.points[0];
  const TrainingPoint& b = v.points[1];
  REQUIRE_FALSE(a.skipped);
  REQUIRE_FALSE(b.skipped);
  CHECK(a.scenario["training"]["recompute_granularity"] == "full");
  CHECK(a.scenario["training"]["recompute_method"] == "block");
  CHECK(a.scenario["training"]["recompute_num_layers"] == 23);
  CHECK(a.fits_in_memory);
  CHECK_FALSE(a.failed);
  bool said = false;
  for (const auto& s : a.assumptions)
    said = said || s.find("full recompute of 23 layers per model chunk (recompute_method block) assumed, the lightest memory saving") != std::string::npos;
  CHECK(said);
  CHECK(b.scenario["training"]["recompute_granularity"] == "none");
  CHECK_FALSE(b.fits_in_memory);
  CHECK(b.failed);
  CHECK(std::isfinite(b.error));
  // Counted, not excluded: both compared, one failed.
  const auto& high = v.by_confidence[0];
  CHECK(high.key == "high");
  CHECK(high.compared == 2);
  CHECK(high.failed == 1);
  CHECK(high.mean_abs_error == Approx((std::abs(a.error) + std::abs(b.error)) / 2));
  CHECK(to_text(v).find("FAILED: predicted not to fit, although it ran") != std::string::npos);
  CHECK(to_json(v)["by_confidence"][0]["failed"] == 1);
}

TEST_CASE("validate maps each entry to the training.framework and release its stack ran", "[sim][validate]") {
  auto mapped = [](const std::string& framework, const std::string& precision) {
    json e = entry();
    e["framework"] = framework;
    e["precision"] = precision;
    const auto points = convert_published_training(json::array({e}), "p.json");
    REQUIRE(points.size() == 1);
    REQUIRE_FALSE(points[0].skipped);
    return points[0];
  };
  auto said = [](const TrainingPoint& p, const std::string& part) {
    return std::any_of(p.assumptions.begin(), p.assumptions.end(), [&](const std::string& a) { return a.find(part) != std::string::npos; });
  };
  // Megatron-Bridge -> nemo 2.x with bf16 gradients reduced in bf16 (its performance scripts set
  // grad_reduce_in_fp32 = False over bf16_mixed()'s True); NeMo -> nemo 2.x-performance;
  // llm-foundry -> fsdp1; Megatron-DeepSpeed -> deepspeed 0.17; Megatron-LM's unstated "mixed" -> fp16.
  const TrainingPoint bridge = mapped("Megatron-Bridge / NeMo 26.02", "BF16");
  CHECK(bridge.scenario["training"]["framework"] == "nemo");
  CHECK(bridge.scenario["training"]["framework_release"] == "2.x");
  CHECK(said(bridge, "framework \"Megatron-Bridge / NeMo 26.02\" -> training.framework nemo, release 2.x"));
  CHECK(said(bridge, "bf16 gradients reduced in bf16 (the performance scripts' grad_reduce_in_fp32 = False"));
  CHECK(bridge.scenario["training"]["main_grads_dtype"] == "bf16");
  // Its FP8 recipes keep and all-gather the parameters in FP8 (fp8_param_gather): not modelled, said so.
  CHECK_FALSE(said(bridge, "fp8_param_gather"));
  CHECK(said(mapped("Megatron-Bridge / NeMo 26.02", "FP8-CS"), "the FP8 recipes' fp8_param_gather (parameters kept in FP8 and all-gathered in 1 byte) not modelled"));
  CHECK(bridge.scenario["training"]["grad_reduce_dtype"] == "bf16");
  const TrainingPoint nemo = mapped("NeMo 24.07 (Megatron-Core)", "FP8");
  CHECK(nemo.scenario["training"]["framework_release"] == "2.x-performance");
  const TrainingPoint foundry = mapped("MosaicML Composer + llm-foundry (PyTorch FSDP)", "bf16");
  CHECK(foundry.scenario["training"]["framework"] == "fsdp");
  CHECK(foundry.scenario["training"]["framework_release"] == "fsdp1");
  const TrainingPoint ds = mapped("Megatron-DeepSpeed (bigscience fork)", "BF16");
  CHECK(ds.scenario["training"]["framework"] == "deepspeed");
  const TrainingPoint lm = mapped("Megatron-LM", "mixed");
  CHECK(lm.scenario["training"]["framework"] == "megatron-core");
  CHECK(lm.scenario["training"]["precision"] == "fp16");
  CHECK(lm.layout.find(" fp16") != std::string::npos);
  const TrainingPoint lm_bf16 = mapped("Megatron-LM", "BF16");
  CHECK(lm_bf16.scenario["training"]["precision"] == "bf16");
  const TrainingPoint unknown = mapped("somebody's trainer", "bf16");
  CHECK_FALSE(unknown.scenario["training"].contains("framework"));  // generic, and listed as not understood
  CHECK(said(unknown, "not understood: framework = \"somebody's trainer\""));

  // What the mapping moves, by hand: GPT-1.7B, TP 1, DP 32. Weights and gradients are unsharded (ZeRO-1,
  // Megatron-Core's distributed optimizer, for Megatron-Bridge; none for Megatron-LM), so each rank holds
  // all psi parameters in bf16 (2 psi bytes); Megatron-Bridge's performance runs keep bf16 gradients (2 psi
  // bytes: Megatron-Core's grad buffer takes the parameter dtype without grad_reduce_in_fp32) and reduce
  // them in bf16, Megatron-LM's fp16 gradients 2 psi, as the generic default (bf16) does; Megatron-Core's own
  // default under bf16 (core_r0.14) is fp32 main gradients, 4 psi bytes, reduced in fp32.
  auto memory = [](const json& scenario) {
    const Scenario s = parse_scenario(scenario, "p.json");
    return cs::models::memory_per_gpu(s.model, s.training, 0);
  };
  CHECK(bridge.scenario["training"]["zero_stage"] == 1);
  const auto mb = memory(bridge.scenario);
  CHECK(mb.grads_bytes == Approx(mb.weights_bytes).epsilon(1e-12));
  const auto ml = memory(lm.scenario);
  CHECK(ml.grads_bytes == Approx(ml.weights_bytes).epsilon(1e-12));
  const TrainingPoint core = mapped("Megatron-Core r0.8.0", "BF16");
  const auto mc = memory(core.scenario);
  CHECK(mc.grads_bytes == Approx(2 * mc.weights_bytes).epsilon(1e-12));
  CHECK(parse_scenario(core.scenario, "p.json").training.grad_reduce_dtype == cs::models::Dtype::fp32);
  CHECK(parse_scenario(bridge.scenario, "p.json").training.grad_reduce_dtype == cs::models::Dtype::bf16);
  CHECK(parse_scenario(lm.scenario, "p.json").training.grad_reduce_dtype == cs::models::Dtype::fp16);
}

TEST_CASE("validate takes Megatron-Bridge's TP overlap per recipe: off for Qwen3-235B on H100, on for Llama-3 70B", "[sim][validate]") {
  // Megatron-Bridge's Qwen3 235B H100 recipe runs CommOverlapConfig(tp_comm_overlap=False) (every release
  // from v0.2.0 to 067f987); its Llama-3 70B H100 recipe the userbuffers TP overlap (tp_comm_overlap=True).
  const json doc = read_json_file(kPublished);
  auto one = [&](const std::string& id) {
    for (const auto& e : doc)
      if (e.value("id", "") == id) {
        const auto points = convert_published_training(json::array({e}), "p.json");
        REQUIRE(points.size() == 1);
        REQUIRE_FALSE(points[0].skipped);
        return points[0];
      }
    FAIL("no entry " << id);
    return TrainingPoint{};
  };
  const TrainingPoint qwen = one("mbridge_26.04_h100_Qwen3_235B_a22B_256gpu_FP8");
  CHECK(qwen.scenario["training"]["tp_comm_overlap"] == false);
  CHECK(std::find(qwen.assumptions.begin(), qwen.assumptions.end(),
                  "tp_comm_overlap off (Megatron-Bridge's Qwen3 235B H100 recipe: CommOverlapConfig(tp_comm_overlap=False))") !=
        qwen.assumptions.end());
  CHECK(parse_scenario(qwen.scenario, "p.json").training.tp_comm_overlap == false);
  const TrainingPoint llama = one("mbridge_26.04_h100_LLAMA3_70B_64gpu_FP8");
  CHECK(llama.scenario["training"]["tp_comm_overlap"] == true);
}

TEST_CASE("the scenario loader tells the workload whether the GPU's fp8 casts write a transposed copy", "[sim][validate]") {
  // Hopper's FP8 GEMMs read row-wise only: two fp8 copies per cast; Blackwell one (models/workload).
  json s = json::parse(R"json({
    "name": "fp8", "cluster": {"gpu": "H100-SXM", "gpus_per_node": 8, "nodes": 1, "intra_node": "nvswitch"},
    "model": {"preset": "llama3-8b"},
    "training": {"seq_length": 4096, "global_batch_size": 8, "micro_batch_size": 1, "precision": "fp8"}
  })json");
  CHECK(parse_scenario(s, "s.json").training.fp8_transposed_copy);
  s["cluster"]["gpu"] = "B200";
  CHECK_FALSE(parse_scenario(s, "s.json").training.fp8_transposed_copy);
}

TEST_CASE("validate flags two entries it turns into one scenario, measured more than 1.15 / 0.85 apart, as conflicting", "[sim][validate]") {
  // Qwen3-30B on 16 H100 as the file has it: 25.09's precision "unstated (likely FP8)" is read as FP8, the
  // precision 25.11 states (FP8-CS), so the converter builds one scenario for both; measured 10494 and
  // 5275 tokens/s, 1.99x > 1.353, no prediction is within 15% of both. The stated runs differ (the
  // precision text), so this is the second kind: "same simulated run".
  const json doc = read_json_file(kPublished);
  json pair = json::array();
  for (const auto& e : doc)
    if (e.value("id", "") == "mbridge_25.09_h100_Qwen3_30B_a3B_tokendrop__16gpu_unstated" ||
        e.value("id", "") == "mbridge_25.11_h100_Qwen3_30B_a3B_16gpu_FP8-CS")
      pair.push_back(e);
  REQUIRE(pair.size() == 2);
  CHECK(conflict_key_of(pair[0]) != conflict_key_of(pair[1]));
  const auto points = convert_published_training(pair, "p.json");
  REQUIRE(points.size() == 2);
  for (const auto& p : points) {
    INFO(p.id);
    CHECK(p.conflicting);
    CHECK(p.conflict.find("same simulated run (one converted scenario) as mbridge_") == 0);
    CHECK(p.conflict.find(": measured 5275..10494 tokens/s per GPU, 1.99x (more than 1.353") != std::string::npos);
  }
  // Entries that convert to different scenarios (another micro-batch) are two runs.
  pair[1]["batch"]["micro"] = 1;
  pair[1]["batch"]["grad_accum"] = nullptr;
  const auto apart = convert_published_training(pair, "p.json");
  CHECK_FALSE(apart[0].conflicting);
  CHECK_FALSE(apart[1].conflicting);
}

TEST_CASE("validate flags the same stated run measured more than 1.15 / 0.85 apart as conflicting", "[sim][validate]") {
  // Two entries differing only in id, release and measured figure. The prediction is the same for both;
  // the one that minimises the larger error of a < b, P = 2ab / (a + b), is off by (b - a) / (a + b) on
  // each: at b / a = 1.5 that is 0.5 / 2.5 = 20% (> 15%: conflicting), at 1.3 it is 0.3 / 2.3 = 13%.
  CHECK(kConflictFactor == Approx(1.352941).epsilon(1e-6));
  auto pair = [](double ratio) {
    json a = entry(), b = entry();
    a["id"] = "a";
    b["id"] = "b";
    b["framework"] = "Megatron-LM r2";
    b["measured"]["tflops_per_gpu"] = 137 * ratio;
    b["notes"] = a["notes"];
    return json::array({a, b});
  };
  const auto apart = convert_published_training(pair(1.5), "p.json");
  CHECK(apart[0].conflicting);
  CHECK(apart[1].conflicting);
  CHECK(apart[0].conflict.find("same stated run as b: measured ") == 0);
  CHECK(apart[0].conflict.find(", 1.50x (more than 1.353") != std::string::npos);
  const auto close = convert_published_training(pair(1.3), "p.json");
  CHECK_FALSE(close[0].conflicting);
  CHECK_FALSE(close[1].conflicting);
  // A stated difference (the micro-batch) is another run, however far apart.
  json other = pair(1.5);
  other[1]["batch"]["micro"] = 2;
  CHECK_FALSE(convert_published_training(other, "p.json")[0].conflicting);
  CHECK(conflict_key_of(other[0]) != conflict_key_of(other[1]));
  // A null field says nothing: the same key as a missing one.
  json with_null = entry();
  with_null["parallel"]["weird"] = nullptr;
  CHECK(conflict_key_of(with_null) == conflict_key_of(entry()));
}

TEST_CASE("validate reports conflicting points in their own line, out of the confidence mean", "[sim][validate]") {
  // GPT-1.7B on 8 A100s (fast), measured 137 and 1.5 x 137 TFLOP/s: both compared, both in the point list
  // with their errors, the high line's statistics over no point, the conflicting line over both.
  json a = entry(), b = entry();
  for (json* e : {&a, &b}) {
    (*e)["cluster"] = {{"gpu", "A100-SXM4-80GB"}, {"count", 8}, {"gpus_per_node", 8}, {"nodes", 1}};
    (*e)["parallel"]["dp"] = 8;
    (*e)["batch"] = {{"global", 16}, {"micro", 1}, {"seq", 2048}};
  }
  a["id"] = "a";
  b["id"] = "b";
  b["measured"]["tflops_per_gpu"] = 137 * 1.5;
  const TrainingValidation v = validate_published_training(json::array({a, b}), "p.json", 1);
  REQUIRE(v.points.size() == 2);
  CHECK(v.points[0].conflicting);
  const auto& high = v.by_confidence[0];
  CHECK(high.key == "high");
  CHECK(high.compared == 2);
  CHECK(high.conflicting == 2);
  CHECK(high.within_15pct == 0);
  REQUIRE(v.by_confidence.back().key == "conflicting");
  const auto& c = v.by_confidence.back();
  CHECK(c.compared == 2);
  CHECK(c.mean_abs_error == Approx((std::abs(v.points[0].error) + std::abs(v.points[1].error)) / 2));
  // The same prediction for both; their measured figures 1.5 apart, so their errors are too.
  CHECK((1 + v.points[0].error) / (1 + v.points[1].error) == Approx(1.5).epsilon(1e-9));
  const std::string text = to_text(v);
  CHECK(text.find("CONFLICTING (see below)") != std::string::npos);
  CHECK(text.find("(2 conflicting, in their own line)") != std::string::npos);
  CHECK(to_json(v)["points"][0]["conflicting"] == true);
  // The group line keeps every point.
  CHECK(v.by_group[0].compared == 2);
  CHECK(v.by_group[0].conflicting == 0);
}

TEST_CASE("validate runs SC'21 Table 1 as the paper's scripts ran it", "[sim][validate]") {
  // Megatron-LM examples/sc21/run_table_1.sh @ de7dc40: GPT-76.1B at TP 8, PP 4 with
  // --num-layers-per-virtual-pipeline-stage 5: 60 layers / 4 stages = 15 per stage, / 5 = 3 chunks; MBS 2;
  // --DDP-impl local (all-reduce after the backward). GPT-7.5B: MBS 16, --DDP-impl torch (overlapped).
  auto sc21 = [](const std::string& name, double layers, double hidden, double heads, double tp, double pp, double gpus) {
    json e = entry();
    e["group"] = "megatron_sc21_weak_scaling_A100";
    e["framework"] = "Megatron-LM (PTD-P, interleaved schedule where used)";
    e["precision"] = "mixed (fp16/bf16 not stated in table)";
    e["model"]["name"] = name;
    e["model"]["layers"] = layers;
    e["model"]["hidden"] = hidden;
    e["model"]["heads"] = heads;
    e["model"]["kv_heads"] = heads;
    e["model"]["ffn_hidden"] = 4 * hidden;
    e["parallel"]["tp"] = tp;
    e["parallel"]["pp"] = pp;
    e["parallel"]["dp"] = 32;
    e["cluster"]["count"] = gpus;
    e["cluster"]["nodes"] = gpus / 8;
    e["batch"]["global"] = 1792;
    const auto points = convert_published_training(json::array({e}), "p.json");
    REQUIRE_FALSE(points[0].skipped);
    return points[0];
  };
  const TrainingPoint big = sc21("GPT-76.1B", 60, 10240, 80, 8, 4, 1024);
  CHECK(big.scenario["training"]["virtual_pipeline_model_parallel_size"] == 3);
  CHECK(big.scenario["training"]["pipeline_schedule"] == "interleaved");
  CHECK(big.scenario["training"]["micro_batch_size"] == 2);
  CHECK(big.scenario["training"]["overlap_grad_reduce"] == false);
  CHECK(big.scenario["training"]["precision"] == "fp16");
  CHECK(big.layout.find(" VP3 mbs2 ") != std::string::npos);
  const TrainingPoint small = sc21("GPT-7.5B", 36, 4096, 32, 4, 1, 128);
  CHECK(small.scenario["training"]["micro_batch_size"] == 16);
  CHECK(small.scenario["training"]["overlap_grad_reduce"] == true);
  CHECK_FALSE(small.scenario["training"].contains("virtual_pipeline_model_parallel_size"));
  // Outside SC'21's group the same framework keeps its 2021-2022 defaults: micro-batch 1, no overlap.
  json other = entry();
  const auto o = convert_published_training(json::array({other}), "p.json");
  CHECK(o[0].scenario["training"]["micro_batch_size"] == 1);
  CHECK(o[0].scenario["training"]["overlap_grad_reduce"] == false);
}

// Issue 32: an entry's numbers are bounded before the conversion computes with them.
TEST_CASE("validate refuses an entry number outside its scenario key's range (gpus_per_node 0 was SIGFPE)", "[sim][validate]") {
  json e = entry();
  e["cluster"]["gpus_per_node"] = 0;
  REQUIRE_THROWS_WITH(convert_published_training(json::array({entry(), e}), "p.json"),
                      "p.json: [1].cluster.gpus_per_node: 0 is out of range (expected a number in [1, 1024], the range of the scenario key "
                      "it becomes)");
  e = entry();
  e["parallel"]["pp"] = 5e-324;
  REQUIRE_THROWS_WITH(convert_published_training(json::array({e}), "p.json"),
                      "p.json: [0].parallel.pp: 5e-324 is out of range (expected a number in [1, 1048576], the range of the scenario key it "
                      "becomes)");
}

TEST_CASE("validate refuses a measured figure that converts to no throughput (0 gave an inf% error)", "[sim][validate]") {
  json e = entry();
  e["measured"] = {{"tokens_per_s_per_gpu", 0}};
  REQUIRE_THROWS_WITH(convert_published_training(json::array({e}), "p.json"),
                      "p.json: [0].measured.tokens_per_s_per_gpu: converts to 0 tokens/s per GPU (expected a measured figure giving 0.001 "
                      "to 1e+09 tokens/s per GPU)");
}

TEST_CASE("fidelity guard: no group of the three published files worse than its baseline", "[sim][validate][slow]") {
  // calibrate/published/fidelity-baseline.json holds every group's points and MAPE; a group of 3 or more
  // points more than 1 point of MAPE worse, or with fewer points compared, fails here with the group, old
  // and new. Updating the baseline is a deliberate edit of that file, a reason per changed group.
  const std::string dir = std::string(CLUSTERSIM_SOURCE_DIR) + "/calibrate/published/";
  std::vector<GroupFidelity> groups;
  for (const char* name : {"published-train.json", "published-train-2.json", "blackwell-moe-train.json"}) {
    const std::string file = dir + name;
    REQUIRE(std::filesystem::exists(file));  // in the repository: never skipped
    const TrainingValidation v = validate_published_training(read_json_file(file), file, 0);
    for (auto& g : group_fidelity(v, file)) groups.push_back(std::move(g));
  }
  const std::string baseline = dir + "fidelity-baseline.json";
  const auto regressions = fidelity_regressions(read_json_file(baseline), baseline, groups);
  for (const auto& r : regressions) UNSCOPED_INFO(r);
  CHECK(regressions.empty());
}

TEST_CASE("validate converts an MFU-only entry with its source's own FLOP convention", "[sim][validate]") {
  // MosaicML (llm-foundry): 3 (2 N s + 4 l h s^2) per sequence of the H100's 989 TFLOP/s. The MPT-70B row
  // at 512 H100 publishes MFU 41.25 % and 1007 tokens/s per GPU: the MFU alone gives the same throughput.
  const std::string file = std::string(CLUSTERSIM_SOURCE_DIR) + "/calibrate/published/published-train-2.json";
  json mpt;
  for (const json& e : read_json_file(file))
    if (e["id"] == "mpt_h100_80gb_70b_s2048_512gpu_amp_bf16_ac_mb8") mpt = e;
  REQUIRE(mpt.is_object());
  mpt["measured"] = {{"mfu_pct", 41.25}};
  const auto mosaic = convert_published_training(json::array({mpt}), "t.json");
  REQUIRE_FALSE(mosaic[0].skipped);
  CHECK(mosaic[0].measured_tokens_per_s_per_gpu == Approx(1007).epsilon(0.005));
  CHECK(mosaic[0].measured_from.find("MosaicML") != std::string::npos);

  // Any other source: Megatron's model FLOPs (72 B s l h^2 (1 + s/6h + V/12lh) for GPT with a 4h MLP) of
  // the A100's dense BF16 312 TFLOP/s.
  json e = entry();
  e["measured"] = {{"mfu_pct", 40}};
  e["notes"] = "";
  const auto megatron = convert_published_training(json::array({e}), "t.json");
  REQUIRE_FALSE(megatron[0].skipped);
  const double B = 512, s = 2048, l = 24, h = 2304, V = 51200;
  const double flops = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  CHECK(megatron[0].measured_tokens_per_s_per_gpu == Approx(0.40 * 312e12 * B * s / flops).epsilon(1e-9));
}

TEST_CASE("validate maps the published GPU names to the catalog, or skips them as not in the catalog", "[sim][validate]") {
  json b200 = entry();
  b200["cluster"]["gpu"] = "B200 (DGX-B200, 180 GB HBM3e)";
  b200["cluster"]["inter_node"] =
      "not stated in the table (NVIDIA's B200 reference architecture in dgxc-benchmarking: 8x 400 Gb/s InfiniBand compute links per node)";
  json odd = entry();
  odd["cluster"]["gpu"] = "H100 (96GB HBM2e, 500W power limit)";
  const auto points = convert_published_training(json::array({b200, odd}), "t.json");
  REQUIRE_FALSE(points[0].skipped);
  CHECK(points[0].scenario["cluster"]["gpu"] == "B200");
  CHECK(points[0].scenario["cluster"]["inter_node"]["link"] == "ib-ndr400");
  REQUIRE(points[1].skipped);
  CHECK(points[1].skip_reason == "GPU not in the catalog: \"H100 (96GB HBM2e, 500W power limit)\"");
}

TEST_CASE("validate runs llm-foundry's benchmark rows through the Triton flash kernel they ran, whatever the note says", "[sim][validate]") {
  // submit_benchmarks.py's --attn_impl default was 'triton' at both commits that added the H100 rows
  // (framework-defaults.json, llm-foundry 2023); the entries' note says "attn_impl flash".
  const std::string file = std::string(CLUSTERSIM_SOURCE_DIR) + "/calibrate/published/published-train-2.json";
  std::size_t mpt = 0;
  for (const auto& p : convert_published_training(read_json_file(file), file)) {
    if (p.group != "mosaicml_llmfoundry_MPT_FSDP") continue;
    ++mpt;
    INFO(p.id);
    REQUIRE_FALSE(p.skipped);
    CHECK(p.scenario["model"]["attention_backend"] == "flash1");
  }
  CHECK(mpt == 68);
}

TEST_CASE("validate converts a DeepSeek-V3 run: MLA, shared experts, dense first layers, MTP and the recipe's layout", "[sim][validate]") {
  // blackwell-moe-train.json's 26.08 GB200 row: MLA q_lora 1536, kv_lora 512, qk 128 + 64 RoPE, v 128; 256
  // experts top-8 of 2048, 1 shared of 2048, the first 3 layers dense; PP4 x VP4, EP64, MXFP8. The converter
  // maps the dims into model.mla (Megatron's qk_head_dim / qk_pos_emb_head_dim into qk_nope_head_dim /
  // qk_rope_head_dim), the shared experts into moe_shared_expert_intermediate_size 1 x 2048, the dense layers
  // into a moe_layer_freq list, and takes Megatron-Bridge's DeepSeek-V3 recipe for what the row leaves out:
  // SwiGLU, one MTP module, the 16-virtual-stage layout and recompute_modules [mla_up_proj].
  const std::string file = std::string(CLUSTERSIM_SOURCE_DIR) + "/calibrate/published/blackwell-moe-train.json";
  const json doc = read_json_file(file);
  json row;
  for (const auto& e : doc)
    if (e.value("id", "") == "mb26.08_gb200_deepseekv3_256g_mxfp8_gbs4096") row = e;
  REQUIRE(row.is_object());
  const auto points = convert_published_training(json::array({row}), "b.json");
  REQUIRE(points.size() == 1);
  const TrainingPoint& p = points[0];
  INFO(p.skip_reason);
  REQUIRE_FALSE(p.skipped);
  const json& m = p.scenario["model"];
  CHECK(m["mla"] == json({{"q_lora_rank", 1536}, {"kv_lora_rank", 512}, {"qk_nope_head_dim", 128}, {"qk_rope_head_dim", 64}, {"v_head_dim", 128}}));
  CHECK(m["moe_shared_expert_intermediate_size"] == 2048);
  REQUIRE(m["moe_layer_freq"].size() == 61);
  CHECK(m["moe_layer_freq"][2] == 0);
  CHECK(m["moe_layer_freq"][3] == 1);
  CHECK(m["activation"] == "swiglu");
  CHECK(m["mtp_num_layers"] == 1);
  CHECK_FALSE(m.contains("kv_channels"));
  const json& t = p.scenario["training"];
  CHECK(t["pipeline_model_parallel_layout"] == "Et*4|(t*4|)*14tmL");
  CHECK(t["recompute_modules"] == json::array({"mla_up_proj"}));
  // No field of the row is left unread.
  for (const auto& a : p.assumptions) CHECK(a.find("not understood: model.mla") == std::string::npos);
  for (const auto& a : p.assumptions) CHECK(a.find("not understood: model.moe") == std::string::npos);
  // The scenario loads: 671B + the MTP module, 16 virtual stages of 4 layers but the last (1).
  const Scenario s = parse_scenario(p.scenario, "b.json");
  CHECK(s.model.mla.kv_lora_rank == 512);
  CHECK(s.training.vp == 4);
  CHECK(s.training.pipeline_layout.size() == 16);
  CHECK(s.training.pipeline_layout.back() == 1);
  CHECK(cs::models::parameter_count(s.model) == 671026404352.0 + 11610067968.0);
}
