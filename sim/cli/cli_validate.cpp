// clustersim validate MEASURED... [--scenario S.json] [--profile P.json] [--gpu NAME] [--json]
//                                 [--leave-one-out] [--worst N]
// clustersim validate published-train.json... --by group [--markdown | --json] [--baseline B.json]
//
// Every measured point beside the simulator's prediction: compute kernels through the compute model
// (calibrate/check/validate.hpp), collectives through the network model's closed form for one collective alone
// on the cluster (predict_collective_s below). Then per group and overall: points, MAPE, median error,
// worst point. The cluster for collectives is --scenario's; without one, a single NVSwitch node of the
// log's rank count with the GPU its device lines name (multi-node logs then need --scenario).
// Published nccl-tests figures (calibrate/published/nccl.json) are run instead on the cluster each was
// measured on (sim/validation/nccl_validation.hpp, the mapping tests/sim/test_nccl_validation.cpp holds), through the
// flow network as `clustersim collective`; points that cannot be expressed are listed as skipped notes.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <numeric>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "calibrate/fit/comm_fit.hpp"
#include "calibrate/import/import.hpp"
#include "calibrate/check/validate.hpp"
#include "models/compute/profile_json.hpp"
#include "sim/cli/cli.hpp"
#include "sim/cli/cli_log_hints.hpp"
#include "sim/cli/cli_options.hpp"
#include "sim/cli/comm_calibration.hpp"
#include "sim/files/file_error.hpp"
#include "sim/files/input_file.hpp"
#include "sim/files/json_file.hpp"
#include "sim/files/printable.hpp"
#include "sim/base/input_error.hpp"
#include "sim/base/suggest.hpp"
#include "sim/network/nccl_model.hpp"
#include "sim/validation/nccl_validation.hpp"
#include "sim/scenario/scenario.hpp"
#include "topologies/link_catalog.hpp"
#include "sim/base/units.hpp"

namespace po = boost::program_options;

namespace cs::sim::cli {

namespace {

// The one place a measured collective is predicted: the collective alone on `cluster` over `gpus`, with
// the algorithm NCCL would pick (or the one the measurement names), with the default NCCL constants or a
// profile's fitted ones (`calibration`). Alone on the cluster the flow network gives the same time.
double predict_collective_s(const calibrate::CommMeasurement& m, const topo::Cluster& cluster,
                            const std::vector<int>& gpus, const NcclCalibration* calibration = nullptr) {
  const GroupGeometry g = group_geometry(cluster, gpus);
  std::string forced;
  if (m.algorithm == "ring" || m.algorithm == "tree" || m.algorithm == "nvls") forced = m.algorithm;
  const AlgorithmChoice choice = choose_algorithm(m.collective, m.size_bytes, g, forced, calibration);
  return to_seconds(choice.duration);
}

// One measured collective predicted with the default constants and with the profile's.
struct SideBySide {
  std::string label, where;
  double busbw_factor = 1, size_bytes = 0, measured_s = 0, default_s = 0, profile_s = 0;
  double busbw(double t) const { return size_bytes / t * busbw_factor / 1e9; }
  // busbw error: predicted busbw / measured busbw - 1 = measured time / predicted time - 1.
  double default_error() const { return measured_s / default_s - 1; }
  double profile_error() const { return measured_s / profile_s - 1; }
};

std::string side_by_side_text(const std::vector<SideBySide>& rows, const std::string& profile) {
  std::string out = "\nbusbw error, default NCCL constants vs profile " + profile + ":\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-34s %12s %12s %9s %12s %9s\n", "point", "measured", "default", "error",
                "profile", "error");
  out += line;
  double d = 0, p = 0;
  for (const auto& r : rows) {
    std::snprintf(line, sizeof line, "  %-34s %9.3f GB %9.3f GB %+8.1f%% %9.3f GB %+8.1f%%\n", r.label.c_str(),
                  r.busbw(r.measured_s), r.busbw(r.default_s), 100 * r.default_error(), r.busbw(r.profile_s),
                  100 * r.profile_error());
    out += line;
    d += std::abs(r.default_error());
    p += std::abs(r.profile_error());
  }
  const double n = rows.empty() ? 1.0 : static_cast<double>(rows.size());
  std::snprintf(line, sizeof line, "  mean |busbw error|: default %.1f%%, profile %.1f%% (%zu points)\n", 100 * d / n,
                100 * p / n, rows.size());
  return out + line;
}

// A measurement file's JSON when it is a JSON array (the published-figures files); nothing for anything else,
// which the importer then reads and reports on (a FIFO or device is never opened for reading here).
std::optional<nlohmann::json> published_array(const std::string& path) {
  if (!files::is_readable_regular_file(path)) return std::nullopt;
  std::string text;
  try {
    text = files::read_input_file(path, files::kMaxMeasurementBytes, "measurement file", "cannot open measurement file");
  } catch (const files::FileError&) {
    return std::nullopt;
  }
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] != '[') return std::nullopt;
  return files::parse_json_value(text);
}

