// Part files of a sharded sweep and their merge (sim/explore/sweep_part.hpp, issue 32): the merge trusts no
// part. One test per class of refusal, each with its exact message: input files or build that differ, a
// point owned by another shard, a point pending in its own shard, a point claimed by two parts, a screened
// point the parts disagree on, numbers out of range, shard indices and counts out of range, an incomplete
// set, stored arguments that would write other files, and a tampered capacity scenario.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/base/input_error.hpp"
#include "sim/explore/sweep.hpp"
#include "sim/explore/sweep_part.hpp"

using namespace cs::sim;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// One node of 8 H100 training Llama 3 8B: a micro-batch of 1 or 2 simulates in a fraction of a second, one
// of 3 does not divide the global batch (a point that is invalid).
json node_doc() {
  json doc;
  doc["name"] = "parts";
  doc["cluster"] = {{"gpu", "H100-SXM"}, {"nodes", 1}, {"gpus_per_node", 8}, {"intra_node", "nvswitch"}};
  doc["model"] = {{"preset", "llama3-8b"}};
  doc["training"] = {{"seq_length", 2048}, {"global_batch_size", 16}, {"micro_batch_size", 1}, {"tokens_to_train", 1e9},
                     {"tensor_model_parallel_size", 8}};
  return doc;
}

// Shard i of n of a --vary sweep of micro_batch_size 1, 2, 3 (three points, the last invalid), as the part
// file JSON the CLI writes.
json part_json(const std::string& file, const json& doc, int i, int n) {
  SweepOptions opts;
  opts.threads = 1;
  opts.shard = {i, n};
  SweepPart part;
  part.shard = {i, n};
  part.points = run_sweep(doc, file, {parse_axis("training.micro_batch_size=1,2,3")}, opts);
  part.run = {{"args", {file, "--vary", "training.micro_batch_size=1,2,3"}}, {"file", file}, {"scenario", doc}, {"skipped", json::array()}};
  part.inputs = run_inputs(file, doc, part.points);
  return to_json(part);
}

// The two honest parts of one run (computed once: each simulates its points).
const std::vector<json>& honest() {
  static const std::vector<json> parts = [] {
    const json doc = node_doc();
    return std::vector<json>{part_json("parts.json", doc, 0, 2), part_json("parts.json", doc, 1, 2)};
  }();
  return parts;
}

// Reads the parts as p0.json, p1.json, ... and merges them; the one-line refusal, or "" when they merge.
std::string merge_error(const std::vector<json>& parts) {
  try {
    std::vector<SweepPart> read;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      std::string name = "p";  // appended, not "p" + ...: GCC 12's -Wrestrict misfires on that
      name += std::to_string(i);
      name += ".json";
      read.push_back(parse_sweep_part(parts[i].dump(), name));
    }
    (void)merge_shards(read);
  } catch (const cs::InputError& e) {
    REQUIRE(e.messages().size() == 1);
    return e.messages().front();
  }
  return "";
}

}  // namespace

TEST_CASE("sweep parts: honest shards merge, each point from the shard that simulated it", "[sim][sweep]") {
  std::vector<json> parts = honest();
  CHECK(merge_error(parts) == "");
  std::vector<SweepPart> read{parse_sweep_part(parts[1].dump(), "p1.json"), parse_sweep_part(parts[0].dump(), "p0.json")};
  const auto merged = merge_shards(read);
  REQUIRE(merged.size() == 3);
  CHECK(merged[0].status == PointStatus::simulated);
  CHECK(merged[1].status == PointStatus::simulated);
  CHECK(merged[2].status == PointStatus::invalid);
  CHECK(parts[0]["inputs"]["files"][0]["fnv1a64"] == "unreadable");  // parts.json is not on disk here
  CHECK(fnv1a64_hex("") == "cbf29ce484222325");                         // FNV-1a 64's offset basis
  CHECK(fnv1a64_hex("a") == "af63dc4c8601ec8c");                        // the published test vector
}

