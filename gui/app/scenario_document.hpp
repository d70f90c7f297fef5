#pragma once
// The scenario the GUI edits: the JSON document exactly as the CLI reads it, plus where it came from.
//
// Every knob edit is a `--set`-style override ("training.tensor_model_parallel_size=4") applied with the
// library's own apply_override, and the document is then validated with parse_scenario, so the GUI
// accepts exactly what `clustersim run --set ...` accepts and shows the library's own messages. The
// document may hold an invalid combination while the user is still turning knobs; validate() says why.
//
// Undo/redo: the window marks each user action (a knob, a sweep point, the raw editor) with
// begin_edit()/end_edit(); the document keeps the whole JSON before each action, so undo restores the
// state exactly, whatever the action changed (an edit plus the keys it clears). Dirty is "differs from
// what is on disk" (the content last loaded or saved), so undoing back to it is clean again, and a
// document restored from the recovery file is dirty.
//
// Saving keeps the file's key order: the order of the keys as they were read (or, for keys the GUI
// added, after them in alphabetical order), not the alphabetical order of the in-memory object.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/scenario/scenario.hpp"

namespace cs::gui {

class ScenarioDocument {
 public:
  ScenarioDocument();  // the built-in default scenario (Llama-3 70B on 64 H100), untitled
  static ScenarioDocument from_file(const std::string& path);  // throws InputError
  // A document not read from `path` as it is on disk (`on_disk`: what the file holds, null if unknown).
  static ScenarioDocument from_json(nlohmann::json doc, std::string path, nlohmann::json on_disk = nullptr);

  // Applies "dotted.path=value" (value parsed as JSON, else a string); throws InputError.
  void set(const std::string& assignment);
  // Removes a dotted path if present (keys the GUI derives, e.g. training.data_parallel_size).
  void erase(const std::string& dotted_path);
  // Replaces the whole document (the raw JSON editor).
  void replace(nlohmann::json doc);
  // Parses and validates; throws InputError with the library's messages.
  sim::Scenario validate() const;

  // One user action, one undo step: the state at begin_edit() is what undo() restores.
  void begin_edit();
  void end_edit();  // records the step if the content changed
  bool can_undo() const { return !undo_.empty(); }
  bool can_redo() const { return !redo_.empty(); }
  bool undo();
  bool redo();

  const nlohmann::json& content() const { return doc_; }
  const nlohmann::json& on_disk() const { return saved_; }  // the file's content as last loaded or saved
  const std::string& path() const { return path_; }  // empty when untitled
  std::string display_name() const;                  // the path, or "untitled.json"
  bool dirty() const { return doc_ != saved_; }
  bool multi_job() const;
  int job_count() const;
  const std::vector<std::string>& edits() const { return edits_; }  // overrides since load/save
  std::string text() const;                          // pretty JSON, as saved (the file's key order)
  void save_as(const std::string& path);             // atomic write; clears dirty; throws InputError

 private:
  nlohmann::json doc_;
  nlohmann::json saved_;          // as on disk (or the built-in default): dirty = differs
  nlohmann::ordered_json order_;  // the keys in the order the file had them
  std::string path_;
  std::vector<std::string> edits_;
  std::vector<nlohmann::json> undo_, redo_;
  nlohmann::json pending_;  // the state at begin_edit()
  bool in_edit_ = false;
};

// Reads a dotted path ("cluster.inter_node.link", "jobs.1.training.zero_stage"); nullptr when absent.
const nlohmann::json* find_path(const nlohmann::json& doc, const std::string& dotted_path);

}  // namespace cs::gui
