#include "sim/files/json_file.hpp"
#include "sim/explore/sweep.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <thread>

#include "models/memory/memory_model.hpp"
#include "sim/base/check.hpp"
#include "sim/base/input_error.hpp"
#include "sim/scenario/enum_names.hpp"
#include "sim/scenario/framework.hpp"
#include "sim/scenario/params.hpp"
#include "sim/goodput/goodput.hpp"
#include "sim/simulation.hpp"
#include "sim/base/units.hpp"
#include "sim/step/step_budget.hpp"
#include "sim/explore/screening.hpp"
#include "sim/report/format.hpp"
#include "topologies/cluster.hpp"

namespace cs::sim {

using nlohmann::json;

namespace {


std::string join(const std::vector<std::string>& lines, const std::string& file) {
  std::string out;
  const std::string prefix = file + ": ";
  for (const auto& l : lines) {
    if (!out.empty()) out += "; ";
    out += l.rfind(prefix, 0) == 0 ? l.substr(prefix.size()) : l;  // the file is the same for every point
  }
  return out;
}

// The report fields a layout has before it is simulated: what it is and what memory it needs.
Report unsimulated_report(const Scenario& s, const models::MemoryBreakdown& memory) {
  Report r = job_report(s);
  set_memory(r, memory, s.gpu);
  return r;
}

void set_path(json& doc, const std::string& path, const json& value, const std::string& file) {
  apply_override_pinned(doc, path + "=" + value.dump(), file);  // the old GPU's price stays the old GPU's
}

std::vector<std::int64_t> divisors(std::int64_t n) {
  std::vector<std::int64_t> out;
  for (std::int64_t d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

std::int64_t json_int(const json& obj, const char* key, std::int64_t fallback) {
  if (!obj.is_object()) return fallback;
  const auto it = obj.find(key);
  return it != obj.end() && it->is_number() ? it->get<std::int64_t>() : fallback;
}

// Stable ranking of the simulated (or, `estimated`, the estimated), fitting points by a key (smaller is
// better).
template <class Key>
std::vector<std::size_t> rank_by(const std::vector<SweepPoint>& points, Key key, bool estimated = false) {
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < points.size(); ++i)
    if ((estimated ? points[i].estimated() : points[i].simulated()) && points[i].fits()) idx.push_back(i);
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return key(points[a]) < key(points[b]); });
  return idx;
}

}  // namespace

const char* to_string(PointStatus s) {
  switch (s) {
    case PointStatus::cancelled: return "cancelled";
    case PointStatus::invalid: return "invalid";
    case PointStatus::not_fitting: return "not fitting";
    case PointStatus::pending: return "pending";
    case PointStatus::dominated: return "dominated";
    case PointStatus::simulated: return "simulated";
    case PointStatus::estimated: return "estimated";
  }
  return "?";
}

double SweepPoint::usd_per_token() const {
  const double tokens = static_cast<double>(report.global_batch_size) * static_cast<double>(report.seq_length);
  return tokens > 0 ? report.cost.usd_per_step * (whole_run ? whole_run->slowdown : 1.0) / tokens : 0;
}
double SweepPoint::tokens_per_s() const { return report.tokens_per_s / (whole_run ? whole_run->slowdown : 1.0); }
double SweepPoint::days_to_train() const { return whole_run ? whole_run->effective_days : report.cost.days_to_train; }
double SweepPoint::usd_to_train() const { return whole_run ? whole_run->effective_usd : report.cost.usd_to_train; }
bool SweepPoint::meets(double deadline_days, double budget_usd) const {
  const double days = outlook ? outlook->days_p90 : days_to_train();
  const double usd = outlook ? outlook->usd_p90 : usd_to_train();
  return (deadline_days <= 0 || days <= deadline_days) && (budget_usd <= 0 || usd <= budget_usd);
}

namespace {
// The whole run of a simulated point (goodput::analyse_run without Monte Carlo or jitter: the expectation).
std::optional<SweepPoint::WholeRun> whole_run_of(const Scenario& s, const SimulationResult& result) {
  if (!s.run.resilience && !s.run.data_pipeline) return std::nullopt;
  const goodput::RunReport g = goodput::analyse_run(s, result, {});
  SweepPoint::WholeRun w;
  const Report& r = result.report;
  const double step = r.step_time_s;
  const double step_with_input = g.data ? g.data->step_with_input_s : step;
  if (g.data) w.input_stall_fraction = g.data->stall_fraction;
  w.effective_days = r.cost.days_to_train * step_with_input / step;
  w.effective_usd = r.cost.usd_to_train * step_with_input / step;
  w.slowdown = step_with_input / step;
  if (g.resilience) {
    w.goodput = g.resilience->goodput;
    w.effective_days = g.resilience->effective_days;
    w.effective_usd = g.resilience->usd;
    w.slowdown = step_with_input / step / std::max(g.resilience->goodput, 1e-12);
  }
  return w;
}

// The point's whole run; a run that never finishes (goodput::analyse_run's input error) makes the point
// invalid with its message, as an invalid combination does, rather than ending the sweep.
void set_whole_run(SweepPoint& p, const Scenario& s, const SimulationResult& result, const std::string& file) {
  try {
    p.whole_run = whole_run_of(s, result);
  } catch (const InputError& e) {
    p.status = PointStatus::invalid;
    p.valid = false;
    p.error = join(e.messages(), file);
  }
}
}  // namespace

