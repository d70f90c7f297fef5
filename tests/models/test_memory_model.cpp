#include <catch2/catch.hpp>

#include <algorithm>

#include "models/memory/memory_model.hpp"

using namespace cs::models;

namespace {

ModelConfig preset(const char* name) {
  auto m = find_preset(name);
  REQUIRE(m.has_value());
  return *m;
}

TrainingConfig layout(std::int64_t seq, int tp, int pp, int dp, std::int64_t global_batch) {
  TrainingConfig t;
  t.seq_length = seq;
  t.micro_batch_size = 1;
  t.global_batch_size = global_batch;
  t.tp = tp;
  t.pp = pp;
  t.dp = dp;
  return t;
}

double states(const MemoryBreakdown& b) { return b.weights_bytes + b.grads_bytes + b.optimizer_bytes; }

}  // namespace

TEST_CASE("memory: plain DDP holds 16 bytes per parameter", "[models]") {
  // 2 B bf16 weights + 2 B bf16 grads + 12 B fp32 master, momentum, variance; DDP replicates all.
  const ModelConfig m = preset("llama2-7b");
  const double psi = parameter_count(m);  // 6,738,415,616
  const MemoryBreakdown b = memory_per_gpu(m, layout(4096, 1, 1, 8, 8), 0);
  CHECK(b.weights_bytes == Approx(2 * psi).epsilon(1e-12));
  CHECK(b.grads_bytes == Approx(2 * psi).epsilon(1e-12));
  CHECK(b.optimizer_bytes == Approx(12 * psi).epsilon(1e-12));
  CHECK(states(b) == Approx(16 * psi).epsilon(1e-12));
}

TEST_CASE("memory: ZeRO stages shard optimizer, then grads, then weights over DP", "[models]") {
  const ModelConfig m = preset("llama2-7b");
  const double psi = parameter_count(m);
  TrainingConfig t = layout(4096, 1, 1, 64, 64);
  t.zero_stage = 1;  // 2 psi + 2 psi + 12 psi / 64
  CHECK(states(memory_per_gpu(m, t, 0)) == Approx(4 * psi + 12 * psi / 64).epsilon(1e-12));
  t.zero_stage = 2;  // 2 psi + 14 psi / 64
  CHECK(states(memory_per_gpu(m, t, 0)) == Approx(2 * psi + 14 * psi / 64).epsilon(1e-12));
  t.zero_stage = 3;  // 16 psi / 64
  CHECK(states(memory_per_gpu(m, t, 0)) == Approx(16 * psi / 64).epsilon(1e-12));
}

TEST_CASE("memory: parameters over the pipeline stages add up to the model", "[models]") {
  const ModelConfig m = preset("llama2-7b");  // untied, vocabulary already a multiple of 128
  const TrainingConfig t = layout(4096, 1, 4, 1, 8);
  double sum = 0;
  for (int s = 0; s < 4; ++s) sum += parameters_on_rank(m, t, s).total();
  CHECK(sum == Approx(parameter_count(m)).epsilon(1e-12));
  // Embedding on stage 0, LM head and final norm on stage 3, 8 layers each.
  const double layer = parameters_per_layer(m);
  CHECK(parameters_on_rank(m, t, 1).total() == Approx(8 * layer).epsilon(1e-12));
  CHECK(parameters_on_rank(m, t, 0).total() == Approx(8 * layer + 32000.0 * 4096).epsilon(1e-12));
}

TEST_CASE("memory: MoE expert states shard over the expert data-parallel group", "[models]") {
  // Mixtral with EP 8 carved out of DP 8: each rank holds 1 expert per layer; expert DP = dp / ep = 1,
  // so ZeRO-1 shards the dense optimizer states 8 ways and the expert ones not at all.
  const ModelConfig m = preset("mixtral-8x7b");
  TrainingConfig t = layout(4096, 1, 1, 8, 8);
  t.ep = 8;
  t.zero_stage = 1;
  const RankParameters p = parameters_on_rank(m, t, 0);
  CHECK(p.expert == Approx(32.0 * 3 * 4096 * 14336).epsilon(1e-12));
  CHECK(memory_per_gpu(m, t, 0).optimizer_bytes == Approx(12 * (p.dense / 8 + p.expert)).epsilon(1e-12));
}

