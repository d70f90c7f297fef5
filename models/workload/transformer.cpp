#include "models/workload/transformer.hpp"

#include "sim/base/name_table.hpp"

#include <algorithm>
#include <array>
#include <set>
#include <utility>

#include "sim/base/check.hpp"

// Conventions used throughout this file (the header essay gives the shapes):
//  - T = micro_batch * seq / cp tokens per rank; with SP, norms / residual adds / dropout see T / t.
//  - GEMM bytes are operand traffic read once and written once: A[m,k] and B[k,n] in the math format
//    (fp8: 1 byte, bf16: 2 bytes), C[m,n] written in bf16. Activations are bf16 (2 bytes / element).
//  - Backward of a GEMM [m=T, n, k] forward is a dgrad [T, k] = dY[T, n] x W^T[n, k] (shape m=T, n=k,
//    k=n) and a wgrad dW[k, n] = X^T[k, T] x dY[T, n] (shape m=k, n=n, k=T); each has the forward FLOPs.
//  - Attention FLOPs: forward 4 b hq s_q s_kv d (QK^T and PV, 2 FLOPs per MAC), halved when causal;
//    backward 2.5x forward (dQ, dK, dV, dP plus the recomputed scores of flash attention). This is the
//    calibration file's convention (fwdbwd_tflops counts 3.5x the forward FLOPs).
//  - TP collectives follow Megatron's conjugate pairs: without SP, forward all-reduce after the
//    row-parallel GEMMs (out-proj, FC2) <-> backward identity, and forward identity before the
//    column-parallel GEMMs (QKV, FC1) <-> backward all-reduce of their input gradient. With SP, the
//    forward all-gather before QKV / FC1 <-> backward reduce-scatter, forward reduce-scatter after
//    out-proj / FC2 <-> backward all-gather; and the column-parallel wgrad needs the full input again, so
//    backward re-all-gathers it (Megatron's LinearWithGradAccumulationAndAsyncCommunication).
//  - Backward issue order of a column-parallel GEMM is Megatron's: (SP: all-gather of the saved input),
//    dgrad, input-gradient all-reduce / reduce-scatter (async), wgrad — so the collective can overlap
//    the wgrad. The simulator decides what waits for what.
//  - comm_bytes is nccl-tests' "size": the full (gathered) tensor for all-gather and reduce-scatter, the
//    buffer for all-reduce, the send buffer of one rank for all-to-all.
namespace cs::models {
namespace {

constexpr double kActBytes = 2.0;  // bf16 activations

double elem_bytes(Dtype d) { return element_bytes(d); }

double d(std::int64_t x) { return static_cast<double>(x); }

}  // namespace

double norm_params(const ModelConfig& m) {
  return m.activation == Activation::gelu ? 2.0 * d(m.hidden_size) : d(m.hidden_size);
}

double mlp_matrices(const ModelConfig& m) { return m.activation == Activation::swiglu ? 3.0 : 2.0; }

std::int64_t expert_ffn(const ModelConfig& m) {
  return m.moe_ffn_hidden_size > 0 ? m.moe_ffn_hidden_size : m.ffn_hidden_size;
}

std::int64_t fc1_width(const ModelConfig& m, std::int64_t ffn) {
  return m.activation == Activation::swiglu ? 2 * ffn : ffn;
}

// Model parameters of the attention block's GEMMs (QKV + out-proj; with MLA its four projections + out-proj,
// MlaConfig in the header).
double attention_gemm_params(const ModelConfig& m) {
  const double h = d(m.hidden_size);
  if (m.mla.enabled()) {
    const MlaConfig& a = m.mla;
    const double heads = d(m.num_attention_heads);
    const double q = a.q_lora_rank > 0 ? h * d(a.q_lora_rank) + d(a.q_lora_rank) * heads * d(a.qk_head_dim())
                                       : h * heads * d(a.qk_head_dim());
    const double kv = h * d(a.kv_lora_rank + a.qk_rope_head_dim) + d(a.kv_lora_rank) * heads * d(a.qk_nope_head_dim + a.v_head_dim);
    return q + kv + heads * d(a.v_head_dim) * h;
  }
  const double dh = d(m.head_dim());
  const double qkv = h * d(m.num_attention_heads + 2 * m.num_query_groups) * dh;
  const double out = d(m.num_attention_heads) * dh * h;
  return qkv + out;
}

double attention_replicated_params(const ModelConfig& m) {
  if (!m.mla.enabled()) return 0;
  return d(m.hidden_size) * d(m.mla.q_lora_rank + m.mla.kv_lora_rank + m.mla.qk_rope_head_dim);
}

double attention_norm_params(const ModelConfig& m) {
  if (!m.mla.enabled()) return 0;
  return (m.activation == Activation::gelu ? 2.0 : 1.0) * d(m.mla.q_lora_rank + m.mla.kv_lora_rank);
}

namespace {

// Parameters of the GEMMs one token goes through in the MLP: of an MoE layer the top-k experts, the
// router and the shared experts; of a dense layer the MLP.
double mlp_params_per_token(const ModelConfig& m, bool moe_layer) {
  const double h = d(m.hidden_size);
  if (m.num_moe_experts > 0 && moe_layer) {
    return d(m.moe_router_topk) * mlp_matrices(m) * h * d(expert_ffn(m)) + h * d(m.num_moe_experts) +
           mlp_matrices(m) * h * d(m.moe_shared_expert_intermediate_size);
  }
  return mlp_matrices(m) * h * d(m.ffn_hidden_size);
}

void check_layout(const ModelConfig& m, const TrainingConfig& t) {
  CS_CHECK(layout_problems(m, t).empty());
}

struct Dims {
  std::int64_t T = 0;       // tokens of one micro-batch on this rank (after CP)
  std::int64_t Tn = 0;      // tokens seen by norms / residuals (T / t with SP)
  std::int64_t h = 0;
  std::int64_t dh = 0;      // head dim
  std::int64_t hq = 0;      // query heads per TP rank
  std::int64_t hkv = 0;     // KV heads per TP rank
  std::int64_t t = 1;
  bool sp = false;
  Dtype gemm_dtype = Dtype::bf16;
};

Dims dims(const ModelConfig& m, const TrainingConfig& t) {
  Dims x;
  x.t = t.tp;
  x.sp = t.sequence_parallel && t.tp > 1;
  x.T = t.micro_batch_size * t.seq_length / t.cp;
  x.Tn = x.sp ? x.T / x.t : x.T;
  x.h = m.hidden_size;
  x.dh = m.head_dim();
  x.hq = m.num_attention_heads / t.tp;
  x.hkv = m.num_query_groups / t.tp;
  x.gemm_dtype = t.precision == Dtype::fp8 || t.precision == Dtype::fp4 ? t.precision : Dtype::bf16;
  return x;
}

Op gemm(std::string name, std::int64_t mm, std::int64_t nn, std::int64_t kk, Dtype dt) {
  Op op;
  op.name = std::move(name);
  op.kind = OpKind::gemm;
  op.dtype = dt;
  op.gemm = GemmShape{mm, nn, kk};
  op.flops = 2.0 * d(mm) * d(nn) * d(kk);
  op.bytes = (d(mm) * d(kk) + d(kk) * d(nn)) * elem_bytes(dt) + d(mm) * d(nn) * kActBytes;
  return op;
}

Op mem(std::string name, MemOpKind kind, double bytes, double flops = 0) {
  Op op;
  op.name = std::move(name);
  op.kind = OpKind::memory_bound;
  op.dtype = Dtype::bf16;
  op.mem_kind = kind;
  op.bytes = bytes;
  op.flops = flops;
  return op;
}

Op coll(std::string name, CollectiveKind kind, ProcessGroup group, double comm_bytes) {
  Op op;
  op.name = std::move(name);
  op.kind = OpKind::collective;
  op.collective = kind;
  op.group = group;
  op.comm_bytes = comm_bytes;
  return op;
}

// A forward GEMM [T, k] x [k, n] has backward dgrad (m=T, n=k, k=n) and wgrad (m=k, n=n, k=T).
Op dgrad(const Op& fwd) {
  return gemm(fwd.name + "_dgrad", fwd.gemm.m, fwd.gemm.k, fwd.gemm.n, fwd.dtype);
}
Op wgrad(const Op& fwd) {
  return gemm(fwd.name + "_wgrad", fwd.gemm.k, fwd.gemm.n, fwd.gemm.m, fwd.dtype);
}

// A forward op re-run in backward (recompute): the same kernel, its name prefixed so traces and tests can
// tell it apart, and its role what the step builder files it under.
Op recomputed(Op op) {
  op.name = "recompute_" + op.name;
  op.role = OpRole::recompute;
  return op;
}

// Everything in a layer's backward list that is not a recompute is the backward pass proper.
void mark_backward(LayerOps& ops) {
  for (Op& op : ops.backward)
    if (op.role == OpRole::forward) op.role = OpRole::backward;
}

// Keys a query of a sliding-window layer sees (window plus itself), at most the sequence.
std::int64_t window_keys(const ModelConfig& m, const TrainingConfig& t) {
  return std::min<std::int64_t>(m.window_size + 1, t.seq_length);
}

// The attention of one layer as the kernel runs it. Full attention: the rank's s / cp queries meet all
// s keys (ring attention: every KV chunk over cp rounds), causal or not. Sliding window (cp = 1, checked
// in layout_problems): every query meets about w' keys, uniform work, so the kernel's shape is a
// non-causal attention over w' keys; its FLOPs and bytes are set by attention_fwd / _bwd below.
AttentionShape attention_shape(const ModelConfig& m, const TrainingConfig& t, const Dims& x, bool window) {
  AttentionShape a;
  a.batch = t.micro_batch_size;
  a.heads_q = x.hq;
  a.heads_kv = x.hkv;
  a.seq_q = t.seq_length / t.cp;
  a.seq_kv = window ? window_keys(m, t) : t.seq_length;
  a.head_dim = x.dh;
  if (m.mla.enabled()) {  // every head has its own K and V (the latent up-projected per head)
    a.heads_kv = x.hq;
    a.head_dim = m.mla.qk_head_dim();
    a.head_dim_v = m.mla.v_head_dim;
  }
  a.causal = window ? false : m.causal;
  a.kernel = m.attention_impl;
  return a;
}

// Query-key pairs per (batch, head): s_q s_kv, half of it when causal; for a window of w' keys over
// s = s_q queries (query i sees min(i, w') keys, counted continuously like the causal s^2 / 2),
// integral_0^s min(x, w') dx = s w' - w'^2 / 2.
double attention_pairs(const AttentionShape& a, bool window) {
  if (window) return d(a.seq_q) * d(a.seq_kv) - d(a.seq_kv) * d(a.seq_kv) / 2.0;
  const double full = d(a.seq_q) * d(a.seq_kv);
  return a.causal ? full / 2.0 : full;
}

// 2 FLOPs per multiply-add of the scores Q K^T (head_dim per pair) and of the context P V (the values'
// head dim per pair): 4 d per pair, and with MLA's asymmetric heads 2 (d_qk + d_v).
double attention_fwd_flops(const AttentionShape& a, bool window) {
  if (a.head_dim_v > 0)
    return 2.0 * d(a.batch) * d(a.heads_q) * d(a.head_dim + a.head_dim_v) * attention_pairs(a, window);
  return 4.0 * d(a.batch) * d(a.heads_q) * d(a.head_dim) * attention_pairs(a, window);
}

// K and V are read once: all s_kv keys, or for a window all s_q of the sequence's keys.
double attention_kv_bytes(const AttentionShape& a, bool window) {
  const double keys = window ? d(a.seq_q) : d(a.seq_kv);
  if (a.head_dim_v > 0) return d(a.batch) * keys * d(a.heads_kv) * d(a.head_dim + a.head_dim_v) * kActBytes;
  return 2.0 * d(a.batch) * keys * d(a.heads_kv) * d(a.head_dim) * kActBytes;
}

// A fused attention kernel: `flop_scale` x the forward's FLOPs; it moves `q_tensors` tensors of Q's size,
// K and V's bytes `kv_passes` times, and the fp32 log-sum-exp of each query row once.
Op fused_attention(std::string name, OpKind kind, const AttentionShape& a, bool window, double flop_scale,
                   double q_tensors, double kv_passes) {
  Op op;
  op.name = std::move(name);
  op.kind = kind;
  op.dtype = Dtype::bf16;
  op.attention = a;
  op.flops = flop_scale * attention_fwd_flops(a, window);
  double q = d(a.batch) * d(a.seq_q) * d(a.heads_q) * d(a.head_dim) * kActBytes;
  // MLA: half of the query-sized tensors are Q (dQ), the other half O (dO), d_v wide.
  if (a.head_dim_v > 0) q = d(a.batch) * d(a.seq_q) * d(a.heads_q) * d(a.head_dim + a.head_dim_v) / 2.0 * kActBytes;
  op.bytes = q_tensors * q + kv_passes * attention_kv_bytes(a, window) + d(a.batch) * d(a.heads_q) * d(a.seq_q) * 4.0;
  return op;
}

// Reads Q, K, V; writes O and the log-sum-exp.
Op attention_fwd(std::string name, const AttentionShape& a, bool window) {
  return fused_attention(std::move(name), OpKind::attention_fwd, a, window, 1.0, 2.0, 1.0);
}

// 2.5x the forward's FLOPs; reads Q, K, V, O, dO, LSE; writes dQ, dK, dV.
Op attention_bwd(std::string name, const AttentionShape& a, bool window) {
  return fused_attention(std::move(name), OpKind::attention_bwd, a, window, 2.5, 4.0, 2.0);
}

// Unfused attention (AttentionImpl::unfused; op.hpp): Megatron's CoreAttention / DotProductAttention
// without a flash kernel. Per (batch, head) of the rank, B = b hq of them, with s_q queries and s_kv keys:
//   forward   scores  S = Q K^T          batched GEMM [s_q, dh] x [dh, s_kv]   (baddbmm, the whole
//                                         s_q x s_kv: the causal mask is applied by the softmax, so no
//                                         FLOP is saved)
//             softmax P = softmax(mask(S / sqrt(dh)))  one fused kernel: reads S, writes P (2 + 2 B)
//             dropout P' = dropout(P)    reads P, writes P' and a 1-byte mask (2 + 2 + 1 B); only with
//                                         attention_dropout > 0
//             context O = P' V           batched GEMM [s_q, s_kv] x [s_kv, dh]
//   backward  dP' = dO V^T, dV = P'^T dO  two batched GEMMs
//             dropout backward          reads dP' and the mask, writes dP (2 + 1 + 2 B)
//             softmax backward          dS = P (dP - rowsum(dP P)): reads P and dP, writes dS (6 B)
//             dQ = dS K, dK = dS^T Q    two batched GEMMs
// The fused softmax is one kernel that holds a row in registers (a warp per row, rows up to a few
// thousand keys) and streams each score in and out once: the traffic of a streaming elementwise kernel,
// so it takes that curve, not the norm curve of eager PyTorch's multi-kernel norms. Its causal variant
// skips loading above the diagonal; the full count here is the bound. A batched GEMM is timed as one
// GEMM of B s_q rows (its tile count is B times the single one's; the compute model's wave quantization
// sees the same grid), in bf16 whatever the training precision
// (Transformer Engine's fp8 covers the linear layers, not these bmm's). GQA's K and V are expanded to
// the query heads first (Megatron repeats them), a copy ignored here. No ring attention (cp = 1;
// layout_problems) and no sliding-window saving (the window is a mask over the full scores).
Op bmm(std::string name, std::int64_t batch, std::int64_t mm, std::int64_t nn, std::int64_t kk) {
  Op op = gemm(std::move(name), batch * mm, nn, kk, Dtype::bf16);
  op.flops = 2.0 * d(batch) * d(mm) * d(nn) * d(kk);
  op.bytes = d(batch) * (d(mm) * d(kk) + d(kk) * d(nn) + d(mm) * d(nn)) * kActBytes;
  return op;
}

struct UnfusedShape {
  std::int64_t B, sq, skv, dh;
  double scores() const { return d(B) * d(sq) * d(skv); }
};
UnfusedShape unfused_shape(const AttentionShape& a, const TrainingConfig& t) {
  return {a.batch * a.heads_q, a.seq_q, t.seq_length, a.head_dim};
}

void unfused_attention_fwd(const std::string& prefix, const UnfusedShape& u, bool dropout, std::vector<Op>& out) {
  out.push_back(bmm(prefix + "_scores", u.B, u.sq, u.skv, u.dh));
  out.push_back(mem(prefix + "_softmax", MemOpKind::elementwise, 4.0 * u.scores()));
  if (dropout) out.push_back(mem(prefix + "_dropout", MemOpKind::elementwise, 5.0 * u.scores()));
  out.push_back(bmm(prefix + "_context", u.B, u.sq, u.dh, u.skv));
}

void unfused_attention_bwd(const std::string& prefix, const UnfusedShape& u, bool dropout, std::vector<Op>& out) {
  out.push_back(bmm(prefix + "_dp", u.B, u.sq, u.skv, u.dh));  // dP' = dO V^T
  out.push_back(bmm(prefix + "_dv", u.B, u.skv, u.dh, u.sq));  // dV = P'^T dO
  if (dropout) out.push_back(mem(prefix + "_dropout_bwd", MemOpKind::elementwise, 5.0 * u.scores()));
  out.push_back(mem(prefix + "_softmax_bwd", MemOpKind::elementwise, 6.0 * u.scores()));
  out.push_back(bmm(prefix + "_dq", u.B, u.sq, u.dh, u.skv));  // dQ = dS K
  out.push_back(bmm(prefix + "_dk", u.B, u.skv, u.dh, u.sq));  // dK = dS^T Q
}

// Norm: forward reads x, writes y; backward reads x and dy, writes dx (weight-grad reduction is small).
Op norm_fwd(std::string name, const Dims& x) {
  return mem(std::move(name), MemOpKind::norm, 2.0 * d(x.Tn) * d(x.h) * kActBytes);
}
Op norm_bwd(std::string name, const Dims& x) {
  return mem(std::move(name), MemOpKind::norm, 3.0 * d(x.Tn) * d(x.h) * kActBytes);
}
// Residual add forward reads 2 writes 1; its backward adds the branch gradient into the residual stream
// gradient: also reads 2 writes 1. With hidden dropout Megatron fuses the branch's dropout into the add
// (bias_dropout_add): the forward also writes the 1-byte mask, the backward reads it.
Op residual(std::string name, const Dims& x, bool dropout) {
  return mem(std::move(name), MemOpKind::elementwise, (3.0 * kActBytes + (dropout ? 1.0 : 0.0)) * d(x.Tn) * d(x.h));
}

double hidden_bytes(const Dims& x) { return d(x.T) * d(x.h) * kActBytes; }

// Rotary position embedding (Transformer Engine's fused RoPE, applied to Q and to K after the QKV GEMM,
// before attention and before the ring-attention KV exchange): each of the rank's hq query and hkv key
// heads of every token is read and written once in bf16, so
//   bytes = 2 (read + write) * T * (hq + hkv) * dh * 2 B,
// e.g. Llama 3 8B at tp 1: 2 * (32 + 8) * 128 * 2 = 20480 B per token per layer. Backward rotates the
// gradients dQ, dK back by the same angles: the same bytes. The cos / sin table (s x dh fp32, shared by
// every head, L2-resident) is not counted. 3 FLOPs per element (two multiplies, one add), immaterial.
Op rope(std::string name, const Dims& x) {
  const double elems = d(x.T) * d(x.hq + x.hkv) * d(x.dh);
  return mem(std::move(name), MemOpKind::elementwise, 2.0 * elems * kActBytes, 3.0 * elems);
}

// Megatron-Core's unfused RoPE (model.apply_rope_fusion false), _apply_rotary_pos_emb_bshd in
// megatron/core/models/common/embeddings/rope_utils.py @ NVIDIA/Megatron-LM b0cc270 (Megatron-Bridge
// v0.3.0) and d728871 (v0.4.0), called once for Q and once for K. apply_rotary_pos_emb takes this path
// whenever the YaRN concentration factor mscale = 0.1 ln(scaling factor) + 1 is not 1 ("mscale=... is
// not supported by TE's fused RoPE. Using unfused implementation"): gpt-oss's YaRN factor 32 gives
// 1.347. Per call on a tensor of E bf16 elements (the rank's T x heads x dh), in element passes:
//   forward   cos_ = (cos(freqs) * mscale).to(bf16), sin_ likewise: 3 + 3 kernels on the s x dh fp32
//             table (8, 8 and 6 bytes an element, 22 a table); t * cos_ (2E), _rotate_half's -x2 (E)
//             and its cat (2E), * sin_ (2E), the add (3E), the final cat with the empty t_pass (2E):
//             6 kernels, 12E (the fused kernel: 1, 2E);
//   backward  (autograd) grad * sin_ (2E), the negation's backward (E), the chunk's backward cat (2E),
//             grad * cos_ (2E), the empty t_pass's slice backward, zeros of t's size (E), and the three
//             gradients of t summed by two adds (6E): 7 kernels, 14E. t[..., :rot_dim] with rot_dim = dh
//             is t itself (PyTorch's full-slice shortcut, no node); the cat backwards are views; cos_ and
//             sin_ need no gradient.
// Each kind is one op repeated over its kernels (Op::repeat), bytes the mean per kernel.
void rope_ops(const std::string& name, const ModelConfig& m, const TrainingConfig& t, const Dims& x, bool backward,
              std::vector<Op>& out) {
  if (m.rope_fusion) {
    out.push_back(rope(name, x));
    return;
  }
  const auto kernels = [&](const std::string& n, int count, double bytes_total) {
    Op op = mem(n, MemOpKind::elementwise, bytes_total / count);
    op.repeat = count;
    out.push_back(std::move(op));
  };
  const double table = d(t.seq_length / t.cp) * d(x.dh);
  const double q = d(x.T) * d(x.hq) * d(x.dh), k = d(x.T) * d(x.hkv) * d(x.dh);
  if (!backward) {
    kernels(name + "_tables", 12, 4.0 * 22.0 * table);  // Q's and K's call, cos_ and sin_ each
    kernels(name + "_q", 6, 12.0 * q * kActBytes);
    kernels(name + "_k", 6, 12.0 * k * kActBytes);
  } else {
    kernels(name + "_q", 7, 14.0 * q * kActBytes);
    kernels(name + "_k", 7, 14.0 * k * kActBytes);
  }
}

void column_parallel_bwd(const Op& fwd, const Dims& x, const std::string& suffix, std::vector<Op>& out);
void row_parallel_fwd_coll(const Dims& x, const std::string& suffix, std::vector<Op>& out);
void row_parallel_bwd_coll(const Dims& x, const std::string& suffix, std::vector<Op>& out);

// A dense MLP of width `ffn` over the rank's T tokens, split by TP: FC1 (gate and up for SwiGLU), the
// activation, FC2; the backward in reverse. `prefix` names its ops ("" for a layer's MLP, "shared_" for
// an MoE layer's shared experts).
void dense_mlp_ops(const ModelConfig& m, const Dims& x, const std::string& prefix, std::int64_t ffn, std::vector<Op>& fwd,
                   std::vector<Op>& bwd) {
  const double act_mult_fwd = m.activation == Activation::swiglu ? 3.0 : 2.0;  // SwiGLU reads 2 writes 1
  const double act_mult_bwd = m.activation == Activation::swiglu ? 5.0 : 3.0;  // reads in + dy, writes dx
  const std::int64_t f = ffn / x.t;
  Op fc1 = gemm(prefix + "fc1", x.T, fc1_width(m, ffn) / x.t, x.h, x.gemm_dtype);
  Op act = mem(prefix + "act", MemOpKind::activation, act_mult_fwd * d(x.T) * d(f) * kActBytes);
  Op fc2 = gemm(prefix + "fc2", x.T, x.h, f, x.gemm_dtype);
  fwd.push_back(fc1);
  fwd.push_back(act);
  fwd.push_back(fc2);
  bwd.push_back(dgrad(fc2));
  bwd.push_back(wgrad(fc2));
  bwd.push_back(mem(prefix + "act_bwd", MemOpKind::activation, act_mult_bwd * d(x.T) * d(f) * kActBytes));
  bwd.push_back(dgrad(fc1));
  bwd.push_back(wgrad(fc1));
}

// The same MLP with Megatron's TP collectives named by `suffix` ("_mlp", "_shared"): with SP the
// all-gather of the sequence shards before FC1, after FC2 the reduce-scatter (all-reduce without SP);
// backward the output gradient's all-gather, FC2's and the activation's kernels, then FC1's dgrad and
// wgrad with the input gradient's TP collective between them (column_parallel_bwd).
void tp_mlp_ops(const ModelConfig& m, const Dims& x, const std::string& prefix, const std::string& suffix, std::int64_t ffn,
                std::vector<Op>& fwd, std::vector<Op>& bwd) {
  if (x.sp) fwd.push_back(coll("ag" + suffix, CollectiveKind::all_gather, ProcessGroup::tp, hidden_bytes(x)));
  const std::size_t fc1_at = fwd.size();
  std::vector<Op> compute_bwd;
  dense_mlp_ops(m, x, prefix, ffn, fwd, compute_bwd);
  const Op fc1 = fwd[fc1_at];
  row_parallel_fwd_coll(x, suffix, fwd);
  row_parallel_bwd_coll(x, suffix, bwd);
  for (std::size_t i = 0; i + 2 < compute_bwd.size(); ++i) bwd.push_back(std::move(compute_bwd[i]));  // all but FC1's
  column_parallel_bwd(fc1, x, suffix, bwd);
}

// The MoE MLP of one layer, appended to `fwd`; `bwd` receives its backward in backward order, ending
// with the router's dgrad and wgrad.
void moe_mlp_ops(const ModelConfig& m, const TrainingConfig& t, const Dims& x, std::vector<Op>& fwd, std::vector<Op>& bwd) {
  const double act_mult_fwd = m.activation == Activation::swiglu ? 3.0 : 2.0;  // SwiGLU reads 2 writes 1
  const double act_mult_bwd = m.activation == Activation::swiglu ? 5.0 : 3.0;  // reads in + dy, writes dx
  // MoE, as Megatron-Core's alltoall dispatcher runs it under MoE parallel folding: each rank routes
  // the tokens it holds -- its sequence shard Tr = T / t with SP (Megatron requires SP with TP), else
  // all T -- and sends each token's k copies to the EP ranks holding its experts (all-to-all of
  // Tr k h); with expert TP (ETP > 1) the copies are all-gathered over the ETP group, each ETP rank
  // computes its 1 / ETP slice of every local expert, and a reduce-scatter returns the partial sums
  // before the combine all-to-all. No TP collective surrounds the MoE MLP: its output stays the rank's
  // sequence shard. Balanced routing: the rank's E / EP experts receive Tr k ETP copies, Tr k ETP EP / E
  // each (with ETP = TP and SP that is T k EP / E, as without folding).
  const std::int64_t E = m.num_moe_experts, k = m.moe_router_topk;
  const std::int64_t Tr = x.sp ? x.Tn : x.T;
  const int etp = t.expert_tp();
  const std::int64_t experts_here = E / t.ep;
  const std::int64_t tokens_per_expert = std::max<std::int64_t>(1, (Tr * k * etp * t.ep + E / 2) / E);
  const std::int64_t f = expert_ffn(m) / etp;
  const double routed_bytes = d(Tr) * d(k) * d(x.h) * kActBytes;
  const double routed_hidden_bytes = d(Tr) * d(x.h) * kActBytes;
  // The expert-parallel all-to-alls; a per-node dispatcher's (DeepEP, HybridEP) carry the routing that
  // decides the bytes it sends (sim/network/token_dispatch.hpp).
  sim::TokenRouting routing;
  if (t.moe_token_dispatcher != MoeDispatcher::alltoall)
    routing = sim::TokenRouting(static_cast<std::int32_t>(E), static_cast<std::int32_t>(k), static_cast<std::int32_t>(m.moe_router_num_groups),
                                static_cast<std::int32_t>(m.moe_router_group_topk));
  const auto a2a = [&](const char* name) {
    Op op = coll(name, CollectiveKind::all_to_all, ProcessGroup::ep, routed_bytes);
    op.routing = routing;
    return op;
  };
  Op router = gemm("router", Tr, E, x.h, Dtype::bf16);
  fwd.push_back(router);
  fwd.push_back(mem("router_softmax_topk", MemOpKind::softmax, d(Tr) * d(E) * 4.0 * 2.0));
  fwd.push_back(mem("permute", MemOpKind::copy, 2.0 * routed_bytes));
  if (t.ep > 1) fwd.push_back(a2a("a2a_dispatch"));
  if (etp > 1) fwd.push_back(coll("ag_moe", CollectiveKind::all_gather, ProcessGroup::etp, routed_bytes * etp));
  // The rank's experts, one kernel each (Megatron's SequentialMLP order: every expert's FC1, activation
  // and FC2 in turn). Balanced routing makes them identical, so each kernel kind is one op repeated
  // experts_here times (Op::repeat): the same time on the stream, a task graph E / EP times smaller.
  const auto experts = [&](Op op) {
    op.repeat = static_cast<int>(experts_here);
    return op;
  };
  // Their forward kernels are issued by the host one by one behind a device-to-host synchronisation:
  // Megatron-Core's dispatchers bring the token counts to the host before the experts run (alltoall:
  // token_dispatcher.py MoEAlltoAllTokenDispatcher, cuda_sync_point "before_ep_alltoall" whenever EP or TP
  // > 1, else "before_finish"; the experts' FP8/FP4 padding and TEGroupedMLP's per-expert splits call
  // tokens_per_expert.tolist(), experts.py @ NVIDIA/Megatron-LM d98e8a64), so the GPU queue is empty when
  // the host starts issuing them (Op::host_issued). The backward has no such synchronisation.
  const auto issued = [&](Op op) {
    op.host_issued = t.experts_host_issued();
    return op;
  };
  std::vector<Op> expert_bwd;
  const Op fc1 = experts(gemm("fc1.experts", tokens_per_expert, fc1_width(m, expert_ffn(m)) / etp, x.h, x.gemm_dtype));
  const Op act = experts(mem("act.experts", MemOpKind::activation, act_mult_fwd * d(tokens_per_expert) * d(f) * kActBytes));
  const Op fc2 = experts(gemm("fc2.experts", tokens_per_expert, x.h, f, x.gemm_dtype));
  fwd.push_back(issued(fc1));
  fwd.push_back(issued(act));
  fwd.push_back(issued(fc2));
  // The experts' FC2 bias (model.add_bias_linear), as Megatron-Core's TEGroupedMLP applies it:
  // linear_fc2 is built with skip_bias_add=True, and forward() then calls
  //   _apply_bias(output, output_bias, tokens_per_expert, permuted_probs)
  //     = torch.cat([t + b * p for t, b, p in zip(split(output), biases, split(probs))])
  // (megatron/core/transformer/moe/experts.py @ NVIDIA/Megatron-LM b0cc270 and d728871; FC1's bias is
  // added in the grouped GEMM's epilogue and its gradient comes with the wgrad GEMM, TransformerEngine
  // module/grouped_linear.py @ 71bbefb, so it costs nothing here). With S_e = one expert's rows x h x
  // 2 B (the router probabilities in bf16: moe_router_dtype unset) and S the rank's E / EP experts
  // together, the forward runs per expert b * p (writes S_e) and the add (reads 2 S_e, writes S_e), then
  // one cat (reads S, writes S): 2 E/EP + 1 kernels, 6 S. The backward (autograd) runs per expert
  // mul's two gradients, grad * p summed over the rows for b and grad * b summed over h for p (2 S_e +
  // S_e each: 4 kernels, 6 S_e), then split's backward cat of the output gradients (2 S): 4 E/EP + 1
  // kernels, 8 S. The add and the cat pass their gradient through as views; the probabilities' split
  // (n x 1) and the sum of their two gradients are two more tiny kernels, not counted.
  if (m.add_bias_linear) {
    const double se = d(tokens_per_expert) * d(x.h) * kActBytes;
    const double all = se * d(experts_here);
    fwd.push_back(issued(experts(mem("fc2_bias_mul.experts", MemOpKind::elementwise, se))));
    fwd.push_back(issued(experts(mem("fc2_bias_add.experts", MemOpKind::elementwise, 3.0 * se))));
    fwd.push_back(mem("fc2_bias_cat", MemOpKind::copy, 2.0 * all));
    expert_bwd.push_back(mem("fc2_bias_cat_bwd", MemOpKind::copy, 2.0 * all));
    Op grads = mem("fc2_bias_bwd.experts", MemOpKind::elementwise, 1.5 * se);
    grads.repeat = static_cast<int>(4 * experts_here);
    expert_bwd.push_back(std::move(grads));
  }
  if (t.recompute == Recompute::selective && t.recompute_modules.moe_act) expert_bwd.push_back(recomputed(act));
  expert_bwd.push_back(experts(dgrad(fc2)));
  expert_bwd.push_back(experts(wgrad(fc2)));
  expert_bwd.push_back(experts(mem("act_bwd.experts", MemOpKind::activation, act_mult_bwd * d(tokens_per_expert) * d(f) * kActBytes)));
  expert_bwd.push_back(experts(dgrad(fc1)));
  expert_bwd.push_back(experts(wgrad(fc1)));
  if (etp > 1) fwd.push_back(coll("rs_moe", CollectiveKind::reduce_scatter, ProcessGroup::etp, routed_bytes * etp));
  if (t.ep > 1) fwd.push_back(a2a("a2a_combine"));
  // Unpermute and weight by the router probabilities: reads Tr k h copies, writes Tr h.
  fwd.push_back(mem("unpermute", MemOpKind::copy, routed_bytes + routed_hidden_bytes));
  // Shared experts (DeepSeekMoE): one dense MLP of their summed width S over all T tokens, split by TP
  // like the dense MLP with its TP collectives (Megatron's SharedExpertMLP: all-gather of the sequence
  // shards, reduce-scatter after), its output added to the routed one; run after the routed experts
  // unless moe_shared_expert_overlap.
  std::vector<Op> shared_bwd;
  if (m.moe_shared_expert_intermediate_size > 0)
    tp_mlp_ops(m, x, "shared_", "_shared", m.moe_shared_expert_intermediate_size, fwd, shared_bwd);

  // Backward of unpermute y_t = sum_j p_tj e_tj: reads dy (Tr h) and the saved expert outputs (Tr k h)
  // for the probability gradients, writes the k gradient copies p_tj dy_t (Tr k h). The ETP collectives
  // swap: the output gradients are all-gathered, the input gradients reduce-scattered.
  for (auto& op : shared_bwd) bwd.push_back(std::move(op));
  bwd.push_back(mem("unpermute_bwd", MemOpKind::copy, 2.0 * routed_bytes + routed_hidden_bytes));
  if (t.ep > 1) bwd.push_back(a2a("a2a_combine_bwd"));
  if (etp > 1) bwd.push_back(coll("ag_moe_bwd", CollectiveKind::all_gather, ProcessGroup::etp, routed_bytes * etp));
  for (auto& op : expert_bwd) bwd.push_back(std::move(op));
  if (etp > 1) bwd.push_back(coll("rs_moe_bwd", CollectiveKind::reduce_scatter, ProcessGroup::etp, routed_bytes * etp));
  if (t.ep > 1) bwd.push_back(a2a("a2a_dispatch_bwd"));
  // Backward of permute: the k gradient copies of each token (Tr k h) summed back into its row (Tr h).
  bwd.push_back(mem("permute_bwd", MemOpKind::copy, routed_bytes + routed_hidden_bytes));
  bwd.push_back(mem("router_softmax_topk_bwd", MemOpKind::softmax, d(Tr) * d(E) * 4.0 * 3.0));
  bwd.push_back(dgrad(router));
  bwd.push_back(wgrad(router));
}

// MLA's projections, from the norm's output to the attention core's Q, K, V (MlaConfig in the header;
// MLASelfAttention.get_query_key_value_tensors @ NVIDIA/Megatron-LM 13f8f526), forward into `fwd` and
// their backward, in backward order, into `bwd`. With T tokens on the rank, Tn = T / t of them with
// sequence parallelism, heads a / t = hq, latents r_q and r_kv, head dims d_n, d_r, d_v:
//   q_down  [Tn, h] x [h, r_q]  (TELinear, every TP rank the whole weight, on its sequence shard)
//   q_norm  RMSNorm over Tn x r_q, then (SP) all-gather of the normed latent, T x r_q
//           (TELayerNormColumnParallelLinear: the norm runs on the shard, its output is gathered)
//   q_up    [T, r_q] x [r_q, hq (d_n + d_r)]
//   kv_down [Tn, h] x [h, r_kv + d_r]; (SP) all-gather of the RoPE key k_pe, T x d_r
//           (gather_from_sequence_parallel_region)
//   kv_norm RMSNorm over Tn x r_kv, (SP) all-gather T x r_kv
//   kv_up   [T, r_kv] x [r_kv, hq (d_n + d_v)]
//   rope    on q_pe (T x hq x d_r) and k_pe (T x 1 x d_r): rope_ops with d_r-wide heads, hq + 1 of them
//   cat     query = cat(q_nope, q_pe), key = cat(k_nope, k_pe expanded to hq heads), value made contiguous
//           (TE takes contiguous tensors only): reads T hq (d_n + d_r) + T hq d_n + T d_r + T hq d_v,
//           writes T hq (2 (d_n + d_r) + d_v), 2 B each.
// Without query compression (r_q = 0) q_proj [T, h] x [h, hq (d_n + d_r)] is column-parallel on the
// whole hidden state, so (SP) the norm output is all-gathered first, as for a QKV GEMM.
// Backward: the cat's gradients are assembled (dQ's halves into one tensor, dK's no-RoPE part with dV
// into kv_up's output gradient, k_pe's gradient summed over the heads: reads and writes the same
// bytes); the RoPE backward; each up-projection's backward as a column-parallel GEMM's (SP: the
// latent all-gathered again for the wgrad, dgrad, reduce-scatter of the latent's gradient, wgrad), the
// norm's backward; the k_pe gradient reduce-scattered; each down-projection's dgrad and wgrad on the
// shard; the two input gradients summed (reads 2, writes 1 Tn x h). Not modelled: the TP all-reduce of
// the duplicated down-projections' weight gradients under SP (once per step, beside the DP reduction).
// `up_again` receives the forward ops recompute_modules "mla_up_proj" re-runs (Megatron-Core's
// qkv_up_proj_and_rope_apply under CheckpointWithoutOutput, multi_latent_attention.py @ 13f8f526): everything
// from the latents to Q, K, V -- the norms, the latents' all-gathers, the up-projections, RoPE and the cat --
// but the down-projections and the RoPE key's gather, which run before the checkpoint.
void mla_projection_ops(const ModelConfig& m, const TrainingConfig& t, const Dims& x, std::vector<Op>& fwd,
                        std::vector<Op>& bwd, std::vector<Op>& up_again) {
  const MlaConfig& a = m.mla;
  const std::int64_t hq = x.hq, dqk = a.qk_head_dim();
  const auto norm_of = [](std::string name, std::int64_t rows, std::int64_t width, bool backward) {
    return mem(std::move(name), MemOpKind::norm, (backward ? 3.0 : 2.0) * d(rows) * d(width) * kActBytes);
  };
  const auto gather = [&](std::string name, std::int64_t width) {
    return coll(std::move(name), CollectiveKind::all_gather, ProcessGroup::tp, d(x.T) * d(width) * kActBytes);
  };
  const auto scatter = [&](std::string name, std::int64_t width) {
    return coll(std::move(name), CollectiveKind::reduce_scatter, ProcessGroup::tp, d(x.T) * d(width) * kActBytes);
  };
  // An up-projection's backward: column_parallel_bwd with the latent's width instead of h.
  const auto up_bwd = [&](const Op& up, const std::string& suffix, std::int64_t width, std::vector<Op>& out) {
    if (x.sp) out.push_back(gather("ag" + suffix + "_bwd", width));
    out.push_back(dgrad(up));
    if (x.sp) out.push_back(scatter("rs" + suffix + "_bwd", width));
    out.push_back(wgrad(up));
  };
  std::vector<Op> q_bwd, kv_bwd, down_bwd;
  // Query.
  if (a.q_lora_rank > 0) {
    const Op down = gemm("q_down", x.Tn, a.q_lora_rank, x.h, x.gemm_dtype);
    const Op up = gemm("q_up", x.T, hq * dqk, a.q_lora_rank, x.gemm_dtype);
    fwd.push_back(down);
    fwd.push_back(norm_of("q_norm", x.Tn, a.q_lora_rank, false));
    if (x.sp) fwd.push_back(gather("ag_q", a.q_lora_rank));
    fwd.push_back(up);
    up_bwd(up, "_q", a.q_lora_rank, q_bwd);
    q_bwd.push_back(norm_of("q_norm_bwd", x.Tn, a.q_lora_rank, true));
    down_bwd.push_back(dgrad(down));
    down_bwd.push_back(wgrad(down));
  } else {
    if (x.sp) fwd.push_back(coll("ag_attn", CollectiveKind::all_gather, ProcessGroup::tp, hidden_bytes(x)));
    const Op q = gemm("q_proj", x.T, hq * dqk, x.h, x.gemm_dtype);
    fwd.push_back(q);
    column_parallel_bwd(q, x, "_attn", q_bwd);
  }
  // Key and value.
  const Op kv_down = gemm("kv_down", x.Tn, a.kv_lora_rank + a.qk_rope_head_dim, x.h, x.gemm_dtype);
  const Op kv_up = gemm("kv_up", x.T, hq * (a.qk_nope_head_dim + a.v_head_dim), a.kv_lora_rank, x.gemm_dtype);
  fwd.push_back(kv_down);
  if (x.sp) fwd.push_back(gather("ag_kpe", a.qk_rope_head_dim));
  fwd.push_back(norm_of("kv_norm", x.Tn, a.kv_lora_rank, false));
  if (x.sp) fwd.push_back(gather("ag_kv", a.kv_lora_rank));
  fwd.push_back(kv_up);
  up_bwd(kv_up, "_kv", a.kv_lora_rank, kv_bwd);
  kv_bwd.push_back(norm_of("kv_norm_bwd", x.Tn, a.kv_lora_rank, true));
  if (x.sp) kv_bwd.push_back(scatter("rs_kpe_bwd", a.qk_rope_head_dim));
  // RoPE on the decoupled parts: hq query heads and one key head of d_r dims.
  Dims r = x;
  r.hq = hq;
  r.hkv = 1;
  r.dh = a.qk_rope_head_dim;
  const bool rotary = position_embedding(m) == PositionEmbedding::rope;
  if (rotary) rope_ops("rope", m, t, r, false, fwd);
  const double cat_bytes = d(x.T) * (d(hq) * d(a.qk_nope_head_dim + a.qk_rope_head_dim) + d(hq) * d(a.qk_nope_head_dim) +
                                     d(a.qk_rope_head_dim) + d(hq) * d(a.v_head_dim) + d(hq) * d(2 * dqk + a.v_head_dim)) * kActBytes;
  fwd.push_back(mem("mla_qkv_cat", MemOpKind::copy, cat_bytes));
  for (const Op& op : fwd)
    if (op.name != "ln1" && op.name != "q_down" && op.name != "kv_down" && op.name != "ag_kpe" && op.name != "ag_attn" && op.name != "q_proj")
      up_again.push_back(op);
  bwd.push_back(mem("mla_qkv_cat_bwd", MemOpKind::copy, cat_bytes));
  if (rotary) rope_ops("rope_bwd", m, t, r, true, bwd);
  for (auto& op : kv_bwd) bwd.push_back(std::move(op));
  for (auto& op : q_bwd) bwd.push_back(std::move(op));
  down_bwd.push_back(dgrad(kv_down));
  down_bwd.push_back(wgrad(kv_down));
  for (auto& op : down_bwd) bwd.push_back(std::move(op));
  bwd.push_back(mem("mla_dx_add", MemOpKind::elementwise, 3.0 * d(x.Tn) * d(x.h) * kActBytes));
}

// Backward of a column-parallel GEMM (QKV, FC1, logits) in Megatron's issue order, with the input
// gradient's TP collective. `ag_name` / `grad_name` name the collectives.
void column_parallel_bwd(const Op& fwd, const Dims& x, const std::string& suffix, std::vector<Op>& out) {
  if (x.sp) out.push_back(coll("ag" + suffix + "_bwd", CollectiveKind::all_gather, ProcessGroup::tp, hidden_bytes(x)));
  out.push_back(dgrad(fwd));
  if (x.t > 1) {
    if (x.sp) {
      out.push_back(coll("rs" + suffix + "_bwd", CollectiveKind::reduce_scatter, ProcessGroup::tp, hidden_bytes(x)));
    } else {
      out.push_back(coll("ar" + suffix + "_bwd", CollectiveKind::all_reduce, ProcessGroup::tp, hidden_bytes(x)));
    }
  }
  out.push_back(wgrad(fwd));
}

// The forward TP collective after a row-parallel GEMM (out-proj, FC2), and its backward conjugate.
void row_parallel_fwd_coll(const Dims& x, const std::string& suffix, std::vector<Op>& out) {
  if (x.t == 1) return;
  if (x.sp) {
    out.push_back(coll("rs" + suffix, CollectiveKind::reduce_scatter, ProcessGroup::tp, hidden_bytes(x)));
  } else {
    out.push_back(coll("ar" + suffix, CollectiveKind::all_reduce, ProcessGroup::tp, hidden_bytes(x)));
  }
}
void row_parallel_bwd_coll(const Dims& x, const std::string& suffix, std::vector<Op>& out) {
  if (x.sp) out.push_back(coll("ag" + suffix + "_out_bwd", CollectiveKind::all_gather, ProcessGroup::tp, hidden_bytes(x)));
}

}  // namespace

// Sources: GPT-3 — Brown et al. 2020, table 2.1 (96 layers, d_model 12288, 96 heads, 2048 context,
// GPT-2 BPE vocabulary 50257; Megatron pads it to 51200 at tp 8, see padded_vocab_size). Llama 2 —
// Touvron et al. 2023 and the HF configs meta-llama/Llama-2-{7b,13b,70b}-hf. Llama 3 / 3.1 — HF configs
// meta-llama/Meta-Llama-3-8B, -70B, Llama-3.1-405B. BERT-large — Devlin et al. 2019 / HF
// bert-large-uncased. Mixtral 8x7B — HF mistralai/Mixtral-8x7B-v0.1 (Jiang et al. 2024). DeepSeekMoE
// 16B -- HF deepseek-ai/deepseek-moe-16b-base (Dai et al. 2024). DeepSeek-V3 -- deepseek-ai/DeepSeek-V3
// config_671B.json (beside its row).
namespace {
struct PresetRow {
  const char* name;
  std::int64_t layers, hidden, heads, groups, ffn, vocab;
  Activation act;
  std::int64_t experts, topk;
  bool causal, untied;
  double dropout;  // attention and hidden dropout
  std::int64_t positions;
  // Fine-grained MoE: expert width, shared experts' total width, leading dense layers.
  std::int64_t moe_ffn = 0, shared = 0, first_dense = 0;
  MlaConfig mla{};  // multi-head latent attention (kv_lora_rank 0: none)
  // Hybrid models: Megatron's hybrid_override_pattern and the Mamba-2 sizes; the head dim (kv_channels, 0:
  // hidden / heads).
  const char* hybrid = nullptr;
  MambaConfig mamba{};
  std::int64_t kv_channels = 0;
  // Group-limited routing: moe_router_num_groups, moe_router_group_topk (0: none).
  std::int64_t router_groups = 0, router_group_topk = 0;
};
constexpr std::array<PresetRow, 14> kPresets{{
    // GPT-3 175B: Brown et al. 2020 table 2.1; tied input/output embeddings, learned positions, dropout 0.1.
    {"gpt3-175b", 96, 12288, 96, 96, 49152, 50257, Activation::gelu, 0, 0, true, false, 0.1, 2048},
    // Llama 2 7B: HF Llama-2-7b-hf config.json.
    {"llama2-7b", 32, 4096, 32, 32, 11008, 32000, Activation::swiglu, 0, 0, true, true, 0.0, 0},
    // Llama 2 13B: HF Llama-2-13b-hf config.json.
    {"llama2-13b", 40, 5120, 40, 40, 13824, 32000, Activation::swiglu, 0, 0, true, true, 0.0, 0},
    // Llama 2 70B: HF Llama-2-70b-hf config.json (GQA, 8 KV heads).
    {"llama2-70b", 80, 8192, 64, 8, 28672, 32000, Activation::swiglu, 0, 0, true, true, 0.0, 0},
    // Llama 3 8B: HF Meta-Llama-3-8B config.json.
    {"llama3-8b", 32, 4096, 32, 8, 14336, 128256, Activation::swiglu, 0, 0, true, true, 0.0, 0},
    // Llama 3 70B: HF Meta-Llama-3-70B config.json.
    {"llama3-70b", 80, 8192, 64, 8, 28672, 128256, Activation::swiglu, 0, 0, true, true, 0.0, 0},
    // Llama 3.1 405B: HF Llama-3.1-405B config.json; Dubey et al. 2024 table 3.
    {"llama3-405b", 126, 16384, 128, 8, 53248, 128256, Activation::swiglu, 0, 0, true, true, 0.0, 0},
    // BERT-large: Devlin et al. 2019 (L=24, H=1024, A=16); HF bert-large-uncased (vocab 30522, 512
    // positions); bidirectional, MLM head tied to the input embedding, dropout 0.1.
    {"bert-large", 24, 1024, 16, 16, 4096, 30522, Activation::gelu, 0, 0, false, false, 0.1, 512},
    // Mixtral 8x7B: HF Mixtral-8x7B-v0.1 config.json (8 experts, top-2, GQA 8).
    {"mixtral-8x7b", 32, 4096, 32, 8, 14336, 32000, Activation::swiglu, 8, 2, true, true, 0.0, 0},
    // DeepSeekMoE 16B (Dai et al. 2024, arXiv:2401.06066; HF deepseek-ai/deepseek-moe-16b-base
    // config.json): 28 layers, hidden 2048, 16 heads (MHA), vocabulary 102400, untied; 64 routed experts
    // of width 1408, top-6, 2 shared experts (2 x 1408), the first layer dense (first_k_dense_replace 1,
    // intermediate_size 10944). 16.4B parameters, 2.8B per token.
    {"deepseek-moe-16b", 28, 2048, 16, 16, 10944, 102400, Activation::swiglu, 64, 6, true, true, 0.0, 0, 1408, 2816, 1},
    // DeepSeek-V3 (DeepSeek-AI 2024, arXiv:2412.19437; deepseek-ai/DeepSeek-V3 inference/configs/
    // config_671B.json @ 9b4e978, the same numbers as the Hugging Face config.json of deepseek-ai/DeepSeek-V3):
    // 61 layers (n_layers), hidden 7168 (dim), 128 heads, dense FFN 18432 (inter_dim) in the first 3 layers
    // (n_dense_layers, HF first_k_dense_replace), vocabulary 129280, untied (HF tie_word_embeddings false);
    // 256 routed experts of width 2048 (moe_inter_dim), top-8 (n_activated_experts), 1 shared expert of
    // the same width; MLA with q_lora_rank 1536, kv_lora_rank 512, qk_nope_head_dim 128, qk_rope_head_dim 64,
    // v_head_dim 128. The multi-token-prediction module (HF num_nextn_predict_layers 1) is not part of the
    // 671B main model and not simulated. Group-limited routing: 8 groups of 32 experts, a token's 8 from at
    // most 4 of them (n_expert_groups 8, n_limited_groups 4; HF n_group, topk_group), which a per-node token
    // dispatcher turns into fewer network copies; sigmoid scoring and the routed scaling factor change no shape.
    {"deepseek-v3", 61, 7168, 128, 128, 18432, 129280, Activation::swiglu, 256, 8, true, true, 0.0, 0, 2048, 2048, 3,
     MlaConfig{1536, 512, 128, 64, 128}, nullptr, MambaConfig{}, 0, 8, 4},
    // Nemotron-H 56B (NVIDIA 2025, "Nemotron-H", arXiv:2504.03624; Megatron-Bridge src/megatron/bridge/recipes/
    // nemotronh/h100/nemotronh.py @ NVIDIA-NeMo/Megatron-Bridge 067f987d, nemotronh_56b_pretrain_8gpu_h100_bf16_config):
    // 118 layers (54 Mamba-2, 10 attention, 54 MLP), hidden 8192, 64 heads with 8 query groups (head dim 128),
    // squared-ReLU MLP of 32768, Mamba state 256, 256 heads of 64, 8 groups; vocabulary 131072 (HF
    // nvidia/Nemotron-H-56B-Base-8K config.json vocab_size, as Bridge's NemotronH tests use it), untied, no
    // position embedding (HybridModelProvider: position_embedding_type "none", share_embeddings_and_output_weights
    // False, normalization RMSNorm, add_bias_linear False).
    {"nemotron-h-56b", 118, 8192, 64, 8, 32768, 131072, Activation::squared_relu, 0, 0, true, true, 0.0, 0, 0, 0, 0, MlaConfig{},
     "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-",
     MambaConfig{256, 64, 8, 256, 2, 4, 128}},
    // Nemotron-H 8B: the same recipe file, nemotronh_8b_pretrain_2gpu_h100_bf16_config: 52 layers (24 Mamba-2,
    // 4 attention, 24 MLP), hidden 4096, 32 heads, 8 query groups, MLP 21504, Mamba state 128, 128 heads of 64,
    // 8 groups.
    {"nemotron-h-8b", 52, 4096, 32, 8, 21504, 131072, Activation::squared_relu, 0, 0, true, true, 0.0, 0, 0, 0, 0, MlaConfig{},
     "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-", MambaConfig{128, 64, 8, 128, 2, 4, 128}},
    // Nemotron 3 Nano 30B-A3B (Megatron-Bridge src/megatron/bridge/recipes/nemotronh/h100/nemotron_3_nano.py @
    // 067f987d, nemotron_3_nano_pretrain_8gpu_h100_bf16_config, the HF nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16
    // config as Bridge's tests/unit_tests/models/nemotronh/test_nemotron_h_bridge.py @ 067f987d mirror it): 52
    // layers (23 Mamba-2, 6 attention, 23 MoE), hidden 2688, 32 heads of 128 (kv_channels) with 2 query
    // groups, 128 routed experts of 1856 (squared ReLU), top-6, shared experts 3712 wide, Mamba state 128, 64
    // heads of 64, 8 groups; vocabulary 131072, untied. (ffn_hidden_size 1856 is unused: no dense MLP layer.)
    {"nemotron3-nano-30b-a3b", 52, 2688, 32, 2, 1856, 131072, Activation::squared_relu, 128, 6, true, true, 0.0, 0, 1856, 3712, 0,
     MlaConfig{}, "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME", MambaConfig{128, 64, 8, 64, 2, 4, 128}, 128},
}};
}  // namespace

std::optional<ModelConfig> find_preset(std::string_view name) {
  for (const auto& r : kPresets) {
    if (name != r.name) continue;
    ModelConfig m;
    m.name = r.name;
    m.num_layers = r.layers;
    m.hidden_size = r.hidden;
    m.num_attention_heads = r.heads;
    m.num_query_groups = r.groups;
    m.ffn_hidden_size = r.ffn;
    m.vocab_size = r.vocab;
    m.activation = r.act;
    m.num_moe_experts = r.experts;
    m.moe_router_topk = r.topk;
    m.causal = r.causal;
    m.untie_embeddings = r.untied;
    m.attention_dropout = r.dropout;
    m.hidden_dropout = r.dropout;
    m.max_position_embeddings = r.positions;
    m.moe_ffn_hidden_size = r.moe_ffn;
    m.moe_shared_expert_intermediate_size = r.shared;
    m.mla = r.mla;
    m.kv_channels = r.kv_channels;
    m.moe_router_num_groups = r.router_groups;
    m.moe_router_group_topk = r.router_group_topk;
    if (r.hybrid != nullptr) {
      m.hybrid_override_pattern = r.hybrid;
      m.mamba = r.mamba;
      m.position_embedding_type = PositionEmbedding::none;  // HybridModelProvider's default "none"
    }
    if (r.first_dense > 0) {
      m.moe_layer_pattern.assign(static_cast<std::size_t>(r.layers), true);
      for (std::int64_t l = 0; l < r.first_dense; ++l) m.moe_layer_pattern[static_cast<std::size_t>(l)] = false;
    }
    return m;
  }
  return std::nullopt;
}

std::vector<std::string> preset_names() { return sim::names_in(kPresets); }

// Biases of one layer with add_bias_linear (Megatron-Core): QKV ((a + 2g) d), out-proj (h); a dense
// MLP's FC1 (f', the gate and up halves for SwiGLU) and FC2 (h); an MoE layer's router (E, fp32 in
// Megatron's TopKRouter, counted like the other parameters), each expert's FC1 and FC2, the shared
// experts' FC1 and FC2.
namespace {
// The attention block's biases (QKV and out-proj; MLA's out-proj only).
double attention_bias_parameters(const ModelConfig& m) {
  if (!m.add_bias_linear) return 0;
  const double h = d(m.hidden_size);
  return m.mla.enabled() ? h : d(m.num_attention_heads + 2 * m.num_query_groups) * d(m.head_dim()) + h;
}
double bias_parameters_per_layer(const ModelConfig& m, bool moe_layer) {
  if (!m.add_bias_linear) return 0;
  const double h = d(m.hidden_size);
  // MLA's projections have no bias (MLASelfAttention builds them with bias=False); its out-projection has.
  const double attention = m.mla.enabled() ? h : d(m.num_attention_heads + 2 * m.num_query_groups) * d(m.head_dim()) + h;
  if (m.num_moe_experts > 0 && moe_layer) {
    const double shared = m.moe_shared_expert_intermediate_size > 0 ? d(fc1_width(m, m.moe_shared_expert_intermediate_size)) + h : 0;
    return attention + d(m.num_moe_experts) * (1.0 + d(fc1_width(m, expert_ffn(m))) + h) + shared;
  }
  return attention + d(fc1_width(m, m.ffn_hidden_size)) + h;
}
}  // namespace

double mamba_gemm_params(const ModelConfig& m) {
  const MambaConfig& c = m.mamba;
  const double h = d(m.hidden_size), d_in = d(m.mamba_d_inner());
  return h * (2.0 * d_in + 2.0 * d(c.num_groups) * d(c.state_dim) + d(m.mamba_heads())) + d_in * h;
}

double mamba_scan_flops_per_token(const ModelConfig& m) {
  const MambaConfig& c = m.mamba;
  const double G = d(c.num_groups), H = d(m.mamba_heads()), N = d(c.state_dim), P = d(c.head_dim), Q = d(c.chunk_size);
  return 2.0 * G * Q * N + 4.0 * H * N * P + H * Q * P;
}

double mamba_layer_params(const ModelConfig& m) {
  const MambaConfig& c = m.mamba;
  const double h = d(m.hidden_size), heads = d(m.mamba_heads()), d_in = d(m.mamba_d_inner());
  const double gn = d(c.num_groups) * d(c.state_dim), conv_ch = d_in + 2.0 * gn;
  const double in_proj = h * (2.0 * d_in + 2.0 * gn + heads), out_proj = d_in * h;
  const double conv = conv_ch * d(c.conv_kernel) + conv_ch;  // depthwise weight and bias
  return norm_params(m) + in_proj + conv + 3.0 * heads + d_in + out_proj;  // dt_bias, A_log, D; the gated norm
}

double parameters_per_layer(const ModelConfig& m, bool moe_layer, LayerKind kind) {
  const double h = d(m.hidden_size);
  if (kind == LayerKind::mamba) return mamba_layer_params(m);
  double mlp = 0;
  if (m.num_moe_experts > 0 && moe_layer) {
    mlp = d(m.num_moe_experts) * mlp_matrices(m) * h * d(expert_ffn(m)) + h * d(m.num_moe_experts) +
          mlp_matrices(m) * h * d(m.moe_shared_expert_intermediate_size);
  } else {
    mlp = mlp_matrices(m) * h * d(m.ffn_hidden_size);
  }
  const double attention = attention_gemm_params(m) + attention_norm_params(m) + norm_params(m);
  const double bias = bias_parameters_per_layer(m, moe_layer);
  if (kind == LayerKind::attention) return attention + attention_bias_parameters(m);
  if (kind == LayerKind::mlp) return mlp + norm_params(m) + bias - attention_bias_parameters(m);
  return attention + mlp + norm_params(m) + bias;
}

std::vector<double> layer_parameter_tensors(const ModelConfig& m, int tp) {
  if (m.mla.enabled() || m.num_moe_experts > 0 || m.hybrid()) return {};
  const double h = d(m.hidden_size), t = tp, dh = d(m.head_dim());
  const double qkv_out = d(m.num_attention_heads + 2 * m.num_query_groups) * dh;
  const double fc1_out = d(fc1_width(m, m.ffn_hidden_size));
  const bool layer_norm = m.activation == Activation::gelu;  // LayerNorm: weight and bias; RMSNorm: weight
  const bool bias = m.add_bias_linear;
  std::vector<double> out;
  auto norm = [&] {
    out.push_back(h);
    if (layer_norm) out.push_back(h);
  };
  auto linear = [&](double in, double outputs, bool column) {  // column-parallel: output split; row: input split
    out.push_back(in * outputs / t);
    if (bias) out.push_back(column ? outputs / t : outputs);
  };
  norm();
  linear(h, qkv_out, true);
  linear(d(m.num_attention_heads) * dh, h, false);
  norm();
  linear(h, fc1_out, true);
  linear(d(m.ffn_hidden_size), h, false);
  return out;
}

std::vector<double> embedding_parameter_tensors(const ModelConfig& m, int tp) {
  std::vector<double> out{d(m.vocab_size) * d(m.hidden_size) / tp};
  if (m.max_position_embeddings > 0) out.push_back(d(m.max_position_embeddings) * d(m.hidden_size));
  return out;
}

std::vector<double> head_parameter_tensors(const ModelConfig& m, int tp) {
  std::vector<double> out{d(m.hidden_size)};
  if (m.activation == Activation::gelu) out.push_back(d(m.hidden_size));
  if (m.untie_embeddings) out.push_back(d(m.vocab_size) * d(m.hidden_size) / tp);
  return out;
}

double embedding_parameters(const ModelConfig& m) {
  const double word = d(m.vocab_size) * d(m.hidden_size);
  const double positions = d(m.max_position_embeddings) * d(m.hidden_size);
  return word + positions + (m.untie_embeddings ? word : 0.0);
}

double final_norm_parameters(const ModelConfig& m) { return norm_params(m); }

LayerKind layer_kind(const ModelConfig& m, std::int64_t layer) {
  if (!m.hybrid()) return LayerKind::transformer;
  CS_CHECK(layer >= 0 && layer < static_cast<std::int64_t>(m.hybrid_override_pattern.size()));
  switch (m.hybrid_override_pattern[static_cast<std::size_t>(layer)]) {
    case 'M': return LayerKind::mamba;
    case '*': return LayerKind::attention;
    default: return LayerKind::mlp;  // '-' and 'E' (hybrid_problems refuses any other letter)
  }
}

std::vector<std::string> hybrid_problems(const ModelConfig& m) {
  std::vector<std::string> p;
  if (!m.hybrid()) return p;
  const std::string& pat = m.hybrid_override_pattern;
  for (std::size_t i = 0; i < pat.size(); ++i) {
    const char ch = pat[i];
    if (ch == 'M' || ch == '*' || ch == '-' || ch == 'E') continue;
    const bool megatron = ch == 'G' || ch == 'D' || ch == '+' || ch == '|' || ch == '/';
    p.push_back("hybrid_override_pattern: '" + std::string(1, ch) + "' at position " + std::to_string(i) +
                (megatron ? " is a Megatron layer symbol not simulated (expected M, *, - or E)"
                          : " is not a layer symbol (expected M Mamba-2, * attention, - MLP, E MoE)"));
    return p;
  }
  if (m.num_layers > 0 && static_cast<std::int64_t>(pat.size()) != m.num_layers)
    p.push_back("hybrid_override_pattern has " + std::to_string(pat.size()) + " layers, expected num_layers = " + std::to_string(m.num_layers));
  if (pat.find('E') != std::string::npos && m.num_moe_experts <= 0)
    p.push_back("hybrid_override_pattern has MoE layers ('E') but num_moe_experts is 0");
  if (pat.find('M') != std::string::npos) {
    const MambaConfig& c = m.mamba;
    if (c.state_dim <= 0 || c.head_dim <= 0 || c.num_groups <= 0 || c.conv_kernel <= 0 || c.chunk_size <= 0 || m.mamba_heads() <= 0)
      p.push_back("Mamba layers ('M') need mamba_state_dim, mamba_head_dim and mamba_num_groups (and mamba_num_heads or an expand) of at least 1");
    else if (m.mamba_heads() % c.num_groups != 0)
      p.push_back("mamba_num_heads (" + std::to_string(m.mamba_heads()) + ") must be divisible by mamba_num_groups (MambaMixer's assertion)");
  }
  return p;
}

double mtp_parameters(const ModelConfig& m) {
  if (m.mtp_num_layers <= 0) return 0;
  const double h = d(m.hidden_size);
  return d(m.mtp_num_layers) * (parameters_per_layer(m, is_moe_layer(m, m.num_layers - 1)) + 3.0 * norm_params(m) + 2.0 * h * h);
}

double parameter_count(const ModelConfig& m) {
  double layers = 0;
  for (std::int64_t l = 0; l < m.num_layers; ++l) layers += parameters_per_layer(m, is_moe_layer(m, l), layer_kind(m, l));
  return layers + embedding_parameters(m) + final_norm_parameters(m) + mtp_parameters(m);
}

double activated_parameters(const ModelConfig& m) {
  double layers = 0;
  for (std::int64_t l = 0; l < m.num_layers; ++l) {
    const bool moe_layer = is_moe_layer(m, l);
    const LayerKind kind = layer_kind(m, l);
    if (kind == LayerKind::mamba) layers += mamba_layer_params(m);
    if (kind == LayerKind::transformer || kind == LayerKind::attention)
      layers += attention_gemm_params(m) + attention_norm_params(m) + norm_params(m);
    if (kind == LayerKind::transformer || kind == LayerKind::mlp) layers += mlp_params_per_token(m, moe_layer) + norm_params(m);
  }
  return layers + embedding_parameters(m) + final_norm_parameters(m);
}

std::int64_t padded_vocab_size(const ModelConfig& m, int tp) {
  const std::int64_t multiple = 128 * static_cast<std::int64_t>(tp);
  return (m.vocab_size + multiple - 1) / multiple * multiple;
}

bool is_moe_layer(const ModelConfig& m, std::int64_t layer) {
  if (m.num_moe_experts <= 0) return false;
  if (m.hybrid()) {
    CS_CHECK(layer >= 0 && layer < static_cast<std::int64_t>(m.hybrid_override_pattern.size()));
    return m.hybrid_override_pattern[static_cast<std::size_t>(layer)] == 'E';
  }
  if (!m.moe_layer_pattern.empty()) {
    CS_CHECK(layer >= 0 && layer < static_cast<std::int64_t>(m.moe_layer_pattern.size()));
    return m.moe_layer_pattern[static_cast<std::size_t>(layer)];
  }
  return m.moe_layer_freq <= 1 || layer % m.moe_layer_freq == 0;  // Megatron: 0-based, layer % N == 0
}

LayerVariant layer_variant(const ModelConfig& m, std::int64_t layer) {
  const LayerKind kind = layer_kind(m, layer);
  if (kind != LayerKind::transformer) return {kind, is_moe_layer(m, layer), false};
  return {kind, m.num_moe_experts <= 0 || is_moe_layer(m, layer), is_window_attention_layer(m, layer)};
}

std::vector<LayerVariant> layer_variants(const ModelConfig& m) {
  std::set<LayerVariant> seen;
  for (std::int64_t l = 0; l < m.num_layers; ++l) seen.insert(layer_variant(m, l));
  return {seen.begin(), seen.end()};
}

bool is_window_attention_layer(const ModelConfig& m, std::int64_t layer) {
  if (m.window_size <= 0) return false;
  if (!m.window_attn_pattern.empty()) {
    CS_CHECK(layer >= 0 && layer < static_cast<std::int64_t>(m.window_attn_pattern.size()));
    return m.window_attn_pattern[static_cast<std::size_t>(layer)];
  }
  if (m.window_attn_skip_freq <= 0) return true;
  return (layer + 1) % m.window_attn_skip_freq != 0;  // Megatron's 1-based layer_number
}

// Megatron-Core's get_num_layers_to_build, before the embedding / loss correction: the layers of a
// whole pipeline stage.
namespace {
std::int64_t stage_share(const ModelConfig& m, const TrainingConfig& t, int stage) {
  const std::int64_t first = t.decoder_first_pipeline_num_layers, last = t.decoder_last_pipeline_num_layers;
  if (first >= 0 || last >= 0) {
    std::int64_t rest = m.num_layers, stages = t.pp;
    if (first >= 0) rest -= first, --stages;
    if (last >= 0) rest -= last, --stages;
    std::int64_t n = stages > 0 ? rest / stages : 0;
    if (stage == 0 && first >= 0) n = first;
    if (stage == t.pp - 1 && last >= 0) n = last;
    return n;
  }
  const std::int64_t units = m.num_layers + (t.account_for_embedding_in_pipeline_split ? 1 : 0) +
                             (t.account_for_loss_in_pipeline_split ? 1 : 0);
  return units / t.pp;
}
}  // namespace

std::vector<std::string> pipeline_split_problems(const ModelConfig& m, const TrainingConfig& t) {
  std::vector<std::string> p;
  if (t.pp < 1 || t.vp < 1 || m.num_layers < 1) return p;  // reported elsewhere
  const std::int64_t first = t.decoder_first_pipeline_num_layers, last = t.decoder_last_pipeline_num_layers;
  const bool uneven = first >= 0 || last >= 0;
  const bool accounted = t.account_for_embedding_in_pipeline_split || t.account_for_loss_in_pipeline_split;
  const std::int64_t pv = static_cast<std::int64_t>(t.pp) * t.vp;
  if (!t.pipeline_layout.empty()) {
    std::int64_t total = 0;
    for (std::int64_t n : t.pipeline_layout) total += n;
    if (uneven || accounted)
      p.push_back("pipeline_model_parallel_layout cannot be combined with decoder_first/last_pipeline_num_layers or account_for_embedding/loss_in_pipeline_split");
    else if (static_cast<std::int64_t>(t.pipeline_layout.size()) != pv)
      p.push_back("pipeline_model_parallel_layout has " + std::to_string(t.pipeline_layout.size()) +
                  " virtual stages, expected pipeline_model_parallel_size x virtual_pipeline_model_parallel_size = " + std::to_string(pv));
    else if (total != m.num_layers)
      p.push_back("pipeline_model_parallel_layout holds " + std::to_string(total) + " transformer layers, expected num_layers = " +
                  std::to_string(m.num_layers));
    return p;
  }
  if (uneven && accounted) {
    p.push_back("decoder_first/last_pipeline_num_layers cannot be combined with account_for_embedding/loss_in_pipeline_split");
    return p;
  }
  if (uneven) {
    if (t.pp < 2) {
      p.push_back("decoder_first/last_pipeline_num_layers need pipeline_model_parallel_size >= 2");
      return p;
    }
    std::int64_t rest = m.num_layers, stages = t.pp;
    if (first >= 0) rest -= first, --stages;
    if (last >= 0) rest -= last, --stages;
    if (rest < 0 || (stages == 0 && rest != 0) || (stages > 0 && rest % stages != 0)) {
      p.push_back("num_layers minus decoder_first/last_pipeline_num_layers (" + std::to_string(rest) +
                  ") must split evenly over the other " + std::to_string(stages) + " pipeline stages");
      return p;
    }
    for (int s : {0, t.pp - 1})
      if (stage_share(m, t, s) % t.vp != 0)
        p.push_back("the layers of pipeline stage " + std::to_string(s) + " (" + std::to_string(stage_share(m, t, s)) +
                    ") must be divisible by virtual_pipeline_model_parallel_size");
    if (stages > 0 && stage_share(m, t, first >= 0 ? 1 : 0) % t.vp != 0)
      p.push_back("the layers of each middle pipeline stage must be divisible by virtual_pipeline_model_parallel_size");
    return p;
  }
  if (!accounted) {
    if (m.num_layers % pv != 0)
      p.push_back("num_layers must be divisible by pipeline_model_parallel_size * virtual_pipeline_model_parallel_size");
    return p;
  }
  const std::int64_t units = m.num_layers + (t.account_for_embedding_in_pipeline_split ? 1 : 0) +
                             (t.account_for_loss_in_pipeline_split ? 1 : 0);
  if (units % pv != 0) {
    p.push_back("num_layers + 1 for the embedding / the loss (" + std::to_string(units) +
                ") must be divisible by pipeline_model_parallel_size * virtual_pipeline_model_parallel_size");
    return p;
  }
  const std::int64_t per_chunk = units / pv;
  const bool both_in_one = t.pp == 1 && t.vp == 1 && t.account_for_embedding_in_pipeline_split &&
                           t.account_for_loss_in_pipeline_split;
  if (per_chunk < (both_in_one ? 2 : 1))
    p.push_back("the first / last model chunk has no layer left to give up for the embedding / the loss");
  return p;
}

std::int64_t layers_in_chunk(const ModelConfig& m, const TrainingConfig& t, int stage, int chunk) {
  CS_CHECK(stage >= 0 && stage < t.pp && chunk >= 0 && chunk < t.vp);
  if (!t.pipeline_layout.empty()) {
    const auto at = static_cast<std::size_t>(chunk) * static_cast<std::size_t>(t.pp) + static_cast<std::size_t>(stage);
    CS_CHECK(at < t.pipeline_layout.size());
    return t.pipeline_layout[at];
  }
  std::int64_t n = stage_share(m, t, stage) / t.vp;
  if (t.account_for_embedding_in_pipeline_split && stage == 0 && chunk == 0) --n;
  if (t.account_for_loss_in_pipeline_split && stage == t.pp - 1 && chunk == t.vp - 1) --n;
  CS_CHECK(n >= 0);
  return n;
}

std::int64_t layers_on_stage(const ModelConfig& m, const TrainingConfig& t, int stage) {
  std::int64_t n = 0;
  for (int c = 0; c < t.vp; ++c) n += layers_in_chunk(m, t, stage, c);
  return n;
}

std::int64_t first_layer_of_chunk(const ModelConfig& m, const TrainingConfig& t, int stage, int chunk) {
  std::int64_t n = 0;
  for (int c = 0; c <= chunk; ++c)
    for (int s = 0; s < t.pp && !(c == chunk && s == stage); ++s) n += layers_in_chunk(m, t, s, c);
  return n;
}

std::vector<std::string> layout_problems(const ModelConfig& m, const TrainingConfig& t) {
  std::vector<std::string> p;
  auto need = [&p](bool ok, std::string msg) {
    if (!ok) p.push_back(std::move(msg));
  };
  need(m.num_layers > 0 && m.hidden_size > 0 && m.num_attention_heads > 0 && m.num_query_groups > 0 &&
           m.ffn_hidden_size > 0 && m.vocab_size > 0,
       "num_layers, hidden_size, num_attention_heads, num_query_groups, ffn_hidden_size and vocab_size "
       "must be positive");
  need(t.seq_length > 0 && t.global_batch_size > 0 && t.micro_batch_size > 0,
       "seq_length, global_batch_size and micro_batch_size must be positive");
  need(t.tp >= 1 && t.pp >= 1 && t.vp >= 1 && t.cp >= 1 && t.ep >= 1 && t.dp >= 1,
       "every parallel size must be at least 1");
  if (!p.empty()) return p;
  need(m.kv_channels > 0 || m.hidden_size % m.num_attention_heads == 0,
       "hidden_size must be divisible by num_attention_heads (or kv_channels given)");
  need(m.num_attention_heads % m.num_query_groups == 0,
       "num_attention_heads must be divisible by num_query_groups");
  need(m.num_attention_heads % t.tp == 0,
       "num_attention_heads must be divisible by tensor_model_parallel_size");
  need(m.num_query_groups % t.tp == 0, "num_query_groups must be divisible by tensor_model_parallel_size");
  need(m.ffn_hidden_size % t.tp == 0, "ffn_hidden_size must be divisible by tensor_model_parallel_size");
  for (auto& problem : pipeline_split_problems(m, t)) p.push_back(std::move(problem));
  if (m.mla.enabled()) {
    need(m.mla.q_lora_rank >= 0 && m.mla.qk_nope_head_dim > 0 && m.mla.qk_rope_head_dim > 0 && m.mla.v_head_dim > 0,
         "mla: q_lora_rank must be at least 0, qk_nope_head_dim, qk_rope_head_dim and v_head_dim at least 1");
    need(m.num_query_groups == m.num_attention_heads, "mla needs num_query_groups = num_attention_heads (every head its own key and value)");
    need(t.tp == 1 || t.sequence_parallel,
         "mla with tensor_model_parallel_size > 1 needs sequence_parallel (Megatron-Core gathers the RoPE key over the sequence-parallel region)");
    need(m.attention_impl != AttentionImpl::unfused, "mla needs a fused attention kernel (attention_backend other than unfused)");
  }
  if (m.window_size > 0) {
    need(m.causal, "window_size needs a causal model");
    need(t.cp == 1, "window_size with context_parallel_size > 1 is not simulated (ring attention over a sliding window)");
    need(m.window_attn_pattern.empty() || static_cast<std::int64_t>(m.window_attn_pattern.size()) == m.num_layers,
         "window_attn_skip_freq as a list needs one entry per layer (num_layers)");
  }
  if (m.hybrid()) {
    for (auto& problem : hybrid_problems(m)) p.push_back(std::move(problem));
    if (m.hybrid_override_pattern.find('M') != std::string::npos && m.mamba.num_groups > 0 && m.mamba_heads() > 0) {
      // MambaMixer.__init__: "nheads must be evenly divisble by tp_size", "ngroups must be evenly divisible by tp_size".
      need(m.mamba_heads() % t.tp == 0, "mamba_num_heads must be divisible by tensor_model_parallel_size");
      need(m.mamba.num_groups % t.tp == 0, "mamba_num_groups must be divisible by tensor_model_parallel_size");
    }
    need(t.cp == 1, "hybrid_override_pattern with context_parallel_size > 1 is not simulated (Megatron's MambaContextParallel)");
    need(m.window_size == 0 && !m.mla.enabled() && m.mtp_num_layers == 0,
         "hybrid_override_pattern with window_size, mla or mtp_num_layers is not simulated");
    need(!t.finetune.active(), "hybrid_override_pattern with training.finetune (LoRA) is not simulated");
    need(!m.add_bias_linear, "hybrid_override_pattern with add_bias_linear is not simulated");
    need(t.pipeline_schedule != PipelineSchedule::zb_h1 && t.pipeline_schedule != PipelineSchedule::zbv &&
             t.pipeline_schedule != PipelineSchedule::dualpipev,
         "hybrid_override_pattern with a zero-bubble schedule (zb_h1, zbv, dualpipev) is not simulated");
  }
  need(m.attention_impl != AttentionImpl::unfused || t.cp == 1,
       "context_parallel_size > 1 needs a fused attention kernel (Megatron-Core's ring attention is Transformer "
       "Engine's); attention_backend \"unfused\" has none");
  need(t.seq_length % t.cp == 0, "seq_length must be divisible by context_parallel_size");
  need(!t.sequence_parallel || t.tp == 1 || (t.micro_batch_size * t.seq_length / t.cp) % t.tp == 0,
       "with sequence_parallel, micro_batch_size * seq_length / context_parallel_size must be divisible "
       "by tensor_model_parallel_size");
  need(t.global_batch_size % (t.micro_batch_size * t.dp) == 0,
       "global_batch_size must be divisible by micro_batch_size * data_parallel_size");
  need(t.zero_stage >= 0 && t.zero_stage <= 3, "zero_stage must be 0, 1, 2 or 3");
  if (m.num_moe_experts > 0) {
    need(m.moe_router_topk >= 1 && m.moe_router_topk <= m.num_moe_experts,
         "moe_router_topk must be between 1 and num_moe_experts");
    need(m.num_moe_experts % t.ep == 0, "num_moe_experts must be divisible by expert_model_parallel_size");
    need(t.etp >= 0, "expert_tensor_parallel_size must be at least 1");
    need(t.etp < 0 || (t.tp * t.cp * t.dp) % (t.ep * t.expert_tp()) == 0,
         "expert_model_parallel_size x expert_tensor_parallel_size must divide tensor x context x data-parallel "
         "sizes (the ranks the experts fold over)");
    need(t.etp < 0 || expert_ffn(m) % t.expert_tp() == 0, "moe_ffn_hidden_size must be divisible by expert_tensor_parallel_size");
    // TransformerEngine module/grouped_linear.py @ 71bbefb: "GroupedLinear doesn't support bias when TP > 1".
    need(!m.add_bias_linear || t.etp < 0 || t.expert_tp() == 1,
         "add_bias_linear with expert_tensor_parallel_size > 1: Transformer Engine's GroupedLinear has no bias under "
         "tensor parallelism (grouped_linear.py)");
    need(t.tp == 1 || t.sequence_parallel, "an MoE model with tensor_model_parallel_size > 1 needs sequence_parallel "
                                           "(Megatron-Core asserts it: the dispatcher routes each rank's sequence shard)");
    need(m.moe_shared_expert_intermediate_size % t.tp == 0,
         "moe_shared_expert_intermediate_size must be divisible by tensor_model_parallel_size");
    need(m.moe_layer_freq >= 1, "moe_layer_freq must be at least 1");
    need(m.moe_layer_pattern.empty() || static_cast<std::int64_t>(m.moe_layer_pattern.size()) == m.num_layers,
         "moe_layer_freq as a list needs one entry per layer (num_layers)");
  } else {
    need(t.ep == 1, "expert_model_parallel_size > 1 needs num_moe_experts > 0");
    need(t.etp == 0 || t.etp == t.tp, "expert_tensor_parallel_size needs num_moe_experts > 0");
    need(m.moe_shared_expert_intermediate_size == 0, "moe_shared_expert_intermediate_size needs num_moe_experts > 0");
  }
  return p;
}

// Per token, forward: 2 FLOPs per GEMM parameter it passes (QKV, out-proj, MLP / top-k experts and the
// router) plus attention 2 * 2 * s * (a d) (scores QK^T and context PV, counted in full even when causal,
// as Megatron does); backward is 2x forward. The LM head adds 2 h V forward. So
//   flops = B s [ 3 l (2 P_gemm + 4 s a d) + 6 h V ].
// For GPT-3 (a d = h, P_gemm = 12 h^2) this is Megatron's 72 B s l h^2 (1 + s / 6h + V / 12 l h);
// Megatron's generalised form (training.py, num_floating_point_operations) is the same with
// P_gemm = h^2 (2 + 2 g / a) + h f (2 or 3) k; the router (2 h E per token) is added here, which Megatron
// leaves out (< 0.1% for Mixtral).
// With kv_channels a d is the query projection size, not h (Megatron's query_projection_size). A
// sliding-window layer's queries see w' = min(w + 1, s) keys, not s: its attention term is 4 w' a d,
// counted in full the same way.
// AttentionFlops::causal keeps the pairs the mask keeps, per query on average: s / 2 for a causal layer,
// (s w' - w'^2 / 2) / s for a window of w' keys (attention_pairs above), s for a non-causal model.
double model_flops_per_step(const ModelConfig& m, const TrainingConfig& t, AttentionFlops attention) {
  const double s = d(t.seq_length);
  const double ad = d(m.query_projection_size());
  const bool causal = attention == AttentionFlops::causal && m.causal;
  double gemm_params = 0;     // sum over layers of the GEMM parameters one token passes
  double attention_keys = 0;  // sum over layers of the keys one query sees
  double mamba_fwd = 0;       // sum over Mamba layers of their forward FLOPs per token
  for (std::int64_t l = 0; l < m.num_layers; ++l) {
    const LayerKind kind = layer_kind(m, l);
    if (kind == LayerKind::mamba) {
      mamba_fwd += 2.0 * mamba_gemm_params(m) + mamba_scan_flops_per_token(m);
      continue;
    }
    if (kind == LayerKind::mlp) {
      gemm_params += mlp_params_per_token(m, is_moe_layer(m, l));
      continue;
    }
    gemm_params += attention_gemm_params(m) + (kind == LayerKind::transformer ? mlp_params_per_token(m, is_moe_layer(m, l)) : 0.0);
    const bool window = is_window_attention_layer(m, l);
    const double w = d(window_keys(m, t));
    if (!causal) {
      attention_keys += window ? w : s;
    } else {
      attention_keys += window ? (s * w - w * w / 2.0) / s : s / 2.0;
    }
  }
  // MLA: the score GEMM is d_qk and the context GEMM d_v per pair and head (4 a d is the case d_qk = d_v).
  const double blocks_fwd = m.mla.enabled()
                                ? 2.0 * gemm_params + 2.0 * attention_keys * d(m.num_attention_heads) * d(m.mla.qk_head_dim() + m.mla.v_head_dim)
                                : 2.0 * gemm_params + 4.0 * attention_keys * ad;
  const double layers_fwd = blocks_fwd + mamba_fwd;
  const double head_fwd = 2.0 * d(m.hidden_size) * d(m.vocab_size);
  if (m.mtp_num_layers > 0) {
    // Each multi-token-prediction module: its layer (of the last layer's kind, full attention), eh_proj
    // (2h x h) and one more pass through the LM head, as Megatron-LM's num_floating_point_operations counts
    // mtp_num_layers.
    const double h = d(m.hidden_size);
    const double keys = causal && m.causal ? s / 2.0 : s;
    const double attention_core = m.mla.enabled() ? 2.0 * keys * d(m.num_attention_heads) * d(m.mla.qk_head_dim() + m.mla.v_head_dim)
                                                  : 4.0 * keys * ad;
    const double module_fwd = 2.0 * (attention_gemm_params(m) + mlp_params_per_token(m, is_moe_layer(m, m.num_layers - 1)) + 2.0 * h * h) +
                              attention_core + head_fwd;
    return d(t.global_batch_size) * s * (3.0 * layers_fwd + 3.0 * head_fwd + 3.0 * d(m.mtp_num_layers) * module_fwd);
  }
  return d(t.global_batch_size) * s * (3.0 * layers_fwd + 3.0 * head_fwd);
}

// fp8 training (Transformer Engine): a GEMM in fp8 needs its operands in fp8. Activations are quantized
// on the fly by a cast kernel that reads the bf16 tensor (2 bytes per element) and writes the fp8 copy
// (1 byte): the forward input of a GEMM, and in backward the output gradient feeding dgrad. Each of the
// two is also read by wgrad, column-wise; on Hopper an FP8 GEMM reads only row-wise, so the same kernel
// writes a transposed fp8 copy as well (1 more byte), which wgrad uses, so wgrad needs no cast of its
// own: 2 + 1 + 1 = 4 bytes per element (NVIDIA/TransformerEngine @ d0067d0 module/linear.py
// _Linear.forward: the input quantizer asked for row-wise and column-wise usage in one call, the
// row-wise data dropped after the forward GEMM; TE 1.x's fp8_cast_transpose_fused wrote both too). On
// Blackwell one copy serves both (2 + 1 = 3; TE docs, features/low_precision_training/
// performance_considerations: "Hopper: ... columnwise tensors need to be physically transposed in
// memory", "Blackwell: supports columnwise access natively").
// Weights are cast once per step (TE caches them across micro-batches), which we neglect. Memory bound,
// these kernels are a large part of what keeps fp8 training from doubling bf16's speed.
void add_quantize_casts(std::vector<Op>& ops, const TrainingConfig& t) {
  const double bytes_per_element = quantize_bytes_per_element(t.effective_recipe(), t.fp8_transposed_copy);
  const bool fp4 = t.precision == Dtype::fp4;
  std::vector<Op> out;
  out.reserve(ops.size() * 2);
  for (Op& op : ops) {
    const bool is_wgrad = op.name.size() > 6 && op.name.compare(op.name.size() - 6, 6, "_wgrad") == 0;
    if (op.kind == OpKind::gemm && (op.dtype == Dtype::fp8 || op.dtype == Dtype::fp4) && !is_wgrad) {
      Op cast = mem(op.name + (fp4 ? "_fp4_cast" : "_fp8_cast"), MemOpKind::elementwise, bytes_per_element * d(op.gemm.m) * d(op.gemm.k));
      cast.repeat = op.repeat;
      cast.role = op.role;
      cast.host_issued = op.host_issued;
      // A sequence-parallel all-gather in front of the GEMM goes after the cast: TE quantizes before it
      // gathers (forward: the norm writes its output in fp8, _apply_normalization, and the userbuffers
      // all-gather of that fp8 output is pipelined with the GEMM; backward: grad_output_preprocess casts
      // the output gradient before the input's all-gather is issued, async or bulk-overlapped with dgrad;
      // NVIDIA/TransformerEngine 0004dbd0, module/layernorm_linear.py). So the gather meets its GEMM, as
      // the tensor-parallel overlap expects (step_builder.cpp run_ops), instead of a cast in between.
      const bool gather_before = !out.empty() && out.back().kind == OpKind::collective && out.back().group == ProcessGroup::tp &&
                                 out.back().collective == CollectiveKind::all_gather;
      out.insert(gather_before ? out.end() - 1 : out.end(), std::move(cast));
    }
    out.push_back(std::move(op));
  }
  ops = std::move(out);
}

// A layer's op lists made whole: the precision recipe's quantize casts in both passes, and what is not a
// recompute in the backward list marked as the backward pass proper.
LayerOps finished_layer(LayerOps ops, const TrainingConfig& t) {
  add_quantize_casts(ops.forward, t);
  add_quantize_casts(ops.backward, t);
  mark_backward(ops);
  return ops;
}

Dtype gemm_dtype_of(PrecisionRecipe r) {
  switch (r) {
    case PrecisionRecipe::bf16: return Dtype::bf16;
    case PrecisionRecipe::fp16: return Dtype::fp16;
    case PrecisionRecipe::nvfp4: return Dtype::fp4;
    case PrecisionRecipe::fp8:
    case PrecisionRecipe::fp8_delayed:
    case PrecisionRecipe::fp8_current:
    case PrecisionRecipe::fp8_blockwise:
    case PrecisionRecipe::mxfp8: return Dtype::fp8;
  }
  return Dtype::bf16;
}

// Per element of a GEMM input (bf16, 2 bytes, read once by the quantize kernel), the copies written:
//  - per-tensor FP8 (fp8, fp8_delayed): the FP8 copy (1 byte), and on Hopper its transpose (1 more):
//    2 + 1 (+ 1). fp8_current reads the tensor once more for its amax before the cast (TE's
//    Float8CurrentScalingQuantizer: an amax reduction, then the scaled cast): + 2.
//  - fp8_blockwise: both copies on every GPU (1 + 1) and a 4-byte FP32 scale per 128 elements of each
//    (1x128 tiles; DeepSeek-V3 report sec. 3.3.2 and TE Float8BlockScaling): 2 + 2 + 2 x 4/128.
//  - mxfp8: both copies (1 + 1) and a 1-byte E8M0 scale per 32 elements of each (OCP MX spec v1.0,
//    TE MXFP8BlockScaling): 2 + 2 + 2 x 1/32.
//  - nvfp4: an amax pass for the per-tensor FP32 scale (2), the read (2), both FP4 copies (0.5 + 0.5) and
//    a 1-byte E4M3 scale per 16 elements of each (TE NVFP4BlockScaling; NVIDIA, "Pretraining LLMs with
//    NVFP4", arXiv:2509.25149, sec. 2): 2 + 2 + 1 + 2 x 1/16. The random Hadamard transform of wgrad's
//    inputs is fused into the same kernel.
double quantize_bytes_per_element(PrecisionRecipe r, bool transposed_copy) {
  const double per_tensor = transposed_copy ? 4.0 : 3.0;
  switch (r) {
    case PrecisionRecipe::bf16:
    case PrecisionRecipe::fp16: return 0.0;
    case PrecisionRecipe::fp8:
    case PrecisionRecipe::fp8_delayed: return per_tensor;
    case PrecisionRecipe::fp8_current: return per_tensor + 2.0;
    case PrecisionRecipe::fp8_blockwise: return 4.0 + 2.0 * 4.0 / 128.0;
    case PrecisionRecipe::mxfp8: return 4.0 + 2.0 / 32.0;
    case PrecisionRecipe::nvfp4: return 5.0 + 2.0 / 16.0;
  }
  return 0.0;
}

// The column-wise copy with its scales (see quantize_bytes_per_element): per-tensor FP8 1 byte;
// blockwise 1 + 4/128; MXFP8 1 + 1/32; NVFP4 0.5 + 1/16.
double saved_gemm_input_bytes(PrecisionRecipe r) {
  switch (r) {
    case PrecisionRecipe::bf16:
    case PrecisionRecipe::fp16: return 2.0;
    case PrecisionRecipe::fp8:
    case PrecisionRecipe::fp8_delayed:
    case PrecisionRecipe::fp8_current: return 1.0;
    case PrecisionRecipe::fp8_blockwise: return 1.0 + 4.0 / 128.0;
    case PrecisionRecipe::mxfp8: return 1.0 + 1.0 / 32.0;
    case PrecisionRecipe::nvfp4: return 0.5 + 1.0 / 16.0;
  }
  return 2.0;
}

PositionEmbedding position_embedding(const ModelConfig& m) {
  if (m.position_embedding_type) return *m.position_embedding_type;
  if (m.max_position_embeddings > 0) return PositionEmbedding::learned_absolute;
  return m.activation == Activation::swiglu ? PositionEmbedding::rope : PositionEmbedding::learned_absolute;
}

std::string_view to_string(PositionEmbedding p) {
  switch (p) {
    case PositionEmbedding::rope: return "rope";
    case PositionEmbedding::learned_absolute: return "learned_absolute";
    case PositionEmbedding::none: return "none";
  }
  return "?";
}

namespace {

// One Mamba-2 mixer layer of a hybrid model (ModelConfig::hybrid_override_pattern 'M'), as Megatron-Core's
// MambaLayer runs it in training (megatron/core/ssm/mamba_layer.py and mamba_mixer.py @ NVIDIA/Megatron-LM
// d98e8a64, MambaMixer.forward -> _ssm_training): the pre-norm, in_proj (column-parallel; with SP the
// sequence shards all-gathered first), mamba_split_conv1d_scan_combined (mamba_ssm's fused causal conv1d +
// SSD scan, chunk_size Q = 128), the gated RMSNorm, out_proj (row-parallel, its TP all-reduce or
// reduce-scatter after, like attention's out-projection) and the residual add. Per rank with TP t: heads
// H' = H / t, groups G' = G / t, d_inner' = H' P, the conv's channels c' = d_inner' + 2 G' N.
// The SSD scan as its kernels run it (Dao and Gu 2024, arXiv:2405.21060, sec. 6 "the SSD algorithm";
// mamba_ssm ops/triton ssd_combined.py _mamba_chunk_scan_combined_fwd), over b (s / Q) chunks of Q tokens:
//   chunk_cumsum   dt' = softplus(dt + dt_bias), dA = cumsum(A dt') per chunk: memory-bound, reads dt (2 B)
//                  and writes dt' and dA in fp32 (8 B) per token and head;
//   bmm_chunk      CB = C B^T per chunk and group: a batched GEMM [Q, N] x [N, Q], b (s/Q) G' of them;
//   chunk_state    each chunk's final state, B^T (decay x) per head: batched GEMM [N, Q] x [Q, P];
//   state_passing  the recurrence over chunks, per head an N x P fp32 state read and written (memory-bound);
//   chunk_scan     Y = C state (batched GEMM [Q, N] x [N, P]) + (L o CB) x ([Q, Q] x [Q, P], causal: the
//                  kernel skips the blocks above the diagonal, so half of it), with D x and the z gate in
//                  its epilogue (reads x and z, writes y and the un-gated y it saves: 4 x T d_inner' x 2 B).
// So the forward scan is 2 G' Q N + 4 H' N P + H' Q P FLOPs per token (mamba_scan_flops_per_token). The
// backward is mamba_ssm's, kernel by kernel (below): the conv and the forward's chunk states re-run, then
// about 2.5x the forward's batched-GEMM FLOPs, then the conv's own backward (reads the gradient and the
// input, writes the input gradient). What it ignores: the conv and dt/A/D weight gradients' reductions (a
// few channels), the rstd of the norm, the packing of zxBCdt's slices.
// Selective recompute re-runs nothing here (Megatron's recompute_modules name attention and MLP parts);
// full recompute re-runs the whole layer as for a transformer layer.
LayerOps mamba_layer_ops(const ModelConfig& m, const TrainingConfig& t) {
  const Dims x = dims(m, t);
  const MambaConfig& c = m.mamba;
  const std::int64_t heads = m.mamba_heads() / x.t, groups = c.num_groups / x.t;
  const std::int64_t P = c.head_dim, N = c.state_dim, Q = c.chunk_size;
  const std::int64_t d_in = heads * P, conv_ch = d_in + 2 * groups * N;
  const std::int64_t chunks = t.micro_batch_size * ((t.seq_length / t.cp + Q - 1) / Q);
  const bool hidden_dropout = m.hidden_dropout > 0;
  const double T = d(x.T);
  LayerOps ops;
  auto& f = ops.forward;
  auto& b = ops.backward;
  f.push_back(norm_fwd("ln1", x));
  if (x.sp) f.push_back(coll("ag_mamba", CollectiveKind::all_gather, ProcessGroup::tp, hidden_bytes(x)));
  const Op in_proj = gemm("in_proj", x.T, 2 * d_in + 2 * groups * N + heads, x.h, x.gemm_dtype);
  f.push_back(in_proj);
  // The causal depthwise conv over the xBC channels, then SiLU: reads and writes T x c' (2 K FLOPs each).
  const Op conv = mem("mamba_conv1d", MemOpKind::elementwise, 2.0 * T * d(conv_ch) * kActBytes, 2.0 * d(c.conv_kernel) * T * d(conv_ch));
  f.push_back(conv);
  const Op cumsum = mem("ssd_chunk_cumsum", MemOpKind::elementwise, T * d(heads) * (kActBytes + 8.0), 4.0 * T * d(heads));
  f.push_back(cumsum);
  const Op cb = bmm("ssd_bmm_chunk", chunks * groups, Q, Q, N);
  const Op state = bmm("ssd_chunk_state", chunks * heads, N, P, Q);
  const double state_bytes = d(chunks) * d(heads) * d(N) * d(P) * 4.0;  // fp32 states
  const Op passing = mem("ssd_state_passing", MemOpKind::elementwise, 2.0 * state_bytes, 2.0 * d(chunks) * d(heads) * d(N) * d(P));
  const Op scan_off = bmm("ssd_chunk_scan_states", chunks * heads, Q, P, N);
  Op scan_diag = bmm("ssd_chunk_scan_diag", chunks * heads, Q, P, Q);
  scan_diag.flops /= 2.0;  // causal within the chunk
  const Op gate = mem("ssd_gate_skip", MemOpKind::elementwise, 4.0 * T * d(d_in) * kActBytes, 3.0 * T * d(d_in));
  for (const Op& op : {state, passing, cb, scan_off, scan_diag, gate}) f.push_back(op);  // _mamba_chunk_scan_combined_fwd's order
  // The gated RMSNorm over d_inner' (ExtendedRMSNorm on the gated output).
  f.push_back(mem("mamba_norm", MemOpKind::norm, 2.0 * T * d(d_in) * kActBytes));
  const Op out_proj = gemm("out_proj", x.T, x.h, d_in, x.gemm_dtype);
  f.push_back(out_proj);
  row_parallel_fwd_coll(x, "_mamba", f);
  f.push_back(residual("add1", x, hidden_dropout));

  if (t.recompute == Recompute::full)
    for (const auto& op : ops.forward) b.push_back(recomputed(op));
  b.push_back(residual("add1_bwd", x, hidden_dropout));
  row_parallel_bwd_coll(x, "_mamba", b);
  b.push_back(dgrad(out_proj));
  b.push_back(wgrad(out_proj));
  b.push_back(mem("mamba_norm_bwd", MemOpKind::norm, 3.0 * T * d(d_in) * kActBytes));
  // mamba_ssm's backward (MambaSplitConv1dScanCombinedFn.backward -> _mamba_chunk_scan_combined_bwd,
  // mamba_ssm/ops/triton/ssd_combined.py @ state-spaces/mamba e9594ce1): the conv re-run; the forward's
  // cumsum, CB, chunk states and state passing re-run (they are not saved); _chunk_scan_bwd_dz (reads x, z,
  // the output and its gradient, writes dz and the un-gated gradient); then per chunk and head (group for
  // CB) the batched GEMMs dstates = C^T dY [N, Q] x [Q, P], the states' backward recurrence, dx = (L o CB)^T dY
  // [Q, Q] x [Q, P] (causal: half) + B dstates [Q, N] x [N, P], dB = x dstates^T [Q, P] x [P, N], dC = dY
  // states^T [Q, P] x [P, N], dCB = dY x^T [Q, P] x [P, Q] (causal: half), its two products back to dB and
  // dC per group [Q, Q] x [Q, N], and ddA from dY, x and CB [Q, P] x [P, Q] (causal: half).
  Op conv_again = conv;
  conv_again.name = "mamba_conv1d_again";
  b.push_back(conv_again);
  for (const Op& op : {cumsum, cb, state, passing}) {
    Op again = op;
    again.name += "_again";
    b.push_back(again);
  }
  b.push_back(mem("ssd_bwd_dz", MemOpKind::elementwise, 6.0 * T * d(d_in) * kActBytes, 4.0 * T * d(d_in)));
  const auto half = [](Op op) {
    op.flops /= 2.0;
    return op;
  };
  b.push_back(bmm("ssd_bwd_dstates", chunks * heads, N, P, Q));
  b.push_back(mem("ssd_state_passing_bwd", MemOpKind::elementwise, 3.0 * state_bytes, 2.0 * d(chunks) * d(heads) * d(N) * d(P)));
  b.push_back(half(bmm("ssd_bwd_dx_diag", chunks * heads, Q, P, Q)));
  b.push_back(bmm("ssd_bwd_dx_states", chunks * heads, Q, P, N));
  b.push_back(bmm("ssd_bwd_db", chunks * heads, Q, N, P));
  b.push_back(bmm("ssd_bwd_dc", chunks * heads, Q, N, P));
  b.push_back(half(bmm("ssd_bwd_dcb", chunks * heads, Q, Q, P)));
  b.push_back(bmm("ssd_bmm_chunk_bwd_b", chunks * groups, Q, N, Q));
  b.push_back(bmm("ssd_bmm_chunk_bwd_c", chunks * groups, Q, N, Q));
  b.push_back(half(bmm("ssd_bwd_ddacs", chunks * heads, Q, Q, P)));
  b.push_back(mem("ssd_chunk_cumsum_bwd", MemOpKind::elementwise, T * d(heads) * (2.0 * kActBytes + 8.0), 4.0 * T * d(heads)));
  b.push_back(mem("mamba_conv1d_bwd", MemOpKind::elementwise, 3.0 * T * d(conv_ch) * kActBytes, 4.0 * d(c.conv_kernel) * T * d(conv_ch)));
  column_parallel_bwd(in_proj, x, "_mamba", b);
  b.push_back(norm_bwd("ln1_bwd", x));
  return finished_layer(std::move(ops), t);
}

}  // namespace

Op ring_attention_round(const Op& attention, int cp) {
  Op round = attention;
  round.flops = attention.flops / cp;
  round.bytes = attention.bytes / cp;
  round.attention.seq_kv = attention.attention.seq_kv / cp;
  return round;
}

double ring_hop_bytes(const Op& kv_exchange, int cp) { return kv_exchange.comm_bytes / (cp - 1); }

LayerOps transformer_layer_ops(const ModelConfig& m, const TrainingConfig& t, bool window_attention, bool moe_layer, LayerKind kind) {
  return transformer_layer_ops(m, t, LayerVariant{kind, moe_layer, window_attention});
}

LayerOps transformer_layer_ops(const ModelConfig& m, const TrainingConfig& t, const LayerVariant& v) {
  check_layout(m, t);
  if (v.kind == LayerKind::mamba) return mamba_layer_ops(m, t);
  // A hybrid model's attention-only ('*') and MLP-only ('-', 'E') layers: the transformer layer's one block,
  // with its own norm and residual.
  const bool with_attention = v.kind != LayerKind::mlp, with_mlp = v.kind != LayerKind::attention;
  const bool moe = m.num_moe_experts > 0 && v.moe;
  const bool window = v.window && m.window_size > 0;
  const Dims x = dims(m, t);
  const AttentionShape as = attention_shape(m, t, x, window);
  const bool unfused = m.attention_impl == AttentionImpl::unfused;
  const UnfusedShape us = unfused_shape(as, t);
  const bool attention_dropout = m.attention_dropout > 0, hidden_dropout = m.hidden_dropout > 0;
  LayerOps ops;
  auto& f = ops.forward;

  // Attention block, forward.
  const bool mla = m.mla.enabled();
  const bool rotary = position_embedding(m) == PositionEmbedding::rope;
  Op qkv, proj;
  std::vector<Op> mla_bwd;       // MLA: its projections' backward (mla_projection_ops)
  std::vector<Op> mla_up_again;  // and what recompute_modules "mla_up_proj" re-runs
  // Ring attention (cp > 1): each rank passes its K and V chunk around the ring, cp - 1 hops (MLA: the
  // per-head K and V after the up-projection, d_qk + d_v wide).
  const double kv_chunk_bytes = mla ? d(x.T) * d(x.hq) * d(m.mla.qk_head_dim() + m.mla.v_head_dim) * kActBytes
                                    : 2.0 * d(x.T) * d(x.hkv) * d(x.dh) * kActBytes;
  if (with_attention) {
    f.push_back(norm_fwd("ln1", x));
    if (mla) {
      mla_projection_ops(m, t, x, f, mla_bwd, mla_up_again);
    } else {
      if (x.sp) f.push_back(coll("ag_attn", CollectiveKind::all_gather, ProcessGroup::tp, hidden_bytes(x)));
      qkv = gemm("qkv", x.T, (x.hq + 2 * x.hkv) * x.dh, x.h, x.gemm_dtype);
      f.push_back(qkv);
      if (rotary) rope_ops("rope", m, t, x, false, f);
    }
    if (t.cp > 1) {
      f.push_back(coll("cp_kv", CollectiveKind::send_recv, ProcessGroup::cp, d(t.cp - 1) * kv_chunk_bytes));
    }
    if (unfused) unfused_attention_fwd("attn", us, attention_dropout, f);
    else f.push_back(attention_fwd("attn", as, window));
    proj = gemm("proj", x.T, x.h, mla ? x.hq * m.mla.v_head_dim : x.hq * x.dh, x.gemm_dtype);
    f.push_back(proj);
    row_parallel_fwd_coll(x, "_attn", f);
    f.push_back(residual("add1", x, hidden_dropout));
  }

  // MLP block, forward (backward collected alongside). A dense MLP with its TP collectives; an MoE MLP
  // moves its own tokens (moe_mlp_ops), with no TP collective around it.
  std::vector<Op> mlp_bwd;
  std::vector<Op> mlp_again;  // recompute_modules "mlp" (dense MLPs): the MLP's kernels, re-run in backward
  if (with_mlp) {
    f.push_back(norm_fwd("ln2", x));
    std::vector<Op> mlp_fwd;
    if (moe) moe_mlp_ops(m, t, x, mlp_fwd, mlp_bwd);
    else tp_mlp_ops(m, x, "", "_mlp", m.ffn_hidden_size, mlp_fwd, mlp_bwd);
    const bool selective = t.recompute == Recompute::selective;
    if (selective && t.recompute_modules.mlp && !moe)
      for (const auto& op : mlp_fwd)
        if (op.kind != OpKind::collective) mlp_again.push_back(recomputed(op));
    for (auto& op : mlp_fwd) f.push_back(std::move(op));
    f.push_back(residual("add2", x, hidden_dropout));
  }
  const bool recompute_norms = t.recompute == Recompute::selective && t.recompute_modules.layernorm;

  auto& b = ops.backward;
  if (t.recompute == Recompute::full) {
    for (const auto& op : ops.forward) b.push_back(recomputed(op));
  }

  // MLP block, backward: first re-run what recompute_modules discarded (the norm output FC1's wgrad
  // needs; the MLP's own forward).
  if (with_mlp) {
    b.push_back(residual("add2_bwd", x, hidden_dropout));
    if (recompute_norms) b.push_back(recomputed(norm_fwd("ln2", x)));
    for (auto& op : mlp_again) b.push_back(std::move(op));
    for (auto& op : mlp_bwd) b.push_back(std::move(op));
    b.push_back(norm_bwd("ln2_bwd", x));
  }

  // Attention block, backward.
  if (with_attention) {
    b.push_back(residual("add1_bwd", x, hidden_dropout));
    if (recompute_norms) b.push_back(recomputed(norm_fwd("ln1", x)));
    row_parallel_bwd_coll(x, "_attn", b);
    b.push_back(dgrad(proj));
    b.push_back(wgrad(proj));
    // MLA's Q, K, V re-made before anything in the attention's backward needs them.
    if (mla && t.recompute == Recompute::selective && t.recompute_modules.mla_up_proj)
      for (const auto& op : mla_up_again) b.push_back(recomputed(op));
    if (t.recompute == Recompute::selective && t.recompute_modules.core_attn) {
      // Re-running ring attention re-runs its KV exchange (Megatron checkpoints TE's core attention,
      // communication included).
      if (t.cp > 1) {
        b.push_back(recomputed(coll("cp_kv", CollectiveKind::send_recv, ProcessGroup::cp, d(t.cp - 1) * kv_chunk_bytes)));
      }
      std::vector<Op> attn;
      if (unfused) unfused_attention_fwd("attn", us, attention_dropout, attn);
      else attn.push_back(attention_fwd("attn", as, window));
      for (const auto& op : attn) b.push_back(recomputed(op));
    }
    if (t.cp > 1) {
      // Backward passes K, V around the ring again and their gradients back: twice the forward traffic.
      b.push_back(coll("cp_kv_bwd", CollectiveKind::send_recv, ProcessGroup::cp, 2.0 * d(t.cp - 1) * kv_chunk_bytes));
    }
    if (unfused) unfused_attention_bwd("attn_bwd", us, attention_dropout, b);
    else b.push_back(attention_bwd("attn_bwd", as, window));
    if (mla) {
      for (auto& op : mla_bwd) b.push_back(std::move(op));
    } else {
      if (rotary) rope_ops("rope_bwd", m, t, x, true, b);
      column_parallel_bwd(qkv, x, "_attn", b);
    }
    b.push_back(norm_bwd("ln1_bwd", x));
  }
  return finished_layer(std::move(ops), t);
}

// Vocab-parallel embedding (Megatron): each TP rank looks up the rows of its vocabulary shard (zeros for
// the others) and an all-reduce (reduce-scatter with SP) sums them. Backward: with SP, all-gather the
// output gradient; then scatter-add into the embedding gradient. Learned positions add one more lookup.
LayerOps embedding_ops(const ModelConfig& m, const TrainingConfig& t) {
  check_layout(m, t);
  const Dims x = dims(m, t);
  LayerOps ops;
  const double positions = position_embedding(m) == PositionEmbedding::learned_absolute ? 1.0 : 0.0;
  // Reads T rows (bf16) and the token ids (int64), writes T x h; learned positions read and add another.
  const double lookup_bytes = (2.0 + 2.0 * positions) * hidden_bytes(x) + d(x.T) * 8.0;
  ops.forward.push_back(mem("embed", MemOpKind::embedding, lookup_bytes));
  row_parallel_fwd_coll(x, "_embed", ops.forward);
  row_parallel_bwd_coll(x, "_embed", ops.backward);
  // Scatter-add: reads dY and the token ids, read-modify-writes T gradient rows (positions likewise).
  const double scatter_bytes = (3.0 + 3.0 * positions) * hidden_bytes(x) + d(x.T) * 8.0;
  ops.backward.push_back(mem("embed_bwd", MemOpKind::embedding, scatter_bytes));
  mark_backward(ops);
  return ops;
}

// Final norm, logits GEMM [T, h] x [h, V/t], vocab-parallel cross-entropy (Megatron: all-reduces of the
// per-token max, the target logit and the sum of exponentials over the TP group, fp32 each), and back.
// Cross-entropy bytes: read the bf16 logits and write fp32 (6 B / element), then read and write the fp32
// softmax in place (8 B): 14 B per logit; the fp32 softmax is kept for backward. Backward reads it and
// writes the bf16 logit gradient (6 B).
namespace {

// The output layer and its loss on a final norm's output (`prefix` names the ops: "" for the main model's,
// "mtpK_" for multi-token-prediction module K's pass through the same shared weights).
void head_and_loss_ops(const ModelConfig& m, const TrainingConfig& t, const Dims& x, const std::string& prefix, std::vector<Op>& f,
                       std::vector<Op>& b) {
  const std::int64_t v = padded_vocab_size(m, t.tp) / t.tp;
  const double logits = d(x.T) * d(v);
  if (x.sp) f.push_back(coll(prefix + "ag_head", CollectiveKind::all_gather, ProcessGroup::tp, hidden_bytes(x)));
  // bf16 even in fp8 training: Megatron-Core's output layer is tensor_parallel.ColumnParallelLinear, a
  // plain matmul outside Transformer Engine's fp8 autocast (megatron/core/models/gpt/gpt_model.py), and
  // NeMo and Megatron-Bridge keep it so; TE's fp8 recipes leave the LM head in higher precision.
  const Op head = gemm(prefix + "logits", x.T, v, x.h, Dtype::bf16);
  f.push_back(head);
  f.push_back(mem(prefix + "cross_entropy", MemOpKind::cross_entropy, 14.0 * logits));
  if (x.t > 1) {
    for (const char* name : {"ar_ce_max", "ar_ce_target", "ar_ce_sum"}) {
      f.push_back(coll(prefix + name, CollectiveKind::all_reduce, ProcessGroup::tp, d(x.T) * 4.0));
    }
  }
  b.push_back(mem(prefix + "cross_entropy_bwd", MemOpKind::cross_entropy, 6.0 * logits));
  column_parallel_bwd(head, x, "_" + prefix + "head", b);
}

// Multi-token-prediction module `k` (1-based; ModelConfig::mtp_num_layers), as MultiTokenPredictionLayer
// runs it (megatron/core/transformer/multi_token_prediction.py @ NVIDIA/Megatron-LM 13f8f526): the
// embedding of the input shifted by k (the vocab-parallel lookup and its TP reduction, as embedding_ops),
// enorm and hnorm, their concatenation (a copy: reads 2, writes 2 T h), eh_proj [T, 2h] x [2h, h / t]
// (column-parallel, gather_output False: with SP the 2h-wide input is all-gathered first, and the output is
// all-gathered over TP back to h), one transformer layer of the model's last-layer kind, its final norm,
// then the shared output layer and a loss of its own. Forward into `f`, backward (in backward order) into
// `b`. eh_proj runs in bf16 here whatever the recipe (its FP8 casts are not counted).
void mtp_module_ops(const ModelConfig& m, const TrainingConfig& t, const Dims& x, std::int64_t k, std::vector<Op>& f,
                    std::vector<Op>& b) {
  const std::string p = "mtp" + std::to_string(k) + "_";
  const auto prefixed = [&](Op op) {
    op.name = p + op.name;
    return op;
  };
  f.push_back(mem(p + "embed", MemOpKind::embedding, 2.0 * hidden_bytes(x) + d(x.T) * 8.0));
  row_parallel_fwd_coll(x, "_" + p + "embed", f);
  f.push_back(norm_fwd(p + "enorm", x));
  f.push_back(norm_fwd(p + "hnorm", x));
  const double cat_bytes = 4.0 * d(x.Tn) * d(x.h) * kActBytes;
  f.push_back(mem(p + "cat", MemOpKind::copy, cat_bytes));
  if (x.sp) f.push_back(coll("ag_" + p + "eh", CollectiveKind::all_gather, ProcessGroup::tp, 2.0 * hidden_bytes(x)));
  const Op eh = gemm(p + "eh_proj", x.T, x.h / x.t, 2 * x.h, Dtype::bf16);
  f.push_back(eh);
  if (x.t > 1) f.push_back(coll("ag_" + p + "eh_out", CollectiveKind::all_gather, ProcessGroup::tp, hidden_bytes(x)));
  const LayerOps layer = transformer_layer_ops(m, t, false, is_moe_layer(m, m.num_layers - 1));
  for (const Op& op : layer.forward) f.push_back(prefixed(op));
  f.push_back(norm_fwd(p + "ln_f", x));
  std::vector<Op> head_bwd;
  head_and_loss_ops(m, t, x, p, f, head_bwd);
  for (auto& op : head_bwd) b.push_back(std::move(op));
  b.push_back(norm_bwd(p + "ln_f_bwd", x));
  for (const Op& op : layer.backward) b.push_back(prefixed(op));
  // eh_proj's backward as a column-parallel GEMM's with its 2h-wide input (the output gather's backward is
  // a split, no communication).
  if (x.sp) b.push_back(coll("ag_" + p + "eh_bwd", CollectiveKind::all_gather, ProcessGroup::tp, 2.0 * hidden_bytes(x)));
  b.push_back(dgrad(eh));
  if (x.t > 1)
    b.push_back(coll((x.sp ? "rs_" : "ar_") + p + "eh_bwd", x.sp ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce,
                     ProcessGroup::tp, 2.0 * hidden_bytes(x)));
  b.push_back(wgrad(eh));
  b.push_back(norm_bwd(p + "enorm_bwd", x));
  b.push_back(norm_bwd(p + "hnorm_bwd", x));
  row_parallel_bwd_coll(x, "_" + p + "embed", b);
  b.push_back(mem(p + "embed_bwd", MemOpKind::embedding, 3.0 * hidden_bytes(x) + d(x.T) * 8.0));
}

}  // namespace

LayerOps lm_head_ops(const ModelConfig& m, const TrainingConfig& t) {
  check_layout(m, t);
  const Dims x = dims(m, t);
  LayerOps ops;
  auto& f = ops.forward;
  auto& b = ops.backward;
  // Multi-token prediction: its modules run on the decoder's output before the main model's final norm
  // and head; their backward after the main head's.
  std::vector<Op> mtp_bwd;
  for (std::int64_t k = 1; k <= m.mtp_num_layers; ++k) mtp_module_ops(m, t, x, k, f, mtp_bwd);
  f.push_back(norm_fwd("ln_f", x));
  head_and_loss_ops(m, t, x, "", f, b);
  b.push_back(norm_bwd("ln_f_bwd", x));
  for (auto& op : mtp_bwd) b.push_back(std::move(op));
  mark_backward(ops);
  return ops;
}

// Fused AdamW over fp32 master weights: reads master weight, m, v (12 B) and the gradient, writes master
// weight, m, v (12 B) and the bf16 model weight. With the fp32 gradient of PyTorch's fused Adam on fp32
// params that is 12 + 4 + 12 = 28 B per parameter — the traffic of the calibration file's
// adamw_fused_fp32 kernel (1879048192 B for 67108864 params) — so the op uses 28 B; bf16 grad in and bf16
// weight out (2 + 2) is the same total. About 12 FLOPs per parameter (moments, bias correction, sqrt,
// divide, decay), irrelevant next to the bytes.
Op optimizer_op(double params_on_rank) {
  CS_CHECK(params_on_rank >= 0);
  Op op;
  op.name = "optimizer";
  op.kind = OpKind::optimizer;
  op.role = OpRole::optimizer;
  op.dtype = Dtype::fp32;
  op.mem_kind = MemOpKind::optimizer;
  op.bytes = 28.0 * params_on_rank;
  op.flops = 12.0 * params_on_rank;
  return op;
}

Op tensor_list_copies_op(double partition_bytes, int world_size) {
  CS_CHECK(partition_bytes >= 0 && world_size >= 1);
  Op op = mem("tensor_list_copy", MemOpKind::copy, 2.0 * partition_bytes);
  op.repeat = world_size;
  return op;
}

Op grad_accumulation_op(double params, const TrainingConfig& t) {
  CS_CHECK(params >= 0);
  const double fresh = 2.0;  // the micro-batch's gradient, in the model's bf16 / fp16
  const double buffer = element_bytes(t.main_grads_dtype);
  double per_param = 0;
  switch (t.grad_accumulation) {
    case GradAccumulation::fused: per_param = 0; break;
    case GradAccumulation::accumulate_grad: per_param = 3.0 * fresh; break;
    case GradAccumulation::main_grad_add: per_param = fresh + 2.0 * buffer; break;
    case GradAccumulation::cast_add: per_param = fresh + 4.0 * buffer; break;
  }
  Op op = mem("grad_accumulation", MemOpKind::elementwise, per_param * params, t.grad_accumulation == GradAccumulation::fused ? 0 : params);
  op.dtype = t.grad_accumulation == GradAccumulation::accumulate_grad ? Dtype::bf16 : t.main_grads_dtype;
  return op;
}

bool grad_accumulation_applies(const TrainingConfig& t, std::int64_t mb) {
  switch (t.grad_accumulation) {
    case GradAccumulation::fused: return false;
    case GradAccumulation::accumulate_grad: return mb > 0;
    case GradAccumulation::main_grad_add:
    case GradAccumulation::cast_add: return true;
  }
  return false;
}

// Gradient norm for clip_grad (Megatron's get_grad_norm_fp32: multi_tensor_l2norm over the fp32 main
// gradients this rank owns): reads 4 B per gradient, 2 FLOPs each (square, accumulate); the per-tensor
// partial norms it writes are a few bytes.
Op grad_norm_op(double grads_on_rank) {
  CS_CHECK(grads_on_rank >= 0);
  Op op = mem("grad_norm", MemOpKind::elementwise, 4.0 * grads_on_rank, 2.0 * grads_on_rank);
  op.role = OpRole::optimizer;
  op.dtype = Dtype::fp32;
  return op;
}

// The sum of squares, one fp32, all-reduced (Megatron: torch.distributed.all_reduce(total_norm)).
Op grad_norm_all_reduce_op() {
  Op op = coll("ar_grad_norm", CollectiveKind::all_reduce, ProcessGroup::dp, 4.0);
  op.role = OpRole::optimizer;
  return op;
}

}  // namespace cs::models
