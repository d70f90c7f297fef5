#pragma once
// The name table of every string choice of a scenario (sim/base/name_table.hpp): what the loader accepts,
// what the report prints, what the GUI offers and the search varies. The parameter table
// (sim/scenario/params.hpp) lists these names as each key's allowed values.
#include "models/hardware/dtype.hpp"
#include "models/workload/op.hpp"
#include "models/workload/transformer.hpp"
#include "sim/base/name_table.hpp"
#include "sim/base/network_backend.hpp"

namespace cs::sim {

inline constexpr std::array<Named<models::Activation>, 3> kActivationNames{{
    {models::Activation::gelu, "gelu"}, {models::Activation::swiglu, "swiglu"}, {models::Activation::squared_relu, "squared_relu"},
}};

// Megatron's recompute_granularity; the order is the search's: each one only adds kernels to the step.
inline constexpr std::array<Named<models::Recompute>, 3> kRecomputeNames{{
    {models::Recompute::none, "none"}, {models::Recompute::selective, "selective"},
    {models::Recompute::full, "full"},
}};

// Megatron-Core's recompute_method (models::RecomputeMethod).
inline constexpr std::array<Named<models::RecomputeMethod>, 2> kRecomputeMethodNames{{
    {models::RecomputeMethod::uniform, "uniform"}, {models::RecomputeMethod::block, "block"},
}};

// Megatron-Core's token dispatchers (models::MoeDispatcher): "alltoall", and the flex backends by name.
inline constexpr std::array<Named<models::MoeDispatcher>, 3> kMoeDispatcherNames{{
    {models::MoeDispatcher::alltoall, "alltoall"}, {models::MoeDispatcher::deepep, "deepep"},
    {models::MoeDispatcher::hybridep, "hybridep"},
}};

inline constexpr std::array<Named<models::CudaGraphImpl>, 4> kCudaGraphImplNames{{
    {models::CudaGraphImpl::none, "none"}, {models::CudaGraphImpl::local, "local"},
    {models::CudaGraphImpl::transformer_engine, "transformer_engine"}, {models::CudaGraphImpl::full_iteration, "full_iteration"},
}};

inline constexpr std::array<Named<models::PipelineSchedule>, 6> kPipelineScheduleNames{{
    {models::PipelineSchedule::one_f_one_b, "1f1b"}, {models::PipelineSchedule::gpipe, "gpipe"},
    {models::PipelineSchedule::interleaved, "interleaved"}, {models::PipelineSchedule::zb_h1, "zb-h1"},
    {models::PipelineSchedule::zbv, "zbv"}, {models::PipelineSchedule::dualpipev, "dualpipev"},
}};

// training.finetune.method (models/workload/finetune.hpp).
inline constexpr std::array<Named<models::FinetuneMethod>, 2> kFinetuneMethodNames{{
    {models::FinetuneMethod::lora, "lora"}, {models::FinetuneMethod::qlora, "qlora"},
}};

// training.gradient_accumulation: how each micro-batch's weight gradients are accumulated
// (models::GradAccumulation, models/workload/transformer.hpp).
inline constexpr std::array<Named<models::GradAccumulation>, 4> kGradAccumulationNames{{
    {models::GradAccumulation::fused, "fused"}, {models::GradAccumulation::accumulate_grad, "accumulate_grad"},
    {models::GradAccumulation::main_grad_add, "main_grad_add"}, {models::GradAccumulation::cast_add, "cast_add"},
}};

// training.pipeline_tensor_split (models::PipelineTensorSplit, models/workload/transformer.hpp).
inline constexpr std::array<Named<models::PipelineTensorSplit>, 3> kPipelineTensorSplitNames{{
    {models::PipelineTensorSplit::none, "none"}, {models::PipelineTensorSplit::scatter_gather, "scatter_gather"},
    {models::PipelineTensorSplit::partitioned, "partitioned"},
}};

inline constexpr std::array<Named<models::PositionEmbedding>, 3> kPositionEmbeddingNames{{
    {models::PositionEmbedding::rope, "rope"}, {models::PositionEmbedding::learned_absolute, "learned_absolute"},
    {models::PositionEmbedding::none, "none"},
}};

// Transformer Engine / Megatron attention backends: "auto" and "fused" (cuDNN) and FlashAttention 3 run
// as the native fused kernel; "local" is Megatron's unfused DotProductAttention.
inline constexpr std::array<Named<models::AttentionImpl>, 7> kAttentionBackendNames{{
    {models::AttentionImpl::native, "auto"}, {models::AttentionImpl::native, "fused"},
    {models::AttentionImpl::flash2, "flash"}, {models::AttentionImpl::native, "flash3"},
    {models::AttentionImpl::flash1, "flash1"}, {models::AttentionImpl::unfused, "unfused"},
    {models::AttentionImpl::unfused, "local"},
}};

// training.precision: the GEMM math precision (the rest runs in bf16).
inline constexpr std::array<Named<models::PrecisionRecipe>, 8> kPrecisionNames{{
    {models::PrecisionRecipe::bf16, "bf16"},
    {models::PrecisionRecipe::fp16, "fp16"},
    {models::PrecisionRecipe::fp8, "fp8"},
    {models::PrecisionRecipe::fp8_delayed, "fp8_delayed"},
    {models::PrecisionRecipe::fp8_current, "fp8_current"},
    {models::PrecisionRecipe::fp8_blockwise, "fp8_blockwise"},
    {models::PrecisionRecipe::mxfp8, "mxfp8"},
    {models::PrecisionRecipe::nvfp4, "nvfp4"},
}};

// training.main_grads_dtype / grad_reduce_dtype: the gradient buffer's and the reduction's element type.
inline constexpr std::array<Named<models::Dtype>, 3> kGradDtypeNames{{
    {models::Dtype::fp32, "fp32"}, {models::Dtype::bf16, "bf16"}, {models::Dtype::fp16, "fp16"},
}};

// training.exp_avg_dtype / exp_avg_sq_dtype: Adam's moments (Megatron's --exp-avg-dtype choices).
inline constexpr std::array<Named<models::Dtype>, 4> kOptimizerStateDtypeNames{{
    {models::Dtype::fp32, "fp32"}, {models::Dtype::bf16, "bf16"}, {models::Dtype::fp16, "fp16"}, {models::Dtype::fp8, "fp8"},
}};

// training.moe_apply_probs (models::MoeProbsPlacement, models/workload/transformer.hpp).
inline constexpr std::array<Named<models::MoeProbsPlacement>, 2> kMoeApplyProbsNames{{
    {models::MoeProbsPlacement::combine, "combine"}, {models::MoeProbsPlacement::activation, "activation"},
}};

// training.zero3_collectives (models::Zero3Collectives, models/workload/transformer.hpp).
inline constexpr std::array<Named<models::Zero3Collectives>, 2> kZero3CollectivesNames{{
    {models::Zero3Collectives::per_unit, "per_unit"}, {models::Zero3Collectives::per_tensor_synchronous, "per_tensor_synchronous"},
}};

// PyTorch FSDP's ShardingStrategy, as ZeRO stages (HYBRID_SHARD: stage 3 inside a node, replicated across).
enum class FsdpSharding { full_shard, shard_grad_op, hybrid_shard, no_shard };
inline constexpr std::array<Named<FsdpSharding>, 4> kFsdpShardingNames{{
    {FsdpSharding::full_shard, "FULL_SHARD"}, {FsdpSharding::shard_grad_op, "SHARD_GRAD_OP"},
    {FsdpSharding::hybrid_shard, "HYBRID_SHARD"}, {FsdpSharding::no_shard, "NO_SHARD"},
}};
constexpr int zero_stage_of(FsdpSharding f) {
  return f == FsdpSharding::full_shard || f == FsdpSharding::hybrid_shard ? 3 : f == FsdpSharding::shard_grad_op ? 2 : 0;
}

// simulation.nccl_algorithm: force one NCCL algorithm (sim/network/nccl_model.hpp takes the name).
enum class ForcedNcclAlgorithm { ring, tree, nvls, hierarchical, nvls_tree, collnet_direct, collnet_chain };
inline constexpr std::array<Named<ForcedNcclAlgorithm>, 7> kNcclAlgorithmNames{{
    {ForcedNcclAlgorithm::ring, "ring"}, {ForcedNcclAlgorithm::tree, "tree"}, {ForcedNcclAlgorithm::nvls, "nvls"},
    {ForcedNcclAlgorithm::hierarchical, "hierarchical"}, {ForcedNcclAlgorithm::nvls_tree, "nvls_tree"},
    {ForcedNcclAlgorithm::collnet_direct, "collnet_direct"}, {ForcedNcclAlgorithm::collnet_chain, "collnet_chain"},
}};

}  // namespace cs::sim
