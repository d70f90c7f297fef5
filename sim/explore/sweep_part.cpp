#include "sim/explore/sweep_part.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <type_traits>

#include "sim/base/input_error.hpp"
#include "sim/files/file_error.hpp"
#include "sim/files/input_file.hpp"
#include "sim/files/json_file.hpp"
#include "sim/report/error_band.hpp"

namespace cs::sim {

using nlohmann::json;

namespace {

// A part file holds ~2 KiB per simulated point and ~1 KiB per other point: 256 MiB is 10^5 layouts with
// room to spare.
constexpr std::uintmax_t kMaxPartBytes = std::uintmax_t{256} << 20;

// `f` with every key it is given prefixed: the fields of a report's parts are keyed "part.field".
template <class F>
auto under(const char* prefix, F& f) {
  return [prefix, &f](const char* key, auto& v) { f((std::string(prefix) + key).c_str(), v); };
}

// A report's parts, whose fields are keyed "part.field".
template <class T>
constexpr bool kIsReportPart = std::is_same_v<T, Breakdown> || std::is_same_v<T, models::MemoryBreakdown> ||
                               std::is_same_v<T, models::CostReport>;

// The fields of a report's part.
template <class P, class F>
void part_fields(P& x, F&& f) {
  using Part = std::remove_const_t<P>;
  if constexpr (std::is_same_v<Part, Breakdown>) {
    f("compute_s", x.compute_s);
    f("exposed_comm_s", x.exposed_comm_s);
    f("pipeline_bubble_s", x.pipeline_bubble_s);
    f("other_s", x.other_s);
  } else if constexpr (std::is_same_v<Part, models::MemoryBreakdown>) {
    f("weights_bytes", x.weights_bytes);
    f("grads_bytes", x.grads_bytes);
    f("optimizer_bytes", x.optimizer_bytes);
    f("activations_bytes", x.activations_bytes);
    f("buffers_bytes", x.buffers_bytes);
    f("reserved_bytes", x.reserved_bytes);
    f("stage", x.stage);
  } else {
    static_assert(std::is_same_v<Part, models::CostReport>);
    f("usd_per_step", x.usd_per_step);
    f("usd_per_hour", x.usd_per_hour);
    f("steps_to_train", x.steps_to_train);
    f("days_to_train", x.days_to_train);
    f("usd_to_train", x.usd_to_train);
    f("gpu_hours_to_train", x.gpu_hours_to_train);
    f("energy_kwh_per_step", x.energy_kwh_per_step);
    f("energy_kwh_to_train", x.energy_kwh_to_train);
    f("energy_usd_per_step", x.energy_usd_per_step);
    f("energy_usd_to_train", x.energy_usd_to_train);
  }
}

// Every field of a report, in one list shared by the writer and the reader, so the two cannot drift apart.
// A part is listed as f("part.", r.part): `field` sees its fields one by one.
template <class R, class F>
void report_fields(R& r, F&& field) {
  auto f = [&](const char* key, auto& v) {
    if constexpr (kIsReportPart<std::remove_cv_t<std::remove_reference_t<decltype(v)>>>)
      part_fields(v, under(key, field));
    else
      field(key, v);
  };
  f("name", r.name);
  f("gpu", r.gpu);
  f("gpu_mix", r.gpu_mix);
  f("num_gpus", r.num_gpus);
  f("nodes", r.nodes);
  f("gpus_per_node", r.gpus_per_node);
  f("intra_node", r.intra_node);
  f("inter_link", r.inter_link);
  f("fabric", r.fabric);
  f("model", r.model);
  f("parameters", r.parameters);
  f("tp", r.tp);
  f("pp", r.pp);
  f("dp", r.dp);
  f("cp", r.cp);
  f("ep", r.ep);
  f("vp", r.vp);
  f("etp", r.etp);
  f("micro_batch_size", r.micro_batch_size);
  f("num_micro_batches", r.num_micro_batches);
  f("global_batch_size", r.global_batch_size);
  f("seq_length", r.seq_length);
  f("precision", r.precision);
  f("schedule", r.schedule);
  f("recompute", r.recompute);
  f("framework", r.framework);
  f("framework_release", r.framework_release);
  f("zero_stage", r.zero_stage);
  f("sequence_parallel", r.sequence_parallel);
  f("step_time_s", r.step_time_s);
  f("tokens_per_s", r.tokens_per_s);
  f("model_tflops_per_gpu", r.model_tflops_per_gpu);
  f("mfu", r.mfu);
  f("hfu", r.hfu);
  f("mfu_causal", r.mfu_causal);
  f("breakdown.", r.breakdown);
  f("exposed_comm_s_by_kind", r.exposed_comm_s_by_kind);
  f("busy_s", r.busy_s);
  f("memory.", r.memory);
  f("memory_capacity_bytes", r.memory_capacity_bytes);
  f("fits_in_memory", r.fits_in_memory);
  f("price_per_gpu_hour_usd", r.price_per_gpu_hour_usd);
  f("tokens_to_train", r.tokens_to_train);
  f("cost.", r.cost);
  f("gpu_busy", r.gpu_busy);
  f("links", r.links);
  f("network", r.network);
  f("simulated_ranks", r.simulated_ranks);
  f("tasks", r.tasks);
  f("events", r.events);
  f("job", r.job);
  f("job_nodes", r.job_nodes);
  f("step_time_alone_s", r.step_time_alone_s);
  f("slowdown", r.slowdown);
}

// Doubles exactly: JSON numbers in nlohmann's shortest round-trip form, non-finite values as strings.
json put(double v) {
  if (std::isfinite(v)) return v;
  return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
}

class Reader {
 public:
  Reader(const json& j, std::string where) : j_(j), where_(std::move(where)) {}

