// clustersim calibrate import LOG... [--op NAME] [--ranks N] [--nodes N] [--gpu NAME] [--json]
//
// Reads nccl-tests logs as `calibrate fit` and `validate` do (calibrate/import/nccl_tests_log.hpp) and says
// what it found: per run the collective, ranks, nodes, GPU and algorithm with where each came from, the
// rows and measurements, and every skipped line with its line number and why. Nothing is written; the
// same files and options then go to `calibrate fit`. Exit 0 when every file has a usable measurement, 2
// (with each file's problems) otherwise.
#include <algorithm>
#include <iostream>
#include <set>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "calibrate/import/import.hpp"
#include "calibrate/import/nccl_tests_log.hpp"
#include "models/compute/comm_profile.hpp"
#include "models/hardware/gpu_catalog.hpp"
#include "sim/base/input_error.hpp"
#include "sim/base/suggest.hpp"
#include "sim/cli/cli.hpp"
#include "sim/cli/cli_log_hints.hpp"
#include "sim/cli/cli_options.hpp"
#include "sim/files/printable.hpp"

namespace po = boost::program_options;

namespace cs::sim::cli {

void add_log_hint_options(po::options_description& opts) {
  opts.add_options()
      ("op", po::value<std::string>()->value_name("NAME"),
       "collective of nccl-tests logs that do not name it (all_reduce, all_gather, reduce_scatter, all_to_all, "
       "broadcast, send_recv; default: from the log, else its file name)")
      ("ranks", po::value<int>()->value_name("N"),
       "rank count of nccl-tests logs without '#  Rank' or NCCL INFO nRanks lines")
      ("nodes", po::value<int>()->value_name("N"),
       "node count of nccl-tests logs without '#  Rank' or NCCL INFO nNodes lines (default 1)");
}

calibrate::NcclTestsHints log_hints(const po::variables_map& vm, const std::string& command, const std::string& gpu) {
  calibrate::NcclTestsHints h;
  const std::string at = "clustersim " + command + ": ";
  if (vm.count("op")) {
    const std::string name = vm["op"].as<std::string>();
    h.collective = calibrate::collective_from_name(name);
    if (!h.collective)
      throw InputError(at + "--op \"" + name + "\": not a collective (expected all_reduce, all_gather, reduce_scatter, "
                            "all_to_all, broadcast or send_recv)");
  }
  if (vm.count("ranks")) {
    h.ranks = vm["ranks"].as<int>();
    if (h.ranks < 2 || h.ranks > (1 << 20))
      throw InputError(at + "--ranks " + std::to_string(h.ranks) + ": expected 2 to 1048576 ranks");
  }
  if (vm.count("nodes")) {
    h.nodes = vm["nodes"].as<int>();
    if (h.nodes < 1 || h.nodes > (1 << 20))
      throw InputError(at + "--nodes " + std::to_string(h.nodes) + ": expected 1 to 1048576 nodes");
    if (h.ranks > 0 && h.nodes > h.ranks)
      throw InputError(at + "--nodes " + std::to_string(h.nodes) + " exceeds --ranks " + std::to_string(h.ranks));
  }
  h.gpu = gpu;
  return h;
}

namespace {

std::string with_source(const std::string& value, const std::string& from) {
  return from.empty() ? value : value + " (" + from + ")";
}

// The measurements a run gave: the points whose "file:line" is one of its rows.
std::size_t measurements_of(const calibrate::NcclTestsRun& run, const calibrate::MeasurementSet& set,
                            const std::string& file) {
  std::set<std::string> lines;
  for (const auto& r : run.rows) lines.insert(file + ":" + std::to_string(r.line));
  return static_cast<std::size_t>(
      std::count_if(set.comm.begin(), set.comm.end(), [&](const calibrate::CommMeasurement& m) { return lines.count(m.where) > 0; }));
}

}  // namespace

int calibrate_import(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: clustersim calibrate import LOG... [--op NAME] [--ranks N] [--nodes N] [--gpu NAME] [--json]\n\n"
      "Reads nccl-tests logs (any version; srun --label and Open MPI --tag-output prefixes, NCCL INFO/WARN lines\n"
      "anywhere, CRLF, several runs a file, old formats, -G runs, headless pastes) as calibrate fit and validate\n"
      "do, and prints per run what it is (collective, ranks, nodes, GPU, each with where it came from) and every\n"
      "skipped line with its line number and why. --op/--ranks/--nodes/--gpu fill in what a log does not say.\n\n"
      "options");
  with_help(opts)("gpu", po::value<std::string>()->value_name("NAME"), "catalog GPU of nccl-tests logs without device lines")
      ("json", "print one JSON object instead of the summary");
  add_log_hint_options(opts);
  po::variables_map vm;
  if (!parse_options(args, opts, "inputs", -1, vm)) return kExitOk;
  if (!vm.count("inputs")) throw InputError(with_usage("clustersim calibrate import: no log files", opts, "calibrate import"));
  std::string gpu;
  if (vm.count("gpu")) {
    gpu = vm["gpu"].as<std::string>();
    if (!models::find_gpu(gpu)) throw InputError("clustersim calibrate import: --gpu: " + unknown_gpu(gpu, models::gpu_names()));
  }
  const calibrate::NcclTestsHints hints = log_hints(vm, "calibrate import", gpu);
  const bool json_out = vm.count("json") > 0;

