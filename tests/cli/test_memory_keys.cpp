// The memory-saving keys of a run (training.exp_avg_dtype, exp_avg_sq_dtype, activation_func_fp8_input_store,
// moe_apply_probs), given in a scenario: each changes the memory the report gives, in the part of the
// breakdown it belongs to (models/memory/memory_model.cpp; the hand-computed figures are in
// tests/models/test_memory_model.cpp), and at its default changes nothing.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "tests/cli/cli_helpers.hpp"

using namespace clitest;

namespace {

nlohmann::json memory_of(const std::vector<std::string>& sets) {
  std::vector<std::string> args{"run", (scenarios_dir() / "deepseek-moe-16b-h100x32.json").string(), "--json"};
  for (const auto& s : sets) args.insert(args.end(), {"--set", s});
  const CliResult r = run_cli(args);
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out).at("memory_gib");
}

}  // namespace

TEST_CASE("run: each memory-saving key moves its part of the memory, and its default moves nothing", "[cli]") {
  const nlohmann::json base = memory_of({});
  CHECK(memory_of({"training.exp_avg_dtype=fp32", "training.exp_avg_sq_dtype=fp32", "training.activation_func_fp8_input_store=false",
                   "training.moe_apply_probs=combine"}) == base);
  // bf16 moments: the optimizer state goes from 12 to 8 B per (sharded) parameter, nothing else moves but
  // the reserve's fragmentation share.
  const nlohmann::json adam = memory_of({"training.exp_avg_dtype=bf16", "training.exp_avg_sq_dtype=bf16"});
  CHECK(adam.at("optimizer").get<double>() == Approx(base.at("optimizer").get<double>() * 8 / 12).epsilon(1e-12));
  CHECK(adam.at("activations") == base.at("activations"));
  CHECK(adam.at("weights") == base.at("weights"));
  // The SwiGLU input in FP8 and the probabilities in the activation: fewer activations, the same states.
  for (const char* set : {"training.activation_func_fp8_input_store=true", "training.moe_apply_probs=activation"}) {
    INFO(set);
    const nlohmann::json m = memory_of({std::string(set)});
    CHECK(m.at("activations").get<double>() < base.at("activations").get<double>());
    CHECK(m.at("optimizer") == base.at("optimizer"));
  }
}

TEST_CASE("run: where the MoE probabilities apply follows the framework release when the scenario does not say", "[cli]") {
  // frameworks.json: Megatron-Core (and NeMo on it) multiply in the experts' activation from core_r0.12;
  // the generic release keeps clustersim's earlier combine, DeepSpeed-MoE weighs in the combine.
  const nlohmann::json generic = memory_of({});
  CHECK(memory_of({"training.framework=megatron-core"}) == memory_of({"training.framework=megatron-core", "training.moe_apply_probs=activation"}));
  CHECK(memory_of({"training.framework=nemo"}) == memory_of({"training.framework=nemo", "training.moe_apply_probs=activation"}));
  CHECK(memory_of({"training.framework=deepspeed"}) == memory_of({"training.framework=deepspeed", "training.moe_apply_probs=combine"}));
  CHECK(memory_of({"training.moe_apply_probs=combine"}) == generic);
  // A scenario's own key wins over the release's default.
  CHECK(memory_of({"training.framework=megatron-core", "training.moe_apply_probs=combine"}).at("activations").get<double>() >
        memory_of({"training.framework=megatron-core"}).at("activations").get<double>());
}