  const json& at(const char* key) const {
    if (!j_.is_object() || !j_.contains(key)) throw InputError(where_ + "." + key + ": missing (not a clustersim sweep part file?)");
    return j_[key];
  }
  [[noreturn]] void bad(const std::string& key, const char* what) const {
    throw InputError(where_ + "." + key + ": expected " + what);
  }
  // Every number of a report is finite and not negative (a time, a size, a count, a price, a ratio): the
  // writer's "nan" and "inf" strings are read to be refused with the value they stand for.
  double number(const std::string& key, const json& v) const {
    double x = 0;
    if (v.is_number()) x = v.get<double>();
    else if (v == "nan") x = std::numeric_limits<double>::quiet_NaN();
    else if (v == "inf") x = std::numeric_limits<double>::infinity();
    else if (v == "-inf") x = -std::numeric_limits<double>::infinity();
    else bad(key, "a number");
    if (!std::isfinite(x) || x < 0) out_of_range(key, v, "a finite number >= 0");
    return x;
  }
  [[noreturn]] void out_of_range(const std::string& key, const json& v, const char* expected) const {
    throw InputError(where_ + "." + key + ": " + v.dump() + " is out of range (expected " + expected + ")");
  }
  // An integer that fits T and is not negative (every integer of a report is a count or an index).
  template <class T>
  T integer(const std::string& key, const json& v) const {
    if (!v.is_number_integer()) bad(key, "an integer");
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<T>::max()))
      out_of_range(key, v, ("an integer from 0 to " + std::to_string(std::numeric_limits<T>::max())).c_str());
    return static_cast<T>(v.get<std::uint64_t>());
  }
  template <class T>
  void get(const char* key, T& out) const {
    const json& v = at(key);
    if constexpr (std::is_same_v<T, std::string>) {
      if (!v.is_string()) bad(key, "a string");
      out = v.get<std::string>();
    } else if constexpr (std::is_same_v<T, bool>) {
      if (!v.is_boolean()) bad(key, "true or false");
      out = v.get<bool>();
    } else if constexpr (std::is_integral_v<T>) {
      out = integer<T>(key, v);
    } else if constexpr (std::is_floating_point_v<T>) {
      out = number(key, v);
    } else if constexpr (std::is_same_v<T, std::vector<int>>) {
      if (!v.is_array()) bad(key, "an array of integers");
      out.clear();
      for (const json& x : v) {
        if (!x.is_number_integer()) bad(key, "an array of integers");
        out.push_back(integer<int>(key, x));
      }
    } else if constexpr (std::is_same_v<T, std::vector<LinkUtilization>>) {
      if (!v.is_array()) bad(key, "an array of links");
      out.clear();
      for (std::size_t i = 0; i < v.size(); ++i) {
        const Reader l(v[i], where_ + "." + key + "[" + std::to_string(i) + "]");
        LinkUtilization u;
        l.get("name", u.name);
        l.get("bytes_per_gpu", u.bytes_per_gpu);
        l.get("bandwidth_Bps", u.bandwidth_Bps);
        l.get("utilization", u.utilization);
        out.push_back(u);
      }
    } else {  // std::array<double, N>
      if (!v.is_array() || v.size() != out.size()) bad(key, ("an array of " + std::to_string(out.size()) + " numbers").c_str());
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = number(key, v[i]);
    }
  }

