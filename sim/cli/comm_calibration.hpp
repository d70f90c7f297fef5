#pragma once
// The calibrated NCCL constants a command runs with, and how it says so: `run`, `collective` and
// `validate` take them from the scenario's "calibration" profile (or --profile), print which collective
// kinds and scopes use calibrated constants and the profile's file (text and --json, the block
// "comm_calibration"), and warn once on stderr when the profile was measured on another GPU, NIC or rank
// count than the scenario's cluster (sim/network/nccl_model_fit.hpp).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/compute/profile_json.hpp"
#include "sim/network/nccl_model_fit.hpp"
#include "sim/scenario/scenario.hpp"

namespace cs::sim::cli {

// "1 MiB", "512 KiB", "8 B": a message size as the validation and fit tables print it.
std::string size_label(double bytes);

// A single node of n GPUs of `gpu` on NVSwitch (PCIe when the GPU has no NVLink): the cluster a
// single-node measurement is predicted on (and fitted against) when no scenario names one.
topo::ClusterSpec single_node_cluster(const models::GpuSpec& gpu, int n);
// The GPUs that `ranks` ranks on `nodes` nodes take on `cluster` (ceil(ranks / nodes) per node,
// node-major, as nccl-tests places them); empty when they do not fit it.
std::vector<int> measurement_gpus(const topo::ClusterSpec& cluster, int ranks, int nodes);

struct CommCalibration {
  NcclCalibration constants;  // empty: the defaults
  std::string warning;        // the mismatch line, empty when none
};

// `profile` / `profile_path`: a --profile given on the command line (replaces the scenario's own).
CommCalibration comm_calibration(const Scenario& scenario, const models::CalibrationProfile* profile = nullptr,
                                 const std::string& profile_path = {});
// Prints the warning, if any, once (to stderr).
void warn(const CommCalibration& c);
// {"source", "calibrated": [{"collective", "scope"}], "default": "every other collective and scope"} ; null
// when nothing is calibrated.
nlohmann::json comm_calibration_json(const CommCalibration& c);
// "comm constants    calibrated (P.json): all_reduce inter-node; default: all others\n", or "" when none.
std::string comm_calibration_text(const CommCalibration& c);

}  // namespace cs::sim::cli
