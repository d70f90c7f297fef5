// LoRA / QLoRA fine-tuning (training.finetune; models/workload/finetune.hpp): a 70B fine-tune's memory
// worked by hand, the FLOPs the frozen weights no longer take, and the validator's refusals.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "models/memory/memory_model.hpp"
#include "models/workload/finetune.hpp"
#include "sim/base/input_error.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"

using namespace cs::sim;
using nlohmann::json;

namespace {

json llama70b_lora() {
  return json::parse(R"({
    "name": "llama3-70b LoRA",
    "cluster": {"gpu": "H100-SXM", "nodes": 1, "gpus_per_node": 8, "intra_node": "nvswitch"},
    "model": {"preset": "llama3-70b"},
    "training": {"seq_length": 4096, "global_batch_size": 8, "micro_batch_size": 1, "tensor_model_parallel_size": 8,
                 "sequence_parallel": true, "finetune": {"method": "lora", "dim": 16, "alpha": 32}}
  })");
}

json tiny() {
  return json::parse(R"({
    "name": "tiny",
    "cluster": {"gpu": "H100-SXM", "nodes": 1, "gpus_per_node": 1, "intra_node": "nvswitch"},
    "model": {"num_layers": 4, "hidden_size": 1024, "num_attention_heads": 16, "vocab_size": 512,
              "ffn_hidden_size": 4096, "activation": "swiglu"},
    "training": {"seq_length": 2048, "global_batch_size": 1, "micro_batch_size": 1}
  })");
}

std::string error_of(const json& doc) {
  try {
    parse_scenario(doc, "ft.json");
  } catch (const cs::InputError& e) {
    return e.what();
  }
  return "";
}

// FLOPs of the step's passes (micro-batch >= 0: the optimizer's kernels, which scale with the trained
// parameters, left out).
double pass_flops(const SimulationResult& r) {
  double sum = 0;
  for (std::size_t id = 0; id < r.plan.graph.tasks().size(); ++id)
    if (r.plan.graph.tasks()[id].micro_batch >= 0) sum += r.plan.flops[id];
  return sum;
}

}  // namespace