TEST_CASE("memory: activations reduce to Korthikanti et al. for GPT-3", "[models]") {
  // GPT-3 175B, s = 2048, b = 1, h = 12288, a = 96 (MHA, GeLU 4h MLP, dropout): Korthikanti's counts
  // (section 4.1) give per layer s b h (34 + 5 a s / h) bytes; with flash attention the 5 a s / h score
  // term is never stored, but flash keeps an fp32 log-sum-exp per query row and head (4 a s b bytes).
  const ModelConfig m = preset("gpt3-175b");
  ModelConfig unfused = m;  // Korthikanti's attention: attention_backend "unfused"
  unfused.attention_impl = cs::models::AttentionImpl::unfused;
  const double s = 2048, b = 1, h = 12288, a = 96, tp = 8;
  const double lse = 4 * a * s * b;

  SECTION("TP 8 + SP, flash: 34 s b h / t (+ LSE / t)") {
    TrainingConfig t = layout(2048, 8, 1, 1, 1);
    t.sequence_parallel = true;
    CHECK(activation_bytes_per_layer(m, t) == Approx(34 * s * b * h / tp + lse / tp).epsilon(1e-12));
    CHECK(activation_bytes_per_layer(m, t) == Approx(34 * s * b * h / tp).epsilon(1e-3));
  }
  SECTION("no parallelism, unfused attention: s b h (34 + 5 a s / h)") {
    const TrainingConfig t = layout(2048, 1, 1, 1, 1);
    CHECK(activation_bytes_per_layer(unfused, t) ==
          Approx(s * b * h * (34 + 5 * a * s / h)).epsilon(1e-12));
  }
  SECTION("TP 8 without SP, unfused: s b h (10 + 24 / t + 5 a s / (h t))") {
    const TrainingConfig t = layout(2048, 8, 1, 1, 1);
    CHECK(activation_bytes_per_layer(unfused, t) ==
          Approx(s * b * h * (10 + 24 / tp + 5 * a * s / (h * tp))).epsilon(1e-12));
  }
  SECTION("TP 8 + SP, selective recompute, unfused: 34 s b h / t") {
    TrainingConfig t = layout(2048, 8, 1, 1, 1);
    t.sequence_parallel = true;
    t.recompute = Recompute::selective;
    CHECK(activation_bytes_per_layer(unfused, t) ==
          Approx(34 * s * b * h / tp).epsilon(1e-12));
  }
  SECTION("recompute_modules: each module drops exactly what it re-runs") {
    // TP 8 + SP, flash. layernorm: the two norm outputs (QKV's and FC1's inputs), 2 x 2 s b h / t;
    // mlp: FC1's output (4h / t wide, GeLU) and FC2's input (4h / t), 2 x 2 x 4 s b h / t; dropping
    // core_attn from the list stores the log-sum-exp again.
    TrainingConfig t = layout(2048, 8, 1, 1, 1);
    t.sequence_parallel = true;
    t.recompute = Recompute::selective;
    const double core = activation_bytes_per_layer(m, t);
    t.recompute_modules.layernorm = true;
    CHECK(core - activation_bytes_per_layer(m, t) == Approx(4 * s * b * h / tp).epsilon(1e-12));
    t.recompute_modules.mlp = true;
    CHECK(core - activation_bytes_per_layer(m, t) == Approx(4 * s * b * h / tp + 16 * s * b * h / tp).epsilon(1e-12));
    t.recompute_modules = {};
    t.recompute_modules.core_attn = false;
    CHECK(activation_bytes_per_layer(m, t) - core == Approx(lse / tp).epsilon(1e-12));
    // Under "none" or "full" the list changes nothing (Megatron reads it only for selective).
    t.recompute_modules.layernorm = true;
    t.recompute = Recompute::none;
    TrainingConfig plain = t;
    plain.recompute_modules = {};
    CHECK(activation_bytes_per_layer(m, t) == activation_bytes_per_layer(m, plain));
  }
  SECTION("full recompute keeps the layer input: 2 s b h / t with SP, 2 s b h without") {
    TrainingConfig t = layout(2048, 8, 1, 1, 1);
    t.sequence_parallel = true;
    t.recompute = Recompute::full;
    CHECK(activation_bytes_per_layer(m, t) == 2 * s * b * h / tp);
    t.sequence_parallel = false;
    CHECK(activation_bytes_per_layer(m, t) == 2 * s * b * h);
  }
}

TEST_CASE("memory: GQA and SwiGLU activations by tensor count", "[models]") {
  // Llama 3 8B, T = 4096, no TP, flash, no dropout. Stored: 4 hidden tensors (norm inputs, QKV and FC1
  // inputs) 8 T h; Q, K, V 2 T d (a + 2 g) = 2 T 128 * 48; O 2 T h; LSE 4 T a; FC1 output 2 T 2f;
  // FC2 input 2 T f.
  const ModelConfig m = preset("llama3-8b");
  const double T = 4096, h = 4096, f = 14336;
  const double expected = 8 * T * h + 2 * T * 128 * 48 + 2 * T * h + 4 * T * 32 + 2 * T * 2 * f + 2 * T * f;
  CHECK(activation_bytes_per_layer(m, layout(4096, 1, 1, 1, 1)) == expected);
}

TEST_CASE("memory: micro-batches in flight under the pipeline schedules", "[models]") {
  const ModelConfig m = preset("llama2-7b");  // 32 layers, no dropout
  TrainingConfig t = layout(4096, 1, 4, 1, 8);  // p = 4, m = 8, 8 layers per stage
  const double per_layer = activation_bytes_per_layer(m, t);
  SECTION("1F1B: stage i holds min(p - i, m) micro-batches") {
    CHECK(memory_per_gpu(m, t, 0).activations_bytes == Approx(4 * 8 * per_layer).epsilon(1e-12));
    CHECK(memory_per_gpu(m, t, 1).activations_bytes == Approx(3 * 8 * per_layer).epsilon(1e-12));
    // Last stage: 1 micro-batch, plus the final norm and LM-head inputs (4 T h) and fp32 logits 4 T V.
    CHECK(memory_per_gpu(m, t, 3).activations_bytes ==
          Approx(8 * per_layer + 4.0 * 4096 * 4096 + 4.0 * 4096 * 32000).epsilon(1e-12));
  }
  SECTION("fewer micro-batches than stages caps the count") {
    t.global_batch_size = 2;
    CHECK(memory_per_gpu(m, t, 0).activations_bytes == Approx(2 * 8 * per_layer).epsilon(1e-12));
  }
  SECTION("GPipe holds all m") {
    t.pipeline_schedule = PipelineSchedule::gpipe;
    CHECK(memory_per_gpu(m, t, 0).activations_bytes == Approx(8 * 8 * per_layer).epsilon(1e-12));
  }
  SECTION("interleaved, vp = 2: L (1 + (p - 1) / (p vp)) layers on the first stage") {
    // Megatron warm-up on stage 0: (p - 1) * 2 + (vp - 1) * p = 10 chunks, + 1 in flight = 11 chunks of
    // 4 layers = 44 = 32 * (1 + 3 / 8).
    t.vp = 2;
    t.pipeline_schedule = PipelineSchedule::interleaved;
    CHECK(memory_per_gpu(m, t, 0).activations_bytes == Approx(44 * per_layer).epsilon(1e-12));
  }
}

