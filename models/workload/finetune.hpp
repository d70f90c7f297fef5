#pragma once
// Parameter-efficient fine-tuning: LoRA (Hu et al. 2021) and QLoRA (Dettmers et al. 2023).
//
// The base model is frozen; each targeted linear layer y = x W gets a low-rank branch y += (x A) B s,
// A [d_in, r], B [r, d_out], s = alpha / r, and only A and B train. Targets and names are Megatron-Bridge's
// (LoRA(target_modules=["linear_qkv", "linear_proj", "linear_fc1", "linear_fc2"], dim, alpha),
// megatron/bridge/peft/lora.py, docs/training/peft.md; HF PEFT's q/k/v_proj, o_proj, gate/up_proj, down_proj
// are the same four GEMMs, QKV and gate/up fused).
//
// What changes in the step (apply_finetune):
//  - no weight-gradient GEMM of a frozen weight: every base wgrad disappears (attention, MLP, experts,
//    router, LM head) and the embedding has no backward at all; the input gradients (dgrad) stay, since
//    the adapters below them need them;
//  - per targeted linear of per-rank shape [T, k] x [k, n] the adapter's GEMMs, in bf16: forward x A
//    [T, k] x [k, r] and (x A) B [T, r] x [r, n]; backward B's dgrad and wgrad, A's dgrad and wgrad, right
//    after the base dgrad (before the input gradient's TP collective, which carries their sum). Under TP the
//    adapter takes the base layer's split: A whole and B split for a column-parallel layer (QKV, FC1), A
//    split and B whole for a row-parallel one (out-proj, FC2), so a rank holds r (k + n) adapter parameters
//    with the rank's own k and n; the r-wide partial sums a split A makes are not reduced here (T r bytes,
//    under 0.1% of the layer's TP traffic at r <= 64);
//  - QLoRA: the layers' GEMM weights are stored in 4-bit NormalFloat with double-quantized block scales
//    (bitsandbytes, the QLoRA paper's section 3: a block of 64 weights shares an 8-bit absmax, 256 of those
//    an fp32 scale: 4 + 8 / 64 + 32 / (64 x 256) = 4.127 bits, kNf4BytesPerParam); each forward and dgrad
//    GEMM first dequantizes its weight to bf16 (an elementwise kernel reading the 4-bit weight and writing
//    the bf16 one), then runs in bf16. Embedding, LM head and norms stay bf16, as bitsandbytes leaves them.
// Memory (models/memory/finetune_memory.hpp): frozen weights (bf16, or NF4 for QLoRA), adapters in bf16 with
// their gradients and Adam states; activations as training stores them plus each adapter's x A.
// Model FLOPs (finetune_model_flops_per_step): per token 2 per frozen GEMM parameter forward and 2 for its
// dgrad (no 2 for its wgrad), attention as in training (it has no weights), the LM head 4 h V, and 6 per
// adapter parameter.
#include <string_view>

#include "models/workload/transformer.hpp"

namespace cs::models {

inline constexpr double kNf4BytesPerParam = (4.0 + 8.0 / 64.0 + 32.0 / (64.0 * 256.0)) / 8.0;

// Whether the base GEMM named `name` ("qkv", "proj", "fc1", "fc2": transformer.cpp's names) has an adapter.
bool is_lora_target(const FinetuneConfig& f, std::string_view name);

// The op list of a unit (transformer_layer_ops, embedding_ops, lm_head_ops) under training.finetune, as
// above; unchanged without it.
void apply_finetune(LayerOps& ops, const TrainingConfig& t);

// Adapter parameters one rank holds for one layer (a dense layer's or an MoE layer's: the experts carry no
// adapter, nor the shared experts).
double adapter_parameters_per_layer(const ModelConfig& m, const TrainingConfig& t, bool moe_layer);
// The adapters' stored activations per layer and micro-batch on one rank: each target's x A, 2 T r bytes.
double adapter_activation_bytes_per_layer(const ModelConfig& m, const TrainingConfig& t, bool moe_layer);
// The GEMM weights of one layer on one rank (what QLoRA stores in NF4): QKV, out-proj, the MLP (the rank's
// experts and the shared experts) and the router.
double gemm_parameters_per_layer(const ModelConfig& m, const TrainingConfig& t, bool moe_layer);
// Model FLOPs of a fine-tuning step (above); model_flops_per_step without training.finetune.
double finetune_model_flops_per_step(const ModelConfig& m, const TrainingConfig& t);

}  // namespace cs::models
