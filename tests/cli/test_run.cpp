// `clustersim run` end to end: every example scenario runs, its --json report carries every key of the
// contract in shared/DESIGN.md and the numbers agree with each other; output is byte-identical run after
// run and thread against thread; --set, --trace, --help and the text report do what the contract says.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <stdlib.h>

#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"
#include "scenario_runs.hpp"
#include "sim/report/report.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"

using namespace clitest;
using nlohmann::json;

namespace {

const char* const k8b = "llama3-8b-h100x8.json";
const char* const k70b = "llama3-70b-h100x64-ndr400.json";
const char* const kTwoJobs = "two-jobs-shared-spine.json";

bool near_rel(double a, double b, double rel) { return std::fabs(a - b) <= rel * std::max(std::fabs(a), std::fabs(b)); }

// `report[key]` exists and is a number; returns it (NaN when not).
double number_at(const json& report, const json::json_pointer& ptr) {
  INFO("key " << ptr.to_string());
  REQUIRE(report.contains(ptr));
  REQUIRE(report.at(ptr).is_number());
  return report.at(ptr).get<double>();
}

}  // namespace

TEST_CASE("every scenario runs and its --json report has every contract key", "[cli]") {
  const auto& runs = json_runs_of_all_scenarios();
  REQUIRE(runs.size() >= 6);
  for (const auto& run : runs) {
    INFO(run.file.filename().string() << "\n" << run.result.describe());
    CHECK(run.result.exit_code == 0);
    CHECK(run.result.err.empty());
  }
  for (const auto& job : job_runs(runs)) {
    INFO(job.label);
    REQUIRE(job.report.is_object());
    const json& r = job.report;
    for (const char* key : {"/step_time_s", "/tokens_per_s", "/model_tflops_per_gpu", "/mfu", "/breakdown_s/compute",
                            "/breakdown_s/exposed_comm", "/breakdown_s/pipeline_bubble", "/breakdown_s/other",
                            "/memory_gib/weights", "/memory_gib/grads", "/memory_gib/optimizer", "/memory_gib/activations",
                            "/memory_gib/total", "/cost/usd_per_step", "/cost/usd_per_hour", "/cost/days_to_train",
                            "/cost/usd_to_train", "/utilization/gpu_busy"}) {
      INFO("key " << key);
      CHECK(r.contains(json::json_pointer(key)));
      if (r.contains(json::json_pointer(key))) CHECK(r.at(json::json_pointer(key)).is_number());
    }
    CHECK(r.contains("fits_in_memory"));
    CHECK(r.value("fits_in_memory", json()).is_boolean());
    REQUIRE(r.contains(json::json_pointer("/utilization/links")));
    CHECK(r.at(json::json_pointer("/utilization/links")).is_array());
  }
}

