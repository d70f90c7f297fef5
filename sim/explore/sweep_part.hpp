#pragma once
// Part files of a sharded sweep (`clustersim sweep ... --shard I/N`, `clustersim sweep merge PART...`,
// docs/sweep.md): every point of the run, this shard's simulated ones with their full report, written
// so that reading it back gives the very same numbers (every double as JSON's shortest round-trip
// form, non-finite ones as strings), and the merge of the N parts, point by point: the shard that
// evaluated a point gives it, the others left it `pending`.
//
// The file: {"format": "clustersim-sweep-part", "version": 1, "shard": {"index", "count"}, "run": {...
// what the CLI needs to print the run again}, "points": [point...]}. Nothing here prints or writes files.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/explore/sweep.hpp"

namespace cs::sim {

inline constexpr const char* kSweepPartFormat = "clustersim-sweep-part";
inline constexpr int kSweepPartVersion = 1;

nlohmann::json to_part_json(const SweepPoint& p);
// Throws InputError naming `where` (file and JSON path) when the JSON is not a point of a part file.
SweepPoint point_from_part_json(const nlohmann::json& j, const std::string& where);

// "I/N" with 0 <= I < N; throws InputError otherwise.
Shard parse_shard(const std::string& text);

struct SweepPart {
  std::string file;  // where it was read from (for messages)
  Shard shard;
  nlohmann::json run;  // the CLI's record of the run
  std::vector<SweepPoint> points;
};

// Reads and checks a part file; throws InputError naming the file and the JSON path.
SweepPart read_sweep_part(const std::string& path);
nlohmann::json to_json(const SweepPart& part);

// The N parts of one run, in any order: one of every shard 0..N-1, the same run and the same points in
// the same order; the merged points (a point none evaluated stays pending: cancelled). Throws InputError
// naming the offending file otherwise.
std::vector<SweepPoint> merge_shards(std::vector<SweepPart>& parts);

}  // namespace cs::sim
