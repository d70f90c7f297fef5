#pragma once
// What a training framework and release does where a published run says nothing (attention kernel,
// recompute, overlaps, optimizer sharding, sequence parallelism, ...), and how the free-text fields of
// published-train.json are read: calibrate/published/framework-defaults.json (its "about" says the
// format), compiled into clustersim. The converter of validate_training.cpp asks it knob by knob; no
// framework, release or model family is named in code.
//
// A rule sets one knob; an entry's rule for a knob is the first whose `when` holds, looking through the
// scopes in order: published_text, the matched release, its framework and the frameworks it is based on,
// the matched model families (file order), defaults. A condition object maps a path into the entry
// ("framework", "model.name", "parallel.tp"; "derived.X" for what the converter decided) to a list of
// substrings (any, case-insensitive), {"min": x}, {"present": bool} or a boolean.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace cs::sim {

struct DefaultRule {
  nlohmann::json when;        // condition object; empty: always
  nlohmann::json say_when;    // gates only the assumption; empty: always
  nlohmann::json value;       // the knob's value; null when the rule only sets scenario keys
  nlohmann::json set;         // {"model.X" | "training.X": value}; null when none
  std::string says;           // the assumption written into the point ({path} expanded); empty: none
  std::string source;         // where the rule comes from
};

struct DefaultScope {
  std::string id, name, source;
  nlohmann::json match;       // condition object (frameworks, releases, families); empty: any entry
  std::map<std::string, std::vector<DefaultRule>> knobs;
};

struct FrameworkDefaults {
  DefaultScope scope;
  std::string based_on;       // id of the framework whose rules come after this one's
  std::vector<DefaultScope> releases;
};

struct DefaultsTable {
  DefaultScope published_text;
  std::vector<FrameworkDefaults> frameworks;
  std::vector<DefaultScope> model_families;
  DefaultScope defaults;
};

// The knobs the converter asks for; a rule for any other name is an error in the file.
const std::vector<std::string>& default_knobs();

// Reads a defaults document; throws InputError ("file: json.path: what was expected") when malformed.
DefaultsTable parse_defaults_table(const nlohmann::json& doc, const std::string& file);
// The compiled-in calibrate/published/framework-defaults.json (parsed once).
const DefaultsTable& framework_defaults();
// Its text, as compiled in (generated from the file by cmake/EmbedText.cmake).
std::string_view framework_defaults_text();

// Does `condition` hold for `facts` (an entry, plus "derived")?
bool condition_holds(const nlohmann::json& condition, const nlohmann::json& facts);

// One published entry's view of the table.
class EntryDefaults {
 public:
  EntryDefaults(const DefaultsTable& table, const nlohmann::json& entry);
  // The matched framework and release ids ("" when no framework matched).
  const std::string& framework() const { return framework_; }
  const std::string& release() const { return release_; }
  // The first rule for `knob` whose `when` holds; nullptr when none.
  const DefaultRule* rule(const std::string& knob) const;
  // Is `rule` one of the rules reading the entry's own text (the published_text scope), i.e. did the
  // entry state the knob rather than the framework's default fill it?
  bool stated_by_entry(const DefaultRule* rule) const;
  // Does a published_text rule for `knob` that reads `path` hold (the entry's text there was understood)?
  bool understood(const std::string& knob, const std::string& path) const;
  // A decision of the converter that later conditions may test ("derived.<key>").
  void derive(const std::string& key, nlohmann::json value) { facts_["derived"][key] = std::move(value); }
  // The assumption of `rule` with {path} expanded; empty when it says nothing or its say_when fails.
  std::string says(const DefaultRule& rule) const;
  // Applies `rule.set` to the scenario's model and training objects.
  static void apply(const DefaultRule& rule, nlohmann::json& model, nlohmann::json& training);

 private:
  std::vector<const DefaultScope*> scopes_;
  const DefaultScope* published_text_ = nullptr;
  nlohmann::json facts_;
  std::string framework_, release_;
};

}  // namespace cs::sim
