// clustersim sweep SCENARIO.json [--vary path=v1,v2,...]... [--search] [--gpus N,... [--gpu NAME,...]]
//                  [--csv out.csv] [--json] [--threads N] [--objective tokens_per_s|usd_per_token] [--top N]
//                  [--verify K] [--quiet] [--shard I/N [--part FILE]] [--slurm-script FILE ...]
// clustersim sweep merge PART...
// Three modes over the library's sim/explore/sweep.hpp: a cartesian sweep of --vary axes, a layout search
// (--search) and capacity planning (--gpus). Tables on stdout; progress on stderr (redrawn in place on a
// terminal, a line per 10 % otherwise, nothing with --quiet). A shard (--shard I/N) writes its points to
// a part file instead of printing; `sweep merge` prints the parts' run as the unsharded run would;
// --slurm-script writes the sbatch submission of the shards and the merge (docs/sweep.md).
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string_view>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "sim/cli/cli.hpp"
#include "sim/cli/cli_options.hpp"
#include "models/hardware/gpu_catalog.hpp"
#include "sim/base/input_error.hpp"
#include "sim/base/suggest.hpp"
#include "sim/report/output_file.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/explore/sweep.hpp"
#include "sim/explore/sweep_part.hpp"
#include "sim/base/units.hpp"
#include "sim/files/file_error.hpp"
#include "sim/files/input_file.hpp"
#include "sim/report/format.hpp"

namespace po = boost::program_options;
using nlohmann::json;

namespace cs::sim::cli {
namespace {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, ','))
    if (!cur.empty()) out.push_back(cur);
  return out;
}

// Short column names for the knobs users vary most.
std::string short_name(const std::string& path) {
  static const std::map<std::string, std::string> names = {
      {"tensor_model_parallel_size", "TP"}, {"pipeline_model_parallel_size", "PP"},
      {"context_parallel_size", "CP"},      {"expert_model_parallel_size", "EP"},
      {"expert_tensor_parallel_size", "ETP"},
      {"virtual_pipeline_model_parallel_size", "VP"}, {"data_parallel_size", "DP"},
      {"micro_batch_size", "MBS"},          {"global_batch_size", "GBS"},
      {"zero_stage", "ZeRO"},               {"recompute_granularity", "recompute"},
      {"sequence_parallel", "SP"},          {"seq_length", "seq"}};
  const auto dot = path.rfind('.');
  const std::string last = dot == std::string::npos ? path : path.substr(dot + 1);
  const auto it = names.find(last);
  return it == names.end() ? last : it->second;
}

