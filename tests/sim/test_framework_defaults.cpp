// Framework defaults as data (sim/validation/framework_defaults.hpp, calibrate/published/framework-defaults.json):
// the compiled-in table is the file, every published entry finds its framework and release by the patterns
// the file declares, the conditions mean what the file's "about" says, the converter takes its defaults
// from the table it is given, and a malformed table is one message per mistake naming the JSON path.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/base/input_error.hpp"
#include "sim/validation/framework_defaults.hpp"
#include "sim/validation/validate_training.hpp"

using namespace cs::sim;
using nlohmann::json;

namespace {

const std::string kDefaultsFile = std::string(CLUSTERSIM_SOURCE_DIR) + "/calibrate/published/framework-defaults.json";
const std::string kPublished = std::string(CLUSTERSIM_SOURCE_DIR) + "/calibrate/published/published-train.json";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The smallest valid table: the values the converter always needs, nothing framework-specific.
json minimal_table() {
  return json::parse(R"json({
    "format": "clustersim framework defaults 1",
    "defaults": {
      "vocab": {"value": 50257, "source": "s"},
      "micro_batch_size": {"value": 1, "source": "s"},
      "sequence_parallel": {"value": false, "source": "s"},
      "recompute": {"value": "none", "source": "s"},
      "precision": {"value": "bf16", "source": "s"}
    }
  })json");
}

// The message parse_defaults_table throws for `doc` (one line per mistake).
std::string parse_error(const json& doc) {
  try {
    parse_defaults_table(doc, "fd.json");
  } catch (const cs::InputError& e) {
    return e.what();
  }
  return "(no error)";
}

json megatron_lm_2021_entry() {
  return json::parse(R"json({
    "id": "t", "kind": "training", "group": "g", "confidence": "high",
    "model": {"name": "GPT-1.7B", "arch": "dense_transformer", "layers": 24, "hidden": 2304, "heads": 24,
              "kv_heads": 24, "ffn_hidden": 9216, "vocab": 51200},
    "cluster": {"gpu": "A100-SXM4-80GB", "count": 32, "gpus_per_node": 8, "nodes": 4,
                "inter_node": "8x Mellanox HDR 200Gb/s InfiniBand HCAs per node (Selene)"},
    "parallel": {"tp": 2, "pp": 1, "dp": 16, "recompute": "full"},
    "batch": {"global": 512, "micro": 4, "seq": 2048},
    "precision": "mixed", "framework": "Megatron-LM", "measured": {"iteration_time_s": 1.0}
  })json");
}

}  // namespace