TEST_CASE("memory: buffers, reserve and the peak stage", "[models]") {
  const ModelConfig m = preset("llama2-7b");
  const TrainingConfig one = layout(4096, 1, 1, 1, 1);
  const MemoryBreakdown b = memory_per_gpu(m, one, 0);
  // One GPU: only the 32 MiB cuBLAS workspace; the reserve is 1 GiB + 5% of everything else.
  CHECK(b.buffers_bytes == 32.0 * 1024 * 1024);
  const double dynamic = states(b) + b.activations_bytes + b.buffers_bytes;
  CHECK(b.reserved_bytes == Approx(1024.0 * 1024 * 1024 + 0.05 * dynamic).epsilon(1e-12));
  CHECK(b.total_bytes() == Approx(dynamic + b.reserved_bytes).epsilon(1e-12));

  const TrainingConfig pp = layout(4096, 2, 4, 2, 16);
  double best = 0;
  for (int s = 0; s < 4; ++s) best = std::max(best, memory_per_gpu(m, pp, s).total_bytes());
  const MemoryBreakdown peak = peak_memory_per_gpu(m, pp);
  CHECK(peak.total_bytes() == best);
  CHECK(peak.stage == 0);  // holds 4 micro-batches of 8 layers
}

TEST_CASE("memory: Llama 3 70B fits on 80 GB with TP 8 PP 4 and the distributed optimizer", "[models]") {
  // Sanity check at a familiar operating point: Llama 3 70B, seq 8192, TP 8 + SP, PP 4, DP 8, ZeRO-1,
  // 1F1B with 16 micro-batches; no recompute. 70.6e9 / 32 = 2.2e9 params per rank -> 4.4 GB weights,
  // 4.4 GB grads, 3.3 GB optimizer; activations 4 micro-batches x 20 layers.
  const ModelConfig m = preset("llama3-70b");
  TrainingConfig t = layout(8192, 8, 4, 8, 128);
  t.sequence_parallel = true;
  t.zero_stage = 1;
  const MemoryBreakdown peak = peak_memory_per_gpu(m, t);
  CHECK(peak.total_bytes() / 1e9 > 30);
  CHECK(peak.total_bytes() / 1e9 < 80);
}

TEST_CASE("memory: an uneven pipeline split gives each stage its own layers", "[models]") {
  // Llama 3.1 405B, TP 8, PP 8 x VP 8, embedding and loss counted in the split (126 + 2 = 128): stage 0
  // holds 15 layers (chunk 0 has 1), stages 1..6 16, stage 7 15 (its last chunk has 1).
  const ModelConfig m = preset("llama3-405b");
  TrainingConfig t = layout(8192, 8, 8, 1, 64);  // m = 64 micro-batches
  t.sequence_parallel = true;
  t.vp = 8;
  t.pipeline_schedule = PipelineSchedule::interleaved;
  t.account_for_embedding_in_pipeline_split = true;
  t.account_for_loss_in_pipeline_split = true;
  const double per_layer = parameters_per_layer(m) - 2.0 * 16384;  // the GEMMs, split by TP 8
  const double norms = 2.0 * 16384;                                // replicated
  const double word = 129024.0 * 16384 / 8;  // vocab 128256 padded to a multiple of 128 x 8: 126 x 1024
  SECTION("parameters") {
    CHECK(parameters_on_rank(m, t, 0).dense == Approx(15 * (per_layer / 8 + norms) + word).epsilon(1e-12));
    CHECK(parameters_on_rank(m, t, 3).dense == Approx(16 * (per_layer / 8 + norms)).epsilon(1e-12));
    CHECK(parameters_on_rank(m, t, 7).dense == Approx(15 * (per_layer / 8 + norms) + 16384 + word).epsilon(1e-12));
  }
  SECTION("activations in flight follow the chunks' layer counts") {
    // Stage 0's warm-up is (p - 1) 2 + (v - 1) p = 14 + 56 = 70 virtual micro-batches, so 71 are in
    // flight: k = 0..63 visit each chunk 8 times ((k mod 64) div 8), k = 64..70 chunk 0 seven more.
    // Chunk 0 (1 layer) x 15 + chunks 1..7 (2 layers) x 8 = 15 + 112 = 127 layer-micro-batches (an even
    // 2 per chunk would be 142).
    const double act = activation_bytes_per_layer(m, t);
    CHECK(memory_per_gpu(m, t, 0).activations_bytes == Approx(127 * act).epsilon(1e-12));
    // Stage 3: warm-up 8 + 56 = 64, 65 in flight: chunk 0 nine times, the others 8: 2 x (9 + 56) = 130.
    CHECK(memory_per_gpu(m, t, 3).activations_bytes == Approx(130 * act).epsilon(1e-12));
  }
}

