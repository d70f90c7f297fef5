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

// One job's report of a run, with the scenario as that job sees it: for a single-job scenario the
// report itself and the file's JSON; for a multi-job scenario ({"jobs": [report, ...]}) each job's
// report, with the file's JSON given that job's "model" and "training" and cluster.nodes its node count.
struct JobRun {
  std::string label;  // the file name, plus " job NAME" for a job of a multi-job scenario
  nlohmann::json report;
  nlohmann::json scenario;
};
std::vector<JobRun> job_runs(const ScenarioRun& run);
std::vector<JobRun> job_runs(const std::vector<ScenarioRun>& runs);  // of every run, in order

const std::vector<ScenarioRun>& json_runs_of_all_scenarios();
// `clustersim run S` (the text report) of every scenario; `report` is null.
const std::vector<ScenarioRun>& text_runs_of_all_scenarios();

// Starts one process per argument list and waits for all of them; results in the same order.
std::vector<CliResult> run_all(const std::vector<std::vector<std::string>>& arg_lists);

}  // namespace clitest