TEST_CASE("every scenario's report is self-consistent", "[cli]") {
  for (const auto& job : job_runs(json_runs_of_all_scenarios())) {
    INFO(job.label);
    REQUIRE(job.report.is_object());
    const json& r = job.report;
    const json& scenario = job.scenario;
    using P = json::json_pointer;

    const double step = number_at(r, P("/step_time_s"));
    CHECK(step > 0);

    // 0 < MFU <= 1, and model TFLOP/s per GPU is positive with it.
    const double mfu = number_at(r, P("/mfu"));
    CHECK(mfu > 0);
    CHECK(mfu <= 1);
    CHECK(number_at(r, P("/model_tflops_per_gpu")) > 0);

    // The breakdown covers the step: compute + exposed comm + bubble + other = step time.
    double parts = 0;
    for (const char* k : {"compute", "exposed_comm", "pipeline_bubble", "other"}) {
      const double v = number_at(r, P(std::string("/breakdown_s/") + k));
      INFO("breakdown_s." << k << " = " << v);
      CHECK(v >= 0);
      parts += v;
    }
    CHECK(near_rel(parts, step, 1e-6));

    // Memory total = the parts (buffers and reserve where reported).
    double mem = 0;
    for (const char* k : {"weights", "grads", "optimizer", "activations"}) {
      const double v = number_at(r, P(std::string("/memory_gib/") + k));
      CHECK(v >= 0);
      mem += v;
    }
    const json& m = r.at("memory_gib");
    mem += m.value("buffers", 0.0) + m.value("reserved", 0.0);
    const double total = number_at(r, P("/memory_gib/total"));
    CHECK(total > 0);
    CHECK(near_rel(total, mem, 1e-9));
    if (m.contains("capacity")) CHECK(r.at("fits_in_memory").get<bool>() == (total <= m.at("capacity").get<double>()));

    // Throughput: global batch x sequence length tokens per step.
    const double gbs = scenario.at("training").at("global_batch_size").get<double>();
    const double seq = scenario.at("training").at("seq_length").get<double>();
    const double tokens_per_s = number_at(r, P("/tokens_per_s"));
    CHECK(near_rel(tokens_per_s, gbs * seq / step, 1e-9));

    // Cost: GPUs x $/GPU-hour per hour; per step = per hour x step / 3600; days to train = tokens /
    // throughput; cost to train = per hour x hours.
    const json& c = scenario.at("cluster");
    const double gpus = c.at("nodes").get<double>() * c.value("gpus_per_node", 8.0);
    const double usd_per_hour = number_at(r, P("/cost/usd_per_hour"));
    if (c.contains("price_per_gpu_hour")) CHECK(near_rel(usd_per_hour, gpus * c.at("price_per_gpu_hour").get<double>(), 1e-9));
    CHECK(near_rel(number_at(r, P("/cost/usd_per_step")), usd_per_hour * step / 3600, 1e-9));
    const double tokens_to_train = scenario.at("training").value("tokens_to_train", 0.0);
    const double days = number_at(r, P("/cost/days_to_train"));
    if (tokens_to_train > 0) {
      CHECK(near_rel(days, tokens_to_train / tokens_per_s / 86400, 1e-6));
      CHECK(near_rel(number_at(r, P("/cost/usd_to_train")), usd_per_hour * days * 24, 1e-6));
    }

    // Utilizations are fractions.
    const double busy = number_at(r, P("/utilization/gpu_busy"));
    CHECK(busy > 0);
    CHECK(busy <= 1 + 1e-9);
    for (const auto& link : r.at(P("/utilization/links"))) {
      INFO(link.dump());
      REQUIRE(link.contains("utilization"));
      CHECK(link.at("utilization").get<double>() >= 0);
      CHECK(link.at("utilization").get<double>() <= 1 + 1e-9);
    }
  }
}

TEST_CASE("every scenario's exposed communication by kind adds up to its exposed communication", "[cli]") {
  // exposed_comm_s_by_kind: one key per communication kind, none negative, none above that kind's busy
  // time (busy_s_by_kind), and together breakdown_s.exposed_comm; the text report prints the line.
  for (const auto& job : job_runs(json_runs_of_all_scenarios())) {
    INFO(job.label);
    REQUIRE(job.report.is_object());
    const json& r = job.report;
    REQUIRE(r.contains("exposed_comm_s_by_kind"));
    const json& by_kind = r.at("exposed_comm_s_by_kind");
    CHECK(by_kind.size() == 5);
    double sum = 0;
    for (const char* kind : {"tp_comm", "cp_comm", "ep_comm", "dp_comm", "pp_comm"}) {
      const double v = number_at(by_kind, json::json_pointer(std::string("/") + kind));
      INFO(kind << " exposed " << v);
      CHECK(v >= 0);
      CHECK(v <= number_at(r, json::json_pointer(std::string("/busy_s_by_kind/") + kind)) * (1 + 1e-9));
      sum += v;
    }
    const double exposed = number_at(r, json::json_pointer("/breakdown_s/exposed_comm"));
    CHECK(std::fabs(sum - exposed) <= 1e-9 * std::max(exposed, 1e-12));
  }
  for (const auto& run : text_runs_of_all_scenarios()) {
    INFO(run.file.filename().string());
    CHECK(contains(run.result.out, "comm exposed  "));
  }
}

TEST_CASE("two runs of every scenario print byte-identical output", "[cli]") {
  const auto& first_json = json_runs_of_all_scenarios();
  const auto& first_text = text_runs_of_all_scenarios();
  REQUIRE(first_json.size() == first_text.size());
  std::vector<std::vector<std::string>> args;
  for (const auto& run : first_json) {
    args.push_back({"run", run.file.string(), "--json"});
    args.push_back({"run", run.file.string()});
  }
  const auto again = run_all(args);
  for (std::size_t i = 0; i < first_json.size(); ++i) {
    INFO(first_json[i].file.filename().string());
    const auto& json_again = again[2 * i];
    const auto& text_again = again[2 * i + 1];
    CHECK(json_again.exit_code == 0);
    CHECK(text_again.exit_code == 0);
    CHECK(!first_json[i].result.out.empty());
    CHECK(!first_text[i].result.out.empty());
    CHECK(json_again.out == first_json[i].result.out);
    CHECK(text_again.out == first_text[i].result.out);
  }
}

