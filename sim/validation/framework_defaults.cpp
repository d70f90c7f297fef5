#include "sim/validation/framework_defaults.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>

#include "sim/base/input_error.hpp"

namespace cs::sim {

using nlohmann::json;

namespace {

constexpr const char* kFormat = "clustersim framework defaults 1";
constexpr const char* kCompiledIn = "calibrate/published/framework-defaults.json";

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A field as text: a string as it is, null or missing as "", anything else as JSON.
std::string text_of(const json& v) {
  if (v.is_null()) return {};
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// The value at a dotted path ("parallel.tp"); null when any step is missing.
const json& at_path(const json& doc, const std::string& path) {
  static const json null_value;  // immutable
  const json* cur = &doc;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!cur->is_object()) return null_value;
    const auto it = cur->find(key);
    if (it == cur->end()) return null_value;
    cur = &*it;
    if (dot == std::string::npos) return *cur;
    start = dot + 1;
  }
}

// Each knob the converter asks for: the type of its value ("" for knobs that only set scenario keys or
// name a convention), and whether "defaults" must give one (the converter always needs a value).
struct KnobSpec {
  const char* name;
  const char* value;
  bool required;
};
const std::vector<KnobSpec>& knob_specs() {
  static const std::vector<KnobSpec> specs = {
      {"head_dim", "number", false},          {"sliding_window", "", false},
      {"mlp", "", false},                     {"vocab", "integer", true},
      {"position_embedding", "", false},      {"attention", "", false},
      {"micro_batch_size", "number", true},   {"sequence_parallel", "boolean", true},
      {"recompute", "string", true},          {"optimizer_sharding", "integer", false},
      {"fsdp", "string", false},              {"precision", "string", true},
      {"expert_tensor_parallel", "", false},  {"pipeline_split", "", false},
      {"overlap_grad_reduce", "", false},     {"tp_comm_overlap", "", false},
      {"training_framework", "", false},      {"virtual_pipeline", "integer", false},
      {"gradient_accumulation", "", false},   {"pipeline_p2p", "", false},
      {"pipeline_layout", "", false},         {"mtp", "", false},
      {"mla", "", false},                     {"architecture", "", false},
      {"token_dispatcher", "", false},        {"cuda_graphs", "", false}};
  return specs;
}
const KnobSpec* find_knob(const std::string& name) {
  for (const auto& k : knob_specs())
    if (name == k.name) return &k;
  return nullptr;
}
bool value_is(const json& v, const std::string& type) {
  if (type == "number") return v.is_number();
  if (type == "integer") return v.is_number_integer();
  if (type == "boolean") return v.is_boolean();
  if (type == "string") return v.is_string();
  return false;
}

// Reads one document, collecting every error ("file: path: what") before throwing them together.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  void error(const std::string& path, const std::string& what) { errors_.push_back(file_ + ": " + path + ": " + what); }
  void finish() const {
    if (!errors_.empty()) throw InputError(errors_);
  }

