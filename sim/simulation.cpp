#include "sim/simulation.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>

#include "models/compute/compute_model.hpp"
#include "models/workload/finetune.hpp"
#include "models/workload/transformer.hpp"
#include "sim/network/analytical_network.hpp"
#include "sim/base/check.hpp"
#include "sim/base/weighted_classes.hpp"
#include "sim/engine/intervals.hpp"
#include "sim/engine/template_executor.hpp"
#include "sim/network/flow_network.hpp"
#include "sim/network/make_network.hpp"
#include "sim/network/nccl_model_fit.hpp"
#include "sim/report/breakdown.hpp"
#include "sim/scenario/enum_names.hpp"
#include "sim/step/step_budget.hpp"

namespace cs::sim {
namespace {

// Every simulated rank's times from its task records (sim/report/breakdown.hpp).
std::vector<RankTimes> every_rank_times(const StepPlan& plan, const ExecutionResult& ex) {
  std::vector<RankTimes> out;
  out.reserve(static_cast<std::size_t>(plan.graph.num_ranks()));
  for (int k = 0; k < plan.graph.num_ranks(); ++k) {
    poll_cancel();  // a rank's intervals of a huge step take a while to merge
    out.push_back(rank_times(plan.graph, ex.records, plan.flops, k));
  }
  return out;
}

// `times[k]` for simulated rank k, which stands for mirrors[k] real ranks; `tasks` and `events` for the
// simulator block.
Report make_report(const Scenario& s, const std::vector<RankTimes>& times, const std::vector<int>& mirrors, Time makespan,
                   std::uint64_t events, std::size_t tasks, const std::vector<LinkLoad>& loads) {
  const auto& t = s.training;
  Report r = job_report(s);

  const double step = to_seconds(makespan);
  CS_CHECK(step > 0);
  r.step_time_s = step;
  r.step_time_band = expected_error_band(band_features(r), step);  // error_band.hpp: validation residuals
  r.tokens_per_s = static_cast<double>(t.tokens_per_step()) / step;
  // Fine-tuning: the frozen weights' wgrads are not done, the adapters' are (models/workload/finetune.hpp).
  const double model_flops = models::finetune_model_flops_per_step(s.model, t);
  r.model_tflops_per_gpu = model_flops / step / r.num_gpus / 1e12;
  // The peak of the GPUs the step runs on: with node groups their mean over the nodes (the job's, for a
  // job of a multi-job scenario), so that MFU is model FLOPs over the sum of every GPU's own peak.
  const auto mean_peak = [&s](models::Dtype d) {
    return s.heterogeneity.node_mean([d](const models::GpuSpec& gpu) { return gpu.peak_tflops(d); }, s.gpu.peak_tflops(d)) * 1e12;
  };
  const double peak = mean_peak(models::Dtype::bf16);
  r.mfu = model_flops / (step * r.num_gpus * peak);
  const double causal_flops = models::model_flops_per_step(s.model, t, models::AttentionFlops::causal);
  // Fine-tuning's attention is training's (no weights), so its causal count drops by the same FLOPs.
  r.mfu_causal = (t.finetune.active() ? model_flops - (models::model_flops_per_step(s.model, t) - causal_flops) : causal_flops) /
                 (step * r.num_gpus * peak);

  // Per simulated rank, then averaged over the real ranks: each simulated rank stands for plan.mirrors[k]
  // of them (its class of equal ranks, sim/step/orbits.hpp). Ranks with equal times form one class, and
  // every mean is a sum over the classes weighted by their share of the real ranks
  // (sim/base/weighted_classes.hpp), so that a batched run and a one-by-one run of the same ranks add the
  // same numbers in the same order: byte-identical reports.
  const auto ranks = times.size();
  CS_CHECK(mirrors.size() == ranks);
  struct RankTimesHash {
    std::uint64_t operator()(const RankTimes& rt) const {
      Fnv1a f;
      for (Time v : rt.busy) f.mix(static_cast<std::uint64_t>(v));
      for (Time v : rt.exposed_by_kind) f.mix(static_cast<std::uint64_t>(v));
      f.mix(static_cast<std::uint64_t>(rt.compute));
      f.mix(static_cast<std::uint64_t>(rt.exposed));
      f.mix(std::bit_cast<std::uint64_t>(rt.flops));
      return f.h;
    }
  };
  WeightedClasses<RankTimes, RankTimesHash> classes;
  for (std::size_t k = 0; k < ranks; ++k) {
    const RankTimes& rt = times[k];
    CS_CHECK(rt.compute <= makespan);  // self-check: the step is never shorter than its compute
    classes.add(rt, static_cast<std::uint64_t>(mirrors[k]));
  }
  const std::uint64_t real_ranks = classes.total();
  Breakdown sum;
  std::array<double, kNumCategories> exposed_by_kind{};
  double executed_flops = 0, recompute_flops = 0, optimizer_flops = 0;  // over the real ranks
  for (std::size_t c = 0; c < classes.size(); ++c) {
    const RankTimes& rt = classes.value(c);
    const auto class_ranks = static_cast<double>(classes.weight(c));
    const double share = class_ranks / static_cast<double>(real_ranks);
    for (std::size_t k = 0; k < rt.busy.size(); ++k) {
      r.busy_s[k] += to_seconds(rt.busy[k]) * share;
      exposed_by_kind[k] += to_seconds(rt.exposed_by_kind[k]) * share;
    }
    const Time idle = makespan - rt.compute - rt.exposed;
    sum.compute_s += to_seconds(rt.compute) * share;
    sum.exposed_comm_s += to_seconds(rt.exposed) * share;
    (t.pp > 1 ? sum.pipeline_bubble_s : sum.other_s) += to_seconds(idle) * share;
    executed_flops += rt.flops * class_ranks;
    recompute_flops += rt.recompute_flops * class_ranks;
    optimizer_flops += rt.optimizer_flops * class_ranks;
  }
  // HFU in MFU's convention (report.hpp): the model FLOPs plus the recompute, the recompute valued at
  // the share of the forward and backward kernels' FLOPs it adds.
  const double fwd_bwd_flops = executed_flops - recompute_flops - optimizer_flops;
  r.hfu = fwd_bwd_flops > 0 ? r.mfu * (1.0 + recompute_flops / fwd_bwd_flops) : r.mfu;
  // Self-check against the peak of the format the GEMMs run in: an fp8 run may exceed 100% of the bf16
  // peak that MFU and HFU are quoted against, never the fp8 peak; nor may the kernels' own FLOPs.
  const double format_peak = mean_peak(t.precision);
  const double executed_rate = executed_flops / (step * r.num_gpus);
  CS_CHECK(r.mfu * peak <= format_peak * (1.0 + 1e-9) && executed_rate <= format_peak * (1.0 + 1e-9));
  CS_CHECK(r.hfu >= r.mfu && r.mfu >= r.mfu_causal && r.mfu_causal >= 0);

  r.breakdown = sum;
  r.exposed_comm_s_by_kind = scale_exposed_by_kind(exposed_by_kind, r.breakdown.exposed_comm_s);
  r.gpu_busy = r.breakdown.compute_s / step;

  for (const LinkLoad& l : loads)
    r.links.push_back({l.name, l.bytes_per_gpu, l.bandwidth_Bps, l.bytes_per_gpu / (l.bandwidth_Bps * step)});

  set_memory(r, models::peak_memory_per_gpu(s.model, t), s.gpu);

  models::CostInputs ci;
  ci.step_time_s = step;
  ci.num_gpus = r.num_gpus;
  ci.price_per_gpu_hour_usd = s.price_per_gpu_hour_usd;
  ci.tokens_per_step = static_cast<double>(t.tokens_per_step());
  ci.tokens_to_train = t.tokens_to_train;
  ci.gpu_tdp_w = s.heterogeneity.node_mean([](const models::GpuSpec& gpu) { return gpu.board_power_w(); }, s.gpu.board_power_w());  // node groups: their mean; a power cap's
  ci.gpu_busy_fraction = r.gpu_busy;
  ci.num_nodes = (r.num_gpus + s.cluster.gpus_per_node - 1) / s.cluster.gpus_per_node;
  ci.node_overhead_w = s.node_overhead_w;
  ci.node_idle_power_fraction = s.node_idle_power_fraction.value_or(models::kHostIdlePowerFraction);
  ci.pue = s.pue;
  ci.usd_per_kwh = s.usd_per_kwh;
  r.cost = models::compute_cost(ci);

  r.simulated_ranks = static_cast<int>(ranks);
  r.tasks = tasks;
  r.events = events;
  return r;
}

Report make_report(const Scenario& s, const StepPlan& plan, const ExecutionResult& ex, const std::vector<LinkLoad>& loads) {
  return make_report(s, every_rank_times(plan, ex), plan.mirrors, ex.makespan, ex.events, plan.graph.tasks().size(), loads);
}

// Both back-ends price collectives with the profile's fitted NCCL constants when the scenario names one
// (sim/network/nccl_model_fit.hpp): run, sweep and the GUI all come through here.
std::unique_ptr<CommBackend> make_network(const Scenario& s, const CollectiveTable& graph, const topo::Cluster& cluster) {
  const NcclCalibration calibration = s.comm_profile ? nccl_calibration(*s.comm_profile, s.calibration) : NcclCalibration{};
  return make_network(s.simulation.network, graph, cluster, s.simulation.nccl_algorithm, calibration);
}

// When the last of tasks [first, first + count) ends: a job's step in a run that may hold other jobs.
Time last_end(const ExecutionResult& ex, std::size_t first, std::size_t count) {
  Time end = 0;
  for (std::size_t i = first; i < first + count; ++i) end = std::max(end, ex.records[i].end);
  return end;
}

// One graph holding every part: ranks of part k after those of parts 0..k-1, collectives and tasks
// likewise; groups keep their GPUs (parts on disjoint GPUs never share a group). Tasks are added in
// their order, and successors in theirs, so each stream, each collective's members and each task's
// successor list keep the order they had in their own graph.
StepPlan merge(const std::vector<StepPlan>& parts) {
  int ranks = 0;
  for (const StepPlan& p : parts) ranks += p.graph.num_ranks();
  StepPlan out;
  out.graph = TaskGraph(ranks);
  TaskGraph& g = out.graph;
  std::uint32_t rank_base = 0;
  for (const StepPlan& p : parts) {
    const TaskGraph& pg = p.graph;
    std::vector<std::uint32_t> group(pg.num_groups());
    for (std::uint32_t k = 0; k < pg.num_groups(); ++k) group[k] = g.add_group(pg.group(k));
    for (std::uint32_t k = 0; k < pg.num_groups(); ++k) {
      std::vector<std::uint32_t> mirrors;
      for (std::uint32_t m : pg.mirrors(k)) mirrors.push_back(group[m]);
      g.set_mirrors(group[k], std::move(mirrors));
    }
    const auto collective_base = static_cast<std::uint32_t>(g.collectives().size());
    for (const Collective& c : pg.collectives()) {
      Collective copy = c;
      copy.group = group[c.group];
      copy.members.clear();
      g.add_collective(std::move(copy));
    }
    const auto task_base = static_cast<TaskId>(g.tasks().size());
    std::vector<std::uint32_t> name(0);
    for (const Task& t : pg.tasks()) {
      Task copy = t;
      copy.rank += rank_base;
      if (t.name >= name.size()) name.resize(t.name + 1, kNone);
      if (name[t.name] == kNone) name[t.name] = g.intern(pg.name(t.name));
      copy.name = static_cast<std::uint16_t>(name[t.name]);
      if (t.collective != kNone) copy.collective = collective_base + t.collective;
      const TaskId id = g.add_task(copy);
      if (copy.collective != kNone) g.add_member(copy.collective, id);
    }
    for (TaskId t = 0; t < pg.tasks().size(); ++t)
      for (const TaskId* s = pg.successors_begin(t); s != pg.successors_end(t); ++s) g.add_dependency(task_base + t, task_base + *s);
    out.global_rank.insert(out.global_rank.end(), p.global_rank.begin(), p.global_rank.end());
    out.flops.insert(out.flops.end(), p.flops.begin(), p.flops.end());
    out.mirrors.insert(out.mirrors.end(), p.mirrors.begin(), p.mirrors.end());
    out.flops.resize(g.tasks().size(), 0.0);
    rank_base += static_cast<std::uint32_t>(pg.num_ranks());
  }
  g.freeze();
  return out;
}

SimulationResult simulate_jobs(const Scenario& s) {
  const std::shared_ptr<const topo::Cluster> graph = make_cluster(s);  // the topology file's, or built
  const topo::Cluster& cluster = *graph;
  const models::ComputeProfile& profile = s.compute_profile ? *s.compute_profile : models::default_compute_profile();
  ExecutorOptions options;
  options.comm_compute_contention = s.contention();
  const std::size_t n = s.jobs.size();
  std::vector<Scenario> views;
  std::vector<StepPlan> plans;
  std::vector<Time> alone;
  std::vector<std::vector<LinkLoad>> own_loads;  // each job's own traffic (run alone: the same bytes)
  for (std::size_t j = 0; j < n; ++j) {
    views.push_back(s.job_scenario(j));
    plans.push_back(build_step(views[j], profile, s.job_gpus(j)));
    const auto network = make_network(s, plans[j].graph, cluster);
    const ExecutionResult ex = execute(plans[j].graph, *network, options);
    alone.push_back(last_end(ex, 0, ex.records.size()));
    own_loads.push_back(network->link_loads());
  }

  SimulationResult result;
  result.plan = merge(plans);
  const auto network = make_network(s, result.plan.graph, cluster);
  result.execution = execute(result.plan.graph, *network, options);
  MultiJobReport& multi = result.multi_job;
  multi.name = s.name;
  multi.network = std::string(to_string(s.simulation.network));
  multi.makespan_s = to_seconds(result.execution.makespan);
  for (const LinkLoad& l : network->link_loads())
    multi.links.push_back({l.name, l.bytes_per_gpu, l.bandwidth_Bps, l.bytes_per_gpu / (l.bandwidth_Bps * multi.makespan_s)});
  std::size_t first = 0;
  for (std::size_t j = 0; j < n; ++j) {
    const std::size_t count = plans[j].graph.tasks().size();
    ExecutionResult part;
    part.records.assign(result.execution.records.begin() + static_cast<std::ptrdiff_t>(first),
                        result.execution.records.begin() + static_cast<std::ptrdiff_t>(first + count));
    part.makespan = last_end(result.execution, first, count);
    part.events = result.execution.events;
    Report r = make_report(views[j], plans[j], part, own_loads[j]);
    r.network = std::string(to_string(s.simulation.network));
    r.job = s.jobs[j].name;
    r.job_nodes = s.jobs[j].nodes;
    r.step_time_alone_s = to_seconds(alone[j]);
    r.slowdown = r.step_time_s / r.step_time_alone_s;
    multi.jobs.push_back(std::move(r));
    first += count;
  }
  result.report = multi.jobs.front();
  return result;
}

// Every rank of a single-job step executed from its per-stage template (sim/engine/template_executor.hpp),
// byte-identical to the materialised graph's run; nullopt where the template does not cover the step.
std::optional<SimulationResult> simulate_from_template(const Scenario& s) {
  const models::ComputeProfile& profile = s.compute_profile ? *s.compute_profile : models::default_compute_profile();
  StepTemplatePlan tp = build_step_template(s, profile);
  if (!tp.fallback.empty()) return std::nullopt;
  const TaskGraph& g = tp.plan.graph;
  tp.spec.graph = &g;
  const std::shared_ptr<const topo::Cluster> graph = make_cluster(s);
  const TemplateInstances instances(tp.spec);
  const std::unique_ptr<CommBackend> network = make_network(s, instances, *graph);
  ExecutorOptions options;
  options.comm_compute_contention = s.contention();
  TemplateResult ex = execute_template(tp.spec, instances, *network, options);
  poll_cancel();

  // rank_times' per-rank sums from the executor's totals; the FLOPs are the template rank's (the same
  // kernels on every rank of a stage), summed stream by stream in issue order as rank_times does.
  struct Flops {
    double all = 0, recompute = 0, optimizer = 0;
  };
  std::vector<Flops> stage_flops(static_cast<std::size_t>(g.num_ranks()));
  for (int k = 0; k < g.num_ranks(); ++k)
    for (int st = 0; st < kStreamsPerRank; ++st)
      for (const TaskId id : g.stream_tasks(k, static_cast<StreamKind>(st))) {
        const Task& task = g.tasks()[id];
        if (task.collective != kNone) continue;
        Flops& f = stage_flops[static_cast<std::size_t>(k)];
        f.all += tp.plan.flops[id];
        if (task.category == Category::recompute) f.recompute += tp.plan.flops[id];
        if (task.category == Category::optimizer) f.optimizer += tp.plan.flops[id];
      }
  const std::uint32_t n = tp.spec.num_ranks();
  std::vector<RankTimes> times(n);
  for (std::uint32_t r = 0; r < n; ++r) {
    const RankTotals& tot = ex.ranks[r];
    RankTimes& rt = times[r];
    rt.busy = tot.busy;
    rt.exposed_by_kind = tot.exposed_by_kind;
    rt.compute = tot.compute;
    rt.exposed = tot.exposed;
    const Flops& f = stage_flops[tp.spec.template_rank[r]];
    rt.flops = f.all;
    rt.recompute_flops = f.recompute;
    rt.optimizer_flops = f.optimizer;
  }
  SimulationResult result;
  result.report = make_report(s, times, std::vector<int>(n, 1), ex.makespan, ex.events, instances.num_tasks(), network->link_loads());
  result.report.network = std::string(to_string(s.simulation.network));
  result.from_template = true;
  result.busiest_kernel_square_sum = ex.kernel_square_sum.empty() ? 0 : *std::max_element(ex.kernel_square_sum.begin(), ex.kernel_square_sum.end());
  result.execution.makespan = ex.makespan;
  result.execution.events = ex.events;
  result.execution.records = std::move(ex.records);
  result.plan = std::move(tp.plan);
  return result;
}

// One job's step, every task of its graph materialised (a simulated rank per class, or every rank).
SimulationResult simulate_built(const Scenario& scenario) {
  const std::shared_ptr<const topo::Cluster> graph = make_cluster(scenario);  // the topology file's, or built
  const topo::Cluster& cluster = *graph;
  SimulationResult result;
  result.plan = build_step(scenario, scenario.compute_profile ? *scenario.compute_profile
                                                                  : models::default_compute_profile());
  const std::unique_ptr<CommBackend> network = make_network(scenario, result.plan.graph, cluster);
  ExecutorOptions options;
  options.comm_compute_contention = scenario.contention();
  result.execution = execute(result.plan.graph, *network, options);
  poll_cancel();
  result.report = make_report(scenario, result.plan, result.execution, network->link_loads());
  result.report.network = std::string(to_string(scenario.simulation.network));
  return result;
}

}  // namespace

SimulationResult simulate(const Scenario& scenario, const std::atomic<bool>* cancel) {
  const CancelScope scope(cancel);
  poll_cancel();
  return simulate(scenario);
}

SimulationResult simulate(const Scenario& scenario) {
  check_budget(scenario);  // before anything is built
  if (scenario.multi_job()) return simulate_jobs(scenario);
  if (!scenario.simulation.symmetry)
    if (std::optional<SimulationResult> r = simulate_from_template(scenario)) return std::move(*r);
  return simulate_built(scenario);
}

SimulationResult simulate_materialised(const Scenario& scenario) {
  check_budget(scenario, true);  // the graph of every task
  if (scenario.multi_job()) return simulate_jobs(scenario);
  return simulate_built(scenario);
}

}  // namespace cs::sim