TEST_CASE("memory: DeepSeekMoE 16B, its dense layer and shared experts, on EP 8", "[models]") {
  // TP 1, EP 8 of DP 8: every rank holds the dense parameters whole and 64 / 8 = 8 experts per MoE layer.
  //   dense:  attention 16,777,216 + norms 4,096 per layer x 28; layer 0's MLP 67,239,936; per MoE
  //           layer the router 131,072 and the shared experts 17,301,504 (x 27); embeddings 419,430,400
  //           and the final norm 2,048 (pp = 1)
  //   expert: 27 x 8 x 3 x 2048 x 1408 = 1,868,562,432
  const ModelConfig m = preset("deepseek-moe-16b");
  TrainingConfig t = layout(4096, 1, 1, 8, 8);
  t.ep = 8;
  const RankParameters p = parameters_on_rank(m, t, 0);
  const double dense = 28 * (16777216.0 + 4096) + 67239936.0 + 27 * (131072.0 + 17301504.0) + 419430400.0 + 2048;
  CHECK(p.dense == dense);
  CHECK(p.expert == 27 * 8 * 3 * 2048.0 * 1408);
  CHECK(p.total() == Approx(parameter_count(m) - 27 * 56 * 3 * 2048.0 * 1408).epsilon(1e-12));
  // Activations (no recompute, T = 4096 tokens, no dropout): an MoE layer stores what a dense one does
  // but for the MLP: the dense FC1 output 2 x 10944 and FC2 input 10944 wide (2 B each) against the
  // router's fp32 probabilities (4 E), the k permuted copies in and out (2 x 2 k h), the experts' FC1
  // outputs (2 k 2816) and FC2 inputs (2 k 1408), and the shared experts' (2 x 5632 + 2 x 2816).
  const double T = 4096, h = 2048, k = 6;
  const double dense_mlp = T * (2 * 2 * 10944.0 + 2 * 10944.0);
  const double moe_mlp = T * (4 * 64.0 + 2 * k * h + 2 * k * 2816 + 2 * k * 1408 + 2 * k * h + 2 * 5632.0 + 2 * 2816.0);
  CHECK(activation_bytes_per_layer(m, t, true) - activation_bytes_per_layer(m, t, false) == Approx(moe_mlp - dense_mlp).epsilon(1e-12));
  // pp = 1: one micro-batch in flight, so the stage holds one dense and 27 MoE layers' worth.
  const MemoryBreakdown b = memory_per_gpu(m, t, 0);
  const double last_stage = 4 * T * h + 4 * T * 102400;  // final norm + head inputs, fp32 logits
  CHECK(b.activations_bytes == Approx(activation_bytes_per_layer(m, t, false) + 27 * activation_bytes_per_layer(m, t, true) + last_stage)
                                   .epsilon(1e-12));
}

TEST_CASE("memory: Megatron-Core's combined 1F1B holds one micro-batch more of activations", "[models]") {
  // overlap_moe_expert_parallel_comm runs one forward more before pairing forward k + 1 with backward k
  // (sim/step/step_builder.cpp, combined_1f1b.py @ d98e8a6). DeepSeekMoE 16B at pp = 1, EP 8, two
  // micro-batches: one in flight without it, two with it; the logits of one micro-batch only either way
  // (the pair runs the LM-head backward of k before the LM-head forward of k + 1).
  const ModelConfig m = preset("deepseek-moe-16b");
  TrainingConfig t = layout(4096, 1, 1, 8, 16);
  t.ep = 8;
  REQUIRE(t.num_micro_batches() == 2);
  const MemoryBreakdown off = memory_per_gpu(m, t, 0);
  t.overlap_moe_expert_parallel_comm = true;
  const MemoryBreakdown on = memory_per_gpu(m, t, 0);
  const double one_micro_batch = activation_bytes_per_layer(m, t, false) + 27 * activation_bytes_per_layer(m, t, true);
  CHECK(on.activations_bytes - off.activations_bytes == Approx(one_micro_batch).epsilon(1e-12));
  // One micro-batch: nothing to pair, nothing more in flight.
  t = layout(4096, 1, 1, 8, 8);
  t.ep = 8;
  const double single = memory_per_gpu(m, t, 0).activations_bytes;
  t.overlap_moe_expert_parallel_comm = true;
  CHECK(memory_per_gpu(m, t, 0).activations_bytes == single);
}

TEST_CASE("memory: the framework reserve and the allocator's fragmentation are the scenario's", "[models]") {
  // reserved = memory_reserve_gib GiB + allocator_fragmentation x (weights + grads + optimizer +
  // activations + buffers): 1 GiB + 5% by default; 2.5 GiB + 10% when set so.
  const ModelConfig m = preset("llama2-7b");
  TrainingConfig t = layout(4096, 1, 1, 8, 8);
  const MemoryBreakdown base = memory_per_gpu(m, t, 0);
  const double dynamic = states(base) + base.activations_bytes + base.buffers_bytes;
  CHECK(base.reserved_bytes == Approx(1.0 * (1 << 30) + 0.05 * dynamic).epsilon(1e-12));
  t.memory_reserve_gib = 2.5;
  t.allocator_fragmentation = 0.10;
  const MemoryBreakdown b = memory_per_gpu(m, t, 0);
  CHECK(b.reserved_bytes == Approx(2.5 * (1 << 30) + 0.10 * dynamic).epsilon(1e-12));
  CHECK(b.total_bytes() - base.total_bytes() == Approx(1.5 * (1 << 30) + 0.05 * dynamic).epsilon(1e-12));
}

TEST_CASE("memory: FP8 training saves each FP8 GEMM's input in 1 byte (Transformer Engine)", "[models]") {
  // GPT-3 175B (h 12288, a 96, d 128, MHA, GeLU 4h MLP, dropout 0.1), s 2048, b 1, TP 8 + SP, flash.
  // Transformer Engine saves the quantized input of every FP8 GEMM for backward (module/linear.py at
  // d0067d0: saved_inputmat = the FP8 input): QKV's and FC1's inputs (the two norm outputs, 2 s b h / t
  // each in bf16), out-proj's input (s b h / t) and FC2's input (4 s b h / t) drop from 2 bytes to 1.
  // The flash kernel keeps its bf16 output O for its own backward, which bf16 training shares with
  // out-proj's input: in FP8 that bf16 copy stays (2 s b h / t) and out-proj adds its FP8 one (1 s b h / t).
  // Per tensor, in s b h / t units: norm outputs 2 x (2 - 1) = 2, out-proj input 2 - (1 + 2) = -1, FC2
  // input 4 x (2 - 1) = 4: bf16 - fp8 = 5 s b h / t.
  const ModelConfig m = preset("gpt3-175b");
  const double s = 2048, b = 1, h = 12288, tp = 8;
  TrainingConfig t = layout(2048, 8, 1, 1, 1);
  t.sequence_parallel = true;
  const double bf16 = activation_bytes_per_layer(m, t);
  t.precision = Dtype::fp8;
  const double fp8 = activation_bytes_per_layer(m, t);
  CHECK(bf16 - fp8 == Approx(5 * s * b * h / tp).epsilon(1e-12));
  // Full recompute keeps the bf16 layer input only, whatever the GEMM precision.
  t.recompute = Recompute::full;
  const double full_fp8 = activation_bytes_per_layer(m, t);
  t.precision = Dtype::bf16;
  CHECK(activation_bytes_per_layer(m, t) == Approx(full_fp8).epsilon(1e-12));
  CHECK(full_fp8 == Approx(2 * s * b * h / tp).epsilon(1e-12));
}

