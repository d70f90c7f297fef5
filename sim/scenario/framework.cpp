#include "sim/scenario/framework.hpp"

#include <algorithm>
#include <cmath>

#include "sim/base/check.hpp"
#include "sim/base/name_table.hpp"
#include "sim/scenario/enum_names.hpp"

namespace cs::sim {

using nlohmann::json;

namespace {

// The file is part of this repository: a malformed entry is a bug, caught by every test that loads a
// scenario (CS_CHECK), never a user's input error.
// The file is read in its own key order (ordered_json), so that a rule's conditions are named in the
// order its author wrote them.
using ordered_json = nlohmann::ordered_json;

FrameworkWhen read_when(const ordered_json& e) {
  FrameworkWhen out;
  if (!e.contains("when")) return out;
  for (const auto& [path, want] : e.at("when").items()) {
    CS_CHECK(want.is_primitive() || want.is_array() || (want.is_object() && (want.contains("min") || want.contains("max"))));
    out.push_back({path, json::parse(want.dump())});
  }
  return out;
}

ParamGatherPlacement read_placement(const std::string& s) {
  if (s == "after_optimizer") return ParamGatherPlacement::after_optimizer;
  if (s == "with_flag") return ParamGatherPlacement::with_flag;
  CS_CHECK(s == "when_given");
  return ParamGatherPlacement::when_given;
}

FrameworkRelease read_release(const ordered_json& e) {
  FrameworkRelease r;
  r.name = e.at("name").get<std::string>();
  for (const auto& [key, entries] : e.at("defaults").items()) {
    const auto& keys = defaultable_keys();
    CS_CHECK(std::find(keys.begin(), keys.end(), key) != keys.end());
    std::vector<FrameworkDefault> list;
    for (const ordered_json& d : entries) list.push_back({read_when(d), json::parse(d.at("value").dump()), d.at("source").get<std::string>()});
    CS_CHECK(!list.empty() && list.back().when.empty());  // the last entry is the fallback
    r.defaults.emplace_back(key, std::move(list));
  }
  CS_CHECK(r.defaults.size() == defaultable_keys().size());  // every release says every default
  const ordered_json& b = e.at("grad_bucket");
  r.grad_bucket.min_params = b.value("min_params", 0.0);
  r.grad_bucket.params_per_dp_rank = b.value("params_per_dp_rank", 0.0);
  r.grad_bucket.bytes = b.value("bytes", 0.0);
  r.grad_bucket.one_bucket_without_overlap = b.at("one_bucket_without_overlap").get<bool>();
  r.grad_bucket.source = b.at("source").get<std::string>();
  CS_CHECK(r.grad_bucket.bytes > 0 || r.grad_bucket.min_params > 0);
  r.param_gather = read_placement(e.at("distributed_optimizer_param_gather").get<std::string>());
  return r;
}

std::vector<Framework> build() {
  const ordered_json doc = ordered_json::parse(frameworks_text());
  CS_CHECK(doc.at("format") == "clustersim frameworks 1");
  std::vector<Framework> out;
  for (const ordered_json& e : doc.at("frameworks")) {
    Framework f;
    f.name = e.at("name").get<std::string>();
    f.about = e.at("about").get<std::string>();
    f.source = e.value("source", "");
    if (e.contains("based_on")) {
      const std::string base = e.at("based_on").get<std::string>();
      const auto it = std::find_if(out.begin(), out.end(), [&](const Framework& g) { return g.name == base; });
      CS_CHECK(it != out.end());  // a base comes earlier in the file
      f.refuse = it->refuse;
    }
    for (const ordered_json& r : e.at("refuse"))
      f.refuse.push_back({r.at("id").get<std::string>(), r.at("path").get<std::string>(), read_when(r),
                          r.at("says").get<std::string>(), r.at("source").get<std::string>()});
    for (const ordered_json& r : e.at("releases")) f.releases.push_back(read_release(r));
    CS_CHECK(!f.releases.empty());
    out.push_back(std::move(f));
  }
  CS_CHECK(!out.empty() && out.front().name == "generic");
  return out;
}

bool condition_holds(const FrameworkCondition& c, const json& facts) {
  const auto it = facts.find(c.path);
  CS_CHECK(it != facts.end());  // a rule names a fact training_facts does not give: a bug of the data file
  const json& have = *it;
  if (c.want.is_array()) return std::find(c.want.begin(), c.want.end(), have) != c.want.end();
  if (c.want.is_object()) {
    if (!have.is_number()) return false;
    const double v = have.get<double>();
    if (c.want.contains("min") && v < c.want.at("min").get<double>()) return false;
    if (c.want.contains("max") && v > c.want.at("max").get<double>()) return false;
    return true;
  }
  return have == c.want;
}

}  // namespace

double GradBucketRule::params(int dp, double grad_element_bytes, bool overlap_grad_reduce) const {
  if (one_bucket_without_overlap && !overlap_grad_reduce) return 1e15;  // the table's maximum: one bucket
  if (bytes > 0) return bytes / grad_element_bytes;
  return std::max(min_params, params_per_dp_rank * dp);
}

const std::vector<std::string>& defaultable_keys() {
  static const std::vector<std::string> keys = {"training.overlap_grad_reduce", "training.overlap_param_gather",
                                                "training.tp_comm_overlap", "training.main_grads_dtype",
                                                "training.grad_reduce_dtype", "training.moe_apply_probs",
                                                "training.zero3_collectives"};
  return keys;
}

const std::vector<Framework>& frameworks() {
  static const std::vector<Framework> all = build();
  return all;
}

std::vector<std::string> framework_names() { return names_in(frameworks()); }

const Framework* find_framework(std::string_view name) { return find_named(frameworks(), name); }

const Framework& generic_framework() { return frameworks().front(); }

const FrameworkRelease* find_release(const Framework& f, std::string_view name) {
  return name.empty() ? &f.releases.front() : find_named(f.releases, name);
}

std::vector<std::string> release_names(const Framework& f) { return names_in(f.releases); }

bool conditions_hold(const FrameworkWhen& when, const json& facts) {
  return std::all_of(when.begin(), when.end(), [&](const FrameworkCondition& c) { return condition_holds(c, facts); });
}

const FrameworkRule* first_refusal(const Framework& f, const json& facts) {
  for (const FrameworkRule& r : f.refuse)
    if (conditions_hold(r.when, facts)) return &r;
  return nullptr;
}

std::optional<json> default_value(const FrameworkRelease& r, const std::string& path, const json& facts) {
  for (const auto& [key, entries] : r.defaults) {
    if (key != path) continue;
    for (const FrameworkDefault& d : entries)
      if (conditions_hold(d.when, facts)) return d.value;
  }
  return std::nullopt;
}

json training_facts(const models::TrainingConfig& t, const std::string& gpu_name) {
  return json{{"training.zero_stage", t.zero_stage},
              {"training.tensor_model_parallel_size", t.tp}, {"training.pipeline_model_parallel_size", t.pp},
              {"training.virtual_pipeline_model_parallel_size", t.vp}, {"training.context_parallel_size", t.cp},
              {"training.expert_model_parallel_size", t.ep}, {"training.sequence_parallel", t.sequence_parallel},
              {"training.tp_comm_overlap", t.tp_comm_overlap},
              {"training.overlap_moe_expert_parallel_comm", t.overlap_moe_expert_parallel_comm},
              {"training.overlap_grad_reduce", t.overlap_grad_reduce},
              {"training.overlap_param_gather", t.overlap_param_gather},
              {"training.precision", std::string(name_of(kPrecisionNames, t.effective_recipe()))},
              {"training.pipeline_schedule", std::string(name_of(kPipelineScheduleNames, t.pipeline_schedule))},
              {"training.recompute_granularity", std::string(name_of(kRecomputeNames, t.recompute))},
              {"cluster.gpu", gpu_name}};
}

std::string refusal_message(const Framework& f, const FrameworkRule& rule, const json& facts) {
  std::string values;
  for (const FrameworkCondition& c : rule.when) {
    const std::string key = c.path.substr(c.path.find('.') + 1);
    values += (values.empty() ? "" : ", ") + key + " " + (facts.at(c.path).is_string() ? facts.at(c.path).get<std::string>() : facts.at(c.path).dump());
  }
  return values + ": training.framework \"" + f.name + "\" cannot run this (rule " + rule.id + "): " + rule.says + " [" + rule.source + "]";
}

}  // namespace cs::sim
