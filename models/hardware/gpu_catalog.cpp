#include "models/hardware/gpu_catalog.hpp"

#include "sim/base/name_table.hpp"

#include <algorithm>
#include <cmath>

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
  // Host link: PCIe Gen4 x16 (same datasheet, "PCIe Gen4: 64GB/s", both directions).
  // Host power: DGX A100 datasheet, 6.5 kW max system power: (6500 - 8 x 400) / 8 = 412.5 W per GPU.
  c.push_back({"A100-40GB", 19.5, 156, 312, 0, 40, 1.555, 400, 600, 108, 1.29, 1.0, 0.859, 412.5, true, 0, 4});
  // Same datasheet, A100 80GB SXM column: 80GB HBM2e, 2,039 GB/s; otherwise as above. Price: Lambda ~$1.79.
  c.push_back({"A100-80GB", 19.5, 156, 312, 0, 80, 2.039, 400, 600, 108, 1.79, 1.0, 0.859, 412.5, true, 0, 4});
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
  // FP4: DGX B200 datasheet, 144 PF* FP4 -> 72 PF dense / 8 = 9,000 per GPU. Host link PCIe Gen5.
  c.push_back({"B200", 75, 1125, 2250, 4500, 180, 8.0, 1000, 1800, 148, 5.99, 2.0 / 3.0, 0.776, 787.5, false, 9000, 5});
  // AMD Instinct MI300X accelerator data sheet (https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/data-sheets/amd-instinct-mi300x-data-sheet.pdf):
  // FP32 vector 81.7, TF32 653.7, FP16/BF16 1,307.4, FP8 2,614.9 (dense; AMD prints sparse separately);
  // 192 GB HBM3 5.3 TB/s; 750 W; 304 CUs; Infinity Fabric: 7 links x 128 GB/s = 896 GB/s aggregate
  // peer bandwidth per GPU. Price: ~$2.49 (Vultr / RunPod class).
  c.push_back({"MI300X", 81.7, 653.7, 1307.4, 2614.9, 192, 5.3, 750, 896, 304, 2.49, 1.0, 0.601});
  // NVIDIA L40S datasheet (https://resources.nvidia.com/en-us-l40s/l40s-datasheet-28413): FP32 91.6,
  // TF32 366*, BF16 733*, FP8 1,466* (dense 183 / 362.05 / 733); 48 GB GDDR6 864 GB/s; 350 W; no NVLink
  // (PCIe Gen4 only). 142 SMs (AD102 as configured in the L40S). Price: ~$1.09.
  c.push_back({"L40S", 91.6, 183, 362.05, 733, 48, 0.864, 350, 0, 142, 1.09, 1.0, 0.0, 0.0, true, 0, 4});
  // ---- 2025-26 parts. Columns after the L40S's: fp8_needs_transposed_copy, peak_tflops_fp4 (dense),
  // pcie_gen, scaleup_domain_gpus. Blackwell reads FP8 column-wise natively (false), see the field.
  //
  // NVIDIA GB200 NVL72 datasheet (https://www.nvidia.com/en-us/data-center/gb200-nvl72/, "Specifications",
  // rack totals for 72 GPUs, tensor figures with sparsity*): FP4 1,440 PF*, FP8/FP6 720 PF*, FP16/BF16
  // 360 PF*, TF32 180 PF*, FP32 5,760 TF; up to 13.4 TB HBM3e at 576 TB/s; NVLink 130 TB/s (1.8 TB/s per GPU).
  // Per GPU, dense: FP4 10,000, FP8 5,000, BF16 2,500, TF32 1,250, FP32 80; 13.4 TB / 72 = 186 GB HBM3e
  // (stored as GiB, the catalog's convention), 8 TB/s. Up to 1,200 W per Blackwell GPU in the GB200
  // superchip (2,700 W for Grace + 2 GPUs). 148 SMs (the B200 die pair). Scale-out: one ConnectX-7 400G per
  // GPU over PCIe Gen5. Domain: the NVL72 rack, 72 GPUs in 18 compute trays of 4. Host power: a GB200 NVL72
  // rack draws ~120 kW (NVIDIA's reference figure, as reported for the GB200 NVL72 reference architecture):
  // (120,000 - 72 x 1,200) / 72 = 466.7 W per GPU for Grace, NVSwitch trays, NICs and fans. Price: ~$8 a
  // GPU-hour (rough, 2025-26 listings vary $6-11). Matmul ceiling: no MAMF figure for GB200 is published;
  // it is the B200's die pair, so the B200's measured 0.776 (above) is taken, not the H200 harness's 0.805
  // that an unknown ceiling would carry over.
  c.push_back({"GB200", 80, 1250, 2500, 5000, 186, 8.0, 1200, 1800, 148, 8.0, 2.0 / 3.0, 0.776, 466.7, false, 10000, 5, 72});
  // Host memory: each Grace CPU is joined to its two GPUs by NVLink-C2C (900 GB/s bidirectional, 450 each
  // way) and holds LPDDR5X at up to 512 GB/s (the NVL72 datasheet's 18.4 TB/s over 36 Grace CPUs). The
  // memory is the narrower path, shared by the superchip's two GPUs: 512 / 2 x 0.80 (the achievable share
  // taken for PCIe, link_catalog.cpp; no measured Grace figure) = 204.8 GB/s per GPU. Derived, not measured.
  c.back().host_memory_GBps = 512.0 / 2 * 0.80;
  // NVIDIA GB300 NVL72 datasheet (https://www.nvidia.com/en-us/data-center/gb300-nvl72/): FP4 1,440 PF
  // (1,080 PF dense), FP8 720 PF*, BF16 360 PF*, TF32 180 PF*, FP32 6 PF... per GPU dense: FP4 15,000,
  // FP8 5,000, BF16 2,500, TF32 1,250, FP32 80; up to 21 TB HBM3e -> 288 GB per GPU, 576 TB/s -> 8 TB/s;
  // 1,400 W per Blackwell Ultra GPU; 160 SMs; ConnectX-8 800G per GPU on PCIe Gen6; NVL72 domain.
  // Host power as the GB200 NVL72 rack's per-GPU share (no separate figure). Price: ~$10 (rough).
  c.push_back({"GB300", 80, 1250, 2500, 5000, 288, 8.0, 1400, 1800, 160, 10.0, 2.0 / 3.0, 0.0, 466.7, false, 15000, 6, 72});
  c.back().host_memory_GBps = 512.0 / 2 * 0.80;  // Grace over NVLink-C2C, as GB200's (above)
  // NVIDIA HGX B300 / DGX B300 datasheets (https://www.nvidia.com/en-us/data-center/hgx/), 8 GPUs: FP4
  // 144 PF* / 108 PF dense, FP8 72 PF*, BF16 36 PF*, TF32 18 PF*; 2.3 TB HBM3e, 64 TB/s; NVLink 5 1.8 TB/s
  // per GPU. Per GPU dense: FP4 13,500, FP8 4,500, BF16 2,250, TF32 1,125, FP32 75; 288 GB; 8 TB/s;
  // 1,100 W; 160 SMs; ConnectX-8 800G on PCIe Gen6; HGX board: an 8-GPU domain. Host power: DGX B300
  // ~14.5 kW max: (14,500 - 8 x 1,100) / 8 = 712.5 W. Price: ~$7 (rough).
  c.push_back({"B300", 75, 1125, 2250, 4500, 288, 8.0, 1100, 1800, 160, 7.0, 2.0 / 3.0, 0.0, 712.5, false, 13500, 6});
  // NVIDIA H800 SXM5 (the export variant of the H100 SXM; NVIDIA H800 product brief): the H100 SXM's
  // GH100 and tensor peaks, 80GB HBM3 3.35 TB/s, 700 W, but NVLink cut to 400 GB/s per GPU (both
  // directions). DeepSeek-V3 technical report (arXiv:2412.19437, sec. 3.1) measures ~160 GB/s NVLink per
  // GPU in its H800 nodes, one 400 Gb/s InfiniBand NIC per GPU (~50 GB/s). Host power as the DGX H100.
  c.push_back({"H800", 67, 494.5, 989, 1979, 80, 3.35, 700, 400, 132, 2.99, 2.0 / 3.0, 0.803, 575, true, 0, 5});
  // NVIDIA H20 (HGX H20, the 2024 export part, NVIDIA product brief as published by its OEMs): FP8 296 TF,
  // BF16 148 TF, TF32 74 TF, FP32 44 TF (dense); 96 GB HBM3 4.0 TB/s; NVLink 900 GB/s; 400 W; 78 SMs.
  // Price: ~$1.5 (rough; rented mainly in China).
  c.push_back({"H20", 44, 74, 148, 296, 96, 4.0, 400, 900, 78, 1.5, 2.0 / 3.0, 0.0, 0.0, true, 0, 5});
  // AMD Instinct MI325X data sheet (amd.com, instinct-tech-docs/product-briefs/instinct-mi325x-datasheet):
  // the MI300X's CDNA 3 compute (FP32 vector 163.4, TF32 653.7, BF16 1,307.4, FP8 2,614.9 dense), 256 GB
  // HBM3E at 6 TB/s, 1,000 W, 304 CUs, Infinity Fabric 7 x 128 GB/s = 896 GB/s; 8-GPU OAM platform.
  // Price: ~$3 (rough).
  c.push_back({"MI325X", 163.4, 653.7, 1307.4, 2614.9, 256, 6.0, 1000, 896, 304, 3.0, 1.0, 0.0, 0.0, true, 0, 5});
  // AMD Instinct MI355X data sheet (amd.com, CDNA 4): FP16/BF16 2,516.6 TF, FP8 5,033.2 TF, MXFP4 10,066.3
  // TF (dense), FP32 vector 157.3 TF (CDNA 4 drops TF32; the FP32 matrix rate is stored for it); 288 GB
  // HBM3E 8 TB/s; 1,400 W; 256 CUs; Infinity Fabric 7 x 153.6 GB/s = 1,075.2 GB/s; 8-GPU platform; PCIe
  // Gen5 host link. FP8 layouts taken as Hopper's (no source), as for the MI300X. Price: ~$3.5 (rough).
  c.push_back({"MI355X", 157.3, 157.3, 2516.6, 5033.2, 288, 8.0, 1400, 1075.2, 256, 3.5, 1.0, 0.0, 0.0, true, 10066.3, 5});
  return c;
}

