#include "models/memory/weight_pass_memory.hpp"

namespace cs::models {

double weight_pass_bytes_per_layer(const ModelConfig& m, const TrainingConfig& t, bool moe_layer) {
  const auto d = [](std::int64_t x) { return static_cast<double>(x); };
  const bool sp = t.sequence_parallel && t.tp > 1;
  const double tp = t.tp;
  const double T = d(t.micro_batch_size) * d(t.seq_length / t.cp);
  const double h = d(m.hidden_size), dh = d(m.head_dim());
  const double hq = d(m.num_attention_heads) / tp, hkv = d(m.num_query_groups) / tp;
  const double gemm_in = saved_gemm_input_bytes(t.effective_recipe());
  const double th = T * h / (sp ? tp : 1.0);
  // Attention: QKV's input and output gradient, out-proj's input and output gradient.
  double bytes = gemm_in * th + 2.0 * T * dh * (hq + 2.0 * hkv) + gemm_in * T * dh * hq + 2.0 * T * h;
  auto dense_mlp = [&](double ffn) {  // FC1 input and output gradient, FC2 input and output gradient
    const double f = ffn / tp;
    const double fc1 = m.activation == Activation::swiglu ? 2.0 * f : f;
    return gemm_in * th + 2.0 * T * fc1 + gemm_in * T * f + 2.0 * T * h;
  };
  if (m.num_moe_experts == 0 || !moe_layer) return bytes + dense_mlp(d(m.ffn_hidden_size));
  const double k = d(m.moe_router_topk);
  const double Tr = sp ? T / tp : T, Tx = Tr * d(t.expert_tp());
  const double f = d(expert_ffn(m)) / d(t.expert_tp());
  const double fc1 = m.activation == Activation::swiglu ? 2.0 * f : f;
  bytes += 4.0 * Tr * d(m.num_moe_experts) + Tx * k * (gemm_in * h + 2.0 * fc1 + gemm_in * f + 2.0 * h);
  if (m.moe_shared_expert_intermediate_size > 0) bytes += dense_mlp(d(m.moe_shared_expert_intermediate_size));
  return bytes;
}

}  // namespace cs::models
