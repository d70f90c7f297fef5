#include "sim/validation/validate_training.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "models/hardware/gpu_catalog.hpp"
#include "models/memory/memory_model.hpp"
#include "sim/base/check.hpp"
#include "sim/base/input_error.hpp"
#include "sim/base/units.hpp"
#include "sim/report/format.hpp"
#include "sim/scenario/params.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"
#include "sim/validation/framework_defaults.hpp"

namespace cs::sim {

using nlohmann::json;

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
bool has(const std::string& text, const std::string& part) { return lower(text).find(lower(part)) != std::string::npos; }

std::string str(const json& obj, const char* key) {
  if (!obj.is_object()) return {};
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return {};
  return it->is_string() ? it->get<std::string>() : it->dump();
}
std::optional<double> num(const json& obj, const char* key) {
  if (!obj.is_object()) return std::nullopt;
  const auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}
const json& sub(const json& obj, const char* key) {
  static const json null_value;  // immutable
  if (!obj.is_object()) return null_value;
  const auto it = obj.find(key);
  return it == obj.end() ? null_value : *it;
}

std::string text_of_value(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// The catalog name of a GPU as the sources spell it ("B200 (DGX-B200, 180 GB HBM3e)", "H100-SXM5-80GB (700W,
// HBM3)": the name before any parenthesis or suffix); "" for a GPU the catalog has no counterpart of (the
// torchtitan runs' H100 with 96 GB of HBM2e at 500 W: neither the SXM's 80 GB of HBM3 nor the PCIe card).
std::string catalog_gpu(const std::string& published) {
  static const std::vector<std::pair<std::string, std::string>> names = {
      {"A100-SXM4-80GB", "A100-80GB"}, {"A100-SXM4-40GB", "A100-40GB"}, {"H100-SXM5-80GB", "H100-SXM"},
      {"H200", "H200"}, {"GB200", "GB200"}, {"B200", "B200"}, {"B300", "B300"}, {"H800", "H800"}, {"MI300X", "MI300X"}};
  for (const auto& [prefix, name] : names)
    if (published.rfind(prefix, 0) == 0) return name;
  return {};
}

// The inter-node network the source describes: (link name or custom link, NICs per node).
json inter_node(const std::string& gpu, const std::string& description, std::vector<std::string>& assumptions, bool* understood = nullptr) {
  if (understood) *understood = true;
  if (has(description, "omni-path"))
    return {{"fabric", "fat-tree"},
            {"link", {{"name", "omni-path-100"}, {"line_rate_gbps", 100}, {"efficiency", 0.9}, {"latency_us", 2}}},
            {"nics_per_node", 4}};
  if (has(description, "roce") && has(description, "1600"))
    return {{"fabric", "fat-tree"}, {"link", "roce-200g"}, {"nics_per_node", 8}};
  if (has(description, "hdr")) return {{"fabric", "fat-tree"}, {"link", "ib-hdr200"}, {"nics_per_node", 8}};
  if (has(description, "ndr") || (has(description, "8x 400 gb/s infiniband")))
    return {{"fabric", "fat-tree"}, {"link", "ib-ndr400"}, {"nics_per_node", 8}};
  // Not stated: what the GPU's reference system has (DGX A100: 8 x HDR200; DGX H100 and DGX B200: 8 x
  // NDR400, ConnectX-7).
  if (understood) *understood = description.empty() || has(description, "not stated");
  const bool ndr = gpu != "A100-80GB" && gpu != "A100-40GB";
  assumptions.push_back(std::string("network not stated: 8 x ") + (ndr ? "NDR400" : "HDR200") + " per node (DGX reference)");
  return {{"fabric", "fat-tree"}, {"link", ndr ? "ib-ndr400" : "ib-hdr200"}, {"nics_per_node", 8}};
}

std::string join_messages(const std::vector<std::string>& lines, const std::string& prefix) {
  std::string out;
  for (const auto& l : lines) {
    if (!out.empty()) out += "; ";
    out += l.rfind(prefix, 0) == 0 ? l.substr(prefix.size()) : l;
  }
  return out;
}

// The entry's value for `knob` from the framework defaults (calibrate/published/framework-defaults.json),
// with the rule's assumption written into the point; null when no rule applies.
json knob_value(const EntryDefaults& d, const std::string& knob, TrainingPoint& p, const DefaultRule** used = nullptr) {
  const DefaultRule* r = d.rule(knob);
  if (used) *used = r;
  if (!r) return nullptr;
  if (const std::string says = d.says(*r); !says.empty()) p.assumptions.push_back(says);
  return r->value;
}
// Applies the scenario keys of the entry's rule for `knob` (and writes its assumption); false when none.
bool knob_apply(const EntryDefaults& d, const std::string& knob, TrainingPoint& p, json& model, json& training) {
  const DefaultRule* r = nullptr;
  knob_value(d, knob, p, &r);
  if (r) EntryDefaults::apply(*r, model, training);
  return r != nullptr;
}

// What an MFU figure is a fraction of, and how its source counts FLOPs.
struct MfuConvention {
  bool mosaicml = false;
  double n_params = 0;     // MosaicML's N (the entry's model.params_b)
  double peak_tflops = 0;  // dense peak the source divides by
};

// An MFU-only entry (mfu_pct and nothing above) converts with its source's MFU convention (the README's
// "Read before comparing", point 1): MosaicML's (llm-foundry, or notes naming its 4*d*s^2 attention term)
// counts 3 x (2 N s + 4 l h s^2) per sequence, non-causal, of the GPU's dense peak in the run's precision
// (mosaicml/llm-foundry @ 49521837 scripts/train/benchmarking/README.md "MFU"; N the table's n_params); any
// other source's MFU is Megatron's model FLOPs (num_floating_point_operations, above) of the dense BF16 peak
// (Korthikanti et al. 2022, sec. 6: MFU excludes recompute). 0 when the entry's figures do not convert.
double tokens_per_s_per_gpu_from_mfu(double mfu, const MfuConvention& c, const MegatronFlopsInput& mf, TrainingPoint& p) {
  if (c.mosaicml) {
    if (c.n_params <= 0) return 0;
    const double per_seq = 3 * (2 * c.n_params * mf.seq) + 3 * (4 * mf.layers * mf.hidden * mf.seq * mf.seq);
    p.measured_from = "mfu_pct " + fmt("%g", 100 * mfu) + ", MosaicML 3(2Ns + 4lhs^2) per sequence of " + fmt("%g", c.peak_tflops) +
                      " TFLOP/s";
    return mfu * c.peak_tflops * 1e12 / (per_seq / mf.seq);
  }
  p.measured_from = "mfu_pct " + fmt("%g", 100 * mfu) + ", Megatron model FLOPs of " + fmt("%g", c.peak_tflops) + " TFLOP/s";
  return mfu * c.peak_tflops * 1e12 * mf.batch * mf.seq / megatron_model_flops_per_step(mf);
}

// The published figure as tokens/s per GPU with the source's own convention (the header's list, in its
// preference order); false when none converts. `mf` is the step's Megatron FLOP count input, `vocab` the
// unpadded vocabulary (SC'21's formula).
bool measured_throughput(const json& measured, const std::string& notes, const MegatronFlopsInput& mf, double vocab,
                         const MfuConvention& mfu_convention, TrainingPoint& p) {
  const double gpus = p.gpus, gbs = mf.batch, seq = mf.seq;
  auto from_flops = [&](double tflops, double flops_per_step) { return gbs * seq / (flops_per_step / (tflops * 1e12 * gpus) * gpus); };
  if (auto t = num(measured, "iteration_time_s")) {
    p.measured_from = "iteration_time_s " + fmt("%g", *t);
    p.measured_tokens_per_s_per_gpu = gbs * seq / (*t * gpus);
  } else if (auto v = num(measured, "tokens_per_s_per_gpu")) {
    p.measured_from = "tokens_per_s_per_gpu";
    p.measured_tokens_per_s_per_gpu = *v;
  } else if (auto v2 = num(measured, "tokens_per_s")) {
    p.measured_from = "tokens_per_s / GPUs";
    p.measured_tokens_per_s_per_gpu = *v2 / gpus;
  } else if (auto s = num(measured, "samples_per_s")) {
    p.measured_from = "samples_per_s x seq / GPUs";
    p.measured_tokens_per_s_per_gpu = *s * seq / gpus;
  } else if (auto f = num(measured, "tflops_per_gpu"); f && (has(p.group, "sc21") || has(notes, "96*"))) {
    p.measured_from = "tflops_per_gpu " + fmt("%g", *f) + ", SC'21 96Bslh^2(1+s/6h+V/16lh) incl. recompute";
    p.measured_tokens_per_s_per_gpu = from_flops(*f, sc21_flops_per_step(gbs, seq, mf.layers, mf.hidden, vocab));
  } else if (auto fc = num(measured, "tflops_per_gpu_with_cp")) {
    p.measured_from = "tflops_per_gpu_with_cp " + fmt("%g", *fc) + ", Megatron model FLOPs";
    p.measured_tokens_per_s_per_gpu = from_flops(*fc, megatron_model_flops_per_step(mf));
  } else if (auto fu = num(measured, "tflops_per_gpu_up_to")) {
    p.measured_from = "tflops_per_gpu_up_to " + fmt("%g", *fu) + ", taken as Megatron model FLOPs";
    p.assumptions.push_back("'up to' figure of unstated convention, read as model FLOPs at the best step");
    p.measured_tokens_per_s_per_gpu = from_flops(*fu, megatron_model_flops_per_step(mf));
  } else if (auto f2 = num(measured, "tflops_per_gpu")) {
    p.measured_from = "tflops_per_gpu " + fmt("%g", *f2) + ", taken as Megatron model FLOPs";
    p.measured_tokens_per_s_per_gpu = from_flops(*f2, megatron_model_flops_per_step(mf));
  } else if (auto mfu = num(measured, "mfu_pct"); mfu && *mfu > 0 && mfu_convention.peak_tflops > 0) {
    p.measured_tokens_per_s_per_gpu = tokens_per_s_per_gpu_from_mfu(*mfu / 100, mfu_convention, mf, p);
    return p.measured_tokens_per_s_per_gpu > 0;
  } else {
    return false;
  }
  return true;
}

// Every field of an entry is either mapped into the scenario (or the measured figure), or metadata, or
// listed in the point's assumptions as "not understood" with the value and what was used instead: the
// converter never ignores a field silently. The list below is the whole of what it reads; a field that is
// not in it (a new column of the file, a feature the simulator lacks such as shared experts) is listed.
void audit_fields(const json& entry, const EntryDefaults& d, bool inter_node_understood, TrainingPoint& p) {
  // Metadata and cross-check figures: read by people, not by the model (the measured figure used is named
  // in the point's measured_from; the others are the source's alternative conventions of the same run).
  static const std::vector<std::string> metadata = {
      "id", "kind", "group", "confidence", "notes", "source", "derived", "model.name", "model.params_b", "cluster.system",
      "cluster.gpu_mem_gb", "cluster.nodes", "batch.grad_accum", "batch.tokens_per_step", "batch.global_tokens", "measured"};
  // Numbers and booleans the converter maps one to one.
  static const std::vector<std::string> mapped = {
      "model.layers", "model.hidden", "model.heads", "model.kv_heads", "model.ffn_hidden", "model.vocab", "model.head_dim",
      "model.kv_channels", "model.moe.experts", "model.moe.topk", "model.moe.moe_ffn_hidden", "model.moe.shared_experts",
      "model.moe.shared_expert_ffn_hidden", "model.moe.dense_layers_first", "model.moe.dense_layers", "model.mla.q_lora_rank",
      "model.mla.kv_lora_rank", "model.mla.qk_head_dim", "model.mla.qk_pos_emb_head_dim", "model.mla.v_head_dim", "cluster.count",
      "cluster.gpus_per_node", "cluster.gpu", "parallel.tp", "parallel.pp", "parallel.dp", "parallel.cp", "parallel.ep",
      "parallel.vp", "batch.global", "batch.micro", "batch.seq"};
  // Free text read by the published_text rules of framework-defaults.json, knob by field.
  static const std::vector<std::pair<std::string, std::string>> text_rules = {
      {"precision", "precision"},           {"parallel.recompute", "recompute"}, {"parallel.zero", "optimizer_sharding"},
      {"parallel.fsdp", "fsdp"},            {"model.note", "position_embedding"}};
  auto under = [](const std::string& path, const std::string& prefix) {
    return path == prefix || (path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0 && path[prefix.size()] == '.');
  };
  auto note = [&](const std::string& path, const json& v, const std::string& instead) {
    std::string text = v.is_string() ? "\"" + v.get<std::string>() + "\"" : v.dump();
    p.assumptions.push_back("not understood: " + path + " = " + text + " (" + instead + ")");
  };
  std::vector<std::pair<std::string, const json*>> leaves;
  auto walk = [&](auto&& self, const json& v, const std::string& path) -> void {
    if (v.is_object() && !v.empty()) {
      for (auto it = v.begin(); it != v.end(); ++it) self(self, it.value(), path.empty() ? it.key() : path + "." + it.key());
    } else {
      leaves.emplace_back(path, &v);
    }
  };
  walk(walk, entry, "");
  for (const auto& leaf : leaves) {
    // Named copies, not a structured binding: lambdas below capture `path`, which clang 14 (the fuzz build's
    // compiler) refuses for a binding.
    const std::string& path = leaf.first;
    const json* v = leaf.second;
    if (std::any_of(metadata.begin(), metadata.end(), [&](const std::string& m) { return under(path, m); })) continue;
    // Not stated: the default that filled it is in the assumptions.
    if (v->is_null() || (v->is_string() && (has(v->get<std::string>(), "not stated") || has(v->get<std::string>(), "not in table")))) continue;
    if (std::find(mapped.begin(), mapped.end(), path) != mapped.end()) {
      if (!v->is_number() && path != "cluster.gpu") note(path, *v, "a number was expected; the field was not used");
      continue;
    }
    if (const auto r = std::find_if(text_rules.begin(), text_rules.end(), [&](const auto& t) { return t.first == path; }); r != text_rules.end()) {
      const bool numeric_stage = path == "parallel.zero" && v->is_number_integer();
      const bool fsdp_off = path == "parallel.fsdp" && v->is_number() && v->get<double>() == 0;  // 0: no FSDP
      if (!numeric_stage && !fsdp_off && !d.understood(r->second, path))
        note(path, *v, path == "model.note" ? "free text about the model; its dimensions above were used" : "the framework's default was used");
      continue;
    }
    if (path == "parallel.sp") {
      if (!v->is_boolean()) note(path, *v, "sequence parallelism from the framework's default");
      continue;
    }
    if (path == "framework") {
      if (p.framework.empty()) note(path, *v, "no framework of framework-defaults.json matches; generic defaults");
      continue;
    }
    if (path == "model.arch") {
      if (!has(text_of_value(*v), "transformer") && !has(text_of_value(*v), "moe")) note(path, *v, "a dense transformer was assumed");
      continue;
    }
    if (path == "cluster.intra_node") {
      if (!has(text_of_value(*v), "nvswitch") && !has(text_of_value(*v), "nvl72")) note(path, *v, "an NVSwitch node was assumed");
      continue;
    }
    if (path == "cluster.inter_node") {
      if (!inter_node_understood) note(path, *v, "the GPU's reference network was assumed");
      continue;
    }
    note(path, *v, "not modelled; ignored");
  }
}

// One published entry -> scenario, section by section (convert_entry): what a section reads of the entry,
// the later ones use. A section returns false when it skips the entry (TrainingPoint::skip_reason).
struct EntryConversion {
  EntryConversion(const json& entry, const DefaultsTable& table, std::size_t index);
  bool read_model();
  bool read_layout();
  bool write_model();
  bool write_cluster();
  void write_training();
  bool convert_measured();
  bool skip(const std::string& reason) {
    p.skipped = true;
    p.skip_reason = reason;
    return false;
  }

  const json& e;  // the entry
  const json& model;
  const json& cluster;
  const json& par;
  const json& batch;
  const json& measured;
  TrainingPoint p;
  std::string notes;
  EntryDefaults defaults;
  json m = json::object(), tr = json::object();  // the scenario's model and training, filled below
  // read_model: a hybrid model's family preset, MLA's dimensions (or its family's), the model's dimensions,
  // its head dim where that is not hidden / heads (0), its family's sliding window.
  std::optional<models::ModelConfig> preset;
  std::string preset_name;
  json mla = nullptr;
  bool mla_of_family = false;
  std::optional<double> layers, hidden, heads, ffn;
  double kv_channels = 0;
  const DefaultRule* window = nullptr;
  // read_layout
  std::optional<double> tp, pp, gbs, seq;
  std::string gpu;  // the catalog's name
  double cp = 1, ep = 1, vp = 0, mbs = 0;
  bool sp = false;
  const DefaultRule* recompute_rule = nullptr;
  std::string recompute, fsdp, precision;
  int zero = 0;
  // write_model
  std::int64_t vocab = 0;
  double groups = 0;
  bool swiglu = false;
  // write_cluster
  json cl;
  bool inter_node_understood = true;
};

EntryConversion::EntryConversion(const json& entry, const DefaultsTable& table, std::size_t index)
    : e(entry), model(sub(entry, "model")), cluster(sub(entry, "cluster")), par(sub(entry, "parallel")), batch(sub(entry, "batch")),
      measured(sub(entry, "measured")), notes(str(entry, "notes")), defaults(table, entry) {
  p.id = str(e, "id");
  if (p.id.empty()) p.id = "#" + std::to_string(index);
  p.group = str(e, "group");
  p.confidence = str(e, "confidence");
  p.model = str(model, "name");
  p.gpu = str(cluster, "gpu");
  p.gpus = static_cast<int>(num(cluster, "count").value_or(0));
  p.framework = defaults.framework();
  p.release = defaults.release();
}

bool EntryConversion::read_model() {
  // What the simulator cannot express.
  const std::string arch = str(model, "arch");
  // Hybrid Mamba-Transformer models (model.hybrid_override_pattern): the entries carry no dimensions ("built
  // from the HF config at run time"), so the model family's published architecture, framework-defaults.json's
  // "architecture" rule naming a preset (models/workload/transformer.cpp, its sources beside it), is the model.
  if (has(arch, "mamba")) {
    const DefaultRule* architecture = nullptr;
    knob_value(defaults, "architecture", p, &architecture);
    if (!architecture)
      return skip("hybrid Mamba-Transformer model without its architecture (no \"architecture\" rule of its model family in "
                  "framework-defaults.json: its hybrid_override_pattern and Mamba sizes)");
    json pm = json::object(), pt = json::object();
    EntryDefaults::apply(*architecture, pm, pt);
    preset_name = pm.value("preset", std::string());
    preset = models::find_preset(preset_name);
    if (!preset || !preset->hybrid()) return skip("the model family's architecture rule names no hybrid preset (\"" + preset_name + "\")");
  }
  // Multi-head latent attention: the entry's model.mla, Megatron-Core's MLATransformerConfig names (qk_head_dim
  // the no-RoPE part, qk_pos_emb_head_dim the RoPE part) into model.mla.
  // Without them, the model family's published config (framework-defaults.json's "mla" rule).
  const json& mla_dims = sub(model, "mla");
  if (has(arch, "mla")) {
    const auto kv = num(mla_dims, "kv_lora_rank"), nope = num(mla_dims, "qk_head_dim"), rope = num(mla_dims, "qk_pos_emb_head_dim"),
               v = num(mla_dims, "v_head_dim");
    if (mla_dims.is_object() && kv && nope && rope && v)
      mla = {{"q_lora_rank", num(mla_dims, "q_lora_rank").value_or(0)}, {"kv_lora_rank", *kv}, {"qk_nope_head_dim", *nope},
             {"qk_rope_head_dim", *rope}, {"v_head_dim", *v}};
    else if (defaults.rule("mla"))
      mla_of_family = true;
    else
      return skip("multi-head latent attention (MLA) without its dimensions (model.mla: kv_lora_rank, qk_head_dim, qk_pos_emb_head_dim, v_head_dim)");
  }
  layers = num(model, "layers"), hidden = num(model, "hidden"), heads = num(model, "heads");
  ffn = num(model, "ffn_hidden");
  if (preset) {  // the entry's own dimensions, where it has any, must be the preset's
    const auto differs = [](const std::optional<double>& v, std::int64_t x) { return v && *v != static_cast<double>(x); };
    if (differs(layers, preset->num_layers) || differs(hidden, preset->hidden_size) || differs(heads, preset->num_attention_heads) ||
        differs(ffn, preset->ffn_hidden_size))
      return skip("the entry's model dimensions differ from the family's architecture (preset " + preset_name + ")");
    layers = static_cast<double>(preset->num_layers), hidden = static_cast<double>(preset->hidden_size);
    heads = static_cast<double>(preset->num_attention_heads), ffn = static_cast<double>(preset->ffn_hidden_size);
  }
  const json& moe_dims = sub(model, "moe");
  if (!ffn && moe_dims.is_object() && num(moe_dims, "moe_ffn_hidden")) {
    // Every layer is MoE (Qwen3 MoE: decoder_sparse_step 1, no mlp_only_layers): the dense FFN width is
    // never used; the scenario needs one, so it takes the expert width.
    ffn = num(moe_dims, "moe_ffn_hidden");
    p.assumptions.push_back("dense ffn_hidden not given: every layer is MoE, ffn_hidden_size = moe_ffn_hidden_size (unused)");
  }
  if (!layers || !hidden || !heads || !ffn) return skip("model dimensions not given in the file");
  // Head dim (Megatron's kv_channels) where it is not hidden / heads: from the entry, else the model
  // family's published config.
  kv_channels = num(model, "head_dim").value_or(num(model, "kv_channels").value_or(0));
  if (kv_channels <= 0)
    if (const json v = knob_value(defaults, "head_dim", p); v.is_number()) kv_channels = v.get<double>();
  if (kv_channels > 0 && std::fmod(*hidden, *heads) == 0 && kv_channels == *hidden / *heads) kv_channels = 0;  // the default
  // A sliding window of the model family (set into the model below, said here).
  knob_value(defaults, "sliding_window", p, &window);
  return true;
}

// TP and PP, the GPU and the batch, then the rest of the layout: the entry's, else the framework's defaults.
bool EntryConversion::read_layout() {
  tp = num(par, "tp"), pp = num(par, "pp");
  if (!tp || !pp) return skip("layout (TP/PP) not published");
  gpu = catalog_gpu(p.gpu);
  if (gpu.empty() || !models::find_gpu(gpu))
    return skip("GPU not in the catalog: \"" + p.gpu + "\"" + (gpu.empty() ? std::string() : " (" + gpu + ")"));
  gbs = num(batch, "global"), seq = num(batch, "seq");
  if (has(notes, "global batch") && has(notes, "derived"))
    p.batch_note = "the global batch is not published as such; the entry's notes: " + notes;
  if (!gbs || !seq || p.gpus <= 0) return skip("batch or GPU count not given");

  // Layout.
  cp = num(par, "cp").value_or(1), ep = num(par, "ep").value_or(1);
  vp = num(par, "vp").value_or(0);
  if (vp <= 0)  // not published: the run's schedule where its framework release knows it, else one chunk
    if (const json v = knob_value(defaults, "virtual_pipeline", p); v.is_number()) vp = v.get<double>();
  if (vp <= 0) vp = 1;
  mbs = num(batch, "micro").value_or(0);
  if (mbs <= 0) mbs = knob_value(defaults, "micro_batch_size", p).get<double>();
  if (const auto it = par.find("sp"); it != par.end() && it->is_boolean()) sp = it->get<bool>(), p.sequence_parallel_stated = true;
  else if (*tp > 1) sp = knob_value(defaults, "sequence_parallel", p).get<bool>();
  defaults.derive("sequence_parallel", sp);
  recompute = knob_value(defaults, "recompute", p, &recompute_rule).get<std::string>();
  p.recompute_stated = defaults.stated_by_entry(recompute_rule);
  const json fsdp_value = knob_value(defaults, "fsdp", p);
  fsdp = fsdp_value.is_string() ? fsdp_value.get<std::string>() : "";
  const json& zero_field = sub(par, "zero");
  if (fsdp.empty()) {
    if (zero_field.is_number_integer() && zero_field.get<int>() >= 0 && zero_field.get<int>() <= 3) zero = zero_field.get<int>();  // a stage number
    else if (const json z = knob_value(defaults, "optimizer_sharding", p); z.is_number()) zero = z.get<int>();
  }
  precision = knob_value(defaults, "precision", p).get<std::string>();
  return true;
}

bool EntryConversion::write_model() {
  // Model.
  vocab = static_cast<std::int64_t>(num(model, "vocab").value_or(0));
  if (vocab <= 0) vocab = preset ? preset->vocab_size : knob_value(defaults, "vocab", p).get<std::int64_t>();
  groups = num(model, "kv_heads").value_or(preset ? static_cast<double>(preset->num_query_groups) : *heads);
  if (preset) {
    m = {{"name", p.model}, {"preset", preset_name}, {"vocab_size", vocab}};
    p.assumptions.push_back("hybrid Mamba-Transformer architecture of the model family: preset " + preset_name + " (" +
                            std::to_string(preset->num_layers) + " layers, pattern " + preset->hybrid_override_pattern + ")");
  } else {
    m = {{"name", p.model},
         {"num_layers", *layers},
         {"hidden_size", *hidden},
         {"num_attention_heads", *heads},
         {"num_query_groups", groups},
         {"ffn_hidden_size", *ffn},
         {"vocab_size", vocab}};
  }
  knob_apply(defaults, "mlp", p, m, tr);  // activation, untied output layer
  swiglu = m.value("activation", std::string()) == "swiglu";
  if (const json& moe = sub(model, "moe"); moe.is_object()) {
    m["num_moe_experts"] = num(moe, "experts").value_or(0);
    m["moe_router_topk"] = num(moe, "topk").value_or(0);
    if (auto f = num(moe, "moe_ffn_hidden")) m["moe_ffn_hidden_size"] = *f;
    // Shared experts (Megatron's moe_shared_expert_intermediate_size: their summed width): the count times
    // the width of one, which is the routed experts' width where the entry gives none (DeepSeekMoE's shared
    // experts are routed-sized: HF n_shared_experts x moe_intermediate_size).
    if (const auto shared = num(moe, "shared_experts"); shared && *shared > 0) {
      const auto width = num(moe, "shared_expert_ffn_hidden");
      const auto routed = num(moe, "moe_ffn_hidden");
      if (!width && !routed) return skip("shared experts without a width (model.moe.shared_expert_ffn_hidden or moe_ffn_hidden)");
      if (!width)
        p.assumptions.push_back(fmt("%g", *shared) + " shared expert(s) of the routed experts' width " + fmt("%g", *routed) + " (no shared_expert_ffn_hidden)");
      m["moe_shared_expert_intermediate_size"] = *shared * width.value_or(routed.value_or(0));
    }
    // Leading dense layers (DeepSeek's first_k_dense_replace; Megatron's moe_layer_freq as a list).
    if (const auto dense = num(moe, "dense_layers_first").has_value() ? num(moe, "dense_layers_first") : num(moe, "dense_layers");
        dense && *dense > 0) {
      if (*dense >= *layers) return skip("model.moe dense layers (" + fmt("%g", *dense) + ") not fewer than the layers");
      json pattern = json::array();
      for (std::int64_t l = 0; l < static_cast<std::int64_t>(*layers); ++l) pattern.push_back(l < static_cast<std::int64_t>(*dense) ? 0 : 1);
      m["moe_layer_freq"] = pattern;
    }
  }
  if (!mla.is_null()) m["mla"] = mla;
  else if (mla_of_family) knob_apply(defaults, "mla", p, m, tr);
  if (!mla.is_null() || mla_of_family) kv_channels = 0;  // MLA's head dims are its own
  knob_apply(defaults, "mtp", p, m, tr);  // the recipe's multi-token-prediction modules
  if (kv_channels > 0) m["kv_channels"] = kv_channels;
  knob_apply(defaults, "position_embedding", p, m, tr);  // where the MLP kind does not imply it
  knob_apply(defaults, "attention", p, m, tr);           // the framework release's attention kernel
  if (window) EntryDefaults::apply(*window, m, tr);
  return true;
}

bool EntryConversion::write_cluster() {
  // Cluster.
  int gpn = static_cast<int>(num(cluster, "gpus_per_node").value_or(8));
  if (p.gpus < gpn) gpn = p.gpus;
  if (p.gpus % gpn != 0) return skip(std::to_string(p.gpus) + " GPUs are not whole nodes of " + std::to_string(gpn));
  const int nodes = p.gpus / gpn;
  // A rack-scale NVLink domain (GB200 / GB300 NVL72: "NVL72" in the entry's intra_node) is the nvl72 fabric,
  // with the job placed so its groups stay inside a rack (sim/scenario/scenario.hpp placed_domain_gpus).
  const bool nvl72 = has(str(cluster, "intra_node"), "nvl72");
  cl = {{"gpu", gpu}, {"nodes", nodes}, {"gpus_per_node", gpn}, {"intra_node", nvl72 ? "nvl72" : "nvswitch"}};
  if (nodes > 1) cl["inter_node"] = inter_node(gpu, str(cluster, "inter_node"), p.assumptions, &inter_node_understood);
  return true;
}

// The scenario's training, the scenario, and the point's layout line.
void EntryConversion::write_training() {
  tr.update(json{{"seq_length", *seq},
                 {"global_batch_size", *gbs},
                 {"micro_batch_size", mbs},
                 {"precision", precision},
                 {"tensor_model_parallel_size", *tp},
                 {"pipeline_model_parallel_size", *pp},
                 {"context_parallel_size", cp},
                 {"expert_model_parallel_size", ep},
                 {"sequence_parallel", sp},
                 {"recompute_granularity", recompute}});
  if (recompute_rule) EntryDefaults::apply(*recompute_rule, m, tr);  // recompute_modules of a recipe
  knob_apply(defaults, "expert_tensor_parallel", p, m, tr);
  knob_apply(defaults, "token_dispatcher", p, m, tr);
  knob_apply(defaults, "cuda_graphs", p, m, tr);
  if (vp > 1) {
    tr["virtual_pipeline_model_parallel_size"] = vp;
    tr["pipeline_schedule"] = "interleaved";
  }
  // Layers that do not split evenly over the pipeline: the frameworks count the embedding and the loss
  // as one layer each, so the first and last stages hold one transformer layer fewer; the framework's
  // convention is named.
  const auto layer_count = static_cast<std::int64_t>(*layers);
  const auto chunks = static_cast<std::int64_t>(*pp * vp);
  if (*pp > 1 && layer_count % chunks != 0 && knob_apply(defaults, "pipeline_layout", p, m, tr)) {
    // The model's recipe lays the layers out stage by stage (Megatron-Core's pipeline_model_parallel_layout).
  } else if (*pp > 1 && layer_count % chunks != 0 && (layer_count + 2) % chunks == 0) {
    tr["account_for_embedding_in_pipeline_split"] = true;
    tr["account_for_loss_in_pipeline_split"] = true;
    const DefaultRule* convention = defaults.rule("pipeline_split");
    p.assumptions.push_back(std::to_string(layer_count) + " layers over " + fmt("%g", *pp * vp) + " pipeline chunks: embedding and loss " +
                            "each counted as a layer (" + (convention ? defaults.says(*convention) : std::string("framework convention")) +
                            "), first and last chunk hold " + std::to_string((layer_count + 2) / chunks - 1) + " layers");
  }
  if (!fsdp.empty()) tr["fsdp_sharding_strategy"] = fsdp;
  else tr["zero_stage"] = zero;
  knob_apply(defaults, "overlap_grad_reduce", p, m, tr);
  knob_apply(defaults, "tp_comm_overlap", p, m, tr);
  knob_apply(defaults, "gradient_accumulation", p, m, tr);  // the code's gradient accumulation kernel
  knob_apply(defaults, "pipeline_p2p", p, m, tr);  // the code's pipeline transfers (split over TP, blocking)
  // The framework and release of calibrate/published/frameworks.json the entry ran (training.framework):
  // its defaults fill what the scenario still leaves out (gradient dtypes, buckets, overlaps, where the
  // parameter gather runs), and its refusals apply.
  knob_apply(defaults, "training_framework", p, m, tr);
  if (const auto dp = num(par, "dp"); dp && std::llround(*dp * *tp * *pp * cp) != p.gpus)
    p.assumptions.push_back("published DP " + fmt("%g", *dp) + " does not match GPUs / (TP PP CP); DP derived from the GPU count");
  p.scenario = {{"name", p.id}, {"cluster", cl}, {"model", m}, {"training", tr}};

  p.layout = "TP" + fmt("%g", *tp) + " PP" + fmt("%g", *pp) + " DP" + std::to_string(static_cast<long long>(p.gpus / (*tp * *pp * cp)));
  if (cp > 1) p.layout += " CP" + fmt("%g", cp);
  if (ep > 1) p.layout += " EP" + fmt("%g", ep);
  if (ep > 1 && tr.contains("moe_token_dispatcher") && tr["moe_token_dispatcher"] != "alltoall")
    p.layout += " " + tr["moe_token_dispatcher"].get<std::string>();
  if (tr.contains("cuda_graph_impl")) p.layout += " graphs-" + tr["cuda_graph_impl"].get<std::string>();
  if (tr.contains("expert_tensor_parallel_size") && tr["expert_tensor_parallel_size"] != *tp)
    p.layout += " ETP" + tr["expert_tensor_parallel_size"].dump();
  if (vp > 1) p.layout += " VP" + fmt("%g", vp);
  p.layout += " mbs" + fmt("%g", mbs) + (sp ? " SP" : "") + (fsdp.empty() ? (zero ? " ZeRO-" + std::to_string(zero) : "") : " " + fsdp) +
              " rc-" + recompute + " " + tr.value("precision", precision);  // as the framework mapping left it
}

bool EntryConversion::convert_measured() {
  // Measured figure -> tokens/s per GPU, with the source's convention.
  MegatronFlopsInput mf{*gbs, *seq, *layers, *hidden, *heads, groups, *ffn,
                        std::ceil(static_cast<double>(vocab) / (128.0 * *tp)) * 128.0 * *tp, swiglu, 1};
  mf.kv_channels = kv_channels;
  if (const json& moe = sub(model, "moe"); moe.is_object()) {
    mf.experts_per_token = num(moe, "topk").value_or(1);
    mf.moe_ffn_hidden = num(moe, "moe_ffn_hidden").value_or(0);
  }
  MfuConvention mfu_convention;
  mfu_convention.mosaicml = p.framework == "llm-foundry" || has(notes, "4*d*s^2");
  mfu_convention.n_params = num(model, "params_b").value_or(0) * 1e9;
  if (const models::GpuSpec* spec = models::find_gpu(gpu))  // MosaicML divides FP8 runs by the FP8 peak
    mfu_convention.peak_tflops = mfu_convention.mosaicml && has(precision, "fp8") && spec->peak_tflops_fp8 > 0 ? spec->peak_tflops_fp8
                                                                                                             : spec->peak_tflops_bf16;
  if (!measured_throughput(measured, notes, mf, static_cast<double>(vocab), mfu_convention, p))
    return skip("no measured figure that converts to throughput");
  audit_fields(e, defaults, inter_node_understood, p);
  return true;
}

// One published entry -> scenario. Everything a framework, release or model family does where the entry
// says nothing comes from the defaults table (framework_defaults.hpp); what is here is the entry's own
// numbers, what the simulator cannot express, and the sources' throughput conventions.
TrainingPoint convert_entry(const json& e, const DefaultsTable& table, std::size_t index) {
  EntryConversion c(e, table, index);
  if (c.read_model() && c.read_layout() && c.write_model() && c.write_cluster()) {
    c.write_training();
    c.convert_measured();  // skips the entry when no figure converts
  }
  return std::move(c.p);
}

// The fewest layers per model chunk that Megatron's full recompute with recompute_method "block" must
// checkpoint for `trial` (its training keys updated) to fit, by the memory model alone (each layer
// checkpointed instead of kept only lowers the stage's activations); 0 when none fits short of every layer,
// or the training cannot take the method.
std::int64_t fewest_block_recompute_layers(json trial, const std::string& where) {
  trial["training"].update(json{{"recompute_granularity", "full"}, {"recompute_method", "block"}, {"recompute_num_layers", 1}});
  Scenario s;
  try {
    s = parse_scenario(trial, where);
  } catch (const InputError&) {
    return 0;  // e.g. a schedule or a hybrid model the method is not modelled for
  }
  std::int64_t most = 0;
  for (int st = 0; st < s.training.pp; ++st)
    for (int c = 0; c < s.training.vp; ++c) most = std::max(most, models::layers_in_chunk(s.model, s.training, st, c));
  for (std::int64_t k = 1; k < most; ++k) {
    s.training.recompute_num_layers = k;
    if (models::fits_in_memory(models::peak_memory_per_gpu(s.model, s.training), s.gpu)) return k;
  }
  return 0;
}

// A published run ran, so a layout predicted not to fit means the entry left out a memory saving its
// framework had (or the model is wrong). The lightest saving the entry does not rule out is assumed, in this
// order: sequence parallelism (TP > 1), selective recompute, full recompute of the fewest layers per model
// chunk that fits (Megatron's recompute_method "block"), full recompute of every layer; the first that fits
// is kept and written into the assumptions. When none fits, the stated layout's prediction stands and the
// point is a failure: printed as such and counted in every summary (its error included).
void fit_with_lightest_saving(TrainingPoint& p, const std::string& where, Report& r) {
  const double needs_gib = r.memory.total_bytes() / kGiB;
  json& tr = p.scenario["training"];
  std::vector<std::pair<std::string, json>> steps;  // (what, training keys)
  const bool sp = tr.value("sequence_parallel", false);
  const std::string rc = tr.value("recompute_granularity", std::string("none"));
  if (!p.sequence_parallel_stated && !sp && tr.value("tensor_model_parallel_size", 1.0) > 1)
    steps.push_back({"sequence parallelism", json{{"sequence_parallel", true}}});
  if (!p.recompute_stated && rc == "none") steps.push_back({"selective recompute", json{{"recompute_granularity", "selective"}}});
  if (!p.recompute_stated && rc != "full") {
    json with_sp = p.scenario;  // the block search starts from everything lighter (sequence parallelism)
    if (!steps.empty() && steps.front().first == "sequence parallelism") with_sp["training"].update(steps.front().second);
    const std::int64_t k = fewest_block_recompute_layers(with_sp, where);
    if (k > 0)
      steps.push_back({"full recompute of " + std::to_string(k) + (k == 1 ? " layer" : " layers") + " per model chunk (recompute_method block)",
                       json{{"recompute_granularity", "full"}, {"recompute_method", "block"}, {"recompute_num_layers", k}}});
    steps.push_back({"full recompute", k > 0 ? json{{"recompute_granularity", "full"}, {"recompute_method", "uniform"}, {"recompute_num_layers", 1}}
                                             : json{{"recompute_granularity", "full"}}});
  }
  json trial = p.scenario;
  for (const auto& [what, keys] : steps) {
    trial["training"].update(keys);
    Scenario s;
    try {
      s = parse_scenario(trial, where);
    } catch (const InputError&) {
      continue;  // e.g. selective recompute of a model without attention to recompute
    }
    Report tried = simulate(s).report;
    if (!tried.fits_in_memory) continue;
    p.assumptions.push_back("the stated layout does not fit (" + fmt("%.1f", needs_gib) + " GiB per GPU): " + what +
                            " assumed, the lightest memory saving the entry leaves open that fits (" +
                            fmt("%.1f", tried.memory.total_bytes() / kGiB) + " GiB)");
    p.scenario = trial;
    p.layout += " +" + what;
    r = std::move(tried);
    return;
  }
  p.failed = true;
  p.assumptions.push_back("predicted not to fit (" + fmt("%.1f", needs_gib) + " GiB per GPU) although it ran" +
                          (steps.empty() ? std::string(", and the entry leaves no memory saving open") : ", even with full recompute") +
                          ": a failed point");
}

std::vector<ValidationSummary> summarize(const std::vector<TrainingPoint>& points, bool by_confidence) {
  std::vector<ValidationSummary> out;
  if (by_confidence)
    for (const char* c : {"high", "medium", "low"}) {
      out.emplace_back();
      out.back().key = c;
    }
  auto line = [&](const std::string& key) {
    auto it = std::find_if(out.begin(), out.end(), [&](const ValidationSummary& s) { return s.key == key; });
    if (it != out.end()) return it;
    out.emplace_back();
    out.back().key = key;
    return out.end() - 1;
  };
  // Conflicting points: counted in their confidence line, their statistics in a line of their own.
  std::vector<const TrainingPoint*> conflicting;
  for (const auto& p : points) {
    auto it = line(by_confidence ? p.confidence : p.group);
    ++it->points;
    if (p.skipped) {
      ++it->skipped;
      continue;
    }
    ++it->compared;
    if (by_confidence && p.conflicting) {
      ++it->conflicting;
      conflicting.push_back(&p);
      continue;
    }
    it->failed += p.failed;
    const double a = std::abs(p.error);
    it->mean_abs_error += a;
    it->mean_error += p.error;
    if (a <= 0.15) ++it->within_15pct;
    if (a > it->max_abs_error || it->worst_id.empty()) it->max_abs_error = a, it->worst_id = p.id;
  }
  if (!conflicting.empty()) {
    ValidationSummary c;
    c.key = "conflicting";
    for (const TrainingPoint* p : conflicting) {
      ++c.points, ++c.compared;
      c.failed += p->failed;
      const double a = std::abs(p->error);
      c.mean_abs_error += a;
      c.mean_error += p->error;
      if (a <= 0.15) ++c.within_15pct;
      if (a > c.max_abs_error || c.worst_id.empty()) c.max_abs_error = a, c.worst_id = p->id;
    }
    out.push_back(c);
  }
  for (auto& s : out) {
    const std::size_t n = s.compared - s.conflicting;
    if (n) s.mean_abs_error /= static_cast<double>(n), s.mean_error /= static_cast<double>(n);
  }
  return out;
}

// Marks the points whose stated run (conflict_key_of) another entry states too, or whose converted
// scenario another entry's conversion equals (the simulator's inputs are the same, so it predicts both
// alike: entries that differ only in what no scenario key carries, e.g. a precision left unstated and read
// as the other's, or a token-dropping label the model does not read), with a measured figure more than
// kConflictFactor away from theirs; every point of such a run is marked.
void mark_conflicts(const json& doc, std::vector<TrainingPoint>& points) {
  std::vector<std::string> keys, simulated;
  for (const auto& e : doc) keys.push_back(conflict_key_of(e));
  for (const auto& p : points) {
    json s = p.scenario;
    if (s.is_object()) s.erase("name");
    simulated.push_back(p.skipped || !s.is_object() ? std::string() : s.dump());
  }
  for (std::size_t i = 0; i < points.size(); ++i) {
    std::vector<std::size_t> same;
    bool all_stated = true;
    for (std::size_t j = 0; j < points.size(); ++j) {
      const bool stated = keys[j] == keys[i];
      if ((stated || (!simulated[i].empty() && simulated[j] == simulated[i])) && points[j].measured_tokens_per_s_per_gpu > 0) {
        same.push_back(j);
        all_stated = all_stated && stated;
      }
    }
    if (same.size() < 2 || points[i].measured_tokens_per_s_per_gpu <= 0) continue;
    double lo = 0, hi = 0;
    for (std::size_t j : same) {
      const double m = points[j].measured_tokens_per_s_per_gpu;
      if (lo == 0 || m < lo) lo = m;
      hi = std::max(hi, m);
    }
    if (hi <= kConflictFactor * lo) continue;
    TrainingPoint& p = points[i];
    p.conflicting = true;
    std::string others;
    for (std::size_t j : same)
      if (j != i) others += (others.empty() ? "" : ", ") + points[j].id;
    p.conflict = std::string(all_stated ? "same stated run as " : "same simulated run (one converted scenario) as ") + others +
                 ": measured " + fmt("%.0f", lo) + ".." + fmt("%.0f", hi) + " tokens/s per GPU, " + fmt("%.2f", hi / lo) +
                 "x (more than " + fmt("%.3f", kConflictFactor) + ", beyond which no prediction is within 15% of both)";
    p.assumptions.push_back("conflicting: " + p.conflict);
  }
}

// Every number of an entry the conversion computes with, bounded by the range of the scenario key it
// becomes (sim/scenario/params.json): a 0 or a denormal is refused with its JSON path before it divides
// anything (cluster.gpus_per_node 0 was a SIGFPE). `unset_zero`: the conversion reads 0 as "not published".
struct EntryNumber {
  const char* path;
  const char* param;
  bool unset_zero;
};
constexpr EntryNumber kEntryNumbers[] = {
    {"cluster.gpus_per_node", "cluster.gpus_per_node", false},
    {"model.layers", "model.num_layers", false},
    {"model.hidden", "model.hidden_size", false},
    {"model.heads", "model.num_attention_heads", false},
    {"model.kv_heads", "model.num_query_groups", false},
    {"model.ffn_hidden", "model.ffn_hidden_size", false},
    {"model.vocab", "model.vocab_size", true},
    {"model.head_dim", "model.kv_channels", true},
    {"model.kv_channels", "model.kv_channels", true},
    {"model.moe.experts", "model.num_moe_experts", false},
    {"model.moe.topk", "model.moe_router_topk", false},
    {"model.moe.moe_ffn_hidden", "model.moe_ffn_hidden_size", false},
    {"model.moe.shared_expert_ffn_hidden", "model.moe_shared_expert_intermediate_size", true},
    {"model.mla.q_lora_rank", "model.mla.q_lora_rank", false},
    {"model.mla.kv_lora_rank", "model.mla.kv_lora_rank", false},
    {"model.mla.qk_head_dim", "model.mla.qk_nope_head_dim", false},
    {"model.mla.qk_pos_emb_head_dim", "model.mla.qk_rope_head_dim", false},
    {"model.mla.v_head_dim", "model.mla.v_head_dim", false},
    {"parallel.tp", "training.tensor_model_parallel_size", false},
    {"parallel.pp", "training.pipeline_model_parallel_size", false},
    {"parallel.cp", "training.context_parallel_size", false},
    {"parallel.ep", "training.expert_model_parallel_size", false},
    {"parallel.vp", "training.virtual_pipeline_model_parallel_size", true},
    {"parallel.dp", "training.data_parallel_size", false},
    {"batch.global", "training.global_batch_size", false},
    {"batch.micro", "training.micro_batch_size", true},
    {"batch.seq", "training.seq_length", false},
};

// The problems of entry `e` ("[i].json.path: what"): numbers outside their key's range, and a GPU count
// beyond what a scenario's cluster holds (nodes x gpus_per_node at their maxima).
std::vector<std::string> entry_number_problems(const json& e, const std::string& at) {
  std::vector<std::string> out;
  auto check = [&](const std::string& path, double lo, double hi, bool unset_zero) {
    const json* v = &e;
    for (std::size_t from = 0; v && from <= path.size();) {
      const std::size_t dot = std::min(path.find('.', from), path.size());
      v = v->is_object() && v->contains(path.substr(from, dot - from)) ? &v->at(path.substr(from, dot - from)) : nullptr;
      from = dot + 1;
    }
    if (!v || !v->is_number()) return;  // absent or not a number: the conversion does not read it
    const double d = v->get<double>();
    if (unset_zero && d == 0) return;
    if (!(d >= lo && d <= hi))
      out.push_back(at + "." + path + ": " + v->dump() + " is out of range (expected a number in [" + fmt("%.15g", lo) + ", " + fmt("%.15g", hi) +
                    "], the range of the scenario key it becomes" + (unset_zero ? ", or 0: not published)" : ")"));
  };
  for (const EntryNumber& n : kEntryNumbers) {
    const params::Param* p = params::find(n.param);
    CS_CHECK(p != nullptr);
    check(n.path, p->min, p->max, n.unset_zero);
  }
  check("cluster.count", 1, params::find("cluster.nodes")->max * params::find("cluster.gpus_per_node")->max, true);
  return out;
}

// The measured figure converts to tokens/s per GPU within [kMinTokens, kMaxTokens]: a 0 or a denormal made
// an infinite error. The point's measured_from names the key first ("tokens_per_s / GPUs").
constexpr double kMinTokensPerGpu = 1e-3, kMaxTokensPerGpu = 1e9;
std::optional<std::string> measured_problem(const TrainingPoint& p, const std::string& at) {
  const double t = p.measured_tokens_per_s_per_gpu;
  if (p.skipped || (t >= kMinTokensPerGpu && t <= kMaxTokensPerGpu)) return std::nullopt;
  return at + ".measured." + p.measured_from.substr(0, p.measured_from.find(' ')) + ": converts to " + fmt("%g", t) +
         " tokens/s per GPU (expected a measured figure giving " + fmt("%g", kMinTokensPerGpu) + " to " + fmt("%g", kMaxTokensPerGpu) +
         " tokens/s per GPU)";
}

}  // namespace

double sc21_flops_per_step(double B, double s, double l, double h, double V) {
  return 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
}

double megatron_model_flops_per_step(const MegatronFlopsInput& in) {
  // Megatron's query_projection_size / hidden_size: kv_channels x heads / hidden (1 when head_dim is
  // hidden / heads).
  const double q_ratio = in.kv_channels > 0 ? in.kv_channels * in.heads / in.hidden : 1.0;
  const double gated = in.swiglu ? 1.5 : 1.0;
  const double ffn = in.moe_ffn_hidden > 0 ? in.moe_ffn_hidden : in.ffn_hidden;  // every layer MoE
  return 12.0 * in.batch * in.seq * in.layers * in.hidden * in.hidden *
         ((1.0 + in.query_groups / in.heads + in.seq / in.hidden) * q_ratio +
          ffn / in.hidden * in.experts_per_token * gated + in.vocab / (2.0 * in.layers * in.hidden));
}

std::string conflict_key_of(const json& entry) {
  // Nulls dropped (a field given as null says nothing), objects compared whole: nlohmann's object is
  // ordered by key, so equal content gives equal text.
  auto clean = [](auto&& self, const json& v) -> json {
    if (!v.is_object()) return v;
    json o = json::object();
    for (auto it = v.begin(); it != v.end(); ++it)
      if (!it->is_null()) o[it.key()] = self(self, *it);
    return o;
  };
  json k = json::object();
  for (const char* f : {"model", "cluster", "parallel", "batch", "precision"})
    if (entry.is_object() && entry.contains(f)) k[f] = clean(clean, entry[f]);
  return k.dump();
}

bool is_published_training(const json& doc) {
  if (!doc.is_array() || doc.empty()) return false;
  return std::all_of(doc.begin(), doc.end(), [](const json& e) { return e.is_object() && str(e, "kind") == "training"; });
}

std::vector<TrainingPoint> convert_published_training(const json& doc, const std::string& file) {
  return convert_published_training(doc, file, framework_defaults());
}

std::vector<TrainingPoint> convert_published_training(const json& doc, const std::string& file, const DefaultsTable& table) {
  if (!is_published_training(doc))
    throw InputError(file + ": (top level): expected an array of objects with \"kind\": \"training\" (published-train.json format)");
  std::vector<TrainingPoint> out;
  std::vector<std::string> problems;
  for (std::size_t i = 0; i < doc.size(); ++i) {
    const std::string at = "[" + std::to_string(i) + "]";
    const auto bad = entry_number_problems(doc[i], at);
    for (const auto& b : bad) problems.push_back(file + ": " + b);
    if (!bad.empty()) continue;
    out.push_back(convert_entry(doc[i], table, i));
    if (const auto m = measured_problem(out.back(), at)) problems.push_back(file + ": " + *m);
  }
  if (!problems.empty()) throw InputError(std::move(problems));
  mark_conflicts(doc, out);
  return out;
}

TrainingValidation validate_published_training(const json& doc, const std::string& file, int threads) {
  TrainingValidation v;
  v.points = convert_published_training(doc, file);
  const std::size_t n = v.points.size();
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  std::exception_ptr failure;
  auto work = [&] {
    for (std::size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) {
      TrainingPoint& p = v.points[i];
      if (p.skipped) continue;
      try {
        const std::string where = file + "[" + p.id + "]";
        Scenario s;
        try {
          s = parse_scenario(p.scenario, where);
        } catch (const InputError& e) {
          p.skipped = true;
          p.skip_reason = "not expressible yet: " + join_messages(e.messages(), where + ": ");
          if (!p.batch_note.empty()) p.skip_reason += " (" + p.batch_note + ")";
          continue;
        }
        Report r = simulate(s).report;
        if (!r.fits_in_memory) fit_with_lightest_saving(p, where, r);
        p.predicted_step_time_s = r.step_time_s;
        p.predicted_tokens_per_s_per_gpu = r.tokens_per_s / r.num_gpus;
        p.predicted_mfu = r.mfu;
        p.memory_gib = r.memory.total_bytes() / kGiB;
        p.fits_in_memory = r.fits_in_memory;
        p.error = p.predicted_tokens_per_s_per_gpu / p.measured_tokens_per_s_per_gpu - 1.0;
        p.features = band_features(r);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(mutex);
        if (!failure) failure = std::current_exception();
        return;
      }
    }
  };
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t workers = std::min<std::size_t>(threads > 0 ? static_cast<std::size_t>(threads) : hw, std::max<std::size_t>(n, 1));
  {
    std::vector<std::jthread> pool;
    for (std::size_t w = 1; w < workers; ++w) pool.emplace_back(work);
    work();
  }
  if (failure) std::rethrow_exception(failure);
  v.by_confidence = summarize(v.points, true);
  v.by_group = summarize(v.points, false);
  return v;
}

std::string to_text(const TrainingValidation& v) {
  std::string o;
  std::size_t compared = 0;
  for (const auto& p : v.points) compared += !p.skipped;
  o += "published training runs: " + std::to_string(v.points.size()) + " entries, " + std::to_string(compared) + " compared, " +
       std::to_string(v.points.size() - compared) + " skipped\n";
  o += "error = predicted / measured - 1 on tokens/s per GPU (negative: the simulator is slower than the real run)\n\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-52s %-6s %-10s %5s  %-44s %10s %10s %8s %6s %s\n", "id", "conf", "gpu", "gpus", "layout",
                "meas t/s", "pred t/s", "error", "MFU", "memory");
  o += line;
  for (const auto& p : v.points) {
    if (p.skipped) continue;
    std::snprintf(line, sizeof line, "%-52s %-6s %-10s %5d  %-44s %10.0f %10.0f %+7.1f%% %5.1f%% %.0f GiB%s\n", p.id.c_str(),
                  p.confidence.c_str(), p.scenario["cluster"]["gpu"].get<std::string>().c_str(), p.gpus, p.layout.c_str(),
                  p.measured_tokens_per_s_per_gpu, p.predicted_tokens_per_s_per_gpu, 100 * p.error, 100 * p.predicted_mfu,
                  p.memory_gib, p.failed ? " FAILED: predicted not to fit, although it ran" : p.conflicting ? " CONFLICTING (see below)" : "");
    o += line;
  }
  o += "\nskipped:\n";
  for (const auto& p : v.points)
    if (p.skipped) o += "  " + p.id + " (" + p.confidence + "): " + p.skip_reason + "\n";
  bool any_conflict = false;
  for (const auto& p : v.points)
    if (p.conflicting && !p.skipped) {
      if (!any_conflict) o += "\nconflicting (the file states the same run, or two runs the converter turns into one scenario, with throughputs no single prediction can match; left out of their confidence line):\n";
      any_conflict = true;
      o += "  " + p.id + " (" + p.confidence + "): " + p.conflict + "\n";
    }
  auto table = [&](const std::vector<ValidationSummary>& rows, const char* title) {
    o += std::string("\n") + title + "\n";
    for (const auto& s : rows) {
      if (s.points == 0) continue;
      std::snprintf(line, sizeof line, "  %-40s %3zu points, %3zu compared, %3zu skipped", s.key.c_str(), s.points, s.compared, s.skipped);
      o += line;
      if (s.conflicting) {
        std::snprintf(line, sizeof line, " (%zu conflicting, in their own line)", s.conflicting);
        o += line;
      }
      if (s.compared > s.conflicting) {
        std::snprintf(line, sizeof line, ": mean |error| %.1f%%, mean error %+.1f%%, max |error| %.1f%% (%s), within 15%%: %zu/%zu",
                      100 * s.mean_abs_error, 100 * s.mean_error, 100 * s.max_abs_error, s.worst_id.c_str(), s.within_15pct,
                      s.compared - s.conflicting);
        o += line;
        if (s.failed) o += ", " + std::to_string(s.failed) + " FAILED (predicted not to fit)";
      }
      o += "\n";
    }
  };
  table(v.by_confidence, "by confidence:");
  table(v.by_group, "by group:");
  return o;
}