 private:
  const json& j_;
  std::string where_;
};

json report_to_json(const Report& r) {
  json o = json::object();
  report_fields(r, [&](const char* key, const auto& v) {
    using T = std::decay_t<decltype(v)>;
    if constexpr (std::is_floating_point_v<T>) {
      o[key] = put(v);
    } else if constexpr (std::is_same_v<T, std::vector<LinkUtilization>>) {
      json links = json::array();
      for (const auto& l : v)
        links.push_back({{"name", l.name}, {"bytes_per_gpu", put(l.bytes_per_gpu)}, {"bandwidth_Bps", put(l.bandwidth_Bps)},
                         {"utilization", put(l.utilization)}});
      o[key] = links;
    } else if constexpr (std::is_same_v<T, std::array<double, kNumCategories>>) {
      json a = json::array();
      for (double x : v) a.push_back(put(x));
      o[key] = a;
    } else {
      o[key] = v;
    }
  });
  return o;
}

Report report_from_json(const json& j, const std::string& where) {
  Report r;
  const Reader in(j, where);
  report_fields(r, [&](const char* key, auto& v) { in.get(key, v); });
  // The error band is a function of the report's own fields and the compiled-in residual table
  // (sim/report/error_band.hpp), so it is recomputed, as simulate() computes it, rather than stored.
  r.step_time_band = expected_error_band(band_features(r), r.step_time_s);
  return r;
}

std::optional<PointStatus> parse_status(const std::string& s) {
  for (PointStatus st : {PointStatus::cancelled, PointStatus::invalid, PointStatus::not_fitting, PointStatus::pending,
                         PointStatus::dominated, PointStatus::simulated, PointStatus::estimated})
    if (s == to_string(st)) return st;
  return std::nullopt;
}

json to_json(const RunInputs& in);

}  // namespace

json to_part_json(const SweepPoint& p) {
  json a = json::array();
  for (const auto& [path, v] : p.assignment) a.push_back({path, v});
  json o = {{"assignment", a}, {"status", to_string(p.status)}, {"valid", p.valid}, {"error", p.error},
            {"report", report_to_json(p.report)}};
  if (p.estimate_step_time_s) o["estimate_step_time_s"] = put(*p.estimate_step_time_s);
  if (p.whole_run)
    o["whole_run"] = {{"goodput", put(p.whole_run->goodput)}, {"input_stall_fraction", put(p.whole_run->input_stall_fraction)},
                      {"effective_days", put(p.whole_run->effective_days)}, {"effective_usd", put(p.whole_run->effective_usd)},
                      {"slowdown", put(p.whole_run->slowdown)}};
  return o;
}

SweepPoint point_from_part_json(const json& j, const std::string& where) {
  SweepPoint p;
  const Reader in(j, where);
  const json& a = in.at("assignment");
  if (!a.is_array()) in.bad("assignment", "an array of [path, value] pairs");
  for (const json& e : a) {
    if (!e.is_array() || e.size() != 2 || !e[0].is_string()) in.bad("assignment", "an array of [path, value] pairs");
    p.assignment.emplace_back(e[0].get<std::string>(), e[1]);
  }
  std::string status;
  in.get("status", status);
  const auto st = parse_status(status);
  if (!st) in.bad("status", "a point status (simulated, estimated, pending, ...)");
  p.status = *st;
  in.get("valid", p.valid);
  in.get("error", p.error);
  p.report = report_from_json(in.at("report"), where + ".report");
  if (j.contains("estimate_step_time_s")) {
    double e = 0;
    in.get("estimate_step_time_s", e);
    p.estimate_step_time_s = e;
  }
  if (j.contains("whole_run")) {
    const Reader w(j["whole_run"], where + ".whole_run");
    SweepPoint::WholeRun run;
    w.get("goodput", run.goodput);
    w.get("input_stall_fraction", run.input_stall_fraction);
    w.get("effective_days", run.effective_days);
    w.get("effective_usd", run.effective_usd);
    w.get("slowdown", run.slowdown);
    p.whole_run = run;
  }
  return p;
}

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  auto number = [](const std::string& s, int& out) {
    if (s.empty() || s.size() > 6 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
    out = std::stoi(s);
    return true;
  };
  Shard sh;
  if (slash == std::string::npos || !number(text.substr(0, slash), sh.index) || !number(text.substr(slash + 1), sh.count) ||
      sh.count < 1 || sh.index >= sh.count)
    throw InputError("clustersim sweep: --shard " + text + ": expected I/N with 0 <= I < N (e.g. --shard 0/4)");
  return sh;
}