TEST_CASE("memory: add_bias_linear's biases on the rank, expert ones over EP", "[models]") {
  // gpt-oss-120b at EP 8 over DP 8: per layer the rank holds the QKV bias (64 + 2 * 8) * 64 = 5120, the
  // out-proj's 2880 and the router's 128 (dense, replicated), and its 16 experts' FC1 (2 * 2880) and
  // FC2 (2880) biases: 16 * 8640 = 138240. Over the 8 EP ranks that is the model's 1114048 a layer.
  ModelConfig m;
  m.num_layers = 36;
  m.hidden_size = 2880;
  m.num_attention_heads = 64;
  m.num_query_groups = 8;
  m.kv_channels = 64;
  m.ffn_hidden_size = 2880;
  m.vocab_size = 201088;
  m.activation = Activation::swiglu;
  m.num_moe_experts = 128;
  m.moe_router_topk = 4;
  TrainingConfig t;
  t.seq_length = 4096;
  t.global_batch_size = 8;
  t.ep = 8;
  t.dp = 8;
  const RankParameters before = layer_parameters_on_rank(m, t, true);
  m.add_bias_linear = true;
  const RankParameters after = layer_parameters_on_rank(m, t, true);
  CHECK(after.dense - before.dense == 5120.0 + 2880 + 128);
  CHECK(after.expert - before.expert == 16.0 * 8640);
  CHECK((after.dense - before.dense) + 8 * (after.expert - before.expert) == 1114048.0);
}

TEST_CASE("memory: MLA's parameters per TP rank and its stored activations, by hand", "[models]") {
  // DeepSeek-V3's dense layer (layer 0) at TP 2 with SP: the down-projections 7168 x (1536 + 512 + 64) =
  // 15,138,816 and the latent norms 1536 + 512 whole on each rank (TELinear, duplicated); the up- and
  // out-projections 37,748,736 + 16,777,216 + 117,440,512 = 171,966,464 halved; the two layer norms
  // 14,336; the MLP 3 x 7168 x 18432 / 2 = 198,180,864.
  const ModelConfig m = preset("deepseek-v3");
  TrainingConfig t = layout(4096, 2, 1, 1, 1);
  t.sequence_parallel = true;
  const RankParameters p = layer_parameters_on_rank(m, t, false);
  CHECK(p.dense == 15138816.0 + 2048 + 171966464.0 / 2 + 14336 + 198180864.0);
  CHECK(p.expert == 0);
  // Stored activations of that layer at TP 1, bf16, no recompute, T = 4096, h = 7168:
  //   the two norm inputs and their outputs (QKV's = the down-projections' input, FC1's): 8 T h
  //   Q and K 128 x 192, V 128 x 128 per token, 2 B: 2 T 128 (192 + 192 + 128)
  //   O (the out-proj input, 2 B): 2 T 128 x 128; the fp32 log-sum-exp 4 T 128
  //   the latents before and after their norm (the up-projections' inputs): 4 T (1536 + 512)
  //   the MLP: FC1 output 2 x 18432 and FC2 input 18432 wide, 2 B: 6 T 18432.
  TrainingConfig one = layout(4096, 1, 1, 1, 1);
  const double T = 4096, h = 7168;
  const double expected = 8 * T * h + 2 * T * 128 * 512 + 2 * T * 128 * 128 + 4 * T * 128 + 4 * T * 2048 + 6 * T * 18432;
  CHECK(activation_bytes_per_layer(m, one, false) == Approx(expected).epsilon(1e-12));
  // With SP at TP 2 the latents are the rank's sequence shard; the heads halve.
  const double sp = 8 * T * h / 2 + 2 * T * 64 * 512 + 2 * T * 64 * 128 + 4 * T * 64 + 4 * T / 2 * 2048 + 6 * T * 9216;
  CHECK(activation_bytes_per_layer(m, t, false) == Approx(sp).epsilon(1e-12));
}

