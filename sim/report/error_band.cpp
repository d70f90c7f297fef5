#include "sim/report/error_band.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "sim/base/check.hpp"
#include "sim/base/input_error.hpp"
#include "sim/report/format.hpp"
#include "sim/report/report.hpp"

namespace cs::sim {

using nlohmann::json;

BandFeatures band_features(const Report& r) {
  BandFeatures f;
  f.gpu = r.gpu;
  f.num_gpus = r.num_gpus;
  f.nodes = r.nodes;
  f.parameters = r.parameters;
  f.tp = r.tp, f.pp = r.pp, f.cp = r.cp, f.ep = r.ep;
  f.zero_stage = r.zero_stage;
  f.inter_link = r.nodes > 1 ? r.inter_link : "";
  return f;
}

BandClass band_class(const BandFeatures& f) {
  BandClass c;
  c.strategy = f.ep > 1 ? "moe" : f.pp > 1 ? "pipeline" : (f.tp > 1 || f.cp > 1) ? "tensor" : "data";
  c.scale = f.num_gpus <= 8 ? "1-8 GPUs" : f.num_gpus <= 64 ? "9-64 GPUs" : f.num_gpus <= 512 ? "65-512 GPUs"
            : f.num_gpus <= 4096                             ? "513-4096 GPUs"
                                                             : "over 4096 GPUs";
  const auto starts = [&](const char* prefix) { return f.inter_link.rfind(prefix, 0) == 0; };
  c.network = f.nodes <= 1 ? "scale-up only" : starts("ib-") ? "infiniband" : (starts("roce-") || starts("eth-")) ? "ethernet" : "custom";
  c.framework = f.zero_stage >= 2 ? "fsdp/zero" : "megatron";
  return c;
}

namespace {

// The ladder of classes, most specific first (error_band.hpp): how many features a level keeps, and
// whether a row's class matches the report's at that level.
constexpr int kLevels = 5;
bool matches(const BandClass& a, const BandClass& b, int level) {
  switch (level) {
    case 0: return a.strategy == b.strategy && a.scale == b.scale && a.network == b.network && a.framework == b.framework;
    case 1: return a.strategy == b.strategy && a.scale == b.scale && a.network == b.network;
    case 2: return a.strategy == b.strategy && a.scale == b.scale;
    case 3: return a.strategy == b.strategy;
    default: return true;
  }
}
std::string class_text(const BandClass& c, int level) {
  switch (level) {
    case 0: return c.strategy + ", " + c.scale + ", " + c.network + ", " + c.framework;
    case 1: return c.strategy + ", " + c.scale + ", " + c.network;
    case 2: return c.strategy + ", " + c.scale;
    case 3: return c.strategy;
    default: return "all runs";
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string pct(double e) { return fmt("%+.1f%%", 100 * e); }

// A strict reader of one row: every key present with its type, nothing else.
class RowReader {
 public:
  RowReader(const json& row, std::string where, std::vector<std::string>& problems)
      : row_(row), where_(std::move(where)), problems_(problems) {}
  std::string text(const char* key) {
    const json* v = get(key);
    if (v && !v->is_string()) bad(key, "a string");
    return v && v->is_string() ? v->get<std::string>() : std::string();
  }
  double number(const char* key, double min) {
    const json* v = get(key);
    if (!v) return min;
    if (!v->is_number() || !std::isfinite(v->get<double>()) || v->get<double>() < min) {
      bad(key, "a number >= " + fmt("%g", min));
      return min;
    }
    return v->get<double>();
  }
  int integer(const char* key, int min) {
    const double d = number(key, min);
    if (d != std::floor(d) || d > 1e9) {
      bad(key, "an integer");
      return min;
    }
    return static_cast<int>(d);
  }
  void finish() {
    for (auto it = row_.begin(); it != row_.end(); ++it)
      if (!read_.count(it.key())) problems_.push_back(where_ + "." + it.key() + ": unknown key");
  }

 private:
  const json* get(const char* key) {
    read_.insert(key);
    const auto it = row_.find(key);
    if (it == row_.end()) {
      problems_.push_back(where_ + "." + key + ": missing");
      return nullptr;
    }
    return &*it;
  }
  void bad(const char* key, const std::string& want) { problems_.push_back(where_ + "." + key + ": expected " + want); }
  const json& row_;
  std::string where_;
  std::vector<std::string>& problems_;
  std::set<std::string> read_;
};

}  // namespace

json to_json(const ResidualTable& t) {
  json rows = json::array();
  for (const ResidualRow& r : t.rows) {
    const BandFeatures& f = r.features;
    rows.push_back({{"id", r.id}, {"confidence", r.confidence}, {"gpu", f.gpu}, {"num_gpus", f.num_gpus}, {"nodes", f.nodes},
                    {"parameters", f.parameters}, {"tp", f.tp}, {"pp", f.pp}, {"cp", f.cp}, {"ep", f.ep},
                    {"zero_stage", f.zero_stage}, {"inter_link", f.inter_link}, {"error", r.error}});
  }
  return {{"source", t.source},
          {"error", "measured step time / predicted step time - 1 (= predicted / measured - 1 on tokens/s)"},
          {"rows", std::move(rows)}};
}

ResidualTable parse_residual_table(const json& doc, const std::string& file) {
  if (!doc.is_object() || !doc.contains("rows") || !doc.at("rows").is_array())
    throw InputError(file + ": expected an object with \"rows\": [...] (the output of scripts/regenerate_residuals.sh)");
  ResidualTable t;
  if (doc.contains("source") && doc.at("source").is_string()) t.source = doc.at("source").get<std::string>();
  std::vector<std::string> problems;
  const json& rows = doc.at("rows");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string where = file + ": rows[" + std::to_string(i) + "]";
    if (!rows[i].is_object()) {
      problems.push_back(where + ": expected an object");
      continue;
    }
    RowReader rr(rows[i], where, problems);
    ResidualRow row;
    row.id = rr.text("id");
    row.confidence = rr.text("confidence");
    BandFeatures& f = row.features;
    f.gpu = rr.text("gpu");
    f.num_gpus = rr.integer("num_gpus", 1);
    f.nodes = rr.integer("nodes", 1);
    f.parameters = rr.number("parameters", 0);
    f.tp = rr.integer("tp", 1), f.pp = rr.integer("pp", 1), f.cp = rr.integer("cp", 1), f.ep = rr.integer("ep", 1);
    f.zero_stage = rr.integer("zero_stage", 0);
    f.inter_link = rr.text("inter_link");
    row.error = rr.number("error", -1);
    rr.finish();
    if (rows[i].contains("error") && row.error <= -1) problems.push_back(where + ".error: expected a number > -1 (a step time ratio minus 1)");
    t.rows.push_back(std::move(row));
  }
  if (!problems.empty()) throw InputError(std::move(problems));
  return t;
}

const ResidualTable& residual_table() {
  static const ResidualTable table = [] {
    const json doc = json::parse(residuals_text(), nullptr, false);
    CS_CHECK(!doc.is_discarded());  // compiled in from calibrate/published/residuals.json; a test reads it too
    return parse_residual_table(doc, "calibrate/published/residuals.json");
  }();
  return table;
}

ErrorBand expected_error_band(const BandFeatures& f, double step_time_s, const ResidualTable& table) {
  ErrorBand b;
  if (table.rows.empty()) return b;
  b.available = true;
  b.report_class = band_class(f);
  std::vector<BandClass> classes;
  classes.reserve(table.rows.size());
  for (const ResidualRow& r : table.rows) classes.push_back(band_class(r.features));
  for (int level = 0; level < kLevels; ++level) {
    std::vector<double> errors;
    for (std::size_t i = 0; i < table.rows.size(); ++i)
      if (matches(classes[i], b.report_class, level)) errors.push_back(table.rows[i].error);
    if (errors.size() < kMinBandPoints && level + 1 < kLevels) continue;
    b.matched = class_text(b.report_class, level);
    b.matched_features = kLevels - 1 - level;
    b.points = errors.size();
    b.error_low = *std::min_element(errors.begin(), errors.end());
    b.error_high = *std::max_element(errors.begin(), errors.end());
    b.error_median = median(errors);
    b.errors = std::move(errors);
    break;
  }
  b.step_time_low_s = step_time_s * (1 + b.error_low);
  b.step_time_high_s = step_time_s * (1 + b.error_high);

  // The domain: what the compared runs span.
  std::set<std::string> gpus;
  int min_gpus = table.rows.front().features.num_gpus, max_gpus = min_gpus;
  double min_params = table.rows.front().features.parameters, max_params = min_params;
  bool strategy_seen = false;
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    const BandFeatures& r = table.rows[i].features;
    gpus.insert(r.gpu);
    min_gpus = std::min(min_gpus, r.num_gpus), max_gpus = std::max(max_gpus, r.num_gpus);
    min_params = std::min(min_params, r.parameters), max_params = std::max(max_params, r.parameters);
    strategy_seen = strategy_seen || classes[i].strategy == b.report_class.strategy;
  }
  auto& why = b.out_of_domain_reasons;
  if (!gpus.count(f.gpu)) {
    std::string known;
    for (const auto& g : gpus) known += (known.empty() ? "" : ", ") + g;
    why.push_back("GPU " + f.gpu + " never compared (validated: " + known + ")");
  }
  if (f.num_gpus < min_gpus || f.num_gpus > max_gpus)
    why.push_back(std::to_string(f.num_gpus) + " GPUs outside the validated " + std::to_string(min_gpus) + "-" + std::to_string(max_gpus));
  if (f.parameters < min_params || f.parameters > max_params)
    why.push_back(fmt("%.3gB parameters", f.parameters / 1e9) + " outside the validated " + fmt("%.3gB", min_params / 1e9) + "-" +
                  fmt("%.3gB", max_params / 1e9));
  if (!strategy_seen) why.push_back("strategy mix " + b.report_class.strategy + " never compared");
  b.out_of_domain = !why.empty();
  return b;
}

json to_json(const ErrorBand& b) {
  if (!b.available) return {{"available", false}};
  const BandClass& c = b.report_class;
  return {{"available", true},
          {"step_time_low_s", b.step_time_low_s}, {"step_time_high_s", b.step_time_high_s},
          {"error_low", b.error_low}, {"error_high", b.error_high}, {"error_median", b.error_median},
          {"points", b.points},
          {"class", {{"strategy", c.strategy}, {"scale", c.scale}, {"network", c.network}, {"framework", c.framework}}},
          {"matched", b.matched}, {"matched_features", b.matched_features}, {"out_of_domain", b.out_of_domain},
          {"out_of_domain_reasons", b.out_of_domain_reasons},
          {"table", "calibrate/published/residuals.json"}};
}

std::string band_text(const ErrorBand& b) {
  if (!b.available) return "none (no validation residuals compiled in)";
  return seconds_text(b.step_time_low_s) + " .. " + seconds_text(b.step_time_high_s) + " (" + pct(b.error_low) + " .. " +
         pct(b.error_high) + ", median " + pct(b.error_median) + "; " + std::to_string(b.points) + " validated run" +
         (b.points == 1 ? "" : "s") + ": " + b.matched + ")";
}

}  // namespace cs::sim
