#pragma once
// Training frameworks as data (calibrate/published/frameworks.json, compiled in): what each framework can
// run and what it does by default. A scenario names one with training.framework (and optionally
// training.framework_release); "generic" is clustersim's own rules and the default, so that scenarios
// written before frameworks existed keep their numbers.
//
// A framework holds
//  - refusal rules: conjunctions of conditions on the resolved layout ("ZeRO-2/3 with PP >= 2"); the
//    first that holds makes the scenario an input error naming the framework and the rule (the loader),
//    and the layout search skips such layouts before evaluating them (sim/explore);
//  - per release, defaults of scenario keys (each a list of {when, value}, first match wins), the
//    data-parallel gradient bucket rule and where ZeRO-1's parameter all-gather runs.
// No code branches on a framework's name: every difference is in the file, with the framework's source
// (file and commit) beside each rule and default. docs/frameworks.md is the user's view.
//
// Conditions ("when") are evaluated against "facts": a flat JSON object from scenario paths to resolved
// values (training_facts below), so that the loader and the search ask the same question.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/workload/transformer.hpp"

namespace cs::sim {

// One condition: the fact at `path` equals `want` (number, boolean, string), is one of a list, or lies in
// {"min": x} / {"max": x}.
struct FrameworkCondition {
  std::string path;
  nlohmann::json want;
};
using FrameworkWhen = std::vector<FrameworkCondition>;

struct FrameworkRule {
  std::string id;    // named in the error
  std::string path;  // the scenario key the error is reported at
  FrameworkWhen when;
  std::string says;    // why the framework cannot run it
  std::string source;  // where in the framework's source
};

struct FrameworkDefault {
  FrameworkWhen when;
  nlohmann::json value;
  std::string source;
};

// Where ZeRO-1's (the distributed optimizer's) all-gather of the updated parameters runs.
enum class ParamGatherPlacement {
  after_optimizer,  // right after the optimizer step, exposed
  with_flag,        // overlap_param_gather: per bucket, before the bucket's first forward of the next step
  when_given,       // with_flag when the scenario gives overlap_param_gather, else after_optimizer
};

// The data-parallel gradient bucket: max(min_params, params_per_dp_rank x DP) parameters, or `bytes` of
// gradients in the reduce dtype when bytes > 0; with one_bucket_without_overlap the whole model is one
// bucket when overlap_grad_reduce is off.
struct GradBucketRule {
  double min_params = 0;
  double params_per_dp_rank = 0;
  double bytes = 0;
  bool one_bucket_without_overlap = false;
  std::string source;
  double params(int dp, double grad_element_bytes, bool overlap_grad_reduce) const;
};

struct FrameworkRelease {
  std::string name;
  std::vector<std::pair<std::string, std::vector<FrameworkDefault>>> defaults;  // scenario key -> entries
  GradBucketRule grad_bucket;
  ParamGatherPlacement param_gather = ParamGatherPlacement::after_optimizer;
};

struct Framework {
  std::string name, about, source;
  std::vector<FrameworkRule> refuse;  // based_on's rules first
  std::vector<FrameworkRelease> releases;  // the first is the default
};

// Every framework of the file, in file order ("generic" first).
const std::vector<Framework>& frameworks();
std::vector<std::string> framework_names();
const Framework* find_framework(std::string_view name);
const Framework& generic_framework();
// The named release; "" = the first. nullptr when the framework has no such release.
const FrameworkRelease* find_release(const Framework& f, std::string_view name);
std::vector<std::string> release_names(const Framework& f);

// The scenario keys a release may give defaults for (the loader reads each through default_value).
const std::vector<std::string>& defaultable_keys();

bool conditions_hold(const FrameworkWhen& when, const nlohmann::json& facts);
// The first rule of `f` that holds for `facts`, or nullptr.
const FrameworkRule* first_refusal(const Framework& f, const nlohmann::json& facts);
// The release's default for scenario key `path` under `facts`; nullopt when it gives none.
std::optional<nlohmann::json> default_value(const FrameworkRelease& r, const std::string& path, const nlohmann::json& facts);

// The facts the rules see, from a training config and the cluster's GPU name: every layout key the
// rules name, as scenario paths (training.zero_stage, training.precision, cluster.gpu, ...).
nlohmann::json training_facts(const models::TrainingConfig& t, const std::string& gpu_name);

// The one-line message of a refusal (after "FILE: PATH: "), with the values of the keys the rule names.
std::string refusal_message(const Framework& f, const FrameworkRule& rule, const nlohmann::json& facts);

// The embedded text of calibrate/published/frameworks.json (generated by cmake/EmbedText.cmake).
std::string_view frameworks_text();

}  // namespace cs::sim