TEST_CASE("memory: the multi-token-prediction module sits on the last pipeline stage", "[models]") {
  // DeepSeek-V3 with one MTP module on PP 4 x EP 8 (DP 8, TP 1): the last stage holds, beyond its layers and
  // the head, the module's MoE layer (the 256 / 8 = 32 local experts of 3 x 7168 x 2048 as expert
  // parameters, its attention, norms, router and shared expert as dense ones), its three norms and eh_proj
  // 2 x 7168^2; the other stages nothing more.
  ModelConfig m = preset("deepseek-v3");
  m.num_layers = 4;  // one layer a stage (the first dense), so the stages are cheap to compute
  m.moe_layer_pattern = {false, true, true, true};
  TrainingConfig t = layout(4096, 1, 4, 8, 64);
  t.ep = 8;
  const RankParameters without = parameters_on_rank(m, t, 3);
  const RankParameters first = parameters_on_rank(m, t, 0);
  m.mtp_num_layers = 1;
  const RankParameters with = parameters_on_rank(m, t, 3);
  const RankParameters layer = layer_parameters_on_rank(m, t, true);
  CHECK(with.expert - without.expert == layer.expert);
  CHECK(layer.expert == 32 * 3 * 7168.0 * 2048);
  CHECK(with.dense - without.dense == Approx(layer.dense + 3 * 7168.0 + 2 * 7168.0 * 7168).epsilon(1e-12));
  CHECK(parameters_on_rank(m, t, 0).total() == first.total());
  // Activations: one micro-batch in flight on the last stage of 1F1B: the module's layer and its extras.
  m.mtp_num_layers = 0;
  const double base = memory_per_gpu(m, t, 3).activations_bytes;
  m.mtp_num_layers = 1;
  const double T = 4096, h = 7168, v = 129280;
  // extras: enorm and hnorm inputs 2 + 2, eh_proj input 2 x 2 and output 2, the final norm and head inputs 2 + 2 (x T h).
  const double extra = activation_bytes_per_layer(m, t, true) + 14 * T * h + 4 * T * v;
  CHECK(memory_per_gpu(m, t, 3).activations_bytes - base == Approx(extra).epsilon(1e-9));
}

TEST_CASE("memory: recompute_modules mla_up_proj stores no Q, K, V and no normed latents", "[models]") {
  // Megatron-Core's qkv_up_checkpoint (core_v0.14.0 multi_latent_attention.py) checkpoints the latent
  // norms, the up-projections and RoPE as one function: it discards the attention's Q, K (128 heads x 192)
  // and V (128 x 128) after the forward, 2 B x T x 128 x (192 + 192 + 128) less per layer, T = 4096; and
  // of the latents it keeps only the function's bf16 inputs, the latents before their norms and the RoPE
  // key (1536 + 512 + 64 wide, 2 B) instead of the latents before and after the norm (2 + 2 B x 2048).
  const ModelConfig m = preset("deepseek-v3");
  TrainingConfig t = layout(4096, 1, 1, 1, 1);
  t.recompute = Recompute::selective;
  const double kept = activation_bytes_per_layer(m, t, false);
  t.recompute_modules.mla_up_proj = true;
  const double T = 4096;
  CHECK(kept - activation_bytes_per_layer(m, t, false) == 2.0 * T * 128 * 512 + 4.0 * T * 2048 - 2.0 * T * (2048 + 64));
}

TEST_CASE("memory: bf16 or fp8 Adam moments shrink the optimizer state, by hand", "[models]") {
  // Llama 2 7B, ZeRO-1 over DP 8, pp = 1: the optimizer state is bytes-per-parameter x Psi / 8, with
  // 4 B of fp32 master weights plus the two moments: 4 + 4 + 4 = 12 (default), 4 + 2 + 2 = 8 (DeepSeek-V3's
  // bf16 moments, Megatron's --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16), 4 + 1 + 2 = 7 (fp8 first
  // moment). Weights, gradients and activations do not move.
  const ModelConfig m = preset("llama2-7b");
  TrainingConfig t = layout(4096, 1, 1, 8, 8);
  t.zero_stage = 1;
  const double psi = parameters_on_rank(m, t, 0).total();
  const MemoryBreakdown fp32 = memory_per_gpu(m, t, 0);
  CHECK(fp32.optimizer_bytes == Approx(12 * psi / 8).epsilon(1e-12));
  t.exp_avg_dtype = Dtype::bf16;
  t.exp_avg_sq_dtype = Dtype::bf16;
  const MemoryBreakdown bf16 = memory_per_gpu(m, t, 0);
  CHECK(bf16.optimizer_bytes == Approx(8 * psi / 8).epsilon(1e-12));
  CHECK(bf16.activations_bytes == fp32.activations_bytes);
  CHECK(bf16.grads_bytes == fp32.grads_bytes);
  t.exp_avg_dtype = Dtype::fp8;
  CHECK(memory_per_gpu(m, t, 0).optimizer_bytes == Approx(7 * psi / 8).epsilon(1e-12));
}

TEST_CASE("memory: activation_func_fp8_input_store keeps the SwiGLU input in one byte, not under a checkpoint", "[models]") {
  // DeepSeekMoE 16B, TP 1, EP 8, T = 4096, bf16, no recompute. The SwiGLU's saved input (its FC1 output)
  // goes from 2 B to 1 B per element (Megatron-Core fused_bias_swiglu.py: input.to(float8_e4m3fn)):
  //   dense layer: FC1 output 2 x 10944 wide: T x 21888 B less;
  //   MoE layer: the k = 6 routed copies' FC1 outputs 2 x 1408 wide and the shared experts' 2 x 2816:
  //              T (6 x 2816 + 5632) B less.
  // Under moe_act the experts' checkpoint keeps its bf16 input, so only the shared experts save; under
  // "mlp" the dense MLP keeps its input only, so nothing is saved there.
  const ModelConfig m = preset("deepseek-moe-16b");
  TrainingConfig t = layout(4096, 1, 1, 8, 8);
  t.ep = 8;
  const double T = 4096;
  const double dense = activation_bytes_per_layer(m, t, false), moe = activation_bytes_per_layer(m, t, true);
  TrainingConfig fp8 = t;
  fp8.activation_func_fp8_input_store = true;
  CHECK(dense - activation_bytes_per_layer(m, fp8, false) == T * 21888);
  CHECK(moe - activation_bytes_per_layer(m, fp8, true) == T * (6 * 2816 + 5632));
  t.recompute = fp8.recompute = Recompute::selective;
  t.recompute_modules.moe_act = fp8.recompute_modules.moe_act = true;
  t.recompute_modules.mlp = fp8.recompute_modules.mlp = true;
  CHECK(activation_bytes_per_layer(m, t, true) - activation_bytes_per_layer(m, fp8, true) == T * 5632);
  CHECK(activation_bytes_per_layer(m, t, false) == activation_bytes_per_layer(m, fp8, false));
}

