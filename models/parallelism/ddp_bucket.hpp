#pragma once
// Gradient buckets of Megatron-Core's DistributedDataParallel (megatron/core/distributed/
// distributed_data_parallel.py): gradients are reduced (all-reduce; reduce-scatter with the distributed
// optimizer) a bucket at a time as backward produces them. When ddp_config.bucket_size is unset, Megatron
// takes max(40,000,000, 1,000,000 x data-parallel size) parameters -- larger DP groups get larger buckets,
// so that each rank's chunk of a ring stays bandwidth-bound rather than latency-bound -- and with
// overlap_grad_reduce off, bucket_size = None: the whole model is one bucket, reduced after backward.
//
// The memory model sizes ZeRO-2/3's transient bucket with ddp_bucket_params(dp). The step builder cuts
// its buckets at TrainingConfig::grad_bucket_params, which the loader takes from the scenario's framework
// (calibrate/published/frameworks.json): this rule under megatron-core and nemo, DeepSpeed's
// reduce_bucket_size, PyTorch DDP's 25 MiB, and under generic (the default) the fixed floor
// kDdpMinBucketParams without the DP term, so that the published goldens (GPT-3 175B on 16,384 H100:
// DP 256, which Megatron would cut at 256M parameters) keep their numbers. simulation.grad_bucket_params
// replaces any of them.
#include <algorithm>

namespace cs::models {

inline constexpr double kDdpMinBucketParams = 40e6;
inline constexpr double kDdpBucketParamsPerDpRank = 1e6;

// Megatron-Core's default bucket, parameters.
inline double ddp_bucket_params(int dp) { return std::max(kDdpMinBucketParams, kDdpBucketParamsPerDpRank * dp); }

}  // namespace cs::models