const std::vector<GpuSpec>& catalog() {
  static const std::vector<GpuSpec> c = make_catalog();  // immutable after first use
  return c;
}

}  // namespace

double GpuSpec::clock_fraction() const {
  if (power_limit_w <= 0 || tdp_w <= 0 || power_limit_w >= tdp_w) return 1.0;
  return std::cbrt(power_limit_w / tdp_w);
}

double GpuSpec::peak_tflops(Dtype d) const {
  switch (d) {
    case Dtype::fp32: return peak_tflops_fp32;
    case Dtype::tf32: return peak_tflops_tf32;
    case Dtype::bf16:
    case Dtype::fp16: return peak_tflops_bf16;
    case Dtype::fp8: return has_fp8() ? peak_tflops_fp8 : peak_tflops_bf16;
    case Dtype::fp4: return peak_tflops_fp4 > 0 ? peak_tflops_fp4 : peak_tflops(Dtype::fp8);
  }
  return peak_tflops_bf16;
}

double GpuSpec::host_path_GBps() const {
  const double lane_GBps = pcie_gen <= 3 ? 1.0 : pcie_gen == 4 ? 2.0 : pcie_gen == 5 ? 4.0 : 8.0;
  return lane_GBps * 16 * 0.80;
}

const GpuSpec* find_gpu(std::string_view name) { return sim::find_named(catalog(), name); }
std::vector<std::string> gpu_names() { return sim::names_in(catalog()); }

}  // namespace cs::models
