#pragma once
// Part files of a sharded sweep (`clustersim sweep ... --shard I/N`, `clustersim sweep merge PART...`,
// docs/sweep.md): every point of the run, this shard's simulated ones with their full report, written
// so that reading it back gives the very same numbers (every double as JSON's shortest round-trip
// form, non-finite ones as strings), and the merge of the N parts, point by point: the shard that
// evaluated a point gives it, the others left it `pending`.
//
// The file: {"format": "clustersim-sweep-part", "version": 2, "shard": {"index", "count"}, "inputs": {"build",
// "files": [{"role", "path", "fnv1a64"}...]}, "run": {... what the CLI needs to print the run again},
// "points": [point...]}. Nothing here prints or writes files.
//
// The merge trusts no part (issue 32): every number read is range-checked, the parts must have read the same
// input files (their contents' digests) with the same build, and each point must come from the one shard
// that owns it. The digests are consistency checks between honest shards, not signatures: whoever can write
// a part can write any digest.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/explore/sweep.hpp"

namespace cs::sim {

inline constexpr const char* kSweepPartFormat = "clustersim-sweep-part";
inline constexpr int kSweepPartVersion = 2;

nlohmann::json to_part_json(const SweepPoint& p);
// Throws InputError naming `where` (file and JSON path) when the JSON is not a point of a part file.
SweepPoint point_from_part_json(const nlohmann::json& j, const std::string& where);

// "I/N" with 0 <= I < N; throws InputError otherwise.
Shard parse_shard(const std::string& text);

struct InputDigest {
  std::string role;     // "scenario", or the JSON path that names the file ("calibration", "cluster.topology_file")
  std::string path;     // as resolved
  std::string fnv1a64;  // 16 hex digits, or "unreadable"
  bool operator==(const InputDigest&) const = default;
};
struct RunInputs {
  std::string build;
  std::vector<InputDigest> files;  // the scenario first
  bool operator==(const RunInputs&) const = default;
};

// What a shard's run read: the build (the running executable's FNV-1a digest: CMake provides no build id)
// and the FNV-1a digest of the bytes of every input file: the scenario `scenario_file`, and the calibration
// profile and cluster.topology_file that `doc` (the scenario with its --set overrides) or any point's
// assignment names, resolved as parse_scenario resolves them. A file that cannot be read is "unreadable".
RunInputs run_inputs(const std::string& scenario_file, const nlohmann::json& doc, const std::vector<SweepPoint>& points);

// FNV-1a, 64 bits, over `bytes`, as 16 hex digits.
std::string fnv1a64_hex(const std::string& bytes);

struct SweepPart {
  std::string file;  // where it was read from (for messages)
  Shard shard;
  RunInputs inputs;  // run_inputs() of the shard
  nlohmann::json run;  // the CLI's record of the run
  std::vector<SweepPoint> points;
};

// Reads and checks a part file; throws InputError naming the file and the JSON path.
SweepPart read_sweep_part(const std::string& path);
// The same, of a part's text (`path` names it in messages).
SweepPart parse_sweep_part(const std::string& text, const std::string& path);
nlohmann::json to_json(const SweepPart& part);

// The N parts of one run, in any order: one of every shard 0..N-1, the same inputs, build, run and points
// in the same order, every point to simulate evaluated by its own shard and left pending by the others;
// the merged points. Throws InputError naming the offending file and JSON path otherwise.
std::vector<SweepPoint> merge_shards(std::vector<SweepPart>& parts);

// The run's stored arguments, which `sweep merge` parses again: nothing that makes it write a file other
// than the run's own outputs (--slurm-script, --shard, --part and the Slurm options) or print help, spelled
// in full or abbreviated as Boost.Program_options accepts. Throws InputError naming `where` (PART: run.args).
void check_part_args(const std::vector<std::string>& args, const std::string& where);

// training.tokens_to_train of a merged capacity plan's scenario: a positive finite number, as plan_capacity
// requires of the shards. Throws InputError naming `where` (PART: run.scenario) otherwise.
double part_tokens_to_train(const nlohmann::json& doc, const std::string& where);

}  // namespace cs::sim
