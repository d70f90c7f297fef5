#include "sim/step/step_budget.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "models/memory/memory_model.hpp"
#include "models/parallelism/layout.hpp"
#include "models/workload/finetune.hpp"
#include "models/workload/transformer.hpp"
#include "sim/base/input_error.hpp"
#include "sim/step/orbits.hpp"
#include "sim/step/step_units.hpp"

namespace cs::sim {

using models::OpKind;

namespace {

// A materialised task with its share of collectives, dependencies and names. 100 B held until fp8 runs'
// tensor-parallel all-gathers met their GEMMs (session 22): each overlapped gather is two collectives, and
// Llama-3 405B on 256 GB200 (fp8, TP 4) peaked at 100.5 B a task; 104 keeps the bound with room.
constexpr double kBytesPerTask = 104;
// Every rank executed from the per-stage template (sim/engine/template_executor.hpp): a byte of
// dependencies left per task, and per collective instance its number, template collective, group and
// arrivals (and the flow network's choice pointer): measured 2.6 B (analytical) and 3.4 B (flow) a task, the
// whole process, on the 10^8 tasks of Llama-3 405B over 16,384 H100 (bench/README.md).
constexpr double kBytesPerTemplateTask = 4;
constexpr double kBytesPerGpuAnalytical = 1536;
constexpr double kBytesPerGpuFlow = 2560;
constexpr double kBytesPerNic = 1000;
constexpr double kBaseBytes = 8e6;
// Several jobs: what each job keeps besides its tasks until the end of simulate_jobs (simulation.cpp): its
// view of the scenario (a Scenario, 2 KB, with its model and training), its report and its alone run's link
// loads. 512 one-GPU jobs of one layer and one micro-batch peak at 11.3 MiB over ~250 tasks a job (the
// property test in tests/sim/test_step_budget.cpp); 8 KB a job keeps that under the estimate with room. (Each
// view also kept a copy's buffer for every job, 568 B x jobs, until Scenario::job_scenario released it: 2,048
// jobs took 2.4 GB more than their estimate, issue 32.)
constexpr double kBytesPerJob = 8192;
constexpr double kEventsPerTask = 1.25;
constexpr double kGiB = 1073741824.0;

// Tasks of one op list on one rank (see the header).
double list_tasks(const std::vector<models::Op>& ops, const Layout& layout, const models::TrainingConfig& t) {
  double n = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const models::Op& op = ops[i];
    if (op.kind == OpKind::collective) {
      if (layout.size(op.group) < 2 || op.group == models::ProcessGroup::cp) continue;  // cp: counted with attention
      // Split in two as the step builder's run_ops splits it: an all-gather the next op's GEMM overlaps, a
      // reduce-scatter overlapping the GEMM before it (an fp8 cast goes before the gather: add_quantize_casts).
      const bool overlap = t.tp_comm_overlap && t.sequence_parallel && op.group == models::ProcessGroup::tp;
      const bool split = overlap && ((op.collective == models::CollectiveKind::all_gather && i + 1 < ops.size() &&
                                      ops[i + 1].kind == OpKind::gemm) ||
                                     (op.collective == models::CollectiveKind::reduce_scatter && i > 0 && ops[i - 1].kind == OpKind::gemm));
      n += split ? 2 : 1;
    } else if ((op.kind == OpKind::attention_fwd || op.kind == OpKind::attention_bwd) && t.cp > 1) {
      n += 2.0 * t.cp - 1;
    } else {
      n += 1;
    }
  }
  return n;
}

struct JobEstimate {
  double tasks = 0;
  double ranks = 0;
  double micro_batches = 0;
  double layers_per_rank = 0;
};

// ranks_per_stage: the simulated ranks of each stage (classes of equal ranks, or every rank).
JobEstimate estimate_job(const models::ModelConfig& model, const models::TrainingConfig& t, double ranks_per_stage,
                         double grad_bucket_params) {
  const Layout layout(t.tp, t.cp, t.dp, t.pp, t.ep, t.zero_stage >= 3 ? t.fsdp_shard_size : 0, t.expert_tp());
  const bool moe = model.num_moe_experts > 0;
  // The units of every stage and their op lists, as the step builder takes them (step_units.hpp); the
  // tasks of a list counted once.
  const UnitOps ops(model, t);
  std::map<const models::LayerOps*, double> counted;
  auto tasks_of = [&](const UnitParams& u) {
    const models::LayerOps& list = ops.of(u);
    const auto [it, added] = counted.try_emplace(&list, 0.0);
    if (added) it->second = list_tasks(list.forward, layout, t) + list_tasks(list.backward, layout, t);
    return it->second;
  };
  const std::vector<std::int64_t> split = pipeline_split(model, t);
  const double m = static_cast<double>(t.num_micro_batches());
  const bool zero3 = t.zero_stage >= 3;
  const double dp_group = layout.size(GroupKind::dp_cp);

  JobEstimate e;
  e.micro_batches = m;
  for (int stage = 0; stage < t.pp; ++stage) {
    double per_mb = 0, layers = 0, units = 0;
    const StageUnits su = stage_units(model, t, stage, split);
    for (const auto& chunk : su.chunks) {
      for (const UnitParams& u : chunk) {
        per_mb += tasks_of(u);
        units += 1;
        layers += u.kind == UnitKind::layer ? 1 : 0;
      }
      if (t.pp > 1) per_mb += 2;  // a receive and a send per pass, forward and backward (at most 4)
      // pipeline_tensor_split: the receiver's TP all-gathers (forward, backward, and the output's re-gather)
      if (t.pp > 1 && t.pipeline_tensor_split != models::PipelineTensorSplit::none && t.tp > 1 && !t.sequence_parallel)
        per_mb += t.pipeline_tensor_split == models::PipelineTensorSplit::partitioned ? 3 : 2;
    }
    if (zero3 && dp_group > 1) {
      if (t.zero3_collectives == models::Zero3Collectives::per_tensor_synchronous) {
        // Per tensor (a layer's most): up to three gathers (forward, recompute, backward) and a reduce-scatter,
        // each with its copy kernel.
        const double tensors = static_cast<double>(std::max<std::size_t>(models::layer_parameter_tensors(model, t.tp).size(), 3));
        per_mb += units * tensors * 8;
      } else {
        per_mb += units * (moe ? 3 : 2);
      }
    }
    per_mb += 2.0 * static_cast<double>(t.cpu_offloading_num_layers);  // CPU activation offload: a copy out and back a layer
    double rank = m * per_mb;
    // Gradient buckets (each micro-batch under ZeRO-2), the optimizer and its gathers.
    const models::RankParameters rp = models::parameters_on_rank(model, t, stage);
    // A unit's gradients join the open bucket whole, so a bucket closes at most once per unit and kind
    // (dense, expert), plus once at the end of each chunk's backward: layers wider than the bucket (Llama-3
    // 405B at TP 8: 0.4 B parameters a layer against 4e7) make one bucket each. Counted so under ZeRO-2,
    // whose buckets repeat every micro-batch; once a step (ZeRO 0 / 1) the bound by parameters is kept.
    double buckets = std::ceil(rp.total() / std::max(1.0, grad_bucket_params) + 1);
    if (t.zero_stage == 2) buckets = std::min(buckets, units * (moe ? 2 : 1) + t.vp);
    if (!zero3 && dp_group > 1) rank += buckets * (t.zero_stage == 2 ? m : 1) + 2;
    rank += 3;
    e.tasks += rank * ranks_per_stage;
    e.layers_per_rank = std::max(e.layers_per_rank, layers);
  }
  e.ranks = ranks_per_stage * t.pp;
  return e;
}

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", v);
  return buf;
}

}  // namespace

