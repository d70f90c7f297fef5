#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "models/hardware/gpu_catalog.hpp"
#include "models/workload/transformer.hpp"

using namespace cs::models;

namespace {

ModelConfig preset(const char* name) {
  auto m = find_preset(name);
  REQUIRE(m.has_value());
  return *m;
}

TrainingConfig training(std::int64_t seq, std::int64_t micro, int tp = 1, bool sp = false) {
  TrainingConfig t;
  t.seq_length = seq;
  t.global_batch_size = micro;
  t.micro_batch_size = micro;
  t.tp = tp;
  t.sequence_parallel = sp;
  return t;
}

const Op& find_op(const std::vector<Op>& ops, const std::string& name) {
  auto it = std::find_if(ops.begin(), ops.end(), [&](const Op& o) { return o.name == name; });
  REQUIRE(it != ops.end());
  return *it;
}

bool has_op(const std::vector<Op>& ops, const std::string& name) {
  return std::any_of(ops.begin(), ops.end(), [&](const Op& o) { return o.name == name; });
}

std::vector<std::string> collective_names(const std::vector<Op>& ops) {
  std::vector<std::string> out;
  for (const auto& o : ops) {
    if (o.kind == OpKind::collective) out.push_back(o.name);
  }
  return out;
}

double d_layers(const ModelConfig& m) { return static_cast<double>(m.num_layers); }

double sum_flops(const std::vector<Op>& ops, OpKind kind) {
  double s = 0;
  for (const auto& o : ops) {
    if (o.kind == kind) s += o.flops * o.repeat;
  }
  return s;
}

}  // namespace

TEST_CASE("presets are found by name, in a fixed order, and unknown names are not", "[models]") {
  const std::vector<std::string> expected{"gpt3-175b",  "llama2-7b",   "llama2-13b",
                                          "llama2-70b", "llama3-8b",   "llama3-70b",
                                          "llama3-405b", "bert-large", "mixtral-8x7b",
                                          "deepseek-moe-16b", "deepseek-v3", "nemotron-h-56b",
                                          "nemotron-h-8b", "nemotron3-nano-30b-a3b"};
  CHECK(preset_names() == expected);
  for (const auto& n : expected) {
    auto m = find_preset(n);
    REQUIRE(m.has_value());
    CHECK(m->name == n);
    CHECK(m->hidden_size % m->num_attention_heads == 0);
  }
  CHECK_FALSE(find_preset("llama3-7b").has_value());
  CHECK_FALSE(preset("bert-large").causal);
  CHECK(preset("mixtral-8x7b").num_moe_experts == 8);
  CHECK(preset("mixtral-8x7b").moe_router_topk == 2);
}

TEST_CASE("parameter counts match the published sizes", "[models]") {
  // Llama 2 7B: per layer QKV 3 h^2 = 50,331,648, out h^2 = 16,777,216, SwiGLU 3 h f = 135,266,304,
  // two RMSNorms 2 h = 8,192: 202,383,360; x 32 = 6,476,267,520; embeddings untied 2 V h =
  // 262,144,000; final norm 4,096. Total 6,738,415,616 — the exact count of the HF checkpoint.
  CHECK(parameter_count(preset("llama2-7b")) == 6738415616.0);
  // Llama 3 70B: QKV h (a + 2g) d = 8192 * 80 * 128 = 83,886,080; out 67,108,864; SwiGLU
  // 3 * 8192 * 28672 = 704,643,072; norms 16,384 -> 855,654,400 per layer, x 80 = 68,452,352,000;
  // embeddings 2 * 128256 * 8192 = 2,101,346,304; final norm 8,192. Total 70,553,706,496 (~70.6e9).
  CHECK(parameters_per_layer(preset("llama3-70b")) == 855654400.0);
  CHECK(parameter_count(preset("llama3-70b")) == 70553706496.0);
  // Mixtral 8x7B: attention 41,943,040 + 8 experts x 3 h f = 1,409,286,144 + router 32,768 + norms
  // 8,192 = 1,451,270,144 per layer; x 32 + 262,144,000 + 4,096 = 46,702,792,704 (HF: 46.7B).
  CHECK(parameter_count(preset("mixtral-8x7b")) == 46702792704.0);
  // GPT-3: 12 h^2 + 4 h (LayerNorm weight + bias) per layer; tied embedding 50257 h + 2048 learned
  // positions; biases ignored. 174.59e9, within 0.3% of the paper's 175B.
  CHECK(parameter_count(preset("gpt3-175b")) == Approx(175e9).epsilon(0.005));
  CHECK(embedding_parameters(preset("gpt3-175b")) == (50257.0 + 2048.0) * 12288.0);
  // BERT-large: ~335M without biases, pooler and token types (paper: 340M).
  CHECK(parameter_count(preset("bert-large")) == Approx(340e6).epsilon(0.03));
  CHECK(parameter_count(preset("llama3-8b")) == Approx(8.03e9).epsilon(0.005));
  CHECK(parameter_count(preset("llama3-405b")) == Approx(405.8e9).epsilon(0.005));
}

TEST_CASE("DeepSeekMoE 16B: a dense first layer, shared and routed experts, by hand", "[models]") {
  // HF deepseek-ai/deepseek-moe-16b-base: h 2048, 16 heads of 128 (MHA), SwiGLU, 64 routed experts of
  // 1408, top-6, 2 shared (2816 together), layer 0 dense (10944), vocabulary 102400 untied.
  //   attention 2048 x (16 + 32) x 128 + 16 x 128 x 2048 = 16,777,216; norms 4,096
  //   dense layer:  + 3 x 2048 x 10944 = 67,239,936                              -> 84,021,248
  //   MoE layer:    + 64 x 3 x 2048 x 1408 = 553,648,128, router 2048 x 64 = 131,072,
  //                 shared 3 x 2048 x 2816 = 17,301,504                          -> 587,862,016
  //   27 MoE layers 15,872,274,432 + the dense one + embeddings 2 x 102400 x 2048 = 419,430,400
  //   + final norm 2,048 = 16,375,728,128 (the published 16.4B).
  const ModelConfig m = preset("deepseek-moe-16b");
  CHECK_FALSE(is_moe_layer(m, 0));
  for (std::int64_t l = 1; l < 28; ++l) CHECK(is_moe_layer(m, l));
  CHECK(parameters_per_layer(m, false) == 84021248.0);
  CHECK(parameters_per_layer(m, true) == 587862016.0);
  CHECK(parameter_count(m) == 16375728128.0);
  // Per token (model FLOPs 6 N_active s-independent part): 28 attention blocks 469,762,048, the dense
  // MLP 67,239,936, 27 x (6 x 8,650,752 + 131,072 + 17,301,504) = 1,872,101,376 routed + shared +
  // router, and the LM head 209,715,200: 2.62e9 GEMM parameters a token passes (the 2.8B "activated"
  // of the paper counts the input embedding too).
  TrainingConfig t = training(4096, 1);
  const double per_token_params = 469762048.0 + 67239936.0 + 1872101376.0 + 209715200.0;
  const double attention = 4.0 * 28 * 4096 * 2048;  // 4 s a d per layer, causal counted in full
  CHECK(model_flops_per_step(m, t) == Approx(4096.0 * (6.0 * per_token_params + 3.0 * attention)).epsilon(1e-12));

  // Layer ops: layer 0 is a dense MLP, the others route (EP 1 here: no all-to-all) and run the shared
  // experts beside, with their backward before the unpermutation's.
  const LayerOps dense = transformer_layer_ops(m, t, false, false);
  CHECK(find_op(dense.forward, "fc1").gemm.n == 2 * 10944);
  CHECK_FALSE(has_op(dense.forward, "router"));
  const LayerOps moe = transformer_layer_ops(m, t);
  CHECK(has_op(moe.forward, "router"));
  CHECK(find_op(moe.forward, "shared_fc1").gemm.n == 2 * 2816);
  CHECK(find_op(moe.forward, "shared_fc2").gemm.k == 2816);
  CHECK(find_op(moe.forward, "fc1.experts").gemm.n == 2 * 1408);
  CHECK(find_op(moe.forward, "fc1.experts").repeat == 64);  // all 64 experts on the one rank
  CHECK(find_op(moe.forward, "fc1.experts").gemm.m == 4096 * 6 / 64);  // balanced: T k / E tokens each
  const auto at = [&](const std::string& name) {
    return std::find_if(moe.backward.begin(), moe.backward.end(), [&](const Op& o) { return o.name == name; }) - moe.backward.begin();
  };
  CHECK(at("shared_fc2_dgrad") < at("shared_fc1_wgrad"));
  CHECK(at("shared_fc1_wgrad") < at("unpermute_bwd"));
  CHECK(at("fc1.experts_wgrad") < at("router_wgrad"));

  // The experts' forward kernels are host-issued (behind the dispatcher's device-to-host sync), their
  // backward and every other op not; under one CUDA graph for the whole iteration none is.
  for (const Op& op : moe.forward) CHECK(op.host_issued == (op.name.find(".experts") != std::string::npos));
  for (const Op& op : moe.backward) CHECK_FALSE(op.host_issued);
  for (const Op& op : dense.forward) CHECK_FALSE(op.host_issued);
  t.cuda_graph_impl = CudaGraphImpl::full_iteration;
  for (const Op& op : transformer_layer_ops(m, t).forward) CHECK_FALSE(op.host_issued);
  t.cuda_graph_impl = CudaGraphImpl::transformer_engine;
  CHECK(find_op(transformer_layer_ops(m, t).forward, "fc1.experts").host_issued);
}

TEST_CASE("model FLOPs: GPT-3 matches Megatron's closed form", "[models]") {
  // Per token and layer, forward: QKV 2*3h^2, out-proj 2h^2, MLP 2*8h^2 -> 24 h^2, attention scores and
  // context 2*2*s*h; backward doubles it: 3 * (24 h^2 + 4 s h) = 72 h^2 + 12 s h. LM head 3 * 2 h V.
  // Per step (B sequences of s tokens): B s [l (72 h^2 + 12 s h) + 6 h V]
  //   = 72 B s l h^2 (1 + s / (6 h) + V / (12 l h)).
  const ModelConfig m = preset("gpt3-175b");
  TrainingConfig t = training(2048, 1);
  t.global_batch_size = 1536;
  const double B = 1536, s = 2048, l = 96, h = 12288, V = 50257;
  const double closed = 72.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (12.0 * l * h));
  CHECK(model_flops_per_step(m, t) == Approx(closed).epsilon(1e-12));
}

TEST_CASE("model FLOPs: Llama 3 70B per token by hand", "[models]") {
  // seq 8192. Per layer forward: 2 * (83,886,080 + 67,108,864 + 704,643,072) = 1,711,276,032 GEMM
  // FLOPs + attention 4 * s * a d = 4 * 8192 * 8192 = 268,435,456 -> 1,979,711,488; x 3 x 80 =
  // 475,130,757,120; LM head 6 * 8192 * 128256 = 6,304,038,912. Per token 481,434,796,032
  // (6 * 70.55e9 = 423e9 plus attention).
  const ModelConfig m = preset("llama3-70b");
  TrainingConfig t = training(8192, 1);
  t.global_batch_size = 4;
  CHECK(model_flops_per_step(m, t) == 4.0 * 8192.0 * 481434796032.0);
}

