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

#include "sim/scenario/input_error.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"

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

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// The catalog name of a GPU as the sources spell it.
std::string catalog_gpu(const std::string& published) {
  if (published.rfind("A100-SXM4-80GB", 0) == 0) return "A100-80GB";
  if (published.rfind("A100-SXM4-40GB", 0) == 0) return "A100-40GB";
  if (published.rfind("H100-SXM5-80GB", 0) == 0) return "H100-SXM";
  return {};
}

// The inter-node network the source describes: (link name or custom link, NICs per node).
json inter_node(const std::string& gpu, const std::string& description, std::vector<std::string>& assumptions) {
  if (has(description, "omni-path"))
    return {{"fabric", "fat-tree"},
            {"link", {{"name", "omni-path-100"}, {"line_rate_gbps", 100}, {"efficiency", 0.9}, {"latency_us", 2}}},
            {"nics_per_node", 4}};
  if (has(description, "roce") && has(description, "1600"))
    return {{"fabric", "fat-tree"}, {"link", "roce-200g"}, {"nics_per_node", 8}};
  if (has(description, "hdr")) return {{"fabric", "fat-tree"}, {"link", "ib-hdr200"}, {"nics_per_node", 8}};
  if (has(description, "ndr")) return {{"fabric", "fat-tree"}, {"link", "ib-ndr400"}, {"nics_per_node", 8}};
  // Not stated: what the GPU's reference system has (DGX A100: 8 x HDR200; DGX H100: 8 x NDR400).
  const bool h100 = gpu == "H100-SXM";
  assumptions.push_back(std::string("network not stated: 8 x ") + (h100 ? "NDR400" : "HDR200") + " per node (DGX reference)");
  return {{"fabric", "fat-tree"}, {"link", h100 ? "ib-ndr400" : "ib-hdr200"}, {"nics_per_node", 8}};
}

std::string join_messages(const std::vector<std::string>& lines, const std::string& prefix) {
  std::string out;
  for (const auto& l : lines) {
    if (!out.empty()) out += "; ";
    out += l.rfind(prefix, 0) == 0 ? l.substr(prefix.size()) : l;
  }
  return out;
}

