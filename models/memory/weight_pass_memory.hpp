#pragma once
// What a zero-bubble schedule's deferred W pass keeps alive (pipeline_schedule.hpp: ZB-H1, ZBV).
//
// A backward split into B (input gradients) and W (weight gradients) frees a layer's stored activations
// after B except what W reads: each linear layer's input X and the gradient of its output dY, since
// dW = X^T dY. The zero-bubble runtime holds exactly these (sail-sg/zero-bubble-pipeline-parallelism,
// megatron/core/zbpp_utils.py @ 7e93f886a24cec4c14712287dda081943d6fd5f0, WeightGradStore.put(weight,
// pre_func, func): every linear's deferred wgrad closure, holding its output gradient and its input, which
// with sequence parallelism stays sharded until pre_func all-gathers it at W time; queued per chunk until
// the W pass pops them). That all-gather at W time is not simulated: the step builder keeps the backward's
// input gather in B.
// Per layer and micro-batch on one rank (T = b s / cp tokens, TP t; a tensor outside the TP region is / t
// with SP):
//   inputs X : QKV's and FC1's (the norm outputs, T h / t with SP), out-proj's (T a d / t), FC2's (T f / t),
//              each at the saved GEMM input's width (1 byte in FP8, else 2), as activation_bytes_per_layer
//              stores them;
//   grads dY : QKV's output (T (a + 2 g) d / t), FC1's (T fc1 / t), both 2 bytes; out-proj's and FC2's
//              (T h, 2 bytes: the row-parallel output's gradient as the wgrad GEMM reads it, all-gathered
//              with SP);
//   MoE      : the experts' FC1 / FC2 inputs and output gradients for the Tr ETP k routed copies, the shared
//              experts as a dense MLP, and the router's fp32 logits' gradient (Tr E).
// Full recompute does not change it: B re-runs the forward and W still reads what B produced.
#include "models/workload/transformer.hpp"

namespace cs::models {

double weight_pass_bytes_per_layer(const ModelConfig& m, const TrainingConfig& t, bool moe_layer);

}  // namespace cs::models
