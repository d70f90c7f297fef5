// clustersim sweep SCENARIO.json [--vary path=v1,v2,...]... [--search] [--gpus N,... [--gpu NAME,...]]
//                  [--csv out.csv] [--json] [--threads N] [--objective tokens_per_s|usd_per_token] [--top N]
// Three modes over the library's sim/explore/sweep.hpp: a cartesian sweep of --vary axes, a layout search
// (--search) and capacity planning (--gpus). Tables on stdout; progress on stderr only when it is a
// terminal.
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

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
#include "sim/base/units.hpp"
#include "sim/report/format.hpp"

namespace po = boost::program_options;
using nlohmann::json;

namespace cs::sim::cli {
namespace {


std::string money(double usd) {
  if (usd >= 1e6) return "$" + fmt("%.2fM", usd / 1e6);
  if (usd >= 1e3) return "$" + fmt("%.1fk", usd / 1e3);
  return "$" + fmt("%.2f", usd);
}

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
    "step_time_s,tokens_per_s,tokens_per_s_per_gpu,mfu,memory_gib,fits_in_memory,usd_per_step,usd_per_million_tokens,"
    "days_to_train,usd_to_train,goodput";

std::string point_csv(const SweepPoint& p) {
  const Report& r = p.report;
  std::string o = csv_field(to_string(p.status)) + "," + csv_field(p.error);
  if (!p.valid) return o + std::string(24, ',');
  auto num = [](double v) { return fmt("%.6g", v); };
  o += "," + csv_field(r.gpu) + "," + std::to_string(r.num_gpus) + "," + std::to_string(r.nodes) + "," + std::to_string(r.tp) +
       "," + std::to_string(r.pp) + "," + std::to_string(r.dp) + "," + std::to_string(r.cp) + "," + std::to_string(r.ep) + "," +
       std::to_string(r.vp) + "," + std::to_string(r.micro_batch_size) + "," + std::to_string(r.zero_stage) + "," + r.recompute +
       "," + (r.sequence_parallel ? "true" : "false");
  if (!p.simulated())
    return o + ",,,,," + num(r.memory.total_bytes() / kGiB) + "," + (r.fits_in_memory ? "true" : "false") + ",,,,,";
  return o + "," + num(r.step_time_s) + "," + num(r.tokens_per_s) + "," + num(r.tokens_per_s / r.num_gpus) + "," + num(r.mfu) +
         "," + num(r.memory.total_bytes() / kGiB) + "," + (r.fits_in_memory ? "true" : "false") + "," + num(r.cost.usd_per_step) +
         "," + num(p.usd_per_token() * 1e6) + "," + num(p.days_to_train()) + "," + num(p.usd_to_train()) + "," +
         (p.whole_run ? num(p.whole_run->goodput) : std::string());
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
  head.insert(head.end(), {"TP", "PP", "DP", "CP", "EP", "VP", "MBS", "ZeRO", "recompute", "step", "tokens/s", "tok/s/GPU",
                           "MFU", "mem GiB", "$/M tok"});
  const bool train = !idx.empty() && points[idx[0]].report.tokens_to_train > 0;
  // With a resilience or data_pipeline section the days and dollars are the whole run's (docs/goodput.md).
  const bool whole = !idx.empty() && points[idx[0]].whole_run.has_value();
  if (whole) head.push_back("goodput");
  if (train) head.insert(head.end(), {whole ? "eff. days" : "days", whole ? "eff. $" : "$ to train"});
  Table t(head);
  std::size_t rank = 0;
  for (std::size_t i : idx) {
    const Report& r = points[i].report;
    std::vector<std::string> row{std::to_string(++rank)};
    if (with_gpu) row.insert(row.end(), {r.gpu, std::to_string(r.num_gpus)});
    row.insert(row.end(), {std::to_string(r.tp), std::to_string(r.pp), std::to_string(r.dp), std::to_string(r.cp),
                           std::to_string(r.ep), std::to_string(r.vp), std::to_string(r.micro_batch_size),
                           std::to_string(r.zero_stage), r.recompute, fmt("%.3f s", r.step_time_s), grouped(r.tokens_per_s),
                           grouped(r.tokens_per_s / r.num_gpus), fmt("%.1f%%", 100 * r.mfu),
                           fmt("%.1f", r.memory.total_bytes() / kGiB), money(points[i].usd_per_token() * 1e6)});
    if (whole) row.push_back(points[i].whole_run ? fmt("%.2f%%", 100 * points[i].whole_run->goodput) : "-");
    if (train) row.insert(row.end(), {fmt("%.1f", points[i].days_to_train()), money(points[i].usd_to_train())});
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
         (c.cancelled ? ", " + std::to_string(c.cancelled) + " cancelled" : std::string{});
}

std::function<void(const SweepProgress&)> terminal_progress() {
  if (!::isatty(STDERR_FILENO)) return {};
  auto last = std::make_shared<double>(-1.0);
  return [last](const SweepProgress& p) {
    if (p.done != p.total && p.elapsed_s - *last < 0.2) return;
    *last = p.elapsed_s;
    const double rate = p.elapsed_s > 0 ? static_cast<double>(p.done) / p.elapsed_s : 0;
    const double eta = rate > 0 ? static_cast<double>(p.total - p.done) / rate : 0;
    std::fprintf(stderr, "\r  %zu/%zu points  %.0f/s  ETA %.0f s   ", p.done, p.total, rate, eta);
    if (p.done == p.total) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  };
}

int vary_mode(const json& doc, const std::string& file, const std::vector<SweepAxis>& axes, const SweepOptions& opts,
              const po::variables_map& vm) {
  const auto points = run_sweep(doc, file, axes, opts);
  if (vm.count("json")) {
    json arr = json::array();
    for (const auto& p : points) arr.push_back(to_json(p));
    std::cout << json{{"mode", "vary"}, {"points", arr}}.dump(2) << "\n";
  } else {
    std::vector<std::string> head;
    for (const auto& a : axes) head.push_back(short_name(a.path));
    head.insert(head.end(), {"step", "tokens/s", "MFU", "mem/GPU GiB", "fits", "$/step", "days", "$ to train"});
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
                               fmt("$%.3f", r.cost.usd_per_step), train ? fmt("%.1f", p.days_to_train()) : "-",
                               train ? money(p.usd_to_train()) : "-"});
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

int search_mode(const json& doc, const std::string& file, const SearchOptions& opts, Objective objective, std::size_t top,
                const po::variables_map& vm) {
  const SearchResult r = search_layouts(doc, file, opts, objective);
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
                << (objective == Objective::tokens_per_s ? "tokens/s" : "$ per token") << ":\n"
                << ranked_table(r.points, shown, false).str();
      std::cout << "\nbest: " << layout_text(r.points[shown[0]].report) << "\n";
    }
  }
  if (vm.count("csv")) {
    std::string csv = "rank," + std::string(kPointColumns) + "\n";
    std::vector<std::size_t> rank_of(r.points.size(), 0);
    for (std::size_t k = 0; k < r.ranked.size(); ++k) rank_of[r.ranked[k]] = k + 1;
    for (std::size_t k = 0; k < r.ranked.size(); ++k) csv += std::to_string(k + 1) + "," + point_csv(r.points[r.ranked[k]]) + "\n";
    for (std::size_t i = 0; i < r.points.size(); ++i)
      if (rank_of[i] == 0) csv += "," + point_csv(r.points[i]) + "\n";
    write_file_atomically(vm["csv"].as<std::string>(), csv);
  }
  return kExitOk;
}

int capacity_mode(const json& doc, const std::string& file, const CapacityOptions& opts, std::size_t top,
                  const po::variables_map& vm) {
  const CapacityResult r = plan_capacity(doc, file, opts);
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
    auto show = [&](const char* what, const std::optional<std::size_t>& i) {
      if (!i) {
        std::cout << what << ": no plan meets the constraints\n";
        return;
      }
      const SweepPoint& point = r.points[*i];
      const Report& p = point.report;
      std::cout << what << ": " << p.num_gpus << " x " << p.gpu << ", " << layout_text(p) << ": " << fmt("%.1f days, ", point.days_to_train())
                << money(point.usd_to_train()) << fmt(" (MFU %.1f%%", 100 * p.mfu)
                << (point.whole_run ? fmt(", goodput %.2f%%", 100 * point.whole_run->goodput) : std::string()) << ")\n";
    };
    std::cout << "\n";
    show("cheapest", r.cheapest);
    show("fastest ", r.fastest);
    std::cout << "\ncost-vs-time Pareto front (" << r.pareto.size() << " plans; * meets the constraints):\n";
    Table t({"gpu", "gpus", "layout", "days", "$ to train", "MFU", ""});
    for (std::size_t i : r.pareto) {
      const Report& p = r.points[i].report;
      t.add({p.gpu, std::to_string(p.num_gpus), layout_text(p), fmt("%.1f", r.points[i].days_to_train()), money(r.points[i].usd_to_train()),
             fmt("%.1f%%", 100 * p.mfu), meets(r.points[i]) ? "*" : ""});
    }
    std::cout << t.str();
  }
  if (vm.count("csv")) {
    std::string csv = "pareto,meets_constraints," + std::string(kPointColumns) + "\n";
    for (std::size_t i : r.ranked)
      csv += std::string(on_front[i] ? "true" : "false") + "," + (meets(r.points[i]) ? "true" : "false") + "," +
             point_csv(r.points[i]) + "\n";
    write_file_atomically(vm["csv"].as<std::string>(), csv);
  }
  return kExitOk;
}

}  // namespace