TEST_CASE("memory: probabilities applied in the activation keep no expert outputs for the combine", "[models]") {
  // DeepSeekMoE 16B, TP 1, EP 8, T = 4096, k = 6, h = 2048. Weighing at the combine keeps the k expert
  // outputs of every token in bf16 (2 T k h); weighing in the experts' SwiGLU (Megatron-Core from
  // core_r0.13, experts.py weighted_bias_swiglu_impl) keeps the copies' fp32 probabilities (4 T k)
  // instead. A dense layer does not move.
  const ModelConfig m = preset("deepseek-moe-16b");
  TrainingConfig t = layout(4096, 1, 1, 8, 8);
  t.ep = 8;
  const double T = 4096, k = 6, h = 2048;
  TrainingConfig act = t;
  act.moe_apply_probs = MoeProbsPlacement::activation;
  CHECK(activation_bytes_per_layer(m, t, true) - activation_bytes_per_layer(m, act, true) == 2 * T * k * h - 4 * T * k);
  CHECK(activation_bytes_per_layer(m, t, false) == activation_bytes_per_layer(m, act, false));
}

TEST_CASE("memory: DeepSeek-V3's MoE layer under its report's recipe, tensor by tensor", "[models]") {
  // One MoE layer, one micro-batch of T = 4096 tokens, TP 1, EP 64, fp8_blockwise (a saved GEMM input
  // 1 + 4 / 128 B: FP8 with an fp32 scale per 1 x 128 tile), selective recompute of layernorm and
  // mla_up_proj, SwiGLU inputs in FP8, probabilities in the activation (h 7168, 128 heads, k 8, expert
  // FFN 2048, shared 2048, 256 experts):
  //   the two norm inputs, bf16 ........................................ 4 T h
  //   the latents before their norms and the RoPE key, bf16 ............ 2 T (1536 + 512 + 64)
  //   O: out-proj's FP8 input and the attention kernel's bf16 copy ..... (g + 2) T 128 x 128
  //   the fp32 log-sum-exp ............................................. 4 T 128
  //   router probabilities, fp32 ....................................... 4 T 256
  //   expert FC1 inputs (g), SwiGLU inputs (1 B), FC2 inputs (g) ....... T k (g h + 2 x 2048 + g 2048)
  //   the copies' fp32 probabilities ................................... 4 T k
  //   shared expert: SwiGLU input (1 B) and FC2 input (g) .............. T (2 x 2048 + g 2048)
  const ModelConfig m = preset("deepseek-v3");
  TrainingConfig t = layout(4096, 1, 1, 64, 64);
  t.ep = 64;
  t.precision = Dtype::fp8;
  t.recipe = PrecisionRecipe::fp8_blockwise;
  t.recompute = Recompute::selective;
  t.recompute_modules = {};
  t.recompute_modules.core_attn = false;
  t.recompute_modules.layernorm = t.recompute_modules.mla_up_proj = true;
  t.activation_func_fp8_input_store = true;
  t.moe_apply_probs = MoeProbsPlacement::activation;
  const double T = 4096, h = 7168, k = 8, g = 1 + 4.0 / 128;
  const double expected = 4 * T * h + 2 * T * (1536 + 512 + 64) + (g + 2) * T * 128 * 128 + 4 * T * 128 + 4 * T * 256 +
                          T * k * (g * h + 2 * 2048 + g * 2048) + 4 * T * k + T * (2 * 2048 + g * 2048);
  CHECK(activation_bytes_per_layer(m, t, true) == Approx(expected).epsilon(1e-12));
}

TEST_CASE("memory: a Mamba-2 layer's stored tensors and its parameters under TP, by hand", "[models]") {
  // Nemotron 3 Nano's Mamba layer (h 2688, 64 heads of 64: d_inner 4096, 8 groups of state 128), bf16, one
  // micro-batch of T = 8192 tokens, TP 1, no recompute. Per token: the pre-norm's input (2 h) and in_proj's
  // input (2 h); what mamba_ssm's MambaSplitConv1dScanCombinedFn saves, in_proj's output zxBCdt
  // 2 (2 x 4096 + 2 x 8 x 128 + 64) = 20,608 B and the un-gated scan output 2 x 4096; the gated norm's input
  // 2 x 4096; out_proj's input 2 x 4096: 4 x 2688 + 20,608 + 6 x 4096 = 55,936 B, 458,227,712 B per layer.
  // Full recompute keeps the layer input only, 2 T h.
  const ModelConfig m = preset("nemotron3-nano-30b-a3b");
  TrainingConfig t = layout(8192, 1, 1, 8, 8);
  t.ep = 8;
  CHECK(activation_bytes_per_layer(m, t, false, LayerKind::mamba) == 458227712.0);
  TrainingConfig full = t;
  full.recompute = Recompute::full;
  CHECK(activation_bytes_per_layer(m, full, false, LayerKind::mamba) == 2.0 * 8192 * 2688);
  // TP 2 with sequence parallelism: the norm and in_proj inputs on the sequence shard, the rest per head
  // shard: (4 x 2688 + 2 (4096 + 1024 + 32) + 6 x 2048) / 2 ... = T (4 x 2688 / 2 + 10,304 + 12,288) = T x 27,968.
  TrainingConfig t2 = layout(8192, 2, 1, 4, 4);
  t2.sequence_parallel = true;
  t2.ep = 4;
  CHECK(activation_bytes_per_layer(m, t2, false, LayerKind::mamba) == 8192.0 * 27968.0);
  // Parameters on a TP 2 rank: the pre-norm whole, the rest (in_proj, conv, dt_bias, A_log, D, the gated
  // norm, out_proj: 38,744,896 - 2688) halved: 2688 + 19,371,104 = 19,373,792.
  const RankParameters p = layer_parameters_on_rank(m, t2, false, LayerKind::mamba);
  CHECK(p.dense == 19373792.0);
  CHECK(p.expert == 0.0);
}