StepEstimate estimate_step(const Scenario& s, bool materialised) {
  StepEstimate e;
  const bool flow = s.simulation.network == NetworkBackend::flow;
  double job_tasks = 0;
  auto add = [&](const models::ModelConfig& m, const models::TrainingConfig& t, double ranks_per_stage) {
    const JobEstimate j = estimate_job(m, t, ranks_per_stage, s.simulation.grad_bucket_params);
    job_tasks += j.tasks;
    e.simulated_ranks += j.ranks;
    e.micro_batches = std::max(e.micro_batches, j.micro_batches);
    e.layers_per_rank = std::max(e.layers_per_rank, j.layers_per_rank);
  };
  auto every = [](const models::TrainingConfig& t) { return static_cast<double>(t.tp) * t.cp * t.dp; };
  if (s.multi_job()) {
    for (const Job& j : s.jobs) add(j.model, j.training, s.simulation.symmetry && !s.heterogeneity.any() ? 1.0 : every(j.training));
  } else {
    // One rank per class of equal ranks (orbits.hpp: one per stage on a homogeneous cluster).
    const Orbits o = find_orbits(s);
    add(s.model, s.training, o.batched ? o.classes_per_stage() : every(s.training));
  }
  // Several jobs: every job's graph alone, then all of them merged (simulation.cpp).
  e.tasks = job_tasks;
  const double built = s.multi_job() ? 2 * job_tasks : job_tasks;
  e.events = kEventsPerTask * built;
  e.gpus = static_cast<double>(s.cluster.nodes) * s.cluster.gpus_per_node;
  e.nics = s.cluster.nodes > 1 ? static_cast<double>(s.cluster.nodes) * s.cluster.nics_per_node : 0;
  // simulation.symmetry false on one job runs from a template of one rank per stage (simulation.cpp).
  const bool from_template = !materialised && !s.multi_job() && !s.simulation.symmetry;
  const double stage_tasks = job_tasks / every(s.training) * s.training.pp;
  const double task_bytes = from_template ? kBytesPerTemplateTask * built + kBytesPerTask * stage_tasks : kBytesPerTask * built;
  e.memory_bytes = kBaseBytes + task_bytes + (flow ? kBytesPerGpuFlow : kBytesPerGpuAnalytical) * e.gpus + kBytesPerNic * e.nics +
                   kBytesPerJob * static_cast<double>(s.jobs.size());
  return e;
}

