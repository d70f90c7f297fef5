#include <catch2/catch.hpp>

#include <cmath>

#include "calibrate/fit/compute_fit.hpp"
#include "calibrate/import/import.hpp"
#include "calibrate/import/measurement_json.hpp"
#include "calibrate/profile_fit.hpp"
#include "calibrate/check/validate.hpp"
#include "models/compute/compute_model.hpp"
#include "synthetic_harness.hpp"

using namespace cs::calibrate;
namespace models = cs::models;

namespace {

const MeasurementSet& reference() {
  static const MeasurementSet set =
      import_file(std::string(CLUSTERSIM_SOURCE_DIR) + "/calibrate/measurements/h200-reference.json");
  return set;
}

const models::GpuSpec& h200() {
  const auto* g = models::find_gpu("H200");
  REQUIRE(g != nullptr);
  return *g;
}

double group_mape(const ValidationSummary& s, const std::string& group) {
  for (const auto& g : s.groups)
    if (g.group == group) return g.mape;
  FAIL("no group " << group);
  return 1;
}

}  // namespace

TEST_CASE("compute fit: the H200 reference imports completely", "[calibrate]") {
  const MeasurementSet& set = reference();
  CHECK(set.gpu == "NVIDIA H200");
  CHECK(set.sm_count == 132);
  int gemm = 0, fp8 = 0, att = 0, mem = 0;
  for (const auto& m : set.compute) {
    if (m.kind == ComputeKind::gemm) (m.dtype == models::Dtype::fp8 ? fp8 : gemm)++;
    if (m.kind == ComputeKind::attention_fwd || m.kind == ComputeKind::attention_fwdbwd) ++att;
    if (m.kind == ComputeKind::memory_bound) ++mem;
  }
  CHECK(gemm == 153);    // 150 bf16 + fp32, fp16, tf32
  CHECK(fp8 == 7);
  CHECK(att == 14);      // 7 shapes x (fwd, fwd+bwd)
  CHECK(mem == 12);      // 8 kernels + 4 copies
  CHECK(guess_gpu(set.gpu) == models::find_gpu("H200"));
}

