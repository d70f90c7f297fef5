#pragma once
// GPU catalog: datasheet figures of the accelerators clustersim knows by name.
//
// Every figure is a dense (no structured sparsity) peak from the vendor's public datasheet; the source
// is named beside each entry in gpu_catalog.cpp. Achieved fractions of these peaks are the compute
// model's business (compute_model.hpp), not the catalog's. A scenario may define its own GPU with the
// same fields (sim/scenario/scenario.cpp parses it into a GpuSpec).
#include <string>
#include <string_view>
#include <vector>

#include "models/hardware/dtype.hpp"

namespace cs::models {

struct GpuSpec {
  std::string name;
  double peak_tflops_fp32 = 0;   // dense, non-tensor-core FP32
  double peak_tflops_tf32 = 0;   // dense tensor core
  double peak_tflops_bf16 = 0;   // dense tensor core (fp16 identical)
  double peak_tflops_fp8 = 0;    // dense tensor core; 0 where the GPU has no fp8
  double hbm_gib = 0;            // HBM capacity, GiB (2^30 bytes)
  double hbm_tbps = 0;           // HBM bandwidth, TB/s (1e12 bytes/s)
  double tdp_w = 0;              // board power, W
  double nvlink_gbps = 0;        // scale-up bandwidth per GPU, GB/s (1e9 B/s), both directions together
  int sm_count = 0;              // streaming multiprocessors (compute units on AMD)
  double price_per_gpu_hour_usd = 0;  // typical on-demand cloud price, overridable per scenario
  // Fraction of the dense tensor peak reachable with the warp-level mma.sync instruction (what
  // FlashAttention-2 and other pre-Hopper kernels use): 1 where it is the native instruction (Ampere,
  // Ada, and AMD where the distinction does not apply), 2/3 on Hopper (FlashAttention-3 paper, sec. 2).
  double mma_sync_fraction = 1.0;
  // Maximum achievable bf16 matmul FLOPS over the dense bf16 peak (the best large GEMM a tuned BLAS
  // reaches: clocks under load, power and the instruction mix limit it, not the datasheet). 0: unknown.
  // Carries a GEMM table measured on one GPU to another (compute_model.hpp).
  double matmul_ceiling_fraction = 0.0;
  // The host's power per GPU in the vendor's 8-GPU reference server (CPUs, memory, NICs, NVSwitches, fans):
  // (system max power - 8 x TDP) / 8 from the DGX datasheets. An upper bound (the datasheet maximum);
  // 0: unknown (give cluster.node_overhead_w).
  double host_power_w_per_gpu = 0.0;
  // Whether an FP8 GEMM reads its operands only row-wise (TN layout), so that an FP8 tensor used both ways
  // (a GEMM's input: forward and wgrad; an output gradient: dgrad and wgrad) is quantized into two copies,
  // one transposed: Hopper and Ada. Blackwell's tensor cores read FP8 column-wise too, one copy serves both
  // (Transformer Engine docs/features/low_precision_training/performance_considerations, "Architecture
  // differences": "Hopper: ... columnwise tensors need to be physically transposed in memory";
  // "Blackwell: supports columnwise access natively, so no transpose is needed"). MI300X, whose FP8
  // layouts we have no source for, is taken as Hopper.
  bool fp8_needs_transposed_copy = true;
  // Dense FP4 tensor peak (NVFP4 / MXFP4 on Blackwell and CDNA 4), TFLOP/s; 0 where the GPU has no FP4.
  double peak_tflops_fp4 = 0;
  // PCIe generation of the GPU's x16 host link. With GPUDirect RDMA a scale-out NIC reads and writes the
  // GPU's memory through it, so it caps the NIC's payload rate (host_path_GBps()).
  int pcie_gen = 5;
  // The largest scale-up (NVLink / Infinity Fabric) domain the product is built into: 8 on an HGX / DGX or
  // OAM board, 72 for the Grace-Blackwell NVL72 racks. A fabric whose domain is larger than this cannot
  // hold the GPU (the NVL72 switch trays take only GB200 / GB300 compute trays).
  int scaleup_domain_gpus = 8;
  // The GPU's own path to host memory where it is not the PCIe host link (host_path_GBps), GB/s per
  // direction: Grace-attached GPUs (GB200, GB300) reach the Grace CPU's LPDDR5X over NVLink-C2C. 0: the
  // PCIe host link. Read by CPU activation offload's copies (host_copy_GBps).
  double host_memory_GBps = 0;
  // A board power cap below tdp_w (cluster.power_limit_w, `nvidia-smi -pl`); 0: none, the board runs at tdp_w.
  double power_limit_w = 0;