TEST_CASE("sweep merge refuses parts that read different input files or ran another build", "[sim][sweep]") {
  // Two calibration profiles at one path: the digest is of the content, not the path.
  const fs::path dir = fs::temp_directory_path() / "clustersim-test-sweep-parts";
  fs::create_directories(dir);
  auto write = [&](const char* name, const std::string& text) {
    std::ofstream(dir / name, std::ios::binary) << text;
    return (dir / name).string();
  };
  json doc = node_doc();
  doc["calibration"] = "profile.json";
  const std::string file = write("parts.json", doc.dump());
  write("profile.json", R"({"version": 1, "gpu": "H100-SXM"})");
  const json p0 = part_json(file, doc, 0, 2);
  const std::string profile = write("profile.json", R"({"version": 1, "gpu": "H100-SXM", "gemm": []})");
  const json p1 = part_json(file, doc, 1, 2);
  fs::remove_all(dir);
  CHECK(merge_error({p0, p1}) == "p1.json: inputs.files[1].fnv1a64: calibration " + profile + " read as " +
                                     p1["inputs"]["files"][1]["fnv1a64"].get<std::string>() + ", but as " +
                                     p0["inputs"]["files"][1]["fnv1a64"].get<std::string>() +
                                     " by p0.json (the shards read different files: run them again on the same inputs)");
  json other = honest()[1];
  other["inputs"]["build"] = "executable fnv1a64 0123456789abcdef";
  CHECK(merge_error({honest()[0], other}) == "p1.json: inputs.build: executable fnv1a64 0123456789abcdef, but p0.json has " +
                                                 honest()[0]["inputs"]["build"].get<std::string>() +
                                                 " (run every shard with the same clustersim build)");
}

TEST_CASE("sweep merge refuses a point evaluated by a shard that does not own it", "[sim][sweep]") {
  // Point 1 is shard 1's (the points to simulate are dealt k mod 2); shard 0 claims it, shard 1 left it.
  std::vector<json> parts = honest();
  std::swap(parts[0]["points"][1], parts[1]["points"][1]);
  CHECK(merge_error(parts) == "p0.json: points[1].status: simulated, but shard 1/2 simulates this point (number 1 of the points "
                              "to simulate, counted from 0, and 1 mod 2 = 1)");
}

TEST_CASE("sweep merge refuses a point still pending in its own shard", "[sim][sweep]") {
  std::vector<json> parts = honest();
  parts[1]["points"][1] = parts[0]["points"][1];  // shard 0's pending copy
  CHECK(merge_error(parts) == "p1.json: points[1].status: pending in its own shard 1/2 (number 1 of the points to simulate, "
                              "counted from 0, and 1 mod 2 = 1): the shard did not finish");
  // One part calling itself the whole run (count 1) while it left points to another shard.
  json alone = honest()[0];
  alone["shard"] = {{"index", 0}, {"count", 1}};
  CHECK(merge_error({alone}) == "p0.json: points[1].status: pending in its own shard 0/1 (number 0 of the points to simulate, "
                                "counted from 0, and 0 mod 1 = 0): the shard did not finish");
}

TEST_CASE("sweep merge refuses a point claimed by two parts", "[sim][sweep]") {
  std::vector<json> parts = honest();
  parts[0]["points"][1] = parts[1]["points"][1];  // an exact copy of shard 1's result
  CHECK(merge_error(parts) == "p1.json: points[1].status: simulated, but p0.json has evaluated the point too (a point to "
                              "simulate is one shard's)");
}

TEST_CASE("sweep merge refuses a screened point the parts disagree on", "[sim][sweep]") {
  // A point no shard left pending was evaluated alike by all (a search's screening): the parts must agree.
  std::vector<json> parts = honest();
  parts[0]["points"][1] = parts[1]["points"][1] = parts[0]["points"][2];  // invalid in both
  parts[1]["points"][1]["error"] = "another reason";
  CHECK(merge_error(parts) == "p1.json: points[1]: not the same as in p0.json (every shard screens this point, so every part "
                              "has it alike)");
}

TEST_CASE("sweep merge refuses numbers out of range in a part", "[sim][sweep]") {
  auto refusal = [](const char* key, const json& value) {
    std::vector<json> parts = honest();
    json::json_pointer ptr(std::string("/points/0/report/") + key);
    parts[0][ptr] = value;
    return merge_error(parts);
  };
  CHECK(refusal("step_time_s", -1.5) == "p0.json: points[0].report.step_time_s: -1.5 is out of range (expected a finite number >= 0)");
  CHECK(refusal("step_time_s", "nan") ==
        "p0.json: points[0].report.step_time_s: \"nan\" is out of range (expected a finite number >= 0)");
  CHECK(refusal("step_time_s", "inf") ==
        "p0.json: points[0].report.step_time_s: \"inf\" is out of range (expected a finite number >= 0)");
  CHECK(refusal("step_time_s", 0) ==
        "p0.json: points[0].report.step_time_s: 0.0 is out of range (expected > 0 for a simulated point)");
  CHECK(refusal("memory.activations_bytes", "inf") ==
        "p0.json: points[0].report.memory.activations_bytes: \"inf\" is out of range (expected a finite number >= 0)");
  CHECK(refusal("cost.usd_per_step", -0.01) ==
        "p0.json: points[0].report.cost.usd_per_step: -0.01 is out of range (expected a finite number >= 0)");
  CHECK(refusal("tp", 1099511627776) ==
        "p0.json: points[0].report.tp: 1099511627776 is out of range (expected an integer from 0 to 2147483647)");
  CHECK(refusal("num_gpus", -8) == "p0.json: points[0].report.num_gpus: -8 is out of range (expected an integer from 0 to 2147483647)");
  CHECK(refusal("num_gpus", 0) == "p0.json: points[0].report.num_gpus: 0.0 is out of range (expected > 0 for a simulated point)");
  std::vector<json> parts = honest();
  parts[0]["points"][0]["estimate_step_time_s"] = -1;
  CHECK(merge_error(parts) == "p0.json: points[0].estimate_step_time_s: -1 is out of range (expected a finite number >= 0)");
}