json to_json(const TrainingValidation& v) {
  json points = json::array();
  for (const auto& p : v.points) {
    json j = {{"id", p.id}, {"group", p.group}, {"confidence", p.confidence}, {"model", p.model}, {"gpu", p.gpu},
              {"gpus", p.gpus}, {"layout", p.layout}, {"measured_from", p.measured_from},
              {"measured_tokens_per_s_per_gpu", p.measured_tokens_per_s_per_gpu}, {"assumptions", p.assumptions},
              {"skipped", p.skipped}};
    if (p.skipped) {
      j["skip_reason"] = p.skip_reason;
    } else {
      j["scenario"] = p.scenario;  // `clustersim run` on this document reproduces the prediction
      j["predicted_tokens_per_s_per_gpu"] = p.predicted_tokens_per_s_per_gpu;
      j["predicted_step_time_s"] = p.predicted_step_time_s;
      j["predicted_mfu"] = p.predicted_mfu;
      j["memory_gib"] = p.memory_gib;
      j["fits_in_memory"] = p.fits_in_memory;
      j["failed"] = p.failed;
      j["error"] = p.error;
      j["conflicting"] = p.conflicting;
      if (p.conflicting) j["conflict"] = p.conflict;
    }
    points.push_back(j);
  }
  auto summaries = [](const std::vector<ValidationSummary>& rows) {
    json a = json::array();
    for (const auto& s : rows)
      a.push_back({{"key", s.key}, {"points", s.points}, {"compared", s.compared}, {"skipped", s.skipped},
                   {"within_15pct", s.within_15pct}, {"failed", s.failed}, {"conflicting", s.conflicting}, {"mean_abs_error", s.mean_abs_error}, {"mean_error", s.mean_error},
                   {"max_abs_error", s.max_abs_error}, {"worst_id", s.worst_id}});
    return a;
  };
  return {{"kind", "published-training"}, {"points", points}, {"by_confidence", summaries(v.by_confidence)},
          {"by_group", summaries(v.by_group)},
          {"residual_table", to_json(residual_table_of(v, "clustersim validate --json on the published training runs (scripts/regenerate_residuals.sh)"))}};
}

