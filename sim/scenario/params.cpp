#include "sim/scenario/params.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

#include "models/hardware/gpu_catalog.hpp"
#include "models/workload/transformer.hpp"
#include "sim/base/check.hpp"
#include "sim/scenario/enum_names.hpp"
#include "sim/scenario/framework.hpp"
#include "topologies/fabric.hpp"
#include "topologies/link_catalog.hpp"

namespace cs::sim::params {

namespace {

// The names a choice allows: a name table of sim/scenario/enum_names.hpp or a catalog.
std::vector<std::string> choices_from(const std::string& source) {
  if (source == "gpus") return models::gpu_names();
  if (source == "presets") return models::preset_names();
  if (source == "intra_nodes") return topo::intra_node_names();
  if (source == "links") return topo::net_link_names();
  if (source == "fabric") return topo::fabric_names();
  if (source == "activation") return names_of(kActivationNames);
  if (source == "attention_backend") return names_of(kAttentionBackendNames);
  if (source == "position_embedding") return names_of(kPositionEmbeddingNames);
  if (source == "precision") return names_of(kPrecisionNames);
  if (source == "pipeline_schedule") return names_of(kPipelineScheduleNames);
  if (source == "finetune_method") return names_of(kFinetuneMethodNames);
  if (source == "fsdp_sharding") return names_of(kFsdpShardingNames);
  if (source == "grad_dtype") return names_of(kGradDtypeNames);
  if (source == "grad_accumulation") return names_of(kGradAccumulationNames);
  if (source == "optimizer_state_dtype") return names_of(kOptimizerStateDtypeNames);
  if (source == "moe_apply_probs") return names_of(kMoeApplyProbsNames);
  if (source == "zero3_collectives") return names_of(kZero3CollectivesNames);
  if (source == "pipeline_tensor_split") return names_of(kPipelineTensorSplitNames);
  if (source == "frameworks") return framework_names();
  if (source == "recompute") return names_of(kRecomputeNames);
  if (source == "recompute_method") return names_of(kRecomputeMethodNames);
  if (source == "moe_token_dispatcher") return names_of(kMoeDispatcherNames);
  if (source == "cuda_graph_impl") return names_of(kCudaGraphImplNames);
  if (source == "network") return names_of(kNetworkBackendNames);
  if (source == "nccl_algorithm") return names_of(kNcclAlgorithmNames);
  CS_CHECK(!"params.json: unknown choices source");
  return {};
}

Type type_of(const std::string& name) {
  for (Type t : {Type::integer, Type::number, Type::boolean, Type::string, Type::choice, Type::name_or_object, Type::integer_or_list,
                 Type::list, Type::object})
    if (to_string(t) == name) return t;
  CS_CHECK(!"params.json: unknown type");
  return Type::string;
}

// The table from sim/scenario/params.json (compiled in); a malformed entry is a bug of this repository,
// caught by every test that loads a scenario.
std::vector<Param> build() {
  const nlohmann::json doc = nlohmann::json::parse(params_text());
  std::vector<Param> out;
  for (const auto& e : doc.at("parameters")) {
    Param p;
    p.path = e.at("path").get<std::string>();
    p.type = type_of(e.at("type").get<std::string>());
    p.unit = e.value("unit", "");
    p.default_text = e.at("default").get<std::string>();
    p.help = e.at("help").get<std::string>();
    if (e.contains("min")) {
      p.min = e.at("min").get<double>(), p.max = e.at("max").get<double>();
      p.min_exclusive = e.value("min_exclusive", false), p.max_exclusive = e.value("max_exclusive", false);
      p.max_reason = e.value("max_reason", "");
    }
    CS_CHECK(e.contains("min") == p.has_range());
    if (e.contains("choices")) p.choices = choices_from(e.at("choices").get<std::string>());
    p.search_order = e.value("search_order", 0);
    out.push_back(std::move(p));
  }
  return out;
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
      "Generated from the parameter table (sim/scenario/params.json) by `clustersim params --markdown`; do not edit by hand\n"
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
