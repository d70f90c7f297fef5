#pragma once
// Input stalls: a step cannot start before its batch is loaded.
//
// Per step the job reads global_batch_size x bytes_per_sample, spread evenly over its nodes. A node reads
// at its tier's bandwidth: local NVMe at local_nvme_read_GBps_per_node; the shared file system at
// min(shared_fs_per_client_GBps, shared_fs_GBps / nodes) (the aggregate shared evenly by the job's
// clients, each capped by its own link). Decoding: one DataLoader per data-parallel replica (Megatron
// loads on tensor-parallel rank 0 and broadcasts; with pure DP that is every rank) decodes its
// global_batch_size / dp samples with workers_per_gpu workers of cpu_s_per_sample each.
//     input time per step  I = max(read time, decode time)
// With prefetch_depth >= 1 loading overlaps the step, and in steady state the step takes max(step, I);
// with prefetch_depth 0 it is serial, step + I. The stall is what that adds to the step. The bandwidth
// that never stalls is the one that reads a step's bytes within one step (prefetch >= 1).
// Ignored: file-system metadata latency, page-cache hits, a burst at start-up that a deep prefetch
// hides, checkpoint writes competing for the same file system.
#include <string>

#include "sim/scenario/goodput_spec.hpp"

namespace cs::sim::goodput {

struct DataJob {
  int nodes = 0, dp = 0;
  double global_batch = 0;  // samples per step
  double step_s = 0;        // the step with input always ready
};

struct DataStallResult {
  std::string source;
  double bytes_per_step = 0;
  double node_read_GBps = 0;   // what each node gets from its tier
  double read_s = 0, decode_s = 0, input_s = 0;
  double step_s = 0;           // input always ready
  double step_with_input_s = 0;
  double stall_s = 0;          // per step
  double stall_fraction = 0;   // stall / step_with_input
  std::string bottleneck;      // "storage", "decode" or "none"
  bool can_hide = true;        // prefetch_depth >= 1
  double never_stall_GBps = 0;           // aggregate over the job
  double never_stall_GBps_per_node = 0;
};

DataStallResult analyse_data_stall(const DataPipelineSpec& spec, const DataJob& job);

}  // namespace cs::sim::goodput
