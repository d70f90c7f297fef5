#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "calibrate/import/import.hpp"
#include "calibrate/profile_fit.hpp"
#include "models/compute/profile_json.hpp"

using namespace cs::calibrate;
namespace models = cs::models;

TEST_CASE("profile json: a fitted profile round-trips exactly", "[calibrate]") {
  const MeasurementSet set = import_files({std::string(CLUSTERSIM_SOURCE_DIR) + "/calibrate/measurements/h200-reference.json",
                                           std::string(CLUSTERSIM_SOURCE_DIR) + "/calibrate/published/nccl.json"});
  const ProfileFit fit = fit_profile(set, models::find_gpu("H200"));
  const std::string text = models::profile_to_json(fit.profile);
  const models::CalibrationProfile back = models::parse_profile(text, "mem.json");
  CHECK(models::profile_to_json(back) == text);
  REQUIRE(back.compute);
  CHECK(back.compute->gemm.size() == fit.profile.compute->gemm.size());
  CHECK(back.compute->gemm[7].efficiency == fit.profile.compute->gemm[7].efficiency);
  CHECK(back.compute->attention_fwd.half_kv == fit.profile.compute->attention_fwd.half_kv);
  CHECK(back.compute->attention_bwd.heavy_first == fit.profile.compute->attention_bwd.heavy_first);
  CHECK(back.compute->attention_fwd.peak_efficiency > 0);
  REQUIRE(back.comm.fits.size() == fit.profile.comm.fits.size());
  CHECK(back.comm.fits[0].beta_GBps == fit.profile.comm.fits[0].beta_GBps);
  const auto* ar = back.comm.find(models::CollectiveKind::all_reduce, 8, models::CommLevel::nvlink);
  REQUIRE(ar != nullptr);

  // Through a file, written atomically.
  const auto path = std::filesystem::temp_directory_path() / "clustersim-test-profile.json";
  models::write_profile(fit.profile, path.string());
  const auto read = models::read_profile(path.string());
  CHECK(models::profile_to_json(read) == text);
  std::filesystem::remove(path);
}

TEST_CASE("profile json: errors name the file and the JSON path", "[calibrate]") {
  const std::string bad = R"({"format": "clustersim-profile", "version": 1, "gpu": "H200",
    "compute": {"sm_count": 132, "launch_overhead_us": 8,
                "gemm": [{"m": 512, "n": 512, "k": 512, "efficiency": 0.5},
                         {"m": 512, "n": 512, "k": 512, "efficency": 0.5}],
                "memory_bound": [{"kind": "normm", "bytes": 1e6, "efficiency": 0.5}]},
    "comm": [{"collective": "all_reduce", "ranks": 8, "level": "nvlink", "alpha_us": 10, "beta_GBps": -3}]})";
  try {
    models::parse_profile(bad, "p.json");
    FAIL("no error");
  } catch (const cs::InputError& e) {
    const auto& m = e.messages();
    auto has = [&](const std::string& s) {
      for (const auto& x : m)
        if (x.find(s) != std::string::npos) return true;
      return false;
    };
    CHECK(has("p.json: compute.gemm[1].efficiency: missing"));
    CHECK(has("p.json: compute.gemm[1].efficency: unknown key"));
    CHECK(has("p.json: compute.memory_bound[0].kind: unknown kind \"normm\""));
    CHECK(has("p.json: comm[0].beta_GBps: -3 is out of range"));
  }
  const std::string bad_attention = R"({"compute": {"sm_count": 132, "launch_overhead_us": 8,
    "gemm": [{"m": 512, "n": 512, "k": 512, "efficiency": 0.5}],
    "attention_model": {"block_q": 128,
                        "fwd": {"peak_efficiency": 0.7, "half_kv": -1, "ctas_per_sm": 2, "heavy_first": "yes"}}}})";
  try {
    models::parse_profile(bad_attention, "a.json");
    FAIL("no error");
  } catch (const cs::InputError& e) {
    const std::string all = e.what();
    CHECK_THAT(all, Catch::Contains("a.json: compute.attention_model.fwd.half_kv: -1 is out of range"));
    CHECK_THAT(all, Catch::Contains("a.json: compute.attention_model.fwd.heavy_first: expected true or false"));
    CHECK_THAT(all, Catch::Contains("a.json: compute.attention_model.bwd: missing"));
  }
  REQUIRE_THROWS_WITH(models::parse_profile("{\"gpu\": ", "q.json"), Catch::StartsWith("q.json:1: invalid JSON"));
  REQUIRE_THROWS_WITH(models::read_profile("/nonexistent/profile.json"),
                      Catch::Contains("/nonexistent/profile.json: cannot open"));
}

