#pragma once
// Measured points, whatever file they came from: the common currency of calibration.
//
// Importers (nccl-tests logs, the harness JSON, the H200 reference JSON, the published nccl.json) turn
// their files into a MeasurementSet; the fitters read only MeasurementSets; `clustersim validate` predicts
// every point of one. Each point remembers where it came from ("file:line" or "file: json.path") so a fit
// report or a validation table can name it.
//
// Units: times in seconds, sizes in bytes (1e9 bytes = 1 GB in every bandwidth, as nccl-tests prints).
// Communication sizes are nccl-tests' "size" column S (for all-gather and reduce-scatter the whole
// gathered / scattered array, count x typesize x ranks; see shared/ECOSYSTEM.md 1.4).
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "models/hardware/dtype.hpp"
#include "models/hardware/gpu_catalog.hpp"
#include "models/workload/op.hpp"
#include "sim/base/input_error.hpp"

namespace cs::calibrate {

enum class ComputeKind {
  gemm,              // C[m,n] = A[m,k] B[k,n] in `dtype`; work = 2mnk FLOPs
  attention_fwd,     // causal flash attention forward; work = 2 b hq s^2 d FLOPs (attention.kernel: which)
  attention_fwdbwd,  // forward + backward (two kernels); work = 3.5x the forward's
  memory_bound,      // bytes read + written by one kernel of `mem_kind`
};

struct ComputeMeasurement {
  ComputeKind kind = ComputeKind::gemm;
  models::Dtype dtype = models::Dtype::bf16;
  models::GemmShape gemm{};
  models::AttentionShape attention{};
  models::MemOpKind mem_kind = models::MemOpKind::copy;
  double bytes = 0;              // memory_bound: HBM bytes moved
  double time_s = 0;             // median measured time
  double bf16_reference_s = 0;   // fp8 GEMMs measured beside the same shape in bf16: that time; else 0
  // Attention timed with one SDPA backend forced ("cudnn", "flash2"; scripts/attention_backends.py);
  // empty for PyTorch's own choice (the reference file). Names the validation group.
  std::string attention_backend;
  std::string label;             // "gemm bf16 8192x8192x8192", "rms_norm 64 MiB", ...
  std::string where;             // "file: gemm[12]"
};

struct CommMeasurement {
  models::CollectiveKind collective = models::CollectiveKind::all_reduce;
  std::string algorithm = "default";  // ring, tree, nvls, ... or default (NCCL chose)
  int ranks = 0;
  int nodes = 1;                       // distinct hosts; > 1 means the group crosses the network
  double size_bytes = 0;               // nccl-tests "size" S
  double time_s = 0;
  bool in_place = false;
  std::string gpu;                     // device name as the source printed it
  std::string where;                   // "file:line" or "file: json.path"
};

struct MeasurementSet {
  std::string gpu;       // device name of the compute measurements ("NVIDIA H200"), if any
  int sm_count = 0;      // of that GPU, 0 when the source does not say
  std::vector<ComputeMeasurement> compute;
  std::vector<CommMeasurement> comm;
  std::vector<std::string> notes;     // non-fatal import problems, each "FILE:LINE: what"
  std::vector<std::string> sources;   // files read

  void append(const MeasurementSet& other);
};

// The catalog GPU a device string names: "NVIDIA H200" -> H200, "NVIDIA H100 80GB HBM3" -> H100-SXM,
// "NVIDIA A100-PCIE-40GB" -> A100-40GB, and catalog names themselves. nullptr when it is not known.
const models::GpuSpec* guess_gpu(std::string_view device_name);

// Work of a compute measurement in the unit its peak is counted in (FLOPs, or bytes for memory_bound).
double work_of(const ComputeMeasurement& m);

}  // namespace cs::calibrate