SweepAxis parse_axis(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw InputError("--vary " + text + ": expected path=v1,v2,... (e.g. training.tensor_model_parallel_size=2,4,8)");
  if (!files::valid_utf8(text))
    throw InputError("--vary " + files::quoted_for_message(text) +
                     ": not valid UTF-8 (a path or value must be text)");
  SweepAxis axis;
  axis.path = text.substr(0, eq);
  const std::string list = text.substr(eq + 1);
  int depth = 0;
  bool quoted = false;
  std::string cur;
  auto flush = [&] {
    if (cur.empty()) throw InputError("--vary " + text + ": empty value in the list");
    axis.values.push_back(files::parse_json_value(cur).value_or(json(cur)));
    cur.clear();
  };
  for (std::size_t i = 0; i < list.size(); ++i) {
    const char c = list[i];
    if (quoted) {
      if (c == '\\' && i + 1 < list.size()) cur += list[i++];
      else if (c == '"') quoted = false;
    } else if (c == '"') {
      quoted = true;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == ',' && depth == 0) {
      flush();
      continue;
    }
    cur += c;
  }
  flush();
  return axis;
}

std::vector<Assignment> cartesian(const std::vector<SweepAxis>& axes) {
  std::vector<Assignment> out{Assignment{}};
  for (const auto& axis : axes) {
    std::vector<Assignment> next;
    next.reserve(out.size() * axis.values.size());
    for (const auto& a : out)
      for (const auto& v : axis.values) {
        Assignment b = a;
        b.emplace_back(axis.path, v);
        next.push_back(std::move(b));
      }
    out = std::move(next);
  }
  return out;
}

json point_document(const json& base, const std::string& file, const Assignment& assignment) {
  json doc = base;
  for (const auto& [path, value] : assignment) set_path(doc, path, value, file);
  return doc;
}

namespace {
// The point's scenario: the base with the assignment applied, parsed. An invalid combination marks the
// point invalid with the validator's messages and gives nullopt.
std::optional<Scenario> point_scenario(const json& base, const std::string& file, const Assignment& assignment, SweepPoint& p) {
  p.assignment = assignment;
  try {
    std::optional<Scenario> s = parse_scenario(point_document(base, file, assignment), file);
    p.valid = true;
    return s;
  } catch (const InputError& e) {
    p.status = PointStatus::invalid;
    p.error = join(e.messages(), file);
    return std::nullopt;
  }
}

// Why a point was dropped before simulating: its peak memory against the GPU's.
std::string not_fitting_message(const models::MemoryBreakdown& memory, const models::GpuSpec& gpu) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "needs %.1f GiB per GPU on pipeline stage %d, the %s has %.1f GiB", memory.total_bytes() / kGiB,
                memory.stage, gpu.name.c_str(), gpu.hbm_gib);
  return buf;
}
}  // namespace

namespace {
// The simulations a sweep runs at once hold at most the scenario's memory budget together
// (simulation.max_memory_gib, sim/step/step_budget.hpp, estimated per point by estimate_step): the budget is
// one point's, and the points the workers run at once share it, so N threads never take N budgets. A point
// waits while the others' estimates and its own would be past the budget; a point alone always runs
// (check_budget has held it to the budget on its own). The results do not depend on the order the points
// run in, only the wall time does.
class MemoryGate {
 public:
  void acquire(double bytes, double limit) {
    std::unique_lock<std::mutex> lock(mutex_);
    freed_.wait(lock, [&] { return running_ == 0 || in_use_ + bytes <= limit; });
    in_use_ += bytes;
    ++running_;
  }
  void release(double bytes) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      in_use_ = --running_ == 0 ? 0 : in_use_ - bytes;
    }
    freed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable freed_;
  double in_use_ = 0;
  int running_ = 0;
};

// A point's share of the gate while it is simulated (none without a gate).
class GateHold {
 public:
  GateHold(MemoryGate* gate, const Scenario& s) : gate_(gate) {
    if (!gate_) return;
    bytes_ = estimate_step(s).memory_bytes;
    gate_->acquire(bytes_, s.simulation.max_memory_gib * kGiB);
  }
  ~GateHold() {
    if (gate_) gate_->release(bytes_);
  }
  GateHold(const GateHold&) = delete;
  GateHold& operator=(const GateHold&) = delete;

 private:
  MemoryGate* gate_;
  double bytes_ = 0;
};

SweepPoint evaluate_point_within(const json& base, const std::string& file, const Assignment& assignment, bool skip_unfitting,
                                 MemoryGate* gate) {
  SweepPoint p;
  const std::optional<Scenario> parsed = point_scenario(base, file, assignment, p);
  if (!parsed) return p;
  const Scenario& s = *parsed;
  if (skip_unfitting) {
    const models::MemoryBreakdown memory = models::peak_memory_per_gpu(s.model, s.training);
    if (!models::fits_in_memory(memory, s.gpu)) {
      p.status = PointStatus::not_fitting;
      p.report = unsimulated_report(s, memory);
      p.error = not_fitting_message(memory, s.gpu);
      return p;
    }
  }
  try {
    check_budget(s);  // a point too large to simulate is refused like an invalid one, with the knob to turn
  } catch (const InputError& e) {
    p.status = PointStatus::invalid;
    p.valid = false;
    p.error = join(e.messages(), file);
    return p;
  }
  const GateHold hold(gate, s);
  const SimulationResult result = simulate(s);
  p.report = result.report;
  p.status = PointStatus::simulated;
  set_whole_run(p, s, result, file);
  return p;
}
}  // namespace

