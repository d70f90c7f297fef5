#pragma once
// `clustersim run S --json` and `clustersim run S` of every scenarios/*.json, each run once per test
// process (all scenarios at once, as separate processes) and shared by the test cases that only read the reports.
#include <vector>

#include "cli_helpers.hpp"

namespace clitest {

struct ScenarioRun {
  fs::path file;
  CliResult result;
  nlohmann::json report;  // parsed stdout; null when it did not parse
};

const std::vector<ScenarioRun>& json_runs_of_all_scenarios();
// `clustersim run S` (the text report) of every scenario; `report` is null.
const std::vector<ScenarioRun>& text_runs_of_all_scenarios();

// Starts one process per argument list and waits for all of them; results in the same order.
std::vector<CliResult> run_all(const std::vector<std::vector<std::string>>& arg_lists);

}  // namespace clitest
