#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "models/hardware/gpu_catalog.hpp"

using namespace cs::models;

TEST_CASE("gpu catalog: the names scenarios use, in a fixed order", "[models]") {
  const std::vector<std::string> expected = {"A100-40GB", "A100-80GB", "H100-SXM", "H100-PCIe",
                                             "H200",      "B200",      "MI300X",   "L40S",
                                             "GB200",     "GB300",     "B300",     "H800",
                                             "H20",       "MI325X",    "MI355X"};
  CHECK(gpu_names() == expected);
  CHECK(gpu_names() == gpu_names());
  for (const auto& n : expected) {
    const GpuSpec* g = find_gpu(n);
    REQUIRE(g != nullptr);
    CHECK(g->name == n);
  }
  CHECK(find_gpu("H300") == nullptr);
  CHECK(find_gpu("h100-sxm") == nullptr);  // names are exact
}

TEST_CASE("gpu catalog: every GPU has positive datasheet fields and sane orderings", "[models]") {
  for (const auto& n : gpu_names()) {
    INFO(n);
    const GpuSpec& g = *find_gpu(n);
    CHECK(g.peak_tflops_fp32 > 0);
    CHECK(g.peak_tflops_tf32 > 0);
    CHECK(g.peak_tflops_bf16 > 0);
    CHECK(g.peak_tflops_fp8 >= 0);
    CHECK(g.hbm_gib > 0);
    CHECK(g.hbm_tbps > 0);
    CHECK(g.tdp_w > 0);
    CHECK(g.nvlink_gbps >= 0);
    CHECK(g.sm_count > 0);
    CHECK(g.price_per_gpu_hour_usd > 0);
    // Tensor-core formats double per halving of the width (dense): tf32 < bf16 <= fp8.
    CHECK(g.peak_tflops_tf32 < g.peak_tflops_bf16);
    if (g.has_fp8()) CHECK(g.peak_tflops_fp8 == Approx(2 * g.peak_tflops_bf16).epsilon(0.02));
  }
}

TEST_CASE("gpu catalog: datasheet spot checks", "[models]") {
  const GpuSpec& h200 = *find_gpu("H200");
  CHECK(h200.peak_tflops_bf16 == 989);
  CHECK(h200.peak_tflops_fp8 == 1979);
  CHECK(h200.hbm_tbps == 4.8);
  CHECK(h200.hbm_gib == 141);  // HBM "GB" is binary; see gpu_catalog.cpp
  CHECK(h200.sm_count == 132);
  CHECK(h200.nvlink_gbps == 900);

  const GpuSpec& a100 = *find_gpu("A100-80GB");
  CHECK(a100.peak_tflops_bf16 == 312);
  CHECK_FALSE(a100.has_fp8());
  CHECK(a100.sm_count == 108);
  CHECK(a100.nvlink_gbps == 600);
  CHECK(find_gpu("A100-40GB")->hbm_tbps < a100.hbm_tbps);

  CHECK(find_gpu("H100-SXM")->sm_count == 132);
  CHECK(find_gpu("H100-PCIe")->sm_count == 114);
  CHECK(find_gpu("H100-PCIe")->nvlink_gbps == 0);
  CHECK(find_gpu("B200")->nvlink_gbps == 1800);
  CHECK(find_gpu("B200")->sm_count == 148);
  CHECK(find_gpu("MI300X")->sm_count == 304);
  CHECK(find_gpu("MI300X")->nvlink_gbps == 896);
  CHECK(find_gpu("L40S")->has_fp8());
  CHECK(find_gpu("L40S")->nvlink_gbps == 0);
  CHECK(find_gpu("L40S")->sm_count == 142);
}

TEST_CASE("gpu catalog: peak per dtype, fp16 = bf16, fp8 falls back to bf16", "[models]") {
  const GpuSpec& h100 = *find_gpu("H100-SXM");
  CHECK(h100.peak_tflops(Dtype::fp32) == h100.peak_tflops_fp32);
  CHECK(h100.peak_tflops(Dtype::tf32) == h100.peak_tflops_tf32);
  CHECK(h100.peak_tflops(Dtype::bf16) == h100.peak_tflops_bf16);
  CHECK(h100.peak_tflops(Dtype::fp16) == h100.peak_tflops_bf16);
  CHECK(h100.peak_tflops(Dtype::fp8) == h100.peak_tflops_fp8);
  const GpuSpec& a100 = *find_gpu("A100-40GB");
  CHECK(a100.peak_tflops(Dtype::fp8) == a100.peak_tflops_bf16);

  GpuSpec custom;  // a scenario-defined GPU without fp8
  custom.peak_tflops_bf16 = 100;
  CHECK_FALSE(custom.has_fp8());
  CHECK(custom.peak_tflops(Dtype::fp8) == 100);
}
