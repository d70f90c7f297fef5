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

std::vector<JobRun> job_runs(const ScenarioRun& run) {
  const nlohmann::json scenario = load_json(run.file);
  const std::string name = run.file.filename().string();
  if (!scenario.contains("jobs")) return {{name, run.report, scenario}};
  std::vector<JobRun> out;
  const auto& jobs = scenario.at("jobs");
  const double gpn = scenario.at("cluster").value("gpus_per_node", 8.0);
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const auto& job = jobs[j];
    nlohmann::json view = scenario;
    view.erase("jobs");
    view["model"] = job.at("model");
    view["training"] = job.at("training");
    double nodes = 0;
    if (job.contains("gpus")) nodes = job.at("gpus").get<double>() / gpn;
    else if (job.at("nodes").is_array()) nodes = static_cast<double>(job.at("nodes").size());
    else nodes = job.at("nodes").get<double>();
    view["cluster"]["nodes"] = nodes;
    const bool have = run.report.is_object() && run.report.contains("jobs") && run.report.at("jobs").size() > j;
    out.push_back({name + " job " + job.value("name", "job" + std::to_string(j)), have ? run.report.at("jobs")[j] : nlohmann::json(),
                   std::move(view)});
  }
  return out;
}

std::vector<JobRun> job_runs(const std::vector<ScenarioRun>& runs) {
  std::vector<JobRun> out;
  for (const auto& run : runs)
    for (auto& job : job_runs(run)) out.push_back(std::move(job));
  return out;
}

const std::vector<ScenarioRun>& json_runs_of_all_scenarios() {
  static const std::vector<ScenarioRun> runs = run_every_scenario(true);
  return runs;
}

const std::vector<ScenarioRun>& text_runs_of_all_scenarios() {
  static const std::vector<ScenarioRun> runs = run_every_scenario(false);
  return runs;
}

}  // namespace clitest