json to_json(const SweepPart& part) {
  json points = json::array();
  for (const auto& p : part.points) points.push_back(to_part_json(p));
  return {{"format", kSweepPartFormat}, {"version", kSweepPartVersion},
          {"shard", {{"index", part.shard.index}, {"count", part.shard.count}}}, {"inputs", to_json(part.inputs)}, {"run", part.run},
          {"points", points}};
}

std::string fnv1a64_hex(const std::string& bytes) {
  // FNV-1a, 64 bits, as published (http://www.isthe.com/chongo/tech/comp/fnv/: offset basis
  // 14695981039346656037, prime 1099511628211). Not sim/base/weighted_classes.hpp's Fnv1a: its basis,
  // 1469598103934665603, is a digit short of the published one, fine for a hash table, not for a digest
  // another tool should be able to recompute.
  std::uint64_t h = 14695981039346656037ULL;
  for (char c : bytes) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
  return out;
}

namespace {

// The digest of a file's bytes, or "unreadable" (the run then refused the points that named it).
std::string file_digest(const std::string& path, std::uintmax_t max_bytes) {
  try {
    return fnv1a64_hex(files::read_input_file(path, max_bytes, "input", "cannot open file"));
  } catch (const files::FileError&) {
    return "unreadable";
  }
}

// The files a scenario names (scenario.cpp: "calibration" at the top, cluster.topology_file), each with its
// role: the JSON path that names it.
void named_files(const json& doc, std::vector<std::pair<std::string, std::string>>& out) {
  if (!doc.is_object()) return;
  if (const auto cal = doc.find("calibration"); cal != doc.end() && cal->is_string()) out.emplace_back("calibration", cal->get<std::string>());
  if (const auto cl = doc.find("cluster"); cl != doc.end() && cl->is_object())
    if (const auto t = cl->find("topology_file"); t != cl->end() && t->is_string())
      out.emplace_back("cluster.topology_file", t->get<std::string>());
}

// The executable's digest reads at most 1 GiB (clustersim is a few MiB; an ASan build some tens); a bigger
// file would be "unreadable", like an input over its limit of sim/files/input_file.hpp.
constexpr std::uintmax_t kMaxExecutableBytes = std::uintmax_t{1} << 30;

}  // namespace

RunInputs run_inputs(const std::string& scenario_file, const json& doc, const std::vector<SweepPoint>& points) {
  std::vector<std::pair<std::string, std::string>> named;
  named_files(doc, named);
  for (const SweepPoint& p : points)
    for (const auto& [path, v] : p.assignment)
      if ((path == "calibration" || path == "cluster.topology_file") && v.is_string()) named.emplace_back(path, v.get<std::string>());
  RunInputs in;
  in.build = "executable fnv1a64 " + file_digest("/proc/self/exe", kMaxExecutableBytes);
  in.files.push_back({"scenario", scenario_file, file_digest(scenario_file, files::kMaxScenarioBytes)});
  for (const auto& entry : named) {  // not a structured binding: clang 14 (the fuzz build) cannot capture one
    const std::string& role = entry.first;
    const std::string& name = entry.second;
    if (name.empty()) continue;
    // Resolved against the scenario's folder, as parse_scenario resolves it.
    std::filesystem::path p(name);
    if (p.is_relative()) p = std::filesystem::path(scenario_file).parent_path() / p;
    const std::string resolved = p.lexically_normal().string();
    if (std::any_of(in.files.begin(), in.files.end(), [&](const InputDigest& d) { return d.role == role && d.path == resolved; })) continue;
    in.files.push_back({role, resolved, file_digest(resolved, role == "calibration" ? files::kMaxProfileBytes : files::kMaxTopologyBytes)});
  }
  return in;
}

