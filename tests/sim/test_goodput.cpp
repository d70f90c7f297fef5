// The whole run around the step (sim/goodput/): failures and checkpoints against their closed forms and
// a published 16k-GPU run, the Monte Carlo against the expectation, input stalls by hand, jitter against
// the order statistics of the maximum; and every bad-input path of the three scenario sections.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/goodput/data_stall.hpp"
#include "sim/goodput/goodput.hpp"
#include "sim/goodput/jitter.hpp"
#include "sim/goodput/resilience.hpp"
#include "sim/base/input_error.hpp"
#include "sim/explore/sweep.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"

using namespace cs::sim;
using namespace cs::sim::goodput;
using nlohmann::json;

namespace {

// lambda = 1 / day, C = 60 s, R = 600 s, W = 30 days of work.
RunModel day_mtbf_model(double interval_s) {
  RunModel m;
  m.work_s = 30 * 86400.0;
  m.lambda = 1 / 86400.0;
  m.stall_s = 60;
  m.restart_s = 600;
  m.interval_s = interval_s;
  return m;
}

// Phi^-1 by bisection on the normal CDF 0.5 erfc(-x / sqrt 2).
double inverse_normal(double q) {
  double lo = -10, hi = 10;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < q ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

json small_scenario() {
  return {{"cluster", {{"gpu", "H100-SXM"}, {"nodes", 1}, {"gpus_per_node", 8}}},
          {"model", {{"preset", "llama3-8b"}}},
          {"training", {{"seq_length", 8192}, {"global_batch_size", 64}, {"micro_batch_size", 1},
                        {"tensor_model_parallel_size", 1}, {"tokens_to_train", 1e11}}}};
}

// The one message parse_scenario throws for `doc`.
std::string only_error(const json& doc) {
  try {
    parse_scenario(doc, "s.json");
  } catch (const cs::InputError& e) {
    REQUIRE(e.messages().size() == 1);
    return e.messages()[0];
  }
  FAIL("no error");
  return {};
}

}  // namespace

TEST_CASE("goodput: expected goodput matches the first-order closed form where lambda T is small", "[goodput]") {
  // Expanding Daly's S(T + C) / T = (e^{lambda (T+C)} - 1) e^{lambda R} / (lambda T) to first order in
  // lambda T: (1 + C/T)(1 + lambda (T + C)/2)(1 + lambda R) ~ 1 + C/T + lambda T / 2 + lambda R, so
  // goodput = 1 / that ~ 1 - C/T - lambda (T/2 + R). lambda T = 1/24 here.
  for (double T : {1800.0, 3600.0}) {
    const RunModel m = day_mtbf_model(T);
    const Outcome o = expected_outcome(m);
    const double goodput = m.work_s / o.total_s;
    const double closed = 1 - m.stall_s / T - m.lambda * (T / 2 + m.restart_s);
    INFO("T " << T << " goodput " << goodput << " closed form " << closed);
    CHECK(goodput == Approx(closed).epsilon(0.02));
    // The split by cause adds up to the total.
    CHECK(o.total_s == Approx(m.work_s + o.rework_s + o.restart_s + o.checkpoint_s).epsilon(1e-9));
    // Expected interruptions: about lambda x the wall time.
    CHECK(o.failures == Approx(m.lambda * o.total_s).epsilon(0.02));
  }
}

TEST_CASE("goodput: the optimal interval matches Young and Daly sqrt(2C over lambda)", "[goodput]") {
  // sqrt(2 x 60 s x 86400 s) = 3220 s; Daly's higher-order optimum is sqrt(2 C M) - C (M = 1/lambda),
  // 60 s (1.9%) shorter, inside the 5%.
  const RunModel m = day_mtbf_model(1);
  const double young = std::sqrt(2 * m.stall_s / m.lambda);
  const double t = optimal_interval_s(m, 1, m.work_s);
  CHECK(t == Approx(young).epsilon(0.05));
  // And it is a minimum: 20% either side costs more.
  auto total = [&](double T) { return expected_outcome(day_mtbf_model(T)).total_s; };
  CHECK(total(t) < total(t * 1.2));
  CHECK(total(t) < total(t / 1.2));
}

TEST_CASE("goodput: the Monte Carlo mean converges to the expectation", "[goodput]") {
  // 4000 sampled 30-day runs (seed 7), ~30 interruptions each: the standard error of the mean total is
  // ~0.6% / sqrt(4000) ~ 0.01%, so 0.2% is a wide margin; the failure count likewise.
  for (bool async : {false, true}) {
    RunModel m = day_mtbf_model(3600);
    m.async = async;
    if (async) m.stall_s = 5, m.write_s = 300;  // snapshot stall 5 s, background write 5 min
    const Outcome e = expected_outcome(m);
    Rng rng(7);
    double total = 0, failures = 0, restart = 0;
    const int runs = 4000;
    for (int i = 0; i < runs; ++i) {
      const Outcome o = sample_run(m, rng);
      total += o.total_s, failures += o.failures, restart += o.restart_s;
    }
    INFO("async " << async);
    CHECK(total / runs == Approx(e.total_s).epsilon(async ? 0.003 : 0.002));
    CHECK(failures / runs == Approx(e.failures).epsilon(0.03));
    CHECK(restart / runs == Approx(e.restart_s).epsilon(0.03));
  }
}

TEST_CASE("goodput: a run with no failures is its work plus its checkpoints", "[goodput]") {
  RunModel m = day_mtbf_model(3600);
  m.lambda = 0;
  Rng rng(1);
  const Outcome o = sample_run(m, rng);
  CHECK(o.failures == 0);
  // 720 checkpoints of 60 s each.
  CHECK(o.total_s == Approx(m.work_s + 720 * 60.0));
  CHECK(expected_outcome(m).total_s == Approx(o.total_s));
}

TEST_CASE("goodput: the default fleet rates reproduce Llama 3's interruptions and effective training time", "[goodput]") {
  // Source: Meta, "The Llama 3 Herd of Models" (2024), section 3.3.4 and Table 5: 419 unexpected
  // interruptions in a 54-day snapshot of Llama 3 405B pre-training on 16,384 H100 GPUs (2,048 nodes of
  // 8 GPUs, one NIC per GPU), and "higher than 90% effective training time".
  // Published rate: 419 / (54 x 24 h) = 0.3233 per hour (one every 3.09 h). The defaults are that table
  // split by component class and divided by each class's unit-hours, so 16,384 GPUs must give it back.
  JobFacts job;
  job.gpus = 16384, job.nodes = 2048, job.nics = 16384;
  const FailureRates rates = job_failure_rates(default_mtbf_hours(), job);
  const double published = 419.0 / (54 * 24);
  CHECK(rates.total_per_hour() == Approx(published).epsilon(0.25));
  CHECK(rates.total_per_hour() == Approx(published).epsilon(1e-9));  // exactly, by construction

  // Effective training time: the 405B checkpoint from the memory model (14 bytes per parameter: bf16
  // weights + fp32 master weights and Adam moments) = 5.67 TB, written to Tectonic at its published
  // 2 TB/s sustained (Llama 3, section 3.3.1): C = 2.8 s synchronous. A step of 6 s (16M tokens at ~40%
  // MFU: 6 x 405e9 x 16e6 / (16384 x 989e12 x 0.4) = 6.0 s) for the 54 days. Restart with the defaults:
  // 60 s detection + 180 s scheduling + 60 s process start + 5 + 0.003 x 16384 = 54 s NCCL init + 2.8 s
  // load = 357 s. At the optimal interval (~sqrt(2 x 2.8 / 9e-5) = 250 s) the first-order loss is
  // 2.8/250 + 9e-5 x (125 + 357) = 5.5%: ~94.5% effective, within 5 points of the published 90%.
  ResilienceSpec spec;
  spec.checkpoint.shared_fs_GBps = 2000;
  job.step_s = 6;
  job.steps = 54 * 86400 / 6.0;
  job.checkpoint_bytes = checkpoint_bytes(405e9);
  const ResilienceResult r = analyse_resilience(spec, job, 0, 1);
  INFO("goodput " << r.goodput << " interval " << r.interval_s << " restart " << r.restart_s);
  CHECK(r.goodput * 100 == Approx(90).margin(5));
  CHECK(r.goodput > 0.90);
  // Interruptions over the run: the published 419 in 54 days, within 25% (our run lasts 54 days of
  // work plus the lost time, so slightly more).
  CHECK(r.expected.failures == Approx(419).epsilon(0.25));
}

TEST_CASE("goodput: checkpoint sizes and costs follow the memory model and the tier bandwidths", "[goodput]") {
  // 70e9 parameters x 14 bytes = 980 GB. Shared FS: min(100 GB/s, 32 nodes x 25 GB/s) = 100 GB/s -> 9.8 s;
  // local NVMe: 980 GB / 32 nodes / 8 GB/s = 3.83 s; async: 980 GB / 256 GPUs / 25 GB/s = 0.153 s stall.
  JobFacts job;
  job.gpus = 256, job.nodes = 32, job.nics = 256, job.step_s = 10, job.steps = 100000;
  job.checkpoint_bytes = checkpoint_bytes(70e9);
  ResilienceSpec spec;
  ResilienceResult r = analyse_resilience(spec, job, 0, 1);
  CHECK(r.checkpoint_bytes == Approx(980e9));
  CHECK(r.write_s == Approx(9.8));
  CHECK(r.stall_s == Approx(9.8));
  CHECK(r.load_s == Approx(9.8));
  CHECK(r.restart_s == Approx(60 + 180 + 60 + 5 + 0.003 * 256 + 9.8));
  spec.checkpoint.target = "local_nvme";
  r = analyse_resilience(spec, job, 0, 1);
  CHECK(r.write_s == Approx(980e9 / 32 / 8e9));
  spec.checkpoint.target = "shared_fs";
  spec.checkpoint.async = true;
  r = analyse_resilience(spec, job, 0, 1);
  CHECK(r.stall_s == Approx(980e9 / 256 / 25e9));
  CHECK(r.write_s == Approx(9.8));
  // The optimal interval is a whole number of steps, and an explicit one is used as given.
  CHECK(r.optimal_interval_s == Approx(r.optimal_interval_steps * 10));
  spec.checkpoint.optimal = false;
  spec.checkpoint.interval_steps = 360;
  r = analyse_resilience(spec, job, 0, 1);
  CHECK(r.interval_s == Approx(3600));
  CHECK(r.goodput < r.goodput_at_optimal);
}

TEST_CASE("goodput: the Monte Carlo is deterministic per seed", "[goodput]") {
  JobFacts job;
  job.gpus = 256, job.nodes = 32, job.nics = 256, job.step_s = 10, job.steps = 259200;
  job.checkpoint_bytes = checkpoint_bytes(70e9);
  const ResilienceResult a = analyse_resilience({}, job, 300, 5), b = analyse_resilience({}, job, 300, 5);
  const ResilienceResult c = analyse_resilience({}, job, 300, 6);
  CHECK(a.p50_days == b.p50_days);
  CHECK(a.p90_days == b.p90_days);
  CHECK(a.mc_mean_days == b.mc_mean_days);
  CHECK(a.mc_mean_days != c.mc_mean_days);
  CHECK(a.p10_days <= a.p50_days);
  CHECK(a.p50_days <= a.p90_days);
  CHECK(a.mc_mean_days == Approx(a.effective_days).epsilon(0.005));
}

TEST_CASE("goodput: 64 H100 reading from one shared file system stall by the arithmetic, local NVMe removes it", "[goodput]") {
  // 8 nodes of 8 H100, DP 64, global batch 512 samples of 20 MB, a 1 s step. A shared file system of
  // 2 GB/s aggregate gives each node min(25, 2 / 8) = 0.25 GB/s; a node reads 512 x 20 MB / 8 = 1.28 GB
  // a step: 5.12 s. Prefetched, the step takes max(1, 5.12) = 5.12 s: 4.12 s stalled, 80.5% of the time
  // (the GPUs are busy 19.5% of it). Local NVMe at 25 GB/s reads it in 51.2 ms < 1 s: no stall. The
  // bandwidth that never stalls: 512 x 20 MB / 1 s = 10.24 GB/s.
  DataPipelineSpec spec;
  spec.bytes_per_sample = 20e6;
  spec.shared_fs_GBps = 2;
  spec.shared_fs_per_client_GBps = 25;
  spec.local_nvme_read_GBps_per_node = 25;
  spec.workers_per_gpu = 2;
  spec.prefetch_depth = 2;
  DataJob job{8, 64, 512, 1.0};
  DataStallResult r = analyse_data_stall(spec, job);
  CHECK(r.read_s == Approx(5.12));
  CHECK(r.stall_s == Approx(4.12));
  CHECK(r.stall_fraction == Approx(4.12 / 5.12));
  CHECK(r.bottleneck == "storage");
  CHECK(r.never_stall_GBps == Approx(10.24));
  spec.source = "local_nvme";
  r = analyse_data_stall(spec, job);
  CHECK(r.read_s == Approx(0.0512));
  CHECK(r.stall_s == 0);
  CHECK(r.bottleneck == "none");
  // Without prefetch the read never overlaps: 1 + 0.0512 s.
  spec.prefetch_depth = 0;
  r = analyse_data_stall(spec, job);
  CHECK(r.step_with_input_s == Approx(1.0512));
  // Decoding: 8 samples per DP rank x 0.5 s / 2 workers = 2 s > 1 s.
  spec.prefetch_depth = 2;
  spec.cpu_s_per_sample = 0.5;
  r = analyse_data_stall(spec, job);
  CHECK(r.stall_s == Approx(1.0));
  CHECK(r.bottleneck == "decode");
}

TEST_CASE("goodput: a data_pipeline section on a 64-GPU scenario stalls its simulated step", "[goodput]") {
  json doc = small_scenario();
  doc["cluster"]["nodes"] = 8;
  doc["cluster"]["inter_node"] = {{"fabric", "fat-tree"}, {"link", "ib-ndr400"}};
  doc["training"]["global_batch_size"] = 512;
  doc["data_pipeline"] = {{"bytes_per_sample", 20e6}, {"shared_fs_GBps", 2}};
  const Scenario s = parse_scenario(doc, "s.json");
  const SimulationResult sim = simulate(s);
  const RunReport run = analyse_run(s, sim, {});
  REQUIRE(run.data);
  const double step = sim.report.step_time_s;
  CHECK(run.data->step_s == step);
  const double read = 512 * 20e6 / 8 / 0.25e9;  // 5.12 s
  CHECK(run.data->stall_s == Approx(std::max(0.0, read - step)));
  doc["data_pipeline"]["source"] = "local_nvme";
  const Scenario local = parse_scenario(doc, "s.json");
  CHECK(analyse_run(local, simulate(local), {}).data->stall_s == 0);
}

TEST_CASE("goodput: zero jitter gives exactly the deterministic step", "[goodput]") {
  const StepDistribution d = simulate_steps({12.345, 4.0, 1024, 0.0}, 100, 3);
  CHECK(d.p50_s == 12.345);
  CHECK(d.p99_s == 12.345);
  CHECK(d.max_s == 12.345);
  CHECK(d.mean_s == 12.345);
}

TEST_CASE("goodput: jitter quantiles follow the order statistics of the maximum over synchronising ranks", "[goodput]") {
  // step_k = 100 + sigma max_{r<N} Z_r with sigma = cv sqrt(sum d^2) = 0.1 x sqrt(100) = 1. The
  // q-quantile of the maximum of N standard normals is Phi^-1(q^(1/N)): N = 8: p50 1.42, p99 3.02;
  // N = 512: p50 2.98, p99 4.00. 20,000 steps estimate each quantile to about +-0.05 (p50) and +-0.1 (p99).
  double prev_p50 = 0, prev_p99 = 0;
  for (int n : {1, 8, 512}) {
    const StepDistribution d = simulate_steps({100, 100, n, 0.1}, 20000, 11);
    const double p50 = 100 + inverse_normal(std::pow(0.5, 1.0 / n));
    const double p99 = 100 + inverse_normal(std::pow(0.99, 1.0 / n));
    INFO("N " << n << " p50 " << d.p50_s << " vs " << p50 << ", p99 " << d.p99_s << " vs " << p99);
    CHECK(d.sigma_s == Approx(1.0));
    CHECK(d.p50_s == Approx(p50).margin(0.05));
    CHECK(d.p99_s == Approx(p99).margin(0.12));
    CHECK(d.p99_s / d.p50_s == Approx(p99 / p50).margin(0.0015));
    // More synchronising ranks: both quantiles rise above the deterministic step (the straggler tax).
    CHECK(d.p50_s > prev_p50);
    CHECK(d.p99_s > prev_p99);
    prev_p50 = d.p50_s, prev_p99 = d.p99_s;
  }
  // The same seed gives the same steps; another seed others.
  const StepDistribution a = simulate_steps({100, 100, 64, 0.1}, 500, 4), b = simulate_steps({100, 100, 64, 0.1}, 500, 4);
  const StepDistribution c = simulate_steps({100, 100, 64, 0.1}, 500, 5);
  CHECK(a.p99_s == b.p99_s);
  CHECK(a.mean_s == b.mean_s);
  CHECK(a.mean_s != c.mean_s);
}

TEST_CASE("goodput: the uniform and exponential draws are the ones written in rng.hpp", "[goodput]") {
  // std::mt19937_64 is specified bit for bit: its 10000th output from the default seed is
  // 9981545732273789042 (the standard's own check, [rand.predef]).
  std::mt19937_64 e;
  for (int i = 0; i < 9999; ++i) e();
  CHECK(e() == 9981545732273789042ULL);
  Rng a(1);
  std::mt19937_64 b(1);
  CHECK(a.uniform() == static_cast<double>(b() >> 11) * 0x1.0p-53);
  CHECK(a.exponential(2.0) == -std::log1p(-static_cast<double>(b() >> 11) * 0x1.0p-53) / 2.0);
}

TEST_CASE("goodput: resilience keys are validated with their JSON path", "[goodput]") {
  json doc = small_scenario();
  doc["resilience"] = {{"mtbf_hours", {{"gpu", -1}}}};
  CHECK(only_error(doc) == "s.json: resilience.mtbf_hours.gpu: -1 is out of range (expected a number >= 1 and <= 1e+09)");
  doc["resilience"] = {{"mtbf_hours", {{"gpu", "many"}}}};
  CHECK(only_error(doc) == "s.json: resilience.mtbf_hours.gpu: expected a number >= 1 and <= 1e+09, got \"many\"");
  doc["resilience"] = {{"mtbf_hour", json::object()}};
  CHECK(only_error(doc) == "s.json: resilience.mtbf_hour: unknown key (expected one of: mtbf_hours, checkpoint, restart)");
  doc["resilience"] = {{"checkpoint", {{"interval", "optimal"}, {"interval_s", 600}}}};
  CHECK(only_error(doc) == "s.json: resilience.checkpoint: give one of interval (\"optimal\"), interval_steps or interval_s, not 2");
  doc["resilience"] = {{"checkpoint", {{"interval", "often"}}}};
  CHECK(only_error(doc) == "s.json: resilience.checkpoint.interval: expected one of \"optimal\", got \"often\"");
  doc["resilience"] = {{"checkpoint", {{"interval_steps", 0.5}}}};
  CHECK(only_error(doc) == "s.json: resilience.checkpoint.interval_steps: expected an integer in [1, 1000000000], got 0.5");
  doc["resilience"] = {{"checkpoint", {{"async", 1}}}};
  CHECK(only_error(doc) == "s.json: resilience.checkpoint.async: expected true or false, got 1");
  doc["resilience"] = {{"checkpoint", {{"target", "nvme"}}}};
  CHECK(only_error(doc) == "s.json: resilience.checkpoint.target: expected one of \"shared_fs\", \"local_nvme\", got \"nvme\"");
  doc["resilience"] = {{"restart", 5}};
  CHECK(only_error(doc) == "s.json: resilience.restart: expected an object, got 5");
  doc["resilience"] = 3;
  CHECK(only_error(doc) == "s.json: resilience: expected an object, got 3");
  doc["resilience"] = json::object();
  doc["training"].erase("tokens_to_train");
  CHECK(only_error(doc) == "s.json: resilience: needs training.tokens_to_train > 0 (the length of the run whose goodput is asked)");
}

TEST_CASE("goodput: data_pipeline and variability keys are validated with their JSON path", "[goodput]") {
  json doc = small_scenario();
  doc["data_pipeline"] = {{"shared_fs_GBps", 10}};
  CHECK(only_error(doc) == "s.json: data_pipeline.bytes_per_sample: missing (expected a number >= 1: the bytes read per sample)");
  doc["data_pipeline"] = {{"bytes_per_sample", 1e6}, {"workers_per_gpu", 0}};
  CHECK(only_error(doc) == "s.json: data_pipeline.workers_per_gpu: 0 is out of range (expected an integer in [1, 1024])");
  doc["data_pipeline"] = {{"bytes_per_sample", 1e6}, {"prefetch", 2}};
  CHECK(only_error(doc) == "s.json: data_pipeline.prefetch: unknown key (expected one of: source, shared_fs_GBps, "
                           "shared_fs_per_client_GBps, local_nvme_read_GBps_per_node, bytes_per_sample, workers_per_gpu, "
                           "cpu_s_per_sample, prefetch_depth)");
  doc.erase("data_pipeline");
  doc["variability"] = {{"compute_jitter_cv", 0.9}};
  CHECK(only_error(doc) == "s.json: variability.compute_jitter_cv: 0.9 is out of range (expected a number >= 0 and <= 0.5)");
  doc["variability"] = {{"compute_jitter_cv", 0.05}};
  CHECK_NOTHROW(parse_scenario(doc, "s.json"));
}

TEST_CASE("goodput: --runs without a resilience section is an input error", "[goodput]") {
  const Scenario s = parse_scenario(small_scenario(), "s.json");
  RunOptions o;
  o.runs = 10;
  REQUIRE_THROWS_AS(check_run_options(s, o), cs::InputError);
  REQUIRE_THROWS_WITH(check_run_options(s, o), "s.json: --runs 10: needs a resilience section in the scenario (the Monte Carlo is over failures)");
}

// Issue 32: every number of the three sections is bounded where it is read, so the run model's times stay
// finite (docs/goodput.md, "Bounds").
TEST_CASE("goodput: an MTBF below an hour is refused (0.001 h gave an infinite run and a hanging Monte Carlo)", "[goodput]") {
  json doc = small_scenario();
  doc["resilience"] = {{"mtbf_hours", {{"gpu", 0.001}}}};
  CHECK(only_error(doc) == "s.json: resilience.mtbf_hours.gpu: 0.001 is out of range (expected a number >= 1 and <= 1e+09)");
}

TEST_CASE("goodput: a denormal checkpoint bandwidth is refused", "[goodput]") {
  json doc = small_scenario();
  doc["resilience"] = {{"checkpoint", {{"shared_fs_GBps", 5e-324}}}};
  CHECK(only_error(doc) == "s.json: resilience.checkpoint.shared_fs_GBps: 5e-324 is out of range (expected a number >= 0.001 and <= 1e+07)");
  doc["resilience"] = {{"checkpoint", {{"size_bytes", 5e-324}}}};
  CHECK(only_error(doc) == "s.json: resilience.checkpoint.size_bytes: 5e-324 is out of range (expected a number >= 1 and <= 1e+18)");
}

TEST_CASE("goodput: a denormal data-pipeline bandwidth is refused", "[goodput]") {
  json doc = small_scenario();
  doc["data_pipeline"] = {{"bytes_per_sample", 1e6}, {"local_nvme_read_GBps_per_node", 5e-324}};
  CHECK(only_error(doc) == "s.json: data_pipeline.local_nvme_read_GBps_per_node: 5e-324 is out of range (expected a number >= 0.001 and <= 1e+07)");
}

TEST_CASE("goodput: tokens_to_train below one step is refused (a denormal gave 0 steps)", "[goodput]") {
  json doc = small_scenario();
  doc["training"]["tokens_to_train"] = 5e-324;
  CHECK(only_error(doc) == "s.json: training.tokens_to_train: 5e-324 is less than one step's tokens (global_batch_size 64 x seq_length 8192 = "
                           "524288): give 0 (no run) or at least one step");
  doc["training"]["tokens_to_train"] = 524288;
  CHECK_NOTHROW(parse_scenario(doc, "s.json"));
}

TEST_CASE("goodput: a straggler GPU or node listed twice is refused", "[goodput]") {
  json doc = small_scenario();
  doc["cluster"]["stragglers"] = {{{"gpu", 3}, {"slowdown", 100}}, {{"gpu", 3}, {"slowdown", 100}}};
  CHECK(only_error(doc) == "s.json: cluster.stragglers[1].gpu: GPU 3 is already listed (cluster.stragglers[0]): give each GPU one slowdown");
  doc["cluster"]["stragglers"] = {{{"node", 0}, {"slowdown", 2}}, {{"node", 0}, {"slowdown", 2}}};
  CHECK(only_error(doc) == "s.json: cluster.stragglers[1].node: node 0 is already listed (cluster.stragglers[0]): give each node one slowdown");
}

TEST_CASE("goodput: a straggler GPU on a straggler node stays within the 100x cap", "[goodput]") {
  json doc = small_scenario();
  doc["cluster"]["stragglers"] = {{{"node", 0}, {"slowdown", 20}}, {{"gpu", 5}, {"slowdown", 10}}};
  CHECK(only_error(doc) == "s.json: cluster.stragglers[1].slowdown: 10 x 20 (cluster.stragglers[0]) slows GPU 5 of node 0 200x (expected "
                           "a product <= 100: a card that slow is a failure, not a straggler)");
  doc["cluster"]["stragglers"] = {{{"node", 0}, {"slowdown", 10}}, {{"gpu", 5}, {"slowdown", 10}}};
  CHECK_NOTHROW(parse_scenario(doc, "s.json"));
}

namespace {
// 8 GPUs on one node, a 10 s step; `mtbf` hours for every unit class.
JobFacts eight_gpus(double steps) {
  JobFacts job;
  job.gpus = 8, job.nodes = 1, job.nics = 8;
  job.step_s = 10, job.steps = steps;
  job.checkpoint_bytes = 1e11;
  return job;
}
ResilienceSpec every_unit_mtbf(double hours) {
  ResilienceSpec spec;
  spec.mtbf_hours = {hours, hours, hours, hours, hours};
  return spec;
}
std::string resilience_error(const ResilienceSpec& spec, const JobFacts& job, int runs) {
  try {
    analyse_resilience(spec, job, runs, 1);
  } catch (const cs::InputError& e) {
    REQUIRE(e.messages().size() == 1);
    return e.messages()[0];
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("goodput: a run whose failures outpace its progress never finishes and is refused", "[goodput]") {
  ResilienceSpec spec = every_unit_mtbf(1);
  spec.restart.detection_s = 3600;  // a restart longer than the 138 s between interruptions
  CHECK(resilience_error(spec, eight_gpus(1e6), 0) ==
        "resilience: the run never finishes: an interruption every 138 s on average (26 per hour) against a restart of 3.85e+03 s and "
        "30 s of work between checkpoints: expected goodput 6.58e-13 (at least 0.001: raise resilience.mtbf_hours, shorten the restart "
        "or checkpoint more often)");
  // The same units with a short restart finish: finite numbers throughout.
  const ResilienceResult ok = analyse_resilience(every_unit_mtbf(1), eight_gpus(1e4), 3, 1);
  CHECK(std::isfinite(ok.expected.total_s));
  CHECK(ok.goodput > 1e-3);
  CHECK(std::isfinite(ok.p90_days));
}

TEST_CASE("goodput: the Monte Carlo is bounded by its expected interruptions", "[goodput]") {
  // About 8.6e5 interruptions a run: 1e8 allow 115 runs.
  CHECK(resilience_error(every_unit_mtbf(1), eight_gpus(1e6), 1000000) ==
        "--runs 1000000: the Monte Carlo would sample about 8.64e+11 interruptions (8.64e+05 a run); at most 1e+08 in all: give --runs 115 or fewer");
  // One run past its own cap stops as an input error rather than running on.
  RunModel m = day_mtbf_model(3600);
  m.lambda = 1;  // a failure a second against a 600 s restart: no restart ever completes
  m.max_failures = 1000;
  Rng rng(1);
  REQUIRE_THROWS_WITH(sample_run(m, rng), "resilience: a Monte Carlo run passed 1000 interruptions (the run never finishes: raise "
                                          "resilience.mtbf_hours or shorten the restart)");
}

TEST_CASE("goodput: a sweep point whose run never finishes is invalid with the reason, the sweep goes on", "[goodput]") {
  json base = small_scenario();
  base["resilience"] = {{"mtbf_hours", {{"host", 1}, {"nic", 1}, {"network", 1}, {"software", 1}}}};
  const SweepPoint never = evaluate_point(base, "s.json", {{"resilience.restart.detection_s", 3600}}, false);
  CHECK(never.status == PointStatus::invalid);
  CHECK(never.error.rfind("resilience: the run never finishes: ", 0) == 0);
  const SweepPoint fine = evaluate_point(base, "s.json", {{"resilience.restart.detection_s", 60}}, false);
  CHECK(fine.status == PointStatus::simulated);
  REQUIRE(fine.whole_run.has_value());
  CHECK(fine.whole_run->goodput > 1e-3);
}
