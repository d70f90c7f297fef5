// clustersim-sweep-bench [--threads N] [--network analytical|flow] [--gpus N] [--scenario FILE] [--limit N]
// clustersim-sweep-bench --search [--threads N] [--gpus N] [--verify K]
// clustersim-sweep-bench --validate [--threads N] [--per-model N] [--estimate-only] [--dump-estimates FILE] [--model 0|1|2]
//                         [--repeat N]
//
// Sweep speed and the screening tier (docs/sweep.md).
//
// Default: the layout search of scenarios/llama3-70b-h100x256.json scaled to --gpus GPUs (default 1,024:
// 128 nodes), on --threads workers (default 2), with the network model chosen by --network; prints the
// search counts, wall time, layouts simulated per second and candidates screened per second. --limit N
// simulates only N evenly spaced layouts of those left to simulate (for a quick figure).
//
// --search: `clustersim sweep --search --verify K` as the CLI runs it (search_layouts with the screening
// tier, default K = 50) on the same 70B scenario: layouts ranked per minute, wall time of each phase.
//
// --validate: the screening tier against the simulation on three model sizes (Llama-3 8B on 8 H100,
// Llama-2 13B on 64 A100, Llama-3 70B on 256 H100): every fitting, undominated layout estimated, the
// simulation on all of them or on --per-model evenly spaced ones (default 250); per model and overall:
// Spearman's rank correlation of estimated and simulated step times, the rank in the screening order of
// the simulation's best, the step-time error of the estimate (median, max), and the time per estimate
// (amortised over the model's layouts with one ScreeningCache, as a search's worker has; --estimate-only
// prints that alone, over every candidate; --dump-estimates FILE writes every estimate, bit for bit, to
// FILE: two builds' files are equal when a change leaves the formula's figures as they were; --model I
// runs the I-th model alone, 0 8B, 1 13B, 2 70B; --repeat N times the estimates N times, a new cache
// each time, and prints the fastest).
#include <algorithm>
#include <time.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/base/huge_pages.hpp"
#include "sim/base/input_error.hpp"
#include "sim/explore/screening.hpp"
#include "sim/explore/sweep.hpp"
#include "sim/scenario/scenario.hpp"
#include "topologies/cluster.hpp"

using namespace cs::sim;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// CPU time of the calling thread: on a shared machine the wall time of a single-threaded loop counts the
// other users too.
double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Ranks 1..n with ties given their average rank (Spearman's rho on tied data).
std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<std::size_t> idx(v.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < idx.size();) {
    std::size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    for (std::size_t k = i; k <= j; ++k) r[idx[k]] = (static_cast<double>(i + j) / 2) + 1;
    i = j + 1;
  }
  return r;
}