TEST_CASE("framework defaults: the compiled-in table is calibrate/published/framework-defaults.json", "[sim][validate]") {
  CHECK(std::string(framework_defaults_text()) == slurp(kDefaultsFile));  // rebuilt whenever the file changes
  const DefaultsTable& t = framework_defaults();
  CHECK(t.frameworks.size() == 8);  // session 21: meta-llama3, the Llama 3 paper's stack
  CHECK(t.model_families.size() == 6);
  // Every rule says where it comes from (the parser requires it; this is the file's own count of rules).
  std::size_t rules = 0;
  auto count = [&](const DefaultScope& s) {
    for (const auto& [knob, list] : s.knobs)
      for (const auto& r : list) {
        INFO(s.id << " " << knob);
        CHECK_FALSE(r.source.empty());
        ++rules;
      }
  };
  count(t.published_text);
  count(t.defaults);
  for (const auto& f : t.frameworks) {
    count(f.scope);
    for (const auto& r : f.releases) count(r);
  }
  for (const auto& f : t.model_families) count(f);
  // 39 + the 16-bit precision rule of published_text + 8 training_framework rules (one per framework,
  // two for Megatron-LM: its unstated "mixed" precision read as --fp16, or not) + SC'21's scripts: 10
  // micro-batches, 4 interleaved schedules, 1 torch-DDP overlap rule (63) + Megatron-Bridge's recipes: the
  // FP8 mapping saying fp8_param_gather is not modelled, Qwen3-235B's tp_comm_overlap off on H100, and
  // Qwen3-30B's two dispatcher notes (moe_a2a_overlap in 25.11 / 26.02, HybridEP from 26.04) + the
  // code's gradient accumulation kernel: SC'21's autograd accumulation, Megatron-LM 2022's fp16 main_grad
  // hook, BLOOM's BF16_Optimizer cast and add (70) + the code's pipeline transfers: SC'21's and Megatron-LM
  // 2022's scatter-gather with blocking _communicate, DeepSpeed's partitioned blocking PipelineEngine (73)
  // + gpt-oss's YaRN RoPE run unfused (74; its biases ride in the family's mlp rule) + llm-foundry's
  // benchmark rows through the Triton flash kernel whatever their note says, and DeepSpeed ZeRO-3's
  // per-micro-batch reduce-scatter with the shard accumulated, no whole-gradient kernel (76; issue 29) +
  // the --overlap-param-gather / --overlap-grad-reduce an entry's framework text names (78) + issue 30's
  // Blackwell rules (83) + Megatron-Bridge's NVFP4 configs turning tp_comm_overlap off (84) + issue 31's
  // DeepSeek-V3 family: SwiGLU untied, its MLA dims, one MTP module, 9 pipeline layouts by PP x VP, and
  // Megatron-Bridge's DeepSeek-V3 recompute, [mla_up_proj, mlp] on H100 and [mla_up_proj] elsewhere (98) +
  // the Nemotron 3 Nano family: its architecture (a hybrid preset), squared-ReLU untied MLP, no position
  // embedding, and Bridge's performance-recipe recompute, [layernorm] on H100 and none elsewhere (103) +
  // two recompute statements that close the memory ladder: the Llama 3 paper's "without activation
  // checkpointing" and Bridge's GB200 Llama 3 70B FSDP recipes, which offload instead (105; session 16) +
  // the token dispatchers Megatron-Bridge's recipes set (moe_flex_dispatcher_backend), by release and GPU: 5
  // for DeepSeek-V3, 4 for Qwen3-30B-A3B, 1 for Nemotron 3 Nano (115; session 17) + the GB200 Llama FSDP
  // recompute rule split three ways, each setting its recipe's cpu_offloading_num_layers (117; issue 29)
  // + session 21: the Llama 3 paper's stack (meta-llama3: its FSDP mapping, sequence parallelism, V = 4 and
  // its pipeline split), the entry's "shards optimizer states and grads" read as ZeRO-2, and SC'21's ZeRO-3
  // rows mapped to DeepSpeed 0.3 (126)
  CHECK(rules == 126);
}