TEST_CASE("layer ops: tp = 1 has no collectives and the Megatron GEMM shapes", "[models]") {
  const ModelConfig m = preset("llama3-8b");
  const TrainingConfig t = training(4096, 2);
  const LayerOps ops = transformer_layer_ops(m, t);
  CHECK(collective_names(ops.forward).empty());
  CHECK(collective_names(ops.backward).empty());
  const std::int64_t T = 2 * 4096;
  const Op& qkv = find_op(ops.forward, "qkv");
  CHECK(qkv.kind == OpKind::gemm);
  CHECK(qkv.gemm.m == T);
  CHECK(qkv.gemm.n == (32 + 2 * 8) * 128);
  CHECK(qkv.gemm.k == 4096);
  CHECK(qkv.flops == 2.0 * T * 6144 * 4096);
  CHECK(find_op(ops.forward, "fc1").gemm.n == 2 * 14336);  // gate and up together
  CHECK(find_op(ops.forward, "fc2").gemm.k == 14336);
  // Backward shapes: dgrad [T, n] x [n, k], wgrad [k, T] x [T, n]; each the forward's FLOPs.
  const Op& dg = find_op(ops.backward, "qkv_dgrad");
  const Op& wg = find_op(ops.backward, "qkv_wgrad");
  CHECK((dg.gemm.m == T && dg.gemm.n == 4096 && dg.gemm.k == 6144));
  CHECK((wg.gemm.m == 4096 && wg.gemm.n == 6144 && wg.gemm.k == T));
  CHECK(sum_flops(ops.backward, OpKind::gemm) == 2.0 * sum_flops(ops.forward, OpKind::gemm));
  // Attention: causal forward 2 b hq s^2 d; backward 2.5x.
  const Op& attn = find_op(ops.forward, "attn");
  CHECK(attn.attention.heads_q == 32);
  CHECK(attn.attention.heads_kv == 8);
  CHECK(attn.flops == 2.0 * 2 * 32 * 4096.0 * 4096.0 * 128);
  CHECK(find_op(ops.backward, "attn_bwd").flops == 2.5 * attn.flops);
  // Memory-bound bytes: RMSNorm reads x writes y; SwiGLU reads 2 writes 1; residual reads 2 writes 1.
  CHECK(find_op(ops.forward, "ln1").bytes == 2.0 * T * 4096 * 2);
  CHECK(find_op(ops.forward, "ln1").mem_kind == MemOpKind::norm);
  CHECK(find_op(ops.forward, "act").bytes == 3.0 * T * 14336 * 2);
  CHECK(find_op(ops.forward, "add1").bytes == 3.0 * T * 4096 * 2);
  CHECK(find_op(ops.forward, "qkv").dtype == Dtype::bf16);
  TrainingConfig fp8 = t;
  fp8.precision = Dtype::fp8;
  CHECK(find_op(transformer_layer_ops(m, fp8).forward, "fc2").dtype == Dtype::fp8);
}

TEST_CASE("layer ops: TP without SP all-reduces after the row-parallel GEMMs and on input grads",
          "[models]") {
  const ModelConfig m = preset("llama3-70b");
  const TrainingConfig t = training(4096, 1, 8, false);
  const LayerOps ops = transformer_layer_ops(m, t);
  CHECK(collective_names(ops.forward) == std::vector<std::string>{"ar_attn", "ar_mlp"});
  CHECK(collective_names(ops.backward) == std::vector<std::string>{"ar_mlp_bwd", "ar_attn_bwd"});
  const double bytes = 4096.0 * 8192 * 2;
  for (const auto* list : {&ops.forward, &ops.backward}) {
    for (const auto& o : *list) {
      if (o.kind != OpKind::collective) continue;
      CHECK(o.collective == CollectiveKind::all_reduce);
      CHECK(o.group == ProcessGroup::tp);
      CHECK(o.comm_bytes == bytes);
    }
  }
  // Heads split by TP: 8 query heads and 1 KV group per rank.
  CHECK(find_op(ops.forward, "qkv").gemm.n == (8 + 2) * 128);
  CHECK(find_op(ops.forward, "proj").gemm.k == 8 * 128);
  CHECK(find_op(ops.forward, "attn").attention.heads_q == 8);
  // Megatron's order: out-proj then its all-reduce; the input-gradient all-reduce between dgrad and
  // wgrad of the column-parallel GEMM.
  auto index = [&](const std::vector<Op>& l, const std::string& n) {
    return std::find_if(l.begin(), l.end(), [&](const Op& o) { return o.name == n; }) - l.begin();
  };
  CHECK(index(ops.forward, "ar_attn") == index(ops.forward, "proj") + 1);
  CHECK(index(ops.backward, "ar_attn_bwd") == index(ops.backward, "qkv_dgrad") + 1);
  CHECK(index(ops.backward, "qkv_wgrad") == index(ops.backward, "ar_attn_bwd") + 1);
}

TEST_CASE("layer ops: sequence parallel uses all-gather / reduce-scatter and their conjugates",
          "[models]") {
  const ModelConfig m = preset("llama3-70b");
  const TrainingConfig t = training(4096, 1, 8, true);
  const LayerOps ops = transformer_layer_ops(m, t);
  CHECK(collective_names(ops.forward) ==
        std::vector<std::string>{"ag_attn", "rs_attn", "ag_mlp", "rs_mlp"});
  // Backward: all-gather of the output gradient (conjugate of the forward RS), re-gather of the saved
  // sharded input for wgrad, reduce-scatter of the input gradient (conjugate of the forward AG).
  CHECK(collective_names(ops.backward) ==
        std::vector<std::string>{"ag_mlp_out_bwd", "ag_mlp_bwd", "rs_mlp_bwd", "ag_attn_out_bwd",
                                 "ag_attn_bwd", "rs_attn_bwd"});
  for (const auto& o : ops.forward) {
    if (o.kind == OpKind::collective) CHECK(o.comm_bytes == 4096.0 * 8192 * 2);  // full tensor
  }
  // GEMMs still see all T tokens; norms and residuals see T / t.
  CHECK(find_op(ops.forward, "qkv").gemm.m == 4096);
  CHECK(find_op(ops.forward, "ln1").bytes == 2.0 * (4096 / 8) * 8192 * 2);
  // SP does not change GEMM or attention FLOPs.
  const LayerOps no_sp = transformer_layer_ops(m, training(4096, 1, 8, false));
  CHECK(sum_flops(ops.forward, OpKind::gemm) == sum_flops(no_sp.forward, OpKind::gemm));
}

TEST_CASE("layer ops: TP splits GEMM and attention FLOPs evenly", "[models]") {
  const ModelConfig m = preset("llama2-70b");
  const LayerOps one = transformer_layer_ops(m, training(4096, 1, 1));
  const LayerOps eight = transformer_layer_ops(m, training(4096, 1, 8));
  for (auto kind : {OpKind::gemm, OpKind::attention_fwd}) {
    CHECK(8.0 * sum_flops(eight.forward, kind) == Approx(sum_flops(one.forward, kind)).epsilon(1e-12));
  }
}

TEST_CASE("op FLOPs add up to the model FLOPs (non-causal model, tp = 1)", "[models]") {
  // model_flops_per_step counts attention in full (non-causal) and backward as exactly 2x forward. The
  // ops execute what the kernels do: causal attention is half, and flash attention's backward is 2.5x
  // its forward (it recomputes the scores). So the honest identity is: for a non-causal model,
  //   sum over layers and head of forward (GEMM + attention) FLOPs * 3 * micro-batches = model FLOPs,
  // and separately backward GEMM FLOPs = 2x forward GEMM FLOPs.
  for (const char* name : {"llama3-8b", "mixtral-8x7b", "llama2-13b"}) {
    ModelConfig m = preset(name);
    m.causal = false;
    TrainingConfig t = training(2048, 2);
    t.global_batch_size = 8;  // 4 micro-batches
    const LayerOps layer = transformer_layer_ops(m, t);
    const LayerOps head = lm_head_ops(m, t);
    const double fwd = d_layers(m) * (sum_flops(layer.forward, OpKind::gemm) +
                                      sum_flops(layer.forward, OpKind::attention_fwd)) +
                       sum_flops(head.forward, OpKind::gemm);
    CHECK(3.0 * fwd * 4 == Approx(model_flops_per_step(m, t)).epsilon(1e-12));
    CHECK(sum_flops(layer.backward, OpKind::gemm) == 2.0 * sum_flops(layer.forward, OpKind::gemm));
    CHECK(sum_flops(head.backward, OpKind::gemm) == 2.0 * sum_flops(head.forward, OpKind::gemm));
    // Causal attention executes half the non-causal FLOPs.
    ModelConfig causal = m;
    causal.causal = true;
    CHECK(sum_flops(transformer_layer_ops(causal, t).forward, OpKind::attention_fwd) ==
          0.5 * sum_flops(layer.forward, OpKind::attention_fwd));
  }
}

TEST_CASE("layer ops: recompute", "[models]") {
  const ModelConfig m = preset("llama3-8b");
  TrainingConfig t = training(4096, 1, 4, true);
  const LayerOps none = transformer_layer_ops(m, t);
  CHECK_FALSE(has_op(none.backward, "recompute_attn"));

  t.recompute = Recompute::selective;
  const LayerOps sel = transformer_layer_ops(m, t);
  const Op& re = find_op(sel.backward, "recompute_attn");
  CHECK(re.kind == OpKind::attention_fwd);
  CHECK(re.flops == find_op(sel.forward, "attn").flops);
  CHECK(sel.backward.size() == none.backward.size() + 1);

  t.recompute = Recompute::full;
  const LayerOps full = transformer_layer_ops(m, t);
  REQUIRE(full.backward.size() == none.backward.size() + full.forward.size());
  for (std::size_t i = 0; i < full.forward.size(); ++i) {
    CHECK(full.backward[i].name == "recompute_" + full.forward[i].name);
    CHECK(full.backward[i].kind == full.forward[i].kind);
    CHECK(full.backward[i].flops == full.forward[i].flops);
  }
  // The TP collectives are replayed too.
  CHECK(has_op(full.backward, "recompute_ag_attn"));
  CHECK(has_op(full.backward, "recompute_rs_mlp"));
}

TEST_CASE("layer ops: recompute_modules re-run exactly the modules named", "[models]") {
  const ModelConfig m = preset("llama3-8b");
  TrainingConfig t = training(4096, 1, 4, true);
  t.recompute = Recompute::selective;
  const LayerOps core = transformer_layer_ops(m, t);
  // layernorm + mlp, without core_attn: both norms and the dense MLP forward (fc1, act, fc2) re-run.
  t.recompute_modules = {false, true, true, false};
  const LayerOps lm = transformer_layer_ops(m, t);
  CHECK_FALSE(has_op(lm.backward, "recompute_attn"));
  for (const char* name : {"ln1", "ln2", "fc1", "act", "fc2"}) {
    INFO(name);
    const Op& re = find_op(lm.backward, std::string("recompute_") + name);
    CHECK(re.flops == find_op(lm.forward, name).flops);
    CHECK(re.bytes == find_op(lm.forward, name).bytes);
  }
  CHECK(lm.backward.size() == core.backward.size() - 1 + 5);
  // Each re-run comes before the backward that needs it: ln2 and the MLP before fc2's dgrad, ln1
  // before the attention block's backward.
  auto at = [&](const char* name) {
    for (std::size_t i = 0; i < lm.backward.size(); ++i)
      if (lm.backward[i].name == name) return i;
    FAIL("no op " << name);
    return std::size_t(0);
  };
  CHECK(at("recompute_fc2") < at("fc2_dgrad"));
  CHECK(at("recompute_ln2") < at("fc1_wgrad"));
  CHECK(at("recompute_ln1") < at("qkv_wgrad"));

  // moe_act: each local expert's activation re-runs before its FC2 backward; dense models ignore it.
  const ModelConfig moe = preset("mixtral-8x7b");
  TrainingConfig te = training(4096, 1, 1, false);
  te.recompute = Recompute::selective;
  te.recompute_modules = {true, false, false, true};
  const LayerOps ma = transformer_layer_ops(moe, te);
  CHECK(find_op(ma.backward, "recompute_act.experts").bytes == find_op(ma.forward, "act.experts").bytes);
  CHECK(find_op(ma.backward, "recompute_act.experts").repeat == 8);  // each of the 8 local experts
  CHECK(transformer_layer_ops(m, t).backward.size() == lm.backward.size());
  TrainingConfig dense_moe_act = t;
  dense_moe_act.recompute_modules = {true, false, false, true};
  CHECK(transformer_layer_ops(m, dense_moe_act).backward.size() == core.backward.size());
}