SweepPoint evaluate_point(const json& base, const std::string& file, const Assignment& assignment, bool skip_unfitting) {
  return evaluate_point_within(base, file, assignment, skip_unfitting, nullptr);
}

namespace {
// One worker's screening caches (screening.hpp), one per distinct cluster.* assignment: a search varies
// only training.*, capacity planning the GPU type and count.
class ScreeningCaches {
 public:
  ScreeningCache& get(const Scenario& s, const Assignment& a) {
    std::string key;
    for (const auto& [path, v] : a)
      if (path.rfind("cluster.", 0) == 0) key += path + "=" + v.dump() + ";";
    auto& slot = caches_[key];
    if (!slot) slot = std::make_unique<ScreeningCache>(s.cluster);
    return *slot;
  }

 private:
  std::map<std::string, std::unique_ptr<ScreeningCache>> caches_;
};

// The report of an estimated point: the layout and memory, with the step time, throughput and cost the
// estimate gives (what the ranking and the tables read).
void set_estimate(SweepPoint& p, const Scenario& s, double step_s) {
  p.estimate_step_time_s = step_s;
  Report& r = p.report;
  r.step_time_s = step_s;
  r.tokens_per_s = static_cast<double>(s.training.tokens_per_step()) / step_s;
  const double model_flops = models::model_flops_per_step(s.model, s.training);
  r.model_tflops_per_gpu = model_flops / step_s / r.num_gpus / 1e12;
  r.mfu = model_flops / (step_s * r.num_gpus * s.gpu.peak_tflops(models::Dtype::bf16) * 1e12);
  models::CostInputs ci;
  ci.step_time_s = step_s;
  ci.num_gpus = r.num_gpus;
  ci.price_per_gpu_hour_usd = s.price_per_gpu_hour_usd;
  ci.tokens_per_step = static_cast<double>(s.training.tokens_per_step());
  ci.tokens_to_train = s.training.tokens_to_train;
  ci.gpu_tdp_w = s.gpu.board_power_w();
  ci.gpu_busy_fraction = 1;  // not known without the simulation: the energy figures are an upper bound
  ci.num_nodes = (r.num_gpus + s.cluster.gpus_per_node - 1) / s.cluster.gpus_per_node;
  ci.node_overhead_w = s.node_overhead_w;
  ci.pue = s.pue;
  ci.usd_per_kwh = s.usd_per_kwh;
  r.cost = models::compute_cost(ci);
}

SweepPoint screen_point(const json& base, const std::string& file, const Assignment& assignment, ScreeningCaches* caches) {
  SweepPoint p;
  const std::optional<Scenario> parsed = point_scenario(base, file, assignment, p);
  if (!parsed) return p;
  const Scenario& s = *parsed;
  p.report = unsimulated_report(s, models::peak_memory_per_gpu(s.model, s.training));
  p.status = p.report.fits_in_memory ? PointStatus::pending : PointStatus::not_fitting;
  if (!p.report.fits_in_memory) p.error = not_fitting_message(p.report.memory, s.gpu);
  if (caches && p.status == PointStatus::pending)
    if (const auto est = screening_step_time_s(s, caches->get(s, assignment))) {
      set_estimate(p, s, *est);
      // The whole run is closed-form in the step (goodput::analyse_run without Monte Carlo or jitter:
      // input stalls, failures, checkpoints, restarts), so an estimated point has its estimated whole
      // run, and the screening tier ranks whole-run sweeps by it, as the simulated points are ranked.
      SimulationResult r;
      r.report = p.report;
      set_whole_run(p, s, r, file);
    }
  return p;
}
}  // namespace

std::vector<SweepPoint> run_points(const json& base, const std::string& file, const std::vector<Assignment>& assignments,
                                   const SweepOptions& options) {
  const std::size_t total = assignments.size();
  std::vector<SweepPoint> out(total);
  for (std::size_t i = 0; i < total; ++i) out[i].assignment = assignments[i];
  // This shard's points (all without sharding); the others are left pending for another shard.
  std::vector<std::size_t> mine;
  for (std::size_t i = 0; i < total; ++i) {
    if (options.simulate && !options.shard.mine(i)) out[i].status = PointStatus::pending;
    else mine.push_back(i);
  }
  const std::size_t count = mine.size();
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t workers = std::min<std::size_t>(options.threads > 0 ? static_cast<std::size_t>(options.threads) : hw,
                                                    std::max<std::size_t>(count, 1));

  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;  // guards done, failure and the progress callback
  std::size_t done = 0;
  std::exception_ptr failure;
  MemoryGate gate;  // the workers' simulations share one budget
  const auto start = std::chrono::steady_clock::now();  // progress display only, never in results

  auto work = [&] {
    if (options.on_worker_start) options.on_worker_start();
    ScreeningCaches caches;  // the worker's own: no locking
    while (!failed.load(std::memory_order_relaxed) && !(options.cancel && options.cancel->load())) {
      const std::size_t k = next.fetch_add(1);
      if (k >= count) return;
      const std::size_t i = mine[k];
      try {
        out[i] = options.simulate ? evaluate_point_within(base, file, assignments[i], options.skip_unfitting, &gate)
                                  : screen_point(base, file, assignments[i], options.estimate ? &caches : nullptr);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(mutex);
        if (!failure) failure = std::current_exception();
        failed = true;
        return;
      }
      if (options.progress) {
        const std::lock_guard<std::mutex> lock(mutex);
        ++done;
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        options.progress(SweepProgress{done, count, elapsed, options.phase});
      }
    }
  };
  if (workers <= 1) {
    work();
  } else {
    std::vector<std::jthread> pool;
    pool.reserve(workers);
    for (std::size_t w = 0; w < workers; ++w) pool.emplace_back(work);
  }  // joined here
  if (failure) std::rethrow_exception(failure);
  return out;
}

