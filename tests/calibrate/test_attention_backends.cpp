// The SDPA backends file of scripts/attention_backends.py: its import (which rows the compute model has a
// kernel for, which it skips and why), the FlashAttention-2 fit it feeds, and its bad input.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "calibrate/fit/compute_fit.hpp"
#include "calibrate/import/import.hpp"
#include "calibrate/import/measurement_json.hpp"
#include "calibrate/check/validate.hpp"
#include "models/compute/compute_model.hpp"
#include "models/compute/profile_json.hpp"
#include "synthetic_harness.hpp"

using namespace cs::calibrate;
namespace models = cs::models;

namespace {

const models::GpuSpec& h200() {
  const auto* g = models::find_gpu("H200");
  REQUIRE(g != nullptr);
  return *g;
}

// tests/calibrate/data/attention_backends_synthetic.json: one shape (b2 hq16 s4096 d128) through cuDNN,
// FLASH_ATTENTION and EFFICIENT_ATTENTION, and with an ALiBi bias through EFFICIENT and MATH; round
// made-up times, and one entry of the script's "errors" list.
std::string fixture() {
  return std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/calibrate/data/attention_backends_synthetic.json";
}

bool any_note(const std::vector<std::string>& notes, std::initializer_list<const char*> parts) {
  return std::any_of(notes.begin(), notes.end(), [&](const std::string& n) {
    return std::all_of(parts.begin(), parts.end(), [&](const char* p) { return n.find(p) != std::string::npos; });
  });
}

}  // namespace

TEST_CASE("attention backends: cuDNN and FA2 rows import, the others are skipped with a reason", "[calibrate]") {
  const MeasurementSet set = import_file(fixture());
  CHECK(set.gpu == "NVIDIA H200");
  CHECK(set.sm_count == 0);  // the file does not say; the catalog's H200 (132) stands in
  // cuDNN and FLASH_ATTENTION rows, forward and forward+backward each.
  REQUIRE(set.compute.size() == 4);
  const ComputeMeasurement& cudnn_fwd = set.compute[0];
  CHECK(cudnn_fwd.kind == ComputeKind::attention_fwd);
  CHECK(cudnn_fwd.attention.kernel == models::AttentionImpl::native);
  CHECK(cudnn_fwd.attention_backend == "cudnn");
  CHECK(cudnn_fwd.time_s == Approx(0.5e-3));
  CHECK(cudnn_fwd.where == fixture() + ": rows[0].fwd_ms");
  CHECK(compute_group(cudnn_fwd) == "attention fwd cudnn");
  const ComputeMeasurement& fa2_fb = set.compute[3];
  CHECK(fa2_fb.kind == ComputeKind::attention_fwdbwd);
  CHECK(fa2_fb.attention.kernel == models::AttentionImpl::flash2);
  CHECK(fa2_fb.time_s == Approx(3.6e-3));
  CHECK(compute_group(fa2_fb) == "attention fwd+bwd flash2");
  CHECK(fa2_fb.attention.batch == 2);
  CHECK(fa2_fb.attention.heads_q == 16);
  CHECK(fa2_fb.attention.seq_kv == 4096);
  CHECK(fa2_fb.attention.causal);
  // The FA2 row is predicted by the FA2 path of the compute model: on a profile without an FA2 curve
  // exactly the native kernel's time at 2/3 of its efficiency, launch overhead apart.
  models::ComputeProfile d = models::default_compute_profile();
  d.attention_flash2.reset();
  const double L = d.launch_overhead_us * 1e-6;
  ComputeMeasurement native_fwd = set.compute[2];
  native_fwd.attention.kernel = models::AttentionImpl::native;
  CHECK(predict_compute_s(set.compute[2], h200(), d) - L ==
        Approx((predict_compute_s(native_fwd, h200(), d) - L) * 1.5).epsilon(1e-9));
  // Skipped, each with its reason and every row it concerns; the script's own failures are noted.
  INFO(set.notes.size());
  CHECK(set.notes.size() == 3);
  CHECK(any_note(set.notes, {"rows[2]", "EFFICIENT_ATTENTION", "no kernel"}));
  CHECK(any_note(set.notes, {"rows[3], rows[4]", "bias", "no kernel"}));
  CHECK(any_note(set.notes, {"errors[0]", "not measured", "made-up refusal"}));
}