TEST_CASE("layer ops: MoE router, top-k experts and all-to-all on the EP group", "[models]") {
  const ModelConfig m = preset("mixtral-8x7b");
  const std::int64_t T = 4096;
  // EP = 1: all 8 experts on the rank, each sees T * topk / E = 1024 tokens.
  const LayerOps ep1 = transformer_layer_ops(m, training(T, 1));
  CHECK(collective_names(ep1.forward).empty());
  CHECK(find_op(ep1.forward, "router").gemm.n == 8);
  CHECK(find_op(ep1.forward, "fc1.experts").gemm.m == 1024);
  CHECK(find_op(ep1.forward, "fc1.experts").repeat == 8);
  double fc1 = 0;
  for (const auto& o : ep1.forward) {
    if (o.name.rfind("fc1.", 0) == 0) fc1 += o.flops * o.repeat;
  }
  CHECK(fc1 == 2.0 * T * 2 * 4096 * (2 * 14336));  // topk copies of every token
  // EP = 8: one expert per rank receiving T * topk tokens; dispatch and combine all-to-all.
  TrainingConfig t = training(T, 1);
  t.ep = 8;
  t.dp = 8;
  t.global_batch_size = 8;
  const LayerOps ep8 = transformer_layer_ops(m, t);
  CHECK(collective_names(ep8.forward) == std::vector<std::string>{"a2a_dispatch", "a2a_combine"});
  CHECK(collective_names(ep8.backward) == std::vector<std::string>{"a2a_combine_bwd", "a2a_dispatch_bwd"});
  const Op& a2a = find_op(ep8.forward, "a2a_dispatch");
  CHECK(a2a.group == ProcessGroup::ep);
  CHECK(a2a.collective == CollectiveKind::all_to_all);
  CHECK(a2a.comm_bytes == T * 2.0 * 4096 * 2);
  CHECK(find_op(ep8.forward, "fc1.experts").gemm.m == T * 2);
  CHECK(find_op(ep8.forward, "fc1.experts").repeat == 1);
}

TEST_CASE("fp8 casts write a transposed copy on Hopper and one copy on Blackwell", "[models]") {
  // Llama-3 8B, TP 1, micro-batch 1 x 4096 tokens: T = 4096, h = 4096. QKV's forward input (the norm
  // output, T x h) is cast once: read 2 bytes, write the fp8 copy (1) and, where an FP8 GEMM reads only
  // row-wise (Hopper), the transposed fp8 copy wgrad reads (1): 4 T h bytes; on Blackwell 3 T h. FC2's
  // dgrad input, the output gradient dY (T x h), likewise; wgrad has no cast of its own.
  const ModelConfig m = preset("llama3-8b");
  TrainingConfig t = training(4096, 1);
  t.precision = Dtype::fp8;
  const double T = 4096, h = 4096;
  const LayerOps hopper = transformer_layer_ops(m, t);
  CHECK(find_op(hopper.forward, "qkv_fp8_cast").bytes == Approx(4.0 * T * h).epsilon(1e-12));
  CHECK(find_op(hopper.backward, "fc2_dgrad_fp8_cast").bytes == Approx(4.0 * T * h).epsilon(1e-12));
  CHECK_FALSE(has_op(hopper.backward, "fc2_wgrad_fp8_cast"));
  t.fp8_transposed_copy = false;
  const LayerOps blackwell = transformer_layer_ops(m, t);
  CHECK(find_op(blackwell.forward, "qkv_fp8_cast").bytes == Approx(3.0 * T * h).epsilon(1e-12));
  CHECK(find_op(blackwell.backward, "fc2_dgrad_fp8_cast").bytes == Approx(3.0 * T * h).epsilon(1e-12));
  // The GPU catalog says which: Hopper (and the GPUs without a source, MI300X) two copies, B200 one.
  CHECK(find_gpu("H100-SXM")->fp8_needs_transposed_copy);
  CHECK_FALSE(find_gpu("B200")->fp8_needs_transposed_copy);
}

TEST_CASE("fp8 casts go before the sequence-parallel all-gather of their GEMM, as Transformer Engine quantizes", "[models]") {
  // TE writes the norm's output in fp8 and all-gathers that (forward), and casts the output gradient before
  // the input's all-gather it overlaps with dgrad (backward): NVIDIA/TransformerEngine 0004dbd0,
  // module/layernorm_linear.py. So in both passes every TP all-gather is followed by its GEMM, the pair the
  // step builder's tp_comm_overlap pipelines, and the cast of that GEMM's input comes right before the gather.
  const ModelConfig m = preset("llama3-70b");
  TrainingConfig t = training(8192, 1, 4, true);
  t.precision = Dtype::fp8;
  const LayerOps ops = transformer_layer_ops(m, t);
  for (const auto* pass : {&ops.forward, &ops.backward}) {
    int gathers = 0;
    for (std::size_t i = 0; i < pass->size(); ++i) {
      const Op& op = (*pass)[i];
      if (op.kind != OpKind::collective || op.collective != CollectiveKind::all_gather || op.group != ProcessGroup::tp) continue;
      ++gathers;
      INFO(op.name);
      REQUIRE(i > 0);
      REQUIRE(i + 1 < pass->size());
      CHECK((*pass)[i + 1].kind == OpKind::gemm);
      CHECK((*pass)[i - 1].name == (*pass)[i + 1].name + "_fp8_cast");
    }
    CHECK(gathers == (pass == &ops.forward ? 2 : 4));  // QKV and FC1 inputs; backward: their inputs and dY of proj, FC2
  }
  // bf16 has no casts and the same gathers before their GEMMs.
  t.precision = Dtype::bf16;
  const LayerOps bf16 = transformer_layer_ops(m, t);
  for (std::size_t i = 0; i + 1 < bf16.forward.size(); ++i)
    if (bf16.forward[i].kind == OpKind::collective && bf16.forward[i].collective == CollectiveKind::all_gather)
      CHECK(bf16.forward[i + 1].kind == OpKind::gemm);
}

TEST_CASE("LM head and embedding ops", "[models]") {
  const ModelConfig m = preset("llama3-70b");
  const std::int64_t T = 4096;
  const LayerOps head1 = lm_head_ops(m, training(T, 1));
  CHECK(collective_names(head1.forward).empty());
  CHECK(find_op(head1.forward, "logits").gemm.n == 128256);
  CHECK(find_op(head1.forward, "cross_entropy").mem_kind == MemOpKind::cross_entropy);

  // 128256 is not a multiple of 128 * 8: Megatron pads to 129024, 16128 columns per rank.
  const LayerOps head8 = lm_head_ops(m, training(T, 1, 8));
  const Op& logits = find_op(head8.forward, "logits");
  CHECK((logits.gemm.m == T && logits.gemm.n == 16128 && logits.gemm.k == 8192));
  // Vocab-parallel cross-entropy: three fp32 per-token all-reduces (max, target logit, sum of exp).
  CHECK(collective_names(head8.forward) ==
        std::vector<std::string>{"ar_ce_max", "ar_ce_target", "ar_ce_sum"});
  CHECK(find_op(head8.forward, "ar_ce_sum").comm_bytes == T * 4.0);
  CHECK(collective_names(head8.backward) == std::vector<std::string>{"ar_head_bwd"});

  // fp8 training: the layers' GEMMs run in fp8 (with their casts), the LM head stays bf16 as Megatron-Core's
  // output layer (a ColumnParallelLinear outside Transformer Engine) runs it; no cast kernel for it.
  TrainingConfig fp8 = training(T, 1, 8);
  fp8.precision = Dtype::fp8;
  const LayerOps head_fp8 = lm_head_ops(m, fp8);
  CHECK(find_op(head_fp8.forward, "logits").dtype == Dtype::bf16);
  CHECK_FALSE(has_op(head_fp8.forward, "logits_fp8_cast"));
  CHECK(find_op(transformer_layer_ops(m, fp8).forward, "qkv").dtype == Dtype::fp8);
  const Op& wg = find_op(head8.backward, "logits_wgrad");  // dW[h, V/t] = X^T[h, T] dY[T, V/t]
  CHECK((wg.gemm.m == 8192 && wg.gemm.n == 16128 && wg.gemm.k == T));

  const LayerOps emb1 = embedding_ops(m, training(T, 1));
  CHECK(collective_names(emb1.forward).empty());
  CHECK(find_op(emb1.forward, "embed").mem_kind == MemOpKind::embedding);
  CHECK(find_op(emb1.backward, "embed_bwd").mem_kind == MemOpKind::embedding);
  const LayerOps emb8 = embedding_ops(m, training(T, 1, 8));
  CHECK(collective_names(emb8.forward) == std::vector<std::string>{"ar_embed"});
  CHECK(find_op(emb8.forward, "ar_embed").comm_bytes == T * 8192.0 * 2);
  CHECK(collective_names(emb8.backward).empty());
  const LayerOps emb8sp = embedding_ops(m, training(T, 1, 8, true));
  CHECK(collective_names(emb8sp.forward) == std::vector<std::string>{"rs_embed"});
  CHECK(collective_names(emb8sp.backward) == std::vector<std::string>{"ag_embed_out_bwd"});
}

TEST_CASE("vocabulary padding follows Megatron's 128 * tp", "[models]") {
  const ModelConfig gpt = preset("gpt3-175b");
  CHECK(padded_vocab_size(gpt, 1) == 50304);
  CHECK(padded_vocab_size(gpt, 8) == 51200);
  CHECK(padded_vocab_size(preset("llama3-70b"), 1) == 128256);
  CHECK(padded_vocab_size(preset("llama3-70b"), 8) == 129024);
}

TEST_CASE("optimizer op: fused AdamW traffic", "[models]") {
  const Op op = optimizer_op(1e9);
  CHECK(op.kind == OpKind::optimizer);
  CHECK(op.mem_kind == MemOpKind::optimizer);
  CHECK(op.bytes == 28e9);  // 12 B fp32 state read + 12 B written + gradient in + weight out
}

TEST_CASE("layout problems name the knob", "[models]") {
  const ModelConfig m = preset("llama3-70b");
  TrainingConfig t = training(4096, 1, 16);  // 8 query groups cannot split 16 ways
  const auto p = layout_problems(m, t);
  REQUIRE(p.size() == 1);
  CHECK(p[0].find("num_query_groups") != std::string::npos);
  t.tp = 8;
  t.pp = 3;  // 80 layers over 3 stages
  REQUIRE(layout_problems(m, t).size() == 1);
  CHECK(layout_problems(m, t)[0].find("pipeline_model_parallel_size") != std::string::npos);
  t.pp = 4;
  CHECK(layout_problems(m, t).empty());
}

namespace {

// Qwen3-30B-A3B (HF config.json): 48 layers, hidden 2048, 32 heads of head_dim 128 (a d = 4096, twice
// the hidden size), 4 KV groups, 128 experts of width 768, top-8, vocabulary 151936, SwiGLU, untied.
ModelConfig qwen3_30b() {
  ModelConfig m;
  m.name = "qwen3-30b-a3b";
  m.num_layers = 48;
  m.hidden_size = 2048;
  m.num_attention_heads = 32;
  m.num_query_groups = 4;
  m.kv_channels = 128;
  m.ffn_hidden_size = 768;
  m.moe_ffn_hidden_size = 768;
  m.num_moe_experts = 128;
  m.moe_router_topk = 8;
  m.vocab_size = 151936;
  m.activation = Activation::swiglu;
  return m;
}

// gpt-oss-120b (HF config.json): 36 layers, hidden 2880, 64 heads of head_dim 64, 8 KV groups, 128
// experts of width 2880, top-4, vocabulary 201088, sliding window 128 on every other layer.
ModelConfig gpt_oss_120b() {
  ModelConfig m;
  m.name = "gpt-oss-120b";
  m.num_layers = 36;
  m.hidden_size = 2880;
  m.num_attention_heads = 64;
  m.num_query_groups = 8;
  m.kv_channels = 64;
  m.ffn_hidden_size = 2880;
  m.num_moe_experts = 128;
  m.moe_router_topk = 4;
  m.vocab_size = 201088;
  m.activation = Activation::swiglu;
  m.window_size = 128;
  m.window_attn_skip_freq = 2;
  return m;
}

}  // namespace

