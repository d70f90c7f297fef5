#include "sim/report/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/base/units.hpp"
#include "sim/report/format.hpp"
#include "sim/scenario/enum_names.hpp"
#include "sim/scenario/scenario.hpp"

namespace cs::sim {

using nlohmann::json;

namespace {

// {0, 1, 2, 5, 8, 9} -> "0-2, 5, 8-9"
std::string node_ranges(const std::vector<int>& nodes) {
  std::string out;
  for (std::size_t i = 0; i < nodes.size();) {
    std::size_t j = i;
    while (j + 1 < nodes.size() && nodes[j + 1] == nodes[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += std::to_string(nodes[i]);
    if (j > i) out.append(1, '-').append(std::to_string(nodes[j]));
    i = j + 1;
  }
  return out;
}

json links_json(const std::vector<LinkUtilization>& links) {
  json out = json::array();
  for (const auto& l : links)
    out.push_back({{"name", l.name}, {"bytes_per_gpu", l.bytes_per_gpu}, {"bandwidth_Bps", l.bandwidth_Bps}, {"utilization", l.utilization}});
  return out;
}
}  // namespace

Report job_report(const Scenario& s) {
  const auto& t = s.training;
  Report r;
  r.name = s.name;
  r.gpu = s.gpu.name;
  if (const auto mix = s.heterogeneity.node_mix(); mix.size() > 1)
    for (const auto& [name, nodes] : mix)
      r.gpu_mix += (r.gpu_mix.empty() ? "" : " + ") + std::to_string(nodes * s.cluster.gpus_per_node) + " x " + name;
  r.num_gpus = s.num_gpus();
  r.nodes = s.cluster.nodes;
  r.gpus_per_node = s.cluster.gpus_per_node;
  r.intra_node = s.cluster.intra.name;
  r.inter_link = s.cluster.nodes > 1 ? s.cluster.nic.name : "";
  r.fabric = s.cluster.nodes > 1 ? s.cluster.fabric : "";
  r.topology_file = s.topology_file;
  r.notes = s.notes;
  if (std::string placed = placement_note(s); !placed.empty()) r.notes.push_back(placed);
  r.model = s.model.name;
  r.parameters = models::parameter_count(s.model);
  r.tp = t.tp, r.pp = t.pp, r.dp = t.dp, r.cp = t.cp, r.ep = t.ep, r.vp = t.vp;
  r.etp = t.expert_tp();
  r.micro_batch_size = t.micro_batch_size;
  r.num_micro_batches = t.num_micro_batches();
  r.global_batch_size = t.global_batch_size;
  r.seq_length = t.seq_length;
  r.precision = std::string(name_of(kPrecisionNames, t.effective_recipe()));
  r.schedule = std::string(name_of(kPipelineScheduleNames, t.pipeline_schedule));
  r.recompute = std::string(name_of(kRecomputeNames, t.recompute));
  if (t.partial_full_recompute()) {
    r.recompute_method = std::string(name_of(kRecomputeMethodNames, t.recompute_method));
    r.recompute_num_layers = t.recompute_num_layers;
  }
  r.cpu_offloading_num_layers = t.cpu_offloading_num_layers;
  if (t.cuda_graph_impl != models::CudaGraphImpl::none) r.cuda_graph_impl = std::string(name_of(kCudaGraphImplNames, t.cuda_graph_impl));
  if (t.ep > 1 && t.moe_token_dispatcher != models::MoeDispatcher::alltoall)
    r.moe_token_dispatcher = std::string(name_of(kMoeDispatcherNames, t.moe_token_dispatcher));
  r.zero_stage = t.zero_stage;
  r.sequence_parallel = t.sequence_parallel;
  r.framework = t.framework;
  r.framework_release = t.framework_release;
  r.price_per_gpu_hour_usd = s.price_per_gpu_hour_usd;
  r.tokens_to_train = t.tokens_to_train;
  return r;
}

void set_memory(Report& r, const models::MemoryBreakdown& memory, const models::GpuSpec& gpu) {
  r.memory = memory;
  r.memory_capacity_bytes = models::hbm_capacity_bytes(gpu);
  r.fits_in_memory = models::fits_in_memory(memory, gpu);
}

json to_json(const Report& r) {
  const json links = links_json(r.links);
  json comm = json::object();
  for (int c = 0; c < kNumCategories; ++c) comm[to_string(static_cast<Category>(c))] = r.busy_s[static_cast<std::size_t>(c)];
  json exposed = json::object();
  for (int c = 0; c < kNumCategories; ++c)
    if (is_comm(static_cast<Category>(c)))
      exposed[to_string(static_cast<Category>(c))] = r.exposed_comm_s_by_kind[static_cast<std::size_t>(c)];
  const auto& m = r.memory;
  json out = {
      {"scenario", r.name},
      {"cluster", {{"gpu", r.gpu}, {"num_gpus", r.num_gpus}, {"nodes", r.nodes}, {"gpus_per_node", r.gpus_per_node},
                   {"intra_node", r.intra_node}, {"inter_node_link", r.inter_link}, {"fabric", r.fabric}}},
      {"model", {{"name", r.model}, {"parameters", r.parameters}}},
      {"layout", {{"tensor_model_parallel_size", r.tp}, {"pipeline_model_parallel_size", r.pp},
                  {"data_parallel_size", r.dp}, {"context_parallel_size", r.cp}, {"expert_model_parallel_size", r.ep},
                  {"expert_tensor_parallel_size", r.etp},
                  {"virtual_pipeline_model_parallel_size", r.vp}, {"sequence_parallel", r.sequence_parallel},
                  {"zero_stage", r.zero_stage}, {"micro_batch_size", r.micro_batch_size},
                  {"num_micro_batches", r.num_micro_batches}, {"global_batch_size", r.global_batch_size},
                  {"seq_length", r.seq_length}, {"precision", r.precision}, {"pipeline_schedule", r.schedule},
                  {"recompute_granularity", r.recompute}}},
      {"framework", {{"name", r.framework}, {"release", r.framework_release}}},
      {"step_time_s", r.step_time_s},
      {"step_time_band", to_json(r.step_time_band)},
      {"tokens_per_s", r.tokens_per_s},
      {"tokens_per_s_per_gpu", r.tokens_per_s / r.num_gpus},
      {"model_tflops_per_gpu", r.model_tflops_per_gpu},
      {"mfu", r.mfu},
      {"hfu", r.hfu},
      {"mfu_causal", r.mfu_causal},
      {"flop_convention", kFlopConvention},
      {"breakdown_s", {{"compute", r.breakdown.compute_s}, {"exposed_comm", r.breakdown.exposed_comm_s},
                       {"pipeline_bubble", r.breakdown.pipeline_bubble_s}, {"other", r.breakdown.other_s}}},
      {"busy_s_by_kind", comm},
      {"exposed_comm_s_by_kind", exposed},
      {"memory_gib", {{"weights", m.weights_bytes / kGiB}, {"grads", m.grads_bytes / kGiB},
                      {"optimizer", m.optimizer_bytes / kGiB}, {"activations", m.activations_bytes / kGiB},
                      {"buffers", m.buffers_bytes / kGiB}, {"reserved", m.reserved_bytes / kGiB},
                      {"total", m.total_bytes() / kGiB}, {"capacity", r.memory_capacity_bytes / kGiB},
                      {"peak_stage", m.stage},
                      {"over_capacity", std::max(0.0, m.total_bytes() - r.memory_capacity_bytes) / kGiB}}},
      {"fits_in_memory", r.fits_in_memory},
      {"cost", {{"price_per_gpu_hour_usd", r.price_per_gpu_hour_usd}, {"usd_per_step", r.cost.usd_per_step},
                {"usd_per_hour", r.cost.usd_per_hour}, {"tokens_to_train", r.tokens_to_train},
                {"steps_to_train", r.cost.steps_to_train}, {"days_to_train", r.cost.days_to_train},
                {"usd_to_train", r.cost.usd_to_train}, {"gpu_hours_to_train", r.cost.gpu_hours_to_train},
                {"energy_kwh_per_step", r.cost.energy_kwh_per_step}, {"energy_kwh_to_train", r.cost.energy_kwh_to_train},
                {"energy_usd_per_step", r.cost.energy_usd_per_step}, {"energy_usd_to_train", r.cost.energy_usd_to_train}}},
      {"utilization", {{"gpu_busy", r.gpu_busy}, {"links", links}}},
      {"simulator", {{"network", r.network}, {"simulated_ranks", r.simulated_ranks}, {"tasks", r.tasks}, {"events", r.events}}},
  };
  if (r.recompute_num_layers > 0) {
    out["layout"]["recompute_method"] = r.recompute_method;
    out["layout"]["recompute_num_layers"] = r.recompute_num_layers;
  }
  if (!r.moe_token_dispatcher.empty()) out["layout"]["moe_token_dispatcher"] = r.moe_token_dispatcher;
  if (r.cpu_offloading_num_layers > 0) out["layout"]["cpu_offloading_num_layers"] = r.cpu_offloading_num_layers;
  if (!r.cuda_graph_impl.empty()) out["layout"]["cuda_graph_impl"] = r.cuda_graph_impl;
  if (!r.topology_file.empty()) out["cluster"]["topology_file"] = r.topology_file;
  if (!r.gpu_mix.empty()) out["cluster"]["gpu_mix"] = r.gpu_mix;
  if (!r.notes.empty()) out["notes"] = r.notes;
  if (!r.job.empty()) {
    out["job"] = r.job;
    out["job_nodes"] = r.job_nodes;
    out["step_time_alone_s"] = r.step_time_alone_s;
    out["slowdown"] = r.slowdown;
  }
  return out;
}

std::string to_text(const Report& r) {
  std::string o;
  auto line = [&](const std::string& label, const std::string& text) {
    o += label;
    o.append(label.size() < 14 ? 14 - label.size() : 1, ' ');
    o += text + "\n";
  };
  const double step = r.step_time_s;
  auto pct = [&](double part) { return fmt("%.1f%%", 100.0 * part / step); };
  o += r.name + (r.job.empty() ? std::string{} : ": job " + r.job + " on node" + (r.job_nodes.size() > 1 ? "s " : " ") + node_ranges(r.job_nodes)) + "\n";
  const std::string wiring = !r.topology_file.empty()
                                ? "topology file " + std::filesystem::path(r.topology_file).filename().string()
                                : r.intra_node + (r.nodes > 1 ? ", " + r.fabric + " " + r.inter_link : std::string{});
  line("cluster", (r.gpu_mix.empty() ? std::to_string(r.num_gpus) + " x " + r.gpu : std::to_string(r.num_gpus) + " GPUs: " + r.gpu_mix) + " (" + std::to_string(r.nodes) + " node" + (r.nodes > 1 ? "s" : "") +
                      " x " + std::to_string(r.gpus_per_node) + ", " + wiring + ")");
  for (const auto& n : r.notes) line("note", n);
  line("model", r.model + fmt(", %.2fB parameters", r.parameters / 1e9));
  line("layout", "TP " + std::to_string(r.tp) + "  PP " + std::to_string(r.pp) + "  DP " + std::to_string(r.dp) + "  CP " +
                     std::to_string(r.cp) + "  EP " + std::to_string(r.ep) +
                     (r.moe_token_dispatcher.empty() ? std::string{} : " (" + r.moe_token_dispatcher + ")") + (r.etp != r.tp ? "  ETP " + std::to_string(r.etp) : std::string{}) + (r.sequence_parallel ? "  SP" : "") +
                     (r.zero_stage ? "  ZeRO-" + std::to_string(r.zero_stage) : std::string{}) + "  recompute " + r.recompute +
                     (r.recompute_num_layers > 0 ? " (" + r.recompute_method + " " + std::to_string(r.recompute_num_layers) + ")" : std::string{}) +
                     (r.cpu_offloading_num_layers > 0 ? "  offload " + std::to_string(r.cpu_offloading_num_layers) + " layers" : std::string{}) +
                     (r.cuda_graph_impl.empty() ? std::string{} : "  CUDA graphs " + r.cuda_graph_impl) +
                     (r.framework != "generic" ? "  (" + r.framework + " " + r.framework_release + ")" : std::string{}));
  line("batch", "global " + std::to_string(r.global_batch_size) + " = micro " + std::to_string(r.micro_batch_size) + " x " +
                    std::to_string(r.num_micro_batches) + " micro-batches x DP " + std::to_string(r.dp) + ", seq " +
                    std::to_string(r.seq_length) + ", " + r.precision + ", " + r.schedule);
  o += "\n";
  line("step time", seconds_text(step));
  if (r.step_time_band.available) {
    line("error band", band_text(r.step_time_band));
    std::string why;
    for (const auto& reason : r.step_time_band.out_of_domain_reasons) why += (why.empty() ? "" : "; ") + reason;
    if (r.step_time_band.out_of_domain) line("validated", "NO - outside anything validated: " + why);
  }
  if (!r.job.empty())
    line("slowdown", fmt("%.3fx", r.slowdown) + " the step alone (" + seconds_text(r.step_time_alone_s) +
                         " on the same nodes with the rest of the cluster idle)");
  line("throughput", grouped(r.tokens_per_s) + " tokens/s (" + grouped(r.tokens_per_s / r.num_gpus) + " per GPU)");
  line("MFU", fmt("%.1f%%", 100 * r.mfu) + fmt("   (%.0f model TFLOP/s per GPU", r.model_tflops_per_gpu) +
                  fmt("; HFU %.1f%%", 100 * r.hfu) + fmt("; causal-aware MFU %.1f%%", 100 * r.mfu_causal) +
                  "; Megatron FLOPs, attention counted in full)");
  line("breakdown", "compute " + seconds_text(r.breakdown.compute_s) + " (" + pct(r.breakdown.compute_s) + ")  exposed comm " +
                        seconds_text(r.breakdown.exposed_comm_s) + " (" + pct(r.breakdown.exposed_comm_s) + ")  bubble " +
                        seconds_text(r.breakdown.pipeline_bubble_s) + " (" + pct(r.breakdown.pipeline_bubble_s) + ")  other " +
                        seconds_text(r.breakdown.other_s));
  std::string exposed;
  for (int c = static_cast<int>(Category::tp_comm); c < kNumCategories; ++c) {
    const double v = r.exposed_comm_s_by_kind[static_cast<std::size_t>(c)];
    if (v > 0) exposed += std::string(to_string(static_cast<Category>(c))) + " " + seconds_text(v) + "  ";
  }
  line("comm exposed", exposed.empty() ? "none" : exposed + "(per GPU, not hidden by compute)");
  std::string comm;
  for (int c = static_cast<int>(Category::tp_comm); c < kNumCategories; ++c) {
    const double v = r.busy_s[static_cast<std::size_t>(c)];
    if (v > 0) comm += std::string(to_string(static_cast<Category>(c))) + " " + seconds_text(v) + "  ";
  }
  line("comm total", comm.empty() ? "none" : comm + "(per GPU, overlapped or not)");
  const auto& m = r.memory;
  line("memory/GPU", fmt("%.1f GiB", m.total_bytes() / kGiB) + fmt(" of %.1f GiB", r.memory_capacity_bytes / kGiB) +
                         (r.fits_in_memory ? " - fits"
                                           : " - DOES NOT FIT (stage " + std::to_string(m.stage) + " over by " +
                                                 fmt("%.1f GiB)", (m.total_bytes() - r.memory_capacity_bytes) / kGiB)) + fmt("  (weights %.1f", m.weights_bytes / kGiB) +
                         fmt(", grads %.1f", m.grads_bytes / kGiB) + fmt(", optimizer %.1f", m.optimizer_bytes / kGiB) +
                         fmt(", activations %.1f", m.activations_bytes / kGiB) +
                         fmt(", buffers+reserve %.1f", (m.buffers_bytes + m.reserved_bytes) / kGiB) + "; stage " +
                         std::to_string(m.stage) + ")");
  line("cost", fmt("$%.2f per GPU-hour: ", r.price_per_gpu_hour_usd) + fmt("$%.4f per step, ", r.cost.usd_per_step) + "$" +
                   grouped(r.cost.usd_per_hour) + " per hour");
  if (r.tokens_to_train > 0)
    line("to train", fmt("%.3g tokens: ", r.tokens_to_train) + fmt("%.1f days, ", r.cost.days_to_train) +
                         grouped(r.cost.gpu_hours_to_train) + " GPU-hours, $" + grouped(r.cost.usd_to_train));
  {
    const bool whole_run = r.tokens_to_train > 0;
    std::string energy = whole_run ? grouped(r.cost.energy_kwh_to_train / 1000) + " MWh to train"
                                   : fmt("%.3f kWh per step", r.cost.energy_kwh_per_step);
    if (r.cost.energy_usd_per_step > 0)
      energy += ", $" + (whole_run ? grouped(r.cost.energy_usd_to_train) : fmt("%.4f", r.cost.energy_usd_per_step)) + " of power";
    line("energy", energy + fmt(" (%.3f kWh a step", r.cost.energy_kwh_per_step) + ")");
  }
  std::string links;
  for (const auto& l : r.links) links += l.name + fmt(" %.1f%%  ", 100 * l.utilization);
  line("links", links + fmt("(GPU busy %.1f%%)", 100 * r.gpu_busy));
  if (!r.fits_in_memory)
    o += "\nwarning: this layout needs more memory than the GPU has; the timing above is what it would take if it fit.\n";
  return o;
}

json to_json(const MultiJobReport& r) {
  json jobs = json::array();
  for (const Report& j : r.jobs) jobs.push_back(to_json(j));
  return {{"scenario", r.name}, {"network", r.network}, {"makespan_s", r.makespan_s}, {"links", links_json(r.links)},
          {"jobs", std::move(jobs)}};
}

std::string to_text(const MultiJobReport& r) {
  std::string o;
  for (const Report& j : r.jobs) o += to_text(j) + "\n";
  o += r.name + ": " + std::to_string(r.jobs.size()) + " jobs sharing the fabric (" + r.network +
       " network; one step of each, all starting together)\n";
  for (const Report& j : r.jobs)
    o += "  " + j.job + fmt(": %.3fx", j.slowdown) + " (" + seconds_text(j.step_time_s) + " with the others, " +
         seconds_text(j.step_time_alone_s) + " alone)\n";
  std::string links;
  for (const auto& l : r.links) links += l.name + fmt(" %.1f%%  ", 100 * l.utilization);
  o += "  shared links: " + (links.empty() ? std::string("none") : links + "(over " + seconds_text(r.makespan_s) + ")") + "\n";
  return o;
}

}  // namespace cs::sim