namespace {

constexpr int kMaxShards = 100000;  // --array-size's limit (cli_sweep.cpp)

// shard.index and shard.count: 0 <= index < count <= kMaxShards, read whole (2^32 + 1 is not 1).
Shard read_shard(const json& j, const std::string& path) {
  const std::string where = path + ": shard";
  const json& sh = j.contains("shard") ? j["shard"] : json();
  if (!sh.is_object() || !sh.contains("index") || !sh.contains("count") || !sh["index"].is_number_integer() ||
      !sh["count"].is_number_integer())
    throw InputError(where + ": expected {\"index\": I, \"count\": N} with 0 <= I < N");
  const json& count = sh["count"];
  if (!count.is_number_unsigned() || count.get<std::uint64_t>() < 1 || count.get<std::uint64_t>() > kMaxShards)
    throw InputError(where + ".count: " + count.dump() + " is out of range (expected 1 to " + std::to_string(kMaxShards) + " shards)");
  const json& index = sh["index"];
  if (!index.is_number_unsigned() || index.get<std::uint64_t>() >= count.get<std::uint64_t>())
    throw InputError(where + ".index: " + index.dump() + " is out of range (expected 0 <= index < count " + count.dump() + ")");
  return {static_cast<int>(index.get<std::uint64_t>()), static_cast<int>(count.get<std::uint64_t>())};
}

// inputs: {"build": text, "files": [{"role", "path", "fnv1a64"}...]}, as to_json writes run_inputs().
RunInputs read_inputs(const json& j, const std::string& path) {
  const std::string where = path + ": inputs";
  const json& in = j.contains("inputs") ? j["inputs"] : json();
  if (!in.is_object() || !in.contains("build") || !in["build"].is_string() || !in.contains("files") || !in["files"].is_array())
    throw InputError(where + ": expected {\"build\": ..., \"files\": [...]} (the digests of what the shard read)");
  RunInputs out;
  out.build = in["build"].get<std::string>();
  const json& list = in["files"];
  for (std::size_t i = 0; i < list.size(); ++i) {
    const json& f = list[i];
    for (const char* key : {"role", "path", "fnv1a64"})
      if (!f.is_object() || !f.contains(key) || !f[key].is_string())
        throw InputError(where + ".files[" + std::to_string(i) + "]: expected {\"role\", \"path\", \"fnv1a64\"} (strings)");
    out.files.push_back({f["role"].get<std::string>(), f["path"].get<std::string>(), f["fnv1a64"].get<std::string>()});
  }
  if (out.files.empty() || out.files[0].role != "scenario") throw InputError(where + ".files: expected the scenario's digest first");
  return out;
}

json to_json(const RunInputs& in) {
  json list = json::array();
  for (const InputDigest& d : in.files) list.push_back({{"role", d.role}, {"path", d.path}, {"fnv1a64", d.fnv1a64}});
  return {{"build", in.build}, {"files", list}};
}

// The checks of a point's numbers that depend on its status: what merge divides by is positive.
void check_point(const SweepPoint& p, const std::string& where) {
  auto positive = [&](const char* key, double v) {
    if (!(v > 0)) throw InputError(where + "." + key + ": " + json(v).dump() + " is out of range (expected > 0 for a " + to_string(p.status) + " point)");
  };
  if (p.whole_run) positive("whole_run.slowdown", p.whole_run->slowdown);
  if (!p.simulated() && !p.estimated()) return;
  positive("report.step_time_s", p.report.step_time_s);
  positive("report.tokens_per_s", p.report.tokens_per_s);
  positive("report.num_gpus", p.report.num_gpus);
}

}  // namespace