TEST_CASE("kv_channels: Qwen3-30B-A3B parameters by hand", "[models]") {
  const ModelConfig m = qwen3_30b();
  CHECK(m.head_dim() == 128);
  CHECK(m.query_projection_size() == 4096);
  // Per layer: QKV 2048 x (32 + 2 x 4) x 128 = 10,485,760; out-proj 4096 x 2048 = 8,388,608; experts
  // 128 x 3 x 2048 x 768 = 603,979,776; router 2048 x 128 = 262,144; two RMSNorms 4,096.
  CHECK(parameters_per_layer(m) == 10485760.0 + 8388608.0 + 603979776.0 + 262144.0 + 4096.0);
  // Whole model: 48 layers + untied embedding and head 2 x 151936 x 2048 + final norm 2048
  // = 29,909,778,432 + 622,329,856 + 2,048 = 30,532,110,336 (the published 30.5B; qk-layernorm's
  // 2 x 128 per layer is left out).
  CHECK(parameter_count(m) == 30532110336.0);
}

TEST_CASE("kv_channels: GEMM shapes, attention and TP bytes use a d, not h", "[models]") {
  const ModelConfig m = qwen3_30b();
  TrainingConfig t = training(4096, 1, 2, true);
  t.ep = 1;
  const LayerOps ops = transformer_layer_ops(m, t);
  // QKV: [T, h] x [h, (16 + 2 x 2) x 128 / rank]; out-proj: [T, 16 x 128] x [.., h].
  const Op& qkv = find_op(ops.forward, "qkv");
  CHECK(qkv.gemm.m == 4096);
  CHECK(qkv.gemm.n == (16 + 2 * 2) * 128);
  CHECK(qkv.gemm.k == 2048);
  const Op& proj = find_op(ops.forward, "proj");
  CHECK(proj.gemm.n == 2048);
  CHECK(proj.gemm.k == 16 * 128);
  // Attention: 16 query heads of 128 per rank, causal: 2 b hq s^2 d.
  const Op& attn = find_op(ops.forward, "attn");
  CHECK(attn.attention.head_dim == 128);
  CHECK(attn.flops == 2.0 * 16 * 4096.0 * 4096.0 * 128);
  // The TP collectives move the hidden-size residual stream: T h 2 bytes (not T a d 2).
  CHECK(find_op(ops.forward, "rs_attn").comm_bytes == 4096.0 * 2048 * 2);
}

TEST_CASE("kv_channels: model FLOPs of Qwen3-30B-A3B by hand", "[models]") {
  const ModelConfig m = qwen3_30b();
  TrainingConfig t = training(4096, 1);
  t.global_batch_size = 1024;
  // flops = B s [ 3 l (2 P + 4 s a d) + 6 h V ] with P the GEMM parameters a token passes:
  // QKV + out 18,874,368 + top-8 experts 8 x 3 x 2048 x 768 = 37,748,736 + router 262,144
  // = 56,885,248, and a d = 4096 (not h = 2048).
  const double P = 56885248.0, s = 4096, ad = 4096, l = 48, h = 2048, V = 151936, B = 1024;
  CHECK(model_flops_per_step(m, t) == Approx(B * s * (3 * l * (2 * P + 4 * s * ad) + 6 * h * V)).epsilon(1e-12));
}

TEST_CASE("sliding window: which layers, and the attention FLOPs s w' - w'^2 / 2 by hand", "[models]") {
  const ModelConfig m = gpt_oss_120b();
  // window_attn_skip_freq 2: Megatron's 1-based layer l is full when l % 2 == 0, so 0-based layers
  // 0, 2, 4, ... are windowed (gpt-oss's layer_types start with sliding_attention).
  CHECK(is_window_attention_layer(m, 0));
  CHECK_FALSE(is_window_attention_layer(m, 1));
  CHECK(is_window_attention_layer(m, 34));
  CHECK_FALSE(is_window_attention_layer(m, 35));
  ModelConfig listed = m;
  listed.window_attn_pattern.assign(36, false);
  listed.window_attn_pattern[5] = true;
  CHECK(is_window_attention_layer(listed, 5));
  CHECK_FALSE(is_window_attention_layer(listed, 0));

  const TrainingConfig t = training(4096, 1);
  const LayerOps full = transformer_layer_ops(m, t, false);
  const LayerOps window = transformer_layer_ops(m, t, true);
  // Full causal: 4 b hq d s^2 / 2 = 4 x 64 x 64 x 4096^2 / 2.
  CHECK(find_op(full.forward, "attn").flops == 4.0 * 64 * 64 * 4096.0 * 4096.0 / 2);
  // Window (128, 0): each query sees w' = 129 keys (fewer at the start): pairs = s w' - w'^2 / 2
  // = 528,384 - 8,320.5 = 520,063.5; forward 4 x 64 x 64 x 520,063.5 = 8,520,720,384.
  const Op& wf = find_op(window.forward, "attn");
  CHECK(wf.flops == 8520720384.0);
  CHECK(find_op(window.backward, "attn_bwd").flops == 2.5 * 8520720384.0);
  // The kernel's shape: uniform work over w' keys.
  CHECK(wf.attention.seq_kv == 129);
  CHECK_FALSE(wf.attention.causal);
  // Everything but the attention core is the same.
  CHECK(find_op(window.forward, "qkv").flops == find_op(full.forward, "qkv").flops);
  CHECK(find_op(window.forward, "qkv").gemm.n == (64 + 2 * 8) * 64);
}

TEST_CASE("sliding window: model FLOPs count w' keys on windowed layers", "[models]") {
  const ModelConfig m = gpt_oss_120b();
  TrainingConfig t = training(4096, 1);
  t.global_batch_size = 1280;
  // 18 windowed layers see 129 keys per query, 18 full ones 4096: the attention term is
  // 4 a d (18 x 129 + 18 x 4096) per token forward; a d = 64 x 64 = 4096.
  const double h = 2880, ad = 4096, f = 2880, E = 128, k = 4, V = 201088, s = 4096, B = 1280;
  const double P = h * (64 + 16) * 64 + ad * h + k * 3 * h * f + h * E;
  const double layers_fwd = 36 * 2 * P + 4 * ad * (18 * 129 + 18 * s);
  CHECK(model_flops_per_step(m, t) == Approx(B * s * (3 * layers_fwd + 6 * h * V)).epsilon(1e-12));
}

TEST_CASE("pipeline split: Llama 3.1 405B on PP 8 x VP 8 with the embedding and the loss counted", "[models]") {
  const ModelConfig m = preset("llama3-405b");
  TrainingConfig t = training(8192, 1, 8, true);
  t.pp = 8;
  t.vp = 8;
  t.pipeline_schedule = PipelineSchedule::interleaved;
  t.global_batch_size = 64;
  CHECK_FALSE(layout_problems(m, t).empty());  // 126 does not divide over 64 chunks
  t.account_for_embedding_in_pipeline_split = true;
  t.account_for_loss_in_pipeline_split = true;
  CHECK(layout_problems(m, t).empty());
  // 126 + 2 = 128 units over 64 chunks: 2 each; the embedding takes one of stage 0's chunk 0, the loss
  // one of stage 7's chunk 7.
  CHECK(layers_in_chunk(m, t, 0, 0) == 1);
  CHECK(layers_in_chunk(m, t, 0, 1) == 2);
  CHECK(layers_in_chunk(m, t, 7, 7) == 1);
  CHECK(layers_in_chunk(m, t, 7, 6) == 2);
  CHECK(layers_in_chunk(m, t, 3, 0) == 2);
  CHECK(layers_on_stage(m, t, 0) == 15);
  CHECK(layers_on_stage(m, t, 3) == 16);
  CHECK(layers_on_stage(m, t, 7) == 15);
  std::int64_t total = 0;
  for (int s = 0; s < 8; ++s) total += layers_on_stage(m, t, s);
  CHECK(total == 126);
  // Model order: chunk 0 of stages 0..7 (1 + 7 x 2 = 15 layers), then chunk 1 of stage 0.
  CHECK(first_layer_of_chunk(m, t, 0, 0) == 0);
  CHECK(first_layer_of_chunk(m, t, 1, 0) == 1);
  CHECK(first_layer_of_chunk(m, t, 0, 1) == 15);
  CHECK(first_layer_of_chunk(m, t, 7, 7) == 125);
}

TEST_CASE("pipeline split: BLOOM's 70 layers over 12 stages, embeddings counted as layers", "[models]") {
  ModelConfig m = preset("gpt3-175b");
  m.num_layers = 70;
  TrainingConfig t = training(2048, 1);
  t.pp = 12;
  t.global_batch_size = 12;
  t.account_for_embedding_in_pipeline_split = true;
  t.account_for_loss_in_pipeline_split = true;
  REQUIRE(layout_problems(m, t).empty());
  // 72 / 12 = 6: the first and last stages 5 transformer layers, the others 6.
  CHECK(layers_on_stage(m, t, 0) == 5);
  CHECK(layers_on_stage(m, t, 11) == 5);
  for (int s = 1; s < 11; ++s) CHECK(layers_on_stage(m, t, s) == 6);
}

TEST_CASE("pipeline split: decoder_first/last_pipeline_num_layers", "[models]") {
  ModelConfig m = preset("llama3-8b");
  m.num_layers = 30;
  TrainingConfig t = training(2048, 1);
  t.pp = 4;
  t.vp = 3;
  t.global_batch_size = 8;
  t.decoder_first_pipeline_num_layers = 6;
  t.decoder_last_pipeline_num_layers = 6;
  REQUIRE(layout_problems(m, t).empty());
  // First and last 6 (2 per chunk), the middle two stages (30 - 12) / 2 = 9 (3 per chunk).
  CHECK(layers_in_chunk(m, t, 0, 2) == 2);
  CHECK(layers_in_chunk(m, t, 1, 0) == 3);
  CHECK(layers_in_chunk(m, t, 3, 1) == 2);
  CHECK(layers_on_stage(m, t, 2) == 9);
  CHECK(first_layer_of_chunk(m, t, 0, 1) == 2 + 3 + 3 + 2);
  // Without interleaving, only the first given: the other 3 stages share 30 - 3 = 27 (9 each).
  t.vp = 1;
  t.decoder_last_pipeline_num_layers = -1;
  t.decoder_first_pipeline_num_layers = 3;
  REQUIRE(layout_problems(m, t).empty());
  CHECK(layers_on_stage(m, t, 0) == 3);
  CHECK(layers_on_stage(m, t, 3) == 9);
  // 4 leaves 26 over 3 stages: rejected, naming the knob.
  t.decoder_first_pipeline_num_layers = 4;
  const auto p = layout_problems(m, t);
  REQUIRE(p.size() == 1);
  CHECK(p[0].find("decoder_first/last_pipeline_num_layers") != std::string::npos);
}

namespace {
std::size_t index_of(const std::vector<Op>& ops, const std::string& name) {
  auto it = std::find_if(ops.begin(), ops.end(), [&](const Op& o) { return o.name == name; });
  REQUIRE(it != ops.end());
  return static_cast<std::size_t>(it - ops.begin());
}
}  // namespace

TEST_CASE("RoPE: Llama 3 8B rotates Q and K, 20480 B per token per layer at tp 1", "[models]") {
  // Q has hq = 32 heads, K hkv = 8, dh = 128: (32 + 8) * 128 = 5120 bf16 elements per token, read and
  // written once: 5120 * 2 B * 2 = 20480 B per token; backward rotates dQ, dK: the same.
  const ModelConfig m = preset("llama3-8b");
  CHECK(position_embedding(m) == PositionEmbedding::rope);
  const std::int64_t T = 2 * 4096;
  const LayerOps ops = transformer_layer_ops(m, training(4096, 2));
  const Op& fwd = find_op(ops.forward, "rope");
  CHECK(fwd.kind == OpKind::memory_bound);
  CHECK(fwd.mem_kind == MemOpKind::elementwise);
  CHECK(fwd.bytes == 20480.0 * T);
  CHECK(find_op(ops.backward, "rope_bwd").bytes == 20480.0 * T);
  // Between the QKV GEMM and attention; in backward between attention's backward and QKV's dgrad.
  CHECK(index_of(ops.forward, "rope") == index_of(ops.forward, "qkv") + 1);
  CHECK(index_of(ops.forward, "attn") == index_of(ops.forward, "rope") + 1);
  CHECK(index_of(ops.backward, "rope_bwd") == index_of(ops.backward, "attn_bwd") + 1);
  CHECK(index_of(ops.backward, "qkv_dgrad") == index_of(ops.backward, "rope_bwd") + 1);
  // TP 8: 4 query heads and 1 KV head per rank, (4 + 1) * 128 * 2 * 2 = 2560 B per token (T tokens
  // also with SP: the heads are split, the sequence is whole after the all-gather).
  CHECK(find_op(transformer_layer_ops(m, training(4096, 2, 8, true)).forward, "rope").bytes == 2560.0 * T);
  // Full recompute replays it, selective (the attention core only) does not.
  TrainingConfig t = training(4096, 2);
  t.recompute = Recompute::selective;
  CHECK_FALSE(has_op(transformer_layer_ops(m, t).backward, "recompute_rope"));
  t.recompute = Recompute::full;
  CHECK(has_op(transformer_layer_ops(m, t).backward, "recompute_rope"));
  // Context parallelism: rotated before the K chunk travels the ring.
  TrainingConfig cp = training(8192, 1);
  cp.cp = 2;
  const LayerOps ring = transformer_layer_ops(m, cp);
  CHECK(index_of(ring.forward, "rope") < index_of(ring.forward, "cp_kv"));
  CHECK(find_op(ring.forward, "rope").bytes == 20480.0 * 4096);  // 8192 / cp tokens
}

