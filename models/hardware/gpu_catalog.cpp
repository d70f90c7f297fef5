#include "models/hardware/gpu_catalog.hpp"

#include "sim/base/name_table.hpp"

#include <algorithm>

namespace cs::models {

// Conventions for every entry below.
//  - TFLOP/s are dense. NVIDIA datasheets print tensor-core figures "with sparsity" (marked *); the
//    dense figure is half of it. fp32 is the non-tensor-core (CUDA core / vector) figure.
//  - Memory capacity: vendors' "GB" for HBM is binary (stacks of 2^n GiB; nvidia-smi reports the A100
//    80GB as 81920 MiB, the H100 80GB as 81559 MiB, the H200 141GB as 143771 MiB = 140.4 GiB), so the
//    datasheet number is stored as GiB. Reading the H200's "141 GB" as 141e9 bytes (131.3 GiB) would
//    understate what a job can use by ~9 GiB.
//  - Bandwidth in decimal units: TB/s = 1e12 B/s, GB/s = 1e9 B/s. NVLink is the per-GPU total of both
//    directions, as datasheets print it.
//  - mma_sync_fraction (last field): the share of the tensor peak the warp-level mma.sync instruction can
//    reach. Hopper needs wgmma for full rate and mma.sync tops out near 2/3 of it (Shah et al.,
//    "FlashAttention-3", 2024, sec. 2). Blackwell likewise needs its new tcgen05 MMA; no figure for
//    mma.sync on B200 is published, so Hopper's 2/3 is assumed there.
//  - matmul_ceiling_fraction (after it): maximum achievable bf16 matmul FLOPS (MAMF) over the dense
//    bf16 peak, from S. Bekman's ml-engineering MAMF tables (github.com/stas00/ml-engineering,
//    compute/accelerator/README.md "Maximum Achievable Matmul FLOPS comparison table", a brute-force
//    search of large matmul shapes with torch): A100 SXM 267.9/312 = 0.859, MI300X 781.9/1300 = 0.601
//    (ROCm 6.2); its later H200-vs-B200 page: H100/H200 SXM (one row: the same GH100 at 700 W)
//    794.5/989 = 0.803, B200 1745/2250 = 0.776 (the earlier table's H100 SXM, CUDA 12.1: 0.801). Our
//    own harness on an H200 (calibrate/measurements/, 8192^3 cuBLASLt on randn) reached 796/989 = 0.805. H100 PCIe and L40S have no MAMF entry: 0 (unknown) - a GEMM table
//    measured elsewhere carries to them at the measured GPU's fraction of peak.
//  - Prices are rough 2024-25 on-demand list prices per GPU-hour from public GPU clouds (Lambda, RunPod,
//    Azure/AWS list pages); they vary by provider and month and exist only as a default that scenarios
//    override with cluster.price_per_gpu_hour.
namespace {

std::vector<GpuSpec> make_catalog() {
  std::vector<GpuSpec> c;
  // NVIDIA A100 Tensor Core GPU datasheet (nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf,
  // https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf),
  // SXM column: FP32 19.5, TF32 156 (312*), BF16 312 (624*), no FP8; 40GB HBM2 1,555 GB/s; 400 W;
  // NVLink 600 GB/s. 108 SMs: NVIDIA A100 Tensor Core GPU Architecture whitepaper. Price: Lambda ~$1.29.
  // Host power: DGX A100 datasheet, 6.5 kW max system power: (6500 - 8 x 400) / 8 = 412.5 W per GPU.
  c.push_back({"A100-40GB", 19.5, 156, 312, 0, 40, 1.555, 400, 600, 108, 1.29, 1.0, 0.859, 412.5});
  // Same datasheet, A100 80GB SXM column: 80GB HBM2e, 2,039 GB/s; otherwise as above. Price: Lambda ~$1.79.
  c.push_back({"A100-80GB", 19.5, 156, 312, 0, 80, 2.039, 400, 600, 108, 1.79, 1.0, 0.859, 412.5});
  // NVIDIA H100 Tensor Core GPU datasheet (https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet),
  // H100 SXM column: FP32 67, TF32 989*, BF16 1,979*, FP8 3,958* (dense 494.5 / 989 / 1,979);
  // 80GB HBM3 3.35 TB/s; up to 700 W; NVLink 900 GB/s. 132 SMs: NVIDIA H100 whitepaper (GH100, SXM5).
  // Price: Lambda ~$2.99.
  // Host power: DGX H100 datasheet, ~10.2 kW max: (10200 - 8 x 700) / 8 = 575 W per GPU.
  c.push_back({"H100-SXM", 67, 494.5, 989, 1979, 80, 3.35, 700, 900, 132, 2.99, 2.0 / 3.0, 0.803, 575});
  // Same datasheet, H100 PCIe column: FP32 51, TF32 756*, BF16 1,513*, FP8 3,026* (dense 378 / 756 /
  // 1,513); 80GB HBM2e 2.0 TB/s; 300-350 W (350 stored). NVLink: the PCIe card only pairs two GPUs
  // through a 600 GB/s NVLink bridge; there is no NVLink fabric across the node, so 0 is stored and the
  // node's scale-up is the PCIe topology. 114 SMs: H100 whitepaper (H100 PCIe). Price: Lambda ~$2.49.
  c.push_back({"H100-PCIe", 51, 378, 756, 1513, 80, 2.0, 350, 0, 114, 2.49, 2.0 / 3.0});
  // NVIDIA H200 Tensor Core GPU datasheet (https://nvdam.widen.net/s/nb5zzzsjdf/hpc-datasheet-sc23-h200-datasheet-3002446),
  // H200 SXM column: FP32 67, TF32 989*, BF16 1,979*, FP8 3,958* (dense 494.5 / 989 / 1,979); 141GB HBM3e
  // 4.8 TB/s; up to 700 W; NVLink 900 GB/s. 132 SMs (GH100 as H100 SXM; the reference calibration file
  // calibrate/measurements/h200-reference.json records sm_count 132). Price: ~$3.79 (Lambda/RunPod class).
  // Host power: DGX H200 datasheet, ~10.2 kW max, as the DGX H100: 575 W per GPU.
  c.push_back({"H200", 67, 494.5, 989, 1979, 141, 4.8, 700, 900, 132, 3.79, 2.0 / 3.0, 0.803, 575});
  // NVIDIA DGX B200 / HGX B200 datasheets (https://resources.nvidia.com/en-us-dgx-systems/dgx-b200-datasheet,
  // https://www.nvidia.com/en-us/data-center/hgx/), per GPU = system / 8: FP32 75 (600/8), TF32 18 PF*
  // -> 1,125 dense, BF16 36 PF* -> 2,250 dense, FP8 72 PF* -> 4,500 dense; 1,440 GB HBM3e -> 180 GB,
  // 64 TB/s -> 8 TB/s; 1,000 W per GPU; NVLink 5 1.8 TB/s. 148 SMs (two dies of the GB100, as reported in
  // NVIDIA's Blackwell architecture technical brief). Price: ~$5.99.
  // Host power: DGX B200 datasheet, ~14.3 kW max: (14300 - 8 x 1000) / 8 = 787.5 W per GPU.
  c.push_back({"B200", 75, 1125, 2250, 4500, 180, 8.0, 1000, 1800, 148, 5.99, 2.0 / 3.0, 0.776, 787.5, false});
  // AMD Instinct MI300X accelerator data sheet (https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/data-sheets/amd-instinct-mi300x-data-sheet.pdf):
  // FP32 vector 81.7, TF32 653.7, FP16/BF16 1,307.4, FP8 2,614.9 (dense; AMD prints sparse separately);
  // 192 GB HBM3 5.3 TB/s; 750 W; 304 CUs; Infinity Fabric: 7 links x 128 GB/s = 896 GB/s aggregate
  // peer bandwidth per GPU. Price: ~$2.49 (Vultr / RunPod class).
  c.push_back({"MI300X", 81.7, 653.7, 1307.4, 2614.9, 192, 5.3, 750, 896, 304, 2.49, 1.0, 0.601});
  // NVIDIA L40S datasheet (https://resources.nvidia.com/en-us-l40s/l40s-datasheet-28413): FP32 91.6,
  // TF32 366*, BF16 733*, FP8 1,466* (dense 183 / 362.05 / 733); 48 GB GDDR6 864 GB/s; 350 W; no NVLink
  // (PCIe Gen4 only). 142 SMs (AD102 as configured in the L40S). Price: ~$1.09.
  c.push_back({"L40S", 91.6, 183, 362.05, 733, 48, 0.864, 350, 0, 142, 1.09, 1.0});
  return c;
}

const std::vector<GpuSpec>& catalog() {
  static const std::vector<GpuSpec> c = make_catalog();  // immutable after first use
  return c;
}

}  // namespace

double GpuSpec::peak_tflops(Dtype d) const {
  switch (d) {
    case Dtype::fp32: return peak_tflops_fp32;
    case Dtype::tf32: return peak_tflops_tf32;
    case Dtype::bf16:
    case Dtype::fp16: return peak_tflops_bf16;
    case Dtype::fp8: return has_fp8() ? peak_tflops_fp8 : peak_tflops_bf16;
  }
  return peak_tflops_bf16;
}

const GpuSpec* find_gpu(std::string_view name) { return sim::find_named(catalog(), name); }
std::vector<std::string> gpu_names() { return sim::names_in(catalog()); }

}  // namespace cs::models
