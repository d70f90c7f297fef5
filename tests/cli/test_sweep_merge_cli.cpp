// clustersim sweep merge against hostile parts, through the executable (issue 32): what the merge's
// library checks (tests/sim/test_sweep_parts.cpp) cannot show: a run whose shards read two calibration
// profiles at one path, a part whose stored arguments would write a Slurm script or overwrite another part,
// and a tampered capacity scenario, each refused with exit 2 and one line naming the part and the JSON path,
// and nothing written.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "cli_helpers.hpp"

using namespace clitest;
using nlohmann::json;

namespace {

// One node of 8 H100 training an 8-layer, 1024-wide GPT: a point simulates in milliseconds.
json node_doc() {
  json doc;
  doc["name"] = "merge";
  doc["cluster"] = {{"gpu", "H100-SXM"}, {"nodes", 1}, {"gpus_per_node", 8}, {"intra_node", "nvswitch"}};
  doc["model"] = {{"num_layers", 8}, {"hidden_size", 1024}, {"num_attention_heads", 8}, {"vocab_size", 32000},
                  {"ffn_hidden_size", 4096}, {"activation", "gelu"}};
  doc["training"] = {{"seq_length", 1024}, {"global_batch_size", 16}, {"micro_batch_size", 1}, {"tokens_to_train", 1e9}};
  return doc;
}

// The one line of a refusal: exit 2, nothing on stdout.
std::string refusal(const CliResult& r) {
  INFO(r.describe());
  REQUIRE(r.exit_code == 2);
  REQUIRE(r.out.empty());
  const auto lines = r.err_lines();
  REQUIRE(lines.size() == 1);
  return lines.front();
}

// Runs shard i/n of `args` into `part`.
void shard(const std::vector<std::string>& args, int i, int n, const std::string& part) {
  std::vector<std::string> a = args;
  a.insert(a.end(), {"--quiet", "--shard", std::to_string(i) + "/" + std::to_string(n), "--part", part});
  const CliResult r = run_cli(a);
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
}

}  // namespace

TEST_CASE("sweep merge: shards that read two calibration profiles at one path are refused", "[cli][sweep]") {
  TempDir dir;
  json doc = node_doc();
  doc["calibration"] = "profile.json";
  const std::string file = dir.write_json("merge.json", doc).string();
  const std::vector<std::string> args = {"sweep", file, "--vary", "training.micro_batch_size=1,2"};
  const std::string p0 = (dir / "p0.json").string(), p1 = (dir / "p1.json").string();
  dir.write("profile.json", R"({"version": 1})");
  shard(args, 0, 2, p0);
  dir.write("profile.json", R"({"version": 1, "gpu": "H100-SXM"})");
  shard(args, 1, 2, p1);
  const json j0 = load_json(p0), j1 = load_json(p1);
  REQUIRE(j0["inputs"]["files"][1]["role"] == "calibration");
  CHECK(refusal(run_cli({"sweep", "merge", p0, p1})) ==
        p1 + ": inputs.files[1].fnv1a64: calibration " + (dir / "profile.json").string() + " read as " +
            j1["inputs"]["files"][1]["fnv1a64"].get<std::string>() + ", but as " + j0["inputs"]["files"][1]["fnv1a64"].get<std::string>() +
            " by " + p0 + " (the shards read different files: run them again on the same inputs)");
}

TEST_CASE("sweep merge: stored arguments that write a script or overwrite a part are refused", "[cli][sweep]") {
  TempDir dir;
  const std::string file = dir.write_json("merge.json", node_doc()).string();
  const std::vector<std::string> args = {"sweep", file, "--vary", "training.micro_batch_size=1,2"};
  const std::string p0 = (dir / "p0.json").string(), p1 = (dir / "p1.json").string();
  shard(args, 0, 2, p0);
  shard(args, 1, 2, p1);
  REQUIRE(run_cli({"sweep", "merge", p0, p1}).exit_code == 0);
  auto tampered = [&](const std::vector<std::string>& extra) {
    for (const auto& p : {p0, p1}) {
      json j = load_json(p);
      for (const auto& e : extra) j["run"]["args"].push_back(e);
      dir.write_json(fs::path(p).filename().string() == "p0.json" ? "t0.json" : "t1.json", j);
    }
    return run_cli({"sweep", "merge", (dir / "t0.json").string(), (dir / "t1.json").string()});
  };
  const std::string t0 = (dir / "t0.json").string(), t1 = (dir / "t1.json").string();
  const std::string script = (dir / "run.sh").string();
  CHECK(refusal(tampered({"--slurm-sc", script})) ==
        t0 + ": run.args[3]: \"--slurm-sc\": not an argument of a shard's run (merge writes only the run's own outputs)");
  CHECK_FALSE(fs::exists(script));
  CHECK(refusal(tampered({"--csv", t1})) ==
        t0 + ": run.args: --csv: " + t1 + ": is also an input of this command (" + t1 + "); write the output to another file");
  CHECK(load_json(t1)["format"] == "clustersim-sweep-part");
}

TEST_CASE("sweep merge: a tampered capacity scenario is refused with its path in the part", "[cli][sweep]") {
  TempDir dir;
  json doc = node_doc();
  doc["cluster"]["gpus_per_node"] = 2;  // a plan on 2 GPUs: few layouts, a small part
  const std::string file = dir.write_json("merge.json", doc).string();
  const std::string p0 = (dir / "p0.json").string();
  shard({"sweep", file, "--gpus", "2", "--verify", "1"}, 0, 1, p0);
  REQUIRE(run_cli({"sweep", "merge", p0}).exit_code == 0);
  for (const json& bad : {json("many"), json(-1), json(nullptr)}) {
    json j = load_json(p0);
    if (bad.is_null()) j["run"]["scenario"]["training"] = 3;
    else j["run"]["scenario"]["training"]["tokens_to_train"] = bad;
    const std::string t = dir.write_json("t.json", j).string();
    CHECK(refusal(run_cli({"sweep", "merge", t})) == t + ": run.scenario.training.tokens_to_train: expected a positive number "
                                                         "(capacity planning needs the number of tokens to train)");
  }
}