TrainingPoint convert_entry(const json& e, const std::string& file, std::size_t index) {
  TrainingPoint p;
  p.id = str(e, "id");
  if (p.id.empty()) p.id = "#" + std::to_string(index);
  p.group = str(e, "group");
  p.confidence = str(e, "confidence");
  const json& model = sub(e, "model");
  const json& cluster = sub(e, "cluster");
  const json& par = sub(e, "parallel");
  const json& batch = sub(e, "batch");
  const json& measured = sub(e, "measured");
  p.model = str(model, "name");
  p.gpu = str(cluster, "gpu");
  p.gpus = static_cast<int>(num(cluster, "count").value_or(0));
  const std::string framework = str(e, "framework");
  const std::string notes = str(e, "notes");
  auto skip = [&](const std::string& reason) {
    p.skipped = true;
    p.skip_reason = reason;
    return p;
  };

  // What the simulator cannot express.
  const std::string arch = str(model, "arch");
  if (has(arch, "mamba")) return skip("hybrid Mamba-Transformer layers are not modelled");
  if (has(arch, "mla")) return skip("multi-head latent attention (MLA) and shared experts are not modelled");
  const auto layers = num(model, "layers"), hidden = num(model, "hidden"), heads = num(model, "heads");
  auto ffn = num(model, "ffn_hidden");
  const json& moe_dims = sub(model, "moe");
  if (!ffn && moe_dims.is_object() && num(moe_dims, "moe_ffn_hidden")) {
    // Every layer is MoE (Qwen3 MoE: decoder_sparse_step 1, no mlp_only_layers): the dense FFN width is
    // never used; the scenario needs one, so it takes the expert width.
    ffn = num(moe_dims, "moe_ffn_hidden");
    p.assumptions.push_back("dense ffn_hidden not given: every layer is MoE, ffn_hidden_size = moe_ffn_hidden_size (unused)");
  }
  if (!layers || !hidden || !heads || !ffn) return skip("model dimensions not given in the file");
  // Head dim (Megatron's kv_channels) where it is not hidden / heads: from the entry, else the model
  // family's published config (the file gives none for these).
  double kv_channels = num(model, "head_dim").value_or(num(model, "kv_channels").value_or(0));
  if (kv_channels <= 0 && has(p.model, "qwen3")) {
    kv_channels = 128;
    p.assumptions.push_back("head_dim not in the file: 128 (Qwen3 config.json head_dim), kv_channels 128");
  } else if (kv_channels <= 0 && has(p.model, "gpt-oss")) {
    kv_channels = 64;
    p.assumptions.push_back("head_dim not in the file: 64 (gpt-oss config.json head_dim), kv_channels 64");
  }
  if (kv_channels > 0 && std::fmod(*hidden, *heads) == 0 && kv_channels == *hidden / *heads) kv_channels = 0;  // the default
  // gpt-oss: sliding window of 128 tokens on every other layer, starting with the first (config.json
  // layer_types; Megatron-Bridge's GPT-OSS provider: window_size (128, 0), window_attn_skip_freq 2).
  const bool gpt_oss_window = has(p.model, "gpt-oss");
  if (gpt_oss_window)
    p.assumptions.push_back("sliding window 128 on every other layer (gpt-oss config; Megatron window_size [128, 0], "
                            "window_attn_skip_freq 2); attention sinks ignored");
  const auto tp = num(par, "tp"), pp = num(par, "pp");
  if (!tp || !pp) return skip("layout (TP/PP) not published");
  const std::string gpu = catalog_gpu(p.gpu);
  if (gpu.empty()) return skip("GPU \"" + p.gpu + "\" has no catalog equivalent");
  const auto gbs = num(batch, "global"), seq = num(batch, "seq");
  if (has(notes, "global batch") && has(notes, "derived"))
    p.batch_note = "the global batch is not published as such; the entry's notes: " + notes;
  if (!gbs || !seq || p.gpus <= 0) return skip("batch or GPU count not given");

  // Layout.
  const double cp = num(par, "cp").value_or(1), ep = num(par, "ep").value_or(1), vp = num(par, "vp").value_or(1);
  double mbs = num(batch, "micro").value_or(0);
  if (mbs <= 0) {
    mbs = 1;
    p.assumptions.push_back("micro-batch size not published: 1");
  }
  const bool modern = has(framework, "nemo") || has(framework, "megatron-core") || has(framework, "megatron-bridge");
  bool sp = false;
  if (const auto it = par.find("sp"); it != par.end() && it->is_boolean()) {
    sp = it->get<bool>();
  } else if (*tp > 1) {
    sp = modern;
    p.assumptions.push_back(std::string("sequence parallelism not stated: ") + (sp ? "on (Megatron-Core default with TP > 1)" : "off (predates it)"));
  }
  const std::string rc_text = str(par, "recompute");
  std::string recompute = "none";
  json recompute_modules;  // null: Megatron's default (core_attn) where selective
  if (has(rc_text, "full")) recompute = "full";
  else if (has(rc_text, "selective")) recompute = "selective";
  else if (has(rc_text, "per recipe") && has(p.model, "gpt-oss") && has(framework, "megatron-bridge")) {
    // Megatron-Bridge's gpt-oss pretraining recipes (gpt_oss_workload_base_configs.py, the H100 BF16
    // configs) set recompute_modules = [layernorm, moe_act] under selective granularity.
    recompute = "selective";
    recompute_modules = json::array({"layernorm", "moe_act"});
    p.assumptions.push_back("recompute per Megatron-Bridge's gpt-oss recipe: selective, recompute_modules [layernorm, moe_act]");
  } else if (!has(rc_text, "none")) p.assumptions.push_back("recompute \"" + rc_text + "\": none");
  int zero = 0;
  std::string fsdp;
  const std::string zero_text = str(par, "zero"), fsdp_text = str(par, "fsdp");
  if (has(zero_text, "zero-1")) zero = 1;
  else if (has(zero_text, "zero-2")) zero = 2;
  else if (has(zero_text, "zero-3")) zero = 3;
  if (has(fsdp_text, "shard_grad_op")) fsdp = "SHARD_GRAD_OP";
  else if (has(fsdp_text, "full_shard") || has(fsdp_text, "fully sharded")) fsdp = "FULL_SHARD";
  else if (const auto f = num(par, "fsdp"); f && *f > 0) {
    fsdp = "FULL_SHARD";
    p.assumptions.push_back("fsdp " + fsdp_text + ": FULL_SHARD");
  }
  if (zero == 0 && fsdp.empty() && modern) {
    zero = 1;
    p.assumptions.push_back("distributed optimizer (ZeRO-1), the Megatron-Core recipe default");
  }
  // Megatron-LM before Megatron-Core reduced gradients after the backward pass, not overlapped with it.
  const bool old_megatron = !modern && has(framework, "megatron");
  std::string precision = "bf16";
  if (has(str(e, "precision"), "fp8")) precision = "fp8";

  // Model.
  std::int64_t vocab = static_cast<std::int64_t>(num(model, "vocab").value_or(0));
  if (vocab <= 0) {
    vocab = has(p.model, "nemotron") ? 256000 : 50257;
    p.assumptions.push_back("vocabulary not given: " + std::to_string(vocab) + (vocab == 256000 ? " (Nemotron tokenizer)" : " (GPT-2 BPE)"));
  }
  const bool swiglu = has(p.model, "llama") || has(p.model, "qwen3") || has(p.model, "gpt-oss");
  const double groups = num(model, "kv_heads").value_or(*heads);
  json m = {{"name", p.model},
            {"num_layers", *layers},
            {"hidden_size", *hidden},
            {"num_attention_heads", *heads},
            {"num_query_groups", groups},
            {"ffn_hidden_size", *ffn},
            {"vocab_size", vocab},
            {"activation", swiglu ? "swiglu" : "gelu"},
            {"untie_embeddings_and_output_weights", swiglu}};
  if (const json& moe = sub(model, "moe"); moe.is_object()) {
    m["num_moe_experts"] = num(moe, "experts").value_or(0);
    m["moe_router_topk"] = num(moe, "topk").value_or(0);
    if (auto f = num(moe, "moe_ffn_hidden")) m["moe_ffn_hidden_size"] = *f;
  }
  if (kv_channels > 0) m["kv_channels"] = kv_channels;
  // Transformer Engine 1.x (NeMo 24.03 and earlier containers) ran attention, and its context-parallel
  // ring, through flash-attn 2's kernels (TE's CP path calls flash-attn's _flash_attn_forward /
  // _backward, NVIDIA/TransformerEngine PR #572, Jan 2024); later containers take cuDNN's Hopper-native
  // fused attention, which is what the calibration profile measured.
  // Position encoding where the MLP kind does not imply it: MPT uses ALiBi (a bias inside the attention
  // kernel, no kernel of its own), Nemotron rotary embeddings with its non-gated MLP.
  if (has(str(model, "note"), "alibi")) m["position_embedding_type"] = "none";
  else if (has(p.model, "nemotron")) m["position_embedding_type"] = "rope";
  if (has(framework, "nemo 24.03") || has(framework, "nemo 24.01") || has(framework, "nemo 23.")) {
    m["attention_backend"] = "flash";
    p.assumptions.push_back("attention through flash-attn 2 (Transformer Engine 1.x of the " + framework + " container)");
  }
  // llm-foundry's 2023 benchmarks (MPT, Composer, torch 1.13 / 2.0) pinned flash-attn==1.0.3.post0: its
  // attn_impl "flash" is FlashAttention v1 (flash-attn 2 came with llm-foundry 0.3, Aug 2023).
  if (has(framework, "llm-foundry") && has(str(model, "note"), "attn_impl flash")) {
    m["attention_backend"] = "flash1";
    p.assumptions.push_back("attention through flash-attn 1.0.3 (llm-foundry's 2023 pin)");
  }
  // Megatron-LM before 2023 (SC'21, Korthikanti et al.) and the Megatron-DeepSpeed forks (BLOOM,
  // MT-NLG) had no flash kernel: CoreAttention ran baddbmm, FusedScaleMaskSoftmax, the attention dropout
  // and bmm (megatron/model/transformer.py; FlashAttention arrived with NVIDIA/Megatron-LM#267, merged
  // January 2023, and never reached bigscience's fork, where #357 is still open). Their dropout is
  // Megatron-LM's default, --attention-dropout 0.1 and --hidden-dropout 0.1 (megatron/arguments.py;
  // BLOOM's tr11 README: "the default Megatron-LM dropout settings are inherited").
  if (old_megatron) {
    m["attention_backend"] = "unfused";
    m["attention_dropout"] = 0.1;
    m["hidden_dropout"] = 0.1;
    p.assumptions.push_back("unfused attention (baddbmm, fused softmax, dropout, bmm) and dropout 0.1: " + framework +
                            " predates FlashAttention in Megatron; Megatron-LM's default dropout");
  }
  if (gpt_oss_window) {
    m["window_size"] = json::array({128, 0});
    m["window_attn_skip_freq"] = 2;
  }

  // Cluster.
  int gpn = static_cast<int>(num(cluster, "gpus_per_node").value_or(8));
  if (p.gpus < gpn) gpn = p.gpus;
  if (p.gpus % gpn != 0) return skip(std::to_string(p.gpus) + " GPUs are not whole nodes of " + std::to_string(gpn));
  const int nodes = p.gpus / gpn;
  json cl = {{"gpu", gpu}, {"nodes", nodes}, {"gpus_per_node", gpn}, {"intra_node", "nvswitch"}};
  if (nodes > 1) cl["inter_node"] = inter_node(gpu, str(cluster, "inter_node"), p.assumptions);

  json tr = {{"seq_length", *seq},
             {"global_batch_size", *gbs},
             {"micro_batch_size", mbs},
             {"precision", precision},
             {"tensor_model_parallel_size", *tp},
             {"pipeline_model_parallel_size", *pp},
             {"context_parallel_size", cp},
             {"expert_model_parallel_size", ep},
             {"sequence_parallel", sp},
             {"recompute_granularity", recompute}};
  if (!recompute_modules.is_null()) tr["recompute_modules"] = recompute_modules;
  // Megatron-Bridge's Qwen3 MoE presets fold the experts without tensor parallelism
  // (scripts/performance/configs/qwen/qwen3_workload_base_configs.py: expert_tensor_parallel_size=1 in
  // BASE_QWEN3_235B_A22B_CONFIG and BASE_QWEN3_30B_A3B_CONFIG).
  if (has(p.model, "qwen3") && moe_dims.is_object() && has(framework, "megatron-bridge")) {
    tr["expert_tensor_parallel_size"] = 1;
    if (*tp > 1)
      p.assumptions.push_back("expert_tensor_parallel_size 1 (Megatron-Bridge's Qwen3 MoE presets): EP " + fmt("%g", ep) +
                              " folds over TP x DP; the presets' moe_a2a_overlap (EP all-to-all hidden behind another "
                              "micro-batch's compute) is not modelled");
  }
  if (vp > 1) {
    tr["virtual_pipeline_model_parallel_size"] = vp;
    tr["pipeline_schedule"] = "interleaved";
  }
  // Layers that do not split evenly over the pipeline: the frameworks count the embedding and the loss
  // as one layer each (Megatron-Bridge's account_for_embedding / loss_in_pipeline_split, set by its
  // Llama 3.1 405B and Qwen3 recipes; Megatron-DeepSpeed's --pp-partition-method
  // type:transformer|embedding, BLOOM's tr11 script, which counts the input and the tied output
  // embedding), so the first and last stages hold one transformer layer fewer.
  const auto layer_count = static_cast<std::int64_t>(*layers);
  const auto chunks = static_cast<std::int64_t>(*pp * vp);
  if (*pp > 1 && layer_count % chunks != 0 && (layer_count + 2) % chunks == 0) {
    tr["account_for_embedding_in_pipeline_split"] = true;
    tr["account_for_loss_in_pipeline_split"] = true;
    p.assumptions.push_back(std::to_string(layer_count) + " layers over " + fmt("%g", *pp * vp) + " pipeline chunks: embedding and loss " +
                            "each counted as a layer (" +
                            (modern ? "Megatron-Bridge account_for_embedding/loss_in_pipeline_split, recipe default"
                                    : "Megatron-DeepSpeed pp-partition-method type:transformer|embedding") +
                            "), first and last chunk hold " + std::to_string((layer_count + 2) / chunks - 1) + " layers");
  }
  if (!fsdp.empty()) tr["fsdp_sharding_strategy"] = fsdp;
  else tr["zero_stage"] = zero;
  if (old_megatron || has(notes, "no overlap of grad")) {
    tr["overlap_grad_reduce"] = false;
    p.assumptions.push_back("gradient all-reduce after the backward pass (Megatron-LM before Megatron-Core)");
  }
  // NeMo's and Megatron-Bridge's performance recipes turn on Transformer Engine's userbuffers TP overlap
  // (tp_comm_overlap) whenever TP > 1 with sequence parallelism; Megatron-LM's default is off.
  if (modern && sp && *tp > 1) {
    tr["tp_comm_overlap"] = true;
    p.assumptions.push_back("tp_comm_overlap on (NeMo / Megatron-Bridge performance recipes with TP > 1 and SP)");
  }
  if (const auto dp = num(par, "dp"); dp && std::llround(*dp * *tp * *pp * cp) != p.gpus)
    p.assumptions.push_back("published DP " + fmt("%g", *dp) + " does not match GPUs / (TP PP CP); DP derived from the GPU count");
  p.scenario = {{"name", p.id}, {"cluster", cl}, {"model", m}, {"training", tr}};

  p.layout = "TP" + fmt("%g", *tp) + " PP" + fmt("%g", *pp) + " DP" + std::to_string(static_cast<long long>(p.gpus / (*tp * *pp * cp)));
  if (cp > 1) p.layout += " CP" + fmt("%g", cp);
  if (ep > 1) p.layout += " EP" + fmt("%g", ep);
  if (tr.contains("expert_tensor_parallel_size") && tr["expert_tensor_parallel_size"] != *tp)
    p.layout += " ETP" + tr["expert_tensor_parallel_size"].dump();
  if (vp > 1) p.layout += " VP" + fmt("%g", vp);
  p.layout += " mbs" + fmt("%g", mbs) + (sp ? " SP" : "") + (fsdp.empty() ? (zero ? " ZeRO-" + std::to_string(zero) : "") : " " + fsdp) +
              " rc-" + recompute + " " + precision;

  // Measured figure -> tokens/s per GPU, with the source's convention.
  const double gpus = p.gpus;
  MegatronFlopsInput mf{*gbs, *seq, *layers, *hidden, *heads, groups, *ffn,
                        std::ceil(static_cast<double>(vocab) / (128.0 * *tp)) * 128.0 * *tp, swiglu, 1};
  mf.kv_channels = kv_channels;
  if (const json& moe = sub(model, "moe"); moe.is_object()) {
    mf.experts_per_token = num(moe, "topk").value_or(1);
    mf.moe_ffn_hidden = num(moe, "moe_ffn_hidden").value_or(0);
  }
  auto from_flops = [&](double tflops, double flops_per_step) { return *gbs * *seq / (flops_per_step / (tflops * 1e12 * gpus) * gpus); };
  if (auto t = num(measured, "iteration_time_s")) {
    p.measured_from = "iteration_time_s " + fmt("%g", *t);
    p.measured_tokens_per_s_per_gpu = *gbs * *seq / (*t * gpus);
  } else if (auto v = num(measured, "tokens_per_s_per_gpu")) {
    p.measured_from = "tokens_per_s_per_gpu";
    p.measured_tokens_per_s_per_gpu = *v;
  } else if (auto v2 = num(measured, "tokens_per_s")) {
    p.measured_from = "tokens_per_s / GPUs";
    p.measured_tokens_per_s_per_gpu = *v2 / gpus;
  } else if (auto s = num(measured, "samples_per_s")) {
    p.measured_from = "samples_per_s x seq / GPUs";
    p.measured_tokens_per_s_per_gpu = *s * *seq / gpus;
  } else if (auto f = num(measured, "tflops_per_gpu"); f && (has(p.group, "sc21") || has(notes, "96*"))) {
    p.measured_from = "tflops_per_gpu " + fmt("%g", *f) + ", SC'21 96Bslh^2(1+s/6h+V/16lh) incl. recompute";
    p.measured_tokens_per_s_per_gpu = from_flops(*f, sc21_flops_per_step(*gbs, *seq, *layers, *hidden, static_cast<double>(vocab)));
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
  } else {
    return skip("no measured figure that converts to throughput");
  }
  (void)file;
  return p;
}