TEST_CASE("framework defaults: every published run matches a framework and release by the file's patterns", "[sim][validate]") {
  const json doc = json::parse(slurp(kPublished));
  const DefaultsTable& t = framework_defaults();
  std::map<std::string, std::string> by_framework_text;  // "framework" text -> "framework/release"
  for (const json& e : doc) {
    const EntryDefaults d(t, e);
    INFO(e["id"].get<std::string>() << ": " << e["framework"].get<std::string>());
    CHECK_FALSE(d.framework().empty());
    CHECK_FALSE(d.release().empty());
    by_framework_text[e["framework"].get<std::string>()] = d.framework() + "/" + d.release();
  }
  const std::map<std::string, std::string> expected = {
      {"Megatron-LM (PTD-P, interleaved schedule where used)", "megatron-lm/sc21"},  // the SC'21 group: its scripts
      {"Megatron-LM", "megatron-lm/2021-2022"},
      {"Megatron-Core r0.8.0", "megatron-core/r0.8.0"},
      {"NeMo 24.07 (Megatron-Core)", "nemo/24.07"},
      {"NeMo 24.03.01 (Megatron-Core, TE)", "nemo/23.x-24.03"},
      {"NeMo 25.02 (NeMo 2.0)", "nemo/25.02"},
      {"Megatron-Bridge / NeMo 26.06", "megatron-bridge/26.06"},
      {"Megatron-Bridge / NeMo 26.04.01", "megatron-bridge/26.04.01"},
      {"Megatron-Bridge / NeMo 26.04", "megatron-bridge/26.04"},
      {"Megatron-Bridge / NeMo 26.02.01", "megatron-bridge/26.02.01"},
      {"Megatron-Bridge / NeMo 26.02", "megatron-bridge/26.02"},
      {"Megatron-Bridge / NeMo 25.11", "megatron-bridge/25.11"},
      {"Megatron-Bridge / NeMo 25.09", "megatron-bridge/25.09"},
      {"MosaicML Composer + llm-foundry (PyTorch FSDP)", "llm-foundry/2023"},
      {"Megatron-DeepSpeed", "megatron-deepspeed/microsoft"},
      {"Megatron-DeepSpeed (bigscience fork)", "megatron-deepspeed/bigscience"},
      {"metaseq (FSDP + Megatron TP)", "metaseq/opt-175b"}};
  CHECK(by_framework_text == expected);
  // An unknown framework matches nothing and gets only the last-resort defaults.
  const EntryDefaults none(t, json{{"framework", "JAX / MaxText"}});
  CHECK(none.framework().empty());
  CHECK(none.rule("attention") == nullptr);
  REQUIRE(none.rule("sequence_parallel") != nullptr);
  CHECK(none.rule("sequence_parallel")->value == false);
}

TEST_CASE("framework defaults: a release's rule comes before its framework's, the framework's before its base's", "[sim][validate]") {
  const DefaultsTable& t = framework_defaults();
  // NeMo 24.03 (TE 1.x): the release's flash-attn 2; NeMo 24.07: no attention rule (the profile's cuDNN).
  const EntryDefaults nemo2403(t, json{{"framework", "NeMo 24.03.01 (Megatron-Core, TE)"}});
  REQUIRE(nemo2403.rule("attention") != nullptr);
  CHECK(nemo2403.rule("attention")->set == json{{"model.attention_backend", "flash"}});
  CHECK(nemo2403.says(*nemo2403.rule("attention")) ==
        "attention through flash-attn 2 (Transformer Engine 1.x of the NeMo 24.03.01 (Megatron-Core, TE) container)");
  const EntryDefaults nemo2407(t, json{{"framework", "NeMo 24.07 (Megatron-Core)"}, {"parallel", {{"tp", 4}}}});
  CHECK(nemo2407.rule("attention") == nullptr);
  // NeMo is based on Megatron-Core: sequence parallelism and the distributed optimizer come from there.
  REQUIRE(nemo2407.rule("sequence_parallel") != nullptr);
  CHECK(nemo2407.rule("sequence_parallel")->value == true);
  CHECK(nemo2407.rule("optimizer_sharding")->value == 1);
  // Megatron-DeepSpeed is based on Megatron-LM: unfused attention, and its own pipeline-split convention.
  const EntryDefaults bloom(t, json{{"framework", "Megatron-DeepSpeed (bigscience fork)"}});
  CHECK(bloom.rule("attention")->set["model.attention_backend"] == "unfused");
  CHECK(bloom.says(*bloom.rule("pipeline_split")) == "Megatron-DeepSpeed pp-partition-method type:transformer|embedding");
  // What the entry itself says comes first: an ALiBi note beats the Nemotron family's rope.
  const EntryDefaults alibi(t, json{{"model", {{"name", "Nemotron-8B"}, {"note", "ALiBi"}}}});
  CHECK(alibi.rule("position_embedding")->set["model.position_embedding_type"] == "none");
  const EntryDefaults nemotron(t, json{{"model", {{"name", "Nemotron-8B"}}}});
  CHECK(nemotron.rule("position_embedding")->set["model.position_embedding_type"] == "rope");
}

