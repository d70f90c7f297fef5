#pragma once
// Transformer workload: the kernels one rank runs for one transformer layer (and the embedding, the LM
// head with its loss, and the optimizer step), forward and backward, for a given model and layout.
//
// Shapes follow Megatron-LM. Per layer with hidden h, heads a, query groups g (GQA; g = a for MHA),
// head dim d (Megatron's kv_channels; h/a when not given, and then a d = h), FFN width f, tokens T = micro_batch * seq / cp, TP degree t:
//   forward:  norm -> QKV GEMM [T, h] x [h, (a + 2g) d / t] -> attention core (flash, causal)
//             -> out-proj GEMM [T, a d / t] x [a d / t, h] -> TP all-reduce (or reduce-scatter with SP)
//             -> residual add -> norm -> (SP: all-gather) -> FC1 [T, h] x [h, f' / t] (f' = 2f for SwiGLU)
//             -> activation (GeLU / SwiGLU) -> FC2 [T, f / t] x [f / t, h] -> TP all-reduce (or RS)
//             -> residual add. With SP the attention-block input is all-gathered before the QKV GEMM too,
//             and norms / residuals / dropout run on T / t tokens.
//   backward: for every GEMM a dgrad [T, n] x [n, k] and a wgrad [k, T] x [T, n] (2x the forward
//             FLOPs), the attention backward, the backward of each memory-bound op, and the conjugate TP
//             collectives (all-reduce of the input gradient; with SP all-gather <-> reduce-scatter).
// Recompute: "selective" re-runs the attention core forward inside backward; "full" re-runs the whole
// layer forward (Megatron's uniform full recompute) before the backward. With context parallelism the
// recomputed attention is ring attention again, so its KV exchange (recompute_cp_kv) is replayed too.
// Megatron-Core's recompute_modules choose what "selective" recomputes (RecomputeModules): core_attn (the
// default, above), layernorm (both norms re-run before the backward that needs their outputs, which are
// then not stored), mlp (a dense MLP's forward re-run before its backward: FC1's output and FC2's input
// not stored) and moe_act (each expert's activation re-run before its FC2 backward: FC2's input not
// stored), and with MLA mla_up_proj (MlaConfig below).
// MoE layers (num_moe_experts > 0) replace the MLP with a router GEMM and top-k experts: each token's FC1
// and FC2 run k times (FLOPs x k), with all-to-all dispatch and combine on the EP group.
// Sliding-window attention (Megatron's window_size (w, 0) and window_attn_skip_freq; gpt-oss windows
// every other layer with w = 128): a query at position i sees keys i - w .. i, i.e. min(i + 1, w + 1)
// of them. Counted continuously as the causal case is (s^2 / 2 pairs), a windowed layer has
// s w' - w'^2 / 2 query-key pairs with w' = min(w + 1, s) instead of s^2 / 2, and its attention op is
// shaped as what the kernel runs: every query block meets about w' keys, uniform work like a
// non-causal attention over w' keys (AttentionShape{causal = false, seq_kv = w'}), with the exact
// FLOPs above. Attention sinks (gpt-oss's learned per-head logit) add one column to the softmax and
// are ignored.
// Hybrid models (ModelConfig::hybrid_override_pattern; Nemotron-H, Nemotron 3): each layer is one block of its
// letter -- a Mamba-2 mixer ('M': norm, in_proj, causal conv1d, the SSD chunked scan, gated RMSNorm, out_proj;
// mamba_layer_ops in transformer.cpp derives its kernels from mamba_ssm's), attention alone ('*'), an MLP ('-')
// or an MoE MLP ('E') -- each with its own norm and residual (LayerKind, layer_kind).
// Rotary position embedding (RoPE; Megatron's position_embedding_type "rope", Llama / Mistral / Mixtral /
// Qwen / gpt-oss) is its own memory-bound kernel on Q and K after the QKV GEMM (Transformer Engine's
// fused RoPE), and on their gradients in backward; learned absolute positions (GPT-3, BERT) are an
// embedding lookup instead (embedding_ops).
// The optimizer step is Megatron's: the gradient norm for clip_grad (a pass over
// the rank's fp32 gradients and a scalar all-reduce), then fused AdamW with the clip scale folded in.
// Biases (add_bias_linear): only the MoE experts' FC2 bias has kernels of its own (Megatron-Core adds it
// outside the grouped GEMM, per expert); the others ride in GEMM epilogues and fused kernels. Megatron-
// Core's unfused RoPE (apply_rope_fusion false, what YaRN with mscale != 1 runs): its PyTorch kernels.
// What this ignores: dropout (off in modern LLM training), dense layers' bias kernels (fused),
// kernel fusions beyond flash attention and fused norms, the MoE load-balancing loss (a few scalars per
// token and expert).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/workload/finetune_config.hpp"
#include "models/workload/op.hpp"

