#include "sim/explore/sweep_part.hpp"

#include <algorithm>
#include <cmath>
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
  double number(const std::string& key, const json& v) const {
    if (v.is_number()) return v.get<double>();
    if (v == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (v == "inf") return std::numeric_limits<double>::infinity();
    if (v == "-inf") return -std::numeric_limits<double>::infinity();
    bad(key, "a number");
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
      if (!v.is_number_integer()) bad(key, "an integer");
      out = v.get<T>();
    } else if constexpr (std::is_floating_point_v<T>) {
      out = number(key, v);
    } else if constexpr (std::is_same_v<T, std::vector<int>>) {
      if (!v.is_array()) bad(key, "an array of integers");
      out.clear();
      for (const json& x : v) {
        if (!x.is_number_integer()) bad(key, "an array of integers");
        out.push_back(x.get<int>());
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
          {"shard", {{"index", part.shard.index}, {"count", part.shard.count}}}, {"run", part.run}, {"points", points}};
}

SweepPart read_sweep_part(const std::string& path) {
  json j = files::as_input_error(
      [&] { return files::parse_json(files::read_input_file(path, kMaxPartBytes, "sweep part", "cannot open file"), path); });
  auto where = [&](const std::string& key) { return path + ": " + key; };
  if (!j.is_object() || !j.contains("format") || j["format"] != kSweepPartFormat)
    throw InputError(where("format") + ": expected \"" + std::string(kSweepPartFormat) +
                     "\" (a part file written by clustersim sweep --shard I/N)");
  if (!j.contains("version") || j["version"] != kSweepPartVersion)
    throw InputError(where("version") + ": expected " + std::to_string(kSweepPartVersion) + " (written by another clustersim version)");
  SweepPart part;
  part.file = path;
  const json& sh = j.contains("shard") ? j["shard"] : json();
  if (!sh.is_object() || !sh.contains("index") || !sh.contains("count") || !sh["index"].is_number_integer() ||
      !sh["count"].is_number_integer() || sh["count"].get<int>() < 1 || sh["index"].get<int>() < 0 ||
      sh["index"].get<int>() >= sh["count"].get<int>())
    throw InputError(where("shard") + ": expected {\"index\": I, \"count\": N} with 0 <= I < N");
  part.shard = {sh["index"].get<int>(), sh["count"].get<int>()};
  if (!j.contains("run") || !j["run"].is_object()) throw InputError(where("run") + ": expected an object");
  part.run = j["run"];
  if (!j.contains("points") || !j["points"].is_array()) throw InputError(where("points") + ": expected an array");
  const json& pts = j["points"];
  part.points.reserve(pts.size());
  for (std::size_t i = 0; i < pts.size(); ++i) part.points.push_back(point_from_part_json(pts[i], where("points[" + std::to_string(i) + "]")));
  return part;
}

std::vector<SweepPoint> merge_shards(std::vector<SweepPart>& parts) {
  if (parts.empty()) throw InputError("clustersim sweep merge: no part files given");
  std::stable_sort(parts.begin(), parts.end(), [](const SweepPart& a, const SweepPart& b) { return a.shard.index < b.shard.index; });
  const SweepPart& first = parts.front();
  const int n = first.shard.count;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const SweepPart& p = parts[k];
    if (p.shard.count != n)
      throw InputError(p.file + ": shard: " + std::to_string(p.shard.index) + "/" + std::to_string(p.shard.count) + " is not a shard of " +
                       first.file + "'s run of " + std::to_string(n));
    if (k > 0 && p.shard.index == parts[k - 1].shard.index)
      throw InputError(p.file + ": shard: " + std::to_string(p.shard.index) + "/" + std::to_string(n) + " given twice (also " +
                       parts[k - 1].file + ")");
    if (p.run != first.run) throw InputError(p.file + ": run: not the same run as " + first.file + " (other scenario or options)");
    if (p.points.size() != first.points.size())
      throw InputError(p.file + ": points: " + std::to_string(p.points.size()) + " points, " + first.file + " has " +
                       std::to_string(first.points.size()));
  }
  for (int i = 0; i < n; ++i)
    if (static_cast<int>(parts.size()) <= i || parts[static_cast<std::size_t>(i)].shard.index != i)
      throw InputError("clustersim sweep merge: shard " + std::to_string(i) + "/" + std::to_string(n) + " missing (give all " +
                       std::to_string(n) + " part files)");
  std::vector<SweepPoint> out;
  out.reserve(first.points.size());
  for (std::size_t i = 0; i < first.points.size(); ++i) {
    const SweepPoint* pick = nullptr;
    for (const SweepPart& p : parts) {
      if (p.points[i].assignment != first.points[i].assignment)
        throw InputError(p.file + ": points[" + std::to_string(i) + "].assignment: not the same point as in " + first.file);
      if (!pick && p.points[i].status != PointStatus::pending) pick = &p.points[i];
    }
    out.push_back(pick ? *pick : first.points[i]);
    if (!pick) out.back().status = PointStatus::cancelled;
  }
  return out;
}

}  // namespace cs::sim
