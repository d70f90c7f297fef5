#pragma once
// The scenario sections that describe a whole training run rather than one step (docs/goodput.md):
//   "resilience"     component failure rates, checkpointing and restart (sim/goodput/resilience.hpp);
//   "data_pipeline"  where the input samples come from and what decoding them costs (sim/goodput/data_stall.hpp);
//   "variability"    per-kernel compute jitter (sim/goodput/jitter.hpp).
// Each is optional; absent, nothing of the run model is computed or printed, so a scenario without them
// reports exactly what it did before. The readers validate every key (finite, in range, known) and return
// one problem per mistake, with the JSON path, for the loader to add to its one-line messages.
//
// Units are in the key names: _hours, _s, _GBps (1e9 bytes per second), _bytes.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace cs::sim {

// Mean time between failures of one unit of each component class, in hours. The defaults are Meta's
// Llama 3 405B pre-training interruptions ("The Llama 3 Herd of Models", 2024, section 3.3.4, Table 5:
// 419 unexpected interruptions in a 54-day snapshot on 16,384 H100 GPUs = 2,048 nodes of 8), each cause
// assigned to a class and divided by that class's unit-hours over the snapshot (see goodput_spec.cpp).
struct MtbfHours {
  double gpu = 0;       // per GPU: faulty GPU, HBM3, SRAM, GPU system processor, SDC, thermal interface
  double host = 0;      // per node: host maintenance, SSD, PSU, chassis, IO board, CPU, DRAM
  double nic = 0;       // per NIC
  double network = 0;   // per node attached: network switch or cable
  double software = 0;  // per GPU (per rank): software bugs, NCCL watchdog timeouts, dependencies
};
MtbfHours default_mtbf_hours();

struct CheckpointSpec {
  // The interval: every `interval_steps` steps, every `interval_s` seconds of training, or the
  // goodput-optimal interval (optimal = true, the default).
  bool optimal = true;
  long long interval_steps = 0;
  double interval_s = 0;
  double size_bytes = 0;  // 0: from the memory model (bf16 weights + fp32 optimizer shards)
  std::string target = "shared_fs";  // or "local_nvme"
  // Defaults (assumptions, not fleet statistics; docs/goodput.md): local NVMe writing 8 GB/s per node, a
  // parallel file system giving the job 100 GB/s, 25 GB/s per node (a 200 Gb/s front-end NIC).
  double local_nvme_write_GBps_per_node = 8;
  double shared_fs_GBps = 100;             // aggregate over the job
  double shared_fs_per_client_GBps = 25;   // one node's limit (its front-end NIC, the client)
  bool async = false;                    // snapshot to host memory, then write in the background
  double snapshot_GBps_per_gpu = 25;     // device to host copy of the GPU's shard (async; half of PCIe Gen5 x16)
};

struct RestartSpec {
  // Defaults (assumptions): a minute to detect, three to drain and reschedule, one to start.
  double detection_s = 60;      // from the failure to the job noticing (crash: seconds; hang: the watchdog)
  double scheduling_s = 180;    // drain, replace the node, reschedule
  double process_start_s = 60;  // container and interpreter start, imports, CUDA context
  double nccl_init_s = -1;      // communicator set-up; -1: nccl_init_base_s + nccl_init_s_per_rank x ranks
  double nccl_init_base_s = 5;
  double nccl_init_s_per_rank = 0.003;
  // Loading the checkpoint reads it back from the checkpoint's tier at its write bandwidth.
};

struct ResilienceSpec {
  MtbfHours mtbf_hours = default_mtbf_hours();
  CheckpointSpec checkpoint;
  RestartSpec restart;
};

struct DataPipelineSpec {
  std::string source = "shared_fs";  // or "local_nvme"
  // Defaults: the file system as for checkpoints; local NVMe reading 25 GB/s per node (four Gen4 drives);
  // Megatron-LM's --num-workers 2; PyTorch DataLoader's prefetch_factor 2; tokenised text decodes for free.
  double shared_fs_GBps = 100;       // aggregate read bandwidth the job gets
  double shared_fs_per_client_GBps = 25;
  double local_nvme_read_GBps_per_node = 25;
  double bytes_per_sample = 0;       // required: what one sample costs to read
  int workers_per_gpu = 2;           // DataLoader num_workers of each loading rank
  double cpu_s_per_sample = 0;       // decode + transform CPU time of one sample on one worker
  int prefetch_depth = 2;            // batches prepared ahead; 0: loading does not overlap the step
};

struct VariabilitySpec {
  double compute_jitter_cv = 0;  // per-kernel duration: mean 1, standard deviation cv (normal)
};

struct RunSections {
  std::optional<ResilienceSpec> resilience;
  std::optional<DataPipelineSpec> data_pipeline;
  std::optional<VariabilitySpec> variability;
};

// One problem: the JSON path and what is wrong (with what was expected).
using SectionProblem = std::pair<std::string, std::string>;

// Reads doc["resilience"], doc["data_pipeline"] and doc["variability"] where present.
RunSections read_run_sections(const nlohmann::json& doc, std::vector<SectionProblem>& problems);
// The top-level keys read_run_sections() owns.
const std::vector<std::string>& run_section_keys();

}  // namespace cs::sim
