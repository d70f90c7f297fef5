#pragma once
// The report of one simulated training step: what `clustersim run` prints and `--json` emits (the
// contract in shared/DESIGN.md), computed from the executed task graph.
//
// Breakdown of the step on each simulated rank, averaged over ranks (each sums to the step time):
//   compute          the compute stream is running a kernel (forward, backward, recompute, optimizer);
//   exposed_comm     a collective of the rank is moving data and no kernel runs (communication the
//                    schedule failed to hide);
//   pipeline_bubble  nothing runs and nothing moves while the rank waits on another pipeline stage;
//   other            idle time on a rank without pipeline parallelism (none in a well-formed step).
// exposed_comm is split by kind (TP, CP, EP, DP, PP) in exposed_comm_s_by_kind (sim/report/breakdown.hpp).
// FLOPs, one convention (flop_convention "megatron-full-attention"): model FLOPs per step are Megatron's
// num_floating_point_operations (models::model_flops_per_step with AttentionFlops::full: causal attention
// counted in full, every query against all s keys, as Megatron-LM did until March 2025; transformer.hpp
// cites the commits). MFU = model FLOPs / (step time x GPUs x dense bf16 peak). HFU = the same model
// FLOPs plus the recompute, each recomputed kernel valued at the share of the forward and backward work
// it repeats (executed recompute FLOPs / executed forward + backward FLOPs), so HFU >= MFU always and
// HFU = MFU without recompute (full recompute: ~4/3 MFU). mfu_causal = MFU with the FLOPs a causal mask
// leaves (AttentionFlops::causal), the figure causal-aware tools and Megatron-LM since 2025 print. Per
// token and layer the forward counts 2 P_gemm + 4 s a d in full, 2 P_gemm + 2 s a d causal: on Llama-3
// 70B (P_gemm = 12.75 h^2, a d = h = 8192) MFU is 7% above mfu_causal at s = 8k, 39% at 64k. All are relative to the bf16 peak even for fp8 runs, as NeMo and Megatron report them.
//
// Several jobs on one cluster (Scenario::jobs): each job gets its own Report, over its own GPUs (cluster
// = its nodes, cost = its GPUs), plus the job's name and nodes, its step time alone on the same nodes of
// the same otherwise idle cluster, and slowdown = step time with the others / alone. Its links are its
// own traffic (the bytes its collectives move, the same with or without the others) over its step with
// the others. The MultiJobReport adds the shared fabric: every job's traffic over the whole run. --json
// prints {"scenario", "network", "makespan_s", "links", "jobs": [report, ...]}, each report with every
// key of the single-job contract plus "job", "job_nodes", "step_time_alone_s" and "slowdown".
#include <array>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "models/cost/cost_model.hpp"
#include "models/memory/memory_model.hpp"
#include "sim/engine/task_graph.hpp"
#include "sim/report/error_band.hpp"