std::vector<GroupFidelity> group_fidelity(const TrainingValidation& v, const std::string& file) {
  const std::string name = file.substr(file.find_last_of('/') == std::string::npos ? 0 : file.find_last_of('/') + 1);
  std::vector<GroupFidelity> rows;
  for (const auto& s : v.by_group) {
    GroupFidelity g;
    g.file = name;
    g.group = s.key;
    g.points = s.points, g.compared = s.compared, g.skipped = s.skipped, g.failed = s.failed;
    g.mape = s.mean_abs_error, g.bias = s.mean_error, g.worst_id = s.worst_id;
    for (const auto& p : v.points) {
      if (p.group != s.key) continue;
      if (!p.skipped && p.id == s.worst_id) g.worst_error = p.error;
      if (!p.skipped) continue;
      auto it = std::find_if(g.skip_reasons.begin(), g.skip_reasons.end(), [&](const auto& r) { return r.first == p.skip_reason; });
      if (it == g.skip_reasons.end()) g.skip_reasons.emplace_back(p.skip_reason, 1);
      else ++it->second;
    }
    rows.push_back(std::move(g));
  }
  return rows;
}

namespace {

std::string skipped_text(const GroupFidelity& g) {
  std::string o;
  for (const auto& [reason, count] : g.skip_reasons) o += (o.empty() ? "" : "; ") + std::to_string(count) + " x " + reason;
  return o;
}

}  // namespace