  // Peak for a math format; fp8 falls back to bf16 on GPUs without fp8 tensor cores.
  double peak_tflops(Dtype d) const;
  bool has_fp8() const { return peak_tflops_fp8 > 0; }
  // Block-scaled (microscaling) tensor-core MMA: MXFP8 / NVFP4 GEMMs with per-block scales in hardware.
  // Blackwell (tcgen05.mma.kind::mxf8f6f4 / mxf4nvf4) and CDNA 4; taken as "the GPU has FP4" (every GPU
  // with FP4 tensor cores has block-scaled MMA, none without does).
  bool has_block_scaled_mma() const { return peak_tflops_fp4 > 0; }
  // The scale-up bandwidth a node link gets from the GPU when its catalog entry leaves it to the GPU
  // (nvswitch, pcie): half of nvlink_gbps, per direction, and at least 1 GB/s.
  double scaleup_GBps_per_direction() const { return nvlink_gbps / 2 > 1.0 ? nvlink_gbps / 2 : 1.0; }
  // In-switch reduction (NVLS) came with third-generation NVSwitch, i.e. NVLink 4 (900 GB/s per GPU:
  // H100, H200) and later (B200); the A100's NVSwitch has none.
  bool nvswitch_has_nvls() const { return nvlink_gbps >= 900; }
  // The payload rate of the GPU's x16 host link per direction, GB/s: PCIe's per-lane rate (Gen3 ~1, Gen4 2,
  // Gen5 4, Gen6 8 GB/s per direction, nominal) x 16 lanes x 0.80, the achievable share of a PCIe link the
  // link catalog's "pcie" entry derives (topologies/link_catalog.cpp). Gen4: 25.6 GB/s, Gen5: 51.2.
  double host_path_GBps() const;
  // The rate of a copy between the GPU's memory and pinned host memory, GB/s per direction:
  // host_memory_GBps where the catalog gives it, else the PCIe host link's host_path_GBps.
  double host_copy_GBps() const { return host_memory_GBps > 0 ? host_memory_GBps : host_path_GBps(); }
  // The power the board draws busy: the cap where one is set below tdp_w, else tdp_w.
  double board_power_w() const { return power_limit_w > 0 && power_limit_w < tdp_w ? power_limit_w : tdp_w; }
  // The SM clock under the power cap as a fraction of the uncapped one, which scales the time of math-bound
  // kernels (tensor-core GEMMs and attention); HBM's clock, and so memory-bound kernels, a cap leaves
  // alone. Dynamic CMOS power is C V^2 f, and DVFS lowers the voltage with the frequency (V ~ f), so
  // P ~ f^3 and f ~ (cap / tdp)^(1/3): 0.89 at 500 of 700 W. A first-order model: it leaves out static
  // power, which makes real clocks drop further, so it is an upper bound on the capped speed; a
  // calibration profile measured under the cap supersedes it (docs/modelling.md "Power limits").
  double clock_fraction() const;
};

// nullptr when the name is unknown.
const GpuSpec* find_gpu(std::string_view name);
std::vector<std::string> gpu_names();

}  // namespace cs::models