TEST_CASE("compute fit: refitting the H200 reference gives the built-in default profile", "[calibrate]") {
  // scripts/derive_compute_defaults.py made models/compute/compute_defaults.cpp from the same files (the reference,
  // and the SDPA backends file for FlashAttention-2) with the same equations (compute_fit.hpp); the C++
  // fit must agree with it to the printed precision.
  std::vector<std::string> notes;
  MeasurementSet set = reference();
  set.append(import_file(std::string(CLUSTERSIM_SOURCE_DIR) +
                         "/calibrate/measurements/h200-attention-backends-2026-11-30.json"));
  const auto fitted = fit_compute_profile(set.compute, h200(), set.sm_count, "test", notes);
  REQUIRE(fitted);
  const models::ComputeProfile& d = models::default_compute_profile();
  CHECK(fitted->sm_count == d.sm_count);
  CHECK(fitted->launch_overhead_us == Approx(d.launch_overhead_us).margin(1e-4));
  CHECK(fitted->fp8_gemm_speedup_efficiency == Approx(d.fp8_gemm_speedup_efficiency).margin(1e-6));
  REQUIRE(fitted->gemm.size() == d.gemm.size());
  for (std::size_t i = 0; i < d.gemm.size(); ++i) {
    CHECK(fitted->gemm[i].m == d.gemm[i].m);
    CHECK(fitted->gemm[i].k == d.gemm[i].k);
    CHECK(fitted->gemm[i].efficiency == Approx(d.gemm[i].efficiency).margin(1e-6));
  }
  REQUIRE(fitted->attention.size() == d.attention.size());
  for (std::size_t i = 0; i < d.attention.size(); ++i) {
    CHECK(fitted->attention[i].fwd_efficiency == Approx(d.attention[i].fwd_efficiency).margin(1e-6));
    CHECK(fitted->attention[i].fwdbwd_efficiency == Approx(d.attention[i].fwdbwd_efficiency).margin(1e-6));
  }
  // The attention model's (e_max, c): same search in both languages, printed to 6 and 3 decimals.
  CHECK(fitted->attention_block_q == d.attention_block_q);
  for (auto [f, def] : {std::pair{&fitted->attention_fwd, &d.attention_fwd},
                        std::pair{&fitted->attention_bwd, &d.attention_bwd}}) {
    CHECK(f->peak_efficiency == Approx(def->peak_efficiency).margin(1e-5));
    CHECK(f->half_kv == Approx(def->half_kv).margin(1e-2));
    CHECK(f->ctas_per_sm == def->ctas_per_sm);
    CHECK(f->heavy_first == def->heavy_first);
  }
  CHECK(fitted->attention_host_floor_us == Approx(d.attention_host_floor_us).margin(1e-2));
  REQUIRE(fitted->attention_flash2);
  REQUIRE(d.attention_flash2);
  CHECK(fitted->attention_flash2->mma_sync_fraction == d.attention_flash2->mma_sync_fraction);
  for (auto [f, def] : {std::pair{&fitted->attention_flash2->fwd, &d.attention_flash2->fwd},
                        std::pair{&fitted->attention_flash2->bwd, &d.attention_flash2->bwd}}) {
    CHECK(f->peak_efficiency == Approx(def->peak_efficiency).margin(1e-5));
    CHECK(f->half_kv == Approx(def->half_kv).margin(1e-2));
    CHECK(f->ctas_per_sm == def->ctas_per_sm);
    CHECK(f->heavy_first == def->heavy_first);
  }
  REQUIRE(fitted->attention_flash2->points.size() == d.attention_flash2->points.size());
  for (std::size_t i = 0; i < d.attention_flash2->points.size(); ++i)
    CHECK(fitted->attention_flash2->points[i].fwd_efficiency ==
          Approx(d.attention_flash2->points[i].fwd_efficiency).margin(1e-6));
  REQUIRE(fitted->memory_bound.size() == d.memory_bound.size());
  for (std::size_t i = 0; i < d.memory_bound.size(); ++i) {
    CHECK(fitted->memory_bound[i].kind == d.memory_bound[i].kind);
    CHECK(fitted->memory_bound[i].efficiency == Approx(d.memory_bound[i].efficiency).margin(1e-6));
  }
}

TEST_CASE("compute fit: measured points are reproduced by the simulator's compute model", "[calibrate]") {
  std::vector<std::string> notes;
  const auto fitted = fit_compute_profile(reference().compute, h200(), 132, "test", notes);
  REQUIRE(fitted);
  const auto rows = validate_compute(reference().compute, h200(), *fitted);
  const auto s = summarize(rows);
  // GEMM: exact by construction except for shapes measured more than once. Attention is a fitted
  // model (2 parameters per pass and the harness's host floor, compute_model.hpp), so its in-sample
  // error is its residual; the largest are b4 hq16 and b1 hq64 at s2048 (same b*hq and s, backward
  // times 25% apart, which the model splits).
  CHECK(group_mape(s, "gemm bf16") < 0.02);
  CHECK(group_mape(s, "attention fwd") < 0.04);
  CHECK(group_mape(s, "attention fwd+bwd") < 0.06);
}

TEST_CASE("compute fit: leave-one-out on the H200 reference, GEMM under 8%", "[calibrate]") {
  const auto rows = validate_compute_leave_one_out(reference().compute, h200(), 132);
  const auto s = summarize(rows);
  INFO(validation_text(rows, s, 10));
  CHECK(group_mape(s, "gemm bf16") < 0.08);
  // Attention: the issue's target is 10%. Forward 6.3% (4.3% but for the s8192 shape, which, left
  // out, meets the cap at the best remaining efficiency); forward+backward 7.3%, the worst being the
  // b4 hq16 / b1 hq64 pair at s2048 (same b*hq and s, backward 25% apart). Without the harness's host
  // floor in the backward fit (compute_model.hpp) forward+backward was 12.7%: b1 hq8 hkv1 s4096, whose
  // forward ends 0.17 ms before the host issues the backward, came out 27% fast.
  CHECK(group_mape(s, "attention fwd") < 0.08);
  CHECK(group_mape(s, "attention fwd+bwd") < 0.10);
}