std::vector<SweepPoint> run_sweep(const json& base, const std::string& file, const std::vector<SweepAxis>& axes,
                                  const SweepOptions& options) {
  return run_points(base, file, cartesian(axes), options);
}

std::optional<Objective> parse_objective(const std::string& name) {
  if (name == "tokens_per_s") return Objective::tokens_per_s;
  if (name == "usd_per_token") return Objective::usd_per_token;
  return std::nullopt;
}

std::vector<std::size_t> rank_points(const std::vector<SweepPoint>& points, Objective objective) {
  std::vector<std::size_t> out, estimated;
  for (bool est : {false, true}) {
    auto& v = est ? estimated : out;
    if (objective == Objective::tokens_per_s) v = rank_by(points, [](const SweepPoint& p) { return -p.tokens_per_s(); }, est);
    else v = rank_by(points, [](const SweepPoint& p) { return p.usd_per_token(); }, est);
  }
  out.insert(out.end(), estimated.begin(), estimated.end());
  return out;
}

std::vector<std::size_t> pareto_front(const std::vector<SweepPoint>& points) {
  // Fastest first (ties: cheaper, then enumeration order); a point joins the front when it is strictly
  // cheaper than everything faster or as fast.
  std::vector<std::size_t> idx = rank_by(points, [](const SweepPoint& p) {
    return std::make_pair(-p.tokens_per_s(), p.usd_per_token());
  });
  std::vector<std::size_t> front;
  double best_cost = 0;
  for (std::size_t i : idx) {
    const double cost = points[i].usd_per_token();
    if (front.empty() || cost < best_cost) {
      front.push_back(i);
      best_cost = cost;
    }
  }
  return front;
}

std::vector<Assignment> enumerate_layouts(const json& base, const std::string& file, const SearchOptions& options,
                                          const Assignment& prefix, LayoutDrops* drops) {
  json doc = base;
  for (const auto& [path, value] : prefix) set_path(doc, path, value, file);
  // Probe the cluster and the model with a layout that is always valid (everything 1, DP over all GPUs),
  // so a base layout that does not suit this cluster does not hide the cluster's own errors.
  json probe = doc;
  std::int64_t gbs = 0;
  if (probe.contains("training") && probe["training"].is_object()) {
    json& tr = probe["training"];
    gbs = json_int(tr, "global_batch_size", 0);
    for (const std::string& path : params::search_axes())  // the search's own axes (sim/scenario/params.cpp)
      tr.erase(path.substr(path.find('.') + 1));
    const json& cl = probe.contains("cluster") ? probe["cluster"] : json();
    const std::int64_t gpus = json_int(cl, "nodes", 0) * json_int(cl, "gpus_per_node", 8);
    if (gpus > 0) tr["global_batch_size"] = gpus;
  }
  // A framework may refuse the probe's ZeRO stage (Megatron-Core: overlap_param_gather without the
  // distributed optimizer; FSDP: no ZeRO-1): the probe tries the stages in turn and keeps the first that
  // the framework runs; when none does, the base scenario's own error stands.
  const auto parse_probe = [&] {
    std::optional<InputError> first_error;
    for (const int zero : {0, 1, 3}) {
      if (probe.contains("training") && probe["training"].is_object() && zero > 0) probe["training"]["zero_stage"] = zero;
      try {
        return parse_scenario(probe, file);
      } catch (const InputError& e) {
        if (!first_error) first_error = e;
      }
    }
    throw *first_error;
  };
  const Scenario s = parse_probe();
  const auto& m = s.model;
  const std::int64_t gpus = s.num_gpus();
  const std::int64_t seq = s.training.seq_length;
  if (gbs <= 0) gbs = s.training.global_batch_size;
  if (drops) drops->global_batch = gbs, drops->framework_name = s.training.framework;

  // Only what the scenario's framework can run (training.framework): a layout one of its rules refuses is
  // not enumerated. The rules see the probe's resolved training with the layout's own values over it.
  const Framework* framework = find_framework(s.training.framework);
  CS_CHECK(framework != nullptr);
  const json probe_facts = training_facts(s.training, s.gpu.name);
  auto framework_runs = [&](const std::map<std::string, json>& values) {
    json facts = probe_facts;
    for (const auto& [path, value] : values)
      if (facts.contains(path) && !value.is_null()) facts[path] = value;
    return first_refusal(*framework, facts) == nullptr;
  };

  std::vector<Assignment> out;
  const std::vector<std::string> axes = params::search_axes();
  const params::Param& zero_range = *params::find("training.zero_stage");
  const std::int64_t tp_limit = options.allow_tp_across_nodes ? gpus : s.cluster.gpus_per_node;
  for (std::int64_t tp : divisors(std::gcd(m.num_attention_heads, m.num_query_groups))) {
    if (tp > tp_limit || gpus % tp != 0) continue;
    for (std::int64_t pp : divisors(m.num_layers)) {
      if (gpus % (tp * pp) != 0) continue;
      for (std::int64_t cp = 1; seq % cp == 0 && (cp == 1 || seq / cp >= 1024); cp *= 2) {
        if (gpus % (tp * pp * cp) != 0) break;
        const std::int64_t dp = gpus / (tp * pp * cp);
        std::vector<std::int64_t> vps{1};
        if (pp > 1)
          for (std::int64_t v : divisors(m.num_layers / pp))
            if (v > 1) vps.push_back(v);
        // Experts fold over TP x CP x DP (models/parallelism/layout.hpp): expert TP = TP with EP dividing CP x DP, and
        // under TP > 1 also whole experts (expert TP 1) with EP dividing TP x CP x DP.
        std::vector<std::pair<std::int64_t, std::int64_t>> experts{{1, tp}};  // (ep, etp)
        if (m.num_moe_experts > 0)
          for (std::int64_t e : divisors(m.num_moe_experts)) {
            if (e > 1 && (cp * dp) % e == 0) experts.emplace_back(e, tp);
            if (tp > 1 && (tp * cp * dp) % e == 0) experts.emplace_back(e, 1);
          }
        if (drops) ++drops->splits;
        if (gbs % dp != 0) {
          if (drops) ++drops->batch_splits, drops->batch_dp.insert(dp);
          continue;
        }
        for (std::int64_t vp : vps)
          for (const auto& [ep, etp] : experts)
            for (std::int64_t mb = 1; (gbs / dp) % mb == 0; mb *= 2)
              for (int zero = static_cast<int>(zero_range.min); zero <= static_cast<int>(zero_range.max); ++zero)
                for (const auto& rc : kRecomputeNames) {
                  // One value per axis of the table, set in the table's order (null: derived / unset).
                  const std::map<std::string, json> values = {
                      {"training.tensor_model_parallel_size", tp},
                      {"training.sequence_parallel", tp > 1},
                      {"training.pipeline_model_parallel_size", pp},
                      {"training.virtual_pipeline_model_parallel_size", vp},
                      {"training.pipeline_schedule",
                       name_of(kPipelineScheduleNames, vp > 1 ? models::PipelineSchedule::interleaved : models::PipelineSchedule::one_f_one_b)},
                      {"training.context_parallel_size", cp},
                      {"training.expert_model_parallel_size", ep},
                      {"training.expert_tensor_parallel_size", etp},
                      {"training.data_parallel_size", nullptr},
                      {"training.micro_batch_size", mb},
                      {"training.zero_stage", zero},
                      {"training.fsdp_sharding_strategy", nullptr},
                      {"training.recompute_granularity", rc.name}};
                  if (!framework_runs(values)) {
                    if (drops) ++drops->framework;
                    continue;
                  }
                  Assignment a = prefix;
                  for (const std::string& axis : axes) {
                    if (axis == "training.expert_tensor_parallel_size" && m.num_moe_experts == 0) continue;  // dense: no experts
                    a.emplace_back(axis, values.at(axis));
                  }
                  out.push_back(std::move(a));
                }
      }
    }
  }
  return out;
}

