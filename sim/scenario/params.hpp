#pragma once
// The parameter table: every key a scenario file may hold, declared once, in sim/scenario/params.json
// (data, compiled into the binary: nothing is read at run time). Each entry gives the key's
// JSON path, its type, unit, default (as a user would read it), range, allowed names, help text and
// whether the layout search varies it. The table drives
//   - the loader (sim/scenario/scenario.cpp): a key that is not in the table is an unknown key; every
//     integer is read as a 64-bit value and checked against [min, max] before it is narrowed; every
//     number is checked finite and within [min, max];
//   - `clustersim params` (a listing, --json, --markdown) and docs/scenario-reference.md, generated from it;
//   - the GUI knob panel's ranges and choices, and the search's axes (sim/explore/sweep.cpp).
//
// Paths: "cluster.nodes"; the keys of an object that may also be a name carry the object's path
// ("cluster.gpu.hbm_gib" where "cluster.gpu" is a GPU name or a custom GPU object). A job of a
// multi-job scenario is "jobs[]" ("jobs[].nodes"); its model and training take the keys of "model.*" and
// "training.*" (jobs[1].training.seq_length is declared by training.seq_length).
//
// Every maximum has a reason, written beside it: the maxima keep every count the simulator derives
// from the scenario (GPUs, ranks, tokens per step, FLOPs) inside 64-bit integers and finite doubles, and
// are far beyond any cluster or model built today, so no real scenario meets them.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace cs::sim::params {

enum class Type {
  integer,         // a JSON integer (8.0 is accepted as 8)
  number,          // a JSON number
  boolean,
  string,          // free text or a path
  choice,          // one of `choices`
  name_or_object,  // one of `choices`, or an object with the keys under this path
  integer_or_list, // an integer, or a list (see help)
  list,
  object,
};
std::string_view to_string(Type t);

struct Param {
  std::string path;
  Type type = Type::string;
  std::string unit;          // "" for counts and names
  std::string default_text;  // what applies when the key is absent; "required" when it must be given
  // integer, number and integer_or_list (its integer form): the accepted range; min/max_exclusive make the bound open.
  double min = 0, max = 0;
  bool min_exclusive = false, max_exclusive = false;
  std::string max_reason;              // why the maximum is where it is
  std::vector<std::string> choices;    // choice, name_or_object: the allowed names
  std::string help;
  // > 0: the layout search (`clustersim sweep --search`) sets this key, in this order in each point.
  int search_order = 0;
  bool has_range() const { return type == Type::integer || type == Type::number || type == Type::integer_or_list; }
};

// Every parameter, grouped by section, in the order of the reference.
const std::vector<Param>& table();

// The entry of a path; `path` may name a job ("jobs[3].nodes" is "jobs[].nodes"). nullptr when absent.
const Param* find(std::string_view path);
// "jobs[3].nodes" -> "jobs[].nodes".
std::string normalize(std::string_view path);
// The keys directly under an object path ("" for the top level), in table order.
std::vector<std::string> children(std::string_view object_path);

// The paths the layout search sets, in the order it sets them.
std::vector<std::string> search_axes();

// The bound as text: "1", "1000000", "1e+18" (integers exactly, numbers in %g).
std::string bound_text(const Param& p, double v);

// The text of sim/scenario/params.json, the table's data (compiled in by cmake/EmbedText.cmake).
std::string_view params_text();

// The table as JSON ({"parameters": [...]}) and as the Markdown of docs/scenario-reference.md.
nlohmann::json to_json();
std::string to_markdown();

}  // namespace cs::sim::params
