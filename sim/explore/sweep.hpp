#pragma once
// Sweeps, layout search and capacity planning: many scenarios made from one, simulated on several
// threads. The CLI (`clustersim sweep`) and the GUI call these; nothing here prints.
//
// A point is the base scenario document plus an assignment of values to dotted scenario paths (the
// `--set` / `--vary` paths, e.g. training.tensor_model_parallel_size=4). Every point goes through the
// same front door as `clustersim run`: apply the assignment to a copy of the JSON, parse_scenario
// (which validates), simulate. A point the validator rejects is kept with the validator's message;
// sweeps never stop on a bad combination.
//
// Determinism: points are evaluated by a pool of worker threads that take the next index from an atomic
// counter and write their own slot, so the result vector is in enumeration order whatever the number of
// threads or the order in which they finish; ranking is a stable sort with the enumeration order as
// the last key. Identical input gives identical output with 1 or N threads.
//
// Memory first (search): a layout whose peak memory per GPU (models::peak_memory_per_gpu, the same
// figure the report uses) exceeds the GPU is reported as not fitting without being simulated: it cannot
// run, and the memory model costs microseconds where a simulation costs milliseconds.
//
// Search space (search_layouts): for the scenario's cluster and model,
//   TP   divisors of gcd(heads, query groups), at most gpus_per_node unless allow_tp_across_nodes;
//        sequence parallel on whenever TP > 1 (Megatron's recommended setting; it only saves memory);
//   PP   divisors of the layer count; TP x PP x CP must divide the GPUs; DP is the rest;
//   CP   1, 2, 4, ... dividing the sequence length with at least 1024 tokens per rank;
//   VP   (interleaved 1F1B) every v > 1 dividing layers / PP, when PP > 1;
//   EP   (MoE only) divisors of the expert count that divide DP;
//   micro-batch 1, 2, 4, ... dividing global_batch / DP;  ZeRO stage 0..3;  recompute none/selective/full.
// Values the current validator does not accept yet (a strategy not simulated yet) are counted as
// invalid and dropped, so the search widens by itself as strategies land.
//
// Pareto front on (time, cost): with a fixed token count both days-to-train and dollars-to-train are
// proportional to 1/tokens_per_s and to usd_per_token, so the front is taken on those two and holds for
// any tokens_to_train. A point is on the front when no other point is at least as fast and as cheap and
// strictly better in one; of exact ties the first in enumeration order is kept.
#include <atomic>
#include <cstdint>
#include <cstddef>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/goodput/outlook.hpp"
#include "sim/report/report.hpp"
#include "sim/scenario/scenario.hpp"