TEST_CASE("sweep merge refuses shard indices and counts out of range, duplicates and incomplete sets", "[sim][sweep]") {
  auto with_shard = [](const json& index, const json& count) {
    std::vector<json> parts = honest();
    parts[0]["shard"] = {{"index", index}, {"count", count}};
    return merge_error(parts);
  };
  CHECK(with_shard(4294967297ULL, 2) == "p0.json: shard.index: 4294967297 is out of range (expected 0 <= index < count 2)");
  CHECK(with_shard(2, 2) == "p0.json: shard.index: 2 is out of range (expected 0 <= index < count 2)");
  CHECK(with_shard(-1, 2) == "p0.json: shard.index: -1 is out of range (expected 0 <= index < count 2)");
  CHECK(with_shard(0, 0) == "p0.json: shard.count: 0 is out of range (expected 1 to 100000 shards)");
  CHECK(with_shard(0, 4294967298ULL) == "p0.json: shard.count: 4294967298 is out of range (expected 1 to 100000 shards)");
  CHECK(with_shard(0, 3) == "p1.json: shard: 1/2 is not a shard of p0.json's run of 3");
  CHECK(merge_error({honest()[0], honest()[0]}) == "p1.json: shard: 0/2 given twice (also p0.json)");
  CHECK(merge_error({honest()[1]}) == "clustersim sweep merge: shard 0/2 missing (give all 2 part files)");
}

TEST_CASE("sweep merge refuses stored arguments that would write other files or print help", "[sim][sweep]") {
  auto refusal = [](const std::vector<std::string>& args) {
    try {
      check_part_args(args, "p0.json: run.args");
    } catch (const cs::InputError& e) {
      return e.messages().front();
    }
    return std::string();
  };
  const std::string tail = ": not an argument of a shard's run (merge writes only the run's own outputs)";
  CHECK(refusal({"s.json", "--slurm-script", "run.sh"}) == "p0.json: run.args[1]: \"--slurm-script\"" + tail);
  CHECK(refusal({"s.json", "--slurm", "run.sh"}) == "p0.json: run.args[1]: \"--slurm\"" + tail);  // Boost's abbreviation
  CHECK(refusal({"s.json", "--part=x.json"}) == "p0.json: run.args[1]: \"--part=x.json\"" + tail);
  CHECK(refusal({"s.json", "--sh", "0/2"}) == "p0.json: run.args[1]: \"--sh\"" + tail);
  CHECK(refusal({"s.json", "--search", "-qh"}) == "p0.json: run.args[2]: \"-qh\"" + tail);
  CHECK(refusal({"s.json", "--he"}) == "p0.json: run.args[1]: \"--he\"" + tail);
  CHECK(refusal({"s.json", "--search", "--csv", "all.csv", "--set", "training.seq_length=-1", "--threads", "2"}).empty());
}

TEST_CASE("sweep merge refuses a tampered capacity scenario", "[sim][sweep]") {
  auto refusal = [](const json& doc) {
    try {
      (void)part_tokens_to_train(doc, "p0.json: run.scenario");
    } catch (const cs::InputError& e) {
      return e.messages().front();
    }
    return std::string();
  };
  const std::string msg =
      "p0.json: run.scenario.training.tokens_to_train: expected a positive number (capacity planning needs the number of tokens to train)";
  CHECK(refusal(json(5)) == msg);
  CHECK(refusal(json::parse(R"({"training": 3})")) == msg);
  CHECK(refusal(json::parse(R"({"training": {"tokens_to_train": "many"}})")) == msg);
  CHECK(refusal(json::parse(R"({"training": {"tokens_to_train": -1}})")) == msg);
  CHECK(part_tokens_to_train(node_doc(), "p0.json: run.scenario") == 1e9);
}