void check_budget(const Scenario& s, bool materialised) {
  const StepEstimate e = estimate_step(s, materialised);
  const double max_tasks = s.simulation.max_tasks, max_bytes = s.simulation.max_memory_gib * kGiB;
  const bool too_many = e.tasks > max_tasks, too_big = e.memory_bytes > max_bytes;
  if (!too_many && !too_big) return;
  // The knob that drives it: the cluster's GPUs or NICs when their graph is the larger part of the memory
  // and the memory is what is over, else the largest factor of the task count.
  const double task_bytes = e.memory_bytes - (s.simulation.network == NetworkBackend::flow ? kBytesPerGpuFlow : kBytesPerGpuAnalytical) * e.gpus -
                            kBytesPerNic * e.nics - kBaseBytes - kBytesPerJob * static_cast<double>(s.jobs.size());
  const double gpu_bytes = (s.simulation.network == NetworkBackend::flow ? kBytesPerGpuFlow : kBytesPerGpuAnalytical) * e.gpus;
  const double nic_bytes = kBytesPerNic * e.nics;
  std::string knob;
  if (!too_many && std::max(gpu_bytes, nic_bytes) > task_bytes) {
    knob = nic_bytes > gpu_bytes
               ? "cluster.inter_node.nics_per_node (" + sci(e.nics) + " NICs)"
               : "cluster.nodes x cluster.gpus_per_node (" + sci(e.gpus) + " GPUs)";
  } else if (e.micro_batches >= e.layers_per_rank && e.micro_batches >= e.simulated_ranks) {
    knob = "training.global_batch_size (" + sci(e.micro_batches) + " micro-batches per step)";
  } else if (e.layers_per_rank >= e.simulated_ranks) {
    knob = "model.num_layers (" + sci(e.layers_per_rank) + " layers on one pipeline stage)";
  } else {
    knob = std::string(s.simulation.symmetry ? "the pipeline stages" : "simulation.symmetry false") + " (" +
           sci(e.simulated_ranks) + " simulated ranks)";
  }
  char buf[96];
  if (e.memory_bytes >= kGiB)
    std::snprintf(buf, sizeof buf, "%.1f GiB", e.memory_bytes / kGiB);
  else
    std::snprintf(buf, sizeof buf, "%.0f MiB", e.memory_bytes / 1048576.0);
  const std::string limit = too_many ? "simulation.max_tasks " + sci(max_tasks)
                                     : "simulation.max_memory_gib / --max-memory-gib " + sci(s.simulation.max_memory_gib);
  throw InputError(s.file + ": simulation: too large to simulate: about " + sci(e.tasks) + " tasks and " + buf +
                   " (limit " + limit + "), driven by " + knob + "; raise the limit or shrink the step");
}

}  // namespace cs::sim