TEST_CASE("compute fit: the backward fit recovers a known host floor", "[calibrate]") {
  // Synthetic harness: forward and forward+backward times made by the model itself with backward
  // e_max 0.7, c 800, the default forward model, and a host floor of 250 us. Short shapes (forward
  // below 250 us) wait for the host; the fit must give the floor back, and (e_max, c) with it.
  const auto& gpu = h200();
  models::ComputeProfile truth = models::default_compute_profile();
  truth.attention_bwd.peak_efficiency = 0.7;
  truth.attention_bwd.half_kv = 800;
  truth.attention_host_floor_us = 250;
  truth.attention.clear();  // no measured points: no cap at the best measured efficiency, the bare model
  const auto pts = testing::synthetic_harness(
      truth, gpu, {{1, 8, 2048}, {1, 8, 4096}, {1, 32, 4096}, {2, 32, 4096}, {1, 32, 8192}, {4, 16, 2048}},
      models::AttentionImpl::native, "");
  std::vector<std::string> notes;
  const auto fitted = fit_compute_profile(pts, gpu, gpu.sm_count, "synthetic", notes);
  REQUIRE(fitted);
  CHECK(fitted->launch_overhead_us == Approx(truth.launch_overhead_us).epsilon(1e-6));
  CHECK(fitted->attention_host_floor_us == Approx(250).margin(1.0));
  CHECK(fitted->attention_bwd.peak_efficiency == Approx(0.7).epsilon(0.01));
  CHECK(fitted->attention_bwd.half_kv == Approx(800).epsilon(0.02));
}

TEST_CASE("compute fit: harness JSON with GEMMs, kernels and NCCL points imports", "[calibrate]") {
  const std::string text = R"({"format": "clustersim-bench", "version": 1, "device": "NVIDIA H100 80GB HBM3",
    "sm_count": 132, "gpu_count": 8,
    "gemm": [{"m": 4096, "n": 4096, "k": 4096, "dtype": "bfloat16", "ms": 0.25, "origin": "square"},
             {"m": 8, "n": 8, "k": 8, "dtype": "bfloat16", "error": "no cuBLASLt algorithm"}],
    "memory_bound": [{"op": "rms_norm", "elems": 16777216, "bytes": 67108864, "ms": 0.05}],
    "d2d_copy": [{"bytes": 134217728, "ms": 0.05}, {"bytes": 536870912, "ms": 0.17}],
    "nccl": [{"collective": "all_reduce", "ranks": 8, "nodes": 1, "algorithm": "default", "bytes": 1048576,
              "time_us": 30.5, "in_place": false},
             {"collective": "all_reduce", "ranks": 8, "nodes": 1, "algorithm": "default", "bytes": 134217728,
              "time_us": 600.0, "in_place": false}]})";
  const MeasurementSet set = measurements_from_json_text(text, "bench.json");
  CHECK(set.compute.size() == 4);
  CHECK(set.comm.size() == 2);
  CHECK(set.notes.size() == 1);  // the GEMM that was not measured
  const ProfileFit fit = fit_profile(set, nullptr);
  CHECK(fit.profile.gpu == "H100-SXM");
  REQUIRE(fit.profile.compute);
  CHECK(fit.profile.compute->gemm.size() == 1);
  REQUIRE(fit.profile.comm.fits.size() == 1);
  CHECK(fit.profile.comm.fits[0].points == 2);
}

TEST_CASE("compute fit: bad measurement JSON names file and path", "[calibrate]") {
  const std::string text = R"({"gemm": [{"m": 4096, "n": -1, "k": 4096, "dtype": "bfloat16", "ms": 0.25}]})";
  REQUIRE_THROWS_WITH(measurements_from_json_text(text, "bad.json"), Catch::Contains("bad.json: gemm[0].n: expected a positive integer"));
}