  // Only the keys in `allowed`; any other is an error (a misspelt key is never ignored).
  bool object(const json& j, const std::string& path, std::initializer_list<const char*> allowed) {
    if (!j.is_object()) {
      error(path, "expected an object");
      return false;
    }
    for (auto it = j.begin(); it != j.end(); ++it)
      if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return it.key() == a; }))
        error(path == "(top level)" ? it.key() : path + "." + it.key(), "unknown key");
    return true;
  }

  std::string string(const json& obj, const std::string& path, const char* key, bool required) {
    const auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) error(path + "." + key, "missing (a string)");
      return {};
    }
    if (!it->is_string() || it->get<std::string>().empty()) {
      error(path + "." + key, "expected a non-empty string");
      return {};
    }
    return it->get<std::string>();
  }

  json condition(const json& c, const std::string& path) {
    if (!c.is_object()) {
      error(path, "expected an object of conditions (path: [substrings] | {\"min\": x} | {\"present\": bool} | bool)");
      return json::object();
    }
    for (auto it = c.begin(); it != c.end(); ++it) {
      const std::string where = path + "." + it.key();
      const json& v = it.value();
      if (it.key().empty() || it.key().front() == '.' || it.key().back() == '.') {
        error(where, "expected a dotted path into the entry");
      } else if (v.is_boolean()) {
      } else if (v.is_array()) {
        if (v.empty()) error(where, "expected at least one substring");
        for (std::size_t i = 0; i < v.size(); ++i)
          if (!v[i].is_string() || v[i].get<std::string>().empty())
            error(where + "[" + std::to_string(i) + "]", "expected a non-empty string");
      } else if (v.is_object() && v.size() == 1 && v.contains("min")) {
        if (!v["min"].is_number()) error(where + ".min", "expected a number");
      } else if (v.is_object() && v.size() == 1 && v.contains("present")) {
        if (!v["present"].is_boolean()) error(where + ".present", "expected true or false");
      } else {
        error(where, "expected a list of substrings, {\"min\": x}, {\"present\": bool} or a boolean");
      }
    }
    return c;
  }

  DefaultRule rule(const json& r, const std::string& path) {
    DefaultRule out;
    if (!object(r, path, {"when", "say_when", "value", "set", "says", "source"})) return out;
    if (r.contains("when")) out.when = condition(r["when"], path + ".when");
    if (r.contains("say_when")) out.say_when = condition(r["say_when"], path + ".say_when");
    if (r.contains("value")) {
      out.value = r["value"];
      if (out.value.is_null() || out.value.is_object() || out.value.is_array()) error(path + ".value", "expected a string, number or boolean");
    }
    if (r.contains("set")) {
      out.set = r["set"];
      if (!out.set.is_object() || out.set.empty()) {
        error(path + ".set", "expected an object of scenario keys (\"model.X\" or \"training.X\")");
      } else {
        for (auto it = out.set.begin(); it != out.set.end(); ++it) {
          const std::string& k = it.key();
          const bool ok = (k.rfind("model.", 0) == 0 && k.size() > 6) || (k.rfind("training.", 0) == 0 && k.size() > 9);
          if (!ok || k.find('.', k.find('.') + 1) != std::string::npos)
            error(path + ".set." + k, "expected a scenario key \"model.X\" or \"training.X\"");
        }
      }
    }
    out.says = string(r, path, "says", false);
    out.source = string(r, path, "source", true);
    if (out.value.is_null() && out.set.is_null() && out.says.empty()) error(path, "expected \"value\", \"set\" or \"says\"");
    return out;
  }

  // The knobs of a scope: {knob: rule | [rule, ...]}; `skip` names keys of the scope that are not knobs.
  void knobs(const json& obj, const std::string& path, DefaultScope& scope, std::initializer_list<const char*> skip = {}) {
    if (!obj.is_object()) {
      error(path, "expected an object of knobs");
      return;
    }
    const auto& known = default_knobs();
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      if (std::any_of(skip.begin(), skip.end(), [&](const char* s) { return it.key() == s; })) continue;
      const std::string where = path + "." + it.key();
      if (std::find(known.begin(), known.end(), it.key()) == known.end()) {
        std::string list;
        for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
        error(where, "unknown knob (expected one of " + list + ")");
        continue;
      }
      auto& rules = scope.knobs[it.key()];
      const KnobSpec* spec = find_knob(it.key());
      auto add = [&](const json& r, const std::string& rp) {
        rules.push_back(rule(r, rp));
        const json& v = rules.back().value;
        if (std::string(spec->value).empty() ? !v.is_null() : (r.is_object() && !value_is(v, spec->value)))
          error(rp + ".value", std::string(spec->value).empty() ? std::string("not a knob with a value (use \"set\" or \"says\")")
                                                                : "expected " + std::string(spec->value == std::string("integer") ? "an " : "a ") + spec->value);
      };
      if (it->is_array()) {
        if (it->empty()) error(where, "expected at least one rule");
        for (std::size_t i = 0; i < it->size(); ++i) add((*it)[i], where + "[" + std::to_string(i) + "]");
      } else {
        add(*it, where);
      }
    }
  }

  // Calls each(element, "path[i]") for the elements of the array at doc[key], if there is one.
  template <class Each>
  void array(const json& obj, const std::string& key, const std::string& path, Each each) {
    const auto it = obj.find(key);
    if (it == obj.end()) return;
    if (!it->is_array()) {
      error(path, "expected an array");
      return;
    }
    for (std::size_t i = 0; i < it->size(); ++i) each((*it)[i], path + "[" + std::to_string(i) + "]");
  }

  // A framework (with based_on and releases, read by the caller), a release or a model family.
  enum class Kind { framework, release, family };
  DefaultScope scope(const json& s, const std::string& path, Kind kind) {
    DefaultScope out;
    const bool ok = kind == Kind::framework ? object(s, path, {"id", "name", "match", "based_on", "source", "releases", "defaults"})
                                            : object(s, path, {"id", "name", "match", "source", "defaults"});
    if (!ok) return out;
    const bool match_required = kind != Kind::release;
    out.id = string(s, path, "id", true);
    if (s.contains("name")) out.name = string(s, path, "name", false);
    if (s.contains("source")) out.source = string(s, path, "source", false);
    if (s.contains("match")) out.match = condition(s["match"], path + ".match");
    else if (match_required) error(path + ".match", "missing (the conditions an entry must meet)");
    if (s.contains("defaults")) knobs(s["defaults"], path + ".defaults", out);
    return out;
  }

 private:
  std::string file_;
  std::vector<std::string> errors_;
};

