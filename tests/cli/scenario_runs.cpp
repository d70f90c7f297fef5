#include "scenario_runs.hpp"

#include <memory>

namespace clitest {

std::vector<CliResult> run_all(const std::vector<std::vector<std::string>>& arg_lists) {
  std::vector<std::unique_ptr<CliProcess>> running;
  for (const auto& args : arg_lists) running.push_back(std::make_unique<CliProcess>(args));
  std::vector<CliResult> results;
  for (auto& p : running) results.push_back(p->wait());
  return results;
}

namespace {
std::vector<ScenarioRun> run_every_scenario(bool as_json) {
  std::vector<std::vector<std::string>> args;
  const auto files = scenario_files();
  for (const auto& f : files) {
    args.push_back({"run", f.string()});
    if (as_json) args.back().push_back("--json");
  }
  const auto results = run_all(args);
  std::vector<ScenarioRun> out;
  for (std::size_t i = 0; i < files.size(); ++i) {
    ScenarioRun r{files[i], results[i], nullptr};
    if (as_json) r.report = nlohmann::json::parse(results[i].out, nullptr, false);
    if (r.report.is_discarded()) r.report = nullptr;
    out.push_back(std::move(r));
  }
  return out;
}
}  // namespace

const std::vector<ScenarioRun>& json_runs_of_all_scenarios() {
  static const std::vector<ScenarioRun> runs = run_every_scenario(true);
  return runs;
}

const std::vector<ScenarioRun>& text_runs_of_all_scenarios() {
  static const std::vector<ScenarioRun> runs = run_every_scenario(false);
  return runs;
}

}  // namespace clitest
