// _clustersim: the Python extension behind the `clustersim` package (sim/python/clustersim/__init__.py).
//
// Every call goes through the same library functions as the CLI and answers in the CLI's JSON contract
// (../DESIGN.md: the report of `run --json`, the points of `sweep --json`), handed to Python as the JSON
// text and decoded there, so a Python dict is exactly what `--json` prints. `collective` and `validate`
// are the CLI subcommands themselves, run in-process with --json (their tables and fits live in
// sim/cli); their standard output is captured under a lock. Long calls release the GIL; bad input raises
// clustersim.InputError (see __init__.py) with the CLI's one-line messages.
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "sim/cli/cli.hpp"
#include "sim/python/core.hpp"
#include "sim/explore/sweep.hpp"
#include "sim/report/report.hpp"
#include "sim/base/input_error.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"

namespace py = pybind11;
using nlohmann::json;

namespace {

using namespace cs::sim;
using cs::InputError;

using python::check_threads;
using python::scenario_input;
using python::ScenarioInput;

std::string run(const std::string& path, const std::string& text, const std::vector<std::string>& set) {
  py::gil_scoped_release release;
  const ScenarioInput in = scenario_input(path, text, set);
  const Scenario scenario = parse_scenario(in.doc, in.file);
  const SimulationResult result = simulate(scenario);
  return (scenario.multi_job() ? to_json(result.multi_job) : to_json(result.report)).dump();
}

std::string sweep(const std::string& path, const std::string& text, const std::vector<std::string>& set,
                  const std::vector<std::string>& axes, int threads) {
  py::gil_scoped_release release;
  const ScenarioInput in = scenario_input(path, text, set);
  std::vector<SweepAxis> parsed;
  for (const auto& a : axes) {
    python::check_no_nul("sweep: vary", a);
    parsed.push_back(parse_axis(a));
  }
  SweepOptions options;
  options.threads = check_threads("sweep", threads);
  json out = json::array();
  for (const SweepPoint& p : run_sweep(in.doc, in.file, parsed, options)) out.push_back(to_json(p));
  return out.dump();
}

std::string search(const std::string& path, const std::string& text, const std::vector<std::string>& set,
                   const std::string& objective, int threads, bool allow_tp_across_nodes) {
  py::gil_scoped_release release;
  const ScenarioInput in = scenario_input(path, text, set);
  const auto obj = parse_objective(objective);
  if (!obj) throw InputError("search: objective '" + objective + "' is not one of tokens_per_s, usd_per_token");
  SearchOptions options;
  options.run.threads = check_threads("search", threads);
  options.allow_tp_across_nodes = allow_tp_across_nodes;
  const SearchResult r = search_layouts(in.doc, in.file, options, *obj);
  json out = json::array();
  for (std::size_t i : r.ranked) out.push_back(to_json(r.points[i]));
  return json{{"counts", to_json(r.counts)}, {"points", out}}.dump();
}

// A CLI subcommand with --json, its standard output captured. InputError passes through.
std::string cli_json(int (*command)(const std::vector<std::string>&), std::vector<std::string> args) {
  static std::mutex mutex;
  py::gil_scoped_release release;
  std::lock_guard<std::mutex> lock(mutex);
  std::ostringstream captured;
  std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
  int rc = 0;
  try {
    rc = command(args);
  } catch (...) {
    std::cout.rdbuf(old);
    throw;
  }
  std::cout.rdbuf(old);
  if (rc != cs::sim::cli::kExitOk) throw InputError("exit code " + std::to_string(rc) + ": " + captured.str());
  return captured.str();
}

}  // namespace

PYBIND11_MODULE(_clustersim, m) {
  m.doc() = "clustersim's library, as the clustersim package calls it (see clustersim/__init__.py)";
  // InputError becomes the package's exception; __init__.py replaces it with clustersim.InputError.
  static py::exception<InputError> input_error(m, "_InputError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      py::list lines;
      for (const auto& s : e.messages()) lines.append(s);
      PyErr_SetObject(input_error.ptr(), lines.ptr());
    }
  });
  m.def("run", &run, py::arg("path"), py::arg("text"), py::arg("set"));
  m.def("sweep", &sweep, py::arg("path"), py::arg("text"), py::arg("set"), py::arg("axes"), py::arg("threads"));
  m.def("search", &search, py::arg("path"), py::arg("text"), py::arg("set"), py::arg("objective"),
        py::arg("threads"), py::arg("allow_tp_across_nodes"));
  // Files and option values are checked (python/core.hpp) before the subcommand's parser sees them.
  m.def("collective", [](const std::vector<std::string>& options) {
    return cli_json(&cs::sim::cli::collective, python::collective_args(options));
  });
  m.def("validate", [](const std::vector<std::string>& files, const std::vector<std::string>& options) {
    return cli_json(&cs::sim::cli::validate, python::validate_args(files, options));
  });
}