int sweep(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: clustersim sweep SCENARIO.json [--vary path=v1,v2,...]... [--search] [--csv out.csv] [--threads N]\n"
      "       clustersim sweep SCENARIO.json --gpus 256,512,1024 [--gpu H100-SXM,H200,B200] [--deadline-days D] [--budget-usd B]\n\n"
      "Simulates many variants of one scenario. --vary: the cartesian product of the axes (a table row per point,\n"
      "invalid combinations listed with the reason). --search: every valid layout for the cluster (TP, PP, CP,\n"
      "VP, EP, micro-batch, ZeRO, recompute), memory checked first, the rest simulated and ranked. --gpus: capacity\n"
      "planning with training.tokens_to_train: the search for every GPU type and count, the cheapest and fastest\n"
      "plans meeting the deadline and budget, and the cost-vs-time Pareto front.\n\noptions");
  opts.add_options()("help,h", "show this help")
      ("vary", po::value<std::vector<std::string>>()->composing()->value_name("PATH=V1,V2,..."),
       "vary a scenario value over a list (repeatable: cartesian product), e.g. --vary cluster.nodes=4,8,16")
      ("set", po::value<std::vector<std::string>>()->composing()->value_name("PATH=VALUE"),
       "override a scenario value for every point (repeatable)")
      ("search", "search every valid layout for the scenario's cluster")
      ("gpus", po::value<std::string>()->value_name("N,N,..."), "capacity planning: GPU counts to consider")
      ("gpu", po::value<std::string>()->value_name("NAME,..."), "capacity planning: GPU types (default: the scenario's)")
      ("deadline-days", po::value<double>()->value_name("D"), "capacity planning: train within D days")
      ("budget-usd", po::value<double>()->value_name("B"), "capacity planning: spend at most B dollars")
      ("objective", po::value<std::string>()->default_value("tokens_per_s"), "ranking: tokens_per_s or usd_per_token")
      ("top", po::value<std::size_t>()->default_value(20), "show the best N layouts (0: all)")
      ("allow-tp-across-nodes", "let tensor parallelism span nodes in the search")
      ("exhaustive", "also simulate layouts dominated by the same layout with a lighter recompute or ZeRO stage that fits")
      ("csv", po::value<std::string>()->value_name("FILE"), "write every point to FILE as CSV")
      ("json", "print the results as JSON")
      ("threads", po::value<int>()->value_name("N"), "worker threads (default: all cores)")
      ("max-memory-gib", po::value<std::string>()->value_name("G"),
       "memory one point's simulation may take before it is refused as too large (default 4; simulation.max_memory_gib)");
  po::variables_map vm;
  if (!parse_options(args, opts, "scenario", 1, vm)) return kExitOk;
  if (!vm.count("scenario")) throw InputError(with_usage("clustersim sweep: missing SCENARIO.json", opts, "sweep"));
  const std::string file = vm["scenario"].as<std::string>();
  json doc = read_json_file(file);
  if (vm.count("set"))
    for (const auto& o : vm["set"].as<std::vector<std::string>>()) apply_override(doc, o, file);
  {
    std::vector<std::string> budget;
    add_max_memory_override(vm, "sweep", budget);
    for (const auto& o : budget) apply_override(doc, o, file);
  }
  // resilience and data_pipeline make every point's days and dollars the whole run's (effective: failures,
  // checkpoints, restarts, input stalls); the step-time distribution of variability is per run (--steps
  // of clustersim run), so a sweep that would ignore it refuses it.
  if (doc.is_object() && doc.contains("variability"))
    throw InputError(file + ": variability: not used by clustersim sweep (clustersim run --steps K shows the step-time distribution)");

  SweepOptions run;
  if (vm.count("threads")) {
    run.threads = vm["threads"].as<int>();
    if (run.threads < 1) throw InputError("clustersim sweep: --threads " + std::to_string(run.threads) + ": expected at least 1");
  }
  run.progress = terminal_progress();
  const auto objective = parse_objective(vm["objective"].as<std::string>());
  if (!objective)
    throw InputError("clustersim sweep: --objective " + vm["objective"].as<std::string>() + ": expected tokens_per_s or usd_per_token");
  const std::size_t top = vm["top"].as<std::size_t>();
  const bool search = vm.count("search") > 0, capacity = vm.count("gpus") > 0, vary = vm.count("vary") > 0;
  if (vm.count("csv")) check_writable(vm["csv"].as<std::string>(), {file});  // before a long sweep, not after
  if (vary && (search || capacity))
    throw InputError("clustersim sweep: --vary cannot be combined with --search or --gpus (fix values with --set instead)");
  if (!capacity && (vm.count("gpu") || vm.count("deadline-days") || vm.count("budget-usd")))
    throw InputError("clustersim sweep: --gpu, --deadline-days and --budget-usd need --gpus (capacity planning)");

  SearchOptions sopts;
  sopts.allow_tp_across_nodes = vm.count("allow-tp-across-nodes") > 0;
  sopts.exhaustive = vm.count("exhaustive") > 0;
  sopts.run = run;
  if (capacity) {
    CapacityOptions c;
    for (const auto& n : split_list(vm["gpus"].as<std::string>())) {
      std::size_t used = 0;
      int v = 0;
      try {
        v = std::stoi(n, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != n.size() || v <= 0) throw InputError("clustersim sweep: --gpus " + n + ": expected a positive integer");
      c.gpu_counts.push_back(v);
    }
    if (vm.count("gpu")) c.gpu_types = split_list(vm["gpu"].as<std::string>());
    for (const auto& t : c.gpu_types)
      if (!models::find_gpu(t)) throw InputError("clustersim sweep: --gpu: " + unknown_gpu(t, models::gpu_names()));
    // A limit is a positive finite number; leaving the option out means no limit.
    auto limit = [&](const char* option, const char* what) {
      const double v = vm[option].as<double>();
      if (!std::isfinite(v) || v <= 0)
        throw InputError(std::string("clustersim sweep: --") + option + " " + fmt("%g", v) + ": expected a positive " +
                         what + " (leave the option out for no limit)");
      return v;
    };
    if (vm.count("deadline-days")) c.deadline_days = limit("deadline-days", "number of days");
    if (vm.count("budget-usd")) c.budget_usd = limit("budget-usd", "amount of dollars");
    c.search = sopts;
    return capacity_mode(doc, file, c, top, vm);
  }
  if (search) return search_mode(doc, file, sopts, *objective, top, vm);
  if (!vary) throw InputError("clustersim sweep: nothing to sweep (give --vary, --search or --gpus; see clustersim sweep --help)");
  std::vector<SweepAxis> axes;
  for (const auto& v : vm["vary"].as<std::vector<std::string>>()) axes.push_back(parse_axis(v));
  return vary_mode(doc, file, axes, run, vm);
}

}  // namespace cs::sim::cli