TEST_CASE("profile json: a comm entry's fitted NCCL constants round-trip exactly", "[calibrate]") {
  models::CalibrationProfile p;
  p.gpu = "A100-40GB";
  p.comm.source = "fitted from a log";
  models::CommFit f;
  f.ranks = 2;
  f.level = models::CommLevel::network;
  f.alpha_us = 18.3;
  f.beta_GBps = 6.34;
  f.nccl.fitted = true;
  f.nccl.nodes = 2;
  f.nccl.nic = "ib-hdr200";
  f.nccl.bandwidth_scale_ll = 0.5295;
  f.nccl.bandwidth_scale_ll128 = 0.01505;
  f.nccl.bandwidth_scale_simple = 0.2678;
  f.nccl.hop_latency_extra_us = -1.25;
  f.nccl.ring_chunk_bytes = 1030.5;
  f.nccl.ring_chunk_bytes_ll = 570000.25;
  p.comm.fits.push_back(f);
  const std::string text = models::profile_to_json(p);
  const models::CalibrationProfile back = models::parse_profile(text, "p.json");
  CHECK(models::profile_to_json(back) == text);
  REQUIRE(back.comm.fits.size() == 1);
  const models::NcclConstants& n = back.comm.fits[0].nccl;
  CHECK(n.fitted);
  CHECK(n.nodes == 2);
  CHECK(n.nic == "ib-hdr200");
  CHECK(n.bandwidth_scale_ll == 0.5295);
  CHECK(n.bandwidth_scale_ll128 == 0.01505);
  CHECK(n.bandwidth_scale_simple == 0.2678);
  CHECK(n.hop_latency_extra_us == -1.25);
  CHECK(n.ring_chunk_bytes == 1030.5);
  CHECK(n.ring_chunk_bytes_ll == 570000.25);
  // An entry without the block (every profile before it) is not fitted: the defaults apply.
  models::CommFit plain = f;
  plain.nccl = {};
  p.comm.fits = {plain};
  CHECK_FALSE(models::parse_profile(models::profile_to_json(p), "p.json").comm.fits[0].nccl.fitted);
}

TEST_CASE("profile json: a missing NCCL constant is named with its path", "[calibrate]") {
  const std::string text = R"({"comm": [{"collective": "all_reduce", "ranks": 2, "level": "network", "alpha_us": 1,
    "beta_GBps": 1, "nccl": {"nodes": 2, "bandwidth_scale_LL": 1, "bandwidth_scale_LL128": 1,
    "bandwidth_scale_Simple": 1, "ring_chunk_bytes": 1000}}]})";
  try {
    (void)models::parse_profile(text, "p.json");
    FAIL("accepted");
  } catch (const cs::InputError& e) {
    CHECK(std::string(e.what()) == "p.json: comm[0].nccl.hop_latency_extra_us: missing");
  }
}

TEST_CASE("profile json: a profile without the LL ring chunk takes ring_chunk_bytes for it", "[calibrate]") {
  // Profiles written before the LL protocol had its own chunk carry one ring_chunk_bytes for every protocol.
  const std::string text = R"({"comm": [{"collective": "all_reduce", "ranks": 2, "level": "network", "alpha_us": 1,
    "beta_GBps": 1, "nccl": {"nodes": 2, "bandwidth_scale_LL": 1, "bandwidth_scale_LL128": 1,
    "bandwidth_scale_Simple": 1, "hop_latency_extra_us": 0, "ring_chunk_bytes": 1000}}]})";
  const models::NcclConstants n = models::parse_profile(text, "p.json").comm.fits.at(0).nccl;
  CHECK(n.ring_chunk_bytes == 1000);
  CHECK(n.ring_chunk_bytes_ll == 1000);
}

TEST_CASE("profile json: an LL ring chunk out of range is named with its path", "[calibrate][bad-input]") {
  const std::string text = R"({"comm": [{"collective": "all_reduce", "ranks": 2, "level": "network", "alpha_us": 1,
    "beta_GBps": 1, "nccl": {"nodes": 2, "bandwidth_scale_LL": 1, "bandwidth_scale_LL128": 1,
    "bandwidth_scale_Simple": 1, "hop_latency_extra_us": 0, "ring_chunk_bytes": 1000, "ring_chunk_bytes_LL": 0}}]})";
  try {
    (void)models::parse_profile(text, "p.json");
    FAIL("accepted");
  } catch (const cs::InputError& e) {
    CHECK(std::string(e.what()) == "p.json: comm[0].nccl.ring_chunk_bytes_LL: 0 is out of range (expected a number of bytes in (0, 1e12])");
  }
}

TEST_CASE("profile json: expert_host_issue_us, optional, its default when absent, out of range named", "[calibrate][bad-input]") {
  const std::string base = R"({"compute": {"sm_count": 132, "launch_overhead_us": 8,
    "gemm": [{"m": 512, "n": 512, "k": 512, "efficiency": 0.5}]})";
  CHECK(models::parse_profile(base + "}", "p.json").compute->expert_host_issue_us == models::kDefaultExpertHostIssueUs);
  const std::string stated = R"({"compute": {"sm_count": 132, "launch_overhead_us": 8, "expert_host_issue_us": 35,
    "gemm": [{"m": 512, "n": 512, "k": 512, "efficiency": 0.5}]}})";
  CHECK(models::parse_profile(stated, "p.json").compute->expert_host_issue_us == 35.0);
  const std::string negative = R"({"compute": {"sm_count": 132, "launch_overhead_us": 8, "expert_host_issue_us": -1,
    "gemm": [{"m": 512, "n": 512, "k": 512, "efficiency": 0.5}]}})";
  try {
    models::parse_profile(negative, "p.json");
    FAIL("no error");
  } catch (const cs::InputError& e) {
    CHECK(std::string(e.what()).find("p.json: compute.expert_host_issue_us: -1 is out of range") != std::string::npos);
  }
}