std::string group_table_text(const std::vector<GroupFidelity>& rows) {
  std::string o = "error = predicted / measured - 1 on tokens/s per GPU; MAPE = mean |error|, bias = mean error\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-26s %-44s %6s %8s %8s %8s  %s\n", "file", "group", "points", "compared", "MAPE", "bias",
                "worst");
  o += line;
  for (const auto& g : rows) {
    if (g.compared)
      std::snprintf(line, sizeof line, "%-26s %-44s %6zu %8zu %7.1f%% %+7.1f%%  %s %+.1f%%\n", g.file.c_str(), g.group.c_str(),
                    g.points, g.compared, 100 * g.mape, 100 * g.bias, g.worst_id.c_str(), 100 * g.worst_error);
    else
      std::snprintf(line, sizeof line, "%-26s %-44s %6zu %8zu %8s %8s  -\n", g.file.c_str(), g.group.c_str(), g.points, g.compared, "-",
                    "-");
    o += line;
    if (g.failed) o += "    " + std::to_string(g.failed) + " FAILED (predicted not to fit, although they ran)\n";
    if (g.skipped) o += "    " + std::to_string(g.skipped) + " skipped: " + skipped_text(g) + "\n";
  }
  return o;
}

std::string group_table_markdown(const std::vector<GroupFidelity>& rows) {
  auto cell = [](std::string t) {
    for (std::size_t i = 0; (i = t.find('|', i)) != std::string::npos; i += 2) t.replace(i, 1, "\\|");
    return t;
  };
  std::string o = "| file | group | points | compared | MAPE | bias | worst | skipped |\n|---|---|---:|---:|---:|---:|---|---|\n";
  for (const auto& g : rows) {
    o += "| " + g.file + " | " + g.group + " | " + std::to_string(g.points) + " | " + std::to_string(g.compared) + " | ";
    o += g.compared ? fmt("%.1f%%", 100 * g.mape) + " | " + fmt("%+.1f%%", 100 * g.bias) + " | " + g.worst_id + " " +
                          fmt("%+.1f%%", 100 * g.worst_error)
                    : std::string("- | - | -");
    if (g.failed) o += ", " + std::to_string(g.failed) + " FAILED (not fitting)";
    o += " | " + cell(skipped_text(g)) + " |\n";
  }
  return o;
}