TEST_CASE("framework defaults: conditions, say_when and the {path} of an assumption", "[sim][validate]") {
  const json facts = {{"framework", "NeMo 24.07"}, {"parallel", {{"tp", 4}, {"fsdp", 8}, {"sp", nullptr}}},
                      {"derived", {{"sequence_parallel", true}}}};
  CHECK(condition_holds(json::object(), facts));
  CHECK(condition_holds(json{{"framework", {"megatron", "NEMO"}}}, facts));  // any substring, any case
  CHECK_FALSE(condition_holds(json{{"framework", {"megatron"}}}, facts));
  CHECK(condition_holds(json{{"parallel.tp", {{"min", 4}}}}, facts));
  CHECK_FALSE(condition_holds(json{{"parallel.tp", {{"min", 5}}}}, facts));
  CHECK_FALSE(condition_holds(json{{"framework", {{"min", 0}}}}, facts));  // not a number
  CHECK(condition_holds(json{{"parallel.fsdp", {{"present", true}}}}, facts));
  CHECK(condition_holds(json{{"parallel.sp", {{"present", false}}}}, facts));  // null is absent
  CHECK(condition_holds(json{{"parallel.zero", {{"present", false}}}}, facts));
  CHECK(condition_holds(json{{"derived.sequence_parallel", true}}, facts));
  CHECK_FALSE(condition_holds(json{{"derived.sequence_parallel", false}}, facts));
  CHECK_FALSE(condition_holds(json{{"framework", {"nemo"}}, {"parallel.tp", {{"min", 8}}}}, facts));  // all must hold

  json table = minimal_table();
  table["defaults"]["tp_comm_overlap"] = json::parse(R"json({
    "when": {"derived.sequence_parallel": true}, "say_when": {"parallel.tp": {"min": 8}},
    "set": {"training.tp_comm_overlap": true}, "says": "TP {parallel.tp}, fsdp {parallel.fsdp}, {missing}, {not a path}", "source": "s"})json");
  const DefaultsTable t = parse_defaults_table(table, "fd.json");
  EntryDefaults d(t, facts);
  const DefaultRule* r = d.rule("tp_comm_overlap");
  REQUIRE(r != nullptr);
  CHECK(d.says(*r).empty());  // TP 4 < 8: set, but not said
  json e8 = facts;
  e8["parallel"]["tp"] = 8;
  const EntryDefaults d8(t, e8);
  CHECK(d8.says(*r) == "TP 8, fsdp 8, , {not a path}");
  json model = json::object(), training = json::object();
  EntryDefaults::apply(*r, model, training);
  CHECK(training == json{{"tp_comm_overlap", true}});
  CHECK(model.empty());
  // derive() is what `derived.X` reads: without it the rule's `when` fails.
  json no_sp = facts;
  no_sp.erase("derived");
  EntryDefaults later(t, no_sp);
  CHECK(later.rule("tp_comm_overlap") == nullptr);
  later.derive("sequence_parallel", true);
  CHECK(later.rule("tp_comm_overlap") != nullptr);
}

