#include "gui/app/scenario_document.hpp"

#include <fstream>
#include <sstream>

#include "sim/report/output_file.hpp"

namespace cs::gui {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

// The demo scenario (scenarios/llama3-70b-h100x64-ndr400.json), so the window opens on real numbers.
constexpr const char* kDefaultDocument = R"({
  "name": "Llama-3 70B on 64 H100 SXM, NDR400 InfiniBand",
  "cluster": { "gpu": "H100-SXM", "nodes": 8, "gpus_per_node": 8, "intra_node": "nvswitch",
               "inter_node": { "fabric": "fat-tree", "link": "ib-ndr400", "nics_per_node": 8, "oversubscription": 1.0 },
               "price_per_gpu_hour": 2.5 },
  "model": { "preset": "llama3-70b" },
  "training": { "seq_length": 8192, "global_batch_size": 128, "micro_batch_size": 1, "precision": "bf16",
                "tensor_model_parallel_size": 8, "sequence_parallel": true, "pipeline_model_parallel_size": 4,
                "zero_stage": 1, "recompute_granularity": "selective", "pipeline_schedule": "1f1b",
                "tokens_to_train": 15000000000000.0 }
})";

// The key order of a JSON text (for saving in the same order); null when it does not parse.
ordered_json key_order(const std::string& text) {
  return ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
}

// `j` with its object keys in the order of `tmpl` (the file as read), new keys after them.
ordered_json in_order(const json& j, const ordered_json* tmpl) {
  if (j.is_object()) {
    ordered_json out = ordered_json::object();
    if (tmpl != nullptr && tmpl->is_object())
      for (auto it = tmpl->begin(); it != tmpl->end(); ++it)
        if (auto f = j.find(it.key()); f != j.end()) out[it.key()] = in_order(*f, &it.value());
    for (auto it = j.begin(); it != j.end(); ++it)
      if (!out.contains(it.key())) out[it.key()] = in_order(it.value(), nullptr);
    return out;
  }
  if (j.is_array()) {
    ordered_json out = ordered_json::array();
    for (std::size_t i = 0; i < j.size(); ++i)
      out.push_back(in_order(j[i], tmpl != nullptr && tmpl->is_array() && i < tmpl->size() ? &(*tmpl)[i] : nullptr));
    return out;
  }
  return ordered_json::parse(j.dump());  // a scalar: the same text
}

// The node a dotted path names (array elements by index), creating nothing; nullptr when absent.
template <class J>
J* walk(J* node, const std::string& dotted_path, std::string* last_key, J** parent) {
  std::size_t start = 0;
  while (true) {
    const auto dot = dotted_path.find('.', start);
    const std::string key = dotted_path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    J* next = nullptr;
    if (node->is_object()) {
      auto it = node->find(key);
      if (it != node->end()) next = &*it;
    } else if (node->is_array() && !key.empty() && key.find_first_not_of("0123456789") == std::string::npos &&
               key.size() < 10 && std::stoul(key) < node->size()) {
      next = &(*node)[std::stoul(key)];
    }
    if (next == nullptr) return nullptr;
    if (dot == std::string::npos) {
      if (last_key) *last_key = key;
      if (parent) *parent = node;
      return next;
    }
    node = next;
    start = dot + 1;
  }
}

}  // namespace

ScenarioDocument::ScenarioDocument() : doc_(json::parse(kDefaultDocument)), saved_(doc_), order_(key_order(kDefaultDocument)) {}

ScenarioDocument ScenarioDocument::from_file(const std::string& path) {
  ScenarioDocument d = from_json(sim::read_json_file(path), path);
  d.saved_ = d.doc_;
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  d.order_ = key_order(text.str());
  return d;
}

ScenarioDocument ScenarioDocument::from_json(json doc, std::string path, json on_disk) {
  ScenarioDocument d;
  d.doc_ = std::move(doc);
  d.path_ = std::move(path);
  d.saved_ = std::move(on_disk);
  d.order_ = ordered_json();
  return d;
}

std::string ScenarioDocument::display_name() const { return path_.empty() ? std::string("untitled.json") : path_; }

bool ScenarioDocument::multi_job() const {
  auto it = doc_.find("jobs");
  return it != doc_.end() && it->is_array() && !it->empty();
}

int ScenarioDocument::job_count() const { return multi_job() ? static_cast<int>(doc_["jobs"].size()) : 0; }

void ScenarioDocument::set(const std::string& assignment) {
  json copy = doc_;  // apply_override may throw half-way through a path
  sim::apply_override_pinned(copy, assignment, display_name());  // as clustersim run does (price included)
  if (copy == doc_) return;
  doc_ = std::move(copy);
  edits_.push_back(assignment);
}

void ScenarioDocument::erase(const std::string& dotted_path) {
  std::string key;
  json* parent = nullptr;
  if (walk(&doc_, dotted_path, &key, &parent) != nullptr && parent->is_object()) parent->erase(key);
}

void ScenarioDocument::replace(json doc) { doc_ = std::move(doc); }

void ScenarioDocument::begin_edit() {
  if (in_edit_) return;
  in_edit_ = true;
  pending_ = doc_;
}

void ScenarioDocument::end_edit() {
  if (!in_edit_) return;
  in_edit_ = false;
  if (pending_ == doc_) return;
  undo_.push_back(std::move(pending_));
  redo_.clear();
}

namespace {

// Moves the document's state to `to` and takes the newest of `from` (undo: from the undo stack to the
// redo stack; redo: the other way).
bool step(json& doc, std::vector<json>& from, std::vector<json>& to) {
  if (from.empty()) return false;
  to.push_back(std::move(doc));
  doc = std::move(from.back());
  from.pop_back();
  return true;
}

}  // namespace

bool ScenarioDocument::undo() { return step(doc_, undo_, redo_); }
bool ScenarioDocument::redo() { return step(doc_, redo_, undo_); }

sim::Scenario ScenarioDocument::validate() const { return sim::parse_scenario(doc_, display_name()); }

std::string ScenarioDocument::text() const { return in_order(doc_, order_.is_null() ? nullptr : &order_).dump(2) + "\n"; }

void ScenarioDocument::save_as(const std::string& path) {
  const std::string t = text();
  sim::write_file_atomically(path, t);
  path_ = path;
  saved_ = doc_;
  order_ = key_order(t);
  edits_.clear();
}

const json* find_path(const json& doc, const std::string& dotted_path) {
  return walk(&doc, dotted_path, nullptr, static_cast<const json**>(nullptr));
}

}  // namespace cs::gui