TEST_CASE("RoPE: learned absolute positions have none, position_embedding_type overrides", "[models]") {
  for (const char* name : {"gpt3-175b", "bert-large"}) {
    const ModelConfig m = preset(name);
    CHECK(position_embedding(m) == PositionEmbedding::learned_absolute);
    const LayerOps ops = transformer_layer_ops(m, training(512, 1));
    CHECK_FALSE(has_op(ops.forward, "rope"));
    CHECK_FALSE(has_op(ops.backward, "rope_bwd"));
  }
  for (const char* name : {"llama2-70b", "llama3-405b", "mixtral-8x7b"})
    CHECK(position_embedding(preset(name)) == PositionEmbedding::rope);
  // A GeLU model without a position table (GPT-style custom model) defaults to learned absolute.
  ModelConfig gelu = preset("llama3-8b");
  gelu.activation = Activation::gelu;
  CHECK(position_embedding(gelu) == PositionEmbedding::learned_absolute);
  // GPT-NeoX style: GeLU with rotary. 96 heads, MHA, dh 128: 2 * 192 * 128 * 2 = 98304 B per token.
  ModelConfig neox = preset("gpt3-175b");
  neox.position_embedding_type = PositionEmbedding::rope;
  CHECK(find_op(transformer_layer_ops(neox, training(2048, 1)).forward, "rope").bytes == 98304.0 * 2048);
  // Llama with learned positions: no rotary kernel, and the embedding reads and adds the position rows:
  // (2 + 2) T h * 2 B + 8 B of token id per token, instead of 2 T h * 2 B + 8 T.
  ModelConfig learned = preset("llama3-8b");
  learned.position_embedding_type = PositionEmbedding::learned_absolute;
  CHECK_FALSE(has_op(transformer_layer_ops(learned, training(4096, 1)).forward, "rope"));
  const double T = 4096, h = 4096;
  CHECK(find_op(embedding_ops(learned, training(4096, 1)).forward, "embed").bytes == 4.0 * T * h * 2 + 8 * T);
  CHECK(find_op(embedding_ops(preset("llama3-8b"), training(4096, 1)).forward, "embed").bytes == 2.0 * T * h * 2 + 8 * T);
  ModelConfig nope = preset("llama3-8b");
  nope.position_embedding_type = PositionEmbedding::none;
  CHECK_FALSE(has_op(transformer_layer_ops(nope, training(4096, 1)).forward, "rope"));
  CHECK(to_string(PositionEmbedding::learned_absolute) == "learned_absolute");
}

TEST_CASE("gradient clipping: one fp32 read of the rank's gradients and a scalar all-reduce", "[models]") {
  // Llama 3 8B on one GPU without the distributed optimizer: every one of its 8.03e9 fp32 main
  // gradients is read once, 4 B each: 32.1 GB; the all-reduce carries the one fp32 sum of squares.
  const double params = parameter_count(preset("llama3-8b"));
  const Op norm = grad_norm_op(params);
  CHECK(norm.kind == OpKind::memory_bound);
  CHECK(norm.dtype == Dtype::fp32);
  CHECK(norm.bytes == 4.0 * params);
  CHECK(norm.flops == 2.0 * params);
  const Op ar = grad_norm_all_reduce_op();
  CHECK(ar.kind == OpKind::collective);
  CHECK(ar.collective == CollectiveKind::all_reduce);
  CHECK(ar.comm_bytes == 4.0);
  // The clip scale rides in the fused Adam step: its traffic is unchanged.
  CHECK(optimizer_op(params).bytes == 28.0 * params);
}

TEST_CASE("MoE: router, permutation and un-permutation bytes by hand (Mixtral 8x7B)", "[models]") {
  // T = 4096 tokens, k = 2, h = 4096, E = 8. Routed copies T k h bf16 = 4096 * 2 * 4096 * 2 B = 64 MiB;
  // the hidden state T h bf16 = 32 MiB.
  const ModelConfig m = preset("mixtral-8x7b");
  const LayerOps ops = transformer_layer_ops(m, training(4096, 1));
  const double routed = 4096.0 * 2 * 4096 * 2, hidden = 4096.0 * 4096 * 2;
  const Op& router = find_op(ops.forward, "router");
  CHECK((router.gemm.m == 4096 && router.gemm.n == 8 && router.gemm.k == 4096));
  CHECK(find_op(ops.forward, "router_softmax_topk").bytes == 4096.0 * 8 * 4 * 2);  // fp32 logits in, probs out
  CHECK(has_op(ops.backward, "router_wgrad"));
  CHECK(has_op(ops.backward, "router_softmax_topk_bwd"));
  // Permute gathers k copies of every token (read T k h, write T k h); un-permute reads the expert
  // outputs and writes their probability-weighted sum (T k h + T h).
  CHECK(find_op(ops.forward, "permute").bytes == 2.0 * routed);
  CHECK(find_op(ops.forward, "unpermute").bytes == routed + hidden);
  // Backward: un-permute reads dy (T h) and the saved expert outputs (T k h) and writes the k gradient
  // copies (T k h); permute's backward sums the copies back into each token (T k h + T h).
  CHECK(find_op(ops.backward, "unpermute_bwd").bytes == 2.0 * routed + hidden);
  CHECK(find_op(ops.backward, "permute_bwd").bytes == routed + hidden);
  // The experts' GEMMs: one kernel per local expert (8 here), forward and both backward GEMMs, each kind
  // one op repeated 8 times.
  for (const char* name : {"fc1.experts", "fc2.experts"}) CHECK(find_op(ops.forward, name).repeat == 8);
  for (const char* name : {"fc1.experts_wgrad", "fc1.experts_dgrad", "fc2.experts_wgrad", "fc2.experts_dgrad", "act_bwd.experts"})
    CHECK(find_op(ops.backward, name).repeat == 8);
  // Issue order: router, softmax / top-k, permute, experts, un-permute.
  CHECK(index_of(ops.forward, "router") < index_of(ops.forward, "permute"));
  CHECK(index_of(ops.forward, "permute") < index_of(ops.forward, "fc1.experts"));
  CHECK(index_of(ops.forward, "fc2.experts") < index_of(ops.forward, "unpermute"));
}

TEST_CASE("unfused attention: Megatron's core attention as batched GEMMs, softmax and dropout, by hand", "[models]") {
  // GPT-3 175B (96 heads of 128, dropout 0.1) at TP 8: 12 heads per rank, b = 2, s = 2048, so
  // B = b hq = 24 (batch, head) pairs and B s^2 = 24 x 4194304 = 100663296 scores.
  //   scores  Q K^T : 2 B s s dh FLOPs = 2 x 24 x 2048 x 2048 x 128 = 25769803776 (the full square:
  //           the causal mask only enters the softmax); GEMM shape [B s, s] x k = dh
  //   softmax 4 bytes per score (read S, write P, bf16); dropout 5 (read P, write P', 1-byte mask)
  //   context P V   : the same FLOPs, shape [B s, dh] x k = s
  // Backward: four batched GEMMs of those FLOPs each, dropout backward 5 B, softmax backward 6 B per score.
  ModelConfig m = preset("gpt3-175b");
  m.attention_impl = AttentionImpl::unfused;
  REQUIRE(m.attention_dropout == 0.1);
  const TrainingConfig t = training(2048, 2, 8, true);
  const LayerOps ops = transformer_layer_ops(m, t);
  const double scores = 24.0 * 2048 * 2048;
  const double bmm_flops = 2.0 * 24 * 2048 * 2048 * 128;
  CHECK_FALSE(has_op(ops.forward, "attn"));
  const Op& qk = find_op(ops.forward, "attn_scores");
  CHECK(qk.kind == OpKind::gemm);
  CHECK(qk.dtype == Dtype::bf16);
  CHECK(qk.flops == Approx(bmm_flops).epsilon(1e-12));
  CHECK((qk.gemm.m == 24 * 2048 && qk.gemm.n == 2048 && qk.gemm.k == 128));
  CHECK(find_op(ops.forward, "attn_softmax").bytes == Approx(4 * scores).epsilon(1e-12));
  CHECK(find_op(ops.forward, "attn_dropout").bytes == Approx(5 * scores).epsilon(1e-12));
  const Op& pv = find_op(ops.forward, "attn_context");
  CHECK(pv.flops == Approx(bmm_flops).epsilon(1e-12));
  CHECK((pv.gemm.m == 24 * 2048 && pv.gemm.n == 128 && pv.gemm.k == 2048));
  for (const char* g : {"attn_bwd_dp", "attn_bwd_dv", "attn_bwd_dq", "attn_bwd_dk"}) {
    INFO(g);
    CHECK(find_op(ops.backward, g).flops == Approx(bmm_flops).epsilon(1e-12));
  }
  CHECK(find_op(ops.backward, "attn_bwd_dropout_bwd").bytes == Approx(5 * scores).epsilon(1e-12));
  CHECK(find_op(ops.backward, "attn_bwd_softmax_bwd").bytes == Approx(6 * scores).epsilon(1e-12));
  // 6 GEMM passes of 2 B s^2 dh over the forward and backward: 3x the flash backward+forward count of a
  // non-causal attention (4 B s^2 dh forward, 2.5x that backward), causal or not.
  double attention_gemm_flops = 0;
  for (const auto* list : {&ops.forward, &ops.backward})
    for (const auto& o : *list)
      if (o.kind == OpKind::gemm && o.name.rfind("attn", 0) == 0) attention_gemm_flops += o.flops;
  CHECK(attention_gemm_flops == Approx(6 * bmm_flops).epsilon(1e-12));

  // No attention dropout: no dropout kernels. Hidden dropout rides the residual adds (bias-dropout-add):
  // one more byte per element, 7 B instead of 6 at Tn = b s / t = 512 tokens of h = 12288.
  ModelConfig quiet = m;
  quiet.attention_dropout = 0;
  const LayerOps q = transformer_layer_ops(quiet, t);
  CHECK_FALSE(has_op(q.forward, "attn_dropout"));
  CHECK_FALSE(has_op(q.backward, "attn_bwd_dropout_bwd"));
  CHECK(find_op(q.forward, "add1").bytes == Approx(7.0 * 512 * 12288).epsilon(1e-12));
  quiet.hidden_dropout = 0;
  CHECK(find_op(transformer_layer_ops(quiet, t).forward, "add1").bytes == Approx(6.0 * 512 * 12288).epsilon(1e-12));
}

TEST_CASE("unfused attention: recompute re-runs the whole core, no ring attention", "[models]") {
  ModelConfig m = preset("gpt3-175b");
  m.attention_impl = AttentionImpl::unfused;
  TrainingConfig t = training(2048, 1, 8, true);
  t.recompute = Recompute::selective;  // core_attn: the four forward kernels again, before the backward's
  const LayerOps sel = transformer_layer_ops(m, t);
  for (const char* name : {"scores", "softmax", "dropout", "context"}) {
    INFO(name);
    CHECK(find_op(sel.backward, std::string("recompute_attn_") + name).bytes ==
          find_op(sel.forward, std::string("attn_") + name).bytes);
  }
  t.recompute = Recompute::none;
  t.cp = 2;
  const auto problems = layout_problems(m, t);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].find("unfused") != std::string::npos);
  CHECK(problems[0].find("context_parallel_size") != std::string::npos);
}