// A JSON array whose entries are {"kind": "training", ...}: calibrate/published/published-train.json.
bool is_published_training(const std::string& path) {
  const auto doc = published_array(path);
  return doc && doc->is_array() && !doc->empty() && (*doc)[0].is_object() &&
         (*doc)[0].value("kind", std::string()) == "training";
}

// calibrate/published/nccl.json (an array of {"kind": "nccl", ...}): run through the published-setup clusters
// of sim/validation/nccl_validation.hpp, not the importer's single-node guess.
bool is_published_nccl_file(const std::string& path) {
  const auto doc = published_array(path);
  return doc && is_published_nccl(*doc);
}

std::string comm_group(const calibrate::CommMeasurement& m) {
  std::string g = std::string(models::to_string(m.collective)) + " ";
  if (m.algorithm != "default") g += m.algorithm + " ";
  return g + std::to_string(m.ranks) + " ranks " + std::string(models::to_string(calibrate::level_of(m)));
}


// The setup's fabric in a group name: "nvswitch 450 GB/s NVLS", "pcie-nvlink-bridge", "2x8, 8 ib-hdr200".
std::string setup_label(const topo::ClusterSpec& c) {
  char bw[32];
  std::snprintf(bw, sizeof bw, " %g GB/s", c.intra.gpu_bandwidth_GBps);
  std::string s = c.intra.name + (c.intra.generation_from_gpu ? bw : "") + (c.intra.nvls ? " NVLS" : "");
  if (c.nodes > 1) s += ", " + std::to_string(c.nodes) + " nodes x " + std::to_string(c.nics_per_node) + " " + c.nic.name;
  return s;
}