namespace cs::sim {

struct LinkUtilization {
  std::string name;         // "scale-up (nvswitch)", "scale-out (ib-ndr400)"
  double bytes_per_gpu = 0; // sent per GPU per step
  double bandwidth_Bps = 0; // per GPU, per direction, line rate
  double utilization = 0;   // bytes / (bandwidth x step time)
};

struct Breakdown {
  double compute_s = 0, exposed_comm_s = 0, pipeline_bubble_s = 0, other_s = 0;
};

struct Report {
  std::string name;
  std::string gpu;
  // A cluster of several GPU types (cluster.node_groups): "16 x A100-80GB + 16 x H100-SXM"; empty when every
  // GPU is `gpu`. The header and the JSON's cluster.gpu_mix print it.
  std::string gpu_mix;
  int num_gpus = 0, nodes = 0, gpus_per_node = 0;
  std::string intra_node, inter_link, fabric;
  std::string topology_file;  // cluster.topology_file (resolved), empty when the cluster is built from the catalog
  std::vector<std::string> notes;  // Scenario::notes: what the loader capped or placed, and why
  std::string model;
  std::string framework, framework_release;  // training.framework and the release whose defaults applied
  double parameters = 0;
  int tp = 1, pp = 1, dp = 1, cp = 1, ep = 1, vp = 1;
  int etp = 1;  // expert_tensor_parallel_size (= tp unless set)
  long long micro_batch_size = 1, num_micro_batches = 1, global_batch_size = 1, seq_length = 0;
  std::string precision, schedule, recompute;
  // Full recompute other than every layer on its own: Megatron's recompute_method and recompute_num_layers
  // (the JSON layout carries them, and the text layout line names them, only then); empty / 0 otherwise.
  std::string recompute_method;
  // A per-node token dispatcher (training.moe_token_dispatcher deepep / hybridep) with EP > 1; empty for
  // the alltoall dispatcher, and then in neither the text nor the JSON layout (reports as before it).
  std::string moe_token_dispatcher;
  std::int64_t recompute_num_layers = 0;
  // CPU activation offload's layers (training.cpu_offloading_num_layers); 0: off, and neither the layout
  // line nor the JSON layout shows it.
  std::int64_t cpu_offloading_num_layers = 0;
  // training.cuda_graph_impl when not "none"; empty: neither the text nor the JSON layout shows it.
  std::string cuda_graph_impl;
  int zero_stage = 0;
  bool sequence_parallel = false;

  double step_time_s = 0;
  // Where the real step time is expected to lie, from the validation residuals of comparable published
  // runs, and whether this scenario is outside anything validated (sim/report/error_band.hpp). Set by the
  // simulation with the step time; `available` false before.
  ErrorBand step_time_band;
  double tokens_per_s = 0;
  double model_tflops_per_gpu = 0;
  double mfu = 0, hfu = 0;
  double mfu_causal = 0;  // MFU with causal attention FLOPs (see above)
  Breakdown breakdown;
  // breakdown.exposed_comm_s by communication category (the compute categories 0); sums to it.
  std::array<double, kNumCategories> exposed_comm_s_by_kind{};
  std::array<double, kNumCategories> busy_s{};  // per rank: kernel time, or data-moving time of collectives
  models::MemoryBreakdown memory;
  double memory_capacity_bytes = 0;
  bool fits_in_memory = false;
  double price_per_gpu_hour_usd = 0;
  double tokens_to_train = 0;
  models::CostReport cost;
  double gpu_busy = 0;
  std::vector<LinkUtilization> links;
  // Simulator statistics.
  std::string network = "analytical";
  int simulated_ranks = 0;
  std::size_t tasks = 0;
  std::uint64_t events = 0;
  // A job of a multi-job scenario; `job` empty: a single-job scenario, and none of these is printed.
  std::string job;
  std::vector<int> job_nodes;
  double step_time_alone_s = 0;  // the job alone on the same nodes of the same cluster
  double slowdown = 1;           // step_time_s / step_time_alone_s
};

// A multi-job scenario: one report per job, and the fabric they share.
struct MultiJobReport {
  std::string name;
  std::string network = "analytical";
  double makespan_s = 0;                // until the last job's step ends
  std::vector<LinkUtilization> links;   // every job's traffic, utilization over makespan_s
  std::vector<Report> jobs;
};

struct Scenario;

// The fields a report has before the step runs: the job (cluster, model, layout, batch, price). The
// simulation adds the step's figures; a sweep point dropped for memory has only these and its memory.
Report job_report(const Scenario& s);
// Peak memory per GPU against the GPU's HBM (models::fits_in_memory, the one fits rule).
void set_memory(Report& r, const models::MemoryBreakdown& memory, const models::GpuSpec& gpu);

// The FLOP convention MFU and HFU are quoted in (the report's "flop_convention").
inline constexpr const char* kFlopConvention = "megatron-full-attention";

nlohmann::json to_json(const Report& r);
std::string to_text(const Report& r);
nlohmann::json to_json(const MultiJobReport& r);
std::string to_text(const MultiJobReport& r);

}  // namespace cs::sim
