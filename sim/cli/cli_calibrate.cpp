// clustersim calibrate fit INPUTS... -o profile.json [--gpu NAME] [--op NAME] [--ranks N] [--nodes N]
//                          [--scenario S.json]
// clustersim calibrate import LOG... (cli_calibrate_import.cpp)
//
// Reads measurement files (nccl-tests logs, clustersim-bench JSON, the H200 reference format, published
// nccl.json), fits a calibration profile (calibrate/profile_fit.hpp) and writes it. Per collective group
// it also fits the NCCL model's own constants (sim/network/nccl_model_fit.hpp) on the cluster the
// measurement ran on: --scenario's, or for a single-node group without one a node of the measured GPU;
// a group it cannot attribute to the algorithm NCCL ran is left unfitted, with a note (misplaced below).
// Prints what was fitted and how well: per compute table the leave-one-out error, per collective group
// alpha, beta, R^2, MAPE and the worst point, and for the NCCL constants the residual per size with the
// default and the fitted constants, the worst points and the sizes left out of the bandwidth fit
// (latency-bound) or out of the import (#wrong); import notes go to stderr.
#include <algorithm>
#include <cmath>
#include <optional>
#include <cstdio>
#include <span>
#include <iostream>

#include <boost/program_options.hpp>

#include "calibrate/fit/comm_fit.hpp"
#include "calibrate/import/import.hpp"
#include "calibrate/profile_fit.hpp"
#include "models/compute/profile_json.hpp"
#include "sim/cli/cli.hpp"
#include "sim/cli/cli_log_hints.hpp"
#include "sim/cli/cli_options.hpp"
#include "sim/cli/comm_calibration.hpp"
#include "sim/network/nccl_model_fit.hpp"
#include "sim/scenario/scenario.hpp"
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

// The node a single-node measurement ran on when no --scenario names one: single_node_cluster with NVLS
// where the scenario loader enables it by default (an NVSwitch node of a GPU whose switch reduces,
// sim/scenario/scenario.cpp: nvswitch_has_nvls), so that a log which states NCCL_ALGO=NVLS can be placed.
topo::ClusterSpec measured_node(const models::GpuSpec& gpu, int ranks) {
  topo::ClusterSpec spec = single_node_cluster(gpu, ranks);
  spec.intra.nvls = spec.intra.generation_from_gpu && gpu.nvswitch_has_nvls();
  return spec;
}

// The fit prices each size with the algorithm the model picks for it, so that pick must be the one NCCL
// ran (issue 34: the H100 NVLS log fitted as a ring scaled the ring's bandwidth x1.33, and the profile
// then predicted 632 GB/s busbw for the 474 it measured). Returns why the group cannot be placed, empty
// when it can: an algorithm the log states (NCCL_ALGO) that the model cannot run on the cluster at some
// size (choose_algorithm would fall back to another one); without --scenario (`on` names the measured
// node) and without one NCCL_ALGO (`stated`: "default", or a list that leaves NVLS in), a size whose pick
// depends on whether NVLS was enabled on the node -- the log does not say (driver, fabric manager,
// NCCL_NVLS_ENABLE), so the fit cannot tell NVLS from a ring.
std::string misplaced(models::CollectiveKind kind, std::span<const NcclFitSample> samples, const topo::ClusterSpec& spec,
                      const std::vector<int>& gpus, const std::string& stated, const std::string& forced,
                      const std::string& on, bool scenario) {
  const GroupGeometry geo = group_geometry(topo::Cluster(spec), gpus);
  topo::ClusterSpec off = spec;
  off.intra.nvls = false;
  const GroupGeometry geo_off = group_geometry(topo::Cluster(off), gpus);
  for (const auto& s : samples) {
    if (!(s.size_bytes > 0)) continue;
    const NcclAlgorithm a = choose_algorithm(kind, s.size_bytes, geo, forced).algorithm;
    if (!forced.empty() && to_string(a) != forced)
      return "the log sets NCCL_ALGO=" + forced + ", which the NCCL model cannot run on " + on + " at " +
             size_label(s.size_bytes);
    const NcclAlgorithm b = choose_algorithm(kind, s.size_bytes, geo_off, forced).algorithm;
    if (forced.empty() && !scenario && a != b)
      return (stated == "default" ? std::string("the log does not set NCCL_ALGO")
                                  : "the log's NCCL_ALGO=" + stated + " names more than one algorithm") +
             ", and at " + size_label(s.size_bytes) + " NCCL runs " +
             to_string(a) + " on " + on + " with NVLS enabled, " + to_string(b) +
             " without: name the cluster with --scenario S.json or run with NCCL_ALGO set";
  }
  return {};
}