// Published nccl.json points: rows for the held ones, notes (with the numbers) for the skipped ones.
// `within` counts held points whose busbw is within their tolerance, as tests/sim/test_nccl_validation.cpp.
void validate_published_nccl(const std::string& path, std::vector<calibrate::ValidationRow>& rows,
                             std::vector<std::string>& notes, int& held, int& within) {
  std::vector<NcclValidationPoint> points;
  try {
    points = nccl_validation_points(files::parse_json(
        files::read_input_file(path, files::kMaxMeasurementBytes, "measurement file", "cannot open measurement file"), path));
  } catch (const files::FileError& e) {
    throw InputError(e.messages());
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path + ": " + e.what());
  }
  for (const auto& p : points) {
    const CollectiveRunResult r = run_nccl_point(p);
    const double simulated = simulated_GBps(p, r);
    char numbers[160];
    std::snprintf(numbers, sizeof numbers, "simulated %.2f GB/s, published %.2f GB/s (%+.1f%%)", simulated,
                  p.published_GBps, 100 * (simulated / p.published_GBps - 1));
    const std::string label = std::string(models::to_string(p.kind)) + " " + size_label(p.bytes) +
                              (p.algbw ? " algbw" : "") + (p.per_nics > 1 ? " per NIC" : "");
    if (!p.skip.empty()) {
      notes.push_back(path + ": " + p.id + " " + p.what + " (" + label + ") skipped: " + p.skip + "; " + numbers);
      continue;
    }
    calibrate::ValidationRow row;
    row.group = std::string(models::to_string(p.kind)) + " " + (p.algorithm.empty() ? "" : p.algorithm + " ") +
                std::to_string(p.ranks) + " ranks " + (p.cluster.nodes > 1 ? "network" : "nvlink") + " (" +
                setup_label(p.cluster) + ")";
    row.label = label;
    row.where = path + ": " + p.id + " " + p.what;
    // The published figure as a time: busbw = algbw x factor, per NIC x NICs, algbw = size / time.
    const double published_algbw =
        p.published_GBps * p.per_nics / (p.algbw ? 1.0 : busbw_factor(p.kind, p.ranks));
    row.measured_s = p.bytes / (published_algbw * 1e9);
    row.predicted_s = to_seconds(r.time);
    rows.push_back(std::move(row));
    ++held;
    if (std::abs(simulated / p.published_GBps - 1) <= p.tolerance) ++within;
    else notes.push_back(path + ": " + p.id + " " + p.what + " (" + label + ") outside its " +
                         std::to_string(static_cast<int>(100 * p.tolerance + 0.5)) + "%: " + numbers);
  }
}

// --by group, --markdown and --baseline: the published-training kind's options, checked together.
TrainingValidateOptions training_validate_options(const po::variables_map& vm) {
  TrainingValidateOptions o;
  o.json = vm.count("json") > 0;
  o.markdown = vm.count("markdown") > 0;
  if (vm.count("by")) {
    if (vm["by"].as<std::string>() != "group")
      throw InputError("clustersim validate: --by: \"" + vm["by"].as<std::string>() + "\" is not a grouping; the one there is: group");
    o.by_group = true;
  }
  if (vm.count("baseline")) o.baseline = vm["baseline"].as<std::string>();
  if ((o.markdown || !o.baseline.empty()) && !o.by_group)
    throw InputError(std::string("clustersim validate: --") + (o.markdown ? "markdown" : "baseline") + " needs --by group");
  if (o.markdown && o.json) throw InputError("clustersim validate: --markdown and --json: give one of them");
  return o;
}

// The options of clustersim validate (the usage above them is validate's).
void add_validate_options(po::options_description& opts) {
  with_help(opts)("scenario", po::value<std::string>()->value_name("S.json"),
       "cluster for collectives (and GPU / calibration profile for compute)")
      ("profile", po::value<std::string>()->value_name("P.json"),
       "calibration profile for compute predictions; its fitted NCCL constants are compared with the defaults")
      ("gpu", po::value<std::string>()->value_name("NAME"),
       "catalog GPU of the compute measurements and of nccl-tests logs without device lines")
      ("json", "print one JSON object instead of the table")
      ("leave-one-out", "compute points: predict each from a profile fitted without it")
      ("worst", po::value<int>()->value_name("N"), "list only the N worst points (the summary covers all)")
      ("by", po::value<std::string>()->value_name("group"),
       "published training runs: one line per group of every file (points, MAPE, bias, worst, skipped)")
      ("markdown", "with --by group: a Markdown table (docs/validation.md's per-group section)")
      ("baseline", po::value<std::string>()->value_name("B.json"),
       "with --by group: check every group against a baseline (calibrate/published/fidelity-baseline.json); "
       "exit 1 when one got worse");
  add_log_hint_options(opts);
}