std::string format_number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

const std::vector<std::string>& default_knobs() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& k : knob_specs()) out.push_back(k.name);
    return out;
  }();
  return names;
}

DefaultsTable parse_defaults_table(const json& doc, const std::string& file) {
  Reader r(file);
  DefaultsTable t;
  if (!r.object(doc, "(top level)", {"format", "about", "published_text", "frameworks", "model_families", "defaults"})) r.finish();
  if (!doc.contains("format") || doc["format"] != kFormat)
    r.error("format", std::string("expected \"") + kFormat + "\"");
  if (doc.contains("published_text")) {
    t.published_text.id = "published_text";
    r.knobs(doc["published_text"], "published_text", t.published_text, {"source"});
    if (doc["published_text"].is_object() && doc["published_text"].contains("source"))
      t.published_text.source = r.string(doc["published_text"], "published_text", "source", false);
  }
  if (doc.contains("defaults")) {
    t.defaults.id = "defaults";
    r.knobs(doc["defaults"], "defaults", t.defaults);
  }
  // What the converter always needs has a last resort without conditions.
  for (const auto& k : knob_specs()) {
    if (!k.required) continue;
    const auto it = t.defaults.knobs.find(k.name);
    const bool unconditional = it != t.defaults.knobs.end() && std::any_of(it->second.begin(), it->second.end(), [](const DefaultRule& x) {
      return x.when.is_null() || x.when.empty();
    });
    if (!unconditional) r.error(std::string("defaults.") + k.name, "missing (a rule without \"when\": the value when nothing else applies)");
  }
  std::set<std::string> ids;
  r.array(doc, "frameworks", "frameworks", [&](const json& f, const std::string& path) {
    FrameworkDefaults fw;
    fw.scope = r.scope(f, path, Reader::Kind::framework);
    if (!f.is_object()) return;
    if (!fw.scope.id.empty() && !ids.insert(fw.scope.id).second) r.error(path + ".id", "\"" + fw.scope.id + "\" appears twice");
    if (f.contains("based_on")) fw.based_on = r.string(f, path, "based_on", false);
    r.array(f, "releases", path + ".releases", [&](const json& rel, const std::string& rp) {
      fw.releases.push_back(r.scope(rel, rp, Reader::Kind::release));
    });
    t.frameworks.push_back(std::move(fw));
  });
  // based_on names an earlier or later framework of the file, without a cycle.
  for (std::size_t i = 0; i < t.frameworks.size(); ++i) {
    std::set<std::string> seen{t.frameworks[i].scope.id};
    std::string next = t.frameworks[i].based_on;
    while (!next.empty()) {
      const auto it = std::find_if(t.frameworks.begin(), t.frameworks.end(), [&](const FrameworkDefaults& f) { return f.scope.id == next; });
      const std::string path = "frameworks[" + std::to_string(i) + "].based_on";
      if (it == t.frameworks.end()) {
        r.error(path, "no framework \"" + next + "\" in the file");
        break;
      }
      if (!seen.insert(next).second) {
        r.error(path, "\"" + t.frameworks[i].based_on + "\" leads back to \"" + next + "\" (a cycle)");
        break;
      }
      next = it->based_on;
    }
  }
  r.array(doc, "model_families", "model_families", [&](const json& f, const std::string& path) {
    t.model_families.push_back(r.scope(f, path, Reader::Kind::family));
  });
  r.finish();
  return t;
}

const DefaultsTable& framework_defaults() {
  static const DefaultsTable table = [] {
    const json doc = json::parse(framework_defaults_text(), nullptr, false);
    if (doc.is_discarded()) throw InputError(std::string(kCompiledIn) + ": (top level): not valid JSON");
    return parse_defaults_table(doc, kCompiledIn);
  }();
  return table;
}

