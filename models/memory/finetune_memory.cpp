#include "models/memory/finetune_memory.hpp"

#include "models/parallelism/pipeline_schedule.hpp"
#include "models/workload/finetune.hpp"

namespace cs::models {
namespace {

// Sum of f(moe_layer) over the layers of pipeline stage `stage` (every chunk; ZBV's chunk 1 is the split's
// chunk 1 of stage p - 1 - s, pipeline_schedule.hpp).
template <class F>
double over_stage_layers(const ModelConfig& m, const TrainingConfig& t, int stage, F f) {
  double sum = 0;
  for (int c = 0; c < t.vp; ++c) {
    const int at = sim::v_shape(t.pipeline_schedule) && c == 1 ? t.pp - 1 - stage : stage;
    const std::int64_t first = first_layer_of_chunk(m, t, at, c);
    for (std::int64_t l = first; l < first + layers_in_chunk(m, t, at, c); ++l) sum += f(m.num_moe_experts > 0 && is_moe_layer(m, l));
  }
  return sum;
}

}  // namespace

double adapter_parameters_on_rank(const ModelConfig& m, const TrainingConfig& t, int stage) {
  return over_stage_layers(m, t, stage, [&](bool moe) { return adapter_parameters_per_layer(m, t, moe); });
}

FinetuneRank finetune_rank(const ModelConfig& m, const TrainingConfig& t, int stage, const RankParameters& base) {
  FinetuneRank r;
  r.adapter_params = adapter_parameters_on_rank(m, t, stage);
  const double quantized = t.finetune.method == FinetuneMethod::qlora
                               ? over_stage_layers(m, t, stage, [&](bool moe) { return gemm_parameters_per_layer(m, t, moe); })
                               : 0.0;
  r.frozen_weight_bytes = kNf4BytesPerParam * quantized + 2.0 * (base.total() - quantized);
  return r;
}

}  // namespace cs::models