std::string value_text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// A plain text table: left-aligned text, right-aligned numbers, columns as wide as their widest cell.
class Table {
 public:
  explicit Table(std::vector<std::string> header) : rows_{std::move(header)} {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string str() const {
    std::vector<std::size_t> width;
    for (const auto& r : rows_)
      // A row shorter than the header ends in free text (a message) that does not widen its column.
      for (std::size_t c = 0; c < (r.size() < rows_[0].size() ? r.size() - 1 : r.size()); ++c) {
        if (width.size() <= c) width.push_back(0);
        width[c] = std::max(width[c], r[c].size());
      }
    std::string out;
    for (const auto& r : rows_) {
      std::string line;
      for (std::size_t c = 0; c < r.size(); ++c) {
        const bool numeric = !r[c].empty() && (std::isdigit(static_cast<unsigned char>(r[c][0])) || r[c][0] == '$' || r[c][0] == '-');
        const std::string pad(width[c] > r[c].size() ? width[c] - r[c].size() : 0, ' ');
        line += (c ? "  " : "") + (numeric && (r.size() >= rows_[0].size() || c + 1 < r.size()) ? pad + r[c] : r[c] + (c + 1 < r.size() ? pad : ""));
      }
      out += line + "\n";
    }
    return out;
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// Layout and results of one point as CSV cells (header in kPointColumns).
const char* const kPointColumns =
    "status,error,gpu,gpus,nodes,tp,pp,dp,cp,ep,vp,micro_batch_size,zero_stage,recompute,sequence_parallel,"
    "step_time_s,tokens_per_s,tokens_per_s_per_gpu,mfu,memory_gib,fits_in_memory,usd_per_step,price_per_gpu_hour_usd,"
    "usd_per_million_tokens,days_to_train,usd_to_train,goodput";
// With the screening tier (a search's --verify K) one more column: every point's estimate, simulated or not.
const char* const kEstimateColumn = ",estimate_step_time_s";

bool any_estimate(const std::vector<SweepPoint>& points) {
  return std::any_of(points.begin(), points.end(), [](const SweepPoint& p) { return p.estimate_step_time_s.has_value(); });
}

// The results of an estimated point are the screening tier's (its status says so).
std::string point_csv(const SweepPoint& p, bool screened = false) {
  const Report& r = p.report;
  const std::string estimate = !screened ? "" : p.estimate_step_time_s ? "," + fmt("%.6g", *p.estimate_step_time_s) : ",";
  std::string o = csv_field(to_string(p.status)) + "," + csv_field(p.error);
  if (!p.valid) return o + std::string(25, ',') + estimate;
  auto num = [](double v) { return fmt("%.6g", v); };
  o += "," + csv_field(r.gpu) + "," + std::to_string(r.num_gpus) + "," + std::to_string(r.nodes) + "," + std::to_string(r.tp) +
       "," + std::to_string(r.pp) + "," + std::to_string(r.dp) + "," + std::to_string(r.cp) + "," + std::to_string(r.ep) + "," +
       std::to_string(r.vp) + "," + std::to_string(r.micro_batch_size) + "," + std::to_string(r.zero_stage) + "," + r.recompute +
       "," + (r.sequence_parallel ? "true" : "false");
  if (!p.simulated() && !p.estimated())
    return o + ",,,,," + num(r.memory.total_bytes() / kGiB) + "," + (r.fits_in_memory ? "true" : "false") + ",," +
           num(r.price_per_gpu_hour_usd) + ",,,," + estimate;
  return o + "," + num(r.step_time_s) + "," + num(r.tokens_per_s) + "," + num(r.tokens_per_s / r.num_gpus) + "," + num(r.mfu) +
         "," + num(r.memory.total_bytes() / kGiB) + "," + (r.fits_in_memory ? "true" : "false") + "," + num(r.cost.usd_per_step) +
         "," + num(r.price_per_gpu_hour_usd) + "," + num(p.usd_per_token() * 1e6) + "," + num(p.days_to_train()) + "," +
         num(p.usd_to_train()) + "," + (p.whole_run ? num(p.whole_run->goodput) : std::string()) + estimate;
}

std::string layout_text(const Report& r) {
  std::string s = "TP" + std::to_string(r.tp) + " PP" + std::to_string(r.pp) + " DP" + std::to_string(r.dp);
  if (r.cp > 1) s += " CP" + std::to_string(r.cp);
  if (r.ep > 1) s += " EP" + std::to_string(r.ep);
  if (r.etp != r.tp) s += " ETP" + std::to_string(r.etp);
  if (r.vp > 1) s += " VP" + std::to_string(r.vp);
  s += " mbs" + std::to_string(r.micro_batch_size);
  if (r.zero_stage) s += " ZeRO-" + std::to_string(r.zero_stage);
  if (r.recompute != "none") s += " rc-" + r.recompute;
  return s;
}

// The layout columns and results of ranked points.
Table ranked_table(const std::vector<SweepPoint>& points, const std::vector<std::size_t>& idx, bool with_gpu) {
  std::vector<std::string> head;
  head.push_back("#");
  if (with_gpu) head.insert(head.end(), {"gpu", "gpus"});
  head.insert(head.end(), {"TP", "PP", "DP", "CP", "EP", "VP", "MBS", "ZeRO", "recompute", "SP", "step", "tokens/s", "tok/s/GPU",
                           "MFU", "mem GiB", "$/GPU-h", "$/M tok"});
  const bool train = !idx.empty() && points[idx[0]].report.tokens_to_train > 0;
  // With a resilience or data_pipeline section the days and dollars are the whole run's (docs/goodput.md).
  const bool whole = !idx.empty() && points[idx[0]].whole_run.has_value();
  if (whole) head.push_back("goodput");
  if (train) head.insert(head.end(), {whole ? "eff. days" : "days", whole ? "eff. $" : "$ to train"});
  // The screening tier (--verify): each row's estimate and which numbers the row shows.
  bool screened = false;
  for (std::size_t i : idx) screened |= points[i].estimate_step_time_s.has_value();
  if (screened) head.insert(head.end(), {"estimate", "source"});
  Table t(head);
  std::size_t rank = 0;
  for (std::size_t i : idx) {
    const Report& r = points[i].report;
    std::vector<std::string> row{std::to_string(++rank)};
    if (with_gpu) row.insert(row.end(), {r.gpu, std::to_string(r.num_gpus)});
    row.insert(row.end(), {std::to_string(r.tp), std::to_string(r.pp), std::to_string(r.dp), std::to_string(r.cp),
                           std::to_string(r.ep), std::to_string(r.vp), std::to_string(r.micro_batch_size),
                           std::to_string(r.zero_stage), r.recompute, r.sequence_parallel ? "on" : "off", fmt("%.3f s", r.step_time_s), grouped(r.tokens_per_s),
                           grouped(r.tokens_per_s / r.num_gpus), fmt("%.1f%%", 100 * r.mfu),
                           fmt("%.1f", r.memory.total_bytes() / kGiB), money(r.price_per_gpu_hour_usd),
                           money(points[i].usd_per_token() * 1e6)});
    if (whole) row.push_back(points[i].whole_run ? fmt("%.2f%%", 100 * points[i].whole_run->goodput) : "-");
    if (train) row.insert(row.end(), {fmt("%.1f", points[i].days_to_train()), money(points[i].usd_to_train())});
    if (screened) {
      const auto& e = points[i].estimate_step_time_s;
      row.insert(row.end(), {e ? fmt("%.3f s", *e) : "-", points[i].simulated() ? "DES" : "estimate"});
    }
    t.add(row);
  }
  return t;
}

std::vector<std::size_t> head_of(const std::vector<std::size_t>& v, std::size_t n) {
  return n == 0 || v.size() <= n ? v : std::vector<std::size_t>(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n));
}

// The most frequent reasons layouts were invalid, so a user sees what the search left out and why.
std::string invalid_reasons(const std::vector<SweepPoint>& points, std::size_t n) {
  std::map<std::string, std::size_t> count;
  for (const auto& p : points)
    if (p.status == PointStatus::invalid) ++count[p.error];
  std::vector<std::pair<std::size_t, std::string>> v;
  for (const auto& [msg, c] : count) v.emplace_back(c, msg);
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string out;
  for (std::size_t i = 0; i < v.size() && i < n; ++i) out += "  " + std::to_string(v[i].first) + " x " + v[i].second + "\n";
  if (v.size() > n) out += "  ... and " + std::to_string(v.size() - n) + " other reasons (all in --csv)\n";
  return out;
}

std::string counts_text(const SearchCounts& c) {
  return std::to_string(c.enumerated) + " layouts enumerated: " + std::to_string(c.invalid) + " invalid, " +
         std::to_string(c.not_fitting) + " do not fit in memory, " + std::to_string(c.dominated) +
         " dominated (a lighter recompute or ZeRO stage fits), " + std::to_string(c.simulated) + " simulated" +
         (c.estimated ? ", " + std::to_string(c.estimated) + " estimated only (screening tier)" : std::string{}) +
         (c.cancelled ? ", " + std::to_string(c.cancelled) + " cancelled" : std::string{});
}

// Progress on stderr: on a terminal one line redrawn in place (at most 5 times a second), elsewhere (a
// pipe, a log file, a Slurm job's output) a line at every 10 %; nothing with --quiet. Each phase of a
// search (screening, simulation) counts on its own. Never on stdout, which holds the results.
std::function<void(const SweepProgress&)> progress_printer(bool quiet) {
  if (quiet) return {};
  struct State {
    bool tty = false;
    std::string phase;
    std::size_t total = 0;
    double last = -1;
    std::size_t decile = 0;
  };
  auto st = std::make_shared<State>();
  st->tty = ::isatty(STDERR_FILENO) != 0;
  return [st](const SweepProgress& p) {
    if (p.phase != st->phase || p.total != st->total) {
      *st = State{st->tty, p.phase, p.total, -1, 0};
    }
    const double rate = p.elapsed_s > 0 ? static_cast<double>(p.done) / p.elapsed_s : 0;
    const double eta = rate > 0 ? static_cast<double>(p.total - p.done) / rate : 0;
    char buf[200];
    std::snprintf(buf, sizeof buf, "%zu/%zu %s (%.0f%%), %.0f/s, ETA %.0f s", p.done, p.total, p.phase,
                  100.0 * static_cast<double>(p.done) / static_cast<double>(p.total), rate, eta);
    const std::string text = buf;
    if (st->tty) {
      if (p.done != p.total && st->last >= 0 && p.elapsed_s - st->last < 0.2) return;
      st->last = p.elapsed_s;
      std::fprintf(stderr, "\r\033[K  %s", text.c_str());
      if (p.done == p.total) std::fprintf(stderr, "\n");
    } else {
      const std::size_t decile = p.done * 10 / p.total;
      if (decile <= st->decile) return;
      st->decile = decile;
      std::fprintf(stderr, "  %s\n", text.c_str());
    }
    std::fflush(stderr);
  };
}

// How a run ends: printed (the default), written as a part file (--shard), or printed from the merged
// points of its parts (sweep merge).
struct RunContext {
  std::vector<std::string> args;  // the sweep's own arguments, less --shard, --part and --quiet
  json scenario;                  // the scenario file as read
  std::optional<Shard> shard;
  std::string part_path;
  bool quiet = false;
  const std::vector<SweepPoint>* merged = nullptr;
  std::vector<std::string> merged_skipped;
  std::vector<std::string> merged_parts;  // sweep merge: the part files (inputs no output may replace)
  json doc;                               // the scenario with its --set overrides (a part's digests)
};

// A shard's result: every point (the others' left pending) and what the merge needs to print the run.
int write_part(const RunContext& ctx, const std::string& file, const std::vector<SweepPoint>& points,
               const std::vector<std::string>& skipped) {
  SweepPart part;
  part.shard = *ctx.shard;
  part.run = {{"args", ctx.args}, {"file", file}, {"scenario", ctx.scenario}, {"skipped", skipped}};
  part.points = points;
  part.inputs = run_inputs(file, ctx.doc, points);
  write_file_atomically(ctx.part_path, to_json(part).dump() + "\n");
  if (!ctx.quiet) {
    std::size_t mine = 0;
    for (const auto& p : points) mine += p.status != PointStatus::pending;
    std::cerr << "shard " << ctx.shard->index << "/" << ctx.shard->count << ": wrote " << ctx.part_path << " (" << points.size()
              << " points, merge the " << ctx.shard->count << " parts with clustersim sweep merge)\n";
  }
  return kExitOk;
}

int vary_mode(const json& doc, const std::string& file, const std::vector<SweepAxis>& axes, const SweepOptions& opts,
              const po::variables_map& vm, const RunContext& ctx) {
  const auto points = ctx.merged ? *ctx.merged : run_sweep(doc, file, axes, opts);
  if (ctx.shard) return write_part(ctx, file, points, {});
  if (vm.count("json")) {
    json arr = json::array();
    for (const auto& p : points) arr.push_back(to_json(p));
    std::cout << json{{"mode", "vary"}, {"points", arr}}.dump(2) << "\n";
  } else {
    std::vector<std::string> head;
    for (const auto& a : axes) head.push_back(short_name(a.path));
    head.insert(head.end(), {"step", "tokens/s", "MFU", "mem/GPU GiB", "fits", "$/GPU-h", "$/step", "days", "$ to train"});
    Table t(head);
    std::string invalid;
    for (const auto& p : points) {
      std::vector<std::string> row;
      for (const auto& [path, v] : p.assignment) row.push_back(value_text(v));
      if (!p.simulated()) {
        row.push_back("invalid: " + p.error);
      } else {
        const Report& r = p.report;
        const bool train = r.tokens_to_train > 0;
        row.insert(row.end(), {fmt("%.3f s", r.step_time_s), grouped(r.tokens_per_s), fmt("%.1f%%", 100 * r.mfu),
                               fmt("%.1f", r.memory.total_bytes() / kGiB), r.fits_in_memory ? "yes" : "NO",
                               money(r.price_per_gpu_hour_usd), fmt("$%.3f", r.cost.usd_per_step),
                               train ? fmt("%.1f", p.days_to_train()) : "-", train ? money(p.usd_to_train()) : "-"});
      }
      t.add(row);
    }
    std::cout << t.str();
  }
  if (vm.count("csv")) {
    std::string csv;
    for (const auto& a : axes) csv += csv_field(a.path) + ",";
    csv += std::string(kPointColumns) + "\n";
    for (const auto& p : points) {
      for (const auto& [path, v] : p.assignment) csv += csv_field(value_text(v)) + ",";
      csv += point_csv(p) + "\n";
    }
    write_file_atomically(vm["csv"].as<std::string>(), csv);
  }
  return kExitOk;
}

// --emit-scenario FILE: the first row of the table (the best) as a scenario `clustersim run FILE` runs: the
// sweep's scenario (its --set overrides included) with every knob the row's layout sets.
void emit_scenario(const po::variables_map& vm, const json& doc, const std::string& file, const std::vector<SweepPoint>& points,
                   const std::vector<std::size_t>& ranked) {
  if (!vm.count("emit-scenario")) return;
  if (ranked.empty()) throw InputError("clustersim sweep: --emit-scenario: no row to write (no layout fits)");
  write_file_atomically(vm["emit-scenario"].as<std::string>(), point_document(doc, file, points[ranked.front()].assignment).dump(2) + "\n");
}

int search_mode(const json& doc, const std::string& file, const SearchOptions& opts, Objective objective, std::size_t top,
                const po::variables_map& vm, const RunContext& ctx) {
  SearchResult r;
  if (ctx.merged) {
    r.points = *ctx.merged;
    finish_search(r, objective);
  } else {
    r = search_layouts(doc, file, opts, objective);
  }
  if (ctx.shard) return write_part(ctx, file, r.points, {});
  const auto shown = head_of(r.ranked, top);
  if (vm.count("json")) {
    json arr = json::array();
    std::size_t rank = 0;
    for (std::size_t i : shown) {
      json p = to_json(r.points[i]);
      p["rank"] = ++rank;
      arr.push_back(p);
    }
    std::cout << json{{"mode", "search"}, {"objective", vm["objective"].as<std::string>()}, {"counts", to_json(r.counts)},
                      {"ranked", arr}}
                     .dump(2)
              << "\n";
  } else {
    const Scenario base = parse_scenario(doc, file);
    std::cout << base.name << ": layout search on " << base.num_gpus() << " x " << base.gpu.name << " (" << base.cluster.nodes
              << " nodes x " << base.cluster.gpus_per_node << ")\n"
              << counts_text(r.counts) << "\n";
    if (r.counts.invalid) std::cout << "invalid, by reason:\n" << invalid_reasons(r.points, 6);
    if (shown.empty()) {
      std::cout << "\nno layout fits in memory.\n";
    } else {
      std::cout << "\ntop " << shown.size() << " of " << r.ranked.size() << " by "
                << (objective == Objective::tokens_per_s ? "tokens/s" : "$ per token");
      if (r.counts.estimated)
        std::cout << " (all ranked by the screening estimate, the best " << r.counts.simulated
                  << " simulated: source says whose numbers a row shows)";
      std::cout << ":\n"
                << ranked_table(r.points, shown, false).str();
      std::cout << "\nbest: " << layout_text(r.points[shown[0]].report) << "\n";
    }
  }
  if (vm.count("csv")) {
    const bool screened = any_estimate(r.points);
    std::string csv = "rank," + std::string(kPointColumns) + (screened ? kEstimateColumn : "") + "\n";
    std::vector<std::size_t> rank_of(r.points.size(), 0);
    for (std::size_t k = 0; k < r.ranked.size(); ++k) rank_of[r.ranked[k]] = k + 1;
    for (std::size_t k = 0; k < r.ranked.size(); ++k) csv += std::to_string(k + 1) + "," + point_csv(r.points[r.ranked[k]], screened) + "\n";
    for (std::size_t i = 0; i < r.points.size(); ++i)
      if (rank_of[i] == 0) csv += "," + point_csv(r.points[i], screened) + "\n";
    write_file_atomically(vm["csv"].as<std::string>(), csv);
  }
  emit_scenario(vm, doc, file, r.points, r.ranked);
  return kExitOk;
}

// The outlook of the rows `rows` (capacity planning): days and total cost at P10 / P50 / P90, the power in
// the P50 total, and with --for-days the tokens trained in that time; one line above says what was drawn.
std::string outlook_table(const std::vector<SweepPoint>& points, const std::vector<std::size_t>& rows, const CapacityOptions& opts) {
  const SweepPoint* first = nullptr;
  for (std::size_t i : rows)
    if (points[i].outlook && !first) first = &points[i];
  if (!first) return "";
  const bool for_days = opts.outlook.for_days > 0;
  std::vector<std::string> head = {"#", "gpu", "gpus", "days P10", "P50", "P90", "total $ P10", "P50", "P90", "power $ P50", "failures",
                                   "error band of (runs)"};
  if (for_days) head.insert(head.end(), {"tokens in " + fmt("%g", opts.outlook.for_days) + " d: P10", "P50", "P90"});
  Table t(head);
  std::size_t k = 0;
  for (std::size_t i : rows) {
    ++k;
    if (!points[i].outlook) continue;
    const goodput::Outlook& o = *points[i].outlook;
    std::vector<std::string> row = {std::to_string(k), points[i].report.gpu, std::to_string(points[i].report.num_gpus),
                                    fmt("%.1f", o.days_p10), fmt("%.1f", o.days_p50), fmt("%.1f", o.days_p90), money(o.usd_p10),
                                    money(o.usd_p50), money(o.usd_p90), money(o.power_usd_p50), fmt("%.1f", o.mean_failures),
                                    o.band_points ? o.band + " (" + std::to_string(o.band_points) + ")" : "none"};
    if (for_days) row.insert(row.end(), {fmt("%.3g", o.tokens_p10), fmt("%.3g", o.tokens_p50), fmt("%.3g", o.tokens_p90)});
    t.add(row);
  }
  // Rows outside anything validated draw from a band borrowed from the nearest class: say which and why.
  std::map<std::string, std::string> borrowed;  // reason -> rows
  k = 0;
  for (std::size_t i : rows) {
    ++k;
    if (points[i].outlook && points[i].outlook->out_of_domain) {
      std::string& list = borrowed[points[i].outlook->out_of_domain_why];
      list += (list.empty() ? "" : ", ") + std::to_string(k);
    }
  }
  std::string notes;
  for (const auto& [why, list] : borrowed) notes += "outside the validated runs, band borrowed: row" + std::string(list.find(',') == std::string::npos ? " " : "s ") + list + ": " + why + "\n";
  return "\noutlook: " + goodput::outlook_basis_text(*first->outlook) + "\n" + t.str() + notes;
}

int capacity_mode(const json& doc, const std::string& file, const CapacityOptions& opts, std::size_t top,
                  const po::variables_map& vm, const RunContext& ctx) {
  CapacityResult r;
  if (ctx.merged) {
    r.points = *ctx.merged;
    r.tokens_to_train = part_tokens_to_train(doc, ctx.merged_parts.front() + ": run.scenario");
    r.skipped = ctx.merged_skipped;
    finish_capacity(r, opts, doc, file);
  } else {
    r = plan_capacity(doc, file, opts);
  }
  if (!r.price_note.empty()) std::cerr << "clustersim sweep: " << r.price_note << "\n";
  if (ctx.shard) return write_part(ctx, file, r.points, r.skipped);
  std::vector<bool> on_front(r.points.size(), false);
  for (std::size_t i : r.pareto) on_front[i] = true;
  auto meets = [&](const SweepPoint& p) { return p.meets(opts.deadline_days, opts.budget_usd); };
  if (vm.count("json")) {
    auto pick = [&](const std::optional<std::size_t>& i) { return i ? to_json(r.points[*i]) : json(nullptr); };
    json front = json::array();
    for (std::size_t i : r.pareto) front.push_back(to_json(r.points[i]));
    json ranked = json::array();
    for (std::size_t i : head_of(r.ranked, top)) ranked.push_back(to_json(r.points[i]));
    std::cout << json{{"mode", "capacity"}, {"tokens_to_train", r.tokens_to_train}, {"deadline_days", opts.deadline_days},
                      {"budget_usd", opts.budget_usd}, {"counts", to_json(r.counts)}, {"cheapest", pick(r.cheapest)},
                      {"fastest", pick(r.fastest)}, {"pareto_front", front}, {"ranked", ranked}, {"skipped", r.skipped}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << "capacity plan for " << fmt("%.3g", r.tokens_to_train) << " tokens";
    if (opts.deadline_days > 0) std::cout << ", deadline " << fmt("%g", opts.deadline_days) << " days";
    if (opts.budget_usd > 0) std::cout << ", budget " << money(opts.budget_usd);
    std::cout << "\n" << counts_text(r.counts) << "\n";
    for (const auto& s : r.skipped) std::cout << "skipped " << s << "\n";
    // Best layout per (GPU, count), in the order asked.
    std::vector<std::size_t> best;
    std::map<std::pair<std::string, int>, bool> seen;
    for (std::size_t i : r.ranked) {
      const auto key = std::make_pair(r.points[i].report.gpu, r.points[i].report.num_gpus);
      if (!seen[key]) seen[key] = true, best.push_back(i);
    }
    std::cout << "\ncheapest layout per GPU type and count:\n" << ranked_table(r.points, best, true).str();
    std::cout << outlook_table(r.points, best, opts);
    auto show = [&](const char* what, const std::optional<std::size_t>& i) {
      if (!i) {
        std::cout << what << ": no plan meets the constraints\n";
        return;
      }
      const SweepPoint& point = r.points[*i];
      const Report& p = point.report;
      std::cout << what << ": " << p.num_gpus << " x " << p.gpu << ", " << layout_text(p) << ": " << fmt("%.1f days, ", point.days_to_train())
                << money(point.usd_to_train()) << fmt(" (MFU %.1f%%", 100 * p.mfu)
                << (point.whole_run ? fmt(", goodput %.2f%%", 100 * point.whole_run->goodput) : std::string()) << ")";
      if (point.outlook)
        std::cout << "; P90 " << fmt("%.1f days, ", point.outlook->days_p90) << money(point.outlook->usd_p90) << " with power";
      std::cout << "\n";
    };
    std::cout << "\n";
    show("cheapest", r.cheapest);
    show("fastest ", r.fastest);
    std::cout << "\ncost-vs-time Pareto front (" << r.pareto.size() << " plans; * meets the constraints at P90):\n";
    Table t({"gpu", "gpus", "$/GPU-h", "layout", "days", "$ to train", "P90 days", "P90 total $", "MFU", ""});
    for (std::size_t i : r.pareto) {
      const SweepPoint& point = r.points[i];
      const Report& p = point.report;
      t.add({p.gpu, std::to_string(p.num_gpus), money(p.price_per_gpu_hour_usd), layout_text(p), fmt("%.1f", point.days_to_train()),
             money(point.usd_to_train()), point.outlook ? fmt("%.1f", point.outlook->days_p90) : "-",
             point.outlook ? money(point.outlook->usd_p90) : "-", fmt("%.1f%%", 100 * p.mfu), meets(point) ? "*" : ""});
    }
    std::cout << t.str();
  }
  if (vm.count("csv")) {
    const bool screened = any_estimate(r.points);
    std::string csv = "pareto,meets_constraints," + std::string(kPointColumns) + (screened ? kEstimateColumn : "") + "\n";
    for (std::size_t i : r.ranked)
      csv += std::string(on_front[i] ? "true" : "false") + "," + (meets(r.points[i]) ? "true" : "false") + "," +
             point_csv(r.points[i], screened) + "\n";
    write_file_atomically(vm["csv"].as<std::string>(), csv);
  }
  emit_scenario(vm, doc, file, r.points, r.ranked);
  return kExitOk;
}

}  // namespace

namespace {

bool is_control(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f;
}

// A word as bash reads it back: single-quoted, with ' as '\''. A word with a control character is written in
// bash's $'...' form instead (the character as \xHH), so the script never holds a raw newline or carriage
// return from a value: one would end the comment line it is echoed in, or the quoted here-document a job is
// written in (a line CLUSTERSIM_SHARDS in a value would end that document and run the rest on the submit
// host). The $'...' form: bash(1), QUOTING.
std::string shell_quote(const std::string& w) {
  if (std::none_of(w.begin(), w.end(), is_control)) {
    std::string out = "'";
    for (char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
  }
  std::string out = "$'";
  for (char c : w) {
    if (c == '\\' || c == '\'') out += std::string("\\") + c;
    else if (is_control(c)) out += {'\\', 'x', "0123456789abcdef"[(c >> 4) & 0xf], "0123456789abcdef"[c & 0xf]};
    else out += c;
  }
  return out + "'";
}

// True when every character of `w` means itself both to the shell and in an #SBATCH line (sbatch reads a
// directive's value as written, it does not unquote it) and is no filename-pattern symbol ('%', '\').
bool plain_word(const std::string& w) {
  return !w.empty() && std::all_of(w.begin(), w.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_./=,:@+-").find(c) != std::string_view::npos;
  });
}

// The sweep's arguments as the script's comment shows them: plain words as they are, the others quoted.
std::string shown_command(const std::vector<std::string>& args) {
  std::string line = "clustersim sweep";
  for (const auto& a : args) line += " " + (plain_word(a) ? a : shell_quote(a));
  return line;
}

struct SlurmOptions {
  int array_size = 8;
  std::string partition, time;
};

// Slurm's forms of a time limit (sbatch(1), --time): "minutes", "minutes:seconds", "hours:minutes:seconds",
// "days-hours", "days-hours:minutes", "days-hours:minutes:seconds", and INFINITE / UNLIMITED.
bool slurm_time(const std::string& t) {
  static const std::regex forms("[0-9]{1,9}(:[0-9]{1,9}){0,2}|[0-9]{1,9}-[0-9]{1,9}(:[0-9]{1,9}){0,2}");
  return std::regex_match(t, forms) || t == "INFINITE" || t == "UNLIMITED" || t == "infinite" || t == "unlimited";
}

// The paths the jobs are given (the working folder, the script's own path and the folder of its parts):
// any character but a control one, which sbatch cannot take back from its command line as one word.
void check_slurm_path(const std::string& what, const std::string& path) {
  if (std::any_of(path.begin(), path.end(), is_control))
    throw InputError("clustersim sweep: --slurm-script: " + what + " \"" + path +
                     "\" has a control character (a newline, tab, ...) that sbatch cannot take; choose another");
}

// --array-size, --partition and --time and the paths the jobs will be given, each checked before anything is
// written or run; nothing without --slurm-script.
std::optional<SlurmOptions> slurm_options(const po::variables_map& vm) {
  if (!vm.count("slurm-script")) {
    if (vm.count("array-size") || vm.count("partition") || vm.count("time"))
      throw InputError("clustersim sweep: --array-size, --partition and --time need --slurm-script");
    return std::nullopt;
  }
  if (vm.count("shard")) throw InputError("clustersim sweep: --slurm-script writes the shards' jobs itself (leave out --shard)");
  SlurmOptions so;
  if (vm.count("array-size")) {
    so.array_size = vm["array-size"].as<int>();
    if (so.array_size < 1 || so.array_size > 100000)
      throw InputError("clustersim sweep: --array-size " + std::to_string(so.array_size) + ": expected 1 to 100000 shards");
  }
  if (vm.count("partition")) {
    so.partition = vm["partition"].as<std::string>();
    // A partition name as slurm.conf spells one (PartitionName), several joined by commas.
    static const std::regex names("[A-Za-z0-9_.-]+(,[A-Za-z0-9_.-]+)*");
    if (!std::regex_match(so.partition, names))
      throw InputError("clustersim sweep: --partition \"" + so.partition +
                       "\": expected a partition name of letters, digits, '_', '.' and '-' (several joined by commas)");
  }
  if (vm.count("time")) {
    so.time = vm["time"].as<std::string>();
    if (!slurm_time(so.time))
      throw InputError("clustersim sweep: --time \"" + so.time +
                       "\": expected a Slurm time limit (M, M:S, H:M:S, D-H, D-H:M, D-H:M:S or UNLIMITED)");
  }
  check_slurm_path("the working folder", std::filesystem::current_path().string());
  const std::string base = std::filesystem::absolute(vm["slurm-script"].as<std::string>()).lexically_normal().string();
  check_slurm_path("the script's path", base);
  if (base.find('\\') != std::string::npos)
    throw InputError("clustersim sweep: --slurm-script \"" + base +
                     "\": a backslash turns off sbatch's filename patterns in the jobs' logs; choose a path without one");
  return so;
}

// sbatch's options that name a path: an "#SBATCH --NAME=PATH" line when the path is a plain word (as it
// is written), otherwise a shell-quoted word on sbatch's command line, where '%' (a filename-pattern symbol
// in --output and --error, sbatch(1) "filename pattern") is written "%%".
struct SbatchPaths {
  std::string lines, command_line;
  void add(const std::string& name, const std::string& path, const std::string& pattern_suffix, bool pattern) {
    if (plain_word(path)) {
      lines += "#SBATCH --" + name + "=" + path + pattern_suffix + "\n";
      return;
    }
    std::string value;
    for (char c : path) value += pattern && c == '%' ? std::string("%%") : std::string(1, c);
    command_line += " --" + name + "=" + shell_quote(value) + pattern_suffix;
  }
};

// The submission script of a sharded run: an `sbatch --array` of the shards (each writes its part file),
// then the merge as a job that starts when every shard has succeeded (afterok on the array); its stdout
// is the run's output. Paths are made absolute and each job runs in the folder the script was written
// from, so relative paths in the sweep's arguments mean what they meant here. Every value is written
// shell-quoted; the merge reads the part files' names from a list the script writes (FILE.parts/parts.list),
// so 10^5 shards are no argument list longer than ARG_MAX.
std::string slurm_script(const std::vector<std::string>& sweep_args, const std::string& script_path, const SlurmOptions& o) {
  namespace fs = std::filesystem;
  const std::string exe = fs::read_symlink("/proc/self/exe").string();
  const std::string cwd = fs::current_path().string();
  const std::string base = fs::absolute(script_path).lexically_normal().string();
  const std::string parts = base + ".parts";
  const int n = o.array_size;
  std::string sbatch_opts;
  if (!o.partition.empty()) sbatch_opts += "#SBATCH --partition=" + o.partition + "\n";
  if (!o.time.empty()) sbatch_opts += "#SBATCH --time=" + o.time + "\n";
  SbatchPaths shards, merge;
  shards.add("chdir", cwd, "", false);
  shards.add("output", parts, "/shard-%a.log", true);
  merge.add("chdir", cwd, "", false);
  merge.add("output", base + ".out", "", true);
  merge.add("error", base + ".err", "", true);
  std::string shard_cmd = "exec " + shell_quote(exe) + " sweep";
  for (const auto& a : sweep_args) shard_cmd += " " + shell_quote(a);
  shard_cmd += " --quiet --shard \"${SLURM_ARRAY_TASK_ID}/" + std::to_string(n) + "\" --part " + shell_quote(parts) +
               "\"/part-${SLURM_ARRAY_TASK_ID}.json\"";
  const std::string list = shell_quote(parts + "/parts.list");
  const std::string merge_cmd = "exec " + shell_quote(exe) + " sweep merge --parts-list " + list;
  return "#!/bin/bash\n"
         "# Written by clustersim sweep --slurm-script: `" + shown_command(sweep_args) + "` as " + std::to_string(n) +
         " Slurm array tasks (clustersim sweep --shard I/" + std::to_string(n) +
         ", one part file each) and a merge job that runs when all of them succeeded\n"
         "# (clustersim sweep merge). Submit with: bash " + shell_quote(base) + "\n"
         "# The merged output (the unsharded run's, byte for byte) goes to " + shell_quote(base + ".out") + ", the jobs' logs next to it.\n"
         "set -euo pipefail\n"
         "mkdir -p " + shell_quote(parts) + "\n"
         "for ((i = 0; i < " + std::to_string(n) + "; i++)); do printf '%s/part-%d.json\\n' " + shell_quote(parts) +
         " \"$i\"; done > " + list + "\n"
         "array_id=$(sbatch --parsable" + shards.command_line + " <<'CLUSTERSIM_SHARDS'\n"
         "#!/bin/bash\n"
         "#SBATCH --job-name=clustersim-sweep\n"
         "#SBATCH --array=0-" + std::to_string(n - 1) + "\n" + shards.lines + sbatch_opts +
         shard_cmd + "\n"
         "CLUSTERSIM_SHARDS\n"
         ")\n"
         "array_id=${array_id%%;*}\n"
         "merge_id=$(sbatch --parsable --dependency=afterok:${array_id}" + merge.command_line + " <<'CLUSTERSIM_MERGE'\n"
         "#!/bin/bash\n"
         "#SBATCH --job-name=clustersim-sweep-merge\n" + merge.lines + sbatch_opts +
         merge_cmd + "\n"
         "CLUSTERSIM_MERGE\n"
         ")\n"
         "merge_id=${merge_id%%;*}\n"
         "echo \"submitted shards ${array_id} (" + std::to_string(n) + " array tasks) and merge ${merge_id}: output in \"" +
         shell_quote(base + ".out") + "\n";
}

// The arguments that define the run (what a shard records and a Slurm job repeats): the parsed options less
// --shard, --part, --quiet and the Slurm ones, matched by the option the parser chose (so an abbreviation
// such as --arr 4 or --slurm=FILE is left out like the full name), each as the words it was given in.
std::vector<std::string> run_arguments(const std::vector<po::option>& parsed) {
  static const std::set<std::string> local = {"shard", "part", "quiet", "slurm-script", "array-size", "partition", "time"};
  std::vector<std::string> out;
  for (const auto& o : parsed)
    if (!local.count(o.string_key)) out.insert(out.end(), o.original_tokens.begin(), o.original_tokens.end());
  return out;
}

// The most points a --vary sweep may have unless --max-points says otherwise: each point holds its
// assignment and report (sizeof(SweepPoint) is 1,400 bytes with GCC 12 on x86-64, plus its strings and JSON
// values), so 10^6 points are about 1.5-3 GB before the first simulation, within a sweep host's memory.
constexpr long kDefaultMaxPoints = 1000000;

// The number of points of a --vary sweep (the product of the axes' lengths, saturating, never overflowing),
// refused past the limit before the list of points is built: 10^9 points would end in std::bad_alloc.
void check_point_count(const std::vector<SweepAxis>& axes, long limit) {
  std::size_t count = 1;
  double product = 1;
  std::string sizes;
  for (const auto& a : axes) {
    const std::size_t n = a.values.size();
    product *= static_cast<double>(n);
    count = n != 0 && count > std::numeric_limits<std::size_t>::max() / n ? std::numeric_limits<std::size_t>::max() : count * n;
    sizes += (sizes.empty() ? "" : " x ") + std::to_string(n);
  }
  if (count <= static_cast<std::size_t>(limit)) return;
  throw InputError("clustersim sweep: --vary: " + (product < 1e15 ? fmt("%.0f", product) : fmt("%.3g", product)) + " points (" +
                   sizes + " values), more than the limit of " + std::to_string(limit) +
                   " (--max-points N; or sweep fewer values, or split the sweep)");
}

long max_points(const po::variables_map& vm) {
  if (!vm.count("max-points")) return kDefaultMaxPoints;
  const std::string text = vm["max-points"].as<std::string>();
  const std::optional<long> v = whole_integer(text);
  if (!v || *v < 1 || *v > 100000000) throw InputError("clustersim sweep: --max-points " + text + ": expected an integer in [1, 100000000]");
  return *v;
}

// Every file the sweep reads (the scenario, the files it names, in the base and in a --vary axis over those
// keys, and a merge's part files) against every file it writes (--csv, --part, --slurm-script), before
// anything runs: an output never replaces an input.
void check_outputs(const po::variables_map& vm, const json& doc, const std::string& file, const std::vector<SweepAxis>& axes,
                   const RunContext& ctx) {
  std::vector<files::InputFile> inputs = scenario_inputs(doc, file);
  for (const auto& a : axes)
    for (const auto& v : a.values) {
      if (a.path != "calibration" && a.path != "cluster.topology_file") continue;
      json named = json::object();
      if (a.path == "calibration") named["calibration"] = v;
      else named["cluster"]["topology_file"] = v;
      const auto more = scenario_inputs(named, file);
      inputs.insert(inputs.end(), more.begin() + 1, more.end());
    }
  for (const auto& part : ctx.merged_parts) inputs.push_back({part, {}});
  if (vm.count("csv") && !ctx.shard) check_writable("--csv", vm["csv"].as<std::string>(), inputs);  // before a long sweep
  if (ctx.shard) check_writable("--part", ctx.part_path, inputs);
  if (vm.count("slurm-script")) check_writable("--slurm-script", vm["slurm-script"].as<std::string>(), inputs);
  if (vm.count("emit-scenario")) check_writable("--emit-scenario", vm["emit-scenario"].as<std::string>(), inputs);
}

// What the sweep is asked to do, read and checked from the options before anything runs.
struct SweepPlan {
  bool search = false, capacity = false, vary = false;
  Objective objective = Objective::tokens_per_s;
  std::size_t top = 0;
  SearchOptions search_options;
  CapacityOptions capacity_options;
  std::vector<SweepAxis> axes;
};

// --gpus, --gpu, --deadline-days and --budget-usd of capacity planning.
CapacityOptions capacity_options(const po::variables_map& vm, const SearchOptions& sopts) {
  CapacityOptions c;
  for (const auto& n : split_list(vm["gpus"].as<std::string>())) {
    // std::stoi's range: a count beyond an int is refused like any other non-count.
    const std::optional<long> v = whole_integer(n);
    if (!v || *v <= 0 || *v > std::numeric_limits<int>::max())
      throw InputError("clustersim sweep: --gpus " + n + ": expected a positive integer");
    c.gpu_counts.push_back(static_cast<int>(*v));
  }
  if (vm.count("gpu")) c.gpu_types = split_list(vm["gpu"].as<std::string>());
  for (const auto& t : c.gpu_types)
    if (!models::find_gpu(t)) throw InputError("clustersim sweep: --gpu: " + unknown_gpu(t, models::gpu_names()));
  // A limit is a positive finite number; leaving the option out means no limit.
  auto limit = [&](const char* option, const char* what) {
    const double v = vm[option].as<double>();
    if (!std::isfinite(v) || v <= 0)
      throw InputError(std::string("clustersim sweep: --") + option + " " + fmt("%g", v) + ": expected a positive " + what +
                       " (leave the option out for no limit)");
    return v;
  };
  if (vm.count("deadline-days")) c.deadline_days = limit("deadline-days", "number of days");
  if (vm.count("budget-usd")) c.budget_usd = limit("budget-usd", "amount of dollars");
  if (vm.count("for-days")) c.outlook.for_days = limit("for-days", "number of days");
  c.outlook.draws = vm["runs"].as<int>();
  if (c.outlook.draws < 1 || c.outlook.draws > 1000000)
    throw InputError("clustersim sweep: --runs " + std::to_string(c.outlook.draws) + ": expected the outlook's draws, 1 to 1000000");
  c.outlook.seed = vm["seed"].as<std::uint64_t>();
  c.search = sopts;
  return c;
}

SweepPlan sweep_plan(const po::variables_map& vm, const RunContext& ctx) {
  SweepPlan plan;
  SweepOptions run;
  if (vm.count("threads")) {
    run.threads = vm["threads"].as<int>();
    if (run.threads < 1) throw InputError("clustersim sweep: --threads " + std::to_string(run.threads) + ": expected at least 1");
  }
  run.progress = progress_printer(ctx.quiet);
  if (ctx.shard) run.shard = *ctx.shard;
  const auto objective = parse_objective(vm["objective"].as<std::string>());
  if (!objective)
    throw InputError("clustersim sweep: --objective " + vm["objective"].as<std::string>() + ": expected tokens_per_s or usd_per_token");
  plan.objective = *objective;
  plan.top = vm["top"].as<std::size_t>();
  plan.search = vm.count("search") > 0, plan.capacity = vm.count("gpus") > 0, plan.vary = vm.count("vary") > 0;
  if (plan.vary && (plan.search || plan.capacity))
    throw InputError("clustersim sweep: --vary cannot be combined with --search or --gpus (fix values with --set instead)");
  if (!plan.capacity && (vm.count("gpu") || vm.count("deadline-days") || vm.count("budget-usd") || vm.count("for-days") ||
                         !vm["runs"].defaulted() || !vm["seed"].defaulted()))
    throw InputError("clustersim sweep: --gpu, --deadline-days, --budget-usd, --for-days, --runs and --seed need --gpus (capacity planning)");
  if (plan.vary && !vm["verify"].defaulted())
    throw InputError("clustersim sweep: --verify needs --search or --gpus (a --vary sweep simulates every point)");
  if (vm.count("max-points") && !plan.vary) throw InputError("clustersim sweep: --max-points needs --vary");
  if (vm.count("emit-scenario") && plan.vary) throw InputError("clustersim sweep: --emit-scenario needs --search or --gpus");
  SearchOptions& sopts = plan.search_options;
  sopts.allow_tp_across_nodes = vm.count("allow-tp-across-nodes") > 0;
  sopts.exhaustive = vm.count("exhaustive") > 0;
  sopts.verify = vm["verify"].as<std::size_t>();
  sopts.run = run;
  if (plan.capacity) plan.capacity_options = capacity_options(vm, sopts);
  if (!plan.capacity && !plan.search && !plan.vary)
    throw InputError("clustersim sweep: nothing to sweep (give --vary, --search or --gpus; see clustersim sweep --help)");
  if (plan.vary) {
    for (const auto& v : vm["vary"].as<std::vector<std::string>>()) plan.axes.push_back(parse_axis(v));
    check_point_count(plan.axes, max_points(vm));
  }
  return plan;
}

// Writes the Slurm submission of the sweep after checking what its shards will check (the scenario, the
// options, every point or layout validated and screened, nothing simulated), so no job is written for a
// sweep its shards would refuse.
int write_slurm_script(const po::variables_map& vm, const json& doc, const std::string& file, const SweepPlan& plan,
                       const SlurmOptions& so, const RunContext& ctx) {
  SweepOptions quiet = plan.search_options.run;
  quiet.progress = {};
  if (plan.capacity) {
    CapacityOptions c = plan.capacity_options;
    c.search.run = quiet;
    c.search.screen_only = true;
    (void)plan_capacity(doc, file, c);
  } else if (plan.search) {
    SearchOptions s = plan.search_options;
    s.run = quiet;
    s.screen_only = true;
    (void)search_layouts(doc, file, s, plan.objective);
  } else {
    quiet.simulate = false;
    const std::vector<SweepPoint> points = run_sweep(doc, file, plan.axes, quiet);
    // A shard runs such a sweep (every row "invalid: ..."), but no cluster time should be spent on it.
    if (std::all_of(points.begin(), points.end(), [](const SweepPoint& p) { return p.status == PointStatus::invalid; }))
      throw InputError("clustersim sweep: --slurm-script: every one of the " + std::to_string(points.size()) +
                       " points is invalid, no job written (the first: " + points.front().error + ")");
  }
  const std::string out = vm["slurm-script"].as<std::string>();
  write_file_atomically(out, slurm_script(ctx.args, out, so));
  std::filesystem::permissions(out, std::filesystem::perms::owner_exec | std::filesystem::perms::group_exec,
                               std::filesystem::perm_options::add);
  if (!ctx.quiet) std::cerr << "wrote " << out << ": submit with bash " << (plain_word(out) ? out : shell_quote(out)) << "\n";
  return kExitOk;
}

// sweep merge: the parts' run writes nothing but its own outputs (check_part_args refused the rest as
// written; this catches what the parser made of them), and its CSV overwrites no part (said here with the
// part that asked for it; check_outputs checks the scenario's files after).
void check_merged_options(const po::variables_map& vm, const RunContext& ctx) {
  for (const char* o : {"shard", "part", "slurm-script", "array-size", "partition", "time"})
    if (vm.count(o))
      throw InputError(ctx.merged_parts.front() + ": run.args: --" + o + ": not an argument of a shard's run (merge writes only the run's own outputs)");
  if (vm.count("csv")) {
    try {
      check_writable(vm["csv"].as<std::string>(), ctx.merged_parts);
    } catch (const InputError& e) {
      throw InputError(ctx.merged_parts.front() + ": run.args: --csv: " + e.messages().front());
    }
  }
}

void add_sweep_options(po::options_description& opts) {
  with_help(opts)("vary", po::value<std::vector<std::string>>()->composing()->value_name("PATH=V1,V2,..."),
       "vary a scenario value over a list (repeatable: cartesian product), e.g. --vary cluster.nodes=4,8,16")
      ("set", po::value<std::vector<std::string>>()->composing()->value_name("PATH=VALUE"),
       "override a scenario value for every point (repeatable)")
      ("search", "search every valid layout for the scenario's cluster")
      ("gpus", po::value<std::string>()->value_name("N,N,..."), "capacity planning: GPU counts to consider")
      ("gpu", po::value<std::string>()->value_name("NAME,..."), "capacity planning: GPU types (default: the scenario's)")
      ("deadline-days", po::value<double>()->value_name("D"), "capacity planning: train within D days")
      ("budget-usd", po::value<double>()->value_name("B"), "capacity planning: spend at most B dollars")
      ("for-days", po::value<double>()->value_name("N"), "capacity planning: also the tokens each plan trains in N days (P10/P50/P90)")
      ("runs", po::value<int>()->default_value(1000)->value_name("N"),
       "capacity planning: draws of the outlook (the model's error band x the failure Monte Carlo)")
      ("seed", po::value<std::uint64_t>()->default_value(1)->value_name("S"), "capacity planning: the outlook's random seed")
      ("objective", po::value<std::string>()->default_value("tokens_per_s"), "ranking: tokens_per_s or usd_per_token")
      ("top", po::value<std::size_t>()->default_value(20), "show the best N layouts (0: all)")
      ("verify", po::value<std::size_t>()->default_value(50)->value_name("K"),
       "search and capacity planning: rank every layout by the screening tier's closed-form estimate and simulate "
       "the best K (0: simulate every layout)")
      ("allow-tp-across-nodes", "let tensor parallelism span nodes in the search")
      ("exhaustive", "also simulate layouts dominated by the same layout with a lighter recompute or ZeRO stage that fits")
      ("csv", po::value<std::string>()->value_name("FILE"), "write every point to FILE as CSV")
      ("emit-scenario", po::value<std::string>()->value_name("FILE"),
       "--search or --gpus: write the table's first row (the best) as a scenario that clustersim run FILE runs")
      ("json", "print the results as JSON")
      ("threads", po::value<int>()->value_name("N"), "worker threads (default: all cores)")
      ("quiet,q", "no progress on stderr")
      ("shard", po::value<std::string>()->value_name("I/N"),
       "evaluate shard I of N (a deterministic 1/N share of the simulations) and write a part file instead of printing")
      ("part", po::value<std::string>()->value_name("FILE"), "the shard's part file (default sweep-part-I-of-N.json)")
      ("slurm-script", po::value<std::string>()->value_name("FILE"),
       "write an sbatch script running the sweep as a Slurm job array of shards plus a dependent merge job")
      ("array-size", po::value<int>()->value_name("N"), "--slurm-script: number of shards (default 8)")
      ("partition", po::value<std::string>()->value_name("P"), "--slurm-script: the Slurm partition")
      ("time", po::value<std::string>()->value_name("T"), "--slurm-script: the time limit of each job (sbatch --time)")
      ("max-memory-gib", po::value<std::string>()->value_name("G"),
       "memory one point's simulation may take before it is refused as too large (default 4; simulation.max_memory_gib); "
       "the points simulated at once share it")
      ("max-points", po::value<std::string>()->value_name("N"),
       "--vary: refuse a sweep of more than N points before it starts (default 1000000)");
}

int sweep_run(const std::vector<std::string>& args, RunContext& ctx) {
  po::options_description opts(
      "usage: clustersim sweep SCENARIO.json [--vary path=v1,v2,...]... [--search] [--csv out.csv] [--threads N]\n"
      "       clustersim sweep SCENARIO.json --gpus 256,512,1024 [--gpu H100-SXM,H200,B200] [--deadline-days D] [--budget-usd B]\n"
      "                        [--for-days N] [--runs N] [--seed S]\n"
      "       clustersim sweep ... --shard I/N [--part FILE]   |   clustersim sweep merge PART... | --parts-list FILE\n"
      "       clustersim sweep ... --slurm-script out.sh [--array-size N] [--partition P] [--time T]\n\n"
      "Simulates many variants of one scenario. --vary: the cartesian product of the axes (a table row per point,\n"
      "invalid combinations listed with the reason). --search: every valid layout for the cluster (TP, PP, CP,\n"
      "VP, EP, micro-batch, ZeRO, recompute), memory checked first, all ranked by a closed-form estimate and the\n"
      "best --verify K simulated. --gpus: capacity planning with training.tokens_to_train: the search for every\n"
      "GPU type and count, each row's P10/P50/P90 days and total cost with power (the model's error band x the\n"
      "failure Monte Carlo), the cheapest and fastest plans meeting the deadline and budget at P90, and the\n"
      "cost-vs-time Pareto front. --shard I/N evaluates a deterministic 1/N share and writes a part file; sweep merge prints\n"
      "the N parts as one unsharded run; --slurm-script writes an sbatch submission of both (docs/sweep.md).\n\noptions");
  add_sweep_options(opts);
  po::variables_map vm;
  std::vector<po::option> parsed;
  if (!parse_options(args, opts, "scenario", 1, vm, &parsed)) return kExitOk;
  if (ctx.merged) check_merged_options(vm, ctx);
  if (!vm.count("scenario")) throw InputError(with_usage("clustersim sweep: missing SCENARIO.json", opts, "sweep"));
  const std::string file = vm["scenario"].as<std::string>();

  ctx.quiet = ctx.quiet || vm.count("quiet") > 0;
  if (!ctx.merged) ctx.args = run_arguments(parsed);
  const std::optional<SlurmOptions> slurm = slurm_options(vm);
  if (vm.count("part") && !vm.count("shard")) throw InputError("clustersim sweep: --part needs --shard I/N");
  if (vm.count("shard")) {
    if (ctx.merged) throw InputError("clustersim sweep merge: the parts' run is itself a shard");
    ctx.shard = parse_shard(vm["shard"].as<std::string>());
    ctx.part_path = vm.count("part") ? vm["part"].as<std::string>()
                                     : "sweep-part-" + std::to_string(ctx.shard->index) + "-of-" + std::to_string(ctx.shard->count) + ".json";
  }

  json doc = ctx.merged ? ctx.scenario : read_json_file(file);
  ctx.scenario = doc;
  if (vm.count("set")) apply_overrides(doc, vm["set"].as<std::vector<std::string>>(), file);  // as run does (price included)
  {
    std::vector<std::string> budget;
    add_max_memory_override(vm, "sweep", budget);
    for (const auto& o : budget) apply_override(doc, o, file);
  }
  ctx.doc = doc;
  // resilience and data_pipeline make every point's days and dollars the whole run's (effective: failures,
  // checkpoints, restarts, input stalls); the step-time distribution of variability is per run (--steps
  // of clustersim run), so a sweep that would ignore it refuses it.
  if (doc.is_object() && doc.contains("variability"))
    throw InputError(file + ": variability: not used by clustersim sweep (clustersim run --steps K shows the step-time distribution)");

  const SweepPlan plan = sweep_plan(vm, ctx);
  check_outputs(vm, doc, file, plan.axes, ctx);
  if (slurm) return write_slurm_script(vm, doc, file, plan, *slurm, ctx);
  if (plan.capacity) return capacity_mode(doc, file, plan.capacity_options, plan.top, vm, ctx);
  if (plan.search) return search_mode(doc, file, plan.search_options, plan.objective, plan.top, vm, ctx);
  return vary_mode(doc, file, plan.axes, plan.search_options.run, vm, ctx);
}

// The part files of `sweep merge`: the arguments, then --parts-list FILE's lines (one path a line, as the
// Slurm script writes them: 10^5 shards are no argument list longer than ARG_MAX). An empty line or a path
// that is no file is refused with its line number.
std::vector<std::string> part_files(const po::variables_map& vm) {
  std::vector<std::string> out = vm.count("parts") ? vm["parts"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (!vm.count("parts-list")) return out;
  const std::string list = vm["parts-list"].as<std::string>();
  const std::string text =
      files::as_input_error([&] { return files::read_input_file(list, std::uintmax_t{64} << 20, "list of part files", "cannot open file"); });
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const std::string where = list + ":" + std::to_string(n) + ": ";
    if (line.empty()) throw InputError(where + "empty line (expected the path of a part file)");
    if (!files::is_readable_regular_file(line)) throw InputError(where + "\"" + line + "\": no such part file (or not readable)");
    out.push_back(line);
  }
  if (out.empty()) throw InputError(list + ": no part files listed");
  return out;
}

// clustersim sweep merge PART...: the run the parts were shards of, printed from their points.
int sweep_merge(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: clustersim sweep merge PART...\n"
      "       clustersim sweep merge --parts-list FILE\n\n"
      "Combines the part files of a sharded sweep (clustersim sweep ... --shard I/N, one for each I) and prints\n"
      "the run as the unsharded sweep would: the same table or JSON on stdout and the same CSV file.\n\noptions");
  with_help(opts)("quiet,q", "no messages on stderr")
      ("parts-list", po::value<std::string>()->value_name("FILE"), "read the part files' paths from FILE, one a line");
  po::variables_map vm;
  if (!parse_options(args, opts, "parts", -1, vm)) return kExitOk;
  if (!vm.count("parts") && !vm.count("parts-list"))
    throw InputError(with_usage("clustersim sweep merge: no part files", opts, "sweep merge"));
  std::vector<SweepPart> parts;
  const std::vector<std::string> paths = part_files(vm);
  for (const auto& path : paths) parts.push_back(read_sweep_part(path));
  const std::vector<SweepPoint> points = merge_shards(parts);
  const json& run = parts.front().run;
  RunContext ctx;
  ctx.merged = &points;
  ctx.quiet = true;
  for (const auto& p : parts) ctx.merged_parts.push_back(p.file);
  try {
    ctx.args = run.at("args").get<std::vector<std::string>>();
    ctx.scenario = run.at("scenario");
    ctx.merged_skipped = run.at("skipped").get<std::vector<std::string>>();
  } catch (const json::exception&) {
    throw InputError(parts.front().file + ": run: expected {args, file, scenario, skipped} as clustersim sweep --shard writes it");
  }
  check_part_args(ctx.args, parts.front().file + ": run.args");
  return sweep_run(ctx.args, ctx);
}

}  // namespace

int sweep(const std::vector<std::string>& args) {
  if (!args.empty() && args[0] == "merge") return sweep_merge(std::vector<std::string>(args.begin() + 1, args.end()));
  RunContext ctx;
  return sweep_run(args, ctx);
}

}  // namespace cs::sim::cli
