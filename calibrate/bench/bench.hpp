#pragma once
// The sweeps of clustersim-bench; each writes its own sections of the output JSON (README.md lists them).
#include <cstdint>
#include <string>
#include <vector>

#include "common.hpp"

namespace csbench {

struct Config {
  std::string out = "clustersim-bench.json";
  bool quick = false;           // a reduced sweep (minutes, not tens of minutes)
  bool gemm = true, memory = true, nccl = true;
  TimingOptions timing;
  std::int64_t nccl_max_bytes = std::int64_t(8) << 30;  // capped by free memory
  int device = 0;               // GPU of the single-GPU sweeps
};

struct GemmShape {
  std::int64_t m, n, k;
  std::string origin;  // "square", "llama3-70b tp8 T8192 fc1 fwd", ...
};
std::vector<GemmShape> transformer_gemm_shapes(bool quick);

void run_gemm_sweep(Json& json, const Config& cfg);     // "gemm", "fp8_gemm"
void run_memory_sweep(Json& json, const Config& cfg);   // "d2d_copy", "pcie", "memory_bound"
// "nccl" (+ "nccl_ranks", "nccl_nodes"); all local GPUs in one process, or one GPU per MPI rank.
void run_nccl_sweep(Json& json, const Config& cfg, int mpi_rank, int mpi_size);

}  // namespace csbench