std::vector<ValidationSummary> summarize(const std::vector<TrainingPoint>& points, bool by_confidence) {
  std::vector<ValidationSummary> out;
  if (by_confidence)
    for (const char* c : {"high", "medium", "low"}) out.push_back({c, 0, 0, 0, 0, 0, 0, 0, {}});
  for (const auto& p : points) {
    const std::string& key = by_confidence ? p.confidence : p.group;
    auto it = std::find_if(out.begin(), out.end(), [&](const ValidationSummary& s) { return s.key == key; });
    if (it == out.end()) {
      out.push_back({key, 0, 0, 0, 0, 0, 0, 0, {}});
      it = out.end() - 1;
    }
    ++it->points;
    if (p.skipped) {
      ++it->skipped;
      continue;
    }
    ++it->compared;
    const double a = std::abs(p.error);
    it->mean_abs_error += a;
    it->mean_error += p.error;
    if (a <= 0.15) ++it->within_15pct;
    if (a > it->max_abs_error || it->worst_id.empty()) it->max_abs_error = a, it->worst_id = p.id;
  }
  for (auto& s : out)
    if (s.compared) s.mean_abs_error /= static_cast<double>(s.compared), s.mean_error /= static_cast<double>(s.compared);
  return out;
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

bool is_published_training(const json& doc) {
  if (!doc.is_array() || doc.empty()) return false;
  return std::all_of(doc.begin(), doc.end(), [](const json& e) { return e.is_object() && str(e, "kind") == "training"; });
}

std::vector<TrainingPoint> convert_published_training(const json& doc, const std::string& file) {
  if (!is_published_training(doc))
    throw InputError(file + ": (top level): expected an array of objects with \"kind\": \"training\" (published-train.json format)");
  std::vector<TrainingPoint> out;
  for (std::size_t i = 0; i < doc.size(); ++i) out.push_back(convert_entry(doc[i], file, i));
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
        const Report r = simulate(s).report;
        p.predicted_step_time_s = r.step_time_s;
        p.predicted_tokens_per_s_per_gpu = r.tokens_per_s / r.num_gpus;
        p.predicted_mfu = r.mfu;
        p.memory_gib = r.memory.total_bytes() / 1073741824.0;
        p.fits_in_memory = r.fits_in_memory;
        p.error = p.predicted_tokens_per_s_per_gpu / p.measured_tokens_per_s_per_gpu - 1.0;
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
                  p.memory_gib, p.fits_in_memory ? "" : " (does not fit)");
    o += line;
  }
  o += "\nskipped:\n";
  for (const auto& p : v.points)
    if (p.skipped) o += "  " + p.id + " (" + p.confidence + "): " + p.skip_reason + "\n";
  auto table = [&](const std::vector<ValidationSummary>& rows, const char* title) {
    o += std::string("\n") + title + "\n";
    for (const auto& s : rows) {
      if (s.points == 0) continue;
      std::snprintf(line, sizeof line, "  %-40s %3zu points, %3zu compared, %3zu skipped", s.key.c_str(), s.points, s.compared, s.skipped);
      o += line;
      if (s.compared) {
        std::snprintf(line, sizeof line, ": mean |error| %.1f%%, mean error %+.1f%%, max |error| %.1f%% (%s), within 15%%: %zu/%zu",
                      100 * s.mean_abs_error, 100 * s.mean_error, 100 * s.max_abs_error, s.worst_id.c_str(), s.within_15pct, s.compared);
        o += line;
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
      j["error"] = p.error;
    }
    points.push_back(j);
  }
  auto summaries = [](const std::vector<ValidationSummary>& rows) {
    json a = json::array();
    for (const auto& s : rows)
      a.push_back({{"key", s.key}, {"points", s.points}, {"compared", s.compared}, {"skipped", s.skipped},
                   {"within_15pct", s.within_15pct}, {"mean_abs_error", s.mean_abs_error}, {"mean_error", s.mean_error},
                   {"max_abs_error", s.max_abs_error}, {"worst_id", s.worst_id}});
    return a;
  };
  return {{"kind", "published-training"}, {"points", points}, {"by_confidence", summaries(v.by_confidence)},
          {"by_group", summaries(v.by_group)}};
}

}  // namespace cs::sim
