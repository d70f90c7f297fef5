#include "models/memory/memory_model.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include "models/memory/finetune_memory.hpp"
#include "models/memory/weight_pass_memory.hpp"
#include "models/workload/finetune.hpp"
#include "models/parallelism/ddp_bucket.hpp"
#include "models/parallelism/pipeline_schedule.hpp"
#include "sim/base/check.hpp"
#include "sim/base/units.hpp"

namespace cs::models {
namespace {

double d(std::int64_t x) { return static_cast<double>(x); }


// Bytes per parameter before sharding (ZeRO's mixed-precision Adam accounting). A gradient takes
// TrainingConfig::main_grads_dtype, the framework's: bf16 (2 B) as the ZeRO paper, DeepSpeed and the
// generic framework count, so that plain DDP is the textbook 16 B per parameter; Megatron-Core with bf16
// keeps fp32 main grads (--main-grads-dtype fp32, accumulate_allreduce_grads_in_fp32: 4 B, 18 B in all).
// ZeRO-2/3's transient bucket holds gradients in the reduce dtype (grad_reduce_dtype).
constexpr double kWeightBytes = 2.0;     // bf16 model weights
// Optimizer state per parameter: fp32 master weights and Adam's momentum and variance, 12 B with fp32
// moments; Megatron's precision-aware optimizer (--exp-avg-dtype / --exp-avg-sq-dtype) stores the
// moments narrower (DeepSeek-V3: bf16, arXiv:2412.19437 sec. 3.3.2: 8 B).
double optimizer_bytes_per_param(const TrainingConfig& t) {
  return 4.0 + element_bytes(t.exp_avg_dtype) + element_bytes(t.exp_avg_sq_dtype);
}

// Fixed buffers: cuBLAS workspace (32 MiB per handle on Hopper) and NCCL's communicator buffers
// (NCCL_BUFFSIZE 4 MiB per channel and peer direction; a few hundred MiB across a job's communicators —
// 256 MiB is a round figure for a rank in 3-4 communicators).
constexpr double kCublasWorkspaceBytes = 32.0 * kMiB;
constexpr double kNcclBuffersBytes = 256.0 * kMiB;
// CUDA context + framework (PyTorch caching allocator, kernels' modules) and allocator fragmentation:
// TrainingConfig::memory_reserve_gib (1 GiB by default) and allocator_fragmentation (5%).


// HYBRID_SHARD shards inside blocks of fsdp_shard_size DP x CP ranks (one node) and replicates across.
int data_parallel_shards(const TrainingConfig& t) { return t.fsdp_shard_size > 0 ? t.fsdp_shard_size : t.dp * t.cp; }
// Expert states shard over the expert-data-parallel group: TP CP DP / (ETP EP) ranks (MoE folding; with
// ETP = TP that is DP CP / EP).
int expert_data_parallel_shards(const TrainingConfig& t) {
  if (t.fsdp_shard_size > 0) return std::max(1, t.fsdp_shard_size / t.ep);
  return std::max(1, t.expert_dp());
}

// Micro-batches of each model chunk of stage `stage` whose forward ran and whose backward has not, at
// the stage's peak (right after its warm-up forwards):
//  - pp = 1: gradient accumulation runs one micro-batch at a time: 1.
//  - GPipe: all m micro-batches.
//  - 1F1B: min(p - i, m) micro-batches (warm-up p - i - 1 plus the one in 1F1B steady state).
//  - Interleaved (vp > 1): Megatron's warm-up is (p - i - 1) * 2 + (vp - 1) * p virtual micro-batches,
//    so the first min(that + 1, m vp) of them are in flight, virtual micro-batch k in chunk
//    (k mod p vp) div p (both from pipeline_schedule.hpp, the executor's own order); with an even split and i = 0, m large that is
//    L (1 + (p - 1) / (p vp)) layers, Korthikanti's interleaved factor.
// The zero-bubble schedules (ZB-H1, ZBV): each chunk's forwards whose B has not run and Bs whose W has
// not, walked along the stage's own order at its peak (pipeline_schedule.hpp, split_in_flight), the W
// pending weighed by what it keeps (weight_pass_memory.hpp) over a whole micro-batch's activations.
struct SplitInFlight {
  std::vector<std::int64_t> full, weight;
};
SplitInFlight split_in_flight(const ModelConfig& m, const TrainingConfig& t, int stage) {
  const double share = weight_pass_bytes_per_layer(m, t, true) / activation_bytes_per_layer(m, t, true);
  const sim::InFlight f = sim::split_in_flight(t.pipeline_schedule, t.pp, static_cast<int>(t.num_micro_batches()), stage, t.vp, share);
  return {{f.full.begin(), f.full.end()}, {f.weight.begin(), f.weight.end()}};
}

std::vector<std::int64_t> chunk_microbatches_in_flight(const TrainingConfig& t, int stage) {
  const std::int64_t mb = t.num_micro_batches();
  const std::int64_t vp = std::max(1, t.vp);
  std::vector<std::int64_t> n(static_cast<std::size_t>(vp), 0);
  // Megatron-Core's combined 1F1B (overlap_moe_expert_parallel_comm, sim/step/step_builder.cpp run_pair)
  // runs one forward more before the steady state pairs forward k + 1 with backward k, so one micro-batch
  // more is in flight.
  const int paired = t.overlap_moe_expert_parallel_comm && t.ep > 1 ? 1 : 0;
  if (sim::splits_backward(t.pipeline_schedule)) {
    // The forwards whose B has not run at their peak (the embedding's dropout masks; the layers' activations
    // are stage_activation_bytes's, which weighs the pending Ws too).
    const sim::InFlight f = sim::split_in_flight(t.pipeline_schedule, t.pp, static_cast<int>(mb), stage, t.vp, 0.0);
    n.assign(f.full.begin(), f.full.end());
  } else if (t.pp == 1) {
    n.assign(n.size(), std::min<std::int64_t>(1 + paired, mb));
  } else if (t.pipeline_schedule == PipelineSchedule::gpipe) {
    n.assign(n.size(), mb);
  } else {
    // The warm-up forwards plus the one that runs before the first backward, each in its chunk.
    const auto schedule = vp > 1 ? PipelineSchedule::interleaved : t.pipeline_schedule;
    const int v = static_cast<int>(vp), m = static_cast<int>(mb);
    const int in_flight = std::min(sim::warmup_forwards(schedule, t.pp, m, stage, v) + 1 + paired, m * v);
    for (int k = 0; k < in_flight; ++k) ++n[static_cast<std::size_t>(sim::forward_chunk(k, t.pp, v))];
  }
  return n;
}

// The layers of model chunk `chunk` of stage `stage` by kind: MoE or dense (moe_layer_freq; a dense model's
// are all dense), and in a hybrid model Mamba, attention-only or MLP-only (layer_kind). The pipeline split
// may give chunks different layer counts.
struct LayerKinds {
  std::array<double, 8> n{};  // layers, index 2 LayerKind + MoE
  double& at(LayerKind k, bool moe) { return n[2 * static_cast<std::size_t>(k) + (moe ? 1 : 0)]; }
  // The sum over the kinds present of count x f(kind, moe).
  template <class F>
  double sum(F f) const {
    double total = 0;
    for (std::size_t i = 0; i < n.size(); ++i)
      if (n[i] > 0) total += n[i] * f(static_cast<LayerKind>(i / 2), i % 2 == 1);
    return total;
  }
  void add(const LayerKinds& o) {
    for (std::size_t i = 0; i < n.size(); ++i) n[i] += o.n[i];
  }
};
LayerKinds chunk_layer_kinds(const ModelConfig& m, const TrainingConfig& t, int stage, int chunk) {
  LayerKinds k;
  // ZBV's chunk 1 of rank s is the split's chunk 1 of stage p - 1 - s (pipeline_schedule.hpp).
  if (sim::v_shape(t.pipeline_schedule) && chunk == 1) stage = t.pp - 1 - stage;
  const std::int64_t first = first_layer_of_chunk(m, t, stage, chunk);
  for (std::int64_t l = first; l < first + layers_in_chunk(m, t, stage, chunk); ++l) k.at(layer_kind(m, l), is_moe_layer(m, l)) += 1;
  return k;
}
LayerKinds stage_layer_kinds(const ModelConfig& m, const TrainingConfig& t, int stage) {
  LayerKinds k;
  for (int c = 0; c < t.vp; ++c) k.add(chunk_layer_kinds(m, t, stage, c));
  return k;
}

// What one micro-batch leaves stored in model chunk `chunk` of stage `stage` under full recompute other than
// every layer on its own (TrainingConfig::partial_full_recompute; Megatron-Core's TransformerBlock.
// _checkpointed_forward): uniform keeps the input of each group of recompute_num_layers layers, block the
// input of its first recompute_num_layers layers and everything the other layers save (as without recompute).
double partial_recompute_chunk_bytes(const ModelConfig& m, const TrainingConfig& t, int stage, int chunk) {
  TrainingConfig kept = t;
  kept.recompute = Recompute::none;
  const double input = activation_bytes_per_layer(m, t, true);  // a checkpoint: the layer's input, any kind
  const std::int64_t first = first_layer_of_chunk(m, t, stage, chunk), n = layers_in_chunk(m, t, stage, chunk);
  double bytes = 0;
  for (std::int64_t l = 0; l < n; ++l) {
    if (t.recompute_method == RecomputeMethod::uniform) bytes += l % t.recompute_num_layers == 0 ? input : 0.0;
    else bytes += t.layer_recomputed(l) ? input : activation_bytes_per_layer(m, kept, is_moe_layer(m, first + l), layer_kind(m, first + l));
  }
  return bytes;
}

// Activations stage `stage` holds at its peak: each chunk's micro-batches in flight times the stored
// bytes of its layers.
double stage_activation_bytes(const ModelConfig& m, const TrainingConfig& t, int stage) {
  const auto stored = [&](LayerKind kind, bool moe) { return activation_bytes_per_layer(m, t, moe, kind); };
  double bytes = 0;
  if (sim::splits_backward(t.pipeline_schedule)) {  // transformer layers only (layout_problems)
    const SplitInFlight n = split_in_flight(m, t, stage);
    const auto weight_pass = [&](LayerKind, bool moe) { return weight_pass_bytes_per_layer(m, t, moe); };
    for (int c = 0; c < t.vp; ++c) {
      const LayerKinds k = chunk_layer_kinds(m, t, stage, c);
      bytes += d(n.full[static_cast<std::size_t>(c)]) * k.sum(stored) + d(n.weight[static_cast<std::size_t>(c)]) * k.sum(weight_pass);
    }
    return bytes;
  }
  const auto n = chunk_microbatches_in_flight(t, stage);
  if (t.cpu_offloading_num_layers > 0) return d(n.front()) * offload_peak_layer_bytes(m, t);  // PP 1: one stage, one chunk
  for (int c = 0; c < t.vp; ++c)
    bytes += d(n[static_cast<std::size_t>(c)]) *
             (t.partial_full_recompute() ? partial_recompute_chunk_bytes(m, t, stage, c) : chunk_layer_kinds(m, t, stage, c).sum(stored));
  return bytes;
}

// The stage holding the final norm, the LM head and the loss: the last, or rank 0 in ZBV's V.
int head_stage(const TrainingConfig& t) { return sim::v_shape(t.pipeline_schedule) ? 0 : t.pp - 1; }

// Micro-batches whose first-stage input (embedding output) is alive, and whose last-stage output
// (logits) is alive.
double first_stage_microbatches(const TrainingConfig& t) { return d(chunk_microbatches_in_flight(t, 0).front()); }
double last_stage_microbatches(const TrainingConfig& t) {
  return t.pp > 1 && t.pipeline_schedule == PipelineSchedule::gpipe ? d(t.num_micro_batches()) : 1.0;
}

}  // namespace

// Stored tensors of one layer, bytes, for T = b s / cp tokens on a rank with TP t (SP divides the
// non-TP-split tensors by t too). Korthikanti et al. 2022, section 4.1, counts (16-bit, with dropout):
//   attention block 11 s b h + 5 a s^2 b : QKV input 2, Q and K 4, V 2, out-proj input 2, dropout
//                                         mask 1 (s b h units); softmax 2, its dropout mask 1, dropout
//                                         output 2 (a s^2 b units)
//   MLP block 19 s b h                  : FC1 input 2, GeLU input 8, FC2 input 8, dropout mask 1
//   two LayerNorms 4 s b h              : their inputs
// = 34 s b h + 5 a s^2 b. Here each term is a real tensor with its real width, so GQA shrinks K and V to
// g d, SwiGLU's FC1 output is 2f wide and its FC2 input f wide, dropout masks appear only when the model
// uses dropout, and flash attention replaces the a s^2 b terms by its fp32 log-sum-exp (4 a s b bytes).
// Selective recompute drops what the recompute_modules re-run: core_attn what the attention core would
// store beyond its inputs (scores, LSE), layernorm the two norm outputs (QKV's and FC1's inputs), mlp a
// dense MLP's FC1 output and FC2 input, moe_act each expert's FC2 input, mla_up_proj MLA's Q, K, V and
// normed latents; full recompute keeps only the layer input (2 s b h, / t with SP).
// Three run choices narrow what an MoE / SwiGLU layer keeps (TrainingConfig): activation_func_fp8_input_store
// (the SwiGLU's own saved input in FP8), moe_apply_probs (activation: no expert outputs kept for the
// combine) and, outside the activations, exp_avg_dtype / exp_avg_sq_dtype (the optimizer's moments).
// FP8 training (precision fp8): Transformer Engine saves the FP8-quantized input of each FP8 GEMM for its
// backward pass, 1 byte per element instead of 2: QKV's and FC1's inputs (the norm outputs), the
// out-proj input and FC2's input, and the experts' FC1 and FC2 inputs. The norm inputs, Q/K/V, a fused
// attention kernel's output O and the FC1 output are bf16 tensors saved by other ops and stay 2 bytes
// (NVIDIA/TransformerEngine @ d0067d0 transformer_engine/pytorch/module/linear.py _Linear.forward:
// "saved_inputmat = inputmat", the quantized input, with its row-wise data discarded when backward needs
// only the column-wise copy; layernorm_linear.py and layernorm_mlp.py save ln_out and the FC2 input the
// same way).
namespace {
void add_mlp_activation_bytes(const ModelConfig& m, const TrainingConfig& t, bool moe_layer, double T, double gemm_in, double& bytes);
}  // namespace

double activation_bytes_per_layer(const ModelConfig& m, const TrainingConfig& t, bool moe_layer, LayerKind kind) {
  CS_CHECK(layout_problems(m, t).empty());
  const bool sp = t.sequence_parallel && t.tp > 1;
  const double tp = t.tp;
  const double seq_q = d(t.seq_length / t.cp);
  const double T = d(t.micro_batch_size) * seq_q;
  const double h = d(m.hidden_size);
  const double sp_div = sp ? tp : 1.0;
  const double th = T * h / sp_div;  // a hidden-size tensor outside the TP-split region

  if (t.recompute == Recompute::full) return 2.0 * th;

  const double dh = d(m.head_dim());
  const double hq = d(m.num_attention_heads) / tp, hkv = d(m.num_query_groups) / tp;
  const double dropout_masks = m.hidden_dropout > 0 ? 1.0 : 0.0;  // 1-byte masks

  const bool selective = t.recompute == Recompute::selective;
  const RecomputeModules& rm = t.recompute_modules;
  const double gemm_in = saved_gemm_input_bytes(t.effective_recipe());  // bytes of a saved GEMM input (above)
  // Inputs of the two norms (2 bytes each), of QKV and of FC1 (the norm outputs, GEMM inputs, not stored
  // when recompute_modules re-runs the norms), plus the two residual-branch dropout masks. A hybrid model's
  // layers have one norm, one GEMM input after it and one residual each.
  double bytes = kind == LayerKind::transformer ? (4.0 + (selective && rm.layernorm ? 0.0 : 2.0 * gemm_in)) * th + 2.0 * dropout_masks * th
                                                : (2.0 + (selective && rm.layernorm ? 0.0 : gemm_in)) * th + dropout_masks * th;
  if (kind == LayerKind::mamba) {
    // The Mamba-2 mixer (transformer.cpp mamba_layer_ops), per token on the rank (heads H / t, groups G / t):
    // mamba_ssm's MambaSplitConv1dScanCombinedFn saves in_proj's output zxBCdt (2 d_inner + 2 G N + H wide)
    // and the scan's un-gated output (d_inner) -- the conv output, chunk states and dA are recomputed in its
    // backward -- the gated norm keeps its input (d_inner), and out_proj its input (a GEMM input, d_inner).
    // Its norm is not re-run by recompute_modules "layernorm" (MambaLayer has no recompute of its own), so
    // in_proj's input is kept.
    const MambaConfig& c = m.mamba;
    const double heads = d(m.mamba_heads()) / tp, groups = d(c.num_groups) / tp, d_in = heads * d(c.head_dim);
    bytes = (2.0 + gemm_in) * th + dropout_masks * th;
    return bytes + 2.0 * T * (2.0 * d_in + 2.0 * groups * d(c.state_dim) + heads) + (4.0 + gemm_in) * T * d_in;
  }
  if (kind == LayerKind::mlp) {
    add_mlp_activation_bytes(m, t, moe_layer, T, gemm_in, bytes);
    return bytes;
  }
  // Q, K, V and the attention output (the out-proj input). A fused attention kernel keeps its output O
  // for its own backward too: one bf16 tensor with out-proj's input in 16-bit training, a second (FP8)
  // copy beside it in FP8.
  const double attention_out = gemm_in + (gemm_in < 2.0 && m.attention_impl != AttentionImpl::unfused ? 2.0 : 0.0);
  if (m.mla.enabled()) {
    // MLA (transformer.hpp MlaConfig): the attention kernel's Q and K (d_qk = d_n + d_r per head) and V
    // (d_v), each head its own; O (d_v); and the up-projections' inputs, saved by Transformer Engine's
    // LayerNormColumnParallelLinear on the rank's sequence shard: the latent before its norm (2 B) and
    // the normed latent the GEMM reads (a GEMM input), r_q and r_kv wide. The down-projections read the
    // layer norm's output, counted above as QKV's input.
    const models::MlaConfig& a = m.mla;
    const double dqk = d(a.qk_head_dim()), dv = d(a.v_head_dim);
    const double latents = d(a.q_lora_rank + a.kv_lora_rank);
    // recompute_modules "mla_up_proj" checkpoints the latent norms, the up-projections and RoPE as one
    // function (Megatron-Core core_v0.14.0 multi_latent_attention.py get_query_key_value_tensors:
    // CheckpointWithoutOutput over qkv_up_proj_and_rope_apply, whose first steps are q_layernorm /
    // kv_layernorm), so it keeps only that function's inputs, the latents before their norms and the
    // shared RoPE key k_pos_emb (d_r wide), in bf16; Q, K and V are discarded after the attention's forward
    // and re-made before its backward, and the normed latents are never stored (DeepSeek-V3 sec. 3.2.3:
    // the RMSNorms and the up-projections are recomputed).
    if (selective && rm.mla_up_proj) {
      bytes += attention_out * T * hq * dv + 2.0 * T / sp_div * (latents + d(a.qk_rope_head_dim));
    } else {
      bytes += 2.0 * T * hq * (2.0 * dqk + dv) + attention_out * T * hq * dv + (2.0 + gemm_in) * T / sp_div * latents;
    }
  } else {
    bytes += 2.0 * T * dh * (hq + 2.0 * hkv) + attention_out * T * dh * hq;
  }
  if (!(selective && rm.core_attn)) {
    if (m.attention_impl != AttentionImpl::unfused) {
      bytes += 4.0 * T * hq;  // fp32 log-sum-exp per query row
    } else {
      const double scores = d(t.micro_batch_size) * hq * seq_q * d(t.seq_length);
      bytes += 2.0 * scores + (m.attention_dropout > 0 ? 3.0 * scores : 0.0);  // softmax; its mask and output
    }
  }
  if (kind != LayerKind::attention) add_mlp_activation_bytes(m, t, moe_layer, T, gemm_in, bytes);
  return bytes;
}

namespace {
// What an MLP block stores beyond its norm input and its first GEMM's input (activation_bytes_per_layer),
// added to `bytes`.
void add_mlp_activation_bytes(const ModelConfig& m, const TrainingConfig& t, bool moe_layer, double T, double gemm_in, double& bytes) {
  const bool sp = t.sequence_parallel && t.tp > 1;
  const double tp = t.tp, h = d(m.hidden_size);
  const bool selective = t.recompute == Recompute::selective;
  const RecomputeModules& rm = t.recompute_modules;
  // The SwiGLU's saved input (its FC1 output): bf16, or FP8 E4M3 under activation_func_fp8_input_store
  // (Megatron-Core core_v0.14.0 fusions/fused_bias_swiglu.py: input.to(torch.float8_e4m3fn) saved for
  // backward, no scale). Only where the activation saves it itself: a "mlp" / "moe_act" checkpoint saves
  // its bf16 input (tensor_parallel.CheckpointWithoutOutput), the flag saves nothing there.
  const double act_in = t.activation_func_fp8_input_store ? 1.0 : 2.0;
  if (m.num_moe_experts == 0 || !moe_layer) {
    const double f = d(m.ffn_hidden_size) / tp;
    const double fc1_out = m.activation == Activation::swiglu ? 2.0 * f : f;
    if (!(selective && rm.mlp)) bytes += act_in * T * fc1_out + gemm_in * T * f;  // "mlp": re-run, keeps its input only
  } else {
    // The rank routes its Tr tokens (the sequence shard with SP; transformer.cpp mlp_ops): router
    // probabilities (fp32, Tr E), the expert FC1 inputs after the dispatch and the ETP all-gather
    // (Tr ETP k copies), the experts' FC1 outputs and FC2 inputs (1 / ETP wide), and what weighing each
    // copy by its probability keeps (moe_apply_probs): at the combine, the expert outputs (bf16, Tr k
    // copies; the multiply's gradient for the probabilities reads them); in the activation, the copies'
    // fp32 probabilities (Tx k), the weighted SwiGLU's second input.
    const double k = d(m.moe_router_topk);
    const double Tr = sp ? T / tp : T, Tx = Tr * d(t.expert_tp());
    const double f = d(expert_ffn(m)) / d(t.expert_tp());
    const double fc1_out = m.activation == Activation::swiglu ? 2.0 * f : f;
    const bool moe_act = selective && rm.moe_act;  // FC2 input re-run from the checkpoint's bf16 FC1 output
    const double weighing = t.moe_apply_probs == MoeProbsPlacement::combine ? 2.0 * Tr * k * h : 4.0 * Tx * k;
    bytes += 4.0 * Tr * d(m.num_moe_experts) + gemm_in * Tx * k * h + (moe_act ? 2.0 : act_in) * Tx * k * fc1_out +
             (moe_act ? 0.0 : gemm_in * Tx * k * f) + weighing;
    // Shared experts: a dense MLP of width S / t on all T tokens (its input is the norm output above).
    const double fs = d(m.moe_shared_expert_intermediate_size) / tp;
    bytes += act_in * T * (m.activation == Activation::swiglu ? 2.0 * fs : fs) + gemm_in * T * fs;
  }
}
}  // namespace

double activation_bytes_per_layer(const ModelConfig& m, const TrainingConfig& t) {
  return activation_bytes_per_layer(m, t, true);
}

RankParameters layer_parameters_on_rank(const ModelConfig& m, const TrainingConfig& t, bool moe_layer, LayerKind kind) {
  const double tp = t.tp;
  const double h = d(m.hidden_size), dh = d(m.head_dim());
  // TP splits the GEMM weights; norms (and the router) are replicated on every TP rank, and so are MLA's
  // down-projections (TELinear, duplicated) and its latent norms.
  RankParameters p;
  // A Mamba-2 layer: everything but its pre-norm is split by TP (MambaMixer: in_proj column-, out_proj
  // row-parallel; conv1d, dt_bias, A_log, D and the gated norm's weight by heads / channels).
  if (kind == LayerKind::mamba) return {norm_params(m) + (mamba_layer_params(m) - norm_params(m)) / tp, 0};
  if (kind == LayerKind::mlp) {
    p.dense = norm_params(m);  // an MLP-only layer: its norm, then the MLP below
  } else if (m.mla.enabled()) {
    const double replicated = attention_replicated_params(m);
    p.dense = (attention_gemm_params(m) - replicated) / tp + replicated + attention_norm_params(m) + 2.0 * norm_params(m);
  } else {
    const double attention = h * d(m.num_attention_heads + 2 * m.num_query_groups) * dh +
                             d(m.num_attention_heads) * dh * h;
    p.dense = attention / tp + (kind == LayerKind::transformer ? 2.0 : 1.0) * norm_params(m);
  }
  if (kind == LayerKind::attention) return p;  // an attention-only layer (add_bias_linear: layout_problems)
  if (m.num_moe_experts > 0 && moe_layer) {
    // Router (replicated) and shared experts (TP-split, like a dense MLP) are dense parameters.
    p.dense += h * d(m.num_moe_experts) + mlp_matrices(m) * h * d(m.moe_shared_expert_intermediate_size) / tp;
    p.expert = d(m.num_moe_experts / t.ep) * mlp_matrices(m) * h * d(expert_ffn(m)) / d(t.expert_tp());
  } else {
    p.dense += mlp_matrices(m) * h * d(m.ffn_hidden_size) / tp;
  }
  if (m.add_bias_linear) {
    // Biases (models::parameter_count's bias_parameters_per_layer): the column-parallel ones (QKV, FC1)
    // split by TP, the row-parallel ones (out-proj, FC2) and the router's whole on every TP rank.
    p.dense += (m.mla.enabled() ? 0.0 : d(m.num_attention_heads + 2 * m.num_query_groups) * dh / tp) + h;  // MLA: out-proj's only
    if (m.num_moe_experts > 0 && moe_layer) {
      p.dense += d(m.num_moe_experts);
      if (m.moe_shared_expert_intermediate_size > 0) p.dense += d(fc1_width(m, m.moe_shared_expert_intermediate_size)) / tp + h;
      p.expert += d(m.num_moe_experts / t.ep) * (d(fc1_width(m, expert_ffn(m))) / d(t.expert_tp()) + h);
    } else {
      p.dense += d(fc1_width(m, m.ffn_hidden_size)) / tp + h;
    }
  }
  return p;
}

RankParameters mtp_parameters_on_rank(const ModelConfig& m, const TrainingConfig& t) {
  if (m.mtp_num_layers <= 0) return {};
  const double h = d(m.hidden_size);
  RankParameters p = layer_parameters_on_rank(m, t, is_moe_layer(m, m.num_layers - 1));
  p.dense += 3.0 * norm_params(m) + 2.0 * h * h / t.tp;  // enorm, hnorm, final norm; eh_proj column-parallel
  const double n = d(m.mtp_num_layers);
  return {n * p.dense, n * p.expert};
}

RankParameters parameters_on_rank(const ModelConfig& m, const TrainingConfig& t, int stage) {
  CS_CHECK(layout_problems(m, t).empty());
  CS_CHECK(stage >= 0 && stage < t.pp);
  const double h = d(m.hidden_size), tp = t.tp;
  const LayerKinds k = stage_layer_kinds(m, t, stage);
  RankParameters p{k.sum([&](LayerKind kind, bool moe) { return layer_parameters_on_rank(m, t, moe, kind).dense; }),
                   k.sum([&](LayerKind kind, bool moe) { return layer_parameters_on_rank(m, t, moe, kind).expert; })};
  const double word = d(padded_vocab_size(m, t.tp)) * h / tp;
  if (stage == 0) p.dense += word + d(m.max_position_embeddings) * h;
  if (stage == head_stage(t)) {
    p.dense += norm_params(m);
    if (m.untie_embeddings || head_stage(t) != 0) p.dense += word;  // a tied embedding elsewhere: its copy
    if (m.mtp_num_layers > 0) {
      const RankParameters mtp = mtp_parameters_on_rank(m, t);
      p.dense += mtp.dense;
      p.expert += mtp.expert;
    }
  }
  return p;
}

double offloaded_layer_bytes(const ModelConfig& m, const TrainingConfig& t, std::int64_t layer) {
  return activation_bytes_per_layer(m, t, is_moe_layer(m, layer), layer_kind(m, layer));
}

double offload_peak_layer_bytes(const ModelConfig& m, const TrainingConfig& t) {
  const std::int64_t L = m.num_layers, N = t.cpu_offloading_num_layers;
  CS_CHECK(N > 0 && N < L && t.pp == 1);
  std::vector<double> bytes(static_cast<std::size_t>(L));
  for (std::int64_t l = 0; l < L; ++l) bytes[static_cast<std::size_t>(l)] = offloaded_layer_bytes(m, t, l);
  double peak = 0;
  for (std::int64_t j = 0; j < L; ++j) {
    double resident = 0;
    for (std::int64_t i = 0; i <= j; ++i)
      if (i >= N || i > j - (L - N)) resident += bytes[static_cast<std::size_t>(i)];
    peak = std::max(peak, resident);
  }
  return peak;
}

MemoryBreakdown memory_per_gpu(const ModelConfig& m, const TrainingConfig& t, int stage) {
  CS_CHECK(layout_problems(m, t).empty());
  CS_CHECK(stage >= 0 && stage < t.pp);
  MemoryBreakdown b;
  b.stage = stage;
  const RankParameters p = parameters_on_rank(m, t, stage);
  const double nd = data_parallel_shards(t), ne = expert_data_parallel_shards(t);
  auto sharded = [&](bool shard) { return shard ? p.dense / nd + p.expert / ne : p.total(); };
  if (t.finetune.active()) {
    // LoRA / QLoRA (finetune_memory.hpp): frozen weights without gradients or optimizer state; the
    // adapters (dense, the loader refuses ZeRO-3) with both.
    const FinetuneRank f = finetune_rank(m, t, stage, p);
    b.weights_bytes = f.frozen_weight_bytes + kWeightBytes * f.adapter_params;
    b.grads_bytes = element_bytes(t.main_grads_dtype) * f.adapter_params / (t.zero_stage >= 2 ? nd : 1.0);
    b.optimizer_bytes = optimizer_bytes_per_param(t) * f.adapter_params / (t.zero_stage >= 1 ? nd : 1.0);
  } else {
    b.weights_bytes = kWeightBytes * sharded(t.zero_stage >= 3);
    b.grads_bytes = element_bytes(t.main_grads_dtype) * sharded(t.zero_stage >= 2);
    b.optimizer_bytes = optimizer_bytes_per_param(t) * sharded(t.zero_stage >= 1);
  }

  // Activations: the layers in flight, plus Korthikanti's section 4.3 extras — the embedding dropout
  // mask per micro-batch in flight on the first stage, and on the last stage the final norm's input,
  // the LM head's input and the fp32 logits the loss keeps (4 T V / t).
  const bool sp = t.sequence_parallel && t.tp > 1;
  const double T = d(t.micro_batch_size) * d(t.seq_length / t.cp);
  const double th = T * d(m.hidden_size) / (sp ? t.tp : 1);
  double act = stage_activation_bytes(m, t, stage);
  if (t.recompute == Recompute::full) {
    // While a layer is recomputed and back-propagated its full activations exist once (the stage's
    // largest kind of layer); under uniform with groups of recompute_num_layers a whole group's (at most
    // the largest chunk's layers) are alive together. Under block the checkpointed layers are a chunk's
    // first, back-propagated after its kept ones have freed theirs, so a chunk that keeps a layer never
    // exceeds what it stored; only a chunk checkpointed whole adds the re-run layer.
    TrainingConfig no_recompute = t;
    no_recompute.recompute = Recompute::none;
    const LayerKinds k = stage_layer_kinds(m, t, stage);
    double largest = 0;
    k.sum([&](LayerKind kind, bool moe) {
      largest = std::max(largest, activation_bytes_per_layer(m, no_recompute, moe, kind));
      return 0.0;
    });
    std::int64_t group = t.recompute_method == RecomputeMethod::uniform ? 1 : 0;
    for (int c = 0; c < t.vp; ++c) {
      const std::int64_t n = layers_in_chunk(m, t, stage, c);
      if (t.recompute_method == RecomputeMethod::uniform) group = std::max(group, std::min(t.recompute_num_layers, n));
      else if (n > 0 && n <= t.recompute_num_layers) group = 1;
    }
    act += d(group) * largest;
  }
  if (t.finetune.active()) {  // each adapter's x A, for the micro-batches in flight
    const auto n = chunk_microbatches_in_flight(t, stage);
    for (int c = 0; c < t.vp; ++c) {
      const LayerKinds k = chunk_layer_kinds(m, t, stage, c);  // transformer layers only (layout_problems)
      act += d(n[static_cast<std::size_t>(c)]) * k.sum([&](LayerKind, bool moe) { return adapter_activation_bytes_per_layer(m, t, moe); });
    }
  }
  if (stage == 0 && m.hidden_dropout > 0) act += first_stage_microbatches(t) * th;
  if (stage == head_stage(t)) {
    const double vocab_per_rank = d(padded_vocab_size(m, t.tp) / t.tp);
    act += last_stage_microbatches(t) * (4.0 * th + 4.0 * T * vocab_per_rank);
    if (m.mtp_num_layers > 0) {
      // Each multi-token-prediction module (transformer.cpp mtp_module_ops), for every micro-batch in flight
      // in the last model chunk: its layer's stored tensors, enorm's and hnorm's inputs (2 B each), eh_proj's
      // 2h-wide input (a GEMM input) and output, the final norm's and the head's inputs, and the fp32 logits
      // of its loss (under full recompute the layer keeps its input only, activation_bytes_per_layer).
      const double gemm_in = saved_gemm_input_bytes(t.effective_recipe());
      const double module = activation_bytes_per_layer(m, t, is_moe_layer(m, m.num_layers - 1)) + (4.0 + 2.0 * gemm_in + 2.0 + 4.0) * th +
                            4.0 * T * vocab_per_rank;
      act += d(chunk_microbatches_in_flight(t, stage).back()) * d(m.mtp_num_layers) * module;
    }
  }
  b.activations_bytes = act;

  // Buffers: cuBLAS workspace, NCCL buffers when the job has more than one GPU, ZeRO-2/3's bucket of
  // unsharded grads being reduce-scattered, ZeRO-3's gathered bf16 weights of two layers (the current
  // one and the prefetched next; DeepSpeed 0.3: two submodules, below).
  double buffers = kCublasWorkspaceBytes;
  const std::int64_t world = static_cast<std::int64_t>(t.tp) * t.pp * t.cp * t.dp;
  if (world > 1) buffers += kNcclBuffersBytes;
  if (t.zero_stage >= 2 && nd > 1) {
    // One bucket of unsharded grads exists while it is reduce-scattered (ddp_bucket.hpp).
    const double trained = t.finetune.active() ? adapter_parameters_on_rank(m, t, stage) : p.total();
    buffers += element_bytes(t.grad_reduce_dtype) * std::min(trained, ddp_bucket_params(t.dp));
  }
  if (t.zero_stage >= 3 && nd > 1) {
    if (t.zero3_collectives == Zero3Collectives::per_tensor_synchronous) {
      // DeepSpeed 0.3 gathers one submodule's own parameters at a time (stage3.py fetch_sub_module:
      // named_parameters(recurse=False), so a Linear's weight and bias) and frees them after its forward or
      // backward (release_sub_module) unless the next use is within max_reuse_distance elements (1e9 by
      // default: the last submodule a checkpointed layer recomputes is kept for its backward, which follows
      // at once). Two of the largest tensors bound what is gathered at once: the one in use and one kept
      // (microsoft/DeepSpeed 12a53b43, deepspeed/runtime/zero/stage3.py).
      // The stage's tensors: its layers', the embedding's on the first stage, the head's on the last.
      std::vector<double> tensors = layer_parameter_tensors(m, t.tp);
      if (stage == 0) for (const double n : embedding_parameter_tensors(m, t.tp)) tensors.push_back(n);
      if (stage == head_stage(t)) for (const double n : head_parameter_tensors(m, t.tp)) tensors.push_back(n);
      double largest = 0;
      for (const double n : tensors) largest = std::max(largest, n);
      buffers += 2.0 * kWeightBytes * largest;
    } else {
      // One layer's parameters (the stage's total over its layers, embedding and head included, as an
      // upper bound of the largest unit).
      buffers += 2.0 * kWeightBytes * p.total() / std::max(1.0, d(layers_on_stage(m, t, stage)));
    }
  }
  b.buffers_bytes = buffers;

  const double dynamic = b.weights_bytes + b.grads_bytes + b.optimizer_bytes + b.activations_bytes +
                         b.buffers_bytes;
  b.reserved_bytes = t.memory_reserve_gib * kGiB + t.allocator_fragmentation * dynamic;
  return b;
}

MemoryBreakdown peak_memory_per_gpu(const ModelConfig& m, const TrainingConfig& t) {
  MemoryBreakdown best = memory_per_gpu(m, t, 0);
  for (int s = 1; s < t.pp; ++s) {
    MemoryBreakdown b = memory_per_gpu(m, t, s);
    if (b.total_bytes() > best.total_bytes()) best = b;
  }
  return best;
}

double hbm_capacity_bytes(const GpuSpec& gpu) { return gpu.hbm_gib * kGiB; }

bool fits_in_memory(const MemoryBreakdown& m, const GpuSpec& gpu) { return m.total_bytes() <= hbm_capacity_bytes(gpu); }

}  // namespace cs::models