namespace cs::models {

// squared_relu: Megatron-Core's squared_relu (relu(x)^2), the non-gated 2-matrix MLP of Nemotron-H and
// Nemotron 3 (HF mlp_hidden_act "relu2"), with RMSNorm like SwiGLU models (norm_params).
enum class Activation { gelu, swiglu, squared_relu };
enum class Recompute { none, selective, full };
// How recompute_granularity "full" checkpoints a model chunk's layers (Megatron-Core's recompute_method,
// NVIDIA/Megatron-LM @ 767a8a8 megatron/core/transformer/transformer_block.py _checkpointed_forward):
//   uniform: the chunk's layers in groups of recompute_num_layers, each group checkpointed as one (its
//            first layer's input kept; the whole group re-run in the backward pass, its activations
//            alive together while it back-propagates);
//   block:   the first recompute_num_layers layers of the chunk checkpointed one by one, the others run
//            without recompute (everything they save kept).
// uniform with 1 layer is what "full" always meant here.
enum class RecomputeMethod { uniform, block };

// How an MoE layer's tokens reach their experts' ranks (Megatron-Core's moe_token_dispatcher_type, and
// moe_flex_dispatcher_backend under "flex"): alltoall sends every routed copy (token, expert) on its own
// (NCCL all-to-all); deepep and hybridep send a token once per destination node over the network and once
// per destination rank over NVLink (sim/network/token_dispatch.hpp has the traffic and its sources). The two
// flex backends move the same bytes; their kernels differ, which is not modelled.
enum class MoeDispatcher { alltoall, deepep, hybridep };
// Megatron-Core's cuda_graph_impl (docs/user-guide/features/cuda_graph.md @ NVIDIA/Megatron-LM d98e8a64):
// none; local and transformer_engine capture parts of each layer (cuda_graph_modules), which cannot hold a
// dropless MoE layer's experts -- their per-expert token counts come to the host every step
// (megatron/core/transformer/moe/experts.py: "this path must never be included in a CUDA graph";
// transformer_config.py refuses the moe module without drop-and-pad) -- so the experts stay host-issued;
// full_iteration replays the whole iteration as one graph, nothing host-issued (models/workload/op.hpp
// Op::host_issued).
enum class CudaGraphImpl { none, local, transformer_engine, full_iteration };
// What recompute_granularity "selective" re-runs: Megatron-Core's recompute_modules.
struct RecomputeModules {
  bool core_attn = true, layernorm = false, mlp = false, moe_act = false;
  // MLA's up-projections (Megatron-Core's "mla_up_proj"): the latents' norms, their gathers, the up-
  // projections, RoPE and the Q / K / V assembly re-run before the attention's backward; Q, K and V not
  // stored after the attention's forward (MLASelfAttention's qkv_up_checkpoint).
  bool mla_up_proj = false;
  bool operator==(const RecomputeModules&) const = default;
};
// Megatron's position_embedding_type. none: no position signal in the kernels (ALiBi folds its bias into
// the attention kernel, NoPE has none).
enum class PositionEmbedding { rope, learned_absolute, none };

// Multi-head latent attention (DeepSeek-AI, "DeepSeek-V2", arXiv:2405.04434, sec. 2.1; Megatron-Core's
// MLASelfAttention, megatron/core/transformer/multi_latent_attention.py @ NVIDIA/Megatron-LM 13f8f526).
// With hidden h, heads a, the layer's projections are
//   query   q_lora_rank r_q > 0: linear_q_down_proj [h -> r_q], q_layernorm (RMSNorm over r_q) and
//           linear_q_up_proj [r_q -> a (d_n + d_r)]; r_q = 0: linear_q_proj [h -> a (d_n + d_r)];
//   key/val linear_kv_down_proj [h -> r_kv + d_r] (the compressed latent and the one shared RoPE key
//           per token), kv_layernorm (over r_kv) and linear_kv_up_proj [r_kv -> a (d_n + d_v)];
//   core    queries and keys of d_n + d_r = 192 dims (the no-RoPE part from the up-projections, the
//           decoupled RoPE part: per head for Q, one per token broadcast to every head for K), values
//           of d_v = 128: the score GEMM Q K^T is 2 d_qk and the context GEMM P V 2 d_v FLOPs per
//           query-key pair and head;
//   output  linear_proj [a d_v -> h].
// Tensor parallelism (megatron/core/models/gpt/gpt_layer_specs.py @ 13f8f526, the MLA spec): the two
// down-projections are TELinear, duplicated on every TP rank (with sequence parallelism they run on the
// rank's sequence shard), the up-projections TELayerNormColumnParallelLinear (the q / kv norm fused in,
// heads split by TP, the latent all-gathered over the sequence first), linear_proj row-parallel.
struct MlaConfig {
  std::int64_t q_lora_rank = 0;       // 0: no query compression (linear_q_proj)
  std::int64_t kv_lora_rank = 0;      // > 0: MLA is on
  std::int64_t qk_nope_head_dim = 0;  // Megatron's qk_head_dim
  std::int64_t qk_rope_head_dim = 0;  // Megatron's qk_pos_emb_head_dim
  std::int64_t v_head_dim = 0;
  bool enabled() const { return kv_lora_rank > 0; }
  std::int64_t qk_head_dim() const { return qk_nope_head_dim + qk_rope_head_dim; }  // Megatron's q_head_dim
  bool operator==(const MlaConfig&) const = default;
};

// The Mamba-2 mixer (Dao and Gu 2024, "Transformers are SSMs", arXiv:2405.21060, sec. 7; Megatron-Core's
// MambaMixer, megatron/core/ssm/mamba_mixer.py @ NVIDIA/Megatron-LM d98e8a64): with hidden h, heads H of
// head dim P (d_inner = H P; H = expand h / P when mamba_num_heads is not given), G groups of state N:
//   in_proj  [h -> 2 d_inner + 2 G N + H]: z (the gate), x, B, C and dt in one column-parallel GEMM;
//   conv1d   a depthwise causal convolution of width conv_kernel (4) over the xBC channels (d_inner + 2 G N),
//            with bias, then SiLU;
//   SSD      the chunked state-space scan (mamba_split_conv1d_scan_combined, chunk_size 128), per head
//            dt_bias, A_log and D;
//   norm     the gated RMSNorm over d_inner (norm(y silu(z)), group size d_inner / G);
//   out_proj [d_inner -> h], row-parallel.
// Tensor parallelism splits heads, groups and d_inner (nheads and ngroups divisible by TP).
struct MambaConfig {
  std::int64_t state_dim = 0;   // Megatron's mamba_state_dim (N; HF ssm_state_size)
  std::int64_t head_dim = 0;    // mamba_head_dim (P)
  std::int64_t num_groups = 0;  // mamba_num_groups (G; HF n_groups)
  std::int64_t num_heads = 0;   // mamba_num_heads (H); 0: expand x hidden / head_dim
  std::int64_t expand = 2;      // MambaMixer's expand (used when num_heads is 0)
  std::int64_t conv_kernel = 4;   // MambaMixer's d_conv
  std::int64_t chunk_size = 128;  // MambaMixer's chunk_size, the SSD scan's chunk
  bool operator==(const MambaConfig&) const = default;
};

struct ModelConfig {
  std::string name;
  std::int64_t num_layers = 0;
  std::int64_t hidden_size = 0;
  std::int64_t num_attention_heads = 0;
  std::int64_t num_query_groups = 0;  // = num_attention_heads for MHA
  std::int64_t ffn_hidden_size = 0;
  std::int64_t vocab_size = 0;
  Activation activation = Activation::gelu;
  std::int64_t num_moe_experts = 0;   // 0: dense
  std::int64_t moe_router_topk = 0;
  // Group-limited routing (Megatron-Core moe_router_num_groups / moe_router_group_topk; DeepSeek-V3's
  // n_group / topk_group): the experts in num_groups equal groups, a token's top-k from at most group_topk
  // of them. 0: no limit. It bounds the nodes a token's copies go to, which only a per-node token
  // dispatcher (TrainingConfig::moe_token_dispatcher) turns into less traffic.
  std::int64_t moe_router_num_groups = 0;
  std::int64_t moe_router_group_topk = 0;
  std::int64_t moe_ffn_hidden_size = 0;  // 0: same as ffn_hidden_size
  bool causal = true;                 // false for encoders (BERT)
  bool untie_embeddings = true;       // separate LM-head weights (Llama); GPT-3 ties them
  // Megatron's add_bias_linear: every linear layer has a bias (gpt-oss). Dense layers' biases cost no
  // kernel of their own here (the GEMM epilogue adds them, TE computes their gradients with the wgrad
  // GEMM, Megatron fuses them into bias-activation and bias-dropout-add); they add parameters. In an MoE
  // layer the experts' FC2 bias is applied outside the grouped GEMM, per expert, weighted by the router
  // probability (Megatron-Core's TEGroupedMLP._apply_bias): kernels of its own (transformer.cpp).
  bool add_bias_linear = false;
  // Megatron's apply_rope_fusion: Transformer Engine's fused RoPE (one kernel each way). false: Megatron-
  // Core's unfused PyTorch RoPE (_apply_rotary_pos_emb_bshd), which Megatron-Core falls back to whenever
  // the YaRN concentration factor (mscale) is not 1, whatever apply_rope_fusion says (transformer.cpp).
  bool rope_fusion = true;
  // Added for the memory model and the parameter count (defaults: a modern Llama-style decoder).
  // Megatron's attention_dropout / hidden_dropout probabilities (GPT-3 and BERT train with 0.1 each,
  // Megatron-LM's defaults; Llama-style recipes with 0). Hidden dropout stores a 1-byte mask per
  // residual-branch element and the embedding output; attention dropout, in the unfused attention, a
  // mask and the dropped-out probabilities per score (memory_model.cpp); flash kernels regenerate
  // their mask from the RNG state and store none.
  double attention_dropout = 0;
  double hidden_dropout = 0;
  std::int64_t max_position_embeddings = 0;  // rows of the learned position table (GPT-3, BERT); 0: none
  // Megatron's --kv-channels: the head dim when it is not hidden / heads (Qwen3: 128 at hidden 4096 with
  // 64 heads; gpt-oss: 64 at hidden 2880). 0: hidden_size / num_attention_heads.
  std::int64_t kv_channels = 0;
  // Megatron's attention_backend: auto / fused / flash3 -> native, flash -> FlashAttention-2,
  // unfused / local -> unfused (op.hpp).
  AttentionImpl attention_impl = AttentionImpl::native;
  // Sliding-window attention: Megatron's window_size (w, 0), the keys before the query a windowed layer
  // sees; 0: full attention everywhere. Which layers are windowed: Megatron's window_attn_skip_freq N
  // (layer l, 1-based, is windowed unless l % N == 0; 0: every layer) or its list form, one entry per
  // layer (true: windowed), which wins when non-empty.
  std::int64_t window_size = 0;
  std::int64_t window_attn_skip_freq = 0;
  std::vector<bool> window_attn_pattern;
  // Unset: learned_absolute with a position table (max_position_embeddings > 0), else rope for SwiGLU
  // models (every Llama-style preset) and learned_absolute for the others (GPT-style).
  std::optional<PositionEmbedding> position_embedding_type;
  // DeepSeek-style fine-grained MoE (Dai et al. 2024, DeepSeekMoE): shared experts every token passes
  // through beside its routed ones -- Megatron's moe_shared_expert_intermediate_size, the width of all
  // of them together (0: none); and dense layers among the MoE ones -- Megatron's moe_layer_freq, an
  // integer N (0-based layer l is MoE when l % N == 0; 1: every layer) or its list form, one entry per
  // layer (true: MoE), which wins when non-empty (DeepSeek's first_k_dense_replace = 1 is [0, 1, 1, ...]).
  // A dense layer's MLP is ffn_hidden_size wide.
  std::int64_t moe_shared_expert_intermediate_size = 0;
  std::int64_t moe_layer_freq = 1;
  std::vector<bool> moe_layer_pattern;
  // Multi-head latent attention (model.mla; DeepSeek-V2/V3, Kimi-K2): MlaConfig below; off unless
  // mla.kv_lora_rank > 0.
  MlaConfig mla;
  // Multi-token prediction (DeepSeek-V3 sec. 2.2; Megatron-Core's mtp_num_layers, HF num_nextn_predict_layers):
  // modules after the last layer, each predicting one token further. Module k takes the hidden state of the
  // module before (the main model's for k = 1) and the embedding of the input shifted by k, normalizes both
  // (enorm, hnorm), concatenates them and projects 2h -> h (eh_proj), runs one transformer layer of the
  // model's last-layer kind and its own final norm, then the shared LM head and a loss of its own
  // (megatron/core/transformer/multi_token_prediction.py @ NVIDIA/Megatron-LM 13f8f526,
  // MultiTokenPredictionLayer). The embedding and the LM head are the main model's (shared). On the last
  // pipeline stage, before the LM head (lm_head_ops).
  std::int64_t mtp_num_layers = 0;
  // Hybrid models (Megatron-Core's MambaModel / HybridModel; Nemotron-H, Nemotron 3): Megatron's
  // hybrid_override_pattern, one character per layer -- 'M' a Mamba-2 mixer layer, '*' a self-attention
  // layer, '-' an MLP layer, 'E' an MoE layer (megatron/core/models/hybrid/hybrid_layer_allocation.py @
  // NVIDIA/Megatron-LM d98e8a64, Symbols), each with its own pre-norm and residual (mamba_layer.py,
  // TransformerLayer with only attention or only an MLP); num_layers is the pattern's length. Empty: every
  // layer is a transformer layer (attention then MLP). The Mamba layers' sizes: `mamba`.
  std::string hybrid_override_pattern;
  MambaConfig mamba;
  bool hybrid() const { return !hybrid_override_pattern.empty(); }
  // The Mamba mixer's heads and inner width (MambaMixer.__init__: nheads given, or d_inner = expand h).
  std::int64_t mamba_heads() const {
    return mamba.num_heads > 0 ? mamba.num_heads : (mamba.head_dim > 0 ? mamba.expand * hidden_size / mamba.head_dim : 0);
  }
  std::int64_t mamba_d_inner() const { return mamba_heads() * mamba.head_dim; }
  std::int64_t head_dim() const { return kv_channels > 0 ? kv_channels : hidden_size / num_attention_heads; }
  // Megatron's query_projection_size: a d, and with MLA a v_head_dim (the out-projection's input,
  // MultiLatentAttention.__init__).
  std::int64_t query_projection_size() const {
    return mla.enabled() ? num_attention_heads * mla.v_head_dim : num_attention_heads * head_dim();
  }
};

// The position embedding the model uses: position_embedding_type, else the default above.
PositionEmbedding position_embedding(const ModelConfig& m);
std::string_view to_string(PositionEmbedding p);  // "rope", "learned_absolute", "none" (Megatron's names)

// Whether transformer layer `layer` (0-based) uses the sliding window.
bool is_window_attention_layer(const ModelConfig& m, std::int64_t layer);
// Whether transformer layer `layer` (0-based) has the MoE MLP (false for every layer of a dense model; in
// a hybrid model the 'E' layers).
bool is_moe_layer(const ModelConfig& m, std::int64_t layer);
// What one layer is: a transformer layer (attention then MLP), or in a hybrid model (hybrid_override_pattern)
// a Mamba-2 mixer layer ('M'), an attention-only layer ('*') or an MLP-only layer ('-', and 'E' whose MLP is
// the MoE one: is_moe_layer). Every function below that takes a LayerKind builds / counts that layer.
enum class LayerKind : std::uint8_t { transformer, mamba, attention, mlp };
LayerKind layer_kind(const ModelConfig& m, std::int64_t layer);
// What sets one layer's ops, parameters and stored activations apart from another's: the one per-layer
// description. The step program (sim/step/step_units.hpp) builds one op list per variant the model has
// and gives each layer its variant's, so a feature whose layers differ (a new attention kind on some
// layers) adds a field here and sets it in layer_variant, and the step builder, the every-rank template,
// the screening estimate and the task budget follow without an edit.
struct LayerVariant {
  LayerKind kind = LayerKind::transformer;
  bool moe = true;      // the MoE MLP (a dense model's layers, and an MoE model whose layers are all MoE, say true)
  bool window = false;  // sliding-window attention (is_window_attention_layer)
  auto operator<=>(const LayerVariant&) const = default;
};
// Layer `layer`'s (0-based) variant. A transformer layer is MoE unless the model has experts and this
// layer is a dense one (moe_layer_freq): a dense model's layers say moe, as transformer_layer_ops's default.
// A hybrid model's layer is its kind, MoE for 'E' (no window).
LayerVariant layer_variant(const ModelConfig& m, std::int64_t layer);
// The distinct variants of the model's layers, in order (operator<=>).
std::vector<LayerVariant> layer_variants(const ModelConfig& m);
// Problems of model.hybrid_override_pattern and the Mamba sizes (an unknown letter, a length other than
// num_layers, an 'E' without experts, Mamba sizes missing or not dividing), one message each; empty when fine.
std::vector<std::string> hybrid_problems(const ModelConfig& m);
// A Mamba-2 mixer layer's parameters (pre-norm, in_proj, conv1d weight and bias, dt_bias, A_log, D, the
// gated norm, out_proj), and the share of them TP splits (all but the pre-norm).
double mamba_layer_params(const ModelConfig& m);
// The Mamba-2 mixer's GEMM weights (in_proj and out_proj): 2 FLOPs per token each, forward.
double mamba_gemm_params(const ModelConfig& m);
// The SSD scan's forward FLOPs per token of one Mamba layer, the whole layer (a rank's share is 1 / TP):
// 2 G Q N (C B^T per chunk and group) + 4 H N P (the chunk states and their read-out) + H Q P (the in-chunk
// product, causal: half of 2 H Q P), chunk size Q (transformer.cpp mamba_layer_ops derives it).
double mamba_scan_flops_per_token(const ModelConfig& m);

// Norm type follows the activation, as in every preset: GeLU models use LayerNorm (weight + bias, 2h
// parameters), SwiGLU and squared-ReLU models RMSNorm (weight only, h parameters).
// Presets: gpt3-175b, llama2-7b, llama2-13b, llama2-70b, llama3-8b, llama3-70b, llama3-405b, bert-large,
// mixtral-8x7b, deepseek-moe-16b, deepseek-v3, nemotron-h-56b, nemotron-h-8b, nemotron3-nano-30b-a3b
// (architectures from the published configs; source beside each).
std::optional<ModelConfig> find_preset(std::string_view name);
std::vector<std::string> preset_names();

enum class PipelineSchedule { one_f_one_b, gpipe, interleaved, zb_h1, zbv, dualpipev };  // zb_*, dualpipev: models/parallelism/pipeline_schedule.hpp

// How a micro-batch's weight gradients join the gradients of the micro-batches before it
// (training.gradient_accumulation; grad_accumulation_op below counts the bytes):
//   fused            the wgrad GEMM accumulates into the gradient buffer itself (no extra pass):
//                    Megatron-LM's gradient_accumulation_fusion (default on since NVIDIA/Megatron-LM
//                    83b1e42f, Feb 2022, for fp32 main grads; fp16 too since 07916bf2, Sep 2022),
//                    Transformer Engine's fuse_wgrad_accumulation; what clustersim assumed before;
//   accumulate_grad  PyTorch autograd's AccumulateGrad: the first micro-batch's gradient becomes .grad,
//                    each later one is added into it in the model's dtype (torch DDP under no_sync,
//                    Megatron-LM's local DDP without contiguous buffers: megatron/model/distributed.py
//                    @ de7dc40f, Aug 2021);
//   main_grad_add    a main-gradient buffer (main_grads_dtype) zeroed each step and every micro-batch's
//                    gradient added into it by one kernel: Megatron-LM's contiguous-buffer DDP hook
//                    param.main_grad.add_(param.grad.data) (megatron/model/distributed.py @ 83b1e42f,
//                    where gradient_accumulation_fusion is off);
//   cast_add         as main_grad_add, the gradient first cast to the buffer's dtype by a kernel of its
//                    own: DeepSpeed's BF16_Optimizer.update_hp_grads, hp_grad.add_(lp.grad.to(fp32)),
//                    after every micro-batch's backward (deepspeed/runtime/bf16_optimizer.py and
//                    pipe/engine.py _exec_backward_pass @ 56c52238, Apr 2022).
enum class GradAccumulation { fused, accumulate_grad, main_grad_add, cast_add };

// How ZeRO-3 moves a unit's parameters and gradients (training.zero3_collectives):
//  - per_unit: one all-gather of the unit's parameters before each of its passes (prefetched behind the
//    previous unit with overlap_param_gather) and one reduce-scatter of its gradients after its backward
//    (PyTorch FSDP, DeepSpeed from 0.4's coalesced gathers on);
//  - per_tensor_synchronous: DeepSpeed ZeRO-3 as released in March 2021 (v0.3.13, 12a53b43). Each
//    parameter tensor is all-gathered on its own, and only after the whole device has drained
//    (partition_parameters.py _allgather_param: torch.cuda.synchronize() before torch.distributed.all_gather),
//    so no gather overlaps compute, another gather or a pending reduce-scatter; a unit's compute waits for
//    all of its gathers (stage3.py fetch_sub_module, _synchronize_communication). A checkpointed layer is
//    gathered for its recompute and again for its backward (the forward hooks fire in the recompute). Each
//    gradient tensor is reduce-scattered on its own (_reduce_scatter_gradient). Both go through PyTorch's
//    tensor-list API with world_size tensors, which copies them one by one on the NCCL stream (c10d
//    ProcessGroupNCCL::allgather copies the flattened output out to each of the world_size tensors;
//    reduce_scatter flattens its world_size inputs in, PyTorch 1.7-1.8): world_size copy kernels of one
//    partition each per collective, timed by the compute model (launch overhead and HBM).
enum class Zero3Collectives { per_unit, per_tensor_synchronous };

// How a pipeline tensor (activation forward, its gradient backward) crosses between stages when TP > 1
// without sequence parallelism (with it each TP rank already holds and sends only its 1/tp slice):
//  - none:           every TP rank sends the whole tensor (today's Megatron-Core; Megatron-LM's
//                    --no-scatter-gather-tensors-in-pipeline);
//  - scatter_gather: each TP rank sends its 1/tp of it and the receiver all-gathers the tensor over TP
//                    before using it (Megatron-LM's --scatter-gather-tensors-in-pipeline, on by default:
//                    megatron/p2p_communication.py _communicate, split_tensor_into_1d_equal_chunks /
//                    gather_split_1d_tensor @ de7dc40f, Aug 2021; off under sequence parallelism from
//                    cfd2e216, Apr 2022);
//  - partitioned:    the same, and a stage re-gathers its own output over TP before that output's
//                    backward (DeepSpeed's PipelineEngine with model parallelism, is_pipe_partitioned and
//                    is_grad_partitioned: _exec_send_activations / _exec_send_grads send a
//                    PartitionedTensor's local part, _exec_forward_pass and _exec_backward_pass rebuild it
//                    with .full(), an all_gather, deepspeed/runtime/pipe/engine.py @ 56c52238, Apr 2022).
enum class PipelineTensorSplit { none, scatter_gather, partitioned };

// training.precision: the low-precision recipe of the GEMMs (Transformer Engine's recipes, as
// Megatron-Core's --fp8-recipe / --fp4-recipe select them). What each costs (transformer.cpp,
// quantize_bytes_per_element; memory_model.cpp, saved_gemm_input_bytes):
//   bf16, fp16     no quantization.
//   fp8            per-tensor FP8 with the amax fused into the cast: one kernel reads the bf16 tensor and
//                  writes the FP8 copy (and its transpose on Hopper). The model clustersim always used.
//   fp8_delayed    TE DelayedScaling: the scale comes from the amax history, the amax of this cast is
//                  fused into it; costs as fp8.
//   fp8_current    TE Float8CurrentScaling: the scale needs this tensor's amax first, a separate
//                  reduction kernel that reads the bf16 tensor once more before the cast.
//   fp8_blockwise  DeepSeek-V3's 1x128 activation / 128x128 weight blocks (TE Float8BlockScaling): scales
//                  computed inside the quantize kernel; the row-wise and the column-wise copies are both
//                  needed on every GPU (a block runs along a GEMM's K, which differs for wgrad), plus a
//                  4-byte scale per 128 elements of each.
//   mxfp8          OCP MXFP8 (TE MXFP8BlockScaling): 1x32 blocks with 1-byte E8M0 scales, both copies on
//                  every GPU for the same reason; needs block-scaled MMA (Blackwell).
//   nvfp4          NVFP4 (TE NVFP4BlockScaling): FP4 E2M1 in 1x16 blocks with E4M3 scales and a per-tensor
//                  FP32 scale, which needs the tensor's amax first (a reduction pass); both copies; GEMMs at
//                  the FP4 peak; needs block-scaled MMA.
enum class PrecisionRecipe { bf16, fp16, fp8, fp8_delayed, fp8_current, fp8_blockwise, mxfp8, nvfp4 };
// The GEMM math format of a recipe: fp8 for the FP8 family, fp4 for nvfp4, else bf16 / fp16.
Dtype gemm_dtype_of(PrecisionRecipe r);
// HBM bytes per element of a GEMM input that one quantization moves (reads of the bf16 tensor, writes of
// the low-precision copies and their scales); `transposed_copy`: the GPU's FP8 GEMMs read only row-wise
// (Hopper), so per-tensor FP8 writes a transposed copy too. 0 for bf16 / fp16.
double quantize_bytes_per_element(PrecisionRecipe r, bool transposed_copy);
// Bytes per element of a GEMM input saved for the backward pass: the column-wise quantized copy wgrad
// reads, with its scales (2 for bf16 / fp16).
double saved_gemm_input_bytes(PrecisionRecipe r);

// training.moe_apply_probs (TrainingConfig::moe_apply_probs).
enum class MoeProbsPlacement { combine, activation };

// The layout and batch of one training job, with Megatron-LM's knob names in meaning.
struct TrainingConfig {
  std::int64_t seq_length = 0;
  std::int64_t global_batch_size = 0;
  std::int64_t micro_batch_size = 1;
  Dtype precision = Dtype::bf16;  // the GEMMs' format: gemm_dtype_of(recipe) (the rest runs in bf16)
  PrecisionRecipe recipe = PrecisionRecipe::bf16;  // training.precision
  // The recipe the GEMM format implies where only `precision` was set (code that predates recipes):
  // fp8 -> per-tensor fp8, fp4 -> nvfp4; otherwise `recipe`.
  PrecisionRecipe effective_recipe() const {
    const bool unquantized = recipe == PrecisionRecipe::bf16 || recipe == PrecisionRecipe::fp16;
    if (precision == Dtype::fp8 && (unquantized || recipe == PrecisionRecipe::nvfp4)) return PrecisionRecipe::fp8;
    if (precision == Dtype::fp4) return PrecisionRecipe::nvfp4;
    if (precision != Dtype::fp8 && !unquantized) return precision == Dtype::fp16 ? PrecisionRecipe::fp16 : PrecisionRecipe::bf16;
    return recipe;
  }
  // fp8 on a GPU whose FP8 GEMMs read operands row-wise only (GpuSpec::fp8_needs_transposed_copy, set
  // from the cluster's GPU by the scenario loader): each fp8 cast also writes the transposed copy.
  bool fp8_transposed_copy = true;
  int tp = 1, pp = 1, vp = 1, cp = 1, ep = 1, dp = 1;
  // Megatron-Core's expert_tensor_parallel_size: the TP degree inside the experts, 0 = tp (its default).
  // The expert layout is folded over the TP x CP x DP ranks of a stage ("MoE parallel folding",
  // models/parallelism/layout.hpp): ETP x EP x expert-DP = TP x CP x DP.
  int etp = 0;
  int expert_tp() const { return etp > 0 ? etp : tp; }
  int expert_dp() const { return tp * cp * dp / (expert_tp() * ep); }
  bool sequence_parallel = false;
  int zero_stage = 0;  // 0..3; Megatron's distributed optimizer = 1
  // FSDP HYBRID_SHARD: ZeRO-3 sharding inside blocks of this many DP x CP ranks (those of one node),
  // replicated across blocks; 0 shards over the whole DP x CP group.
  int fsdp_shard_size = 0;
  Recompute recompute = Recompute::none;
  RecomputeModules recompute_modules;  // applies when recompute == selective
  RecomputeMethod recompute_method = RecomputeMethod::uniform;  // apply when recompute == full
  std::int64_t recompute_num_layers = 1;
  // Under full recompute: whether the layer at 0-based position `index` of its model chunk re-runs its
  // forward in the backward pass (every layer under uniform; the first recompute_num_layers under block).
  bool layer_recomputed(std::int64_t index) const {
    return recompute == Recompute::full && (recompute_method == RecomputeMethod::uniform || index < recompute_num_layers);
  }
  // Full recompute that is not Megatron's uniform-1 (every layer checkpointed on its own).
  bool partial_full_recompute() const {
    return recompute == Recompute::full && (recompute_method == RecomputeMethod::block || recompute_num_layers > 1);
  }
  // CPU activation offload (Megatron-Core's cpu_offloading_num_layers with Transformer Engine's
  // get_cpu_offload_context, activations only): the activations of the model's first N layers go to host
  // memory after their forward and come back before their backward (memory_model.hpp
  // offload_peak_layer_bytes, sim/step/step_units.hpp offload_copy_s). 0: off.
  std::int64_t cpu_offloading_num_layers = 0;
  bool overlap_grad_reduce = true;
  bool overlap_param_gather = true;
  // Megatron/NeMo tp_comm_overlap (Transformer Engine userbuffers): with sequence parallelism, the TP
  // all-gather before a GEMM and the reduce-scatter after one are split into tp chunks pipelined with
  // the GEMM's own chunks (sim/step/step_builder.hpp).
  bool tp_comm_overlap = false;
  // Megatron-Core's overlap_moe_expert_parallel_comm with delay_wgrad_compute (Megatron-Bridge's
  // moe_a2a_overlap sets both): in the 1F1B steady state one micro-batch's forward and another's backward
  // run layer by layer interleaved, each one's EP all-to-all beside the other's compute
  // (sim/step/step_builder.hpp).
  bool overlap_moe_expert_parallel_comm = false;
  MoeDispatcher moe_token_dispatcher = MoeDispatcher::alltoall;
  CudaGraphImpl cuda_graph_impl = CudaGraphImpl::none;
  // Whether the MoE experts' forward kernels are issued by the host behind the dispatcher's synchronisation
  // (Op::host_issued): everywhere but under one graph for the whole iteration.
  bool experts_host_issued() const { return cuda_graph_impl != CudaGraphImpl::full_iteration; }
  // Pipeline transfers (sim/step/step_builder.hpp): how the tensor is split over TP, and whether the
  // compute stream waits for each send and posts each receive in program order (Megatron-LM 2021-2022's
  // _communicate: batch_isend_irecv, req.wait() and torch.cuda.synchronize() per call; DeepSpeed's
  // p2p.send / p2p.recv, dist.send / dist.recv, async_op refused) instead of sending on streams of their own.
  PipelineTensorSplit pipeline_tensor_split = PipelineTensorSplit::none;
  bool pipeline_p2p_blocking = false;
  // The training framework (sim/scenario/framework.hpp: training.framework and its release) and the
  // data-parallel mechanisms its defaults imply, resolved by the loader:
  //  - main_grads_dtype: the gradient buffer (Megatron's --main-grads-dtype; fp32 main grads under bf16),
  //    what the memory model counts per gradient element;
  //  - grad_reduce_dtype: the gradients on the wire (Megatron's grad_reduce_in_fp32, DeepSpeed's
  //    communication_data_type, FSDP's reduce_dtype), what the gradient reductions move per element;
  //  - param_gather_overlaps_forward: ZeRO-1's all-gather of the updated parameters runs per bucket
  //    before the bucket's first forward of the next step (Megatron-Core's overlap_param_gather with the
  //    distributed optimizer) instead of right after the optimizer step;
  //  - grad_bucket_params: the gradient bucket (parameters); 0 = SimulationOptions::grad_bucket_params.
  std::string framework = "generic";
  std::string framework_release;
  Dtype main_grads_dtype = Dtype::bf16;
  Dtype grad_reduce_dtype = Dtype::bf16;
  GradAccumulation grad_accumulation = GradAccumulation::fused;
  Zero3Collectives zero3_collectives = Zero3Collectives::per_unit;
  bool param_gather_overlaps_forward = false;
  double grad_bucket_params = 0;
  double tokens_to_train = 0;  // 0: not asked
  // Memory the framework keeps beyond the tensors it allocates (memory_model.cpp): a fixed reserve (CUDA
  // context, the framework's kernels and handles) and the caching allocator's fragmentation, a fraction
  // of everything else.
  double memory_reserve_gib = 1.0;
  double allocator_fragmentation = 0.05;
  // Adam's two moments (Megatron's --exp-avg-dtype / --exp-avg-sq-dtype under
  // --use-precision-aware-optimizer; DeepSeek-V3 keeps both in bf16, arXiv:2412.19437 sec. 3.3.2): the
  // optimizer holds 4 (fp32 master weights) + their bytes per parameter (memory_model.cpp).
  Dtype exp_avg_dtype = Dtype::fp32;
  Dtype exp_avg_sq_dtype = Dtype::fp32;
  // Megatron-Core's activation_func_fp8_input_store: the fused SwiGLU (dense MLP, shared and routed
  // experts) saves its input cast to FP8 E4M3 (1 B) instead of bf16; where "mlp" / "moe_act" recompute
  // checkpoints the activation, the checkpoint keeps its bf16 input and the flag saves nothing there.
  bool activation_func_fp8_input_store = false;
  // Where an MoE layer weighs each routed copy by its router probability (memory_model.cpp):
  // combine (the unpermute multiplies the expert outputs by the probabilities, so it keeps the expert
  // outputs for the probabilities' gradient: Megatron-Core up to core_r0.12, DeepSpeed-MoE) or
  // activation (the experts' weighted SwiGLU multiplies before FC2: Megatron-Core from core_r0.12,
  // TEGroupedMLP's weighted_bias_swiglu_impl; nothing kept beyond the probabilities).
  MoeProbsPlacement moe_apply_probs = MoeProbsPlacement::combine;
  PipelineSchedule pipeline_schedule = PipelineSchedule::one_f_one_b;  // interleaved is implied by vp > 1
  // Uneven pipeline split (Megatron-Core's get_num_layers_to_build). With account_for_embedding /
  // account_for_loss the embedding / the loss count as one layer each: (L + e + l) / (p v) layers per
  // model chunk, and the first chunk of the first stage / the last chunk of the last stage builds one
  // transformer layer fewer (Llama 3.1 405B: 126 + 2 = 128 = 8 x 8 x 2). decoder_first / last
  // _pipeline_num_layers (>= 0; -1 unset) give the first / last stage that many layers (divided over
  // its v chunks) and the other stages share the rest evenly. The two forms exclude each other.
  bool account_for_embedding_in_pipeline_split = false;
  bool account_for_loss_in_pipeline_split = false;
  std::int64_t decoder_first_pipeline_num_layers = -1;
  std::int64_t decoder_last_pipeline_num_layers = -1;
  FinetuneConfig finetune;  // training.finetune (LoRA / QLoRA: models/workload/finetune.hpp)
  // Megatron-Core's pipeline_model_parallel_layout (training.pipeline_model_parallel_layout; megatron/core/
  // transformer/pipeline_parallel_layer_layout.py): the transformer layers of every virtual stage, in
  // Megatron's order -- stage s of model chunk c at index c * pp + s -- so pp * vp entries summing to
  // num_layers; the embedding is in the first, the loss in the last. Empty: the split above. Excludes the
  // other split knobs.
  std::vector<std::int64_t> pipeline_layout;
  std::int64_t num_micro_batches() const { return global_batch_size / (micro_batch_size * dp); }
  std::int64_t tokens_per_step() const { return global_batch_size * seq_length; }
};

// Parameter counts (whole model, unsharded).
double parameter_count(const ModelConfig& m);
// One transformer layer: with `moe_layer` the MoE MLP (routed experts, router, shared experts), else
// the dense one (ffn_hidden_size); a dense model's layers are dense either way.
// A layer's shapes, shared by the parameter count and the memory model.
double norm_params(const ModelConfig& m);                        // one norm's parameters (LayerNorm: weight and bias)
double mlp_matrices(const ModelConfig& m);                       // the MLP's weight matrices (3 for SwiGLU, else 2)
std::int64_t expert_ffn(const ModelConfig& m);                   // one expert's FFN width
std::int64_t fc1_width(const ModelConfig& m, std::int64_t ffn);  // FC1's output: gate and up together for SwiGLU
double parameters_per_layer(const ModelConfig& m, bool moe_layer = true, LayerKind kind = LayerKind::transformer);
// The attention block's GEMM weights (QKV or MLA's projections, and the out-projection), and the part of
// them every TP rank holds whole (MLA's down-projections; 0 otherwise). The rest is split by TP.
double attention_gemm_params(const ModelConfig& m);
double attention_replicated_params(const ModelConfig& m);
// Norm weights inside the attention block beyond the layer's two norms (MLA's q and kv layernorms over the
// latents, replicated on every TP rank; 0 otherwise).
double attention_norm_params(const ModelConfig& m);
double embedding_parameters(const ModelConfig& m);  // input embedding + untied LM head
double final_norm_parameters(const ModelConfig& m);  // the norm before the LM head
// parameter_count = the layers' parameters_per_layer (MoE or dense, is_moe_layer) + embedding_parameters
// + final_norm_parameters + mtp_parameters.
// The parameters one token passes through (DeepSeek's "activated parameters"): per layer the attention
// block and the norms, and of an MoE layer the top-k experts, the router and the shared experts (a dense
// layer's whole MLP); plus embedding_parameters and the final norm, as DeepSeek counts them. Biases
// (add_bias_linear) are not counted.
double activated_parameters(const ModelConfig& m);
// The multi-token-prediction modules' parameters (mtp_num_layers x (a layer of the last layer's kind, enorm,
// hnorm, eh_proj 2h x h, a final norm)); part of parameter_count, not of activated_parameters (DeepSeek
// quotes its 671B and 37B without them).
double mtp_parameters(const ModelConfig& m);
// The parameter tensors of one unit as a framework that gathers and reduces them one tensor at a time sees
// them (DeepSpeed ZeRO-3 before 0.4: TrainingConfig::zero3_collectives), element counts on one rank of a TP
// group of `tp`, in module order: a transformer layer's input norm, QKV, out-projection, second norm, FC1
// and FC2 (weight, then bias where add_bias_linear; LayerNorm weight and bias, RMSNorm weight only), QKV,
// FC1 and the projections' weights split by TP as Megatron's column- and row-parallel layers are, their
// output biases and the norms whole; the embedding's word (and learned position) table; the head's final
// norm and untied output weight. Only a dense layer of standard attention is described (MLA, MoE and
// Mamba layers: empty; the loader refuses per_tensor_synchronous for them, sim/scenario/scenario.cpp
// check_zero3_collectives).
std::vector<double> layer_parameter_tensors(const ModelConfig& m, int tp);
std::vector<double> embedding_parameter_tensors(const ModelConfig& m, int tp);
std::vector<double> head_parameter_tensors(const ModelConfig& m, int tp);

// Megatron pads the vocabulary to a multiple of 128 * tp (--make-vocab-size-divisible-by 128) so that the
// vocab-parallel embedding and LM head split evenly. The op lists and the memory model use the padded
// size (that work and memory really exist); parameter_count and model_flops_per_step use the real one.
std::int64_t padded_vocab_size(const ModelConfig& m, int tp);

// The pipeline split: transformer layers of model chunk `chunk` (0 .. vp - 1) of stage `stage`, of the
// whole stage, and the index of the chunk's first layer in model order (chunk c of every stage, stage
// by stage, before chunk c + 1). With an even split each chunk has L / (p v).
std::int64_t layers_in_chunk(const ModelConfig& m, const TrainingConfig& t, int stage, int chunk);
std::int64_t layers_on_stage(const ModelConfig& m, const TrainingConfig& t, int stage);
std::int64_t first_layer_of_chunk(const ModelConfig& m, const TrainingConfig& t, int stage, int chunk);
// Why the split is impossible (Megatron's assertions, naming its knobs), or empty.
std::vector<std::string> pipeline_split_problems(const ModelConfig& m, const TrainingConfig& t);

// What makes a (model, layout) pair impossible for these functions (heads or groups not divisible by
// tp, a pipeline split Megatron would reject, ...), one message per problem naming Megatron's knob. Empty when
// fine. The scenario validator reports these with their JSON paths; the functions below CS_CHECK
// the same conditions.
std::vector<std::string> layout_problems(const ModelConfig& m, const TrainingConfig& t);

// Model FLOPs per training step (forward + backward, no recompute), Megatron's
// num_floating_point_operations generalised to GQA and gated MLPs. `attention` says how a causal
// layer's score and context GEMMs are counted:
//   full   every query against all s keys, as Megatron-LM counted until March 2025
//          (megatron/training/training.py at ed7db1d2b3e03378c88d50707b181b485882b030: the attention
//          term (s / h) x query_projection_size / h of self_attn_term). MFU is quoted in this convention;
//   causal query i against the i keys the mask keeps, s / 2 on average (a window layer: s w' - w'^2 / 2
//          pairs over s queries), the work a causal kernel can do at most; Megatron-LM counts this way
//          since 8873b55d6aad08f0f535174746d2836df3dfa93b ("Fixes in number of floating-point operation
//          estimates", the same term / 2), as do torchtitan and most causal-aware tools.
// A non-causal model (an encoder) counts the same in both.
enum class AttentionFlops { full, causal };
double model_flops_per_step(const ModelConfig& m, const TrainingConfig& t, AttentionFlops attention = AttentionFlops::full);

// Kernels of one rank for one micro-batch. Each list is in issue order on the compute stream;
// collective ops sit where the framework calls them.
struct LayerOps {
  std::vector<Op> forward;
  std::vector<Op> backward;  // includes recompute ops when recompute != none
};

// `window_attention`: the layer's attention is the sliding window (model.window_size > 0).
// `moe_layer`: the layer's MLP is the MoE one when the model has experts (false: a dense layer of an MoE
// model, moe_layer_freq).
// `kind`: the layer of a hybrid model (LayerKind; the Mamba layer's ops: mamba_layer_ops in transformer.cpp).
LayerOps transformer_layer_ops(const ModelConfig& m, const TrainingConfig& t, bool window_attention = false,
                               bool moe_layer = true, LayerKind kind = LayerKind::transformer);
// The ops of a layer of variant `v` (the above with its fields).
LayerOps transformer_layer_ops(const ModelConfig& m, const TrainingConfig& t, const LayerVariant& v);
// Ring attention (context parallelism cp > 1): a layer's op list carries the ring's whole KV traffic as one
// send_recv op on ProcessGroup::cp ahead of its attention kernel. The step runs them as cp rounds: each an
// attention over 1/cp of the keys (ring_attention_round), all but the last overlapping one hop of the ring,
// 1/(cp - 1) of the traffic (ring_hop_bytes). The step builder and the screening tier both split it so.
Op ring_attention_round(const Op& attention, int cp);
double ring_hop_bytes(const Op& kv_exchange, int cp);
LayerOps embedding_ops(const ModelConfig& m, const TrainingConfig& t);  // first stage
LayerOps lm_head_ops(const ModelConfig& m, const TrainingConfig& t);    // last stage: logits + loss
// The separate kernel(s) adding one micro-batch's weight gradients of `params` parameters into the
// gradients accumulated so far (GradAccumulation above; the fresh gradient is 2 B, bf16 or fp16):
//   accumulate_grad  read .grad, read the new gradient, write .grad, all in the model dtype: 3 x 2 B;
//   main_grad_add    read the new gradient (2 B), read and write the buffer: 2 + 2 x main_grads_dtype;
//   cast_add         the cast (read 2 B, write the buffer's dtype), then the add (read the cast copy, read
//                    and write the buffer): 2 + 4 x main_grads_dtype (bf16 into fp32: 18 B).
// One FLOP per parameter. Zero bytes when fused. grad_accumulation_applies says which micro-batches run it.
Op grad_accumulation_op(double params, const TrainingConfig& t);
// The copies PyTorch's tensor-list collectives make around one NCCL call of `world_size` ranks
// (models::Zero3Collectives::per_tensor_synchronous): world_size copy kernels of `partition_bytes` each
// (read and written), as c10d ProcessGroupNCCL::allgather copies its flat output out to the list and
// reduce_scatter flattens the list in (PyTorch 1.7-1.8).
Op tensor_list_copies_op(double partition_bytes, int world_size);
// Whether micro-batch `mb` (0-based) of a step runs grad_accumulation_op: every one, except the first
// under accumulate_grad (autograd keeps the first gradient as it is) and none when fused.
bool grad_accumulation_applies(const TrainingConfig& t, std::int64_t mb);
// The optimizer step over `params_on_rank` parameters (fused Adam, fp32 master weights and moments).
Op optimizer_op(double params_on_rank);
// Gradient clipping (Megatron's clip_grad, 1.0 by default, on in every recipe): the L2 norm of the
// rank's gradients — with the distributed optimizer (ZeRO >= 1) the fp32 main-gradient shard this rank
// owns after the reduce-scatter, otherwise all its local fp32 main gradients — a memory-bound pass
// reading 4 B per gradient (grad_norm_op); the partial sums of squares are then summed over every rank
// that holds a different part of the model (TP x PP x CP x EP, and DP under the distributed optimizer)
// by an all-reduce of one fp32 scalar (grad_norm_all_reduce_op: 4 B, latency only). The clip scale
// max_norm / norm is applied inside the fused Adam step (no extra pass over the gradients; Megatron's
// separate multi_tensor_scale runs only on the steps where the norm exceeds clip_grad).
Op grad_norm_op(double grads_on_rank);
// The norm's all-reduce: 4 B (one fp32), nominally on the DP group; the step builder spans it over the
// ranks above. Issue order: grad_norm_op, this, optimizer_op.
Op grad_norm_all_reduce_op();

}  // namespace cs::models
