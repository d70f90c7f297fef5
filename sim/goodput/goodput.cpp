#include "sim/goodput/goodput.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "sim/engine/time.hpp"
#include "sim/report/format.hpp"
#include "sim/base/input_error.hpp"

namespace cs::sim::goodput {

using nlohmann::json;

double checkpoint_bytes(double parameters) { return parameters * (2.0 + 12.0); }

namespace {

// The busiest simulated rank's sum of squared kernel durations (jitter.hpp).
double kernel_square_sum(const SimulationResult& result) {
  if (result.busiest_kernel_square_sum >= 0) return result.busiest_kernel_square_sum;  // every rank, from a template
  std::vector<double> per_rank(static_cast<std::size_t>(result.plan.graph.num_ranks()), 0.0);
  for (const Task& t : result.plan.graph.tasks())
    if (t.stream == StreamKind::compute) {
      const double d = to_seconds(t.duration);
      per_rank[t.rank] += d * d;
    }
  return per_rank.empty() ? 0 : *std::max_element(per_rank.begin(), per_rank.end());
}

}  // namespace

void check_run_options(const Scenario& s, const RunOptions& options) {
  const bool asked = s.run.resilience || s.run.data_pipeline || options.steps > 0;
  if (asked && s.multi_job())
    throw InputError(s.file + ": resilience, data_pipeline and --steps need a single-job scenario (this one has jobs)");
  if (options.runs > 0 && !s.run.resilience)
    throw InputError(s.file + ": --runs " + std::to_string(options.runs) + ": needs a resilience section in the scenario (the Monte Carlo is over failures)");
}

namespace {
DataJob data_job(const Report& rep) {
  DataJob job;
  job.nodes = rep.nodes;
  job.dp = rep.dp;
  job.global_batch = static_cast<double>(rep.global_batch_size);
  job.step_s = rep.step_time_s;
  return job;
}
}  // namespace

JobFacts job_facts(const Scenario& s, const Report& rep, double step_s) {
  JobFacts job;
  job.gpus = rep.num_gpus;
  job.nodes = rep.nodes;
  job.nics = rep.nodes * s.cluster.nics_per_node;
  job.step_s = step_s;
  job.steps = rep.cost.steps_to_train;
  job.checkpoint_bytes = checkpoint_bytes(rep.parameters);
  job.price_per_gpu_hour_usd = rep.price_per_gpu_hour_usd;
  job.tokens = rep.tokens_to_train;
  return job;
}

double step_with_input_s(const Scenario& s, const Report& rep) {
  if (!s.run.data_pipeline) return rep.step_time_s;
  return analyse_data_stall(*s.run.data_pipeline, data_job(rep)).step_with_input_s;
}

RunReport analyse_run(const Scenario& s, const SimulationResult& result, const RunOptions& options) {
  check_run_options(s, options);
  RunReport out;
  const Report& rep = result.report;
  double step_s = rep.step_time_s;
  if (s.run.data_pipeline) {
    out.data = analyse_data_stall(*s.run.data_pipeline, data_job(rep));
    step_s = out.data->step_with_input_s;
  }
  if (s.run.resilience) {
    try {
      out.resilience = analyse_resilience(*s.run.resilience, job_facts(s, rep, step_s), options.runs, options.seed);
    } catch (const InputError& e) {  // a run that never finishes, a Monte Carlo too long: name the file
      std::vector<std::string> lines;
      for (const auto& m : e.messages()) lines.push_back(s.file + ": " + m);
      throw InputError(std::move(lines));
    }
  }
  if (options.steps > 0) {
    JitterJob job;
    job.step_s = step_s;
    job.kernel_square_sum_s2 = kernel_square_sum(result);
    job.sync_ranks = rep.num_gpus;
    job.cv = s.run.variability ? s.run.variability->compute_jitter_cv : 0;
    out.steps = simulate_steps(job, options.steps, options.seed);
  }
  return out;
}

void add_json(json& report, const RunReport& r) {
  if (r.data) {
    const DataStallResult& d = *r.data;
    report["data_pipeline"] = {
        {"source", d.source}, {"bytes_per_step", d.bytes_per_step}, {"node_read_GBps", d.node_read_GBps},
        {"read_s", d.read_s}, {"decode_s", d.decode_s}, {"input_s", d.input_s},
        {"step_with_input_s", d.step_with_input_s}, {"input_stall_s", d.stall_s},
        {"input_stall_fraction", d.stall_fraction}, {"bottleneck", d.bottleneck}};
    if (d.can_hide) {  // prefetch_depth 0: no bandwidth hides loading; the keys are absent (a report holds no null)
      report["data_pipeline"]["never_stall_GBps"] = d.never_stall_GBps;
      report["data_pipeline"]["never_stall_GBps_per_node"] = d.never_stall_GBps_per_node;
    }
  }
  if (r.resilience) {
    const ResilienceResult& x = *r.resilience;
    json out = {
        {"failures_per_hour", {{"gpu", x.rates.gpu}, {"host", x.rates.host}, {"nic", x.rates.nic},
                               {"network", x.rates.network}, {"software", x.rates.software},
                               {"total", x.rates.total_per_hour()}}},
        {"mean_time_to_interruption_hours", x.mtti_hours},
        {"checkpoint", {{"size_bytes", x.checkpoint_bytes}, {"target", x.target}, {"async", x.async},
                        {"write_s", x.write_s}, {"stall_s", x.stall_s}, {"load_s", x.load_s},
                        {"interval_s", x.interval_s}, {"interval_steps", x.interval_steps},
                        {"interval_is_optimal", x.interval_optimal}, {"interval_raised_to_write", x.interval_raised},
                        {"optimal_interval_s", x.optimal_interval_s}, {"optimal_interval_steps", x.optimal_interval_steps},
                        {"young_daly_interval_s", x.young_daly_s}}},
        {"restart_s", x.restart_s},
        {"nccl_init_s", x.nccl_init_s},
        {"useful_work_s", x.work_s},
        {"expected_interruptions", x.expected.failures},
        {"lost_s", {{"rework", x.expected.rework_s}, {"restart", x.expected.restart_s},
                    {"checkpoint_stalls", x.expected.checkpoint_s}}},
        {"goodput", x.goodput},
        {"goodput_at_optimal_interval", x.goodput_at_optimal},
        {"effective_days_to_train", x.effective_days},
        {"gpu_hours_to_train", x.gpu_hours},
        {"usd_to_train", x.usd},
        {"usd_per_useful_token", x.usd_per_token},
    };
    if (x.runs > 0)
      out["monte_carlo"] = {{"runs", x.runs}, {"seed", x.seed}, {"mean_days", x.mc_mean_days},
                            {"mean_interruptions", x.mc_mean_failures}, {"p10_days", x.p10_days},
                            {"p50_days", x.p50_days}, {"p90_days", x.p90_days}};
    report["resilience"] = std::move(out);
  }
  if (r.steps) {
    const StepDistribution& d = *r.steps;
    report["step_distribution"] = {{"steps", d.steps}, {"seed", d.seed}, {"compute_jitter_cv", d.cv},
                                   {"sync_ranks", d.sync_ranks}, {"sigma_s", d.sigma_s},
                                   {"deterministic_s", d.deterministic_s}, {"mean_s", d.mean_s},
                                   {"p50_s", d.p50_s}, {"p90_s", d.p90_s}, {"p99_s", d.p99_s}, {"max_s", d.max_s}};
  }
}

namespace {
std::string dur(double s) {
  if (s >= 86400) return fmt("%.2f days", s / 86400);
  if (s >= 3600) return fmt("%.2f h", s / 3600);
  if (s >= 60) return fmt("%.1f min", s / 60);
  if (s >= 1) return fmt("%.2f s", s);
  return fmt("%.2f ms", s * 1e3);
}
// 10824064 -> "10.82 million", 64210 -> "64,210"
std::string big(double v) {
  if (v >= 1e6) return fmt("%.2f million", v / 1e6);
  const long long n = std::llround(v);
  return n >= 1000 ? std::to_string(n / 1000) + "," + fmt("%03.0f", static_cast<double>(n % 1000)) : std::to_string(n);
}
}  // namespace

std::string to_text(const RunReport& r) {
  std::string o;
  // Each label in a field of 14 columns, lined up with the step report's.
  auto line = [&o](const char* label, const std::string& text) {
    char head[32];
    std::snprintf(head, sizeof head, "%-13s ", label);
    o.append(head).append(text).append("\n");
  };
  if (r.data) {
    const DataStallResult& d = *r.data;
    o += "\n";
    line("input", d.source + fmt(": %.3g GB per step, ", d.bytes_per_step / 1e9) + fmt("%.3g GB/s per node; ", d.node_read_GBps) +
                      "read " + dur(d.read_s) + ", decode " + dur(d.decode_s) + " per step");
    line("input stall", dur(d.stall_s) + " per step" + fmt(" (%.1f%% of the step, ", 100 * d.stall_fraction) + d.bottleneck +
                            "); step with input " + dur(d.step_with_input_s));
    line("never stalls",
         d.can_hide ? fmt("at %.3g GB/s aggregate", d.never_stall_GBps) + fmt(" (%.3g GB/s per node)", d.never_stall_GBps_per_node)
                    : std::string("never: prefetch_depth 0 does not overlap loading with the step"));
  }
  if (r.resilience) {
    const ResilienceResult& x = *r.resilience;
    o += "\n";
    line("failures", fmt("%.4g per hour", x.rates.total_per_hour()) + fmt(" (one every %.2f h: ", x.mtti_hours) +
                         fmt("GPU %.3g, ", x.rates.gpu) + fmt("host %.3g, ", x.rates.host) + fmt("NIC %.3g, ", x.rates.nic) +
                         fmt("network %.3g, ", x.rates.network) + fmt("software %.3g /h)", x.rates.software));
    line("checkpoint", fmt("%.3g GB to ", x.checkpoint_bytes / 1e9) + x.target + (x.async ? " async" : " sync") + ": write " +
                           dur(x.write_s) + ", stall " + dur(x.stall_s) + " each; every " + dur(x.interval_s) +
                           fmt(" (%.0f steps", x.interval_steps) + (x.interval_optimal ? ", optimal" : "") +
                           (x.interval_raised ? ", raised to the write time" : "") + ")");
    line("optimal", "every " + dur(x.optimal_interval_s) + fmt(" (%.0f steps", x.optimal_interval_steps) +
                        fmt("; goodput %.2f%%", 100 * x.goodput_at_optimal) + "; Young/Daly sqrt(2C/lambda) " + dur(x.young_daly_s) + ")");
    line("restart", dur(x.restart_s) + " (NCCL init " + dur(x.nccl_init_s) + ", checkpoint load " + dur(x.load_s) + ")");
    line("interrupts", fmt("%.1f expected over the run", x.expected.failures));
    line("lost time", "rework " + dur(x.expected.rework_s) + ", restarts " + dur(x.expected.restart_s) + ", checkpoint stalls " +
                          dur(x.expected.checkpoint_s));
    line("goodput", fmt("%.2f%%", 100 * x.goodput) + " of " + dur(x.expected.total_s) + " is useful work (" + dur(x.work_s) + ")");
    line("effective", fmt("%.1f days, ", x.effective_days) + big(x.gpu_hours) + " GPU-hours, $" + big(x.usd) +
                          fmt(", $%.4g per million useful tokens", x.usd_per_token * 1e6));
    if (x.runs > 0)
      line("monte carlo", std::to_string(x.runs) + " runs, seed " + std::to_string(x.seed) + fmt(": days to train p10 %.2f", x.p10_days) +
                              fmt(", p50 %.2f", x.p50_days) + fmt(", p90 %.2f", x.p90_days) + fmt(" (mean %.2f", x.mc_mean_days) +
                              fmt(", %.1f interruptions)", x.mc_mean_failures));
  }
  if (r.steps) {
    const StepDistribution& d = *r.steps;
    o += "\n";
    line("step dist", std::to_string(d.steps) + " steps" + fmt(", jitter cv %.3g", d.cv) + " over " + std::to_string(d.sync_ranks) +
                          " ranks, seed " + std::to_string(d.seed) + ": p50 " + dur(d.p50_s) + ", p90 " + dur(d.p90_s) +
                          ", p99 " + dur(d.p99_s) + ", max " + dur(d.max_s) + " (deterministic " + dur(d.deterministic_s) + ")");
  }
  return o;
}

}  // namespace cs::sim::goodput
