#pragma once
// Memory per GPU: weights, gradients, optimizer states, activations, communication buffers.
//
// Mixed-precision Adam (Rajbhandari et al., ZeRO, 2020): per parameter 2 bytes bf16 weights, 2 bytes
// bf16 grads (Megatron keeps fp32 main grads: 4 bytes, when accumulating in fp32) and 12 bytes optimizer
// state (fp32 master weights, momentum, variance; 8 with bf16 moments, exp_avg_dtype / exp_avg_sq_dtype). ZeRO-1 shards the 12 over DP, ZeRO-2 also the grads,
// ZeRO-3 also the weights. Parameters of a rank: the layers of its pipeline stage divided by TP (plus the
// embedding / LM head on the first / last stage).
// Activations per layer and micro-batch (Korthikanti et al., 2022, eq. 1-5, in bytes with 16-bit
// activations): s b h (34 + 5 a s / h) without parallelism; / t with TP+SP; TP without SP keeps
// 10 s b h unsharded; selective recompute drops the 5 a s / h term; full recompute keeps only the layer
// input 2 s b h (/ t with SP). Generalised to GQA and gated MLPs by counting the stored tensors.
// In flight under 1F1B: stage i (0-based) holds min(p - i, m) micro-batches; the first stage is the peak.
// Layers per stage and model chunk follow the pipeline split (models::layers_in_chunk): with an uneven
// split (account_for_embedding / loss, decoder_first / last_pipeline_num_layers) each stage's weights
// and activations count its own layers.
//
// Choices made in memory_model.cpp (each explained there): 16 B per parameter before sharding (bf16
// grads, as the ZeRO paper counts; Megatron's fp32 main grads would make it 18); ZeRO shards over the
// dp * cp group (experts over dp * cp / ep; FSDP HYBRID_SHARD over the fsdp_shard_size ranks of a node); activations counted tensor by tensor with flash attention
// by default (no s^2 score term); interleaved 1F1B holds Megatron's warm-up count of model chunks;
// the last stage adds Korthikanti's output-layer terms including the fp32 logits 4 T V / t; buffers are
// a cuBLAS workspace, NCCL buffers and the ZeRO-2/3 transient buckets; the reserve is 1 GiB plus 5%
// allocator fragmentation of everything else.
#include "models/hardware/gpu_catalog.hpp"
#include "models/workload/transformer.hpp"

namespace cs::models {

struct MemoryBreakdown {
  double weights_bytes = 0;
  double grads_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;
  double buffers_bytes = 0;   // communication buckets, temporary all-gather buffers
  double reserved_bytes = 0;  // allocator fragmentation + CUDA context + framework
  int stage = 0;              // pipeline stage this breakdown is for
  double total_bytes() const {
    return weights_bytes + grads_bytes + optimizer_bytes + activations_bytes + buffers_bytes +
           reserved_bytes;
  }
};

// Activation bytes stored for backward by one layer for one micro-batch on one rank. The attention
// implementation (ModelConfig::attention_impl) decides whether the s^2 scores are stored: every flash
// kernel keeps only Q, K, V, O and the fp32 log-sum-exp; the unfused attention of Korthikanti's paper
// keeps the softmax output (and with attention dropout its mask and output).
double activation_bytes_per_layer(const ModelConfig& m, const TrainingConfig& t);
// The same for an MoE layer (`moe_layer`, when the model has experts) or a dense one (moe_layer_freq).
// `kind`: a hybrid model's Mamba-2, attention-only or MLP-only layer (LayerKind; transformer.hpp).
double activation_bytes_per_layer(const ModelConfig& m, const TrainingConfig& t, bool moe_layer,
                                  LayerKind kind = LayerKind::transformer);

// CPU activation offload (TrainingConfig::cpu_offloading_num_layers = N of the model's L layers; pipeline
// parallelism 1, no recompute, one micro-batch in flight: the loader refuses the rest). Transformer
// Engine's offload (transformer_engine/pytorch/cpu_offload.py @ NVIDIA/TransformerEngine d0067d0,
// L602-638) offloads layers 0..N-1 and drops layer i's GPU copy of its activations when layer L - N + i's
// forward begins (the compute stream waits for that copy to have reached the host); in the backward layer
// i's reload starts when layer L - 1 - N + i's backward begins. So while layer j runs (forward or
// backward) the GPU holds the sets of the layers i <= j with i >= N (not offloaded) or i > j - (L - N)
// (offloaded, not yet dropped / already reloaded): L - N sets when the layers are alike, TE's "at most
// model_layers - num_layers" (get_cpu_offload_context's docstring, L747-752).
// The bytes layer `layer` (0-based in the model) stores for backward and the offload moves each way.
double offloaded_layer_bytes(const ModelConfig& m, const TrainingConfig& t, std::int64_t layer);
// The largest sum over j of those resident sets: the layers' activations at a micro-batch's peak.
double offload_peak_layer_bytes(const ModelConfig& m, const TrainingConfig& t);

// Parameters held by one rank of pipeline stage `stage` before any ZeRO sharding: the stage's layers
// split by TP (experts by EP and TP), the embedding on stage 0, the final norm and the LM head on the
// last stage (with tied embeddings and pp > 1 Megatron keeps a copy of the embedding there too).
// Dense parameters are data-parallel over dp * cp ranks, expert parameters over dp * cp / ep.
struct RankParameters {
  double dense = 0;
  double expert = 0;
  double total() const { return dense + expert; }
};
RankParameters parameters_on_rank(const ModelConfig& m, const TrainingConfig& t, int stage);
// One transformer layer's share of it: an MoE layer's (`moe_layer`, when the model has experts; the
// router and shared experts count as dense) or a dense layer's.
RankParameters layer_parameters_on_rank(const ModelConfig& m, const TrainingConfig& t, bool moe_layer,
                                        LayerKind kind = LayerKind::transformer);
// The multi-token-prediction modules' share (model.mtp_num_layers; on the last stage): per module its
// transformer layer (the kind of the model's last layer), its two input norms, the eh_proj GEMM split by
// TP and its final norm.
RankParameters mtp_parameters_on_rank(const ModelConfig& m, const TrainingConfig& t);

// Memory of a rank on pipeline stage `stage`.
MemoryBreakdown memory_per_gpu(const ModelConfig& m, const TrainingConfig& t, int stage);
// The stage with the largest total (the one that decides whether the job fits).
MemoryBreakdown peak_memory_per_gpu(const ModelConfig& m, const TrainingConfig& t);

// The one fits-in-memory rule: the peak total against the GPU's whole HBM (hbm_gib GiB, the capacity
// nvidia-smi reports; the CUDA context and allocator's share are already in reserved_bytes).
double hbm_capacity_bytes(const GpuSpec& gpu);
bool fits_in_memory(const MemoryBreakdown& m, const GpuSpec& gpu);

}  // namespace cs::models