// Compute points: on --gpu's GPU, else the one the measurements' device names, else the scenario's.
void add_compute_rows(const po::variables_map& vm, const calibrate::MeasurementSet& set, const std::optional<Scenario>& scenario,
                      const models::ComputeProfile& compute_profile, std::vector<calibrate::ValidationRow>& rows) {
  const models::GpuSpec* gpu = nullptr;
  if (vm.count("gpu")) {
    gpu = models::find_gpu(vm["gpu"].as<std::string>());  // validate checked it
  } else if (auto* guessed = calibrate::guess_gpu(set.gpu)) {
    gpu = guessed;
  } else if (scenario) {
    gpu = &scenario->gpu;
  }
  if (!gpu)
    throw InputError(set.sources.front() + ": device \"" + set.gpu + "\" is not in the GPU catalog; name it with --gpu");
  auto compute_rows = vm.count("leave-one-out")
                          ? calibrate::validate_compute_leave_one_out(set.compute, *gpu, set.sm_count)
                          : calibrate::validate_compute(set.compute, *gpu, compute_profile);
  rows.insert(rows.end(), compute_rows.begin(), compute_rows.end());
}

// Collective points: one cluster per (GPU, ranks) without a scenario, the scenario's otherwise. With a
// profile's NCCL constants (`calibration`), each point also side by side with the defaults' prediction.
void add_collective_rows(const calibrate::MeasurementSet& set, const std::optional<Scenario>& scenario,
                         const NcclCalibration& calibration, std::vector<calibrate::ValidationRow>& rows,
                         std::vector<SideBySide>& side_by_side, std::vector<std::string>& notes) {
  std::map<std::pair<std::string, int>, topo::Cluster> clusters;
  std::shared_ptr<const topo::Cluster> scenario_cluster;  // cluster.topology_file's, or built from the spec
  if (scenario) scenario_cluster = make_cluster(*scenario);
  int skipped_multi_node = 0;
  for (const auto& m : set.comm) {
    const topo::Cluster* cluster = nullptr;
    std::vector<int> gpus;
    if (scenario_cluster) {
      gpus = measurement_gpus(scenario->cluster, m.ranks, m.nodes);
      if (gpus.empty()) {
        notes.push_back(m.where + ": " + std::to_string(m.ranks) + " ranks on " + std::to_string(m.nodes) +
                        " node(s) do not fit the scenario's cluster; skipped");
        continue;
      }
      cluster = scenario_cluster.get();
    } else {
      if (m.nodes > 1) {
        ++skipped_multi_node;
        continue;
      }
      const models::GpuSpec* gpu = calibrate::guess_gpu(m.gpu);
      if (!gpu) {
        gpu = models::find_gpu("H100-SXM");
        notes.push_back(m.where + ": GPU \"" + m.gpu + "\" is not in the catalog; predicted on an H100-SXM node");
      }
      auto key = std::make_pair(gpu->name, m.ranks);
      auto it = clusters.find(key);
      if (it == clusters.end()) it = clusters.emplace(key, topo::Cluster(single_node_cluster(*gpu, m.ranks))).first;
      cluster = &it->second;
      for (int r = 0; r < m.ranks; ++r) gpus.push_back(r);
    }
    calibrate::ValidationRow row;
    row.group = comm_group(m);
    row.label = std::string(models::to_string(m.collective)) + " " + size_label(m.size_bytes) +
                (m.in_place ? " in-place" : "");
    row.where = m.where;
    row.measured_s = m.time_s;
    row.predicted_s = predict_collective_s(m, *cluster, gpus);
    if (calibration.any())
      side_by_side.push_back({row.label, m.where, busbw_factor(m.collective, m.ranks), m.size_bytes, m.time_s,
                              row.predicted_s, predict_collective_s(m, *cluster, gpus, &calibration)});
    rows.push_back(std::move(row));
  }
  if (skipped_multi_node > 0)
    notes.push_back(std::to_string(skipped_multi_node) +
                    " multi-node collective points skipped: they need a cluster (--scenario S.json)");
}