TEST_CASE("gradient accumulation: the separate kernels' bytes by hand", "[models]") {
  // 1e9 parameters; the fresh gradient is 2 B (bf16 / fp16).
  //   fused            nothing (the wgrad GEMM accumulates into the buffer);
  //   accumulate_grad  read .grad, read the new gradient, write .grad: 3 x 2 = 6 B, from the second
  //                    micro-batch on (autograd keeps the first gradient as .grad);
  //   main_grad_add    read the new gradient, read and write the buffer: 2 + 2 x 4 = 10 B into fp32,
  //                    2 + 2 x 2 = 6 B into an fp16 buffer (Megatron-LM 2022 under --fp16), every micro-batch;
  //   cast_add         cast (read 2, write 4), then add (read 4, read 4, write 4): 18 B into fp32 (DeepSpeed's
  //                    BF16_Optimizer), every micro-batch.
  TrainingConfig t;
  t.main_grads_dtype = Dtype::fp32;
  const double p = 1e9;
  t.grad_accumulation = GradAccumulation::fused;
  CHECK(grad_accumulation_op(p, t).bytes == 0);
  CHECK_FALSE(grad_accumulation_applies(t, 0));
  CHECK_FALSE(grad_accumulation_applies(t, 5));
  t.grad_accumulation = GradAccumulation::accumulate_grad;
  CHECK(grad_accumulation_op(p, t).bytes == 6e9);
  CHECK_FALSE(grad_accumulation_applies(t, 0));
  CHECK(grad_accumulation_applies(t, 1));
  t.grad_accumulation = GradAccumulation::main_grad_add;
  const Op hook = grad_accumulation_op(p, t);
  CHECK(hook.bytes == 10e9);
  CHECK(hook.kind == OpKind::memory_bound);
  CHECK(hook.flops == p);
  CHECK(grad_accumulation_applies(t, 0));
  t.main_grads_dtype = Dtype::fp16;
  CHECK(grad_accumulation_op(p, t).bytes == 6e9);
  t.main_grads_dtype = Dtype::fp32;
  t.grad_accumulation = GradAccumulation::cast_add;
  CHECK(grad_accumulation_op(p, t).bytes == 18e9);
  CHECK(grad_accumulation_applies(t, 0));
}

namespace {

double total_bytes(const std::vector<Op>& ops, const std::string& prefix) {
  double s = 0;
  for (const auto& o : ops)
    if (o.name.rfind(prefix, 0) == 0) s += o.bytes * o.repeat;
  return s;
}

}  // namespace

TEST_CASE("expert bias: gpt-oss's FC2 bias outside the grouped GEMM, kernels and bytes by hand", "[models]") {
  // EP 8 over DP 8, one 4096-token micro-batch: the rank holds 128 / 8 = 16 experts, each receiving
  // 4096 * 4 * 8 / 128 = 1024 token copies (balanced routing). One expert's rows: S_e = 1024 * 2880 * 2 B
  // = 5898240 B; the rank's 16 together S = 94371840 B.
  ModelConfig m = gpt_oss_120b();
  TrainingConfig t = training(4096, 1);
  t.ep = 8;
  t.dp = 8;
  t.global_batch_size = 8;
  const double se = 1024.0 * 2880 * 2, s = 16 * se;
  CHECK_FALSE(has_op(transformer_layer_ops(m, t).forward, "fc2_bias_cat"));  // add_bias_linear off: none
  m.add_bias_linear = true;
  const LayerOps ops = transformer_layer_ops(m, t);
  // Forward (TEGroupedMLP._apply_bias): per expert b * p (writes S_e) and t + b p (reads 2 S_e, writes
  // S_e), then one torch.cat (reads S, writes S): 2 * 16 + 1 = 33 kernels, 6 S.
  const Op& mul = find_op(ops.forward, "fc2_bias_mul.experts");
  const Op& add = find_op(ops.forward, "fc2_bias_add.experts");
  const Op& cat = find_op(ops.forward, "fc2_bias_cat");
  CHECK((mul.repeat == 16 && mul.bytes == se));
  CHECK((add.repeat == 16 && add.bytes == 3 * se));
  CHECK((cat.repeat == 1 && cat.bytes == 2 * s));
  CHECK(total_bytes(ops.forward, "fc2_bias") == 6 * s);
  // Backward: per expert grad * p and its sum over the rows (b's gradient), grad * b and its sum over
  // h (p's gradient): 4 kernels, 6 S_e; the split's backward cat of the output gradients, 2 S:
  // 4 * 16 + 1 = 65 kernels, 8 S.
  const Op& grads = find_op(ops.backward, "fc2_bias_bwd.experts");
  CHECK((grads.repeat == 64 && grads.bytes == 1.5 * se));
  CHECK(find_op(ops.backward, "fc2_bias_cat_bwd").bytes == 2 * s);
  CHECK(total_bytes(ops.backward, "fc2_bias") == 8 * s);
  // Issue order: after the experts' FC2, before the combine all-to-all; in backward after the combine's
  // backward, before FC2's dgrad.
  CHECK(index_of(ops.forward, "fc2_bias_mul.experts") == index_of(ops.forward, "fc2.experts") + 1);
  CHECK(index_of(ops.forward, "fc2_bias_cat") < index_of(ops.forward, "a2a_combine"));
  CHECK(index_of(ops.backward, "a2a_combine_bwd") < index_of(ops.backward, "fc2_bias_cat_bwd"));
  CHECK(index_of(ops.backward, "fc2_bias_bwd.experts") < index_of(ops.backward, "fc2.experts_dgrad"));
  // Not recomputed by moe_act recompute (it is outside the checkpointed activation).
  t.recompute = Recompute::selective;
  t.recompute_modules.moe_act = true;
  CHECK_FALSE(has_op(transformer_layer_ops(m, t).backward, "recompute_fc2_bias_cat"));
}

TEST_CASE("expert bias: gpt-oss-120b's bias parameters by hand", "[models]") {
  // Per layer: QKV (64 + 2 * 8) * 64 = 5120, out-proj 2880, the router 128, each of 128 experts FC1
  // 2 * 2880 (gate and up) and FC2 2880: 5120 + 2880 + 128 * (1 + 5760 + 2880) = 1114048; 36 layers:
  // 40105728.
  ModelConfig m = gpt_oss_120b();
  const double without = parameter_count(m);
  m.add_bias_linear = true;
  CHECK(parameter_count(m) - without == 36.0 * 1114048);
  CHECK(parameters_per_layer(m, true) - parameters_per_layer(gpt_oss_120b(), true) == 1114048.0);
  // A dense layer: QKV, out-proj, FC1 (2 * 2880) and FC2 (2880).
  CHECK(parameters_per_layer(m, false) - parameters_per_layer(gpt_oss_120b(), false) == 5120.0 + 2880 + 5760 + 2880);
}

TEST_CASE("RoPE: Megatron-Core's unfused RoPE (YaRN), kernels and bytes by hand", "[models]") {
  // gpt-oss at tp 1, one 4096-token micro-batch: Q holds E_q = 4096 * 64 * 64 = 16777216 bf16 elements,
  // K E_k = 4096 * 8 * 64 = 2097152; the cos / sin table 4096 x 64 fp32 (262144 elements).
  ModelConfig m = gpt_oss_120b();
  const TrainingConfig t = training(4096, 1);
  const double eq = 4096.0 * 64 * 64, ek = 4096.0 * 8 * 64, table = 4096.0 * 64;
  // Fused (the default): one kernel each way, read and write once.
  CHECK(find_op(transformer_layer_ops(m, t).forward, "rope").bytes == 2 * (eq + ek) * 2);
  m.rope_fusion = false;
  const LayerOps ops = transformer_layer_ops(m, t);
  CHECK_FALSE(has_op(ops.forward, "rope"));
  // Forward, per call (Q, K): cos_ and sin_ as cos / sin, * mscale, .to(bf16) of the table (8 + 8 + 6 =
  // 22 B an element), 12 kernels for the two calls; t * cos_ (2E), -x2 (E), cat (2E), * sin_ (2E), add
  // (3E), the cat with the empty t_pass (2E): 6 kernels, 12E of bf16.
  const Op& tables = find_op(ops.forward, "rope_tables");
  CHECK(tables.repeat == 12);
  CHECK(tables.bytes * tables.repeat == Approx(4 * 22 * table));
  const Op& q = find_op(ops.forward, "rope_q");
  const Op& k = find_op(ops.forward, "rope_k");
  CHECK((q.repeat == 6 && q.bytes * 6 == 12 * eq * 2));
  CHECK((k.repeat == 6 && k.bytes * 6 == 12 * ek * 2));
  // Backward: grad * sin_ (2E), the negation's backward (E), the chunk's cat (2E), grad * cos_ (2E), the
  // empty t_pass slice's zeros (E), t's three gradients summed by two adds (6E): 7 kernels, 14E.
  const Op& qb = find_op(ops.backward, "rope_bwd_q");
  const Op& kb = find_op(ops.backward, "rope_bwd_k");
  CHECK(qb.repeat == 7);
  CHECK(qb.bytes * 7 == Approx(14 * eq * 2));
  CHECK(kb.bytes * kb.repeat == Approx(14 * ek * 2));
  // In the fused kernel's places: after the QKV GEMM, before attention; backward after attention's.
  CHECK(index_of(ops.forward, "rope_tables") == index_of(ops.forward, "qkv") + 1);
  CHECK(index_of(ops.forward, "attn") == index_of(ops.forward, "rope_k") + 1);
  CHECK(index_of(ops.backward, "rope_bwd_q") == index_of(ops.backward, "attn_bwd") + 1);
  CHECK(index_of(ops.backward, "qkv_dgrad") == index_of(ops.backward, "rope_bwd_k") + 1);
  // Full recompute replays the unfused forward.
  TrainingConfig full = t;
  full.recompute = Recompute::full;
  CHECK(has_op(transformer_layer_ops(m, full).backward, "recompute_rope_q"));
}

TEST_CASE("expert bias: refused with expert tensor parallelism, as Transformer Engine refuses it", "[models]") {
  // TransformerEngine module/grouped_linear.py @ 71bbefb: "GroupedLinear doesn't support bias when TP > 1".
  ModelConfig m = gpt_oss_120b();
  m.add_bias_linear = true;
  TrainingConfig t = training(4096, 1, 2, true);
  t.ep = 4;
  t.dp = 4;
  t.global_batch_size = 4;
  const auto p = layout_problems(m, t);  // expert TP = TP = 2; EP 4 x ETP 2 folds over TP 2 x DP 4
  REQUIRE(p.size() == 1);
  CHECK(p[0] == "add_bias_linear with expert_tensor_parallel_size > 1: Transformer Engine's GroupedLinear has no "
                "bias under tensor parallelism (grouped_linear.py)");
  t.etp = 1;  // Megatron-Bridge's gpt-oss recipes: expert TP 1
  CHECK(layout_problems(m, t).empty());
  m.add_bias_linear = false;
  t.etp = 0;
  CHECK(layout_problems(m, t).empty());
}

