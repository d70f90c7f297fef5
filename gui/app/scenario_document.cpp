#include "gui/app/scenario_document.hpp"

#include "sim/report/output_file.hpp"

namespace cs::gui {

using nlohmann::json;

namespace {

// The demo scenario (scenarios/llama3-70b-h100x64-ndr400.json), so the window opens on real numbers.
json default_document() {
  return json::parse(R"({
  "name": "Llama-3 70B on 64 H100 SXM, NDR400 InfiniBand",
  "cluster": { "gpu": "H100-SXM", "nodes": 8, "gpus_per_node": 8, "intra_node": "nvswitch",
               "inter_node": { "fabric": "fat-tree", "link": "ib-ndr400", "nics_per_node": 8, "oversubscription": 1.0 },
               "price_per_gpu_hour": 2.5 },
  "model": { "preset": "llama3-70b" },
  "training": { "seq_length": 8192, "global_batch_size": 128, "micro_batch_size": 1, "precision": "bf16",
                "tensor_model_parallel_size": 8, "sequence_parallel": true, "pipeline_model_parallel_size": 4,
                "zero_stage": 1, "recompute_granularity": "selective", "pipeline_schedule": "1f1b",
                "tokens_to_train": 15000000000000.0 }
})");
}

}  // namespace

ScenarioDocument::ScenarioDocument() : doc_(default_document()) {}

ScenarioDocument ScenarioDocument::from_file(const std::string& path) {
  return from_json(sim::read_json_file(path), path);
}

ScenarioDocument ScenarioDocument::from_json(json doc, std::string path) {
  ScenarioDocument d;
  d.doc_ = std::move(doc);
  d.path_ = std::move(path);
  return d;
}

std::string ScenarioDocument::display_name() const { return path_.empty() ? std::string("untitled.json") : path_; }

void ScenarioDocument::set(const std::string& assignment) {
  json copy = doc_;  // apply_override may throw half-way through a path
  sim::apply_override(copy, assignment, display_name());
  if (copy == doc_) return;
  doc_ = std::move(copy);
  dirty_ = true;
  edits_.push_back(assignment);
}

void ScenarioDocument::erase(const std::string& dotted_path) {
  json* node = &doc_;
  std::size_t start = 0;
  while (true) {
    const auto dot = dotted_path.find('.', start);
    const std::string key = dotted_path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!node->is_object() || !node->contains(key)) return;
    if (dot == std::string::npos) {
      node->erase(key);
      dirty_ = true;
      return;
    }
    node = &(*node)[key];
    start = dot + 1;
  }
}

sim::Scenario ScenarioDocument::validate() const { return sim::parse_scenario(doc_, display_name()); }

std::string ScenarioDocument::text() const { return doc_.dump(2) + "\n"; }

void ScenarioDocument::save_as(const std::string& path) {
  sim::write_file_atomically(path, text());
  path_ = path;
  dirty_ = false;
  edits_.clear();
}

const json* find_path(const json& doc, const std::string& dotted_path) {
  const json* node = &doc;
  std::size_t start = 0;
  while (true) {
    const auto dot = dotted_path.find('.', start);
    const std::string key = dotted_path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!node->is_object()) return nullptr;
    auto it = node->find(key);
    if (it == node->end()) return nullptr;
    if (dot == std::string::npos) return &*it;
    node = &*it;
    start = dot + 1;
  }
}

}  // namespace cs::gui