void mark_dominated(std::vector<SweepPoint>& points) {
  // Group the pending points by everything but the recompute granularity and the ZeRO stage.
  // The table's order: none < selective < full.
  auto rank_of_recompute = [](const json& v) {
    const auto rc = v.is_string() ? parse_name(kRecomputeNames, v.get<std::string>()) : std::nullopt;
    return rc ? rank_of(kRecomputeNames, *rc) : 0;
  };
  struct Member {
    std::size_t index;
    int recompute;
    int zero;  // -1: the point does not set it
    bool single_replica;  // DP x CP = 1: nothing to shard, every ZeRO stage is ZeRO-0
  };
  std::map<std::string, std::vector<Member>> groups;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (points[i].status != PointStatus::pending) continue;
    std::string key;
    int recompute = -1, zero = -1;
    for (const auto& [path, v] : points[i].assignment) {
      if (path == "training.recompute_granularity") recompute = rank_of_recompute(v);
      else if (path == "training.zero_stage" && v.is_number_integer()) zero = v.get<int>();
      else key += path + "=" + v.dump() + ";";
    }
    if (recompute < 0) continue;  // not a search point
    if (zero < 0) key += "zero=unset;";
    groups[key].push_back({i, recompute, zero, points[i].report.dp * points[i].report.cp == 1});
  }
  // `a`'s ZeRO stage is never slower than `b`'s: the same, ZeRO-1 against ZeRO-2 (ZeRO-2 reduce-scatters
  // every micro-batch what ZeRO-1 reduces once and gathers the same parameters after the optimizer), or
  // any lower stage when there is a single replica (sharding over one rank changes nothing).
  auto zero_no_slower = [](const Member& a, const Member& b) {
    return a.zero == b.zero || (a.zero == 1 && b.zero == 2) || (a.single_replica && a.zero >= 0 && a.zero < b.zero);
  };
  for (const auto& [key, members] : groups)
    for (const Member& m : members)
      for (const Member& o : members)
        if (o.index != m.index && o.recompute <= m.recompute && zero_no_slower(o, m) &&
            (o.recompute != m.recompute || o.zero != m.zero)) {
          points[m.index].status = PointStatus::dominated;
          break;
        }
}