TEST_CASE("memory: full recompute by Megatron-Core's recompute_method, block and uniform, by hand", "[models]") {
  // GPT-3 175B on one pipeline stage (its 96 layers, one micro-batch in flight), TP 8 + SP, flash. A layer
  // run without recompute stores A = activation_bytes_per_layer under "none", a checkpointed one its input
  // I = 2 s b h / t. Megatron-Core's TransformerBlock._checkpointed_forward (NVIDIA/Megatron-LM @ 767a8a8):
  //   uniform 1 (every layer on its own): 96 I, plus one layer's A while it is re-run and back-propagated;
  //   block N < 96: the first N layers checkpointed, N I + (96 - N) A; they are back-propagated last, after
  //           the kept layers have freed theirs, so re-running one never exceeds that;
  //   uniform N: one input per group of N, ceil(96 / N) I, plus a whole group re-run at once, N A.
  // The embedding's and the head's extras are the same in all of them, so differences are exact.
  const ModelConfig m = preset("gpt3-175b");
  TrainingConfig t = layout(2048, 8, 1, 1, 1);
  t.sequence_parallel = true;
  TrainingConfig none = t;
  const double A = activation_bytes_per_layer(m, none);
  const double I = 2.0 * 2048 * 12288 / 8;
  t.recompute = Recompute::full;
  REQUIRE(activation_bytes_per_layer(m, t) == I);
  const double full = memory_per_gpu(m, t, 0).activations_bytes;
  auto with = [&](RecomputeMethod method, std::int64_t n) {
    TrainingConfig c = t;
    c.recompute_method = method;
    c.recompute_num_layers = n;
    return memory_per_gpu(m, c, 0).activations_bytes;
  };
  CHECK(with(RecomputeMethod::uniform, 1) == full);
  CHECK(with(RecomputeMethod::block, 10) - full == Approx((96 - 10) * (A - I) - A).epsilon(1e-12));
  CHECK(with(RecomputeMethod::block, 95) - full == Approx(-I).epsilon(1e-12));
  // More layers than the chunk has: every layer checkpointed, as Megatron's loop bound gives.
  CHECK(with(RecomputeMethod::block, 96) == full);
  CHECK(with(RecomputeMethod::block, 500) == full);
  CHECK(with(RecomputeMethod::uniform, 4) - full == Approx((24 - 96) * I + 3 * A).epsilon(1e-12));
  CHECK(with(RecomputeMethod::uniform, 5) - full == Approx((20 - 96) * I + 4 * A).epsilon(1e-12));  // 96 = 19 x 5 + 1
  // Each layer block checkpoints instead of keeping lowers the peak (the ladder validate walks), down to
  // block 95; block 96 is full recompute, which re-runs the last layer on top of every input.
  double before = memory_per_gpu(m, none, 0).activations_bytes;
  for (std::int64_t n = 1; n <= 95; ++n) {
    const double now = with(RecomputeMethod::block, n);
    CHECK(now < before);
    before = now;
  }
  // Under "none" or "selective" the method and count change nothing.
  TrainingConfig sel = none;
  sel.recompute = Recompute::selective;
  TrainingConfig sel_block = sel;
  sel_block.recompute_method = RecomputeMethod::block;
  sel_block.recompute_num_layers = 3;
  CHECK(memory_per_gpu(m, sel_block, 0).activations_bytes == memory_per_gpu(m, sel, 0).activations_bytes);
}

TEST_CASE("memory: block recompute on an interleaved pipeline checkpoints the first layers of every model chunk", "[models]") {
  // Llama 3.1 405B as its 16,384-GPU layout (TP 8 + SP, PP 16, VP 4, the embedding and the loss counted as
  // layers: 2 layers per chunk, 1 in the first stage's chunk 0 and the last stage's last chunk), 16 micro-
  // batches. Block 1 checkpoints the first layer of each chunk: a 2-layer chunk keeps I + A, a 1-layer chunk I.
  const ModelConfig m = preset("llama3-405b");
  TrainingConfig t = layout(8192, 8, 16, 128, 2048);
  t.sequence_parallel = true;
  t.vp = 4;
  t.pipeline_schedule = PipelineSchedule::interleaved;
  t.account_for_embedding_in_pipeline_split = true;
  t.account_for_loss_in_pipeline_split = true;
  const double A = activation_bytes_per_layer(m, t);
  const double I = 2.0 * 8192 * 16384 / 8;
  TrainingConfig full = t;
  full.recompute = Recompute::full;
  TrainingConfig block = full;
  block.recompute_method = RecomputeMethod::block;
  block.recompute_num_layers = 1;
  for (int stage : {1, 7}) {  // stages with four 2-layer chunks
    INFO("stage " << stage);
    REQUIRE(layers_on_stage(m, t, stage) == 8);
    // The same micro-batches are in flight; each 2-layer chunk keeps A - I more per micro-batch in flight,
    // and no chunk is checkpointed whole, so block has no re-run layer on top (full recompute has one, A).
    const double diff = memory_per_gpu(m, block, stage).activations_bytes - memory_per_gpu(m, full, stage).activations_bytes;
    const double in_flight = (memory_per_gpu(m, full, stage).activations_bytes - A) / (2 * I);  // chunk-micro-batches x 1
    CHECK(diff == Approx(in_flight * (A - I) - A).epsilon(1e-9));
  }
}