  std::vector<std::string> errors;
  nlohmann::ordered_json file_docs = nlohmann::ordered_json::array();
  std::size_t total = 0;
  for (const auto& path : vm["inputs"].as<std::vector<std::string>>()) {
    calibrate::NcclTestsLog log;
    calibrate::MeasurementSet set;
    try {
      log = calibrate::read_nccl_tests_log(path, hints);
      set = calibrate::nccl_tests_measurements(log);
    } catch (const InputError& e) {
      errors.insert(errors.end(), e.messages().begin(), e.messages().end());
      continue;
    }
    total += set.comm.size();
    nlohmann::ordered_json runs = nlohmann::ordered_json::array();
    if (!json_out) {
      std::cout << cs::files::printable_line(path) << ": " << set.comm.size() << " measurements from " << log.row_count()
                << " rows in " << log.runs.size() << " run" << (log.runs.size() == 1 ? "" : "s") << "\n";
      if (!log.launchers.empty()) {
        std::cout << "  launcher prefixes removed:";
        for (std::size_t i = 0; i < log.launchers.size(); ++i) std::cout << (i ? ", " : " ") << log.launchers[i];
        std::cout << "\n";
      }
    }
    for (const auto& run : log.runs) {
      const std::string collective = run.collective ? std::string(models::to_string(*run.collective))
                                     : run.collective_name.empty() ? "unknown" : run.collective_name;
      const std::size_t points = measurements_of(run, set, path);
      if (json_out) {
        runs.push_back({{"first_line", run.first_line},
                        {"collective", collective},
                        {"collective_from", run.collective_from},
                        {"ranks", run.ranks},
                        {"ranks_from", run.ranks_from},
                        {"nodes", std::max(1, run.nodes)},
                        {"nodes_from", run.nodes_from},
                        {"gpu", run.gpu},
                        {"gpu_from", run.gpu_from},
                        {"algorithm", run.algorithm},
                        {"cuda_graph_launches", run.cuda_graph_launches},
                        {"rows", run.rows.size()},
                        {"measurements", points}});
        continue;
      }
      std::cout << "  run at line " << run.first_line << ": " << with_source(collective, run.collective_from) << ", "
                << with_source(run.ranks > 0 ? std::to_string(run.ranks) + " ranks" : "ranks unknown", run.ranks_from)
                << ", " << with_source(std::to_string(std::max(1, run.nodes)) + " node" + (run.nodes > 1 ? "s" : ""),
                                       run.nodes_from.empty() ? "not stated" : run.nodes_from)
                << ", GPU " << with_source(run.gpu.empty() ? "unknown" : cs::files::printable_line(run.gpu), run.gpu_from)
                << ", algorithm " << cs::files::printable_line(run.algorithm);
      if (run.cuda_graph_launches > 0) std::cout << ", CUDA graphs (-G " << run.cuda_graph_launches << ")";
      std::cout << "\n    " << run.rows.size() << " rows";
      if (!run.rows.empty())
        std::cout << " (lines " << run.rows.front().line << "-" << run.rows.back().line << ")";
      std::cout << ", " << points << " measurements\n";
    }
    if (json_out) {
      nlohmann::ordered_json skipped = nlohmann::ordered_json::array();
      for (const auto& n : set.notes) skipped.push_back(cs::files::printable_line(n));
      file_docs.push_back({{"file", path}, {"launchers", log.launchers}, {"runs", runs}, {"skipped", skipped},
                       {"measurements", set.comm.size()}});
    } else if (!set.notes.empty()) {
      std::cout << "  skipped:\n";
      for (const auto& n : set.notes) std::cout << "    " << cs::files::printable_line(n) << "\n";
    }
  }
  if (!errors.empty()) throw InputError(std::move(errors));
  if (json_out) {
    std::cout << nlohmann::ordered_json{{"files", file_docs}, {"measurements", total}}.dump(2) << "\n";
  }
  return kExitOk;
}

}  // namespace cs::sim::cli