std::vector<SweepPoint> screen_and_simulate(const json& base, const std::string& file, const std::vector<Assignment>& assignments,
                                            const SearchOptions& options, Objective objective) {
  SweepOptions screen = options.run;
  screen.simulate = false;
  screen.estimate = options.verify > 0;
  screen.shard = {};  // every shard screens (and estimates) every layout: the verified set is global
  screen.phase = options.verify > 0 ? "screened and estimated" : "screened";
  std::vector<SweepPoint> points = run_points(base, file, assignments, screen);
  if (options.screen_only) return points;
  if (!options.exhaustive) mark_dominated(points);
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < points.size(); ++i)
    if (points[i].status == PointStatus::pending) todo.push_back(i);
  if (options.verify > 0) {
    // The screening tier: the best `verify` by the estimate go to the simulation (a point the formula
    // does not cover always does), the rest keep their estimate. With a resilience or data_pipeline
    // section the estimate's whole run ranks (tokens/s and $ per token over the effective days).
    auto key = [&](std::size_t i) {
      const SweepPoint& p = points[i];
      return objective == Objective::tokens_per_s ? -p.tokens_per_s() : p.usd_per_token();
    };
    std::vector<std::size_t> unestimated, estimated;
    for (std::size_t i : todo) (points[i].estimate_step_time_s ? estimated : unestimated).push_back(i);
    std::stable_sort(estimated.begin(), estimated.end(), [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
    todo = unestimated;
    std::vector<bool> chosen(points.size(), false);
    if (options.verify_per_gpu_count) {
      // The best of each (GPU type, GPU count) pair, by cost and by speed (SearchOptions).
      std::map<std::pair<std::string, int>, std::vector<std::size_t>> pairs;
      for (std::size_t i : estimated) pairs[{points[i].report.gpu, points[i].report.num_gpus}].push_back(i);
      const std::size_t each = pairs.empty() ? 0 : (options.verify + pairs.size() - 1) / pairs.size();
      for (auto& [pair, members] : pairs) {
        for (std::size_t k = 0; k < members.size() && k < each; ++k) chosen[members[k]] = true;  // cheapest first
        std::stable_sort(members.begin(), members.end(),
                         [&](std::size_t a, std::size_t b) { return points[a].tokens_per_s() > points[b].tokens_per_s(); });
        for (std::size_t k = 0; k < members.size() && k < each; ++k) chosen[members[k]] = true;  // fastest
      }
    } else {
      for (std::size_t k = 0; k < estimated.size() && k < options.verify; ++k) chosen[estimated[k]] = true;
    }
    for (std::size_t i : estimated) {
      if (chosen[i]) todo.push_back(i);
      else points[i].status = PointStatus::estimated;
    }
    std::sort(todo.begin(), todo.end());  // enumeration order, so shards split the same list
  }
  std::vector<Assignment> chosen;
  for (std::size_t i : todo) chosen.push_back(points[i].assignment);
  SweepOptions run = options.run;
  run.simulate = true;
  run.skip_unfitting = true;
  run.phase = "simulated";
  std::vector<SweepPoint> simulated = run_points(base, file, chosen, run);
  for (std::size_t k = 0; k < todo.size(); ++k) {
    if (simulated[k].status == PointStatus::cancelled) continue;  // stays pending: cancelled below
    if (simulated[k].status == PointStatus::pending) continue;    // another shard's: stays pending
    simulated[k].estimate_step_time_s = points[todo[k]].estimate_step_time_s;
    points[todo[k]] = std::move(simulated[k]);
  }
  const bool sharded = options.run.shard.count > 1;
  for (std::size_t k = 0; k < todo.size(); ++k) {
    SweepPoint& p = points[todo[k]];
    if (p.status == PointStatus::pending && !(sharded && !options.run.shard.mine(k))) p.status = PointStatus::cancelled;
  }
  return points;
}

SearchCounts count_points(const std::vector<SweepPoint>& points) {
  SearchCounts c;
  c.enumerated = points.size();
  for (const auto& p : points) {
    switch (p.status) {
      case PointStatus::cancelled: ++c.cancelled; break;
      case PointStatus::invalid: ++c.invalid; break;
      case PointStatus::not_fitting: ++c.not_fitting; break;
      case PointStatus::pending: ++c.cancelled; break;
      case PointStatus::dominated: ++c.dominated; break;
      case PointStatus::simulated: ++c.simulated; break;
      case PointStatus::estimated: ++c.estimated; break;
    }
  }
  return c;
}

void finish_search(SearchResult& r, Objective objective) {
  r.counts = count_points(r.points);
  r.ranked = rank_points(r.points, objective);
}

SearchResult search_layouts(const json& base, const std::string& file, const SearchOptions& options, Objective objective) {
  SearchResult r;
  r.points = screen_and_simulate(base, file, enumerate_layouts(base, file, options), options, objective);
  finish_search(r, objective);
  return r;
}

namespace {
// One (GPU type, GPU count) of a capacity plan: its prefix, its layouts' range in the plan's points and what
// the enumeration left out.
struct PlanPair {
  Assignment prefix;
  std::string name;  // "H100-SXM x 1536"
  std::size_t begin = 0, end = 0;
  LayoutDrops drops;
  std::string skipped;  // why the pair has no row ("" while it may have one)
};

// Whether some layout at `prefix` with global batch `g` validates and fits (screened, none simulated).
bool batch_fits(const json& base, const std::string& file, const SearchOptions& search, Assignment prefix, std::int64_t g) {
  prefix.emplace_back("training.global_batch_size", g);
  std::vector<Assignment> layouts;
  try {
    layouts = enumerate_layouts(base, file, search, prefix);
  } catch (const InputError&) {
    return false;
  }
  SweepOptions screen = search.run;
  screen.simulate = false, screen.estimate = false, screen.shard = {}, screen.progress = {};
  const std::vector<SweepPoint> points = run_points(base, file, layouts, screen);
  return std::any_of(points.begin(), points.end(), [](const SweepPoint& p) { return p.status == PointStatus::pending; });
}

// The global batch nearest to `drops.global_batch` below it (`up` false) or above it that some dropped DP
// divides and that gives a layout that validates and fits: the candidates are the multiples of the dropped
// DP values, nearest first, at most kTries of them screened. 0 when none does.
std::int64_t nearest_batch(const json& base, const std::string& file, const SearchOptions& search, const PlanPair& pair, bool up) {
  constexpr std::size_t kTries = 8;
  const std::int64_t gbs = pair.drops.global_batch;
  std::set<std::int64_t> candidates;  // every dropped DP's nearest kTries multiples on that side
  for (std::int64_t dp : pair.drops.batch_dp) {
    std::int64_t g = up ? (gbs / dp + 1) * dp : (gbs - 1) / dp * dp;
    for (std::size_t k = 0; k < kTries && g > 0; ++k, g += up ? dp : -dp) candidates.insert(g);
  }
  std::vector<std::int64_t> order(candidates.begin(), candidates.end());
  if (!up) std::reverse(order.begin(), order.end());
  for (std::size_t k = 0; k < order.size() && k < kTries; ++k)
    if (batch_fits(base, file, search, pair.prefix, order[k])) return order[k];
  return 0;
}

// Why `pair` has no layout that is valid and fits ("" when it has one): every rule that removed layouts, with
// its count, and the nearest global batch sizes that give a layout.
std::string explain_dropped(const json& base, const std::string& file, const SearchOptions& search, const PlanPair& pair,
                            const std::vector<SweepPoint>& points) {
  std::size_t invalid = 0, not_fitting = 0;
  std::map<std::string, std::size_t> reasons;
  double leanest = 0;
  std::string gpu;
  for (std::size_t i = pair.begin; i < pair.end; ++i) {
    const SweepPoint& p = points[i];
    if (p.status == PointStatus::invalid) {
      ++invalid, ++reasons[p.error];
    } else if (p.status == PointStatus::not_fitting) {
      const double need = p.report.memory.total_bytes() / kGiB;
      if (not_fitting++ == 0 || need < leanest) leanest = need, gpu = fmt(" of %.1f GiB", p.report.memory_capacity_bytes / kGiB);
    } else {
      return "";  // it has a layout (or another shard has it)
    }
  }
  const LayoutDrops& d = pair.drops;
  std::vector<std::string> why;
  if (d.batch_splits) {
    std::string dps;
    for (std::int64_t dp : d.batch_dp) dps += (dps.empty() ? "" : ", ") + std::to_string(dp);
    why.push_back("global batch " + std::to_string(d.global_batch) + " not divisible by DP in " + std::to_string(d.batch_splits) +
                  " of " + std::to_string(d.splits) + " TP x PP x CP splits (DP " + dps + ")");
  }
  if (d.framework) why.push_back(std::to_string(d.framework) + " layouts refused by " + d.framework_name);
  if (invalid) {
    const auto top = std::max_element(reasons.begin(), reasons.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    why.push_back(std::to_string(invalid) + " invalid (" + std::to_string(top->second) + " x " + top->first + ")");
  }
  if (not_fitting) why.push_back(std::to_string(not_fitting) + " do not fit in memory (the leanest needs " + fmt("%.1f GiB", leanest) + gpu + ")");
  if (why.empty()) why.push_back("no layout enumerated");
  std::string out = pair.name + ": no layout is valid and fits: ";
  for (std::size_t k = 0; k < why.size(); ++k) out += (k ? "; " : "") + why[k];
  if (!d.batch_dp.empty()) {
    const std::int64_t down = nearest_batch(base, file, search, pair, false), up = nearest_batch(base, file, search, pair, true);
    const auto near = [&](std::int64_t g) { return g ? std::to_string(g) : std::string("none near"); };
    out += "; nearest global batch with a layout that fits: " + near(down) + " below, " + near(up) + " above";
  }
  return out;
}
}  // namespace

CapacityResult plan_capacity(const json& base, const std::string& file, const CapacityOptions& options) {
  const json training = base.contains("training") ? base["training"] : json();
  const json tokens = training.is_object() && training.contains("tokens_to_train") ? training["tokens_to_train"] : json();
  if (!tokens.is_number() || tokens.get<double>() <= 0)
    throw InputError(file + ": training.tokens_to_train: capacity planning needs the number of tokens to train (e.g. 15e12)");
  const json cluster = base.contains("cluster") ? base["cluster"] : json();
  const std::int64_t gpn = json_int(cluster, "gpus_per_node", 8);
  const json base_gpu = cluster.is_object() && cluster.contains("gpu") ? cluster["gpu"] : json();
  std::vector<json> types;
  for (const auto& t : options.gpu_types) types.emplace_back(t);
  if (types.empty()) types.push_back(base_gpu);
  std::vector<std::string> problems;
  for (int count : options.gpu_counts)
    if (count <= 0 || gpn <= 0 || count % gpn != 0)
      problems.push_back(file + ": --gpus " + std::to_string(count) + ": not a positive multiple of cluster.gpus_per_node (" +
                         std::to_string(gpn) + ")");
  if (options.gpu_counts.empty()) problems.push_back(file + ": --gpus: no GPU counts given");
  if (!problems.empty()) throw InputError(problems);

  CapacityResult r;
  r.tokens_to_train = tokens.get<double>();
  // A price written in the scenario is the price of its GPU (or a table by type); the others take their
  // catalog price (set_path pins the price to the GPU it was written for), and the plan says so.
  std::vector<std::string> type_names;
  for (const json& type : types)
    if (type.is_string()) type_names.push_back(type.get<std::string>());
  r.price_note = price_basis_note(base, type_names);
  std::vector<Assignment> all;
  std::vector<PlanPair> pairs;
  for (const json& type : types)
    for (int count : options.gpu_counts) {
      PlanPair pair;
      if (!type.is_null()) pair.prefix.emplace_back("cluster.gpu", type);
      pair.prefix.emplace_back("cluster.nodes", count / gpn);
      pair.name = (type.is_string() ? type.get<std::string>() : std::string("GPU")) + " x " + std::to_string(count);
      pair.begin = all.size();
      try {
        auto layouts = enumerate_layouts(base, file, options.search, pair.prefix, &pair.drops);
        all.insert(all.end(), std::make_move_iterator(layouts.begin()), std::make_move_iterator(layouts.end()));
      } catch (const InputError& e) {
        pair.skipped = pair.name + ": " + join(e.messages(), file);
      }
      pair.end = all.size();
      pairs.push_back(std::move(pair));
    }
  SearchOptions search = options.search;
  search.verify_per_gpu_count = true;
  r.points = screen_and_simulate(base, file, all, search, Objective::usd_per_token);
  if (!options.search.screen_only)
    for (PlanPair& pair : pairs)
      if (pair.skipped.empty()) pair.skipped = explain_dropped(base, file, options.search, pair, r.points);
  for (const PlanPair& pair : pairs)
    if (!pair.skipped.empty()) r.skipped.push_back(pair.skipped);
  finish_capacity(r, options, base, file);
  return r;
}

void finish_capacity(CapacityResult& r, const CapacityOptions& options, const json& base, const std::string& file) {
  for (SweepPoint& p : r.points) {
    if (!p.simulated() || p.outlook) continue;
    SweepPoint scratch;
    const std::optional<Scenario> s = point_scenario(base, file, p.assignment, scratch);
    if (!s) continue;  // cannot happen for a simulated point (it was built the same way)
    try {
      p.outlook = goodput::run_outlook(*s, p.report, options.outlook);
    } catch (const InputError& e) {
      p.status = PointStatus::invalid;
      p.valid = false;
      p.error = join(e.messages(), file);
    }
  }
  r.counts = count_points(r.points);
  r.ranked = rank_points(r.points, Objective::usd_per_token);
  // Plans are made of simulated layouts only: an estimate ranks, the simulation decides.
  const auto meets = [&](const SweepPoint& p) { return p.simulated() && p.meets(options.deadline_days, options.budget_usd); };
  r.cheapest.reset();
  r.fastest.reset();
  for (std::size_t i : r.ranked)
    if (meets(r.points[i])) {
      r.cheapest = i;
      break;
    }
  for (std::size_t i : rank_points(r.points, Objective::tokens_per_s))
    if (meets(r.points[i])) {
      r.fastest = i;
      break;
    }
  r.pareto = pareto_front(r.points);
}

nlohmann::json to_json(const SweepPoint& p) {
  nlohmann::json a = nlohmann::json::object();
  for (const auto& [path, v] : p.assignment) a[path] = v;
  nlohmann::json o = {{"assignment", a}, {"status", to_string(p.status)}};
  if (!p.error.empty()) o["error"] = p.error;
  if (p.simulated()) {
    o["report"] = to_json(p.report);
    o["usd_per_million_tokens"] = p.usd_per_token() * 1e6;
    if (p.whole_run)
      o["whole_run"] = {{"goodput", p.whole_run->goodput}, {"input_stall_fraction", p.whole_run->input_stall_fraction},
                        {"effective_days", p.whole_run->effective_days}, {"effective_usd", p.whole_run->effective_usd}};
  }
  if (p.outlook) o["outlook"] = goodput::to_json(*p.outlook);
  if (p.estimate_step_time_s) {
    const double step = *p.estimate_step_time_s;
    const double tokens = static_cast<double>(p.report.global_batch_size) * static_cast<double>(p.report.seq_length);
    const double usd_per_step = p.simulated() ? p.report.cost.usd_per_step * step / p.report.step_time_s : p.report.cost.usd_per_step;
    o["estimate"] = {{"step_time_s", step}, {"tokens_per_s", tokens / step},
                     {"usd_per_million_tokens", tokens > 0 ? usd_per_step / tokens * 1e6 : 0.0}};
  }
  return o;
}

nlohmann::json to_json(const SearchCounts& c) {
  nlohmann::json o = {{"enumerated", c.enumerated}, {"invalid", c.invalid}, {"not_fitting", c.not_fitting},
                      {"dominated", c.dominated}, {"simulated", c.simulated}};
  if (c.estimated) o["estimated"] = c.estimated;
  return o;
}

}  // namespace cs::sim
