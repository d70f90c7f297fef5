// `clustersim validate published-train.json`: the published-training kind of `validate` (whole training
// steps against published runs; sim/validation/validate_training.hpp). cli_validate.cpp hands a file over here when
// its content is a published-training document.
#include <iostream>

#include <nlohmann/json.hpp>

#include "sim/cli/cli.hpp"
#include "sim/base/input_error.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/validation/validate_training.hpp"

namespace cs::sim::cli {

bool is_published_training_file(const std::string& path) {
  try {
    return is_published_training(read_json_file(path));
  } catch (const InputError&) {
    return false;  // not JSON (an nccl-tests log, ...): another kind of measurement
  }
}

namespace {

// A group worse than its baseline: the check ran and failed (not bad input, which exits kExitInput).
constexpr int kExitRegression = 1;

// --by group: one line per group of every file; with a baseline, the regressions on stderr and exit 1.
int validate_training_by_group(const std::vector<std::string>& files, const TrainingValidateOptions& options) {
  // The baseline is read and checked before the (long) validation, so that a bad one fails at once.
  nlohmann::json baseline;
  if (!options.baseline.empty()) {
    baseline = read_json_file(options.baseline);
    fidelity_regressions(baseline, options.baseline, {});
  }
  std::vector<GroupFidelity> rows;
  for (const auto& f : files) {
    const auto v = validate_published_training(read_json_file(f), f);
    for (auto& g : group_fidelity(v, f)) rows.push_back(std::move(g));
  }
  std::vector<std::string> regressions;
  if (!options.baseline.empty()) regressions = fidelity_regressions(baseline, options.baseline, rows);
  if (options.json) {
    nlohmann::json doc = {{"kind", "published-training-groups"}, {"groups", to_json(rows)}};
    if (!options.baseline.empty()) doc["regressions"] = regressions;
    std::cout << doc.dump(2) << "\n";
  } else {
    std::cout << (options.markdown ? group_table_markdown(rows) : group_table_text(rows));
  }
  for (const auto& r : regressions) std::cerr << "fidelity regression: " << r << "\n";
  if (!options.baseline.empty() && regressions.empty())
    std::cerr << "every group within " << 100 * kGuardTolerance << " point of its baseline (" << options.baseline << ")\n";
  return regressions.empty() ? kExitOk : kExitRegression;
}

}  // namespace

int validate_training(const std::vector<std::string>& files, const TrainingValidateOptions& options) {
  if (options.by_group) return validate_training_by_group(files, options);
  nlohmann::json all = nlohmann::json::array();
  for (const auto& f : files) {
    const auto v = validate_published_training(read_json_file(f), f);
    if (options.json) {
      auto j = to_json(v);
      j["file"] = f;
      all.push_back(j);
    } else {
      std::cout << f << "\n" << to_text(v) << (files.size() > 1 ? "\n" : "");
    }
  }
  if (options.json) std::cout << (files.size() == 1 ? all[0] : all).dump(2) << "\n";
  return kExitOk;
}

}  // namespace cs::sim::cli
