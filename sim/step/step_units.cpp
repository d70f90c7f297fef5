#include "sim/step/step_units.hpp"

#include "models/memory/finetune_memory.hpp"
#include "models/workload/finetune.hpp"
#include "sim/base/check.hpp"

namespace cs::sim {

UnitOps::UnitOps(const models::ModelConfig& m, const models::TrainingConfig& t)
    : embedding(models::embedding_ops(m, t)), head(models::lm_head_ops(m, t)) {
  for (const models::LayerVariant& v : models::layer_variants(m)) layers.emplace(v, models::transformer_layer_ops(m, t, v));
  // LoRA / QLoRA: no frozen wgrads, the adapters' GEMMs (models/workload/finetune.hpp).
  models::apply_finetune(embedding, t);
  models::apply_finetune(head, t);
  for (auto& [variant, ops] : layers) models::apply_finetune(ops, t);
  if (t.recompute == models::Recompute::full && t.recompute_method == models::RecomputeMethod::block) {
    models::TrainingConfig none = t;
    none.recompute = models::Recompute::none;
    kept = std::make_shared<const UnitOps>(m, none);
  }
}

const models::LayerOps& UnitOps::layer(const models::LayerVariant& v) const {
  const auto it = layers.find(v);
  CS_CHECK(it != layers.end());
  return it->second;
}

const models::LayerOps& UnitOps::of(const UnitParams& u) const {
  if (!u.recomputed && kept) return kept->of(u);
  switch (u.kind) {
    case UnitKind::embedding: return embedding;
    case UnitKind::head: return head;
    case UnitKind::layer: break;
  }
  return layer(u.variant);
}

std::vector<std::int64_t> pipeline_split(const models::ModelConfig& m, const models::TrainingConfig& t) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(t.pp) * static_cast<std::size_t>(t.vp));
  for (int s = 0; s < t.pp; ++s)
    for (int c = 0; c < t.vp; ++c) out[static_cast<std::size_t>(s * t.vp + c)] = models::layers_in_chunk(m, t, s, c);
  return out;
}

StageUnits stage_units(const models::ModelConfig& m, const models::TrainingConfig& t, int stage) {
  return stage_units(m, t, stage, pipeline_split(m, t));
}

StageUnits stage_units(const models::ModelConfig& m, const models::TrainingConfig& t, int stage,
                       const std::vector<std::int64_t>& split) {
  CS_CHECK(split.size() == static_cast<std::size_t>(t.pp) * static_cast<std::size_t>(t.vp));
  auto layers = [&](int s, int c) { return split[static_cast<std::size_t>(s * t.vp + c)]; };
  StageUnits out;
  const int p = t.pp, v = t.vp;
  // ZBV's V (pipeline_schedule.hpp): the rank's chunk 1 is virtual stage 2p - 1 - s, the interleaved
  // split's chunk 1 of stage p - 1 - s, so rank 0 holds the embedding and the LM head.
  const bool v_shape = sim::v_shape(t.pipeline_schedule);
  const bool first = stage == 0, last = stage == p - 1, has_head = v_shape ? first : last;
  // Parameters this rank holds before sharding (models::parameters_on_rank), split into units: the
  // embedding (vocab-parallel word embedding + learned positions) on stage 0, the final norm and the
  // LM head on the last stage (a copy of the tied embedding when it is on another stage), the layers the rest.
  out.rank = models::parameters_on_rank(m, t, stage);
  const double h = static_cast<double>(m.hidden_size);
  const double word = static_cast<double>(models::padded_vocab_size(m, t.tp)) * h / t.tp;
  const bool frozen = t.finetune.active();  // embedding and head frozen: nothing to reduce or update
  if (frozen) out.rank = {models::adapter_parameters_on_rank(m, t, stage), 0};
  const double emb_params = first && !frozen ? word + static_cast<double>(m.max_position_embeddings) * h : 0;
  const double head_params =
      has_head && !frozen ? models::final_norm_parameters(m) + (m.untie_embeddings || (p > 1 && !v_shape) ? word : 0) : 0;
  // The pipeline split (models::layers_in_chunk): chunks may hold different numbers of layers, and layers
  // may differ (models::layer_variant): each variant's parameters once.
  out.separate_experts = t.ep > 1 && out.rank.expert > 0;
  std::map<models::LayerVariant, models::RankParameters> params;
  auto layer_params = [&](const models::LayerVariant& lv) {
    const auto [it, added] = params.try_emplace(lv);
    if (!added) return it->second;
    // Fine-tuning trains, reduces and updates the adapters alone (models/workload/finetune.hpp).
    if (t.finetune.active()) return it->second = models::RankParameters{models::adapter_parameters_per_layer(m, t, lv.moe), 0};
    const models::RankParameters lp = models::layer_parameters_on_rank(m, t, lv.moe, lv.kind);
    return it->second = out.separate_experts ? lp : models::RankParameters{lp.dense + lp.expert, 0};
  };
  out.chunks.resize(static_cast<std::size_t>(v));
  for (int c = 0; c < v; ++c) {
    const int at = v_shape && c == 1 ? p - 1 - stage : stage;  // the split's (stage, chunk) of the rank's chunk c
    // Its first layer: model order runs chunk 0 of every stage, then chunk 1 ...
    std::int64_t first_layer = 0;
    for (int cc = 0; cc < c; ++cc)
      for (int s = 0; s < p; ++s) first_layer += layers(s, cc);
    for (int s = 0; s < at; ++s) first_layer += layers(s, c);
    auto& units = out.chunks[static_cast<std::size_t>(c)];
    const std::int64_t n = layers(at, c);
    units.reserve(static_cast<std::size_t>(n) + 2);
    if (at == 0 && c == 0) units.push_back({UnitKind::embedding, emb_params, 0});
    for (std::int64_t l = 0; l < n; ++l) {
      const models::LayerVariant lv = models::layer_variant(m, first_layer + l);
      const models::RankParameters lp = layer_params(lv);
      units.push_back({UnitKind::layer, lp.dense, lp.expert, t.layer_recomputed(l), first_layer + l, lv});
    }
    if (at == p - 1 && c == v - 1) {
      // The multi-token-prediction modules run with the head (models::lm_head_ops), their parameters with it
      // (frozen with it under fine-tuning).
      const models::RankParameters mtp = frozen ? models::RankParameters{} : models::mtp_parameters_on_rank(m, t);
      if (out.separate_experts) units.push_back({UnitKind::head, head_params + mtp.dense, mtp.expert});
      else units.push_back({UnitKind::head, head_params + mtp.dense + mtp.expert, 0});
    }
  }
  return out;
}

