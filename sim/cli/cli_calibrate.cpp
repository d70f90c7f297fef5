// clustersim calibrate fit INPUTS... -o profile.json [--gpu NAME] [--op NAME] [--ranks N] [--nodes N]
// clustersim calibrate import LOG... (cli_calibrate_import.cpp)
//
// Reads measurement files (nccl-tests logs, clustersim-bench JSON, the H200 reference format, published
// nccl.json), fits a calibration profile (calibrate/profile_fit.hpp) and writes it. Prints what was
// fitted and how well: per compute table the leave-one-out error, per collective group alpha, beta, R^2,
// MAPE and the worst point; import notes (skipped rows with their line numbers) go to stderr.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include <boost/program_options.hpp>

#include "calibrate/fit/comm_fit.hpp"
#include "calibrate/import/import.hpp"
#include "calibrate/profile_fit.hpp"
#include "models/compute/profile_json.hpp"
#include "sim/cli/cli.hpp"
#include "sim/cli/cli_log_hints.hpp"
#include "sim/cli/cli_options.hpp"
#include "sim/report/output_file.hpp"
#include "sim/base/input_error.hpp"
#include "sim/base/suggest.hpp"

namespace po = boost::program_options;

namespace cs::sim::cli {

namespace {

std::string fixed(double x, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
  return buf;
}

std::string pad(std::string s, std::size_t w) {
  if (s.size() < w) s.resize(w, ' ');
  return s;
}

int fit(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: clustersim calibrate fit INPUTS... -o profile.json [--gpu NAME] [--comm-gpu NAME ...]\n\n"
      "Fits a calibration profile from measurements: nccl-tests logs (all_reduce_perf and siblings, any\n"
      "version), clustersim-bench JSON, the h200-reference.json format, or a published nccl.json. The\n"
      "profile holds the compute model's efficiency tables and alpha/beta per collective; a scenario uses\n"
      "it through its \"calibration\" key. --op/--ranks/--nodes/--gpu fill in what an nccl-tests log does not\n"
      "say (check a log first with clustersim calibrate import).\n\noptions");
  opts.add_options()("help,h", "show this help")
      ("output,o", po::value<std::string>()->value_name("FILE"), "profile to write (required)")
      ("gpu", po::value<std::string>()->value_name("NAME"),
       "catalog GPU the measurements ran on: the compute ones, and nccl-tests logs without device lines "
       "(default: from the file's device name)")
      ("comm-gpu", po::value<std::vector<std::string>>()->composing()->value_name("NAME"),
       "fit only the collective measurements made on this catalog GPU (repeatable; default: all)");
  add_log_hint_options(opts);
  po::variables_map vm;
  if (!parse_options(args, opts, "inputs", -1, vm)) return kExitOk;
  if (!vm.count("inputs")) throw InputError(with_usage("clustersim calibrate fit: no measurement files", opts, "calibrate fit"));
  if (!vm.count("output")) throw InputError(with_usage("clustersim calibrate fit: missing -o profile.json", opts, "calibrate fit"));
  const models::GpuSpec* gpu = nullptr;
  if (vm.count("gpu")) {
    const std::string name = vm["gpu"].as<std::string>();
    gpu = models::find_gpu(name);
    if (!gpu) {
      throw InputError("--gpu: " + unknown_gpu(name, models::gpu_names()));
    }
  }
  const std::string out = vm["output"].as<std::string>();
  check_writable(out, vm["inputs"].as<std::vector<std::string>>());  // not a folder, FIFO or one of the inputs

  const calibrate::NcclTestsHints hints = log_hints(vm, "calibrate fit", gpu ? gpu->name : std::string());
  calibrate::MeasurementSet set = calibrate::import_files(vm["inputs"].as<std::vector<std::string>>(), hints);
  if (vm.count("comm-gpu")) {
    const auto keep = vm["comm-gpu"].as<std::vector<std::string>>();
    for (const auto& k : keep)
      if (!models::find_gpu(k)) throw InputError("--comm-gpu: unknown GPU \"" + k + "\"");
    std::vector<calibrate::CommMeasurement> kept;
    std::size_t dropped = 0;
    for (auto& m : set.comm) {
      if (std::find(keep.begin(), keep.end(), calibrate::gpu_of(m)) != keep.end()) kept.push_back(std::move(m));
      else ++dropped;
    }
    set.comm = std::move(kept);
    if (dropped) set.notes.push_back(std::to_string(dropped) + " collective measurements on other GPUs left out (--comm-gpu)");
  }
  const calibrate::ProfileFit result = calibrate::fit_profile(set, gpu);
  for (const auto& n : result.notes) std::cerr << "note: " << n << "\n";

