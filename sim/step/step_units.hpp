#pragma once
// The FSDP units of a step and the data-parallel sharding of their parameters: the one formula the step
// builder (step_builder.cpp) emits its data-parallel collectives from and the search's screening tier
// (sim/explore/screening.cpp) prices them from.
//
// A unit is the embedding (stage 0, chunk 0), one transformer layer, or the LM head (last stage, last
// chunk): the granularity at which ZeRO-3 gathers parameters and at which gradients become ready for
// every sharding. Its parameters are those it holds on a rank before sharding, dense (reduced / sharded
// over the dense data-parallel group) and expert (over expert-DP). With a single expert-parallel rank
// the experts reduce with the dense parameters, so they count as dense.
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "models/memory/memory_model.hpp"
#include "models/parallelism/layout.hpp"
#include "models/workload/transformer.hpp"
#include "sim/scenario/scenario.hpp"

namespace cs::sim {

// Which op list a unit runs: the embedding's (models::embedding_ops), a transformer layer's (its
// models::LayerVariant's transformer_layer_ops) or the LM head's (lm_head_ops).
enum class UnitKind : std::uint8_t { embedding, layer, head };

struct UnitParams {
  UnitKind kind;
  double dense;   // parameters reduced / sharded over the dense data-parallel group
  double expert;  // over the expert-data-parallel group
  bool recomputed = true;  // under full recompute: re-runs its forward in the backward pass (TrainingConfig::layer_recomputed)
  std::int64_t layer = -1;  // a transformer layer's index in the model (0-based); -1: the embedding or the head
  models::LayerVariant variant{};  // a layer's (models::layer_variant)
};
// Whether the unit re-runs its forward in its backward pass: a transformer layer that full recompute
// checkpoints (`recomputed` is TrainingConfig::layer_recomputed for layers; the embedding and the head are
// never recomputed, whatever their default says).
inline bool reruns_forward(const UnitParams& u) { return u.kind == UnitKind::layer && u.recomputed; }

// The op list of every unit, built once per scenario (the step builder's op-duration cache keys by an op's
// address, so the lists stay put for its build): the embedding's, the head's and one per layer variant
// the model has (models::layer_variants).
// Under full recompute with recompute_method block (models::RecomputeMethod) the layers a chunk does not
// checkpoint run the lists of the same training without recompute (`kept`); a unit's `recomputed` picks.
struct UnitOps {
  UnitOps(const models::ModelConfig& m, const models::TrainingConfig& t);
  const models::LayerOps& of(const UnitParams& u) const;
  // The op list of a layer of variant `v` (one the model has).
  const models::LayerOps& layer(const models::LayerVariant& v = {}) const;
  models::LayerOps embedding, head;
  std::map<models::LayerVariant, models::LayerOps> layers;
  std::shared_ptr<const UnitOps> kept;  // set only when some layer is not recomputed under full recompute
};

struct StageUnits {
  models::RankParameters rank;  // models::parameters_on_rank of the stage
  bool separate_experts = false;  // expert parameters reduced over expert-DP, apart from the dense ones
  std::vector<std::vector<UnitParams>> chunks;  // by model chunk (virtual stage), in forward order
};
// The layers of every (stage, chunk), indexed stage * vp + chunk (models::layers_in_chunk).
std::vector<std::int64_t> pipeline_split(const models::ModelConfig& m, const models::TrainingConfig& t);
// The units of pipeline stage `stage`, chunk by chunk (the pipeline split of models::layers_in_chunk;
// `split`: pipeline_split's, computed once for all stages).
StageUnits stage_units(const models::ModelConfig& m, const models::TrainingConfig& t, int stage);
StageUnits stage_units(const models::ModelConfig& m, const models::TrainingConfig& t, int stage,
                       const std::vector<std::int64_t>& split);

// CPU activation offload (TrainingConfig::cpu_offloading_num_layers = N; PP 1): how long the copy of
// layer i's stored activations (models::offloaded_layer_bytes) takes each way over the GPU's path to
// host memory (GpuSpec::host_copy_GBps: PCIe, or NVLink-C2C to Grace), seconds, for i = 0..N-1. Both
// directions run on one stream of their own (TE's offload_stream, cpu_offload.py L509 @
// NVIDIA/TransformerEngine d0067d0), so the step builder and the screening tier emit and replay them
// alike: layer i's copy out after its forward, which layer L - N + i's forward waits for; its copy back
// when layer L - 1 - N + i's backward begins, which layer i's backward waits for (L602-647).
std::vector<double> offload_copy_s(const models::ModelConfig& m, const models::TrainingConfig& t, const models::GpuSpec& gpu);

// How the data-parallel groups shard and reduce: ZeRO-3 under HYBRID_SHARD shards inside the node's block
// (GroupKind::shard) and all-reduces across blocks (GroupKind::replica); everything else works on the
// whole DP x CP group; experts on expert-DP.
struct DataParallelSharding {
  bool hybrid = false;
  GroupKind dense_group = GroupKind::dp_cp;
  double dense_shards = 1, expert_shards = 1;  // members of the dense / expert group
  double grad_bytes = 2;  // a gradient element on the wire (TrainingConfig::grad_reduce_dtype)
  // ZeRO 0-2's gradient bucket (parameters): the framework's (TrainingConfig::grad_bucket_params), else
  // simulation.grad_bucket_params; and its collective (ZeRO-1/2 reduce-scatter, DDP all-reduce).
  double bucket_limit = 0;
  models::CollectiveKind bucket_kind = models::CollectiveKind::all_reduce;
  // The optimizer's shard of a stage's parameters (its whole parameters without ZeRO).
  double optimizer_shard(const StageUnits& u, int zero_stage) const;
  // The dense parameters of a stage ZeRO-1/2 gather back after the optimizer (experts apart when separate).
  static double gathered_dense(const StageUnits& u) { return u.rank.dense + (u.separate_experts ? 0 : u.rank.expert); }
};
DataParallelSharding data_parallel_sharding(const Scenario& s, const Layout& layout);

// The parameter tensors of a unit of `kind` holding `dense` parameters on a rank, as DeepSpeed 0.3's
// per-tensor ZeRO-3 gathers and reduces them (models::Zero3Collectives::per_tensor_synchronous): the model's
// tensors of that kind (models::layer_parameter_tensors, embedding_ and head_parameter_tensors) scaled to
// sum to `dense`. The step builder emits a collective per element and the screening tier prices them.
std::vector<double> unit_parameter_tensors(const models::ModelConfig& m, int tp, UnitKind kind, double dense);

// Bytes of a parameter element in ZeRO all-gathers (bf16 weights).
inline constexpr double kParamBytes = 2.0;

}  // namespace cs::sim
