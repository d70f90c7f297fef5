#include "models/workload/model_rules.hpp"

#include <array>

#include "sim/base/token_routing.hpp"

namespace cs::models {

namespace {

std::string str(std::int64_t v) { return std::to_string(v); }

// A captureless accessor of a field, as a function pointer the table can hold.
#define CS_INT_FIELD(key, member) ModelField{key, [](ModelConfig& m) -> std::int64_t& { return m.member; }, nullptr}
#define CS_BOOL_FIELD(key, member) ModelField{key, nullptr, [](ModelConfig& m) -> bool& { return m.member; }}
const std::array kModelFields = {
    CS_INT_FIELD("moe_shared_expert_intermediate_size", moe_shared_expert_intermediate_size),
    CS_INT_FIELD("mtp_num_layers", mtp_num_layers),
    CS_INT_FIELD("mamba_state_dim", mamba.state_dim),
    CS_INT_FIELD("mamba_head_dim", mamba.head_dim),
    CS_INT_FIELD("mamba_num_groups", mamba.num_groups),
    CS_INT_FIELD("mamba_num_heads", mamba.num_heads),
    CS_BOOL_FIELD("causal", causal),
    CS_BOOL_FIELD("untie_embeddings_and_output_weights", untie_embeddings),
    CS_BOOL_FIELD("add_bias_linear", add_bias_linear),
    CS_BOOL_FIELD("apply_rope_fusion", rope_fusion),
};
#undef CS_INT_FIELD
#undef CS_BOOL_FIELD

// MLA has no query groups and no kv_channels: every head has its own key and value, up-projected from the
// latent, of the head dims model.mla gives (MultiLatentAttention.__init__).
void mla_problems(const ModelConfig& m, const std::function<bool(std::string_view)>& given, std::vector<KeyProblem>& out) {
  if (given("kv_channels"))
    out.push_back({"model.kv_channels", "is not used with model.mla (the head dims are model.mla.qk_nope_head_dim + qk_rope_head_dim and v_head_dim)"});
  if (m.num_query_groups != m.num_attention_heads)
    out.push_back({"model.num_query_groups", str(m.num_query_groups) + " with model.mla: MLA gives every head its own key and value "
                                             "(expected num_attention_heads, " + str(m.num_attention_heads) + ")"});
  if (m.attention_impl == AttentionImpl::unfused)
    out.push_back({"model.attention_backend", "\"unfused\" with model.mla is not simulated (MLA runs Transformer Engine's fused attention with "
                                              "192-dim queries and keys and 128-dim values)"});
}

// The hybrid pattern and the Mamba sizes (hybrid_problems), and what a hybrid model is not simulated with.
void hybrid_key_problems(const ModelConfig& m, const std::function<bool(std::string_view)>& given, std::vector<KeyProblem>& out) {
  const auto problems = hybrid_problems(m);
  for (const auto& p : problems) {
    const bool heads = p.rfind("mamba_num_heads", 0) == 0, sizes = p.rfind("Mamba", 0) == 0;
    out.push_back({heads ? "model.mamba_num_heads" : sizes ? "model.mamba_state_dim" : "model.hybrid_override_pattern", p});
  }
  if (!m.hybrid()) out.push_back({"model.mamba_state_dim", "the Mamba sizes need model.hybrid_override_pattern (which layers are Mamba-2 layers)"});
  if (!m.hybrid() || !problems.empty()) return;  // a bad pattern is cleared by the loader: nothing below applies
  if (m.window_size > 0) out.push_back({"model.window_size", "a sliding window with model.hybrid_override_pattern is not simulated"});
  if (m.mla.enabled()) out.push_back({"model.mla", "multi-head latent attention with model.hybrid_override_pattern is not simulated"});
  if (m.mtp_num_layers > 0)
    out.push_back({"model.mtp_num_layers", "multi-token prediction with model.hybrid_override_pattern is not simulated (Megatron's '/' patterns)"});
  if (given("moe_layer_freq"))
    out.push_back({"model.moe_layer_freq", "the MoE layers of a hybrid model are its 'E' layers (model.hybrid_override_pattern)"});
  if (m.add_bias_linear) out.push_back({"model.add_bias_linear", "biases with model.hybrid_override_pattern are not simulated"});
}

}  // namespace

std::span<const ModelField> model_fields() { return kModelFields; }

std::vector<KeyProblem> model_key_problems(const ModelConfig& m, const std::function<bool(std::string_view)>& given) {
  std::vector<KeyProblem> out;
  if (m.kv_channels == 0 && m.hidden_size > 0 && m.num_attention_heads > 0 && m.hidden_size % m.num_attention_heads != 0)
    out.push_back({"model.hidden_size", str(m.hidden_size) + " is not a multiple of model.num_attention_heads (" + str(m.num_attention_heads) +
                                            "; give model.kv_channels for a head dim other than hidden / heads)"});
  if (!m.window_attn_pattern.empty() && m.num_layers > 0 && static_cast<std::int64_t>(m.window_attn_pattern.size()) != m.num_layers)
    out.push_back({"model.window_attn_skip_freq", "the list has " + std::to_string(m.window_attn_pattern.size()) +
                                                      " entries, expected one per layer (model.num_layers " + str(m.num_layers) + ")"});
  if (!m.moe_layer_pattern.empty() && m.num_layers > 0 && static_cast<std::int64_t>(m.moe_layer_pattern.size()) != m.num_layers)
    out.push_back({"model.moe_layer_freq", "the list has " + std::to_string(m.moe_layer_pattern.size()) +
                                               " entries, expected one per layer (model.num_layers " + str(m.num_layers) + ")"});
  if (m.num_moe_experts == 0 && (m.moe_shared_expert_intermediate_size > 0 || given("moe_layer_freq")))
    out.push_back({m.moe_shared_expert_intermediate_size > 0 ? "model.moe_shared_expert_intermediate_size" : "model.moe_layer_freq",
                   "needs a mixture-of-experts model (model.num_moe_experts > 0)"});
  if (m.window_size > 0 && !m.causal) out.push_back({"model.window_size", "a sliding window needs a causal model (model.causal true)"});
  if (m.mla.enabled()) mla_problems(m, given, out);
  if (m.hybrid() || given("mamba_state_dim") || given("mamba_head_dim") || given("mamba_num_groups") || given("mamba_num_heads"))
    hybrid_key_problems(m, given, out);
  if (m.num_query_groups > 0 && m.num_attention_heads % m.num_query_groups != 0)
    out.push_back({"model.num_query_groups", str(m.num_query_groups) + " does not divide model.num_attention_heads (" + str(m.num_attention_heads) + ")"});
  if (m.num_moe_experts > 0 && (m.moe_router_topk < 1 || m.moe_router_topk > m.num_moe_experts))
    out.push_back({"model.moe_router_topk", str(m.moe_router_topk) + " must be between 1 and model.num_moe_experts (" + str(m.num_moe_experts) + ")"});
  if (auto p = group_limited_routing_problem(m)) out.push_back(*std::move(p));
  return out;
}

// Group-limited routing as Megatron-Core's group_limited_topk takes it (megatron/core/transformer/moe/
// moe_utils.py @ NVIDIA/Megatron-LM d98e8a64: scores viewed as [tokens, num_groups, experts / num_groups],
// group_topk groups kept, the top-k among their experts).
std::optional<KeyProblem> group_limited_routing_problem(const ModelConfig& m) {
  const std::int64_t G = m.moe_router_num_groups, g = m.moe_router_group_topk, E = m.num_moe_experts;
  if (G == 0 && g == 0) return std::nullopt;
  const std::string groups = "model.moe_router_num_groups";
  if (E == 0) return KeyProblem{G > 0 ? groups : "model.moe_router_group_topk", "group-limited routing needs a mixture-of-experts model (model.num_moe_experts > 0)"};
  if (G < 2 || E % G != 0) return KeyProblem{groups, str(G) + " must be at least 2 and divide model.num_moe_experts (" + str(E) + ")"};
  if (G > sim::TokenRouting::kMaxGroups)
    return KeyProblem{groups, str(G) + " is more groups than modelled (at most " + str(sim::TokenRouting::kMaxGroups) + ")"};
  if (g < 1 || g > G) return KeyProblem{"model.moe_router_group_topk", str(g) + " must be between 1 and model.moe_router_num_groups (" + str(G) + ")"};
  if (m.moe_router_topk > g * (E / G))
    return KeyProblem{"model.moe_router_topk", str(m.moe_router_topk) + " is more than the experts of model.moe_router_group_topk groups (" + str(g * (E / G)) + ")"};
  return std::nullopt;
}

std::vector<KeyProblem> feature_layout_problems(const ModelConfig& m, const TrainingConfig& t) {
  std::vector<KeyProblem> out;
  if (m.window_size > 0 && t.cp > 1)
    out.push_back({"training.context_parallel_size", str(t.cp) + " with a sliding window (model.window_size) is not simulated "
                                                     "(Transformer Engine runs windowed attention with all-gather CP, not the ring)"});
  // Megatron-Core's MLA gathers the RoPE key from the sequence-parallel region whenever TP > 1
  // (multi_latent_attention.py @ 13f8f526, get_query_key_value_tensors): TP without SP is not what it runs.
  if (m.mla.enabled() && t.tp > 1 && !t.sequence_parallel)
    out.push_back({"training.sequence_parallel", "model.mla with tensor_model_parallel_size " + str(t.tp) +
                                                     " needs sequence_parallel true (Megatron-Core's MLA gathers the RoPE key over the sequence-parallel region)"});
  return out;
}

}  // namespace cs::models