TEST_CASE("finetune: a LoRA fine-tune of Llama 3 70B fits in memory by hand", "[sim]") {
  // Llama 3 70B (h 8192, 80 layers, 64 heads of 128, 8 KV groups, SwiGLU f 28672, vocabulary 128256
  // padded to a multiple of 128 x TP = 1024: 129024, untied, RoPE) on one node of 8 H100, TP 8 with SP,
  // PP 1, DP 1, s = 4096, b = 1, bf16, no recompute; LoRA r = 16 on QKV, out-proj, FC1, FC2.
  //
  // Frozen weights, per rank (TP 8): a layer's QKV 8192 x 10240 + out-proj 8192 x 8192 = 150,994,944 / 8
  //   = 18,874,368, its norms 2 x 8192 (replicated), its MLP 3 x 8192 x 28672 / 8 = 88,080,384: 106,971,136
  //   a layer, 8,557,690,880 for 80; embedding and LM head 129024 x 8192 / 8 = 132,120,576 each, the final
  //   norm 8192: 8,821,940,224 parameters x 2 B = 17,643,880,448 B.
  // Adapters r (k + n) with the rank's k and n: QKV 16 (8192 + 10 x 128) = 151,552, out-proj 16 (8 x 128 +
  //   8192) = 147,456, FC1 16 (8192 + 57344 / 8) = 245,760, FC2 16 (3584 + 8192) = 188,416: 733,184 a layer,
  //   58,654,720 for 80. Weights 17,643,880,448 + 2 x 58,654,720 = 17,761,189,888 B; grads (bf16) 117,309,440;
  //   Adam 12 x 58,654,720 = 703,856,640 (a full fine-tune would hold 2 + 12 B for all 8.8e9: 123.5 GB).
  // Activations, one micro-batch in flight (PP 1), T = 4096, th = T h / 8 = 4,194,304 (SP), per layer:
  //   norm inputs 4 th + QKV / FC1 inputs 4 th = 33,554,432; Q K V 2 T 128 (8 + 2) = 10,485,760; attention
  //   output 2 T 128 x 8 = 8,388,608; LSE 4 T 8 = 131,072; FC1 output 2 T 7168 = 58,720,256; FC2 input
  //   2 T 3584 = 29,360,128: 140,640,256; the adapters' x A 4 x 2 T 16 = 524,288: 141,164,544 x 80 =
  //   11,293,163,520; the last stage's final-norm and head inputs 4 th and fp32 logits 4 T 16128 = 281,018,368:
  //   11,574,181,888 B.
  // Buffers 32 MiB cuBLAS + 256 MiB NCCL = 301,989,888. Dynamic sum 30,458,527,744; reserved 1 GiB + 5% of
  //   it = 2,596,668,211.2. Total 33,055,195,955.2 B = 30.8 GiB of the H100's 80.
  const Scenario s = parse_scenario(llama70b_lora(), "ft.json");
  const auto mem = cs::models::peak_memory_per_gpu(s.model, s.training);
  CHECK(mem.weights_bytes == 17'761'189'888.0);
  CHECK(mem.grads_bytes == 117'309'440.0);
  CHECK(mem.optimizer_bytes == 703'856'640.0);
  CHECK(mem.activations_bytes == 11'574'181'888.0);
  CHECK(mem.buffers_bytes == 301'989'888.0);
  CHECK(mem.total_bytes() == Approx(33'055'195'955.2).epsilon(1e-12));
  CHECK(cs::models::fits_in_memory(mem, s.gpu));
  // QLoRA: the layers' GEMM weights (80 x (106,971,136 - 16,384 norm weights) = 8,556,380,160) in NF4 at
  // 4 + 8 / 64 + 32 / (64 x 256) bits = 0.515869140625 B each, the rest (265,560,064: embedding, head,
  // norms) in bf16: 4,413,972,480 + 531,120,128 = 4,945,092,608 B, plus the adapters' 117,309,440.
  json q = llama70b_lora();
  q["training"]["finetune"]["method"] = "qlora";
  const Scenario qs = parse_scenario(q, "ft.json");
  CHECK(cs::models::peak_memory_per_gpu(qs.model, qs.training).weights_bytes == Approx(4'945'092'608.0 + 117'309'440.0).epsilon(1e-12));
}

TEST_CASE("finetune: LoRA drops the frozen weights' wgrads and adds the adapters'", "[sim]") {
  // 4 layers, h 1024, 16 heads (MHA), SwiGLU f 4096, vocabulary 512, T = 2048, one micro-batch, one GPU.
  // The frozen weights' wgrads, 2 T per GEMM weight: a layer's QKV 1024 x 3072, out-proj 1024 x 1024, FC1
  // 1024 x 8192, FC2 4096 x 1024 = 16,777,216 weights, 2 x 2048 x 16,777,216 = 68,719,476,736 FLOPs, x 4 =
  // 274,877,906,944, and the LM head's 2 T h V = 2,147,483,648: 277,025,390,592 gone.
  // The adapters (r = 8) run 6 T r (k + n) per target (forward x A, (x A) B; backward two dgrads, two
  // wgrads): r (k + n) = 8 (1024 + 3072) + 8 (1024 + 1024) + 8 (1024 + 8192) + 8 (4096 + 1024) = 163,840,
  // 6 x 2048 x 163,840 = 2,013,265,920 a layer, 8,053,063,680 for 4.
  // So the step's passes lose 277,025,390,592 - 8,053,063,680 = 268,972,326,912 FLOPs, and the model FLOPs
  // (finetune_model_flops_per_step) drop by the same.
  json full = tiny();
  json lora = tiny();
  lora["training"]["finetune"] = {{"method", "lora"}, {"dim", 8}};
  const Scenario fs = parse_scenario(full, "ft.json"), ls = parse_scenario(lora, "ft.json");
  const SimulationResult fr = simulate(fs), lr = simulate(ls);
  CHECK(pass_flops(fr) - pass_flops(lr) == Approx(268'972'326'912.0).epsilon(1e-12));
  CHECK(cs::models::model_flops_per_step(fs.model, fs.training) - cs::models::finetune_model_flops_per_step(ls.model, ls.training) ==
        Approx(268'972'326'912.0).epsilon(1e-12));
  CHECK(lr.report.step_time_s < fr.report.step_time_s);
  // Only the adapters are trained: 4 x 163,840 = 655,360 parameters of Adam state (12 B) on the one GPU.
  CHECK(lr.report.memory.optimizer_bytes == 12.0 * 655'360);
  bool note = false;
  for (const std::string& n : lr.report.notes) note = note || n.find("LoRA fine-tuning") != std::string::npos;
  CHECK(note);
  // QLoRA: each layer GEMM dequantizes its NF4 weight before its forward and its dgrad: more time, no
  // more math FLOPs than LoRA's beyond the scale multiplies (one a weight, twice a step).
  lora["training"]["finetune"]["method"] = "qlora";
  const SimulationResult qr = simulate(parse_scenario(lora, "ft.json"));
  CHECK(pass_flops(qr) - pass_flops(lr) == Approx(2.0 * 4 * 16'777'216).epsilon(1e-12));
  CHECK(qr.report.step_time_s > lr.report.step_time_s);
}

TEST_CASE("finetune: the validator names what is wrong", "[sim]") {
  json doc = tiny();
  doc["training"]["finetune"] = {{"dim", 8}};
  CHECK_THAT(error_of(doc), Catch::Contains("ft.json") && Catch::Contains("training.finetune.method") && Catch::Contains("missing"));
  doc["training"]["finetune"] = {{"method", "lorra"}};
  CHECK_THAT(error_of(doc), Catch::Contains("training.finetune.method") && Catch::Contains("did you mean \"lora\""));
  doc["training"]["finetune"] = {{"method", "lora"}, {"dim", 0}};
  CHECK_THAT(error_of(doc), Catch::Contains("training.finetune.dim") && Catch::Contains("out of range"));
  doc["training"]["finetune"] = {{"method", "lora"}, {"target_modules", {"linear_qkv", "linear_fc3"}}};
  CHECK_THAT(error_of(doc), Catch::Contains("training.finetune.target_modules[1]") && Catch::Contains("linear_fc"));
  doc["training"]["finetune"] = {{"method", "lora"}, {"target_modules", json::array()}};
  CHECK_THAT(error_of(doc), Catch::Contains("training.finetune.target_modules") && Catch::Contains("non-empty"));
  doc["training"]["finetune"] = {{"method", "lora"}, {"rank", 8}};
  CHECK_THAT(error_of(doc), Catch::Contains("training.finetune.rank") && Catch::Contains("unknown key"));
  doc["training"]["finetune"] = "lora";
  CHECK_THAT(error_of(doc), Catch::Contains("training.finetune"));
  doc = tiny();
  doc["cluster"]["gpus_per_node"] = 2;
  doc["training"]["global_batch_size"] = 2;
  doc["training"]["zero_stage"] = 3;
  doc["training"]["finetune"] = {{"method", "lora"}};
  CHECK_THAT(error_of(doc), Catch::Contains("training.finetune") && Catch::Contains("zero_stage"));
  doc = tiny();
  doc["training"]["precision"] = "fp8";
  doc["training"]["finetune"] = {{"method", "qlora"}};
  CHECK_THAT(error_of(doc), Catch::Contains("training.finetune.method") && Catch::Contains("bf16"));
  doc["training"]["finetune"] = {{"method", "lora"}, {"target_modules", {"linear_qkv"}}};
  CHECK(error_of(doc).empty());
}