// --json's comparison of the profile's NCCL constants with the defaults, point by point and on average.
nlohmann::ordered_json comm_profile_comparison_json(const std::string& comm_source, const std::vector<SideBySide>& side_by_side) {
  nlohmann::ordered_json block;
  block["profile"] = comm_source;
  block["points"] = nlohmann::ordered_json::array();
  double d = 0, p = 0;
  for (const auto& r : side_by_side) {
    block["points"].push_back({{"label", r.label}, {"where", r.where}, {"measured_busbw_GBps", r.busbw(r.measured_s)},
                               {"default_busbw_GBps", r.busbw(r.default_s)}, {"default_error", r.default_error()},
                               {"profile_busbw_GBps", r.busbw(r.profile_s)}, {"profile_error", r.profile_error()}});
    d += std::abs(r.default_error());
    p += std::abs(r.profile_error());
  }
  const double n = side_by_side.empty() ? 1.0 : static_cast<double>(side_by_side.size());
  block["default_mean_abs_busbw_error"] = d / n;
  block["profile_mean_abs_busbw_error"] = p / n;
  return block;
}

}  // namespace

int validate(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: clustersim validate MEASURED... [--scenario S.json] [--profile P.json] [--gpu NAME]\n"
      "                           [--json] [--leave-one-out] [--worst N]\n"
      "       clustersim validate PUBLISHED-TRAIN.json... --by group [--markdown | --json] [--baseline B.json]\n\n"
      "Predicts every measured point (clustersim-bench / h200-reference JSON, nccl-tests logs, nccl.json) and\n"
      "prints prediction, error, MAPE, median and worst points per group. Published training runs\n"
      "(published-train.json) are simulated whole and compared step by step; --by group prints one line per\n"
      "group of every file, and --baseline checks each group's MAPE against calibrate/published/fidelity-baseline.json.\n\noptions");
  add_validate_options(opts);
  po::variables_map vm;
  if (!parse_options(args, opts, "inputs", -1, vm)) return kExitOk;
  if (!vm.count("inputs")) throw InputError(with_usage("clustersim validate: no measurement files", opts, "validate"));
  if (vm.count("gpu") && !models::find_gpu(vm["gpu"].as<std::string>()))
    throw InputError("clustersim validate: --gpu: " + unknown_gpu(vm["gpu"].as<std::string>(), models::gpu_names()));
  const TrainingValidateOptions training_options = training_validate_options(vm);
  {
    // Published training runs (calibrate/published/published-train.json) are the other kind of validation.
    const auto inputs = vm["inputs"].as<std::vector<std::string>>();
    std::size_t training = 0;
    for (const auto& f : inputs) training += is_published_training(f) ? 1 : 0;
    if (training == inputs.size()) return validate_training(inputs, training_options);
    if (training > 0)
      throw InputError("clustersim validate: give published-training files (kind \"training\") in a separate call");
  }
  if (const auto& in = vm["inputs"].as<std::vector<std::string>>(); std::all_of(in.begin(), in.end(), is_published_training_file))
    return validate_training(in, training_options);  // published training runs: whole steps
  if (training_options.by_group)
    throw InputError("clustersim validate: --by group: only published-training files (kind \"training\") have groups");

  // nccl.json runs apart (its own clusters); everything else through the importer.
  std::vector<std::string> nccl_files, measured_files;
  for (const auto& f : vm["inputs"].as<std::vector<std::string>>())
    (is_published_nccl_file(f) ? nccl_files : measured_files).push_back(f);
  calibrate::MeasurementSet set;
  if (!measured_files.empty())
    set = calibrate::import_files(measured_files,
                                  log_hints(vm, "validate", vm.count("gpu") ? models::find_gpu(vm["gpu"].as<std::string>())->name
                                                                            : std::string()));
  std::optional<Scenario> scenario;
  if (vm.count("scenario")) scenario = load_scenario(vm["scenario"].as<std::string>());

  std::optional<models::CalibrationProfile> profile;
  if (vm.count("profile")) profile = models::read_profile(vm["profile"].as<std::string>());
  const models::ComputeProfile& compute_profile =
      profile && profile->compute                  ? *profile->compute
      : scenario && scenario->compute_profile      ? *scenario->compute_profile
                                                   : models::default_compute_profile();

  std::vector<calibrate::ValidationRow> rows;
  std::vector<std::string> notes = set.notes;
  int nccl_held = 0, nccl_within = 0;
  for (const auto& f : nccl_files) validate_published_nccl(f, rows, notes, nccl_held, nccl_within);

  if (!set.compute.empty()) add_compute_rows(vm, set, scenario, compute_profile, rows);

  // Collectives: one cluster per (GPU, ranks) without a scenario, the scenario's otherwise.
  const models::CommProfile* comm_profile = profile && !profile->comm.fits.empty() ? &profile->comm
                                            : scenario && scenario->comm_profile   ? &*scenario->comm_profile
                                                                                   : nullptr;
  const std::string comm_source = profile && !profile->comm.fits.empty() ? vm["profile"].as<std::string>()
                                  : scenario                              ? scenario->calibration
                                                                          : std::string();
  const NcclCalibration calibration = comm_profile ? nccl_calibration(*comm_profile, comm_source) : NcclCalibration{};
  if (calibration.any() && scenario)
    warn(CommCalibration{calibration, calibration_mismatch(*comm_profile, comm_source, scenario->gpu.name,
                                                           scenario->cluster, scenario->num_gpus())});
  std::vector<SideBySide> side_by_side;
  add_collective_rows(set, scenario, calibration, rows, side_by_side, notes);
  if (rows.empty()) {
    for (const auto& n : notes) std::cerr << "note: " << cs::files::printable_line(n) << "\n";
    throw InputError(notes.empty() ? "clustersim validate: no point could be predicted"
                                   : "clustersim validate: no point could be predicted (see the notes above)");
  }

  const auto summary = calibrate::summarize(rows);
  if (vm.count("json")) {
    nlohmann::ordered_json doc;
    auto group_json = [&](const calibrate::GroupSummary& g) {
      return nlohmann::ordered_json{{"group", g.group},          {"points", g.points},
                                    {"mape", g.mape},            {"median_ape", g.median_ape},
                                    {"worst", rows[g.worst].label}, {"worst_where", rows[g.worst].where},
                                    {"worst_error", rows[g.worst].error()}};
    };
    doc["leave_one_out"] = vm.count("leave-one-out") > 0;
    doc["points"] = nlohmann::ordered_json::array();
    for (const auto& r : rows)
      doc["points"].push_back({{"group", r.group}, {"label", r.label}, {"where", r.where}, {"measured_s", r.measured_s},
                               {"predicted_s", r.predicted_s}, {"error", r.error()}});
    doc["groups"] = nlohmann::ordered_json::array();
    for (const auto& g : summary.groups) doc["groups"].push_back(group_json(g));
    doc["overall"] = group_json(summary.overall);
    doc["notes"] = notes;
    if (!nccl_files.empty()) doc["nccl_within_tolerance"] = {{"held", nccl_held}, {"within", nccl_within}};
    if (calibration.any()) doc["comm_profile_comparison"] = comm_profile_comparison_json(comm_source, side_by_side);
    std::cout << doc.dump(2) << "\n";
  } else {
    for (const auto& n : notes) std::cerr << "note: " << n << "\n";
    const std::size_t worst = vm.count("worst") ? static_cast<std::size_t>(std::max(1, vm["worst"].as<int>())) : 0;
    if (vm.count("leave-one-out")) std::cout << "leave-one-out: each compute point predicted from a refit without it\n\n";
    std::cout << calibrate::validation_text(rows, summary, worst);
    if (calibration.any()) std::cout << side_by_side_text(side_by_side, comm_source);
    if (!nccl_files.empty())
      std::cout << "\nnccl.json: " << nccl_within << " of " << nccl_held
                << " held points within tolerance (busbw within 15%, nccl-tests#149 within 20%)\n";
  }
  return kExitOk;
}

}  // namespace cs::sim::cli
