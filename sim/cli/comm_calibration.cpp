#include "sim/cli/comm_calibration.hpp"

#include <cstdio>
#include <iostream>

#include "sim/base/units.hpp"
#include "topologies/link_catalog.hpp"

namespace cs::sim::cli {

std::string size_label(double bytes) {
  char buf[48];
  if (bytes >= kGiB) std::snprintf(buf, sizeof buf, "%g GiB", bytes / kGiB);
  else if (bytes >= kMiB) std::snprintf(buf, sizeof buf, "%g MiB", bytes / kMiB);
  else if (bytes >= kKiB) std::snprintf(buf, sizeof buf, "%g KiB", bytes / kKiB);
  else std::snprintf(buf, sizeof buf, "%g B", bytes);
  return buf;
}

topo::ClusterSpec single_node_cluster(const models::GpuSpec& gpu, int n) {
  topo::ClusterSpec spec;
  spec.nodes = 1;
  spec.gpus_per_node = n;
  spec.intra = *topo::find_intra_node(gpu.nvlink_gbps > 0 ? "nvswitch" : "pcie");
  if (spec.intra.gpu_bandwidth_GBps <= 0) spec.intra.gpu_bandwidth_GBps = gpu.scaleup_GBps_per_direction();
  spec.nic = *topo::find_net_link("ib-ndr400");
  spec.nics_per_node = n;
  return spec;
}

std::vector<int> measurement_gpus(const topo::ClusterSpec& cluster, int ranks, int nodes) {
  const int per_node = (ranks + nodes - 1) / nodes;
  if (nodes > cluster.nodes || per_node > cluster.gpus_per_node) return {};
  std::vector<int> gpus;
  for (int r = 0; r < ranks; ++r) gpus.push_back((r / per_node) * cluster.gpus_per_node + r % per_node);
  return gpus;
}

CommCalibration comm_calibration(const Scenario& scenario, const models::CalibrationProfile* profile,
                                 const std::string& profile_path) {
  CommCalibration out;
  const models::CommProfile* comm = profile ? &profile->comm : scenario.comm_profile ? &*scenario.comm_profile : nullptr;
  const std::string source = profile ? profile_path : scenario.calibration;
  if (!comm) return out;
  out.constants = nccl_calibration(*comm, source);
  if (out.constants.any())
    out.warning = calibration_mismatch(*comm, source, scenario.gpu.name, scenario.cluster, scenario.num_gpus());
  return out;
}

void warn(const CommCalibration& c) {
  if (!c.warning.empty()) std::cerr << "warning: " << c.warning << "\n";
}

nlohmann::json comm_calibration_json(const CommCalibration& c) {
  if (!c.constants.any()) return nullptr;
  nlohmann::json j = {{"source", c.constants.source}, {"collectives", nlohmann::json::array()}};
  for (const auto& u : calibration_uses(c.constants))
    j["collectives"].push_back({{"collective", std::string(models::to_string(u.kind))},
                                {"scope", to_string(u.scope)},
                                {"constants", u.calibrated ? "calibrated" : "default"}});
  if (!c.warning.empty()) j["warning"] = c.warning;
  return j;
}

std::string comm_calibration_text(const CommCalibration& c) {
  if (!c.constants.any()) return {};
  std::string list;
  for (const auto& u : calibration_uses(c.constants))
    if (u.calibrated) list += (list.empty() ? "" : ", ") + std::string(models::to_string(u.kind)) + " " + to_string(u.scope);
  return "comm constants    calibrated (" + c.constants.source + "): " + list + "; default: every other collective and scope\n";
}

}  // namespace cs::sim::cli
