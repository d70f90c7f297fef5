#include "sim/goodput/resilience.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "sim/base/check.hpp"
#include "sim/base/input_error.hpp"

namespace cs::sim::goodput {

FailureRates job_failure_rates(const MtbfHours& m, const JobFacts& job) {
  FailureRates r;
  r.gpu = job.gpus / m.gpu;
  r.host = job.nodes / m.host;
  r.nic = job.nics / m.nic;
  r.network = job.nodes / m.network;
  r.software = job.gpus / m.software;
  return r;
}

namespace {

// One segment of `a` seconds that must run failure-free, added to `out` (the header's S(a) split by cause).
void add_segment(const RunModel& m, double a, double count, Outcome& out) {
  out.checkpoint_s += count * m.stall_s;
  if (m.lambda <= 0) {
    out.total_s += count * a;
    return;
  }
  const double e = std::expm1(m.lambda * a);
  const double failures = e * std::exp(m.lambda * m.restart_s);
  const double restart = e * std::expm1(m.lambda * m.restart_s) / m.lambda;
  const double rework = e / m.lambda - a;
  out.failures += count * failures;
  out.restart_s += count * restart;
  out.rework_s += count * rework;
  out.total_s += count * (a + rework + restart);
}

// Asynchronous checkpoints: a failure before the previous write committed also loses that segment's work.
double async_extra_rework(const RunModel& m, double a, double failures_per_segment) {
  if (!m.async || m.write_s <= 0) return 0;
  return failures_per_segment * std::min(1.0, m.write_s / a) * m.interval_s;
}

// Expected wall time per second of useful work at interval T (the function the optimum minimises).
double time_per_work(const RunModel& m, double T) {
  RunModel v = m;
  v.interval_s = T;
  Outcome o;
  add_segment(v, T + v.stall_s, 1, o);
  return (o.total_s + async_extra_rework(v, T + v.stall_s, o.failures)) / T;
}

}  // namespace

Outcome expected_outcome(const RunModel& m) {
  CS_CHECK(m.interval_s > 0 && m.work_s > 0 && std::isfinite(m.stall_s) && std::isfinite(m.restart_s));
  Outcome out;
  const double full = std::floor(m.work_s / m.interval_s);
  const double rest = m.work_s - full * m.interval_s;
  const double a = m.interval_s + m.stall_s;
  if (full > 0) {
    Outcome one;
    add_segment(m, a, 1, one);
    add_segment(m, a, full, out);
    const double extra = async_extra_rework(m, a, one.failures) * std::max(0.0, full - 1);
    out.rework_s += extra;
    out.total_s += extra;
  }
  if (rest > 1e-9 * m.work_s) add_segment(m, rest + m.stall_s, 1, out);
  if (m.async) {  // the last write must land before the run is done
    out.checkpoint_s += m.write_s;
    out.total_s += m.write_s;
  }
  return out;
}

double optimal_interval_s(RunModel m, double t_min, double t_max) {
  if (m.lambda <= 0) return t_max;  // nothing fails: checkpoint once, at the end
  t_min = std::max(t_min, 1e-6);
  t_max = std::max(t_max, t_min);
  double lo = std::log(t_min), hi = std::log(t_max);
  const double g = (std::sqrt(5.0) - 1) / 2;
  double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
  double f1 = time_per_work(m, std::exp(x1)), f2 = time_per_work(m, std::exp(x2));
  for (int i = 0; i < 200 && hi - lo > 1e-10; ++i) {
    if (f1 <= f2) {
      hi = x2, x2 = x1, f2 = f1;
      x1 = hi - g * (hi - lo), f1 = time_per_work(m, std::exp(x1));
    } else {
      lo = x1, x1 = x2, f1 = f2;
      x2 = lo + g * (hi - lo), f2 = time_per_work(m, std::exp(x2));
    }
  }
  return std::exp((lo + hi) / 2);
}

// The run as segments 0..n-1 (n_full of T seconds of work, then the remainder); progress and the
// committed checkpoint are segment counts, so a rollback is exact. Failure times are memoryless, so a
// fresh exponential is drawn after every event; full segments that end before the next failure are
// skipped over in one step (a run of a million steps checkpointed every step stays fast).
Outcome sample_run(const RunModel& m, Rng& rng) {
  CS_CHECK(m.interval_s > 0 && m.work_s > 0 && std::isfinite(m.work_s) && std::isfinite(m.stall_s) && std::isfinite(m.restart_s) &&
           std::isfinite(m.write_s) && m.stall_s >= 0 && m.restart_s >= 0);
  const double inf = std::numeric_limits<double>::infinity();
  auto draw = [&] { return m.lambda > 0 ? rng.exponential(m.lambda) : inf; };
  const long long n_full = static_cast<long long>(std::floor(m.work_s / m.interval_s));
  const double rest = m.work_s - static_cast<double>(n_full) * m.interval_s;
  const long long n_seg = n_full + (rest > 1e-9 * m.work_s ? 1 : 0);
  const double a_full = m.interval_s + m.stall_s;
  const double wb = m.async ? m.write_s : 0;
  Outcome o;
  double t = 0;
  long long done = 0, committed = 0, pending = -1;  // pending: segment count whose write lands at pending_at
  double pending_at = 0;
  auto count_failure = [&] {
    if (++o.failures > m.max_failures)
      throw InputError("resilience: a Monte Carlo run passed " + std::to_string(static_cast<long long>(m.max_failures)) +
                       " interruptions (the run never finishes: raise resilience.mtbf_hours or shorten the restart)");
  };
  auto restart = [&] {
    while (true) {
      const double y = draw();
      if (y >= m.restart_s) {
        t += m.restart_s, o.restart_s += m.restart_s;
        return;
      }
      t += y, o.restart_s += y;
      count_failure();
    }
  };
  auto fail_at = [&](double x) {
    t += x;
    count_failure();
    if (pending >= 0 && pending_at <= t) committed = pending;
    pending = -1;
    done = committed;
    restart();
  };
  auto finish_segment = [&](double a) {
    t += a;
    ++done;
    o.checkpoint_s += m.stall_s;
    if (wb <= 0) {
      committed = done;
      return;
    }
    double start = t;
    if (pending >= 0) {
      committed = pending;  // lands before this one (one write in flight, the next queues behind it)
      start = std::max(t, pending_at);
    }
    pending = done, pending_at = start + wb;
  };
  while (true) {
    if (done == n_seg) {
      if (pending >= 0 && pending_at > t) {
        const double x = draw();
        if (x < pending_at - t) {
          fail_at(x);
          continue;
        }
        o.checkpoint_s += pending_at - t;
        t = pending_at;
      }
      break;
    }
    double x = draw();
    if (done < n_full && x >= a_full) {
      const double fit = std::floor(x / a_full);  // x may be infinite (lambda 0)
      const long long k = fit >= static_cast<double>(n_full - done) ? n_full - done : static_cast<long long>(fit);
      // All but the last of these segments have committed by the end of the next one (a_full >= wb).
      if (k >= 2) {
        finish_segment(a_full);
        t += static_cast<double>(k - 2) * a_full;
        done += k - 2;
        o.checkpoint_s += static_cast<double>(k - 2) * m.stall_s;
        if (k > 2) {
          if (wb <= 0) committed = done;
          else committed = done - 1, pending = done, pending_at = t + wb;
        }
        finish_segment(a_full);
      } else {
        finish_segment(a_full);
      }
      x -= static_cast<double>(k) * a_full;
      if (done == n_seg) continue;
    }
    const double a = (done < n_full ? m.interval_s : rest) + m.stall_s;
    if (x >= a) {
      finish_segment(a);
    } else {
      fail_at(x);
    }
  }
  o.total_s = t;
  o.rework_s = t - m.work_s - o.checkpoint_s - o.restart_s;
  return o;
}

namespace {

// A run that never finishes (failures come faster than it makes progress: expected goodput below
// kMinGoodput, or past what a double holds) is an input error, not a report of zeros and infinities.
void check_finishes(const ResilienceResult& r, double lambda) {
  const double worst = std::min(r.goodput, r.goodput_at_optimal);
  if (worst >= kMinGoodput) return;  // NaN (inf / inf) fails here too
  char line[400];
  std::snprintf(line, sizeof line,
                "resilience: the run never finishes: an interruption every %.3g s on average (%.3g per hour) against a restart of "
                "%.3g s and %.3g s of work between checkpoints: expected goodput %.3g (at least %g: raise resilience.mtbf_hours, "
                "shorten the restart or checkpoint more often)",
                1 / lambda, lambda * 3600, r.restart_s, r.interval_s, std::isfinite(worst) ? worst : 0.0, kMinGoodput);
  throw InputError(line);
}

// `runs` sampled runs into r's Monte Carlo fields; refused when the runs would sample more than
// kMaxMonteCarloInterruptions expected interruptions, and each run stopped far past its expectation.
void monte_carlo(RunModel m, int runs, ResilienceResult& r) {
  const double per_run = r.expected.failures + 1;
  if (per_run * runs > kMaxMonteCarloInterruptions) {
    char line[320];
    std::snprintf(line, sizeof line,
                  "--runs %d: the Monte Carlo would sample about %.3g interruptions (%.3g a run); at most %g in all: give --runs %.0f or fewer",
                  runs, per_run * runs, per_run, kMaxMonteCarloInterruptions, std::max(1.0, std::floor(kMaxMonteCarloInterruptions / per_run)));
    throw InputError(line);
  }
  // A thousand times the expectation: a Poisson count that far out never comes by chance.
  m.max_failures = 1000 * per_run + 1e6;
  Rng rng(r.seed);
  std::vector<double> days;
  days.reserve(static_cast<std::size_t>(runs));
  double sum = 0, failures = 0;
  for (int i = 0; i < runs; ++i) {
    const Outcome o = sample_run(m, rng);
    days.push_back(o.total_s / 86400);
    sum += o.total_s / 86400;
    failures += o.failures;
  }
  std::sort(days.begin(), days.end());
  r.mc_mean_days = sum / runs;
  r.mc_mean_failures = failures / runs;
  r.p10_days = nearest_rank(days, 0.10);
  r.p50_days = nearest_rank(days, 0.50);
  r.p90_days = nearest_rank(days, 0.90);
}

}  // namespace

ResilienceResult analyse_resilience(const ResilienceSpec& spec, const JobFacts& job, int runs, std::uint64_t seed) {
  CS_CHECK(job.step_s > 0 && job.steps > 0 && job.gpus > 0);
  ResilienceResult r;
  const CheckpointSpec& c = spec.checkpoint;
  const RestartSpec& rs = spec.restart;
  r.rates = job_failure_rates(spec.mtbf_hours, job);
  r.mtti_hours = 1 / r.rates.total_per_hour();
  r.checkpoint_bytes = c.size_bytes > 0 ? c.size_bytes : job.checkpoint_bytes;
  r.target = c.target;
  r.async = c.async;
  const double write_Bps = c.target == "local_nvme"
                               ? job.nodes * c.local_nvme_write_GBps_per_node * 1e9
                               : std::min(c.shared_fs_GBps, job.nodes * c.shared_fs_per_client_GBps) * 1e9;
  r.write_s = r.checkpoint_bytes / write_Bps;
  r.load_s = r.write_s;  // read back from the same tier at the same bandwidth
  // Async: each GPU copies its share (the checkpoint spread evenly, replicas de-duplicated as
  // torch.distributed.checkpoint and Megatron's distributed checkpoint do) to pinned host memory.
  r.stall_s = c.async ? r.checkpoint_bytes / job.gpus / (c.snapshot_GBps_per_gpu * 1e9) : r.write_s;
  r.nccl_init_s = rs.nccl_init_s >= 0 ? rs.nccl_init_s : rs.nccl_init_base_s + rs.nccl_init_s_per_rank * job.gpus;
  r.restart_s = rs.detection_s + rs.scheduling_s + rs.process_start_s + r.nccl_init_s + r.load_s;
  r.work_s = job.step_s * job.steps;

  RunModel m;
  m.work_s = r.work_s;
  m.lambda = r.rates.total_per_hour() / 3600;
  m.stall_s = r.stall_s;
  m.write_s = c.async ? r.write_s : 0;
  m.restart_s = r.restart_s;
  m.async = c.async;
  const double t_min = std::max(job.step_s, m.write_s);
  // The optimum in whole steps: the better of the two step counts around the continuous optimum.
  const double t_opt = optimal_interval_s(m, t_min, r.work_s);
  double best_steps = std::max(1.0, std::floor(t_opt / job.step_s));
  {
    const double up = std::min(job.steps, best_steps + 1);
    RunModel a = m, b = m;
    a.interval_s = best_steps * job.step_s, b.interval_s = up * job.step_s;
    if (a.interval_s < t_min || expected_outcome(b).total_s < expected_outcome(a).total_s) best_steps = up;
  }
  r.optimal_interval_steps = best_steps;
  r.optimal_interval_s = best_steps * job.step_s;
  r.young_daly_s = m.lambda > 0 ? std::sqrt(2 * m.stall_s / m.lambda) : r.work_s;

  double steps_per_ckpt = best_steps;
  r.interval_optimal = c.optimal;
  if (c.interval_steps > 0) steps_per_ckpt = static_cast<double>(c.interval_steps);
  else if (c.interval_s > 0) steps_per_ckpt = std::max(1.0, std::round(c.interval_s / job.step_s));
  steps_per_ckpt = std::min(steps_per_ckpt, job.steps);
  if (steps_per_ckpt * job.step_s < m.write_s) {
    steps_per_ckpt = std::min(job.steps, std::ceil(m.write_s / job.step_s));
    r.interval_raised = true;
  }
  r.interval_steps = steps_per_ckpt;
  r.interval_s = steps_per_ckpt * job.step_s;
  m.interval_s = r.interval_s;
  r.model = m;
  r.expected = expected_outcome(m);
  r.goodput = r.work_s / r.expected.total_s;
  r.effective_days = r.expected.total_s / 86400;
  r.gpu_hours = job.gpus * r.expected.total_s / 3600;
  r.usd = r.gpu_hours * job.price_per_gpu_hour_usd;
  r.usd_per_token = job.tokens > 0 ? r.usd / job.tokens : 0;
  {
    RunModel o = m;
    o.interval_s = r.optimal_interval_s;
    r.goodput_at_optimal = r.work_s / expected_outcome(o).total_s;
  }

  check_finishes(r, m.lambda);
  r.runs = runs;
  r.seed = seed;
  if (runs > 0) monte_carlo(m, runs, r);
  return r;
}

}  // namespace cs::sim::goodput
