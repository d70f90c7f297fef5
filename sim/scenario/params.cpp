#include "sim/scenario/params.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

#include "models/hardware/gpu_catalog.hpp"
#include "models/workload/transformer.hpp"
#include "sim/scenario/enum_names.hpp"
#include "topologies/link_catalog.hpp"

namespace cs::sim::params {

namespace {

// The shared reasons behind the maxima.
constexpr const char* kGpusReason = "nodes x gpus_per_node stays below 2^31 GPUs";
constexpr const char* kGroupReason = "2^20 GPUs in one parallel group: 10x the largest clusters built";
constexpr const char* kLayersReason = "1e4 layers: 50x the deepest published model; ops per step grow with it";
constexpr const char* kWidthReason = "2^20: 40x the widest published model (PaLM, 18432); FLOP counts stay in 64 bits";
constexpr const char* kHeadsReason = "65536 heads: 500x any published model";
constexpr const char* kSeqReason = "2^24 tokens: 16x the longest context trained (1M)";
constexpr const char* kBatchReason = "1e8 sequences: 1e4x Megatron's largest batches; tokens per step stay below 2^51";

Param integer(std::string path, std::string unit, std::string def, double min, double max, std::string reason, std::string help,
              int search = 0) {
  Param p;
  p.path = std::move(path), p.type = Type::integer, p.unit = std::move(unit), p.default_text = std::move(def);
  p.min = min, p.max = max, p.max_reason = std::move(reason), p.help = std::move(help), p.search_order = search;
  return p;
}

Param number(std::string path, std::string unit, std::string def, double min, double max, std::string reason, std::string help) {
  Param p = integer(std::move(path), std::move(unit), std::move(def), min, max, std::move(reason), std::move(help));
  p.type = Type::number;
  return p;
}

// A probability or share: [0, 1).
Param fraction(std::string path, std::string def, std::string help) {
  Param p = number(std::move(path), "", std::move(def), 0, 1, "", std::move(help));
  p.max_exclusive = true;
  return p;
}

// A share of a peak: [0.01, 1] (below 1% of a peak is not a kernel or a link anyone runs, and would
// stretch one step past the engine's 64-bit picosecond clock).
Param share(std::string path, std::string def, std::string help) {
  return number(std::move(path), "", std::move(def), 0.01, 1, "", std::move(help));
}

// A share of a GPU peak: (0, 1].
Param peak_share(std::string path, std::string def, std::string help) {
  Param p = number(std::move(path), "", std::move(def), 0, 1, "", std::move(help));
  p.min_exclusive = true;
  return p;
}

Param plain(std::string path, Type type, std::string def, std::string help, std::vector<std::string> choices = {}, int search = 0) {
  Param p;
  p.path = std::move(path), p.type = type, p.default_text = std::move(def), p.help = std::move(help);
  p.choices = std::move(choices), p.search_order = search;
  return p;
}

std::vector<Param> build() {
  const auto gpus = models::gpu_names();
  return {
      // The top level.
      plain("name", Type::string, "the file name without .json", "the scenario's name in reports"),
      plain("description", Type::string, "none", "free text, for people"),
      plain("cluster", Type::object, "required", "the GPUs, the nodes and the network"),
      plain("model", Type::object, "required (without jobs)", "the model: {\"preset\": ...} or its hyperparameters"),
      plain("training", Type::object, "required (without jobs)", "the layout and batch of the training job"),
      plain("calibration", Type::string, "built-in defaults",
            "a calibration profile (clustersim calibrate fit), relative to the scenario's folder"),
      plain("simulation", Type::object, "defaults below", "how the step is simulated"),
      plain("jobs", Type::list, "one job on the whole cluster",
            "several jobs sharing the cluster's fabric, each {name, nodes | gpus, first_node, model, training}; "
            "not with top-level model and training"),

      // cluster
      plain("cluster.gpu", Type::name_or_object, "required", "a catalog GPU, or a custom GPU object (cluster.gpu.*)", gpus),
      plain("cluster.gpu.name", Type::string, "required", "a custom GPU's name"),
      number("cluster.gpu.peak_tflops_bf16", "TFLOP/s", "required", 0.001, 1e6, "1e6 TFLOP/s: 400x a B200",
             "dense bf16 tensor-core peak"),
      number("cluster.gpu.peak_tflops_fp32", "TFLOP/s", "peak_tflops_bf16 / 16", 0.001, 1e6, "1e6 TFLOP/s: 400x a B200", "fp32 peak"),
      number("cluster.gpu.peak_tflops_tf32", "TFLOP/s", "peak_tflops_bf16 / 2", 0.001, 1e6, "1e6 TFLOP/s: 400x a B200", "tf32 peak"),
      number("cluster.gpu.peak_tflops_fp8", "TFLOP/s", "0 (no fp8)", 0, 1e6, "1e6 TFLOP/s: 400x a B200", "dense fp8 peak; 0: none"),
      number("cluster.gpu.hbm_gib", "GiB", "required", 0.001, 1e5, "1e5 GiB: 500x a B200's HBM", "memory per GPU"),
      number("cluster.gpu.hbm_tbps", "TB/s", "required", 0.001, 1e3, "1000 TB/s: 100x a B200's HBM", "memory bandwidth"),
      number("cluster.gpu.tdp_w", "W", "700", 0, 1e5, "100 kW: 100x a B200", "board power, for energy"),
      number("cluster.gpu.nvlink_gbps", "GB/s", "0 (no NVLink)", 0, 1e5, "1e5 GB/s: 50x NVLink 5",
             "NVLink bandwidth per GPU, both directions"),
      integer("cluster.gpu.sm_count", "", "132", 1, 1e5, "1e5 SMs: 600x a B200 (148)", "streaming multiprocessors (wave quantization)"),
      number("cluster.gpu.price_per_gpu_hour", "USD/GPU-hour", "0", 0, 1e4, "$1e4 an hour: 1000x any rental price",
             "the GPU's own rental price"),
      peak_share("cluster.gpu.mma_sync_fraction", "1", "the share of the tensor peak mma.sync kernels reach (FlashAttention 2)"),
      peak_share("cluster.gpu.matmul_ceiling_fraction", "0 (the catalog's)", "the best large GEMM's share of the bf16 peak"),
      integer("cluster.nodes", "", "required", 1, 1e6, std::string("1e6 nodes: 10x the largest clusters built; ") + kGpusReason,
              "number of nodes"),
      integer("cluster.gpus_per_node", "", "8", 1, 1024, std::string("1024: 2x an NVL576 domain; ") + kGpusReason, "GPUs in each node"),
      plain("cluster.intra_node", Type::name_or_object, "nvswitch",
            "scale-up fabric inside a node: a catalog name, or an object (cluster.intra_node.*) that adjusts one",
            topo::intra_node_names()),
      plain("cluster.intra_node.name", Type::choice, "nvswitch", "the catalog entry the object starts from", topo::intra_node_names()),
      number("cluster.intra_node.gpu_bandwidth_GBps", "GB/s", "the catalog's (nvswitch: the GPU's NVLink / 2)", 0.1, 1e5,
             "1e5 GB/s per direction: 50x NVLink 5", "bandwidth per GPU and direction"),
      share("cluster.intra_node.efficiency", "the catalog's", "share of the bandwidth a ring all-reduce reaches"),
      number("cluster.intra_node.latency_us", "us", "the catalog's", 0, 1e6, "1e6 us: one second per hop", "latency per hop"),
      plain("cluster.intra_node.nvls", Type::boolean, "true on NVSwitch with NVLink 4 or later (H100, H200, B200)",
            "in-switch reduction (NVLink SHARP)"),
      plain("cluster.inter_node", Type::object, "required when nodes > 1", "the scale-out network"),
      plain("cluster.inter_node.fabric", Type::choice, "fat-tree", "scale-out topology", names_of(kFabricNames)),
      plain("cluster.inter_node.link", Type::name_or_object, "required",
            "the NIC link: a catalog name, or a custom link object (cluster.inter_node.link.*)", topo::net_link_names()),
      plain("cluster.inter_node.link.name", Type::string, "custom", "a custom link's name"),
      number("cluster.inter_node.link.line_rate_gbps", "Gb/s", "100", 1, 1e5, "1e5 Gb/s: 100x an XDR port",
             "NIC line rate"),
      share("cluster.inter_node.link.efficiency", "0.9", "share of the line rate a transfer reaches"),
      number("cluster.inter_node.link.latency_us", "us", "2", 0, 1e6, "1e6 us: one second per hop", "latency per hop"),
      plain("cluster.inter_node.link.rdma", Type::boolean, "true", "RDMA (GPUDirect) rather than host-staged copies"),
      integer("cluster.inter_node.nics_per_node", "", "gpus_per_node", 1, 1024, "1024: one NIC per GPU of the largest node",
              "scale-out NICs per node"),
      number("cluster.inter_node.oversubscription", "", "1", 1, 1e3, "1000:1: 100x any fabric built",
             "leaf-to-spine oversubscription (1: non-blocking)"),
      integer("cluster.inter_node.leaf_radix", "", "32", 2, 65536, "65536 ports: 100x the largest switch ASIC", "ports of a leaf switch"),
      integer("cluster.inter_node.tiers", "", "2", 2, 3, "fabrics of 2 or 3 tiers are built", "switch tiers of the fat tree"),
      integer("cluster.inter_node.leaves_per_pod", "", "8", 1, 65536, "65536: 100x the largest switch ASIC's radix",
              "leaves under one pod's spines (3 tiers)"),
      number("cluster.inter_node.spine_oversubscription", "", "1", 1, 1e3, "1000:1: 100x any fabric built",
             "spine-to-core oversubscription (3 tiers)"),
      plain("cluster.inter_node.pxn", Type::boolean, "true", "NCCL's PXN (rail-optimized fabrics: send through the rail's NIC)"),
      number("cluster.price_per_gpu_hour", "USD/GPU-hour", "the GPU's catalog price", 0, 1e4, "$1e4 an hour: 1000x any rental price",
             "rental price per GPU-hour"),
      number("cluster.node_overhead_w", "W", "the GPU's host power share x gpus_per_node", 0, 1e6, "1 MW per node: 100x an NVL72 rack",
             "host power per node, for energy"),
      number("cluster.pue", "", "1.2", 1, 10, "PUE 10: 5x the worst data centres", "power usage effectiveness"),
      number("cluster.usd_per_kwh", "USD/kWh", "0", 0, 1e3, "$1000 a kWh: 1e4x grid prices", "energy price"),

      // model
      plain("model.preset", Type::choice, "none (hyperparameters)", "a published architecture; the keys below override it",
            models::preset_names()),
      plain("model.name", Type::string, "the preset's, else custom", "the model's name in reports"),
      integer("model.num_layers", "", "required without a preset", 1, 1e4, kLayersReason, "transformer layers"),
      integer("model.hidden_size", "", "required without a preset", 1, 1 << 20, kWidthReason, "model width"),
      integer("model.num_attention_heads", "", "required without a preset", 1, 65536, kHeadsReason, "attention heads"),
      integer("model.num_query_groups", "", "num_attention_heads", 1, 65536, kHeadsReason, "key/value heads (GQA; = heads for MHA)"),
      integer("model.ffn_hidden_size", "", "4 x hidden_size", 1, 1 << 22, "2^22: 60x the widest published MLP; FLOP counts stay in 64 bits",
              "MLP width"),
      integer("model.vocab_size", "", "required without a preset", 1, 1 << 24, "2^24: 64x the largest vocabularies (256k)",
              "vocabulary size"),
      integer("model.kv_channels", "", "hidden_size / num_attention_heads", 1, 65536, "65536: 250x the largest head dim", "head dim"),
      plain("model.activation", Type::choice, "the preset's, else gelu", "MLP activation", names_of(kActivationNames)),
      plain("model.causal", Type::boolean, "true", "causal attention (false: an encoder such as BERT)"),
      plain("model.attention_backend", Type::choice, "auto", "attention kernels (Transformer Engine's backends)",
            names_of(kAttentionBackendNames)),
      plain("model.position_embedding_type", Type::choice, "rope for SwiGLU models, else learned_absolute", "Megatron's position embedding",
            names_of(kPositionEmbeddingNames)),
      plain("model.untie_embeddings_and_output_weights", Type::boolean, "the preset's, else true", "separate LM-head weights"),
      fraction("model.attention_dropout", "the preset's, else 0", "dropout probability after the attention softmax"),
      fraction("model.hidden_dropout", "the preset's, else 0", "dropout probability on the hidden states"),
      [] {
        Param p = integer("model.window_size", "tokens", "0 (full attention)", 0, 1 << 24, kSeqReason,
                          "sliding-window attention: an integer w or Megatron's pair [w, 0]");
        p.type = Type::integer_or_list;
        return p;
      }(),
      [] {
        Param p = integer("model.window_attn_skip_freq", "layers", "every layer windowed", 1, 1e4, kLayersReason,
                          "every N-th layer full attention, or a list of 0/1 per layer (1: windowed)");
        p.type = Type::integer_or_list;
        return p;
      }(),
      integer("model.num_moe_experts", "", "0 (dense)", 0, 65536, "65536 experts: 250x the most published (256)", "routed experts"),
      integer("model.moe_router_topk", "", "the preset's, else 0", 0, 65536, "at most num_moe_experts (<= 65536)", "experts per token"),
      integer("model.moe_ffn_hidden_size", "", "0 (ffn_hidden_size)", 0, 1 << 22, "2^22: as ffn_hidden_size", "an expert's MLP width"),
      integer("model.moe_shared_expert_intermediate_size", "", "0 (none)", 0, 1 << 22, "2^22: as ffn_hidden_size",
              "shared experts' total MLP width"),
      [] {
        Param p = integer("model.moe_layer_freq", "layers", "1 (every layer MoE)", 1, 1e4, kLayersReason,
                          "every N-th layer MoE, or a list of 0/1 per layer (1: MoE)");
        p.type = Type::integer_or_list;
        return p;
      }(),

      // training
      integer("training.seq_length", "tokens", "required", 1, 1 << 24, kSeqReason, "tokens per sequence"),
      integer("training.global_batch_size", "sequences", "required", 1, 1e8, kBatchReason, "sequences per step"),
      integer("training.micro_batch_size", "sequences", "1", 1, 1e8, kBatchReason, "sequences per micro-batch", 10),
      plain("training.precision", Type::choice, "bf16", "GEMM precision (the rest runs in bf16)", names_of(kPrecisionNames)),
      integer("training.tensor_model_parallel_size", "", "1", 1, 1 << 20, kGroupReason, "tensor-parallel size", 1),
      plain("training.sequence_parallel", Type::boolean, "false", "Megatron sequence parallelism with TP", {}, 2),
      integer("training.pipeline_model_parallel_size", "", "1", 1, 1 << 20, kGroupReason, "pipeline-parallel size", 3),
      integer("training.virtual_pipeline_model_parallel_size", "", "1", 1, 1e4,
              "1e4: one layer per virtual stage of the deepest model allowed", "virtual pipeline stages per rank (interleaved 1F1B)", 4),
      plain("training.pipeline_schedule", Type::choice, "1f1b (interleaved when virtual > 1)", "pipeline schedule",
            names_of(kPipelineScheduleNames), 5),
      integer("training.context_parallel_size", "", "1", 1, 1 << 20, kGroupReason, "context-parallel size (ring attention)", 6),
      integer("training.expert_model_parallel_size", "", "1", 1, 1 << 20, kGroupReason, "expert-parallel size (MoE)", 7),
      integer("training.expert_tensor_parallel_size", "", "tensor_model_parallel_size", 1, 1 << 20, kGroupReason,
              "tensor-parallel size of the experts (MoE)", 8),
      integer("training.data_parallel_size", "", "derived: GPUs / (TP x PP x CP)", 1, 1 << 30,
              "2^30: more than nodes x gpus_per_node can hold", "data-parallel size; when given it must match", 9),
      integer("training.zero_stage", "", "0", 0, 3, "ZeRO has stages 0 to 3",
              "0 DDP, 1 distributed optimizer, 2 + gradients, 3 + weights", 11),
      plain("training.fsdp_sharding_strategy", Type::choice, "none (zero_stage decides)", "PyTorch FSDP's strategy, as a ZeRO stage",
            names_of(kFsdpShardingNames), 12),
      plain("training.recompute_granularity", Type::choice, "none", "activation recomputation", names_of(kRecomputeNames), 13),
      plain("training.recompute_modules", Type::list, "[\"core_attn\"]",
            "what selective recompute re-runs: core_attn, layernorm, mlp, moe_act"),
      plain("training.overlap_grad_reduce", Type::boolean, "true", "overlap the gradient reduction with backward"),
      plain("training.overlap_param_gather", Type::boolean, "true", "overlap the parameter all-gather with forward"),
      plain("training.tp_comm_overlap", Type::boolean, "false", "overlap TP communication with GEMMs (Transformer Engine)"),
      number("training.tokens_to_train", "tokens", "0 (no time or cost to train)", 0, 1e18, "1e18 tokens: 6e4x the largest runs (15T)",
             "tokens of the whole run, for days and dollars"),
      number("training.memory_reserve_gib", "GiB", "1", 0, 1e5, "1e5 GiB: beyond any GPU's memory",
             "memory the framework and CUDA context hold"),
      fraction("training.allocator_fragmentation", "0.05", "share of the memory the caching allocator loses"),
      plain("training.account_for_embedding_in_pipeline_split", Type::boolean, "false", "the embedding counts as a layer in the split"),
      plain("training.account_for_loss_in_pipeline_split", Type::boolean, "false", "the loss counts as a layer in the split"),
      integer("training.decoder_first_pipeline_num_layers", "layers", "even split", 0, 1e4, kLayersReason, "layers of the first stage"),
      integer("training.decoder_last_pipeline_num_layers", "layers", "even split", 0, 1e4, kLayersReason, "layers of the last stage"),

      // simulation
      plain("simulation.network", Type::choice, "analytical",
            "analytical: closed-form per collective; flow: routed flows sharing links max-min fairly", names_of(kNetworkBackendNames)),
      plain("simulation.nccl_algorithm", Type::choice, "NCCL-like choice", "force one NCCL algorithm", names_of(kNcclAlgorithmNames)),
      plain("simulation.symmetry", Type::boolean, "true", "simulate one rank per class of identical ranks and mirror it"),
      number("simulation.comm_compute_contention", "", "NCCL channels / SM count", 0, 10,
             "10: an 11x slowdown, 30x the measured 0.1-0.3", "compute slowdown while NCCL moves data on the same GPU"),
      number("simulation.grad_bucket_params", "parameters", "4e7", 1, 1e15, "1e15: 1000x the largest models (one bucket)",
             "DDP gradient bucket size"),

      // jobs
      plain("jobs[].name", Type::string, "jobN", "the job's name; names differ"),
      [] {
        Param p = integer("jobs[].nodes", "", "required (or gpus)", 1, 1e6, "at most cluster.nodes (<= 1e6)",
                          "a node count (placed from first_node) or a list of node indices in rank order");
        p.type = Type::integer_or_list;
        return p;
      }(),
      integer("jobs[].gpus", "", "required (or nodes)", 1, 1 << 30, "2^30: more than nodes x gpus_per_node can hold",
              "a GPU count of whole nodes"),
      integer("jobs[].first_node", "", "after the previous job's last node", 0, 1e6, "below cluster.nodes (<= 1e6)",
              "the first node of a job placed by count"),
      plain("jobs[].model", Type::object, "required", "as model (the keys model.*)"),
      plain("jobs[].training", Type::object, "required", "as training (the keys training.*)"),
  };
}

std::string format_g(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

}  // namespace

std::string_view to_string(Type t) {
  switch (t) {
    case Type::integer: return "integer";
    case Type::number: return "number";
    case Type::boolean: return "boolean";
    case Type::string: return "string";
    case Type::choice: return "choice";
    case Type::name_or_object: return "name or object";
    case Type::integer_or_list: return "integer or list";
    case Type::list: return "list";
    case Type::object: return "object";
  }
  return "?";
}

const std::vector<Param>& table() {
  static const std::vector<Param> t = build();
  return t;
}

std::string normalize(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (std::size_t i = 0; i < path.size(); ++i) {
    out += path[i];
    if (path[i] == '[') {
      while (i + 1 < path.size() && path[i + 1] != ']') ++i;
    }
  }
  return out;
}

const Param* find(std::string_view path) {
  const std::string key = normalize(path);
  for (const auto& p : table())
    if (p.path == key) return &p;
  return nullptr;
}

std::vector<std::string> children(std::string_view object_path) {
  const std::string prefix = object_path.empty() ? std::string{} : normalize(object_path) + ".";
  std::vector<std::string> out;
  for (const auto& p : table()) {
    if (p.path.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string rest = p.path.substr(prefix.size());
    if (!rest.empty() && rest.find('.') == std::string::npos) out.push_back(rest);
  }
  return out;
}

std::vector<std::string> search_axes() {
  std::vector<const Param*> axes;
  for (const auto& p : table())
    if (p.search_order > 0) axes.push_back(&p);
  std::stable_sort(axes.begin(), axes.end(), [](const Param* a, const Param* b) { return a->search_order < b->search_order; });
  std::vector<std::string> out;
  for (const Param* p : axes) out.push_back(p->path);
  return out;
}

std::string bound_text(const Param& p, double v) {
  if (p.type != Type::number) return std::to_string(static_cast<std::int64_t>(v));
  return format_g(v);
}

namespace {

std::string range_text(const Param& p) {
  if (!p.has_range()) return "";
  return std::string(p.min_exclusive ? "(" : "[") + bound_text(p, p.min) + ", " + bound_text(p, p.max) + (p.max_exclusive ? ")" : "]");
}

}  // namespace

nlohmann::json to_json() {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& p : table()) {
    nlohmann::json e = {{"path", p.path}, {"type", std::string(to_string(p.type))}, {"unit", p.unit}, {"default", p.default_text},
                        {"help", p.help}, {"searched", p.search_order > 0}};
    if (p.has_range()) {
      e["min"] = p.min, e["max"] = p.max;
      e["min_exclusive"] = p.min_exclusive, e["max_exclusive"] = p.max_exclusive;
      e["max_reason"] = p.max_reason;
    }
    if (!p.choices.empty()) e["choices"] = p.choices;
    list.push_back(std::move(e));
  }
  return {{"parameters", list}};
}

std::string to_markdown() {
  std::string md =
      "# Scenario reference\n\n"
      "Generated from the parameter table (sim/scenario/params.cpp) by `clustersim params --markdown`; do not edit by hand\n"
      "(a test fails when this file and the table differ).\n\n"
      "Every key a scenario file may hold. Unknown keys are errors. Integers are checked against their range\n"
      "before use; numbers must be finite and within theirs. `--set` and `sweep --vary` take the same paths and\n"
      "are checked the same way. In a multi-job scenario each `jobs[]` entry's `model` and `training` take the\n"
      "keys of `model.*` and `training.*`. \"searched\": the layout search (`clustersim sweep --search`) varies it.\n";
  std::string section;
  auto cell = [](std::string s) {
    std::string out;
    for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
  };
  for (const auto& p : table()) {
    const std::string top = p.path.substr(0, p.path.find_first_of(".["));
    const std::string sec = p.path.find_first_of(".[") == std::string::npos ? "top level" : top;
    if (sec != section) {
      section = sec;
      md += "\n## " + (sec == "top level" ? std::string("Top level") : "`" + sec + "`") + "\n\n";
      md += "| key | type | unit | default | range | help |\n|---|---|---|---|---|---|\n";
    }
    std::string type(to_string(p.type));
    if (!p.choices.empty()) {
      std::string names;
      for (const auto& c : p.choices) names += (names.empty() ? "" : ", ") + std::string("`") + c + "`";
      type += ": " + names;
    }
    std::string range = range_text(p);
    if (!p.max_reason.empty()) range += " (max: " + p.max_reason + ")";
    std::string help = p.help;
    if (p.search_order > 0) help += " (searched)";
    md += "| `" + p.path + "` | " + cell(type) + " | " + cell(p.unit) + " | " + cell(p.default_text) + " | " + cell(range) + " | " +
          cell(help) + " |\n";
  }
  return md;
}

}  // namespace cs::sim::params
