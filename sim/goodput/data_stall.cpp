#include "sim/goodput/data_stall.hpp"

#include <algorithm>

#include "sim/base/check.hpp"

namespace cs::sim::goodput {

DataStallResult analyse_data_stall(const DataPipelineSpec& spec, const DataJob& job) {
  CS_CHECK(job.nodes > 0 && job.dp > 0 && job.step_s > 0);
  DataStallResult r;
  r.source = spec.source;
  r.step_s = job.step_s;
  r.bytes_per_step = job.global_batch * spec.bytes_per_sample;
  r.node_read_GBps = spec.source == "local_nvme" ? spec.local_nvme_read_GBps_per_node
                                                 : std::min(spec.shared_fs_per_client_GBps, spec.shared_fs_GBps / job.nodes);
  r.read_s = r.bytes_per_step / job.nodes / (r.node_read_GBps * 1e9);
  r.decode_s = job.global_batch / job.dp * spec.cpu_s_per_sample / spec.workers_per_gpu;
  r.input_s = std::max(r.read_s, r.decode_s);
  r.can_hide = spec.prefetch_depth >= 1;
  r.step_with_input_s = r.can_hide ? std::max(job.step_s, r.input_s) : job.step_s + r.input_s;
  r.stall_s = r.step_with_input_s - job.step_s;
  r.stall_fraction = r.stall_s / r.step_with_input_s;
  r.bottleneck = r.stall_s <= 0 ? "none" : (r.read_s >= r.decode_s ? "storage" : "decode");
  r.never_stall_GBps = r.bytes_per_step / job.step_s / 1e9;
  r.never_stall_GBps_per_node = r.never_stall_GBps / job.nodes;
  return r;
}

}  // namespace cs::sim::goodput