TEST_CASE("framework defaults: the converter takes what a framework does from the table it is given", "[sim][validate]") {
  const json doc = json::array({megatron_lm_2021_entry()});
  // The shipped table: Megatron-LM of 2021 ran unfused attention with dropout 0.1 and no SP.
  const auto shipped = convert_published_training(doc, "p.json");
  REQUIRE(shipped.size() == 1);
  CHECK(shipped[0].framework == "megatron-lm");
  CHECK(shipped[0].release == "2021-2022");
  CHECK(shipped[0].scenario["model"]["attention_backend"] == "unfused");
  CHECK(shipped[0].scenario["training"]["sequence_parallel"] == false);
  CHECK(shipped[0].scenario["training"]["overlap_grad_reduce"] == false);
  // A table that knows no framework: none of that, only the last-resort values (and their assumptions).
  const DefaultsTable bare = parse_defaults_table(minimal_table(), "fd.json");
  const auto plain = convert_published_training(doc, "p.json", bare);
  REQUIRE(plain.size() == 1);
  CHECK(plain[0].framework.empty());
  CHECK_FALSE(plain[0].scenario["model"].contains("attention_backend"));
  CHECK_FALSE(plain[0].scenario["training"].contains("overlap_grad_reduce"));
  CHECK_FALSE(plain[0].scenario["model"].contains("activation"));  // no mlp rule at all: the scenario's own default
  // The minimal table says nothing, so the entry's free text is not understood, and the point says so.
  const std::vector<std::string> not_understood = {
      "not understood: parallel.recompute = \"full\" (the framework's default was used)",
      "not understood: precision = \"mixed\" (the framework's default was used)"};
  std::vector<std::string> expected = {"not understood: framework = \"Megatron-LM\" (no framework of framework-defaults.json matches; generic defaults)"};
  expected.insert(expected.end(), not_understood.begin(), not_understood.end());
  CHECK(plain[0].assumptions == expected);
  // A table whose Megatron-LM turns SP on: the converter follows it, and says what the table says.
  json table = minimal_table();
  table["frameworks"] = json::parse(R"json([{"id": "megatron-lm", "match": {"framework": ["megatron-lm"]},
    "defaults": {"sequence_parallel": {"value": true, "says": "SP from the table", "source": "s"}}}])json");
  const auto sp = convert_published_training(doc, "p.json", parse_defaults_table(table, "fd.json"));
  REQUIRE(sp.size() == 1);
  CHECK(sp[0].scenario["training"]["sequence_parallel"] == true);
  expected = {"SP from the table"};
  expected.insert(expected.end(), not_understood.begin(), not_understood.end());
  CHECK(sp[0].assumptions == expected);
  CHECK(sp[0].layout.find(" SP ") != std::string::npos);
}

// Bad tables: one message per mistake, naming the file and the JSON path.
TEST_CASE("framework defaults: a table that is not an object", "[sim][validate]") {
  CHECK(parse_error(json::array()) == "fd.json: (top level): expected an object");
}

TEST_CASE("framework defaults: a wrong format line", "[sim][validate]") {
  json t = minimal_table();
  t["format"] = "v2";
  CHECK(parse_error(t) == "fd.json: format: expected \"clustersim framework defaults 1\"");
}

TEST_CASE("framework defaults: an unknown top-level key", "[sim][validate]") {
  json t = minimal_table();
  t["framework"] = json::array();
  CHECK(parse_error(t) == "fd.json: framework: unknown key");
}

TEST_CASE("framework defaults: an unknown knob", "[sim][validate]") {
  json t = minimal_table();
  t["defaults"]["attention_kernel"] = {{"set", {{"model.attention_backend", "flash"}}}, {"source", "s"}};
  CHECK(parse_error(t) ==
        "fd.json: defaults.attention_kernel: unknown knob (expected one of head_dim, sliding_window, mlp, vocab, "
        "position_embedding, attention, micro_batch_size, sequence_parallel, recompute, optimizer_sharding, fsdp, precision, "
        "expert_tensor_parallel, pipeline_split, overlap_grad_reduce, tp_comm_overlap, training_framework, virtual_pipeline, "
                             "gradient_accumulation, pipeline_p2p, pipeline_layout, mtp, mla, architecture, token_dispatcher, cuda_graphs)");
}

TEST_CASE("framework defaults: a rule without a source", "[sim][validate]") {
  json t = minimal_table();
  t["defaults"]["precision"].erase("source");
  CHECK(parse_error(t) == "fd.json: defaults.precision.source: missing (a string)");
}

TEST_CASE("framework defaults: a rule that does nothing", "[sim][validate]") {
  json t = minimal_table();
  t["defaults"]["attention"] = {{"source", "s"}};
  CHECK(parse_error(t) == "fd.json: defaults.attention: expected \"value\", \"set\" or \"says\"");
}