SweepPart parse_sweep_part(const std::string& text, const std::string& path) {
  json j = files::as_input_error([&] { return files::parse_json(text, path); });
  auto where = [&](const std::string& key) { return path + ": " + key; };
  if (!j.is_object() || !j.contains("format") || j["format"] != kSweepPartFormat)
    throw InputError(where("format") + ": expected \"" + std::string(kSweepPartFormat) +
                     "\" (a part file written by clustersim sweep --shard I/N)");
  if (!j.contains("version") || j["version"] != kSweepPartVersion)
    throw InputError(where("version") + ": expected " + std::to_string(kSweepPartVersion) + " (written by another clustersim version)");
  SweepPart part;
  part.file = path;
  part.shard = read_shard(j, path);
  part.inputs = read_inputs(j, path);
  if (!j.contains("run") || !j["run"].is_object()) throw InputError(where("run") + ": expected an object");
  part.run = j["run"];
  if (!j.contains("points") || !j["points"].is_array()) throw InputError(where("points") + ": expected an array");
  const json& pts = j["points"];
  part.points.reserve(pts.size());
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const std::string at = where("points[" + std::to_string(i) + "]");
    part.points.push_back(point_from_part_json(pts[i], at));
    check_point(part.points.back(), at);
  }
  return part;
}

SweepPart read_sweep_part(const std::string& path) {
  return parse_sweep_part(files::as_input_error([&] { return files::read_input_file(path, kMaxPartBytes, "sweep part", "cannot open file"); }),
                          path);
}

namespace {

std::string shard_text(const Shard& s) { return std::to_string(s.index) + "/" + std::to_string(s.count); }

// The parts read the same files (by content: two profiles at one path differ) with the same build.
void check_same_inputs(const SweepPart& p, const SweepPart& first) {
  if (p.inputs.build != first.inputs.build)
    throw InputError(p.file + ": inputs.build: " + p.inputs.build + ", but " + first.file + " has " + first.inputs.build +
                     " (run every shard with the same clustersim build)");
  const auto& mine = p.inputs.files;
  const auto& theirs = first.inputs.files;
  for (std::size_t i = 0; i < mine.size() || i < theirs.size(); ++i) {
    const std::string at = p.file + ": inputs.files[" + std::to_string(i) + "]";
    if (i >= mine.size() || i >= theirs.size() || mine[i].role != theirs[i].role || mine[i].path != theirs[i].path)
      throw InputError(at + ": not the files " + first.file + " read (other scenario or options)");
    if (mine[i].fnv1a64 != theirs[i].fnv1a64)
      throw InputError(at + ".fnv1a64: " + mine[i].role + " " + mine[i].path + " read as " + mine[i].fnv1a64 + ", but as " +
                       theirs[i].fnv1a64 + " by " + first.file + " (the shards read different files: run them again on the same inputs)");
  }
}

// One part of every shard 0..N-1 (sorted by index), all of one run.
void check_part_set(const std::vector<SweepPart>& parts) {
  const SweepPart& first = parts.front();
  const int n = first.shard.count;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const SweepPart& p = parts[k];
    if (p.shard.count != n)
      throw InputError(p.file + ": shard: " + shard_text(p.shard) + " is not a shard of " + first.file + "'s run of " + std::to_string(n));
    if (k > 0 && p.shard.index == parts[k - 1].shard.index)
      throw InputError(p.file + ": shard: " + shard_text(p.shard) + " given twice (also " + parts[k - 1].file + ")");
    check_same_inputs(p, first);
    if (p.run != first.run) throw InputError(p.file + ": run: not the same run as " + first.file + " (other scenario or options)");
    if (p.points.size() != first.points.size())
      throw InputError(p.file + ": points: " + std::to_string(p.points.size()) + " points, " + first.file + " has " +
                       std::to_string(first.points.size()));
  }
  for (int i = 0; i < n; ++i)
    if (static_cast<int>(parts.size()) <= i || parts[static_cast<std::size_t>(i)].shard.index != i)
      throw InputError("clustersim sweep merge: shard " + std::to_string(i) + "/" + std::to_string(n) + " missing (give all " +
                       std::to_string(n) + " part files)");
}