json to_json(const std::vector<GroupFidelity>& rows) {
  json a = json::array();
  for (const auto& g : rows) {
    json reasons = json::array();
    for (const auto& [reason, count] : g.skip_reasons) reasons.push_back({{"reason", reason}, {"count", count}});
    a.push_back({{"file", g.file}, {"group", g.group}, {"points", g.points}, {"compared", g.compared}, {"skipped", g.skipped},
                 {"failed", g.failed}, {"mape", g.mape}, {"bias", g.bias}, {"worst_id", g.worst_id},
                 {"worst_error", g.worst_error}, {"skip_reasons", reasons}});
  }
  return a;
}

namespace {

// One group's baseline: {"points": n, "mape": percent, "reason": "..."}.
struct GroupBaseline {
  std::size_t points = 0;
  double mape = 0;  // fraction
};

GroupBaseline group_baseline(const json& g, const std::string& where) {
  const json* points = g.is_object() && g.contains("points") ? &g["points"] : nullptr;
  const json* mape = g.is_object() && g.contains("mape") ? &g["mape"] : nullptr;
  const json* reason = g.is_object() && g.contains("reason") ? &g["reason"] : nullptr;
  if (!points || !points->is_number_unsigned())
    throw InputError(where + ".points: expected a whole number of compared points");
  if (!mape || !mape->is_number() || !std::isfinite(mape->get<double>()) || mape->get<double>() < 0)
    throw InputError(where + ".mape: expected the group's MAPE in percent (a number >= 0)");
  if (!reason || !reason->is_string() || reason->get<std::string>().empty())
    throw InputError(where + ".reason: expected why the baseline is what it is (a non-empty string)");
  return {points->get<std::size_t>(), mape->get<double>() / 100};
}

}  // namespace