TEST_CASE("DeepSeek-V3: 671B parameters, 37B activated and its FLOPs per token, by hand", "[models]") {
  // deepseek-ai/DeepSeek-V3 config_671B.json: h 7168, 128 heads, MLA q_lora 1536, kv_lora 512, head dims
  // 128 (no RoPE) + 64 (RoPE) for Q and K, 128 for V; 61 layers, the first 3 dense (18432), then 256
  // routed experts of 2048, top-8, one shared expert of 2048; vocabulary 129280, untied; SwiGLU, RMSNorm.
  //   MLA    q_down 7168 x 1536 = 11,010,048; q_up 1536 x 128 x 192 = 37,748,736;
  //          kv_down 7168 x (512 + 64) = 4,128,768; kv_up 512 x 128 x (128 + 128) = 16,777,216;
  //          out 128 x 128 x 7168 = 117,440,512                       -> 187,105,280 GEMM weights
  //          + q and kv norms 1536 + 512                                -> 187,107,328
  //   layer norms 2 x 7168 = 14,336
  //   dense layer  + 3 x 7168 x 18432 = 396,361,728                     -> 583,483,392
  //   MoE layer    + 256 x 3 x 7168 x 2048 = 11,274,289,152, router 7168 x 256 = 1,835,008,
  //                  shared 3 x 7168 x 2048 = 44,040,192                -> 11,507,286,016
  //   3 dense + 58 MoE = 669,173,039,104; embeddings 2 x 129280 x 7168 = 1,853,358,080; final norm 7168
  //   total 671,026,404,352: the paper's 671B (README_WEIGHTS.md: "Total parameters: 671B").
  const ModelConfig m = preset("deepseek-v3");
  CHECK(m.mla.enabled());
  CHECK(attention_gemm_params(m) == 187105280.0);
  CHECK(attention_replicated_params(m) == 7168.0 * (1536 + 512 + 64));
  CHECK(parameters_per_layer(m, false) == 583483392.0);
  CHECK(parameters_per_layer(m, true) == 11507286016.0);
  CHECK(parameter_count(m) == 671026404352.0);
  CHECK(parameter_count(m) == Approx(671e9).epsilon(0.001));
  // Activated per token: an MoE layer passes 8 of the experts, 8 x 44,040,192 = 352,321,536, with the
  // router and the shared expert: 187,107,328 + 14,336 + 352,321,536 + 1,835,008 + 44,040,192 =
  // 585,318,400; 3 x 583,483,392 + 58 x 585,318,400 + 1,853,358,080 + 7168 = 37,552,282,624. The paper
  // says 37B; DeepSeek's README_WEIGHTS.md 36.7B "including 0.9B for Embedding and 0.9B for the output
  // Head" (their count is 0.85B lower, about the input embedding table: ours counts all of it, as for
  // the total).
  CHECK(activated_parameters(m) == 37552282624.0);
  CHECK(activated_parameters(m) == Approx(37e9).epsilon(0.02));
  // Model FLOPs per token at s = 4096 (attention counted in full, Megatron's convention):
  //   GEMMs  2 x (61 x 187,105,280 + 3 x 396,361,728 + 58 x (352,321,536 + 1,835,008 + 44,040,192))
  //          = 2 x 35,697,917,952 forward
  //   core   per layer and query 2 x s x 128 heads x (192 + 128) (scores over d_qk, context over d_v):
  //          61 x 2 x 4096 x 128 x 320 = 20,468,203,520 forward
  //   head   2 x 7168 x 129280 = 1,853,358,080 forward
  //   x 3 (forward + backward): 3 x (71,395,835,904 + 20,468,203,520) + 3 x 1,853,358,080 = 281,152,192,512.
  // Against the 6N rule with N = 37.55e9 activated (225.31 GF): less the input embedding's 6 x 0.93e9
  // (a lookup, no FLOPs: -5.56 GF) and the norms' 6 x (61 x (14,336 + 2,048) + 7,168) = 6 x 1,006,592 (no
  // GEMM), plus the attention core's 3 x 20.47 GF = 61.40 GF: 281.15 GF, 1.25x the 6N rule.
  TrainingConfig t = training(4096, 1);
  const double per_token = model_flops_per_step(m, t) / 4096.0;
  CHECK(per_token == Approx(281152192512.0).epsilon(1e-12));
  const double six_n = 6.0 * activated_parameters(m);
  CHECK(per_token == Approx(six_n - 6.0 * 129280.0 * 7168.0 - 6.0 * 1006592.0 + 3.0 * 20468203520.0).epsilon(1e-12));
  // Causal-aware: the core's pairs halve, 281.15 - 3 x 10.23 = 250.45 GF.
  CHECK(model_flops_per_step(m, t, AttentionFlops::causal) / 4096.0 == Approx(281152192512.0 - 1.5 * 20468203520.0).epsilon(1e-12));
}

TEST_CASE("MLA kernels: latent projections, asymmetric 192/128 attention, TP with sequence parallelism", "[models]") {
  const ModelConfig m = preset("deepseek-v3");
  SECTION("one GPU: the projections' shapes and the attention's FLOPs") {
    TrainingConfig t = training(4096, 1);
    const LayerOps ops = transformer_layer_ops(m, t, false, false);
    const auto& f = ops.forward;
    CHECK_FALSE(has_op(f, "qkv"));
    CHECK(find_op(f, "q_down").gemm.m == 4096);
    CHECK(find_op(f, "q_down").gemm.n == 1536);
    CHECK(find_op(f, "q_down").gemm.k == 7168);
    CHECK(find_op(f, "q_up").gemm.n == 128 * 192);
    CHECK(find_op(f, "q_up").gemm.k == 1536);
    CHECK(find_op(f, "kv_down").gemm.n == 512 + 64);
    CHECK(find_op(f, "kv_up").gemm.n == 128 * 256);
    CHECK(find_op(f, "kv_up").gemm.k == 512);
    CHECK(find_op(f, "proj").gemm.k == 128 * 128);
    CHECK(collective_names(f).empty());
    // Flash attention, causal: s^2 / 2 pairs per head, 2 x (192 + 128) FLOPs each:
    // 128 x 4096^2 / 2 x 640 = 687,194,767,360; backward 2.5x.
    const Op& attn = find_op(f, "attn");
    CHECK(attn.attention.head_dim == 192);
    CHECK(attn.attention.head_dim_v == 128);
    CHECK(attn.attention.heads_kv == 128);
    CHECK(attn.flops == 128.0 * 4096.0 * 4096.0 / 2.0 * 640.0);
    CHECK(find_op(ops.backward, "attn_bwd").flops == 2.5 * attn.flops);
    // RoPE on the decoupled parts only: 128 query heads and the one shared key of 64 dims (DeepSeek-V3's
    // YaRN would take the unfused path in Megatron; the preset keeps the fused kernel, rope_fusion true):
    // 2 x 4096 x 129 x 64 x 2 B.
    CHECK(find_op(f, "rope").bytes == 2.0 * 4096 * 129 * 64 * 2);
    // The layer's GEMM FLOPs forward are 2 T x its GEMM weights.
    double gemm = 0;
    for (const auto& o : f)
      if (o.kind == OpKind::gemm) gemm += o.flops * o.repeat;
    CHECK(gemm == 2.0 * 4096 * (attention_gemm_params(m) + 3.0 * 7168 * 18432));
  }
  SECTION("TP 2 with SP: the down-projections on the sequence shard, the latents gathered, not the hidden state") {
    TrainingConfig t = training(4096, 1, 2, true);
    t.ep = 1;
    const LayerOps ops = transformer_layer_ops(m, t, false, false);
    const auto& f = ops.forward;
    CHECK(find_op(f, "q_down").gemm.m == 2048);   // T / t tokens, the whole weight
    CHECK(find_op(f, "q_down").gemm.n == 1536);
    CHECK(find_op(f, "kv_down").gemm.m == 2048);
    CHECK(find_op(f, "q_up").gemm.m == 4096);     // the gathered latent, half the heads
    CHECK(find_op(f, "q_up").gemm.n == 64 * 192);
    CHECK(find_op(f, "kv_up").gemm.n == 64 * 256);
    CHECK(find_op(f, "proj").gemm.k == 64 * 128);
    // All-gathers of the latents (T x 1536, T x 512) and of the RoPE key (T x 64), 2 B each; no
    // all-gather of the T x 7168 hidden state before attention.
    CHECK_FALSE(has_op(f, "ag_attn"));
    CHECK(find_op(f, "ag_q").comm_bytes == 4096.0 * 1536 * 2);
    CHECK(find_op(f, "ag_kv").comm_bytes == 4096.0 * 512 * 2);
    CHECK(find_op(f, "ag_kpe").comm_bytes == 4096.0 * 64 * 2);
    CHECK(has_op(f, "rs_attn"));
    // Backward: each up-projection re-gathers its latent for the wgrad and reduce-scatters its input
    // gradient; the RoPE key's gradient is reduce-scattered.
    const auto& b = ops.backward;
    CHECK(find_op(b, "ag_q_bwd").comm_bytes == 4096.0 * 1536 * 2);
    CHECK(find_op(b, "rs_q_bwd").comm_bytes == 4096.0 * 1536 * 2);
    CHECK(find_op(b, "rs_kv_bwd").comm_bytes == 4096.0 * 512 * 2);
    CHECK(find_op(b, "rs_kpe_bwd").comm_bytes == 4096.0 * 64 * 2);
    CHECK(has_op(b, "q_down_dgrad"));
    CHECK(has_op(b, "kv_down_wgrad"));
    CHECK_FALSE(has_op(b, "ar_attn_bwd"));
  }
  SECTION("recompute_modules mla_up_proj re-runs the latents' norms, gathers, up-projections, RoPE and cat") {
    TrainingConfig t = training(4096, 1, 2, true);
    t.recompute = Recompute::selective;
    t.recompute_modules.mla_up_proj = true;
    const LayerOps ops = transformer_layer_ops(m, t, false, false);
    std::vector<std::string> again;
    for (const auto& o : ops.backward)
      if (o.role == OpRole::recompute) again.push_back(o.name);
    // Before the core attention's own recompute (core_attn stays on by default), which needs Q, K, V.
    const std::vector<std::string> expected{"recompute_q_norm", "recompute_ag_q", "recompute_q_up", "recompute_kv_norm", "recompute_ag_kv",
                                            "recompute_kv_up", "recompute_rope", "recompute_mla_qkv_cat", "recompute_attn"};
    CHECK(again == expected);
  }
  SECTION("TP without SP is refused, as Megatron-Core's MLA cannot run it") {
    TrainingConfig t = training(4096, 1, 2, false);
    const auto problems = layout_problems(m, t);
    CHECK(std::any_of(problems.begin(), problems.end(), [](const std::string& p) { return p.find("sequence_parallel") != std::string::npos; }));
  }
  SECTION("without query compression a column-parallel q_proj reads the gathered hidden state") {
    ModelConfig lite = m;
    lite.mla.q_lora_rank = 0;
    TrainingConfig t = training(4096, 1, 2, true);
    const LayerOps ops = transformer_layer_ops(lite, t, false, false);
    CHECK(has_op(ops.forward, "ag_attn"));
    CHECK(find_op(ops.forward, "q_proj").gemm.k == 7168);
    CHECK(find_op(ops.forward, "q_proj").gemm.n == 64 * 192);
    CHECK_FALSE(has_op(ops.forward, "q_down"));
    // Parameters: 7168 x 128 x 192 = 176,160,768 for the query instead of 48,758,784, no q norm.
    CHECK(attention_gemm_params(lite) == 187105280.0 - 48758784.0 + 176160768.0);
  }
}

TEST_CASE("multi-token prediction: DeepSeek-V3's MTP module's parameters, FLOPs and kernels, by hand", "[models]") {
  // One module (DeepSeek-V3 trains with num_nextn_predict_layers 1): a layer of the last layer's kind (MoE,
  // 11,507,286,016), enorm, hnorm and its final norm (3 x 7168 = 21,504), eh_proj 2 x 7168 x 7168 =
  // 102,760,448: 11,610,067,968 (README_WEIGHTS.md: "11.5B unique parameters", the embedding and the
  // head shared with the main model); the total becomes 682,636,472,320.
  ModelConfig m = preset("deepseek-v3");
  const double main_model = parameter_count(m);
  const double active = activated_parameters(m);
  m.mtp_num_layers = 1;
  CHECK(mtp_parameters(m) == 11610067968.0);
  CHECK(parameter_count(m) == main_model + 11610067968.0);
  CHECK(activated_parameters(m) == active);  // DeepSeek's 37B is the main model's
  // FLOPs per token at s = 4096 (attention in full): the module's forward is its layer's GEMMs
  // 2 x (187,105,280 + 398,196,736), eh_proj 2 x 102,760,448, the core 2 x 4096 x 128 x 320 =
  // 335,544,320 and one more head 2 x 7168 x 129280 = 1,853,358,080: 3,565,027,328, x 3 with the backward:
  // 281,152,192,512 + 10,695,081,984 = 291,847,274,496.
  TrainingConfig t = training(4096, 1);
  CHECK(model_flops_per_step(m, t) / 4096.0 == Approx(291847274496.0).epsilon(1e-12));
  // Kernels, with the head: the shifted tokens' embedding, the two norms and the concatenation, eh_proj
  // [T, 2h] -> h, the module's layer (MLA and the MoE MLP), its norm, then a second pass through the
  // output layer and a loss; the main model's head after it.
  const LayerOps head = lm_head_ops(m, t);
  const Op& eh = find_op(head.forward, "mtp1_eh_proj");
  CHECK(eh.gemm.m == 4096);
  CHECK(eh.gemm.n == 7168);
  CHECK(eh.gemm.k == 2 * 7168);
  CHECK(has_op(head.forward, "mtp1_kv_up"));
  CHECK(find_op(head.forward, "mtp1_fc1.experts").repeat == 256);
  CHECK(find_op(head.forward, "mtp1_logits").gemm.n == 129280);
  CHECK(has_op(head.forward, "logits"));
  CHECK(has_op(head.backward, "mtp1_eh_proj_wgrad"));
  CHECK(has_op(head.backward, "mtp1_logits_dgrad"));
  // Without MTP the head is what it was: the final norm, the logits and the loss.
  m.mtp_num_layers = 0;
  const LayerOps plain = lm_head_ops(m, t);
  CHECK(plain.forward.size() == 3);
  CHECK(plain.forward.front().name == "ln_f");
}