// An NCCL_ALGO list or exclusion ("ring,tree", "^nvls": a comma-separated list, one starting with ^ names the
// algorithms left out; NCCL user guide, Environment Variables, NCCL_ALGO, docs.nvidia.com/deeplearning/nccl/
// user-guide/docs/env.html) is no single algorithm to fit, but it can rule NVLS out.
bool nvls_ruled_out(const std::string& stated) {
  if (stated.empty() || stated == "default") return false;
  const bool exclude = stated[0] == '^';
  bool named = false;
  std::size_t from = exclude ? 1 : 0;
  while (from <= stated.size()) {
    const std::size_t comma = std::min(stated.find(',', from), stated.size());
    named = named || stated.substr(from, comma - from) == "nvls";
    from = comma + 1;
  }
  return exclude ? named : !named;
}

// Fits the NCCL model's constants of every collective group (sim/network/nccl_model_fit.hpp) into the
// profile's entries, and returns the fit-quality report. Groups whose cluster is not known get a note.
std::string fit_nccl(const calibrate::MeasurementSet& set, calibrate::ProfileFit& result, const Scenario* scenario) {
  std::string out;
  std::vector<std::string> wrong;  // the importer's notes on rows with #wrong != 0
  for (const auto& n : set.notes)
    if (n.find("#wrong") != std::string::npos) wrong.push_back(n);
  for (std::size_t i = 0; i < result.comm_groups.size(); ++i) {
    const auto& group = result.comm_groups[i];
    const auto& first = set.comm[group.members.front()];
    std::optional<topo::ClusterSpec> spec;
    std::string on = "--scenario's cluster";
    if (scenario) {
      spec = scenario->cluster;
    } else if (first.nodes == 1) {
      if (const models::GpuSpec* g = calibrate::guess_gpu(first.gpu)) {
        spec = measured_node(*g, first.ranks);
        on = "one " + spec->intra.name + " node of " + g->name;
      }
    }
    if (spec && nvls_ruled_out(first.algorithm)) spec->intra.nvls = false;
    const std::string name = calibrate::group_name(group.fit);
    auto not_fitted = [&](const std::string& why) {
      out += "\nNCCL model constants, " + name + ": not fitted (" + why + "); the profile keeps its alpha-beta summary only\n";
    };
    std::vector<int> gpus = spec ? measurement_gpus(*spec, first.ranks, first.nodes) : std::vector<int>{};
    if (gpus.empty()) {
      not_fitted(spec ? "its ranks do not fit --scenario's cluster" : "name the cluster it ran on with --scenario S.json");
      continue;
    }
    std::vector<NcclFitSample> samples;
    for (auto m : group.members) samples.push_back({set.comm[m].size_bytes, set.comm[m].time_s, set.comm[m].where});
    std::string forced;
    if (first.algorithm == "ring" || first.algorithm == "tree" || first.algorithm == "nvls") forced = first.algorithm;
    if (const std::string why = misplaced(first.collective, samples, *spec, gpus, first.algorithm, forced, on, scenario != nullptr);
        !why.empty()) {
      not_fitted(why);
      result.notes.push_back(first.where.substr(0, first.where.rfind(':')) + ": " + name +
                             ": NCCL model constants not fitted: " + why);
      continue;
    }
    const topo::Cluster cluster(*spec);
    const GroupGeometry geo = group_geometry(cluster, gpus);
    NcclFit fit;
    try {
      fit = fit_nccl_constants(first.collective, samples, geo, forced);
    } catch (const InputError& e) {
      out += "\nNCCL model constants, " + name + ": not fitted (" + e.what() + ")\n";
      continue;
    }
    result.profile.comm.fits[i].nccl = to_profile(fit, geo.nodes, spec->nic.name);
    const auto& c = fit.constants;
    char line[480];
    std::snprintf(line, sizeof line,
                  "\nNCCL model constants, %s (%s, %d node(s)%s):\n  bandwidth x%.4g Simple, x%.4g LL128, x%.4g LL"
                  "%s;\n  hop latency %+.3g us%s; ring pipeline chunk %.3g MB (LL %.3g MB)\n  MAPE over every size: default constants %.1f%%, fitted %.1f%%\n",
                  name.c_str(), to_string(fit.scope), geo.nodes, geo.nodes > 1 ? (", " + spec->nic.name).c_str() : "",
                  c.bandwidth_scale[2], c.bandwidth_scale[1], c.bandwidth_scale[0],
                  fit.protocol_measured == std::array<bool, 3>{true, true, true} ? "" : " (unmeasured protocols: nearest measured)",
                  c.hop_latency_extra_us, fit.latency_fitted ? "" : " (no latency-bound size: the table's)",
                  c.ring_chunk_bytes / 1e6, c.ring_chunk_bytes_ll / 1e6, 100 * fit.default_mape, 100 * fit.mape);
    out += line;
    out += "  residual per size (time predicted / measured - 1):\n";
    std::snprintf(line, sizeof line, "    %-10s %12s %12s %9s %12s %9s  %-14s %s\n", "size", "measured_us", "default_us",
                  "error", "fitted_us", "error", "algo/proto", "fitted on");
    out += line;
    for (const auto& pt : fit.points) {
      std::snprintf(line, sizeof line, "    %-10s %12.2f %12.2f %+8.1f%% %12.2f %+8.1f%%  %-14s %s\n",
                    size_label(pt.size_bytes).c_str(), pt.measured_s * 1e6, pt.default_s * 1e6, 100 * pt.default_error(),
                    pt.fitted_s * 1e6, 100 * pt.error(),
                    (std::string(to_string(pt.algorithm)) + "/" + to_string(pt.protocol)).c_str(),
                    !pt.kept ? "left out (outlier)" : pt.bandwidth_bound ? "bandwidth-bound" : "latency-bound");
      out += line;
    }
    std::vector<std::size_t> order(fit.points.size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return std::abs(fit.points[a].error()) > std::abs(fit.points[b].error());
    });
    out += "  worst points:";
    for (std::size_t k = 0; k < std::min<std::size_t>(3, order.size()); ++k) {
      const auto& pt = fit.points[order[k]];
      std::snprintf(line, sizeof line, "%s %s %+.1f%% (%s)", k ? "," : "", size_label(pt.size_bytes).c_str(),
                    100 * pt.error(), pt.where.c_str());
      out += line;
    }
    out += "\n";
    std::size_t latency = 0;
    for (const auto& pt : fit.points) latency += pt.bandwidth_bound || !pt.kept ? 0 : 1;
    out += "  sizes ignored: " + std::to_string(latency) + " latency-bound (they pin the hop latency, not the bandwidth)";
    out += std::string("; ") + (fit.ignored.empty() ? "no outlier" : std::to_string(fit.ignored.size()) + " left out:") + "\n";
    for (const auto& ig : fit.ignored) out += "    " + ig + "\n";
    out += wrong.empty() ? "  no row with #wrong\n" : "  rows with #wrong, left out at import:\n";
    for (const auto& w : wrong) out += "    " + w + "\n";
  }
  return out;
}

