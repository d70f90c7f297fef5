#pragma once
// The model's own rules, beside the workload model they guard: which scenario keys are plain fields of
// ModelConfig, and what a model (and a model with a layout) may not be, each problem with the scenario path
// it names. The scenario loader (sim/scenario/scenario.cpp) reads the fields from this table and reports
// these problems as they are; it adds no rule of a model feature of its own. A model feature's keys and
// refusals are added here (and its keys' types and ranges in the parameter table, sim/scenario/params.json).
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/workload/transformer.hpp"

namespace cs::models {

// One refusal: the scenario path it names ("model.window_size") and why.
struct KeyProblem {
  std::string path;
  std::string message;
};

// A model key that is one field of ModelConfig: `key` under "model." and the field it sets, an integer
// (the parameter table gives its range) or a boolean. A preset's value stays where the key is absent.
struct ModelField {
  std::string_view key;
  std::int64_t& (*integer)(ModelConfig&) = nullptr;
  bool& (*boolean)(ModelConfig&) = nullptr;
};
std::span<const ModelField> model_fields();

// The rules across the model's keys once all are read: `given(key)` says whether the scenario gave
// model.<key> (not a preset). In the order they are reported.
std::vector<KeyProblem> model_key_problems(const ModelConfig& m, const std::function<bool(std::string_view)>& given);
// Group-limited routing (model_key_problems' last rule) as Megatron-Core's group_limited_topk takes it; the
// loader clears the routing when it has a problem so that nothing downstream sees it.
std::optional<KeyProblem> group_limited_routing_problem(const ModelConfig& m);
// A model feature against the training layout (a sliding window with the ring's context parallelism, MLA's
// tensor parallelism without sequence parallelism).
std::vector<KeyProblem> feature_layout_problems(const ModelConfig& m, const TrainingConfig& t);

}  // namespace cs::models
