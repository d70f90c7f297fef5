#pragma once
// The scenario the GUI edits: the JSON document exactly as the CLI reads it, plus where it came from.
//
// Every knob edit is a `--set`-style override ("training.tensor_model_parallel_size=4") applied with the
// library's own apply_override, and the document is then validated with parse_scenario, so the GUI
// accepts exactly what `clustersim run --set ...` accepts and shows the library's own messages. The
// document may hold an invalid combination while the user is still turning knobs; validate() says why.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/scenario/scenario.hpp"

namespace cs::gui {

class ScenarioDocument {
 public:
  ScenarioDocument();  // the built-in default scenario (Llama-3 70B on 64 H100), untitled
  static ScenarioDocument from_file(const std::string& path);  // throws InputError
  static ScenarioDocument from_json(nlohmann::json doc, std::string path);

  // Applies "dotted.path=value" (value parsed as JSON, else a string); throws InputError.
  void set(const std::string& assignment);
  // Removes a dotted path if present (keys the GUI derives, e.g. training.data_parallel_size).
  void erase(const std::string& dotted_path);
  // Parses and validates; throws InputError with the library's messages.
  sim::Scenario validate() const;

  const nlohmann::json& content() const { return doc_; }
  const std::string& path() const { return path_; }  // empty when untitled
  std::string display_name() const;                  // the path, or "untitled.json"
  bool dirty() const { return dirty_; }
  const std::vector<std::string>& edits() const { return edits_; }  // overrides since load/save
  std::string text() const;                          // pretty JSON, as saved
  void save_as(const std::string& path);             // atomic write; clears dirty; throws InputError

 private:
  nlohmann::json doc_;
  std::string path_;
  bool dirty_ = false;
  std::vector<std::string> edits_;
};

// Reads a dotted path ("cluster.inter_node.link"); nullptr when absent.
const nlohmann::json* find_path(const nlohmann::json& doc, const std::string& dotted_path);

}  // namespace cs::gui