// A fit never writes a profile that `run` refuses: the profile goes through the loader's own checks
// (models::parse_profile, the bounds of every entry) before it is written.
void check_loadable(const models::CalibrationProfile& profile, const std::string& out) {
  try {
    models::parse_profile(models::profile_to_json(profile), out);
  } catch (const InputError& e) {
    std::vector<std::string> lines;
    for (const auto& m : e.messages())
      lines.push_back("clustersim calibrate fit: not written, the profile loader would refuse it: " + m);
    throw InputError(std::move(lines));
  }
}

int fit(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: clustersim calibrate fit INPUTS... -o profile.json [--gpu NAME] [--comm-gpu NAME ...]\n"
      "                                [--scenario S.json]\n\n"
      "Fits a calibration profile from measurements: nccl-tests logs (all_reduce_perf and siblings, any\n"
      "version), clustersim-bench JSON, the h200-reference.json format, or a published nccl.json. The\n"
      "profile holds the compute model's efficiency tables and, per collective, the NCCL model's fitted\n"
      "constants (bandwidth scale per protocol, latency per hop) and an alpha/beta summary; a scenario uses\n"
      "it through its \"calibration\" key. --op/--ranks/--nodes/--gpu fill in what an nccl-tests log does not\n"
      "say (check a log first with clustersim calibrate import).\n\noptions");
  with_help(opts)("output,o", po::value<std::string>()->value_name("FILE"), "profile to write (required)")
      ("gpu", po::value<std::string>()->value_name("NAME"),
       "catalog GPU the measurements ran on: the compute ones, and nccl-tests logs without device lines "
       "(default: from the file's device name)")
      ("comm-gpu", po::value<std::vector<std::string>>()->composing()->value_name("NAME"),
       "fit only the collective measurements made on this catalog GPU (repeatable; default: all)")
      ("scenario", po::value<std::string>()->value_name("S.json"),
       "the cluster the collectives were measured on, to fit the NCCL model's constants against (needed for\n"
       "multi-node logs; default for single-node ones: an NVSwitch node of the measured GPU)");
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
  // Not a folder, FIFO or one of the inputs: the measurements, the --scenario and the files it names.
  std::vector<files::InputFile> inputs;
  for (const auto& in : vm["inputs"].as<std::vector<std::string>>()) inputs.push_back({in, {}});
  if (vm.count("scenario"))
    for (auto& in : scenario_inputs(read_json_file(vm["scenario"].as<std::string>()), vm["scenario"].as<std::string>()))
      inputs.push_back(std::move(in));
  check_writable("-o", out, inputs);

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
  std::optional<Scenario> scenario;
  if (vm.count("scenario")) scenario = load_scenario(vm["scenario"].as<std::string>());
  calibrate::ProfileFit result = calibrate::fit_profile(set, gpu);
  const std::string nccl_report = fit_nccl(set, result, scenario ? &*scenario : nullptr);
  for (const auto& n : result.notes) std::cerr << "note: " << n << "\n";
  check_loadable(result.profile, out);

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
  std::cout << nccl_report;
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