TEST_CASE("pipeline_model_parallel_layout: the layers of each virtual stage, in Megatron's order", "[models]") {
  // "Et*6|t*8|t*8|t*10L" on PP 2: Megatron lists every stage of chunk 0, then of chunk 1, so stage 0 holds
  // chunks of 6 and 8 layers (virtual stages 0 and 2), stage 1 of 8 and 10 (1 and 3); in model order the
  // chunks start at layers 0 (stage 0), 6 (stage 1), 14 (stage 0, chunk 1) and 22 (stage 1, chunk 1).
  const ModelConfig m = preset("llama3-8b");  // 32 layers
  TrainingConfig t = training(4096, 1);
  t.pp = 2;
  t.vp = 2;
  t.pipeline_layout = {6, 8, 8, 10};
  CHECK(pipeline_split_problems(m, t).empty());
  CHECK(layers_in_chunk(m, t, 0, 0) == 6);
  CHECK(layers_in_chunk(m, t, 1, 0) == 8);
  CHECK(layers_in_chunk(m, t, 0, 1) == 8);
  CHECK(layers_in_chunk(m, t, 1, 1) == 10);
  CHECK(first_layer_of_chunk(m, t, 1, 0) == 6);
  CHECK(first_layer_of_chunk(m, t, 0, 1) == 14);
  CHECK(first_layer_of_chunk(m, t, 1, 1) == 22);
  CHECK(layers_on_stage(m, t, 0) == 14);
  CHECK(layers_on_stage(m, t, 1) == 18);
  // Megatron's checks: as many virtual stages as PP x VP, as many layers as num_layers, no other split knob.
  t.pipeline_layout = {6, 8, 8, 9};
  CHECK(pipeline_split_problems(m, t).front().find("31 transformer layers") != std::string::npos);
  t.pipeline_layout = {16, 16};
  CHECK(pipeline_split_problems(m, t).front().find("expected pipeline_model_parallel_size x virtual_pipeline_model_parallel_size = 4") !=
        std::string::npos);
  t.pipeline_layout = {6, 8, 8, 10};
  t.account_for_loss_in_pipeline_split = true;
  CHECK(pipeline_split_problems(m, t).front().find("cannot be combined") != std::string::npos);
}

TEST_CASE("Nemotron-H 56B and Nemotron 3 Nano: parameters against the published figures, by hand", "[models]") {
  // Nemotron-H 56B (Megatron-Bridge nemotronh_56b_pretrain config @ 067f987d): h 8192, 118 layers = 54 Mamba-2
  // (M), 10 attention (*), 54 MLP (-); Mamba 256 heads of 64 (d_inner 16384), 8 groups of state 256, conv 4;
  // attention 64 heads of 128, 8 query groups; squared-ReLU MLP 32768; RMSNorm; vocabulary 131072, untied.
  //   Mamba layer  norm 8192; in_proj 8192 x (2 x 16384 + 2 x 8 x 256 + 256) = 8192 x 37120 = 304,087,040;
  //                conv1d (16384 + 4096) x 4 + 20480 = 102,400; dt_bias, A_log, D 3 x 256; gated norm 16384;
  //                out_proj 16384 x 8192 = 134,217,728                         -> 438,432,512
  //   attention    8192 x (64 + 16) x 128 + 64 x 128 x 8192 = 150,994,944 + norm 8192 -> 151,003,136
  //   MLP          2 x 8192 x 32768 = 536,870,912 + norm 8192                  -> 536,879,104
  //   54 x 438,432,512 + 10 x 151,003,136 + 54 x 536,879,104 + 2 x 131072 x 8192 + 8192 = 56,324,350,464:
  //   the paper's 56B (Nemotron-H, arXiv:2504.03624; Bridge's docs/models/nemotron/nemotronh.md "Parameters: 56B").
  const ModelConfig h = preset("nemotron-h-56b");
  CHECK(h.hybrid());
  CHECK(h.mamba_d_inner() == 16384);
  CHECK(mamba_layer_params(h) == 438432512.0);
  CHECK(parameters_per_layer(h, false, LayerKind::mamba) == 438432512.0);
  CHECK(parameters_per_layer(h, false, LayerKind::attention) == 151003136.0);
  CHECK(parameters_per_layer(h, false, LayerKind::mlp) == 536879104.0);
  CHECK(parameter_count(h) == 56324350464.0);
  CHECK(parameter_count(h) == Approx(56e9).epsilon(0.01));
  CHECK(activated_parameters(h) == parameter_count(h));  // dense
  // Nemotron 3 Nano 30B-A3B: h 2688, 52 layers = 23 M, 6 *, 23 E; Mamba 64 heads of 64 (d_inner 4096), 8
  // groups of 128; attention 32 heads of 128 (kv_channels), 2 query groups; 128 experts of 1856 (squared
  // ReLU, 2 matrices), top-6, shared 3712; vocabulary 131072, untied.
  //   Mamba layer  2688 + 2688 x (8192 + 2048 + 64) + (4096 + 2048) x 5 + 3 x 64 + 4096 + 4096 x 2688 = 38,744,896
  //   attention    2688 x (32 + 4) x 128 + 32 x 128 x 2688 + 2688 = 23,399,040
  //   MoE layer    128 x 2 x 2688 x 1856 + router 2688 x 128 + shared 2 x 2688 x 3712 + norm 2688 = 1,297,468,032
  //   23 x 38,744,896 + 6 x 23,399,040 + 23 x 1,297,468,032 + 2 x 131072 x 2688 + 2688 = 31,577,937,344
  //   activated: the MoE layer's 6 experts 6 x 2 x 2688 x 1856 instead of 128: 3,580,073,408 with the
  //   embeddings. Published (NVIDIA's model card): 31.6B total, 3.6B active with the embeddings; Megatron-
  //   Bridge's docs/models/nemotron/nemotron3-nano.md @ 067f987d: "3.5B active parameters and 30B parameters
  //   in total" (rounded).
  const ModelConfig n = preset("nemotron3-nano-30b-a3b");
  CHECK(mamba_layer_params(n) == 38744896.0);
  CHECK(parameters_per_layer(n, false, LayerKind::attention) == 23399040.0);
  CHECK(parameters_per_layer(n, true, LayerKind::mlp) == 1297468032.0);
  CHECK(parameter_count(n) == 31577937344.0);
  CHECK(parameter_count(n) == Approx(31.6e9).epsilon(0.001));
  CHECK(activated_parameters(n) == 3580073408.0);
  CHECK(activated_parameters(n) == Approx(3.5e9).epsilon(0.03));
  int mamba = 0, attention = 0, moe = 0;
  for (std::int64_t l = 0; l < n.num_layers; ++l) {
    mamba += layer_kind(n, l) == LayerKind::mamba;
    attention += layer_kind(n, l) == LayerKind::attention;
    moe += layer_kind(n, l) == LayerKind::mlp && is_moe_layer(n, l);
  }
  CHECK(mamba == 23);
  CHECK(attention == 6);
  CHECK(moe == 23);
}

TEST_CASE("One Mamba-2 layer's FLOPs by hand, and TP splits its heads", "[models]") {
  // Nemotron 3 Nano's Mamba layer (h 2688, H 64 heads of P 64, G 8 groups of N 128, conv 4, chunk Q 128) on
  // one micro-batch of T = 8192 tokens, one GPU:
  //   in_proj   2 T h (2 H P + 2 G N + H) = 2 x 8192 x 2688 x 10304 = 453,790,138,368
  //   conv1d    2 x 4 x T x (H P + 2 G N) = 8 x 8192 x 6144          = 402,653,184
  //   SSD scan  T (2 G Q N + 4 H N P + H Q P) (the chunked algorithm of the Mamba-2 paper, sec. 6: C B^T per
  //             chunk and group, the chunk states B^T x and their read-out C state per head, the in-chunk
  //             (L o C B^T) x per head, causal so half of it) = 8192 x (262,144 + 2,097,152 + 524,288)
  //             = 8192 x 2,883,584                                     = 23,622,320,128
  //   out_proj  2 T H P h = 2 x 8192 x 4096 x 2688                     = 180,388,626,432
  // The scan's batched GEMMs over T / Q = 64 chunks: bmm_chunk 64 x 8 of [128, 128] x [128, 128]; chunk_state
  // and the read-out 64 x 64 of [128, 128] x [128, 64]; the in-chunk product 64 x 64 of [128, 128] x [128, 64].
  const ModelConfig m = preset("nemotron3-nano-30b-a3b");
  CHECK(mamba_scan_flops_per_token(m) == 2883584.0);
  TrainingConfig t = training(8192, 1);
  const LayerOps ops = transformer_layer_ops(m, t, false, false, LayerKind::mamba);
  const auto& f = ops.forward;
  CHECK(find_op(f, "in_proj").flops == 453790138368.0);
  CHECK(find_op(f, "in_proj").gemm.n == 10304);
  CHECK(find_op(f, "mamba_conv1d").flops == 402653184.0);
  CHECK(find_op(f, "out_proj").flops == 180388626432.0);
  const double scan = find_op(f, "ssd_bmm_chunk").flops + find_op(f, "ssd_chunk_state").flops + find_op(f, "ssd_chunk_scan_states").flops +
                      find_op(f, "ssd_chunk_scan_diag").flops;
  CHECK(scan == 23622320128.0);
  CHECK(find_op(f, "ssd_bmm_chunk").gemm.m == 64 * 8 * 128);
  CHECK(collective_names(f).empty());
  // The whole model's FLOPs count the same layer: 2 x in_proj and out_proj weights + the scan per token.
  CHECK(mamba_gemm_params(m) * 2.0 * 8192.0 == 453790138368.0 + 180388626432.0);
  // TP 2 with sequence parallelism: half the heads and groups per rank, the sequence gathered before in_proj
  // and reduce-scattered after out_proj, as for attention.
  TrainingConfig t2 = training(8192, 1, 2, true);
  const LayerOps tp = transformer_layer_ops(m, t2, false, false, LayerKind::mamba);
  CHECK(find_op(tp.forward, "in_proj").gemm.n == 10304 / 2);
  CHECK(find_op(tp.forward, "out_proj").gemm.k == 4096 / 2);
  CHECK(find_op(tp.forward, "ssd_chunk_state").flops == Approx(find_op(f, "ssd_chunk_state").flops / 2.0));
  CHECK(collective_names(tp.forward) == std::vector<std::string>{"ag_mamba", "rs_mamba"});
  // Backward: the out_proj and in_proj gradients (2 x each forward GEMM), and more scan work than forward.
  double bwd_scan = 0, fwd_scan = scan;
  for (const Op& op : ops.backward)
    if (op.kind == OpKind::gemm && op.name.rfind("ssd_", 0) == 0) bwd_scan += op.flops;
  CHECK(bwd_scan > 2.0 * fwd_scan);
  CHECK(bwd_scan < 4.0 * fwd_scan);
}
