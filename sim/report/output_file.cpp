#include "sim/report/output_file.hpp"

#include "sim/files/atomic_write.hpp"
#include "sim/files/file_error.hpp"
#include "sim/base/input_error.hpp"
#include "sim/scenario/scenario.hpp"

#include <filesystem>

namespace cs::sim {

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write) {
  files::as_input_error([&] { files::write_file_atomically(path, write); });
}

void check_writable(const std::string& path, const std::vector<std::string>& inputs) {
  files::as_input_error([&] { files::check_output_path(path, inputs); });
}

void check_writable(const std::string& option, const std::string& path, const std::vector<files::InputFile>& inputs) {
  files::as_input_error([&] { files::check_output_path(path, inputs, option); });
}

std::vector<files::InputFile> scenario_inputs(const Scenario& s, const std::string& file) {
  std::vector<files::InputFile> out{{file, {}}};
  if (!s.topology_file.empty()) out.push_back({s.topology_file, "cluster.topology_file"});
  if (!s.calibration.empty()) out.push_back({s.calibration, "calibration"});
  return out;
}

std::vector<files::InputFile> scenario_inputs(const nlohmann::json& doc, const std::string& file) {
  std::vector<files::InputFile> out{{file, {}}};
  // A path as sim/scenario/scenario.cpp resolves it (read_topology_file, the calibration key).
  auto add = [&](const nlohmann::json* v, const char* key) {
    if (!v || !v->is_string() || v->get<std::string>().empty()) return;
    std::filesystem::path p(v->get<std::string>());
    if (p.is_relative()) p = std::filesystem::path(file).parent_path() / p;
    out.push_back({p.lexically_normal().string(), key});
  };
  if (!doc.is_object()) return out;
  if (doc.contains("cluster") && doc["cluster"].is_object() && doc["cluster"].contains("topology_file"))
    add(&doc["cluster"]["topology_file"], "cluster.topology_file");
  if (doc.contains("calibration")) add(&doc["calibration"], "calibration");
  return out;
}

}  // namespace cs::sim