// The CLI runs itself again with glibc's huge-page switch where the kernel gives huge pages on request
// (sim/base/huge_pages.hpp): only where memory sits changes, so the report is the same byte for byte with
// the restart turned off (CLUSTERSIM_HUGE_PAGES=0), mirrored and with every rank simulated.
TEST_CASE("the huge-page restart leaves the report byte-identical", "[cli]") {
  const auto file = (scenarios_dir() / k70b).string();
  const std::vector<std::vector<std::string>> args = {
      {"run", file, "--json"}, {"run", file, "--json", "--set", "simulation.symmetry=false", "--set", "simulation.network=flow"}};
  const auto with = run_all(args);
  ::setenv("CLUSTERSIM_HUGE_PAGES", "0", 1);
  const auto without = run_all(args);
  ::unsetenv("CLUSTERSIM_HUGE_PAGES");
  for (std::size_t i = 0; i < args.size(); ++i) {
    INFO(with[i].describe() << without[i].describe());
    CHECK(with[i].exit_code == 0);
    CHECK(without[i].exit_code == 0);
    CHECK(!with[i].out.empty());
    CHECK(with[i].out == without[i].out);
  }
}

TEST_CASE("simulate() on two threads at once gives the same report as the CLI", "[cli]") {
  const auto file = (scenarios_dir() / k8b).string();
  const cs::sim::Scenario scenario = cs::sim::load_scenario(file);
  std::string dump_a, dump_b;
  std::thread a([&] { dump_a = cs::sim::to_json(cs::sim::simulate(scenario).report).dump(2); });
  std::thread b([&] { dump_b = cs::sim::to_json(cs::sim::simulate(cs::sim::load_scenario(file)).report).dump(2); });
  a.join();
  b.join();
  CHECK(!dump_a.empty());
  CHECK(dump_a == dump_b);

  // The CLI is a thin front end over the same call: its --json output is the same document.
  const auto& runs = json_runs_of_all_scenarios();
  for (const auto& run : runs)
    if (run.file.filename() == k8b) CHECK(run.result.out == dump_a + "\n");
}

TEST_CASE("run --set overrides a scenario value and the report shows it", "[cli]") {
  const auto file = (scenarios_dir() / k8b).string();
  const auto base = run_cli({"run", file, "--json"});
  const auto tp4 = run_cli({"run", file, "--json", "--set", "training.tensor_model_parallel_size=4"});
  INFO(tp4.describe());
  REQUIRE(base.exit_code == 0);
  REQUIRE(tp4.exit_code == 0);
  const json a = json::parse(base.out);
  const json b = json::parse(tp4.out);
  CHECK(a.at("layout").at("tensor_model_parallel_size") == 2);
  CHECK(a.at("layout").at("data_parallel_size") == 4);
  CHECK(b.at("layout").at("tensor_model_parallel_size") == 4);
  CHECK(b.at("layout").at("data_parallel_size") == 2);
  CHECK(a.at("step_time_s") != b.at("step_time_s"));

  // Several --set, and the text report.
  const auto text = run_cli({"run", file, "--set", "training.tensor_model_parallel_size=4", "--set",
                             "training.global_batch_size=64"});
  INFO(text.describe());
  REQUIRE(text.exit_code == 0);
  CHECK(contains(text.out, "TP 4"));
  CHECK(contains(text.out, "DP 2"));
  CHECK(contains(text.out, "global 64"));
}