namespace cs::sim {

// Values for dotted scenario paths, in the order they are applied.
using Assignment = std::vector<std::pair<std::string, nlohmann::json>>;

struct SweepAxis {
  std::string path;
  std::vector<nlohmann::json> values;
};

// "path=v1,v2,..." as typed after --vary: each value parsed as JSON, else taken as a string; commas
// inside brackets, braces or quotes do not split. Throws InputError on a malformed axis.
SweepAxis parse_axis(const std::string& text);

// Cartesian product, the last axis varying fastest.
std::vector<Assignment> cartesian(const std::vector<SweepAxis>& axes);

struct SweepProgress {
  std::size_t done = 0, total = 0;
  double elapsed_s = 0;
  const char* phase = "points";  // what is counted: SweepOptions::phase
};

// A deterministic share of a sweep's simulations (`clustersim sweep --shard I/N`): shard I of N simulates
// the points whose position k among the points to simulate has k mod N = I and leaves the others
// `pending`; merging the N shards' points (merge_shards) gives the unsharded result.
struct Shard {
  int index = 0, count = 1;
  bool mine(std::size_t k) const { return count <= 1 || static_cast<int>(k % static_cast<std::size_t>(count)) == index; }
};

struct SweepOptions {
  int threads = 0;  // 0: std::thread::hardware_concurrency()
  // Called after each point, from the worker that finished it, never concurrently with itself.
  std::function<void(const SweepProgress&)> progress;
  // Called once on each worker thread before its first point (the GUI lowers its workers' priority
  // there, so a sweep never starves its event loop).
  std::function<void()> on_worker_start;
  // Polled between points; when it becomes true the remaining points are left unevaluated (status
  // `cancelled`) and the call returns.
  const std::atomic<bool>* cancel = nullptr;
  // Check memory before simulating and skip layouts that do not fit (search); a plain sweep simulates
  // them and flags them, as `clustersim run` does.
  bool skip_unfitting = false;
  // false: validate and check memory only; a fitting point is left `pending` (the search's screening pass).
  bool simulate = true;
  // With simulate false: also the screening tier's closed-form step time of each fitting point
  // (screening.hpp), in SweepPoint::estimate_step_time_s.
  bool estimate = false;
  // Simulate only this shard's points (the others stay `pending`).
  Shard shard;
  // Names the points being counted in `progress` ("screened", "simulated", ...).
  const char* phase = "points";
};

// pending: valid and fitting, not simulated yet; dominated: not simulated because the same layout with
// a lighter recompute or ZeRO stage fits, and that one is never slower (see mark_dominated); estimated:
// ranked by the screening tier's closed-form step time only, outside the best K the simulation verified
// (SearchOptions::verify).
enum class PointStatus { cancelled, invalid, not_fitting, pending, dominated, simulated, estimated };
const char* to_string(PointStatus s);

struct SweepPoint {
  Assignment assignment;
  PointStatus status = PointStatus::cancelled;
  bool valid = false;  // the scenario validated (status not_fitting or simulated)
  std::string error;   // validator messages joined by "; " (invalid), or the memory shortfall (not_fitting)
  // Simulated: the full report. Not fitting: the layout, memory and capacity fields only.
  Report report;
  // The whole run, when the scenario has a resilience or data_pipeline section (docs/goodput.md): the
  // expected goodput and the effective days and dollars (failures, checkpoints, restarts, input stalls).
  // Sweeps, searches and capacity plans then rank and constrain by these, not by the failure-free step.
  struct WholeRun {
    double goodput = 1;            // useful fraction of the wall-clock time (resilience; 1 without)
    double input_stall_fraction = 0;
    double effective_days = 0, effective_usd = 0;  // 0 when tokens_to_train is not set
    double slowdown = 1;           // effective time / failure-free time of the same work
  };
  std::optional<WholeRun> whole_run;
  // Capacity planning: days and total cost at P10 / P50 / P90 (goodput/outlook.hpp) of a simulated point,
  // set by finish_capacity; deadlines and budgets are then checked at P90.
  std::optional<goodput::Outlook> outlook;
  // The screening tier's step time (search with verify > 0), for estimated and verified points alike; an
  // estimated point's report carries it as step_time_s with the throughput and cost that follow from it.
  std::optional<double> estimate_step_time_s;
  bool simulated() const { return status == PointStatus::simulated; }
  bool estimated() const { return status == PointStatus::estimated; }
  bool fits() const { return valid && report.fits_in_memory; }
  // Effective figures where the whole run is known, the failure-free step's otherwise.
  double usd_per_token() const;
  double tokens_per_s() const;
  double days_to_train() const;
  double usd_to_train() const;
  // Within a deadline (days) and a budget (USD); a constraint <= 0 is not set. With an outlook, at its
  // P90: the days and the total cost (GPU time and power) that nine runs in ten stay within.
  bool meets(double deadline_days, double budget_usd) const;
};

// The scenario document of a point: `base` with the assignment applied, as every point is built (the
// file `sweep --emit-scenario` writes). Throws InputError when an assignment path cannot be set.
nlohmann::json point_document(const nlohmann::json& base, const std::string& file, const Assignment& assignment);

// One point, through parse_scenario and simulate. Never throws for bad input (the point says why).
SweepPoint evaluate_point(const nlohmann::json& base, const std::string& file, const Assignment& assignment,
                          bool skip_unfitting);

// Every assignment, evaluated on options.threads workers; results in the order of `assignments`.
std::vector<SweepPoint> run_points(const nlohmann::json& base, const std::string& file,
                                   const std::vector<Assignment>& assignments, const SweepOptions& options);

// The cartesian product of `axes` over `base`.
std::vector<SweepPoint> run_sweep(const nlohmann::json& base, const std::string& file,
                                  const std::vector<SweepAxis>& axes, const SweepOptions& options);

enum class Objective { tokens_per_s, usd_per_token };
std::optional<Objective> parse_objective(const std::string& name);

// Indices of the simulated, fitting points, best first under `objective` (ties: enumeration order), then
// the estimated points by their estimate.
std::vector<std::size_t> rank_points(const std::vector<SweepPoint>& points, Objective objective);

// Indices of the Pareto-optimal simulated, fitting points on (1 / tokens_per_s, usd_per_token), fastest
// first.
std::vector<std::size_t> pareto_front(const std::vector<SweepPoint>& points);

struct SearchOptions {
  bool allow_tp_across_nodes = false;
  // Simulate dominated layouts too (see mark_dominated); off by default: they cannot win.
  bool exhaustive = false;
  // The screening tier: 0 simulates every fitting, undominated layout; K > 0 estimates them all in closed
  // form (screening.hpp), ranks them by the estimate under the objective and simulates the best K only
  // (`clustersim sweep --search --verify K`, default 50 there).
  std::size_t verify = 0;
  // Capacity planning: the K verified layouts are spread over the (GPU type, GPU count) pairs, the best
  // ceil(K / pairs) of each pair by cost and as many by speed, so that every pair's cheapest and fastest
  // layouts are simulated (a deadline or budget may rule the globally best ones out).
  bool verify_per_gpu_count = false;
  // Enumerate, validate and screen every layout, simulate none (`sweep --slurm-script` checks the run its
  // shards will do before it writes their jobs).
  bool screen_only = false;
  SweepOptions run;  // skip_unfitting is forced on
};

// What the enumeration leaves out before any layout is validated (capacity planning explains a GPU count
// with no layout by it): the TP x PP x CP splits whose DP does not divide the global batch, and the
// layouts the scenario's framework refuses.
struct LayoutDrops {
  std::int64_t global_batch = 0;
  std::size_t splits = 0;           // (TP, PP, CP) splits of the GPUs the enumeration tried
  std::size_t batch_splits = 0;     // (TP, PP, CP) splits dropped: global_batch % DP != 0
  std::set<std::int64_t> batch_dp;  // their DP values
  std::size_t framework = 0;        // layouts the framework refuses (first_refusal)
  std::string framework_name;
};

// The layouts of the search space above for the scenario `base` (with `prefix` applied first, e.g. a
// GPU type and node count in capacity planning); each assignment starts with `prefix`. Throws InputError
// when the base scenario's cluster or model is itself invalid. `drops`, when given, counts what was left out.
std::vector<Assignment> enumerate_layouts(const nlohmann::json& base, const std::string& file,
                                          const SearchOptions& options, const Assignment& prefix = {},
                                          LayoutDrops* drops = nullptr);

struct SearchCounts {
  std::size_t enumerated = 0, invalid = 0, not_fitting = 0, dominated = 0, simulated = 0, cancelled = 0, estimated = 0;
};

// Dominance between fitting layouts of the search: a `pending` point is marked `dominated` when another
// fitting point differs from it only in ways that never make a step faster, so it cannot win:
//  - recompute: none < selective < full only adds kernels to the step and buys memory, never time;
//  - ZeRO-2 against ZeRO-1: the same parameter gather after the optimizer step, and a gradient
//    reduce-scatter every micro-batch instead of once per step (DeepSpeed's stage 2 under accumulation);
//  - any ZeRO stage against a lower one when DP x CP = 1: there is nothing to shard over.
// ZeRO-3 is not pruned against ZeRO-1 (it gathers parameters ahead of each layer, overlapped, where
// ZeRO-1 gathers them after the optimizer step: which is faster is what the simulation decides), nor
// ZeRO-1 against DDP (a sharded optimizer step against an overlapped all-reduce). The search's test
// checks every rule against an exhaustive search.
void mark_dominated(std::vector<SweepPoint>& points);

// Screens every assignment (validation and memory), marks dominated layouts unless `exhaustive`, and
// simulates the rest; results in assignment order.
// With options.verify > 0 the survivors are estimated, ranked by `objective` on the estimate, and the best
// verify of them simulated; the rest are `estimated`.
std::vector<SweepPoint> screen_and_simulate(const nlohmann::json& base, const std::string& file,
                                            const std::vector<Assignment>& assignments, const SearchOptions& options,
                                            Objective objective = Objective::tokens_per_s);
SearchCounts count_points(const std::vector<SweepPoint>& points);

// The sweep's JSON contract (sweep --json): a point is {assignment, status, error?, report?,
// usd_per_million_tokens?, estimate?}; counts are {enumerated, invalid, not_fitting, dominated, simulated,
// estimated?}. `estimate` (screening tier) is {step_time_s, tokens_per_s, usd_per_million_tokens}; an
// estimated point has it and no report.
nlohmann::json to_json(const SweepPoint& p);
nlohmann::json to_json(const SearchCounts& c);

struct SearchResult {
  SearchCounts counts;
  std::vector<SweepPoint> points;   // every enumerated layout, enumeration order
  std::vector<std::size_t> ranked;  // simulated points, best first
};

SearchResult search_layouts(const nlohmann::json& base, const std::string& file, const SearchOptions& options,
                            Objective objective);

// Capacity planning: for every GPU type and GPU count (nodes = count / gpus_per_node), the whole layout
// search; then the cheapest and the fastest plan meeting the deadline and the budget (a constraint <= 0
// is not set), and the cost-vs-time Pareto front over every simulated layout.
struct CapacityOptions {
  std::vector<int> gpu_counts;
  std::vector<std::string> gpu_types;  // empty: the scenario's GPU
  double deadline_days = 0;
  double budget_usd = 0;
  SearchOptions search;
  // The outlook of every simulated layout (draws, seed, --for-days): P10 / P50 / P90 days and total cost.
  goodput::OutlookOptions outlook;
};

struct CapacityResult {
  SearchCounts counts;
  std::vector<SweepPoint> points;   // every enumerated layout of every (GPU, count)
  std::vector<std::size_t> ranked;  // simulated points, cheapest per token first
  std::optional<std::size_t> cheapest, fastest;  // meeting the constraints
  std::vector<std::size_t> pareto;
  double tokens_to_train = 0;
  // (GPU, count) pairs that cannot be built, with the reason, and pairs with no layout that is valid and fits,
  // with the count of layouts each rule removed and the nearest global batch that gives one (explain_dropped).
  std::vector<std::string> skipped;
  std::string price_note;  // the GPU types priced at catalog list prices (price_basis_note), "" if none
};

// Throws InputError when training.tokens_to_train is missing or a count is not a multiple of
// gpus_per_node.
CapacityResult plan_capacity(const nlohmann::json& base, const std::string& file, const CapacityOptions& options);
// The outlooks, counts, ranking, plans and Pareto front of r.points (plan_capacity's last step; sweep
// merge): `base` and `file` are the plan's scenario, each point's scenario is rebuilt from them. A point
// whose run never finishes at the failure defaults its scenario falls back to is made invalid with the reason.
void finish_capacity(CapacityResult& r, const CapacityOptions& options, const nlohmann::json& base, const std::string& file);
// A search's counts and ranking of r.points (search_layouts' last step; sweep merge).
void finish_search(SearchResult& r, Objective objective);

}  // namespace cs::sim