  const auto& p = result.profile;
  std::cout << "GPU: " << p.gpu << "\n";
  if (p.compute) {
    const auto& c = *p.compute;
    std::cout << "compute: " << c.gemm.size() << " GEMM, " << c.attention.size() << " attention, "
              << c.memory_bound.size() << " memory-bound points; launch overhead " << fixed(c.launch_overhead_us, 2)
              << " us; fp8/bf16 efficiency ratio " << fixed(c.fp8_gemm_speedup_efficiency, 3) << "\n";
    if (c.attention_flash2)
      std::cout << "FlashAttention-2: " << c.attention_flash2->points.size() << " attention points; e_max forward "
                << fixed(c.attention_flash2->fwd.peak_efficiency, 3) << ", backward "
                << fixed(c.attention_flash2->bwd.peak_efficiency, 3) << " (native kernel: "
                << fixed(c.attention_fwd.peak_efficiency, 3) << ", " << fixed(c.attention_bwd.peak_efficiency, 3) << ")\n";
  }
  if (!p.comm.fits.empty()) {
    std::cout << "\n" << pad("gpu", 10) << pad("collective", 16) << pad("algorithm", 10) << pad("ranks", 6) << pad("level", 8)
              << pad("alpha_us", 10) << pad("beta_GBps", 11) << pad("R2", 7) << "points\n";
    for (const auto& f : p.comm.fits)
      std::cout << pad(f.gpu, 10) << pad(std::string(models::to_string(f.collective)), 16) << pad(f.algorithm, 10)
                << pad(std::to_string(f.ranks), 6) << pad(std::string(models::to_string(f.level)), 8)
                << pad(fixed(f.alpha_us, 2), 10) << pad(fixed(f.beta_GBps, 2), 11) << pad(fixed(f.r2, 3), 7)
                << f.points << "\n";
  }
  std::cout << "\nfit quality:\n";
  for (const auto& q : p.fit_quality)
    std::cout << "  " << pad(q.group, 46) << pad(std::to_string(q.points), 5) << " MAPE " << pad(fixed(q.mape * 100, 1) + "%", 7)
              << " worst " << (q.worst_error >= 0 ? "+" : "") << fixed(q.worst_error * 100, 1) << "% " << q.worst << "\n";
  try {
    models::write_profile(p, out);
  } catch (const std::runtime_error& e) {
    throw InputError(e.what());
  }
  std::cout << "\nwrote " << out << "\n";
  return kExitOk;
}

}  // namespace

int calibrate(const std::vector<std::string>& args) {
  if (args.empty())
    throw InputError("clustersim calibrate: missing subcommand (usage: clustersim calibrate fit INPUTS... -o profile.json "
                     "[--gpu NAME]; see clustersim calibrate --help)");
  if (args[0] == "--help" || args[0] == "-h") {
    std::cout << "usage: clustersim calibrate fit INPUTS... -o profile.json [--gpu NAME]\n"
                 "       clustersim calibrate import LOG... [--op NAME] [--ranks N] [--nodes N] [--gpu NAME] [--json]\n\n"
                 "subcommands:\n  fit     fit a calibration profile from measurements (see calibrate fit --help)\n"
                 "  import  show what nccl-tests logs hold and which lines are skipped (see calibrate import --help)\n";
    return kExitOk;
  }
  if (args[0] == "fit") return fit(std::vector<std::string>(args.begin() + 1, args.end()));
  if (args[0] == "import") return calibrate_import(std::vector<std::string>(args.begin() + 1, args.end()));
  throw InputError("clustersim calibrate: unknown subcommand \"" + args[0] + "\" (expected \"fit\" or \"import\")");
}

}  // namespace cs::sim::cli