TEST_CASE("run and sweep give one report for the same scenario and overrides: the same fields and the same price", "[cli]") {
  // Issue 28's front door: a sweep point is run through the same call as `run`, so its report is run's
  // JSON document field for field -- a GPU changed by --set takes the catalog's price in both (the file
  // prices its H100 at $2.50; the B200's list price is another), not the file's number in one of them.
  // (Python and the GUI against run: tests/python/test_clustersim.py, tests/gui/test_gui.cpp.)
  const auto file = (scenarios_dir() / k8b).string();
  for (const char* set : {"cluster.gpu=B200", "training.tensor_model_parallel_size=4"}) {
    const auto one = run_cli({"run", file, "--json", "--set", set});
    const auto many = run_cli({"sweep", file, "--vary", "training.micro_batch_size=1", "--json", "--set", set});
    INFO(set << "\n" << one.describe() << many.describe());
    REQUIRE(one.exit_code == 0);
    REQUIRE(many.exit_code == 0);
    const json report = json::parse(one.out);
    const json point = json::parse(many.out).at("points").at(0).at("report");
    CHECK(point == report);
    if (std::string(set) == "cluster.gpu=B200") CHECK(report.at("cost").at("price_per_gpu_hour_usd") != 2.5);
  }
}

namespace {

// Checks one trace file against the Chrome trace format and against the simulated ranks of the scenario.
// `overrides` are --set assignments (to keep a big scenario's trace small).
// Returns the number of processes (nodes) in the trace.
std::size_t check_trace(const std::string& scenario_name, const std::vector<std::string>& overrides = {}) {
  TempDir dir;
  const auto file = (scenarios_dir() / scenario_name).string();
  const auto trace = dir / "out.json";
  std::vector<std::string> args = {"run", file, "--json", "--trace", trace.string()};
  for (const auto& o : overrides) {
    args.push_back("--set");
    args.push_back(o);
  }
  const auto r = run_cli(args);
  INFO(scenario_name << "\n" << r.describe());
  REQUIRE(r.exit_code == 0);
  CHECK(json::parse(r.out, nullptr, false).is_object());  // stdout still carries the report
  REQUIRE(fs::exists(trace));
  CHECK(!fs::exists(dir / "out.json.tmp"));
  const json doc = json::parse(read_text(trace), nullptr, false);
  REQUIRE(!doc.is_discarded());
  REQUIRE(doc.contains("traceEvents"));
  REQUIRE(doc.at("traceEvents").is_array());

  // Checked event by event, reported once: a trace has ~10^5 events.
  std::set<long long> pids_of_x, named_pids;
  std::set<std::pair<long long, long long>> threads_of_x, named_threads;
  std::size_t x_events = 0;
  std::vector<std::string> bad;  // the first few malformed events
  auto complain = [&](const std::string& why, const json& ev) {
    if (bad.size() < 5) bad.push_back(why + ": " + ev.dump());
  };
  for (const auto& ev : doc.at("traceEvents")) {
    if (!ev.is_object() || !ev.contains("ph") || !ev.at("ph").is_string()) {
      complain("no ph", ev);
      continue;
    }
    const std::string ph = ev.at("ph").get<std::string>();
    if (ph == "X") {
      ++x_events;
      bool ok = ev.contains("name") && ev.at("name").is_string();
      for (const char* k : {"ts", "dur", "pid", "tid"}) ok = ok && ev.contains(k) && ev.at(k).is_number();
      if (!ok) {
        complain("X event without name/ts/dur/pid/tid", ev);
        continue;
      }
      if (ev.at("ts").get<double>() < 0 || ev.at("dur").get<double>() < 0) complain("negative ts or dur", ev);
      pids_of_x.insert(ev.at("pid").get<long long>());
      threads_of_x.insert({ev.at("pid").get<long long>(), ev.at("tid").get<long long>()});
    } else if (ph == "M") {
      if (!ev.contains("name") || !ev.contains("pid") || !ev.contains("args")) {
        complain("M event without name/pid/args", ev);
        continue;
      }
      const std::string name = ev.at("name").get<std::string>();
      if (name == "process_name" || name == "thread_name") {
        if (!ev.at("args").contains("name")) complain("M event without args.name", ev);
        if (name == "process_name") named_pids.insert(ev.at("pid").get<long long>());
        else if (ev.contains("tid")) named_threads.insert({ev.at("pid").get<long long>(), ev.at("tid").get<long long>()});
        else complain("thread_name without tid", ev);
      }
    }
  }
  {
    std::string all;
    for (const auto& b : bad) all += b + "\n";
    INFO("malformed events (first few):\n" << all);
    CHECK(bad.empty());
  }
  CHECK(x_events > 0);
  // Every process and every thread that has events is named.
  CHECK(std::includes(named_pids.begin(), named_pids.end(), pids_of_x.begin(), pids_of_x.end()));
  CHECK(std::includes(named_threads.begin(), named_threads.end(), threads_of_x.begin(), threads_of_x.end()));

  // One process per node that holds a simulated rank.
  const cs::sim::Scenario s = cs::sim::load_scenario(file, overrides);
  const auto result = cs::sim::simulate(s);
  std::set<long long> nodes;
  for (const int gpu : result.plan.global_rank) nodes.insert(gpu / s.cluster.gpus_per_node);
  CHECK(named_pids == nodes);
  CHECK(pids_of_x == nodes);
  return named_pids.size();
}

}  // namespace

