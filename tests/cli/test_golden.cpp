// Golden numbers of the example scenarios: tests/cli/golden/<scenario>.json holds the key results of
// `clustersim run <scenario> --json` (step time, MFU, memory per GPU, cost per step) and this test holds
// the CLI to them within a relative 1e-6. A change of the model that moves them is deliberate or a bug;
// either way it shows up here and in the review of the golden files.
//
// To accept new numbers: CLUSTERSIM_UPDATE_GOLDEN=1 ./build/tests/test_cli "[golden]" rewrites the files,
// then review `git diff tests/cli/golden`.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>

#include "cli_helpers.hpp"
#include "scenario_runs.hpp"

using namespace clitest;
using nlohmann::json;

namespace {

struct GoldenKey {
  const char* name;     // key in the golden file
  const char* pointer;  // where it is in the report
};

constexpr GoldenKey kKeys[] = {
    {"step_time_s", "/step_time_s"},
    {"mfu", "/mfu"},
    {"memory_gib_total", "/memory_gib/total"},
    {"usd_per_step", "/cost/usd_per_step"},
};

constexpr double kRelTolerance = 1e-6;

bool update_requested() {
  const char* v = std::getenv("CLUSTERSIM_UPDATE_GOLDEN");
  return v && std::string(v) == "1";
}

}  // namespace

TEST_CASE("golden numbers of every scenario", "[cli][golden]") {
  const bool update = update_requested();
  for (const auto& run : json_runs_of_all_scenarios()) {
    const std::string stem = run.file.stem().string();
    const fs::path golden_file = golden_dir() / (stem + ".json");
    INFO(run.file.filename().string() << " vs " << golden_file.string());
    REQUIRE(run.result.exit_code == 0);
    REQUIRE(run.report.is_object());

    // A multi-job scenario: the keys of each job's report, as "JOB.key", and its slowdown.
    json actual = json::object();
    actual["scenario"] = run.file.filename().string();
    const bool multi = run.report.contains("jobs");
    for (const json& report : multi ? run.report.at("jobs") : json::array({run.report})) {
      const std::string prefix = multi ? report.at("job").get<std::string>() + "." : "";
      for (const auto& k : kKeys) {
        REQUIRE(report.contains(json::json_pointer(k.pointer)));
        actual[prefix + k.name] = report.at(json::json_pointer(k.pointer)).get<double>();
      }
      if (multi) actual[prefix + "slowdown"] = report.at("slowdown").get<double>();
    }

    if (update) {
      fs::create_directories(golden_dir());
      std::ofstream out(golden_file, std::ios::binary | std::ios::trunc);
      out << actual.dump(2) << "\n";
      REQUIRE(out.good());
      WARN("rewrote " << golden_file.string() << " (review the diff)");
      continue;
    }

    INFO("to accept new numbers: CLUSTERSIM_UPDATE_GOLDEN=1 test_cli \"[golden]\", then review the diff");
    REQUIRE(fs::exists(golden_file));
    const json expected = load_json(golden_file);
    CHECK(expected.size() == actual.size());
    for (const auto& [key, value] : actual.items()) {
      if (key == "scenario") continue;
      INFO(key);
      REQUIRE(expected.contains(key));
      const double want = expected.at(key).get<double>();
      const double got = value.get<double>();
      CHECK(got == Approx(want).epsilon(kRelTolerance).margin(0));
    }
  }
  // A golden file of a scenario that no longer exists is stale.
  if (fs::exists(golden_dir()))
    for (const auto& e : fs::directory_iterator(golden_dir())) {
      INFO("golden file without a scenario: " << e.path().string());
      CHECK(fs::exists(scenarios_dir() / e.path().filename()));
    }
}