TEST_CASE("attention backends: the FlashAttention-2 fit recovers a known curve", "[calibrate]") {
  // Synthetic FLASH_ATTENTION rows made by the compute model itself from a known FA2 curve (forward
  // e_max 0.40, c 700 KV tokens; backward e_max 0.36, c 1500) on the default profile, and a copy sweep
  // whose zero-size intercept is the default launch overhead. No native rows, so the FA2 backward is
  // fitted under the default profile's host floor (311 us), the one the rows were made with: b1 hq8
  // s4096's forward (~0.1 ms) waits for it, the others do not.
  const auto& gpu = h200();
  models::ComputeProfile truth = models::default_compute_profile();
  models::Flash2AttentionModel fa2;
  fa2.mma_sync_fraction = gpu.mma_sync_fraction;
  fa2.fwd = truth.attention_fwd;
  fa2.fwd.peak_efficiency = 0.40;
  fa2.fwd.half_kv = 700;
  fa2.bwd = truth.attention_bwd;
  fa2.bwd.peak_efficiency = 0.36;
  fa2.bwd.half_kv = 1500;
  truth.attention_flash2 = fa2;  // no measured points: no cap, the bare curve
  const auto pts = testing::synthetic_harness(
      truth, gpu, {{8, 32, 2048}, {4, 32, 4096}, {2, 32, 8192}, {1, 32, 16384}, {2, 16, 4096}, {1, 8, 4096}},
      models::AttentionImpl::flash2, "flash2");
  std::vector<std::string> notes;
  const auto fitted = fit_compute_profile(pts, gpu, gpu.sm_count, "synthetic", notes);
  REQUIRE(fitted);
  REQUIRE(fitted->attention_flash2);
  const auto& got = *fitted->attention_flash2;
  CHECK(got.mma_sync_fraction == gpu.mma_sync_fraction);
  CHECK(got.fwd.peak_efficiency == Approx(0.40).epsilon(0.01));
  CHECK(got.fwd.half_kv == Approx(700).epsilon(0.02));
  CHECK(got.bwd.peak_efficiency == Approx(0.36).epsilon(0.01));
  CHECK(got.bwd.half_kv == Approx(1500).epsilon(0.02));
  CHECK(got.points.size() == 6);
  // No native rows: the profile has no native attention model of its own (the default's stands in).
  CHECK(fitted->attention_fwd.peak_efficiency == 0);
  // The fitted profile gives the rows back.
  const auto s = summarize(validate_compute(pts, gpu, *fitted));
  for (const auto& g : s.groups)
    if (g.group.rfind("attention", 0) == 0) CHECK(g.mape < 0.01);
  // And the profile file keeps the curve.
  models::CalibrationProfile file;
  file.gpu = "H200";
  file.compute = *fitted;
  file.comm.source = "synthetic";
  const std::string text = models::profile_to_json(file);
  const models::CalibrationProfile back = models::parse_profile(text, "fa2.json");
  REQUIRE(back.compute);
  REQUIRE(back.compute->attention_flash2);
  CHECK(back.compute->attention_flash2->bwd.half_kv == got.bwd.half_kv);
  CHECK(back.compute->attention_flash2->points.size() == 6);
  CHECK(models::profile_to_json(back) == text);
}

TEST_CASE("attention backends: a missing field or a wrong type names the file and the row", "[calibrate]") {
  const std::string head = R"({"format": "clustersim-attention-backends", "version": 1, "device": "NVIDIA H200", "rows": [)";
  const std::string row = R"("backend": "FLASH_ATTENTION", "b": 1, "hq": 8, "hkv": 8, "seq": 4096, "d": 128)";
  REQUIRE_THROWS_WITH(
      measurements_from_json_text(head + "{" + row + R"(, "alibi_bias": "no", "fwd_ms": 1, "fwdbwd_ms": 3}]})", "bad.json"),
      Catch::Contains("bad.json: rows[0].alibi_bias: expected true or false"));
  REQUIRE_THROWS_WITH(
      measurements_from_json_text(head + "{" + row + R"(, "alibi_bias": false, "fwd_ms": 1}]})", "bad.json"),
      Catch::Contains("bad.json: rows[0].fwdbwd_ms: missing"));
  REQUIRE_THROWS_WITH(measurements_from_json_text(R"({"format": "clustersim-attention-backends", "version": 1})", "bad.json"),
                      Catch::Contains("bad.json: rows: missing"));
}
