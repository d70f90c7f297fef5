#include "models/workload/finetune.hpp"

#include <utility>


namespace cs::models {
namespace {

double d(std::int64_t x) { return static_cast<double>(x); }

// A bf16 GEMM [mm, kk] x [kk, nn] (transformer.cpp's gemm: operands read, output written, 2 bytes each).
Op adapter_gemm(std::string name, std::int64_t mm, std::int64_t nn, std::int64_t kk, OpRole role) {
  Op op;
  op.name = std::move(name);
  op.kind = OpKind::gemm;
  op.role = role;
  op.dtype = Dtype::bf16;
  op.gemm = GemmShape{mm, nn, kk};
  op.flops = 2.0 * d(mm) * d(nn) * d(kk);
  op.bytes = (d(mm) * d(kk) + d(kk) * d(nn) + d(mm) * d(nn)) * 2.0;
  return op;
}

// QLoRA: the NF4 weight of a [k, n] GEMM dequantized to bf16 (read 4.127 bits, write 2 bytes a weight).
Op dequantize(const Op& gemm, std::int64_t weights, OpRole role) {
  Op op;
  op.name = gemm.name + ".dequant";
  op.kind = OpKind::memory_bound;
  op.role = role;
  op.mem_kind = MemOpKind::elementwise;
  op.bytes = d(weights) * (kNf4BytesPerParam + 2.0);
  op.flops = d(weights);  // one scale multiply a weight
  return op;
}

std::string_view base_name(std::string_view name) {
  if (name.starts_with("recompute_")) name.remove_prefix(10);
  if (name.ends_with("_dgrad") || name.ends_with("_wgrad")) name.remove_suffix(6);
  return name;
}

bool frozen_wgrad(const Op& op) {
  return op.kind == OpKind::gemm && op.name.ends_with("_wgrad") && op.name.find(".lora_") == std::string::npos;
}

// Whether a base GEMM's weight is stored in NF4 under QLoRA: the layers' GEMMs, not the LM head.
bool quantized(const Op& op) { return op.kind == OpKind::gemm && base_name(op.name) != "logits"; }

}  // namespace

bool is_lora_target(const FinetuneConfig& f, std::string_view name) {
  return (name == "qkv" && f.qkv) || (name == "proj" && f.proj) || (name == "fc1" && f.fc1) || (name == "fc2" && f.fc2);
}

void apply_finetune(LayerOps& ops, const TrainingConfig& t) {
  const FinetuneConfig& f = t.finetune;
  if (!f.active()) return;
  const bool qlora = f.method == FinetuneMethod::qlora;
  const std::int64_t r = f.dim;
  // Forward (and recompute) of a base GEMM [T, k] x [k, n]: its adapter's x A and (x A) B after it.
  auto forward = [&](const Op& op, std::vector<Op>& out) {
    if (qlora && quantized(op)) out.push_back(dequantize(op, op.gemm.k * op.gemm.n, op.role));
    out.push_back(op);
    if (!is_lora_target(f, base_name(op.name))) return;
    const std::int64_t T = op.gemm.m, k = op.gemm.k, n = op.gemm.n;
    out.push_back(adapter_gemm(op.name + ".lora_a", T, r, k, op.role));
    out.push_back(adapter_gemm(op.name + ".lora_b", T, n, r, op.role));
  };
  std::vector<Op> fwd, bwd;
  for (const Op& op : ops.forward) {
    if (op.kind == OpKind::gemm) forward(op, fwd);
    else fwd.push_back(op);
  }
  for (const Op& op : ops.backward) {
    if (frozen_wgrad(op) || (op.kind == OpKind::memory_bound && op.mem_kind == MemOpKind::embedding)) continue;
    if (op.kind == OpKind::gemm && op.role == OpRole::recompute) {
      forward(op, bwd);
      continue;
    }
    if (op.kind != OpKind::gemm || !op.name.ends_with("_dgrad")) {
      bwd.push_back(op);
      continue;
    }
    // The base dgrad dX [T, k] = dY [T, n] x W^T: shape (T, k, n).
    if (qlora && quantized(op)) bwd.push_back(dequantize(op, op.gemm.n * op.gemm.k, op.role));
    bwd.push_back(op);
    const std::string_view base = base_name(op.name);
    if (!is_lora_target(f, base)) continue;
    const std::int64_t T = op.gemm.m, k = op.gemm.n, n = op.gemm.k;
    const std::string name(base);
    bwd.push_back(adapter_gemm(name + ".lora_b_dgrad", T, r, n, op.role));  // dH = dY B^T
    bwd.push_back(adapter_gemm(name + ".lora_b_wgrad", r, n, T, op.role));  // dB = H^T dY
    bwd.push_back(adapter_gemm(name + ".lora_a_dgrad", T, k, r, op.role));  // dX += dH A^T
    bwd.push_back(adapter_gemm(name + ".lora_a_wgrad", k, r, T, op.role));  // dA = X^T dH
  }
  // The embedding's backward is only its gradient scatter and the collectives feeding it: none is needed.
  bool embedding = false;
  for (const Op& op : ops.forward) embedding = embedding || (op.kind == OpKind::memory_bound && op.mem_kind == MemOpKind::embedding);
  if (embedding) bwd.clear();
  ops.forward = std::move(fwd);
  ops.backward = std::move(bwd);
}

double adapter_parameters_per_layer(const ModelConfig& m, const TrainingConfig& t, bool moe_layer) {
  const FinetuneConfig& f = t.finetune;
  if (!f.active()) return 0;
  const double r = f.dim, tp = t.tp, h = d(m.hidden_size), dh = d(m.head_dim());
  const double hq = d(m.num_attention_heads) / tp, hkv = d(m.num_query_groups) / tp;
  double p = 0;
  if (f.qkv) p += r * (h + (hq + 2.0 * hkv) * dh);  // column-parallel: k = h, n = its heads
  if (f.proj) p += r * (hq * dh + h);               // row-parallel: k = its heads, n = h
  if (m.num_moe_experts == 0 || !moe_layer) {
    const double ffn = d(m.ffn_hidden_size);
    if (f.fc1) p += r * (h + d(fc1_width(m, m.ffn_hidden_size)) / tp);
    if (f.fc2) p += r * (ffn / tp + h);
  }
  return p;
}

double adapter_activation_bytes_per_layer(const ModelConfig& m, const TrainingConfig& t, bool moe_layer) {
  const FinetuneConfig& f = t.finetune;
  if (!f.active()) return 0;
  const bool dense = m.num_moe_experts == 0 || !moe_layer;
  const int targets = f.qkv + f.proj + (dense ? f.fc1 + f.fc2 : 0);
  const double T = d(t.micro_batch_size) * d(t.seq_length / t.cp);
  return 2.0 * T * f.dim * targets;
}

double gemm_parameters_per_layer(const ModelConfig& m, const TrainingConfig& t, bool moe_layer) {
  const double tp = t.tp, h = d(m.hidden_size), dh = d(m.head_dim());
  double p = h * d(m.num_attention_heads + 2 * m.num_query_groups) * dh / tp + d(m.num_attention_heads) * dh * h / tp;
  if (m.num_moe_experts > 0 && moe_layer) {
    p += h * d(m.num_moe_experts) + mlp_matrices(m) * h * d(m.moe_shared_expert_intermediate_size) / tp;
    p += d(m.num_moe_experts / t.ep) * mlp_matrices(m) * h * d(expert_ffn(m)) / d(t.expert_tp());
  } else {
    p += mlp_matrices(m) * h * d(m.ffn_hidden_size) / tp;
  }
  return p;
}

double finetune_model_flops_per_step(const ModelConfig& m, const TrainingConfig& t) {
  const double full = model_flops_per_step(m, t);
  if (!t.finetune.active()) return full;
  // What training adds for the frozen weights: the wgrads, 2 FLOPs per GEMM parameter a token passes
  // (model_flops_per_step's P_gemm: QKV, out-proj, the MLP or the top-k experts, router and shared
  // experts) and 2 h V for the LM head. What the adapters add: 6 per adapter parameter (unsplit: TP 1).
  TrainingConfig whole = t;
  whole.tp = 1;
  whole.ep = 1;
  whole.etp = 0;
  const double h = d(m.hidden_size), dh = d(m.head_dim());
  double frozen = 0, adapters = 0;
  for (std::int64_t l = 0; l < m.num_layers; ++l) {
    const bool moe = m.num_moe_experts > 0 && is_moe_layer(m, l);
    frozen += h * d(m.num_attention_heads + 2 * m.num_query_groups) * dh + d(m.num_attention_heads) * dh * h;
    frozen += moe ? d(m.moe_router_topk) * mlp_matrices(m) * h * d(expert_ffn(m)) + h * d(m.num_moe_experts) +
                        mlp_matrices(m) * h * d(m.moe_shared_expert_intermediate_size)
                  : mlp_matrices(m) * h * d(m.ffn_hidden_size);
    adapters += adapter_parameters_per_layer(m, whole, moe);
  }
  const double tokens = d(t.global_batch_size) * d(t.seq_length);
  return full - tokens * (2.0 * frozen + 2.0 * h * d(m.vocab_size)) + tokens * 6.0 * adapters;
}

}  // namespace cs::models