// Pearson correlation of the ranks.
double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  const auto ra = ranks(a), rb = ranks(b);
  const double n = static_cast<double>(a.size());
  double ma = 0, mb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) ma += ra[i] / n, mb += rb[i] / n;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sab += (ra[i] - ma) * (rb[i] - mb);
    saa += (ra[i] - ma) * (ra[i] - ma);
    sbb += (rb[i] - mb) * (rb[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 1.0;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return 0;
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

struct Model {
  const char* label;
  const char* file;
  int nodes;  // 0: as in the file
};

int validate(int threads, std::size_t per_model, bool estimate_only, std::FILE* dump, int only_model, int repeat) {
  const std::vector<Model> models = {{"Llama-3 8B / 8 H100", "llama3-8b-h100x8.json", 0},
                                     {"Llama-2 13B / 64 A100", "llama2-13b-a100x64-hdr200.json", 0},
                                     {"Llama-3 70B / 256 H100", "llama3-70b-h100x256.json", 0}};
  std::printf("screening tier against the simulation (analytical network, %d threads)\n\n", threads);
  std::printf("%-24s %9s %10s %9s %8s %10s %9s %9s %9s %11s %10s\n", "model", "layouts", "candidates", "simulated",
              "spearman", "DES best", "err med", "err max", "best gap", "estimate", "DES");
  std::printf("%-24s %9s %10s %9s %8s %10s %9s %9s %9s %11s %10s\n", "", "", "", "", "rho", "est. rank", "", "", "", "CPU us/lay.",
              "ms/layout");
  std::vector<double> all_est, all_des, all_err;
  std::size_t all_sim = 0;
  for (std::size_t mi = 0; mi < models.size(); ++mi) {
    const Model& m = models[mi];
    if (only_model >= 0 && static_cast<std::size_t>(only_model) != mi) continue;
    const std::string file = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/" + m.file;
    json doc = read_json_file(file);
    if (m.nodes > 0) apply_override(doc, "cluster.nodes=" + std::to_string(m.nodes), file);
    SearchOptions opts;
    opts.run.threads = threads;
    const auto layouts = enumerate_layouts(doc, file, opts);
    SweepOptions screen = opts.run;
    screen.simulate = false;
    screen.estimate = true;
    auto points = run_points(doc, file, layouts, screen);
    mark_dominated(points);
    std::vector<std::size_t> candidates;
    for (std::size_t i = 0; i < points.size(); ++i)
      if (points[i].status == PointStatus::pending && points[i].estimate_step_time_s) candidates.push_back(i);
    std::vector<std::size_t> sample = candidates;
    if (per_model > 0 && sample.size() > per_model) {
      sample.clear();
      for (std::size_t k = 0; k < per_model; ++k) sample.push_back(candidates[k * candidates.size() / per_model]);
    }
    // Time the estimate alone: the scenario parsed beforehand, the cluster built once.
    std::vector<Scenario> scenarios;
    for (std::size_t i : sample) {
      json d = doc;
      for (const auto& [path, v] : points[i].assignment) apply_override(d, path + "=" + v.dump(), file);
      scenarios.push_back(parse_scenario(d, file));
    }
    // One cache for the model's layouts, as each worker of a search keeps one; --repeat N: N times, each
    // with a new cache, the fastest counted (the others' excess is the other users of the machine).
    std::vector<double> estimates;
    double estimate_us = 0, estimate_wall_us = 0;
    for (int rep = 0; rep < std::max(1, repeat); ++rep) {
      ScreeningCache cache(scenarios.front().cluster);
      const auto te = Clock::now();
      const double cpu0 = thread_cpu_s();
      estimates.clear();
      estimates.reserve(scenarios.size());
      for (const Scenario& s : scenarios) estimates.push_back(*screening_step_time_s(s, cache));
      const double cpu_us = (thread_cpu_s() - cpu0) / static_cast<double>(scenarios.size()) * 1e6;
      const double wall_us = seconds_since(te) / static_cast<double>(scenarios.size()) * 1e6;
      if (rep == 0 || cpu_us < estimate_us) estimate_us = cpu_us, estimate_wall_us = wall_us;
    }
    if (dump) {
      // The estimates bit for bit, one a line: two builds' files diff to nothing when the formula is unchanged.
      for (std::size_t k = 0; k < sample.size(); ++k) std::fprintf(dump, "%s %zu %a\n", m.file, sample[k], estimates[k]);
    }
    if (estimate_only) {
      std::printf("%-24s %9zu %10zu estimates of %zu layouts: %.1f us CPU (%.1f us wall) per layout, one thread\n", m.label,
                  layouts.size(), candidates.size(), scenarios.size(), estimate_us, estimate_wall_us);
      continue;
    }
    std::vector<Assignment> todo;
    for (std::size_t i : sample) todo.push_back(points[i].assignment);
    const auto ts = Clock::now();
    const auto simulated = run_points(doc, file, todo, opts.run);
    const double des_ms = seconds_since(ts) / static_cast<double>(todo.size()) * 1e3 * threads;
    std::vector<double> est, des, err;
    for (std::size_t k = 0; k < sample.size(); ++k) {
      if (!simulated[k].simulated()) continue;
      est.push_back(*points[sample[k]].estimate_step_time_s);
      des.push_back(simulated[k].report.step_time_s);
      err.push_back(std::abs(est.back() - des.back()) / des.back());
    }
    // The simulation's best layout (shortest step: the objective tokens/s at a fixed batch), and where the
    // estimate ranks it; the gap: how much slower the estimate's own first choice really is.
    const std::size_t des_best = static_cast<std::size_t>(std::min_element(des.begin(), des.end()) - des.begin());
    const std::size_t est_best = static_cast<std::size_t>(std::min_element(est.begin(), est.end()) - est.begin());
    std::size_t rank = 1;
    for (double e : est) rank += e < est[des_best];
    const double gap = des[est_best] / des[des_best] - 1;
    std::printf("%-24s %9zu %10zu %9zu %8.4f %10zu %8.2f%% %8.2f%% %8.2f%% %11.1f %10.1f\n", m.label, layouts.size(),
                candidates.size(), est.size(), spearman(est, des), rank, 100 * median(err),
                100 * *std::max_element(err.begin(), err.end()), 100 * gap, estimate_us, des_ms);
    all_est.insert(all_est.end(), est.begin(), est.end());
    all_des.insert(all_des.end(), des.begin(), des.end());
    all_err.insert(all_err.end(), err.begin(), err.end());
    all_sim += est.size();
  }
  if (estimate_only) return 0;
  std::printf("%-24s %9s %10s %9zu %8.4f %10s %8.2f%% %8.2f%%\n", "all (pooled)", "", "", all_sim, spearman(all_est, all_des), "",
              100 * median(all_err), 100 * *std::max_element(all_err.begin(), all_err.end()));
  std::printf("\nspearman rho: of estimated and simulated step times; DES best est. rank: 1 = the estimate ranks the\n"
              "simulation's fastest layout first; best gap: how much slower the estimate's first choice simulates.\n");
  return 0;
}

int search_rate(int threads, int gpus, std::size_t verify) {
  const std::string file = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/llama3-70b-h100x256.json";
  json doc = read_json_file(file);
  apply_override(doc, "cluster.nodes=" + std::to_string(gpus / 8), file);
  SearchOptions opts;
  opts.run.threads = threads;
  opts.verify = verify;
  double screen_s = 0;
  auto t_phase = Clock::now();
  opts.run.progress = [&](const SweepProgress& p) {
    if (p.done == p.total && std::string(p.phase) != "simulated") screen_s = seconds_since(t_phase);
  };
  const auto t0 = Clock::now();
  t_phase = t0;
  const SearchResult r = search_layouts(doc, file, opts, Objective::tokens_per_s);
  const double wall = seconds_since(t0);
  const auto& c = r.counts;
  std::printf("scenario        %s scaled to %d GPUs, %d threads, --verify %zu\n", file.c_str(), gpus, threads, verify);
  std::printf("enumerated      %zu layouts: %zu invalid, %zu do not fit, %zu dominated, %zu estimated, %zu simulated\n",
              c.enumerated, c.invalid, c.not_fitting, c.dominated, c.estimated + c.simulated, c.simulated);
  std::printf("wall time       %.2f s: screening and estimates %.2f s, simulation of the best %zu %.2f s\n", wall, screen_s,
              c.simulated, wall - screen_s);
  std::printf("rate            %.0f layouts ranked per minute (%d threads)\n", static_cast<double>(c.enumerated) / wall * 60, threads);
  if (!r.ranked.empty()) {
    const Report& b = r.points[r.ranked[0]].report;
    std::printf("best            TP%d PP%d DP%d CP%d VP%d mbs%lld ZeRO-%d %s: %.3f s simulated, %.3f s estimated\n", b.tp, b.pp,
                b.dp, b.cp, b.vp, b.micro_batch_size, b.zero_stage, b.recompute.c_str(), b.step_time_s,
                *r.points[r.ranked[0]].estimate_step_time_s);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  cs::restart_with_huge_page_malloc(argv);  // as the CLI does (sim/base/huge_pages.hpp)
  int threads = 2, gpus = 1024, only_model = -1, repeat = 1;
  std::size_t limit = 0, per_model = 250, verify = 50;
  bool do_validate = false, do_search = false, estimate_only = false;
  std::string network = "analytical", dump_file;
  std::string file = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/llama3-70b-h100x256.json";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "clustersim-sweep-bench: " << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--threads") threads = std::atoi(value().c_str());
    else if (a == "--network") network = value();
    else if (a == "--gpus") gpus = std::atoi(value().c_str());
    else if (a == "--scenario") file = value();
    else if (a == "--limit") limit = static_cast<std::size_t>(std::atoll(value().c_str()));
    else if (a == "--validate") do_validate = true;
    else if (a == "--estimate-only") estimate_only = true;
    else if (a == "--dump-estimates") dump_file = value();
    else if (a == "--model") only_model = std::atoi(value().c_str());
    else if (a == "--repeat") repeat = std::atoi(value().c_str());
    else if (a == "--per-model") per_model = static_cast<std::size_t>(std::atoll(value().c_str()));
    else if (a == "--search") do_search = true;
    else if (a == "--verify") verify = static_cast<std::size_t>(std::atoll(value().c_str()));
    else {
      std::cerr << "usage: clustersim-sweep-bench [--threads N] [--network analytical|flow] [--gpus N] [--scenario FILE] [--limit N]\n"
                   "       clustersim-sweep-bench --search [--threads N] [--gpus N] [--verify K]\n"
                   "       clustersim-sweep-bench --validate [--threads N] [--per-model N] [--estimate-only] [--dump-estimates FILE] [--model 0|1|2] [--repeat N]\n";
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  try {
    if (do_validate) {
      std::FILE* dump = nullptr;
      if (!dump_file.empty() && !(dump = std::fopen(dump_file.c_str(), "w"))) {
        std::cerr << "clustersim-sweep-bench: cannot write " << dump_file << "\n";
        return 2;
      }
      const int rc = validate(threads, per_model, estimate_only, dump, only_model, repeat);
      if (dump) std::fclose(dump);
      return rc;
    }
    if (do_search) return search_rate(threads, gpus, verify);
    json doc = read_json_file(file);
    apply_override(doc, "cluster.nodes=" + std::to_string(gpus / 8), file);
    apply_override(doc, "simulation.network=\"" + network + "\"", file);
    (void)parse_scenario(doc, file);  // the network must be accepted before the bench means anything

    SearchOptions opts;
    opts.run.threads = threads;
    const auto t0 = Clock::now();
    const auto layouts = enumerate_layouts(doc, file, opts);
    // Screening (validation + memory) and dominance, then the simulation of what is left: the two
    // phases of search_layouts, timed apart.
    SweepOptions screen = opts.run;
    screen.simulate = false;
    auto points = run_points(doc, file, layouts, screen);
    mark_dominated(points);
    const SearchCounts counts = count_points(points);
    std::vector<Assignment> todo;
    for (const auto& p : points)
      if (p.status == PointStatus::pending) todo.push_back(p.assignment);
    const auto t1 = Clock::now();
    if (limit > 0 && todo.size() > limit) {  // an evenly spaced sample, so cheap and dear layouts both count
      std::vector<Assignment> sample;
      for (std::size_t k = 0; k < limit; ++k) sample.push_back(todo[k * todo.size() / limit]);
      todo = std::move(sample);
    }
    const auto simulated_points = run_points(doc, file, todo, opts.run);
    const auto t2 = Clock::now();
    const double screen_s = std::chrono::duration<double>(t1 - t0).count();
    const double sim_s = std::chrono::duration<double>(t2 - t1).count();
    std::size_t simulated = 0;
    for (const auto& p : simulated_points) simulated += p.simulated();
    const std::size_t invalid = counts.invalid, not_fitting = counts.not_fitting;
    std::printf("scenario        %s scaled to %d GPUs, network %s, %d threads\n", file.c_str(), gpus, network.c_str(), threads);
    std::printf("enumerated      %zu layouts: %zu invalid, %zu do not fit, %zu dominated, %zu to simulate\n", layouts.size(),
                invalid, not_fitting, counts.dominated, counts.cancelled);
    std::printf("screening       %.2f s (%.0f candidates/s)\n", screen_s, static_cast<double>(layouts.size()) / screen_s);
    std::printf("simulation      %zu layouts in %.2f s\n", simulated, sim_s);
    std::printf("layouts/s       %.2f simulated per second (%d threads)\n", static_cast<double>(simulated) / sim_s, threads);
  } catch (const cs::InputError& e) {
    for (const auto& m : e.messages()) std::cerr << m << "\n";
    return 2;
  }
  return 0;
}