double DataParallelSharding::optimizer_shard(const StageUnits& u, int zero_stage) const {
  const models::RankParameters& rp = u.rank;
  return zero_stage >= 1 ? (rp.dense + (u.separate_experts ? 0 : rp.expert)) / dense_shards +
                               (u.separate_experts ? rp.expert / expert_shards : 0)
                         : rp.total();
}

DataParallelSharding data_parallel_sharding(const Scenario& s, const Layout& layout) {
  const models::TrainingConfig& t = s.training;
  DataParallelSharding d;
  d.hybrid = t.zero_stage >= 3 && layout.shard_size() < layout.size(GroupKind::dp_cp);
  d.dense_group = d.hybrid ? GroupKind::shard : GroupKind::dp_cp;
  d.dense_shards = layout.size(d.dense_group);
  d.expert_shards = layout.size(GroupKind::expert_dp);
  d.grad_bytes = models::element_bytes(t.grad_reduce_dtype);
  // The framework's bucket (Megatron-Core: max(4e7, 1e6 DP), one bucket without overlap_grad_reduce;
  // generic: 4e7), unless the scenario gives simulation.grad_bucket_params.
  d.bucket_limit = t.grad_bucket_params > 0 ? t.grad_bucket_params : s.simulation.grad_bucket_params;
  d.bucket_kind = t.zero_stage >= 1 ? models::CollectiveKind::reduce_scatter : models::CollectiveKind::all_reduce;
  return d;
}

std::vector<double> offload_copy_s(const models::ModelConfig& m, const models::TrainingConfig& t, const models::GpuSpec& gpu) {
  std::vector<double> out;
  for (std::int64_t i = 0; i < t.cpu_offloading_num_layers; ++i) out.push_back(models::offloaded_layer_bytes(m, t, i) / (gpu.host_copy_GBps() * 1e9));
  return out;
}

std::vector<double> unit_parameter_tensors(const models::ModelConfig& m, int tp, UnitKind kind, double dense) {
  std::vector<double> sizes = kind == UnitKind::embedding ? models::embedding_parameter_tensors(m, tp)
                              : kind == UnitKind::head    ? models::head_parameter_tensors(m, tp)
                                                          : models::layer_parameter_tensors(m, tp);
  CS_CHECK(!sizes.empty());  // the loader refuses per_tensor_synchronous for layers it has none of
  double sum = 0;
  for (double n : sizes) sum += n;
  for (double& n : sizes) n *= dense / sum;
  return sizes;
}

}  // namespace cs::sim
