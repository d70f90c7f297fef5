#pragma once
// The states of a fine-tuning rank (training.finetune; models/workload/finetune.hpp): frozen base weights
// with no gradient or optimizer state, and the adapters with both.
//   frozen bytes = 2 per parameter (bf16); QLoRA: kNf4BytesPerParam (4.127 bits) per layer GEMM weight
//                  (gemm_parameters_per_layer) and 2 for the rest (embedding, LM head, norms);
//   adapters     = adapter_parameters_per_layer over the stage's layers, in bf16 (2 B), with gradients
//                  (main_grads_dtype) and Adam's 12 B, sharded as training shards them (ZeRO-1 the optimizer
//                  states, ZeRO-2 the gradients too, over the dense data-parallel group).
#include "models/memory/memory_model.hpp"

namespace cs::models {

struct FinetuneRank {
  double frozen_weight_bytes = 0;
  double adapter_params = 0;
};
// `base`: parameters_on_rank of the stage.
FinetuneRank finetune_rank(const ModelConfig& m, const TrainingConfig& t, int stage, const RankParameters& base);
// Adapter parameters the rank of pipeline stage `stage` holds (all dense: data-parallel over DP x CP).
double adapter_parameters_on_rank(const ModelConfig& m, const TrainingConfig& t, int stage);

}  // namespace cs::models