TEST_CASE("run --trace writes a Chrome trace: X events, named processes and threads", "[cli]") {
  SECTION("one node") { CHECK(check_trace(k8b) == 1); }
  // TP 8 x PP 4: each pipeline stage on its own node, so four processes. 4 micro-batches instead of 64.
  SECTION("pipeline stages on several nodes") {
    CHECK(check_trace(k70b, {"training.global_batch_size=8"}) == 4);
  }
  // One simulated rank per job (TP x DP mirrored, no PP): job llama2-13b's on node 0, llama2-7b's on node 2.
  SECTION("two jobs") { CHECK(check_trace(kTwoJobs) == 2); }
}

TEST_CASE("run of a multi-job scenario: one report per job with its slowdown, --set reaches a job", "[cli]") {
  const auto file = (scenarios_dir() / kTwoJobs).string();
  const auto j = run_cli({"run", file, "--json"});
  INFO(j.describe());
  REQUIRE(j.exit_code == 0);
  const json doc = json::parse(j.out);
  REQUIRE(doc.at("jobs").size() == 2);
  for (const json& r : doc.at("jobs")) {
    CHECK(r.at("slowdown").get<double>() > 1.0);  // the jobs share every leaf's up-link (see the scenario)
    CHECK(near_rel(r.at("slowdown").get<double>() * r.at("step_time_alone_s").get<double>(), r.at("step_time_s").get<double>(), 1e-12));
  }
  const auto text = run_cli({"run", file});
  INFO(text.describe());
  REQUIRE(text.exit_code == 0);
  CHECK(contains(text.out, "job llama2-13b on nodes 0-1, 4-5,"));
  CHECK(contains(text.out, "slowdown"));

  // Side by side (nodes 0-15 and 16-31) they share no link: no slowdown.
  const auto apart = run_cli({"run", file, "--json", "--set", "jobs[0].nodes=16", "--set", "jobs.1.nodes=16"});
  INFO(apart.describe());
  REQUIRE(apart.exit_code == 0);
  const json apart_doc = json::parse(apart.out);  // a named document: a range-for over a temporary's member dangles
  for (const json& r : apart_doc.at("jobs")) CHECK(r.at("slowdown").get<double>() == Approx(1.0).epsilon(1e-9));

  // Bad input in a job names its path.
  const auto bad = run_cli({"run", file, "--set", "jobs[1].training.tensor_model_parallel_size=3"});
  CHECK(bad.exit_code == 2);
  CHECK(contains(bad.err, "jobs[1].training: tensor (3)"));
}

TEST_CASE("help: clustersim --help, run --help and no arguments", "[cli]") {
  const auto help = run_cli({"--help"});
  INFO(help.describe());
  CHECK(help.exit_code == 0);
  CHECK(contains(help.out, "usage"));
  CHECK(contains(help.out, "run"));

  const auto run_help = run_cli({"run", "--help"});
  INFO(run_help.describe());
  CHECK(run_help.exit_code == 0);
  CHECK(contains(run_help.out, "usage: clustersim run"));
  for (const char* opt : {"--json", "--trace", "--set"}) CHECK(contains(run_help.out, opt));

  const auto none = run_cli({});
  INFO(none.describe());
  CHECK(none.exit_code == 2);
  CHECK(none.out.empty());
  CHECK(contains(none.err, "usage"));
}

TEST_CASE("the text report names step time, MFU, memory and cost", "[cli]") {
  for (const auto& run : text_runs_of_all_scenarios()) {
    INFO(run.file.filename().string() << "\n" << run.result.describe());
    CHECK(run.result.exit_code == 0);
    CHECK(run.result.err.empty());
    for (const char* label : {"step time", "MFU", "memory/GPU", "cost"}) {
      INFO("label " << label);
      CHECK(contains(run.result.out, label));
    }
  }
}
