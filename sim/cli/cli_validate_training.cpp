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

int validate_training(const std::vector<std::string>& files, bool json_out) {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& f : files) {
    const auto v = validate_published_training(read_json_file(f), f);
    if (json_out) {
      auto j = to_json(v);
      j["file"] = f;
      all.push_back(j);
    } else {
      std::cout << f << "\n" << to_text(v) << (files.size() > 1 ? "\n" : "");
    }
  }
  if (json_out) std::cout << (files.size() == 1 ? all[0] : all).dump(2) << "\n";
  return kExitOk;
}

}  // namespace cs::sim::cli
