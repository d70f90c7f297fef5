#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "calibrate/fit/comm_fit.hpp"
#include "calibrate/import/nccl_tests_log.hpp"
#include "models/compute/comm_profile.hpp"

using namespace cs::calibrate;
using cs::models::CollectiveKind;

TEST_CASE("alpha-beta fit: exact data gives back alpha and beta exactly", "[calibrate]") {
  // t = 20 us + x / 400 GB/s, x = 2(n-1)/n S for an 8-rank all-reduce: a straight line, no noise.
  std::vector<double> x, t;
  for (double s = 8; s <= 8.0 * (1 << 30); s *= 2) {
    x.push_back(1.75 * s);
    t.push_back(20e-6 + 1.75 * s / 400e9);
  }
  const AlphaBetaFit f = fit_alpha_beta(x, t);
  CHECK(f.alpha_s == Approx(20e-6).epsilon(1e-9));
  CHECK(f.beta_Bps == Approx(400e9).epsilon(1e-9));
  CHECK(f.mape < 1e-9);
  CHECK(f.r2 == Approx(1.0));
}

TEST_CASE("alpha-beta fit: recovers alpha and beta within 2% from noisy nccl-tests-style data", "[calibrate]") {
  // Synthetic all_reduce_perf output, 8 ranks, 8 B .. 8 GiB doubling, out-of-place and in-place columns:
  // t = alpha + 2(n-1)/n S / beta with alpha = 25 us, beta = 360 GB/s, 3% multiplicative Gaussian noise
  // (fixed seed), and three outlier rows 60% slow (a noisy neighbour). Printed like nccl-tests (time in us
  // with two decimals, busbw in GB/s), parsed back by the log importer, then fitted.
  const double alpha = 25e-6, beta = 360e9;
  const int n = 8;
  std::mt19937_64 rng(12345);
  std::normal_distribution<double> noise(0.0, 0.03);
  std::string log = "# nThread 1 nGpus 8 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20\n#\n";
  for (int r = 0; r < n; ++r)
    log += "#  Rank  " + std::to_string(r) + " Group  0 Pid   4242 on     node01 device  " + std::to_string(r) +
           " [0x18] NVIDIA H100 80GB HBM3\n";
  log += "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";
  int row = 0;
  for (double s = 8; s <= 8.0 * (1 << 30); s *= 2, ++row) {
    char line[256];
    double t[2];
    for (double& ti : t) {
      ti = (alpha + 1.75 * s / beta) * (1.0 + noise(rng));
      if (row == 5 || row == 14 || row == 22) ti *= 1.6;
    }
    std::snprintf(line, sizeof line, "%12.0f  %12.0f  %8s  %6s  %6i  %7.2f  %6.2f  %6.2f  %6i  %7.2f  %6.2f  %6.2f  %6i\n",
                  s, s / 4, "float", "sum", -1, t[0] * 1e6, s / t[0] * 1e-9, s / t[0] * 1e-9 * 1.75, 0, t[1] * 1e6,
                  s / t[1] * 1e-9, s / t[1] * 1e-9 * 1.75, 0);
    log += line;
  }
  const NcclTestsLog parsed = parse_nccl_tests_log(log, "synthetic-all_reduce.log");
  REQUIRE(parsed.problems.empty());
  REQUIRE(parsed.row_count() == 31);
  const MeasurementSet set = nccl_tests_measurements(parsed);
  REQUIRE(set.comm.size() == 62);
  std::vector<std::string> notes;
  const auto fits = fit_comm(set, notes);
  REQUIRE(fits.size() == 1);
  const auto& f = fits[0].fit;
  CHECK(f.collective == CollectiveKind::all_reduce);
  CHECK(f.ranks == 8);
  CHECK(f.level == cs::models::CommLevel::nvlink);
  CHECK(f.alpha_us == Approx(25.0).epsilon(0.02));
  CHECK(f.beta_GBps == Approx(360.0).epsilon(0.02));
  CHECK(f.r2 > 0.99);
  CHECK(fits[0].quality.points == 62);
}

TEST_CASE("alpha-beta fit: a negative intercept is pinned at zero", "[calibrate]") {
  // Pure bandwidth data slightly bent so that the free line would cross below zero.
  const std::vector<double> x = {1e6, 1e7, 1e8, 1e9};
  const std::vector<double> t = {0.9e-5, 1e-4, 1e-3, 1e-2};
  const AlphaBetaFit f = fit_alpha_beta(x, t);
  CHECK(f.alpha_s == 0.0);
  CHECK(f.beta_Bps == Approx(1e11).epsilon(0.05));
}

TEST_CASE("alpha-beta fit: one message size cannot be fitted", "[calibrate]") {
  const std::vector<double> x = {1e6, 1e6};
  const std::vector<double> t = {1e-5, 1.1e-5};
  REQUIRE_THROWS_WITH(fit_alpha_beta(x, t), Catch::Contains("two distinct message sizes"));
}
