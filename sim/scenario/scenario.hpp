#pragma once
// A scenario: the cluster, the model and the training job, as read from a scenario JSON file (the
// contract in shared/DESIGN.md), fully validated. Everything downstream can trust it.
//
// Loading collects every problem before giving up: each is one line "FILE: JSON.PATH: what is wrong
// (what was expected)", thrown together as an InputError. Unknown keys are errors, with the nearest
// known key suggested. `--set path=value` overrides are applied to the JSON before validation, so they
// are validated exactly like the file (and named as coming from --set).
//
// Several jobs on one cluster: instead of top-level "model" and "training", a scenario may give "jobs",
// an array of {"name", "nodes" | "gpus", "first_node", "model", "training"}. Jobs run on whole nodes,
// disjoint, sharing the fabric: "nodes" is a node count (placed from "first_node", default: right after
// the previous job's last node, job 0 from node 0) or an explicit list of node indices in rank order (to
// interleave jobs under the same leaves); "gpus" is a count of whole nodes' GPUs. Each job is validated
// like a single-job scenario on a cluster of its own GPU count, and its errors are named by their path
// (jobs[1].training.tensor_model_parallel_size). The single-job form is the common case and its
// Scenario is unchanged: `jobs` stays empty. In the multi-job form Scenario::model and ::training are
// job 0's (for callers that know one job only); job_scenario(j) is job j as a single-job scenario.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "models/compute/comm_profile.hpp"
#include "models/compute/compute_model.hpp"
#include "models/hardware/gpu_catalog.hpp"
#include "models/workload/transformer.hpp"
#include "models/parallelism/ddp_bucket.hpp"
#include "models/parallelism/pipeline_schedule.hpp"
#include "sim/base/network_backend.hpp"
#include "sim/scenario/goodput_spec.hpp"
#include "sim/scenario/heterogeneity.hpp"
#include "topologies/cluster.hpp"