TEST_CASE("framework defaults: a value of the wrong type", "[sim][validate]") {
  json t = minimal_table();
  t["defaults"]["sequence_parallel"]["value"] = "on";
  CHECK(parse_error(t) == "fd.json: defaults.sequence_parallel.value: expected a boolean");
}

TEST_CASE("framework defaults: a value for a knob that only sets scenario keys", "[sim][validate]") {
  json t = minimal_table();
  t["defaults"]["attention"] = {{"value", "flash"}, {"source", "s"}};
  CHECK(parse_error(t) == "fd.json: defaults.attention.value: not a knob with a value (use \"set\" or \"says\")");
}

TEST_CASE("framework defaults: a set key outside model and training", "[sim][validate]") {
  json t = minimal_table();
  t["defaults"]["attention"] = {{"set", {{"cluster.gpu", "H100"}}}, {"source", "s"}};
  CHECK(parse_error(t) == "fd.json: defaults.attention.set.cluster.gpu: expected a scenario key \"model.X\" or \"training.X\"");
}

TEST_CASE("framework defaults: a malformed condition", "[sim][validate]") {
  json t = minimal_table();
  t["defaults"]["attention"] = {{"when", {{"framework", "nemo"}}}, {"set", {{"model.attention_backend", "flash"}}}, {"source", "s"}};
  CHECK(parse_error(t) == "fd.json: defaults.attention.when.framework: expected a list of substrings, {\"min\": x}, "
                          "{\"present\": bool} or a boolean");
}

TEST_CASE("framework defaults: a framework without match", "[sim][validate]") {
  json t = minimal_table();
  t["frameworks"] = json::array({{{"id", "x"}}});
  CHECK(parse_error(t) == "fd.json: frameworks[0].match: missing (the conditions an entry must meet)");
}

TEST_CASE("framework defaults: a framework id twice", "[sim][validate]") {
  json t = minimal_table();
  t["frameworks"] = json::array({{{"id", "x"}, {"match", {{"framework", {"a"}}}}}, {{"id", "x"}, {"match", {{"framework", {"b"}}}}}});
  CHECK(parse_error(t) == "fd.json: frameworks[1].id: \"x\" appears twice");
}

TEST_CASE("framework defaults: based_on an unknown framework", "[sim][validate]") {
  json t = minimal_table();
  t["frameworks"] = json::array({{{"id", "x"}, {"match", json::object()}, {"based_on", "y"}}});
  CHECK(parse_error(t) == "fd.json: frameworks[0].based_on: no framework \"y\" in the file");
}

TEST_CASE("framework defaults: based_on in a cycle", "[sim][validate]") {
  json t = minimal_table();
  t["frameworks"] = json::array({{{"id", "x"}, {"match", json::object()}, {"based_on", "y"}},
                                 {{"id", "y"}, {"match", json::object()}, {"based_on", "x"}}});
  CHECK(parse_error(t) == "fd.json: frameworks[0].based_on: \"y\" leads back to \"x\" (a cycle)\n"
                          "fd.json: frameworks[1].based_on: \"x\" leads back to \"y\" (a cycle)");
}

TEST_CASE("framework defaults: releases inside a release", "[sim][validate]") {
  json t = minimal_table();
  t["frameworks"] = json::array({{{"id", "x"}, {"match", json::object()}, {"releases", json::array({{{"id", "1"}, {"releases", json::array()}}})}}});
  CHECK(parse_error(t) == "fd.json: frameworks[0].releases[0].releases: unknown key");
}

TEST_CASE("framework defaults: a value the converter always needs is missing", "[sim][validate]") {
  json t = minimal_table();
  t["defaults"]["recompute"]["when"] = {{"parallel.recompute", {"none"}}};
  CHECK(parse_error(t) == "fd.json: defaults.recompute: missing (a rule without \"when\": the value when nothing else applies)");
}
