// libFuzzer harness: a sweep's part file (sim/explore/sweep_part.hpp) on arbitrary bytes: read, checked and
// merged as `clustersim sweep merge` merges it, its stored arguments and capacity scenario checked as the
// merge checks them, and a part that reads back written again and read again (the writer's output is always
// readable). Bad input is expected and ends in InputError; anything else (a crash, a sanitizer report,
// another exception, a hang) is a finding. Seeds: tests/fuzz/seeds/sweep_part (parts of small runs).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/base/input_error.hpp"
#include "sim/explore/sweep_part.hpp"

namespace {

// What merge does with a part that was read: its run's arguments and scenario, then the merge itself.
void merge(cs::sim::SweepPart part) {
  const nlohmann::json& run = part.run;
  if (run.contains("args") && run["args"].is_array()) {
    std::vector<std::string> args;
    for (const auto& a : run["args"])
      if (a.is_string()) args.push_back(a.get<std::string>());
    try {
      cs::sim::check_part_args(args, part.file + ": run.args");
    } catch (const cs::InputError&) {
    }
  }
  try {
    (void)cs::sim::part_tokens_to_train(run.contains("scenario") ? run["scenario"] : nlohmann::json(), part.file + ": run.scenario");
  } catch (const cs::InputError&) {
  }
  std::vector<cs::sim::SweepPart> parts{std::move(part)};
  (void)cs::sim::merge_shards(parts);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  cs::sim::SweepPart part;
  try {
    part = cs::sim::parse_sweep_part(text, "part.json");
  } catch (const cs::InputError&) {
    return 0;
  }
  // Written and read again: the same part (a part the reader accepts is one the writer can write).
  const std::string again = cs::sim::to_json(part).dump();
  const cs::sim::SweepPart back = cs::sim::parse_sweep_part(again, "again.json");
  if (cs::sim::to_json(back) != cs::sim::to_json(part)) __builtin_trap();
  try {
    merge(std::move(part));
  } catch (const cs::InputError&) {
  }
  return 0;
}