namespace cs::sim {

struct SimulationOptions {
  NetworkBackend network = NetworkBackend::analytical;  // or flow: routed flows sharing links max-min fairly
  std::string nccl_algorithm;          // force "ring", "tree", "nvls" or "hierarchical"; "" = NCCL-like choice
  // Simulate one rank per class of identical ranks (one TP/CP/DP representative per pipeline stage) and
  // mirror it; the group sizes of its collectives are still the real ones.
  bool symmetry = true;
  // Compute slowdown while NCCL moves data on the same GPU (see executor.hpp). Default: the share of SMs
  // NCCL occupies, nccl_channels / sm_count.
  double comm_compute_contention = -1;
  double nccl_channels = 16;
  double grad_bucket_params = models::kDdpMinBucketParams;  // DDP bucket size, parameters (ddp_bucket.hpp)
  // The budget checked before building the step (sim/step/step_budget.hpp): the most tasks and the most
  // memory a simulation may take; past either the scenario is refused with the knob that drives it.
  double max_tasks = 2e8;
  double max_memory_gib = 4;
};

// One job of a multi-job scenario: its model and training on its own nodes of the shared cluster. Its
// rank r runs on GPU nodes[r / gpus_per_node] * gpus_per_node + r % gpus_per_node (job_gpus()).
struct Job {
  std::string name;
  std::vector<int> nodes;  // cluster node indices, in rank order
  models::ModelConfig model;
  models::TrainingConfig training;  // validated against the job's GPUs (data_parallel_size derived)
};

struct Scenario {
  std::string file;  // where it came from, for messages
  std::string name;
  models::GpuSpec gpu;
  topo::ClusterSpec cluster;  // with a topology file: the loaded graph's summary (Cluster::spec())
  // cluster.topology_file, resolved against the scenario's folder (empty: the cluster is built from the
  // cluster.* keys), and the graph read from it, validated with the scenario (topologies/topology_file.hpp).
  // Shared and immutable: copies of the scenario (sweep points, job views) route on the same graph.
  std::string topology_file;
  std::shared_ptr<const topo::Cluster> topology;
  Heterogeneity heterogeneity;  // stragglers, speed variation, node groups of other GPUs (heterogeneity.hpp)
  // The price of this scenario's GPU: cluster.price_per_gpu_hour as a number, or its entry in the
  // table by GPU type, else the catalog's list price.
  double price_per_gpu_hour_usd = 0;
  // Energy (models/cost/cost_model.hpp): each node's host power at full load and the share of it drawn
  // idle (absent: the cost model's default), the data centre's PUE, the price of a kWh.
  double node_overhead_w = 0;
  std::optional<double> node_idle_power_fraction;
  double pue = 1.2;
  double usd_per_kwh = 0;
  bool usd_per_kwh_given = false;  // the file sets cluster.usd_per_kwh (capacity plans price power by default)
  models::ModelConfig model;
  models::TrainingConfig training;
  std::string calibration;  // profile path, resolved against the scenario's folder; empty = default
  // The profile at `calibration`, read and validated with the scenario: its compute tables (absent: the
  // built-in defaults, models::default_compute_profile()) and its fitted collectives (absent: the
  // catalog's link parameters; consumed by the network model).
  std::optional<models::ComputeProfile> compute_profile;
  std::optional<models::CommProfile> comm_profile;
  SimulationOptions simulation;
  std::vector<Job> jobs;  // multi-job form; empty: one job (model, training) on the whole cluster
  RunSections run;        // resilience, data_pipeline, variability (goodput_spec.hpp); each optional
  // What the loader changed from what the file says, for physical reasons the report states (e.g. a NIC
  // capped by its GPU's PCIe host link). Empty for most scenarios; the report prints each as a "note".
  std::vector<std::string> notes;
  int num_gpus() const { return cluster.nodes * cluster.gpus_per_node; }
  double contention() const;
  bool multi_job() const { return !jobs.empty(); }
  // Job j as a single-job scenario: its model and training, cluster.nodes = its node count (everything
  // else the scenario's), no jobs. What the step builder and the report of that job read; its ranks sit
  // on job_gpus(j) of the real cluster.
  Scenario job_scenario(std::size_t j) const;
  // The cluster GPU of each rank of job j.
  std::vector<int> job_gpus(std::size_t j) const;
};

// The cluster graph the scenario runs on: the graph of its topology file, or one built from the spec.
std::shared_ptr<const topo::Cluster> make_cluster(const Scenario& s);
// The GPUs of each multi-node scale-up domain (an NVL72 rack) the job is placed on, so that every tensor x
// context group and every expert-TP x expert group stays inside one domain: the largest multiple of the
// groups' span (Megatron-Core's rank order puts each group on consecutive ranks, models/parallelism/
// layout.hpp) that the domain holds, e.g. 64 of an NVL72 rack's 72 GPUs for EP 32. This is the rule of
// Slurm's topology/block plugin with --segment (a job's nodes come in segments that never straddle a
// block) that NVIDIA's GB200 guidance uses with 8-tray segments; the rest of the rack is left to other
// jobs. 0: the cluster's domains unchanged (one node, no multi-node domain, a multi-job scenario, a
// topology file, or groups that already tile the domain or cannot fit one).
int placed_domain_gpus(const Scenario& s);
// The report's note on that placement; empty when placed_domain_gpus is 0.
std::string placement_note(const Scenario& s);

// Price basis. cluster.price_per_gpu_hour is a number (the price of the scenario's GPU) or a table by
// GPU type ({"H100-SXM": 2.5, "A100-80GB": 1.6}); a GPU type without a price takes its catalog list
// price. pin_price_to_gpu turns a number into the table {its GPU: number}, so that a change of
// cluster.gpu (--set, a sweep axis, capacity planning's --gpu) takes the new GPU's price instead of
// keeping the old one's; load_scenario and the sweep call it before they set cluster.gpu.
void pin_price_to_gpu(nlohmann::json& doc);
// "" when every type of `gpu_types` has a price in doc's cluster.price_per_gpu_hour (after
// pin_price_to_gpu), else one line naming the types that fall back to catalog list prices and those prices.
std::string price_basis_note(const nlohmann::json& doc, const std::vector<std::string>& gpu_types);

// The one way a front end changes a scenario document (run, sweep, Python, the GUI), so that the same
// overrides give the same scenario and price everywhere: apply_override, after pin_price_to_gpu when the
// assignment sets cluster.gpu. apply_overrides applies a list as load_scenario does: a topology file first
// (it clears the cluster's wiring and counts, which the others may set again), the rest in their order.
void apply_override_pinned(nlohmann::json& doc, const std::string& assignment, const std::string& file);
void apply_overrides(nlohmann::json& doc, const std::vector<std::string>& overrides, const std::string& file);

// Reads and validates a scenario file; throws InputError.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides = {});
// Validates an already-parsed document; `file` names it in messages. Throws InputError.
Scenario parse_scenario(const nlohmann::json& doc, const std::string& file);
// Applies one "dotted.path=value" override (value parsed as JSON, else taken as a string). A component
// that is an index selects an element of an array: jobs.1.training.global_batch_size or
// jobs[1].training.global_batch_size. cluster.topology_file=F also removes the scenario's
// cluster.intra_node, inter_node, nodes and gpus_per_node (the file gives them); load_scenario applies
// it before the other overrides, so that those may still set (and have checked) the counts.
void apply_override(nlohmann::json& doc, const std::string& assignment, const std::string& file);
// The JSON text of a file with its parse errors as InputError naming line and column.
nlohmann::json read_json_file(const std::string& path);

}  // namespace cs::sim