bool condition_holds(const json& condition, const json& facts) {
  if (!condition.is_object()) return true;
  for (auto it = condition.begin(); it != condition.end(); ++it) {
    const json& field = at_path(facts, it.key());
    const json& want = it.value();
    bool ok = false;
    if (want.is_boolean()) {
      ok = field.is_boolean() && field.get<bool>() == want.get<bool>();
    } else if (want.is_array()) {
      const std::string text = lower(text_of(field));
      ok = std::any_of(want.begin(), want.end(), [&](const json& part) {
        return part.is_string() && text.find(lower(part.get<std::string>())) != std::string::npos;
      });
    } else if (want.is_object() && want.contains("min")) {
      ok = field.is_number() && want["min"].is_number() && field.get<double>() >= want["min"].get<double>();
    } else if (want.is_object() && want.contains("present")) {
      ok = !field.is_null() == want["present"].get<bool>();
    }
    if (!ok) return false;
  }
  return true;
}

EntryDefaults::EntryDefaults(const DefaultsTable& table, const json& entry) : facts_(entry) {
  if (!facts_.is_object()) facts_ = json::object();
  published_text_ = &table.published_text;
  scopes_.push_back(published_text_);
  const auto fw = std::find_if(table.frameworks.begin(), table.frameworks.end(),
                               [&](const FrameworkDefaults& f) { return condition_holds(f.scope.match, facts_); });
  if (fw != table.frameworks.end()) {
    framework_ = fw->scope.id;
    const auto rel = std::find_if(fw->releases.begin(), fw->releases.end(),
                                  [&](const DefaultScope& r) { return condition_holds(r.match, facts_); });
    if (rel != fw->releases.end()) {
      release_ = rel->id;
      scopes_.push_back(&*rel);
    }
    // The framework, then what it is based on (the parser rules out cycles and unknown names).
    for (const FrameworkDefaults* f = &*fw; f != nullptr;) {
      scopes_.push_back(&f->scope);
      const auto base = std::find_if(table.frameworks.begin(), table.frameworks.end(),
                                     [&](const FrameworkDefaults& g) { return !f->based_on.empty() && g.scope.id == f->based_on; });
      f = base == table.frameworks.end() ? nullptr : &*base;
    }
  }
  for (const auto& family : table.model_families)
    if (condition_holds(family.match, facts_)) scopes_.push_back(&family);
  scopes_.push_back(&table.defaults);
}

const DefaultRule* EntryDefaults::rule(const std::string& knob) const {
  for (const DefaultScope* s : scopes_) {
    const auto it = s->knobs.find(knob);
    if (it == s->knobs.end()) continue;
    for (const auto& r : it->second)
      if (condition_holds(r.when, facts_)) return &r;
  }
  return nullptr;
}

bool EntryDefaults::stated_by_entry(const DefaultRule* rule) const {
  if (rule == nullptr) return false;
  for (const auto& [knob, rules] : published_text_->knobs)
    for (const auto& r : rules)
      if (&r == rule) return true;
  return false;
}

bool EntryDefaults::understood(const std::string& knob, const std::string& path) const {
  const auto it = published_text_->knobs.find(knob);
  if (it == published_text_->knobs.end()) return false;
  return std::any_of(it->second.begin(), it->second.end(), [&](const DefaultRule& r) {
    return r.when.is_object() && r.when.contains(path) && condition_holds(r.when, facts_);
  });
}

std::string EntryDefaults::says(const DefaultRule& rule) const {
  if (rule.says.empty() || !condition_holds(rule.say_when, facts_)) return {};
  std::string out;
  const std::string& t = rule.says;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const std::size_t close = t[i] == '{' ? t.find('}', i) : std::string::npos;
    const std::string path = close == std::string::npos ? std::string() : t.substr(i + 1, close - i - 1);
    const bool is_path = !path.empty() && std::all_of(path.begin(), path.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
    });
    if (!is_path) {
      out += t[i];
      continue;
    }
    const json& v = at_path(facts_, path);
    out += v.is_number() ? format_number(v.get<double>()) : text_of(v);
    i = close;
  }
  return out;
}

void EntryDefaults::apply(const DefaultRule& rule, json& model, json& training) {
  if (!rule.set.is_object()) return;
  for (auto it = rule.set.begin(); it != rule.set.end(); ++it) {
    const std::string& k = it.key();
    if (k.rfind("model.", 0) == 0) model[k.substr(6)] = it.value();
    else if (k.rfind("training.", 0) == 0) training[k.substr(9)] = it.value();
  }
}

}  // namespace cs::sim