// Point i of the parts. The points to simulate are those a shard left pending (sweep.cpp's run_points: shard
// I of N simulates the k-th of them when k mod N = I, and every other shard leaves it pending); the others
// every shard evaluated alike (a search's screening), so their parts must agree. `k` counts the points to
// simulate so far.
const SweepPoint& merged_point(const std::vector<SweepPart>& parts, std::size_t i, std::size_t& k) {
  const std::size_t n = parts.size();
  const std::string at = "points[" + std::to_string(i) + "]";
  std::vector<std::size_t> claims;
  for (std::size_t s = 0; s < n; ++s) {
    if (parts[s].points[i].assignment != parts[0].points[i].assignment)
      throw InputError(parts[s].file + ": " + at + ".assignment: not the same point as in " + parts[0].file);
    if (parts[s].points[i].status != PointStatus::pending) claims.push_back(s);
  }
  const bool to_simulate = claims.size() < n;
  if (claims.size() > 1 && (to_simulate || parts[claims[0]].points[i].simulated()))
    throw InputError(parts[claims[1]].file + ": " + at + ".status: " + to_string(parts[claims[1]].points[i].status) +
                     ", but " + parts[claims[0]].file + " has evaluated the point too (a point to simulate is one shard's)");
  if (!to_simulate) {
    for (std::size_t s = 1; s < n; ++s)
      if (to_part_json(parts[s].points[i]) != to_part_json(parts[0].points[i]))
        throw InputError(parts[s].file + ": " + at + ": not the same as in " + parts[0].file +
                         " (every shard screens this point, so every part has it alike)");
    return parts[0].points[i];
  }
  const std::size_t number = k++, owner = number % n;
  const std::string why = " (number " + std::to_string(number) + " of the points to simulate, counted from 0, and " +
                          std::to_string(number) + " mod " + std::to_string(n) + " = " + std::to_string(owner) + ")";
  if (claims.empty())
    throw InputError(parts[owner].file + ": " + at + ".status: pending in its own shard " + shard_text(parts[owner].shard) + why +
                     ": the shard did not finish");
  if (claims[0] != owner)
    throw InputError(parts[claims[0]].file + ": " + at + ".status: " + to_string(parts[claims[0]].points[i].status) +
                     ", but shard " + shard_text(parts[owner].shard) + " simulates this point" + why);
  return parts[owner].points[i];
}

}  // namespace

std::vector<SweepPoint> merge_shards(std::vector<SweepPart>& parts) {
  if (parts.empty()) throw InputError("clustersim sweep merge: no part files given");
  std::stable_sort(parts.begin(), parts.end(), [](const SweepPart& a, const SweepPart& b) { return a.shard.index < b.shard.index; });
  check_part_set(parts);
  std::vector<SweepPoint> out;
  out.reserve(parts.front().points.size());
  std::size_t k = 0;
  for (std::size_t i = 0; i < parts.front().points.size(); ++i) out.push_back(merged_point(parts, i, k));
  return out;
}

void check_part_args(const std::vector<std::string>& args, const std::string& where) {
  // The options of `clustersim sweep` that write a file other than the run's outputs, or print help; Boost
  // accepts any unambiguous prefix of a long option (cli_options.hpp's parser), so a prefix is refused too.
  static const char* const kRefused[] = {"help", "shard", "part", "slurm-script", "array-size", "partition", "time"};
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    bool refused = a.size() > 1 && a[0] == '-' && a[1] != '-' && a.find('h') != std::string::npos;  // -h, -qh
    if (a.rfind("--", 0) == 0 && a.size() > 2) {
      const std::string name = a.substr(2, a.find('=') == std::string::npos ? std::string::npos : a.find('=') - 2);
      for (const char* r : kRefused) refused |= !name.empty() && std::string(r).rfind(name, 0) == 0;
    }
    if (refused)
      throw InputError(where + "[" + std::to_string(i) + "]: " + json(a).dump() +
                       ": not an argument of a shard's run (merge writes only the run's own outputs)");
  }
}

double part_tokens_to_train(const json& doc, const std::string& where) {
  const json* t = nullptr;
  if (doc.is_object() && doc.contains("training") && doc["training"].is_object() && doc["training"].contains("tokens_to_train"))
    t = &doc["training"]["tokens_to_train"];
  if (!t || !t->is_number() || !std::isfinite(t->get<double>()) || t->get<double>() <= 0)
    throw InputError(where + ".training.tokens_to_train: expected a positive number (capacity planning needs the number of tokens to train)");
  return t->get<double>();
}

}  // namespace cs::sim