std::vector<std::string> fidelity_regressions(const json& baseline, const std::string& baseline_file,
                                              const std::vector<GroupFidelity>& now) {
  const json* files = baseline.is_object() && baseline.contains("files") ? &baseline["files"] : nullptr;
  if (!files || !files->is_object())
    throw InputError(baseline_file + ": files: expected an object of files, each an object of groups");
  std::vector<std::string> out;
  for (auto f = files->begin(); f != files->end(); ++f) {
    if (!f->is_object()) throw InputError(baseline_file + ": files[\"" + f.key() + "\"]: expected an object of groups");
    const bool validated = std::any_of(now.begin(), now.end(), [&](const GroupFidelity& n) { return n.file == f.key(); });
    for (auto g = f->begin(); g != f->end(); ++g) {
      const GroupBaseline b = group_baseline(*g, baseline_file + ": files[\"" + f.key() + "\"][\"" + g.key() + "\"]");
      const auto it = std::find_if(now.begin(), now.end(), [&](const GroupFidelity& n) { return n.file == f.key() && n.group == g.key(); });
      const std::string name = f.key() + " " + g.key();
      if (!validated) continue;  // a file not given this time: only its groups' baselines were checked
      if (it == now.end()) {
        if (b.points >= kGuardMinPoints) out.push_back(name + ": missing (baseline " + std::to_string(b.points) + " points)");
        continue;
      }
      if (b.points < kGuardMinPoints && it->compared < kGuardMinPoints) continue;
      if (it->compared < b.points)
        out.push_back(name + ": points compared old " + std::to_string(b.points) + ", new " + std::to_string(it->compared) +
                      " (lost points; MAPE old " + fmt("%.1f%%", 100 * b.mape) + ", new " + fmt("%.1f%%", 100 * it->mape) + ")");
      else if (it->mape > b.mape + kGuardTolerance + 1e-9)
        out.push_back(name + ": MAPE old " + fmt("%.1f%%", 100 * b.mape) + ", new " + fmt("%.1f%%", 100 * it->mape) + " (more than " +
                      fmt("%g", 100 * kGuardTolerance) + " point worse than the baseline)");
    }
  }
  for (const auto& n : now) {
    const json* f = files->contains(n.file) ? &(*files)[n.file] : nullptr;
    if (n.compared >= kGuardMinPoints && (!f || !f->contains(n.group)))
      out.push_back(n.file + " " + n.group + ": " + std::to_string(n.compared) + " points compared, MAPE " + fmt("%.1f%%", 100 * n.mape) +
                    ", not in the baseline (add it with a reason)");
  }
  return out;
}

ResidualTable residual_table_of(const TrainingValidation& v, const std::string& source) {
  ResidualTable t;
  t.source = source;
  for (const auto& p : v.points)
    if (!p.skipped) t.rows.push_back({p.id, p.confidence, p.features, p.error});
  return t;
}

}  // namespace cs::sim
