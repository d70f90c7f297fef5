#include "sim/explore/screening.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "models/compute/compute_model.hpp"
#include "models/memory/memory_model.hpp"
#include "models/parallelism/layout.hpp"
#include "models/parallelism/pipeline_schedule.hpp"
#include "models/workload/transformer.hpp"
#include "sim/base/check.hpp"
#include "sim/engine/time.hpp"
#include "sim/network/nccl_model.hpp"
#include "sim/step/step_units.hpp"

namespace cs::sim {

using models::CollectiveKind;
using models::Op;
using models::OpKind;

namespace {

// A key of integers and doubles, hashed FNV-1a over their bits.
template <std::size_t N, std::size_t D>
struct Key {
  std::array<std::int64_t, N> ints{};
  std::array<double, D> reals{};
  bool operator==(const Key&) const = default;
};
struct KeyHash {
  template <std::size_t N, std::size_t D>
  std::size_t operator()(const Key<N, D>& k) const {
    std::uint64_t h = 1469598103934665603ULL;
    auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 1099511628211ULL; };
    for (std::int64_t v : k.ints) mix(static_cast<std::uint64_t>(v));
    for (double v : k.reals) mix(std::bit_cast<std::uint64_t>(v));
    return static_cast<std::size_t>(h);
  }
};
using CollectiveKey = Key<12, 1>;  // kind, group kind, layout, rank (or a pipeline pair), token routing; bytes
using PriceKey = Key<4, 1>;        // kind, group geometry (its index), forced algorithm (hash), token routing; bytes

// A group's GPUs, hashed FNV-1a.
struct MembersHash {
  std::size_t operator()(const std::vector<int>& v) const {
    std::uint64_t h = 1469598103934665603ULL;
    for (int r : v) h = (h ^ static_cast<std::uint32_t>(r)) * 1099511628211ULL;
    return static_cast<std::size_t>(h);
  }
};

// One pass of a stage's pipeline order (models::pipeline_order) with what the recurrence reads of it:
// its own arrival slot and the slot its output arrives in at the neighbouring virtual stage, slots
// numbered (stage * v + chunk) * m + micro-batch.
struct Action {
  static constexpr std::uint32_t kNone = 0xffffffffU;
  std::uint32_t slot;
  std::uint32_t to;       // the neighbour's slot (kNone: the first / last virtual stage)
  std::uint32_t to_stage; // the neighbour's stage
  int chunk;
  bool forward;
  bool waits;             // has a predecessor (forward) / successor (backward) to wait for
  bool last_micro_batch;  // mb == m - 1
  bool final_action;      // the stage's last pass
  bool first_micro_batch; // mb == 0 (no gradient accumulation kernel under accumulate_grad)
};

// A stage's pipeline order and its steady range [lo, hi): every pass there is the pass one period
// (span = 2 v P passes, P micro-batches) before it with its micro-batch P later (the same direction and
// chunk, hence the same neighbours and slots P on), neither of the two the last micro-batch nor the
// stage's last pass. Past the warm-up of 1F1B and interleaved schedules the order repeats itself so;
// GPipe's (every forward, then every backward) does not, nor a schedule too short for a steady phase.
struct CompiledOrder {
  std::vector<PipelineAction> order;
  std::size_t lo = 0, hi = 0;
  int p = 1, m = 1, v = 1, stage = 0;

  std::size_t size() const { return order.size(); }
  Action operator[](std::size_t k) const {
    const PipelineAction& a = order[k];
    const int c = a.chunk, mb = a.micro_batch;
    const bool first = stage == 0, last = stage == p - 1;
    const bool has_prev = !(first && c == 0), has_next = !(last && c == v - 1);
    auto slot = [&](int s, int ch) {
      return static_cast<std::uint32_t>((static_cast<std::size_t>(s) * static_cast<std::size_t>(v) + static_cast<std::size_t>(ch)) *
                                            static_cast<std::size_t>(m) + static_cast<std::size_t>(mb));
    };
    Action x{slot(stage, c), Action::kNone, 0, c, a.forward, a.forward ? has_prev : has_next, mb == m - 1, k + 1 == order.size(), mb == 0};
    if (a.forward && has_next) x.to_stage = static_cast<std::uint32_t>(last ? 0 : stage + 1), x.to = slot(last ? 0 : stage + 1, last ? c + 1 : c);
    if (!a.forward && has_prev) x.to_stage = static_cast<std::uint32_t>(first ? p - 1 : stage - 1), x.to = slot(first ? p - 1 : stage - 1, first ? c - 1 : c);
    return x;
  }
};

// `first_differs`: micro-batch 0's passes cost other than the later ones' (no gradient accumulation kernel
// under accumulate_grad), so no pass is taken as the repeat of one of micro-batch 0.
CompiledOrder compile_order(PipelineSchedule schedule, int p, int m, int stage, int v, int period, bool first_differs) {
  CompiledOrder compiled{pipeline_order(schedule, p, m, stage, v), 0, 0, p, m, v, stage};
  const std::vector<PipelineAction>& o = compiled.order;
  // The longest run of passes each the one a period before, P micro-batches on.
  const std::size_t span = 2 * static_cast<std::size_t>(v) * static_cast<std::size_t>(period), n = o.size();
  auto repeats = [&](std::size_t i) {
    const PipelineAction &x = o[i], &y = o[i - span];
    return x.forward == y.forward && x.chunk == y.chunk && x.micro_batch == y.micro_batch + period && x.micro_batch != m - 1 &&
           i + 1 != n && !(first_differs && y.micro_batch == 0);
  };
  for (std::size_t i = span, run = span; i <= n; ++i) {
    if (i < n && repeats(i)) continue;
    if (i - run > compiled.hi - compiled.lo) compiled.lo = run, compiled.hi = i;
    run = i + 1;
  }
  return compiled;
}

}  // namespace

struct ScreeningCache::Impl {
  explicit Impl(const topo::ClusterSpec& spec) : cluster(spec) {}
  topo::Cluster cluster;
  std::unordered_map<models::OpTimeKey, Time, models::OpTimeKeyHash> ops;
  std::unordered_map<CollectiveKey, Time, KeyHash> collectives;
  // Below the layout's collective: layouts share groups (TP 8 is GPUs 0-7 whatever the PP and DP), so a
  // group's geometry is found by its GPUs and a price by the geometry, not recomputed per layout.
  std::unordered_map<std::vector<int>, std::int64_t, MembersHash> geometry_ids;
  std::vector<GroupGeometry> geometries;
  std::unordered_map<PriceKey, Time, KeyHash> prices;
  bool extrapolate = true;  // ScreeningCache::set_extrapolation
  int extrapolated = 0;
  std::map<std::tuple<int, int, int, int, int, bool>, CompiledOrder> orders;  // (schedule, p, m, stage, v, first_differs)
};

ScreeningCache::ScreeningCache(const topo::ClusterSpec& spec) : impl_(std::make_unique<Impl>(spec)) {}
ScreeningCache::~ScreeningCache() = default;
const topo::Cluster& ScreeningCache::cluster() const { return impl_->cluster; }
void ScreeningCache::set_extrapolation(bool on) { impl_->extrapolate = on; }
int ScreeningCache::extrapolated() const { return impl_->extrapolated; }

namespace {

// The step builder's units, wire sizes and buckets are step_units.hpp's (shared with the builder).

struct Unit {
  const models::LayerOps* ops;
  double dense, expert;
  // The unit's data-parallel collectives (0: none): ZeRO-3 gathers (dense, expert), reduce-scatters and
  // the HYBRID_SHARD all-reduce across replicas.
  Time gather_dense = 0, gather_expert = 0, rs_dense = 0, ar_replica = 0, rs_expert = 0;
  Time regather = 0;  // per_tensor_synchronous: a recomputed layer's second gather before its backward
  Time fwd = 0, bwd = 0;
  Time acc = 0;  // models::grad_accumulation_op after its backward (0: fused), included in bwd
  std::int64_t layer = -1;  // UnitParams::layer (CPU activation offload's copies key on it)
  UnitKind kind = UnitKind::layer;
  bool recomputed = false;  // reruns_forward (step_units.hpp)
};

class Screen {
 public:
  Screen(const Scenario& s, ScreeningCache::Impl& cache)
      : s_(s),
        t_(s.training),
        cache_(cache),
        cluster_(cache.cluster),
        profile_(s.compute_profile ? *s.compute_profile : models::default_compute_profile()),
        layout_(t_.tp, t_.cp, t_.dp, t_.pp, t_.ep, t_.zero_stage >= 3 ? t_.fsdp_shard_size : 0, t_.expert_tp()),
        dps_(data_parallel_sharding(s, layout_)),
        forced_hash_(static_cast<std::int64_t>(std::hash<std::string>{}(s.simulation.nccl_algorithm))),
        contention_(s.contention()),
        ops_(s.model, t_) {}

  Time step() {
    const int p = t_.pp;
    stages_.resize(static_cast<std::size_t>(p));
    split_ = pipeline_split(s_.model, t_);
    alike_layers_ = models::layer_variants(s_.model).size() == 1;
    for (const double seconds : offload_copy_s(s_.model, t_, s_.gpu)) offload_copy_.push_back(from_seconds(seconds));
    offloaded_.assign(offload_copy_.size(), 0);
    reloaded_.assign(offload_copy_.size(), 0);
    for (int s = 0; s < p; ++s) prepare_stage(s);
    // The pipeline tensor to the neighbouring virtual stage (the builder's emit_p2p), priced once per pair.
    const double bytes = static_cast<double>(t_.micro_batch_size) * static_cast<double>(t_.seq_length / t_.cp) *
                         static_cast<double>(s_.model.hidden_size) * 2.0 / (t_.sequence_parallel ? t_.tp : 1);
    // pipeline_tensor_split: 1/tp on the wire, the whole tensor all-gathered over TP by the receiver before
    // the pass (and, partitioned, the stage's own output again before its backward).
    const bool split = t_.pipeline_tensor_split != models::PipelineTensorSplit::none && t_.tp > 1 && !t_.sequence_parallel;
    for (int s = 0; s < p && p > 1; ++s) {
      Stage& st = stages_[static_cast<std::size_t>(s)];
      st.p2p_next = p2p(s, s == p - 1 ? 0 : s + 1, split ? bytes / t_.tp : bytes);
      st.p2p_prev = p2p(s, s == 0 ? p - 1 : s - 1, split ? bytes / t_.tp : bytes);
      if (split) {
        const Time g = collective(CollectiveKind::all_gather, bytes, GroupKind::tp, st.rank);
        st.gather_fwd = g;
        st.gather_bwd = t_.pipeline_tensor_split == models::PipelineTensorSplit::partitioned ? 2 * g : g;
      }
    }
    return run_pipeline(static_cast<int>(t_.num_micro_batches()));
  }

 private:
  struct Stage {
    int rank = 0;  // the simulated rank of the stage: TP, CP, DP index 0, as the builder's symmetry picks
    std::vector<std::vector<Unit>> chunks;
    std::vector<Time> fwd, bwd;  // a chunk's whole pass without data-parallel traffic
    std::vector<Time> acc;       // of bwd, the gradient accumulation kernels (Unit::acc)
    Time tc = 0;                 // compute stream free
    Time td = 0;                 // data-parallel stream free
    Time reductions = 0;         // the last gradient reduction ends
    Time send_fwd = 0, send_bwd = 0;  // pipeline send streams free
    Time offload = 0;                 // CPU activation offload's copy stream free
    Time sends_end = 0;
    Time end = 0;                     // the stage's end, optimizer included (run_pipeline)
    Time p2p_next = 0, p2p_prev = 0;  // a send to the next / previous virtual stage
    Time gather_fwd = 0, gather_bwd = 0;  // pipeline_tensor_split's all-gathers before a pass that received
    std::vector<std::pair<GroupKind, double>> deferred;
    std::size_t pending = 0;  // arrivals written for the stage's passes and not yet consumed
  };

  // The streams of a stage the recurrence carries from pass to pass (Stage's), in this order in a Cut.
  static constexpr std::size_t kStreams = 7;
  static std::array<Time*, kStreams> streams(Stage& st) {
    return {&st.tc, &st.td, &st.reductions, &st.send_fwd, &st.send_bwd, &st.sends_end, &st.offload};
  }

  // The recurrence's whole state between passes: each stage's next pass and streams, and the arrivals
  // written and not yet consumed (by the slot they wait in), its deferred buckets.
  struct Cut {
    std::vector<std::size_t> next;
    std::vector<Time> streams;  // kStreams a stage
    struct Pending {
      std::uint32_t stage, slot;
      bool forward;
      Time at;
    };
    std::vector<Pending> pending;
    std::vector<std::vector<std::pair<GroupKind, double>>> deferred;
    bool complete = false;  // every pending arrival found (within two periods of its consumer's stage)
  };

  void take_cut(Cut& c, std::size_t span) {
    const std::size_t p = stages_.size();
    c.next = next_;
    c.streams.clear();
    c.pending.clear();
    c.deferred.resize(p);
    c.complete = true;
    for (std::size_t s = 0; s < p; ++s) {
      const Stage& st = stages_[s];
      for (Time* x : streams(stages_[s])) c.streams.push_back(*x);
      c.deferred[s] = st.deferred;
      const CompiledOrder& ord = *order_[s];
      std::size_t found = 0;
      for (std::size_t i = next_[s]; found < st.pending && i < std::min(ord.size(), next_[s] + 2 * span); ++i) {
        const Action a = ord[i];
        if (!a.waits) continue;
        const Time at = (a.forward ? fwd_arrival_ : bwd_arrival_)[a.slot];
        if (at >= 0) c.pending.push_back({static_cast<std::uint32_t>(s), a.slot, a.forward, at}), ++found;
      }
      c.complete = c.complete && found == st.pending;
    }
  }

  // Whether the state `cur` is `prev` one period later: every stage one period (`span` passes) further,
  // inside its steady range, each stream d later (d > 0: stage 0's compute stream's advance) or, never
  // written in the period, no later than the stage's compute stream was at `prev` (so that every max and
  // overlap that reads it, all at or after that time, ignores it from then on as it did in the period),
  // every pending arrival the one of `prev` a period later (its slot P micro-batches on) and d later, the
  // same deferred buckets. Then each further period of the steady ranges repeats the last one d later
  // (every figure of a pass is its stage's streams and its arrival plus durations: differences of times),
  // and the number of periods that may be skipped is returned; 0 where the state does not repeat.
  std::size_t periods_to_skip(const Cut& prev, const Cut& cur, std::size_t span, int period, Time& d) const {
    if (!prev.complete || !cur.complete || prev.pending.size() != cur.pending.size()) return 0;
    d = cur.streams[0] - prev.streams[0];
    if (d <= 0) return 0;
    std::size_t periods = std::numeric_limits<std::size_t>::max();
    for (std::size_t s = 0; s < stages_.size(); ++s) {
      const CompiledOrder& ord = *order_[s];
      if (cur.next[s] != prev.next[s] + span || cur.next[s] < ord.lo || cur.next[s] + span > ord.hi) return 0;
      periods = std::min(periods, (ord.hi - cur.next[s]) / span);
      const Time tc = prev.streams[s * kStreams];
      for (std::size_t f = 0; f < kStreams; ++f) {
        const Time was = prev.streams[s * kStreams + f], now = cur.streams[s * kStreams + f];
        if (now - was != d && !(f > 0 && now == was && was <= tc)) return 0;
      }
      if (cur.deferred[s] != prev.deferred[s]) return 0;
    }
    for (std::size_t i = 0; i < cur.pending.size(); ++i) {
      const Cut::Pending &x = prev.pending[i], &y = cur.pending[i];
      if (y.stage != x.stage || y.forward != x.forward || y.slot != x.slot + static_cast<std::uint32_t>(period) || y.at - x.at != d)
        return 0;
    }
    return periods;
  }

  // Moves the recurrence from `cur` (the state `prev` repeated d later) `periods` periods on: what
  // running them would give, the steady range repeating its last period.
  void skip(const Cut& prev, const Cut& cur, std::size_t periods, std::size_t span, int period, Time d) {
    const Time shift = static_cast<Time>(periods) * d;
    for (std::size_t s = 0; s < stages_.size(); ++s) {
      next_[s] += periods * span;
      const auto x = streams(stages_[s]);
      for (std::size_t f = 0; f < kStreams; ++f)
        if (cur.streams[s * kStreams + f] != prev.streams[s * kStreams + f]) *x[f] += shift;
    }
    const auto slots = static_cast<std::uint32_t>(periods) * static_cast<std::uint32_t>(period);
    for (const Cut::Pending& a : cur.pending) {
      auto& arrival = a.forward ? fwd_arrival_ : bwd_arrival_;
      CS_CHECK(a.slot + slots < arrival.size());
      arrival[a.slot + slots] = a.at + shift;
    }
  }

  // Advances every stage while its next pass (below its limit) has what it waits for. What a stage waits
  // for comes from its neighbours in model order (stage - 1 and stage + 1, wrapping between the first and
  // last for interleaved chunks), so a stage is tried again only after a neighbour advanced. Each pass's
  // times depend only on its own stage's state and the arrival it waits for (each written once), so the
  // order stages are tried in does not change a figure; it saves the sweeps over blocked stages a
  // round-robin loop makes while a backward wave climbs the pipeline one stage per sweep.
  void advance() {
    const int p = static_cast<int>(stages_.size());
    work_.clear();
    queued_.assign(static_cast<std::size_t>(p), 1);
    for (int s = p - 1; s >= 0; --s) work_.push_back(s);
    while (!work_.empty()) {
      const int s = work_.back();
      work_.pop_back();
      queued_[static_cast<std::size_t>(s)] = 0;
      auto& k = next_[static_cast<std::size_t>(s)];
      const CompiledOrder& ord = *order_[static_cast<std::size_t>(s)];
      const std::size_t k0 = k, end = std::min(ord.size(), limit_[static_cast<std::size_t>(s)]);
      Stage& st = stages_[static_cast<std::size_t>(s)];
      while (k < end && run_action(st, ord[k])) ++k;
      if (k == k0) continue;
      for (const int n : {s + 1 == p ? 0 : s + 1, s == 0 ? p - 1 : s - 1})
        if (!queued_[static_cast<std::size_t>(n)]) queued_[static_cast<std::size_t>(n)] = 1, work_.push_back(n);
    }
  }

  // The recurrence for `m` micro-batches from a fresh start (prepare_stage's durations); the step's end.
  //
  // Many micro-batches: past the warm-up the schedule repeats itself every P micro-batches (P = p for the
  // interleaved schedule, whose order takes micro-batches in groups of p; 1 otherwise), each stage's
  // order one period of 2 v P passes after another (CompiledOrder's steady range). The stages are run to
  // a cut a period into their steady ranges, then a period at a time; once the state at a cut is the
  // state of the one before d later (periods_to_skip), every period up to the end of the steady ranges
  // would repeat it d later, so they are skipped (their streams and arrivals moved on) and the rest of
  // the schedule, its cool-down, is run from there. The figure is the full recurrence's to the
  // picosecond (tests/sim/test_screening.cpp; clustersim-sweep-bench --dump-estimates over the 7,064
  // layouts of its three searches); where no cut repeats, the recurrence runs every pass.
  Time run_pipeline(int m) {
    const int p = t_.pp, v = t_.vp;
    const std::size_t ps = static_cast<std::size_t>(p);
    for (Stage& st : stages_) {
      st.tc = st.td = st.reductions = st.send_fwd = st.send_bwd = st.sends_end = st.offload = 0;
      st.deferred.clear();
      st.pending = 0;
    }
    const std::size_t slots = ps * static_cast<std::size_t>(v) * static_cast<std::size_t>(m);
    fwd_arrival_.assign(slots, -1);
    bwd_arrival_.assign(slots, -1);
    const int period = t_.pipeline_schedule == PipelineSchedule::interleaved ? p : 1;
    const std::size_t span = 2 * static_cast<std::size_t>(v) * static_cast<std::size_t>(period);
    order_.resize(ps);
    bool seek = cache_.extrapolate;
    for (int s = 0; s < p; ++s) {
      const bool first_differs = t_.grad_accumulation == models::GradAccumulation::accumulate_grad;
      auto& slot = cache_.orders[{static_cast<int>(t_.pipeline_schedule), p, m, s, v, first_differs}];
      if (slot.order.empty()) slot = compile_order(t_.pipeline_schedule, p, m, s, v, period, first_differs);
      order_[static_cast<std::size_t>(s)] = &slot;
      seek = seek && slot.hi >= slot.lo + span;  // room for the period to compare with the one before and one to skip
    }
    next_.assign(ps, 0);
    limit_.assign(ps, std::numeric_limits<std::size_t>::max());
    if (seek) {
      for (std::size_t s = 0; s < ps; ++s) limit_[s] = order_[s]->lo - span;
      advance();
      take_cut(cuts_[0], span);
      for (int k = 1;; ++k) {
        Cut &prev = cuts_[static_cast<std::size_t>(1 - k % 2)], &cur = cuts_[static_cast<std::size_t>(k % 2)];
        bool room = true;
        for (std::size_t s = 0; s < ps; ++s) {
          limit_[s] += span;
          room = room && limit_[s] + span <= order_[s]->hi;
        }
        if (!room) break;
        advance();
        take_cut(cur, span);
        Time d = 0;
        if (const std::size_t periods = periods_to_skip(prev, cur, span, period, d); periods > 0) {
          skip(prev, cur, periods, span, period, d);
          ++cache_.extrapolated;
          break;
        }
      }
      limit_.assign(ps, std::numeric_limits<std::size_t>::max());
    }
    advance();
    for (std::size_t s = 0; s < ps; ++s) CS_CHECK(next_[s] == order_[s]->size());
    Time end = 0;
    for (int s = 0; s < p; ++s) {
      Stage& st = stages_[static_cast<std::size_t>(s)];
      st.end = finish_stage(s);
      end = std::max(end, st.end);
    }
    return end;
  }


  // The builder's rounding of models::op_time_s (memoized across the layouts of a search).
  Time op_time(const Op& op) {
    const models::OpTimeKey key = models::op_time_key(op);
    if (const auto it = cache_.ops.find(key); it != cache_.ops.end()) return it->second;
    const Time t = from_seconds(models::op_time_s(op, s_.gpu, profile_));
    cache_.ops.emplace(key, t);
    return t;
  }

  CollectiveKey collective_key(CollectiveKind kind, double bytes, int gk, int a, int b, const TokenRouting& routing = {}) const {
    return {{static_cast<std::int64_t>(kind), gk, t_.tp, t_.cp, t_.dp, t_.pp, t_.ep, layout_.etp(), layout_.shard_size(), a, b,
             static_cast<std::int64_t>(routing.bits())},
            {bytes}};
  }
  Time priced(const CollectiveKey& key, const std::vector<int>& members, CollectiveKind kind, double bytes,
              const TokenRouting& routing = {}) {
    if (const auto it = cache_.collectives.find(key); it != cache_.collectives.end()) return it->second;
    Time d = 0;
    if (members.size() >= 2 && bytes > 0) {
      auto [g, added] = cache_.geometry_ids.try_emplace(members, static_cast<std::int64_t>(cache_.geometries.size()));
      if (added) cache_.geometries.push_back(group_geometry(cluster_, members));
      const PriceKey pk{{static_cast<std::int64_t>(kind), g->second, forced_hash_, static_cast<std::int64_t>(routing.bits())}, {bytes}};
      if (const auto it = cache_.prices.find(pk); it != cache_.prices.end()) {
        d = it->second;
      } else {
        d = choose_algorithm(kind, bytes, with_dispatch(cache_.geometries[static_cast<std::size_t>(g->second)], kind, routing),
                             s_.simulation.nccl_algorithm)
                .duration;
        cache_.prices.emplace(pk, d);
      }
    }
    cache_.collectives.emplace(key, d);
    return d;
  }

  // The analytical network's duration of a collective of `bytes` on the group of `kind` holding `rank`
  // (0 for a group of one rank, which the builder leaves out).
  Time collective(CollectiveKind kind, double bytes, GroupKind gk, int rank, const TokenRouting& routing = {}) {
    const CollectiveKey key = collective_key(kind, bytes, static_cast<int>(gk), rank, -1, routing);
    if (const auto it = cache_.collectives.find(key); it != cache_.collectives.end()) return it->second;
    return priced(key, layout_.group(gk, rank), kind, bytes, routing);
  }
  Time p2p(int from_stage, int to_stage, double bytes) {
    const int a = stages_[static_cast<std::size_t>(from_stage)].rank, b = stages_[static_cast<std::size_t>(to_stage)].rank;
    const CollectiveKey key = collective_key(CollectiveKind::send_recv, bytes, -1, std::min(a, b), std::max(a, b));
    return priced(key, {std::min(a, b), std::max(a, b)}, CollectiveKind::send_recv, bytes);
  }
  // std::llround of x >= 0 (halves away from zero), without the library call: x - trunc(x) is exact.
  static Time round_nonnegative(double x) {
    const auto i = static_cast<Time>(x);
    return i + (x - static_cast<double>(i) >= 0.5 ? 1 : 0);
  }
  // A kernel of length d overlapped by data-moving communication for o: at 1/(1 + c) speed while
  // overlapped (the executor's contention).
  Time slowed(Time d, Time o) const {
    if (o <= 0 || contention_ <= 0 || d <= 0) return d;
    const double c = contention_;
    const double od = static_cast<double>(o), dd = static_cast<double>(d);
    // Overlapped for at most its length (every pass's call): o / (1 + c) < o <= d whenever 1 + c > 1
    // (also in doubles: 1 + c is then at least 1 + 2^-52, and o / (1 + c) rounds below o), so the first
    // case cannot hold and its division is skipped.
    if (!(o <= d && 1 + c > 1) && od / (1 + c) >= dd) return round_nonnegative(dd * (1 + c));
    return d + round_nonnegative(od * c / (1 + c));
  }

  bool overlappable_tp(const Op& op, CollectiveKind kind) const {
    return t_.tp_comm_overlap && t_.sequence_parallel && t_.tp > 1 && op.kind == OpKind::collective &&
           op.group == models::ProcessGroup::tp && op.collective == kind;
  }

  // One unit's op list from time 0 on a free TP stream (the builder's run_ops).
  Time run_ops(const std::vector<Op>& ops, int rank) {
    Time t = 0, comm_free = 0, overlapped_end = -1;
    double ring_bytes = 0;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      const Op* next = i + 1 < ops.size() ? &ops[i + 1] : nullptr;
      if (overlappable_tp(op, CollectiveKind::all_gather) && next && next->kind == OpKind::gemm) {
        const double chunk = op.comm_bytes / t_.tp;
        const Time f0 = std::max(t, comm_free), f1 = f0 + collective(op.collective, chunk, GroupKind::tp, rank);
        const Time r1 = f1 + collective(op.collective, op.comm_bytes - chunk, GroupKind::tp, rank);
        comm_free = r1;
        t = f1;
        overlapped_end = r1;
        continue;
      }
      if (op.kind == OpKind::gemm && next && overlappable_tp(*next, CollectiveKind::reduce_scatter)) {
        const double chunk = next->comm_bytes / t_.tp;
        const Time r0 = std::max(t, comm_free), r1 = r0 + collective(next->collective, next->comm_bytes - chunk, GroupKind::tp, rank);
        Time overlap = r1 - std::max(r0, t);
        if (overlapped_end > t) overlap = std::max(overlap, overlapped_end - t);
        const Time g_end = t + slowed(op_time(op), overlap);
        const Time l0 = std::max(g_end, r1), l1 = l0 + collective(next->collective, chunk, GroupKind::tp, rank);
        comm_free = l1;
        t = l1;
        if (overlapped_end >= 0) t = std::max(t, overlapped_end), overlapped_end = -1;
        ++i;
        continue;
      }
      if (op.kind == OpKind::collective) {
        if (layout_.size(op.group) < 2) continue;
        if (op.group == models::ProcessGroup::cp) {
          ring_bytes = models::ring_hop_bytes(op, t_.cp);
          continue;
        }
        const Time c0 = std::max(t, comm_free);
        t = comm_free = c0 + collective(op.collective, op.comm_bytes, group_kind(op.group), rank, op.routing);
        continue;
      }
      if ((op.kind == OpKind::attention_fwd || op.kind == OpKind::attention_bwd) && ring_bytes > 0) {
        const Time sd = op_time(models::ring_attention_round(op, t_.cp)), xd = collective(CollectiveKind::send_recv, ring_bytes, GroupKind::cp, rank);
        for (int k = 0; k < t_.cp; ++k) {
          if (k + 1 < t_.cp) {
            const Time x0 = std::max(t, comm_free), x1 = x0 + xd;
            comm_free = x1;
            t = std::max(t + slowed(sd, x1 - std::max(x0, t)), x1);
          } else {
            t += sd;
          }
        }
        ring_bytes = 0;
        continue;
      }
      const Time d = op_time(op);
      if (overlapped_end >= 0 && op.kind == OpKind::gemm) {
        t += slowed(d, std::min(overlapped_end - t, d));
        t = std::max(t, overlapped_end);
        overlapped_end = -1;
      } else {
        t += d;
      }
    }
    if (overlapped_end >= 0) t = std::max(t, overlapped_end);
    return t;
  }

  Time ops_time(const models::LayerOps* ops, bool backward, int rank) {
    const auto key = std::make_tuple(ops, backward, rank);
    if (const auto it = ops_times_.find(key); it != ops_times_.end()) return it->second;
    const Time d = run_ops(backward ? ops->backward : ops->forward, rank);
    ops_times_.emplace(key, d);
    return d;
  }

  // stage_units of `stage`. In a model whose layers are all alike (one models::layer_variants) a middle
  // stage's units and parameters are those of any middle stage with as
  // many layers in each chunk (step_units.cpp and models::parameters_on_rank read nothing else of it):
  // the last one's are reused rather than recounted, a pipeline of p stages counting three kinds.
  StageUnits units_of(int stage) {
    const int p = t_.pp, v = t_.vp;
    const bool middle = stage > 0 && stage < p - 1 && alike_layers_;
    auto layers = [&](int s) {
      return std::span<const std::int64_t>(split_).subspan(static_cast<std::size_t>(s) * static_cast<std::size_t>(v), static_cast<std::size_t>(v));
    };
    if (middle && middle_stage_ > 0 && std::ranges::equal(layers(stage), layers(middle_stage_))) return middle_units_;
    StageUnits su = stage_units(s_.model, t_, stage, split_);
    if (middle) middle_stage_ = stage, middle_units_ = su;
    return su;
  }

  // The units of each chunk with the parameters they hold (step_units.hpp, as the builder's build_rank).
  void prepare_stage(int stage) {
    Stage& st = stages_[static_cast<std::size_t>(stage)];
    st.rank = layout_.rank({0, 0, 0, stage});
    const int v = t_.vp;
    StageUnits su = units_of(stage);
    st.chunks.assign(static_cast<std::size_t>(v), {});
    st.fwd.assign(static_cast<std::size_t>(v), 0);
    st.bwd.assign(static_cast<std::size_t>(v), 0);
    st.acc.assign(static_cast<std::size_t>(v), 0);
    const GroupKind dg = dps_.dense_group;
    const double gb = dps_.grad_bytes;
    for (int c = 0; c < v; ++c) {
      auto& units = st.chunks[static_cast<std::size_t>(c)];
      for (const UnitParams& up : su.chunks[static_cast<std::size_t>(c)]) {
        units.push_back({&ops_.of(up), up.dense, up.expert});
        units.back().layer = up.layer;
        units.back().kind = up.kind;
        units.back().recomputed = reruns_forward(up);
      }
      for (std::size_t i = 0; i < units.size(); ++i) {
        Unit& u = units[i];
        if (i > 0 && u.ops == units[i - 1].ops && u.dense == units[i - 1].dense && u.expert == units[i - 1].expert) {
          const std::int64_t layer = u.layer;
          u = units[i - 1];  // a layer like the one before: the same durations (the lookups below, skipped)
          u.layer = layer;
          st.fwd[static_cast<std::size_t>(c)] += u.fwd;
          st.bwd[static_cast<std::size_t>(c)] += u.bwd;
          st.acc[static_cast<std::size_t>(c)] += u.acc;
          continue;
        }
        u.fwd = ops_time(u.ops, false, st.rank);
        u.acc = t_.grad_accumulation == models::GradAccumulation::fused ? 0 : op_time(models::grad_accumulation_op(u.dense + u.expert, t_));
        u.bwd = ops_time(u.ops, true, st.rank) + u.acc;
        st.fwd[static_cast<std::size_t>(c)] += u.fwd;
        st.bwd[static_cast<std::size_t>(c)] += u.bwd;
        st.acc[static_cast<std::size_t>(c)] += u.acc;
        if (t_.zero_stage < 3) continue;
        if (t_.zero3_collectives == models::Zero3Collectives::per_tensor_synchronous) {
          // The builder's chain (step_builder.cpp gather_tensors / reduce_tensors): per tensor a gather and
          // its list copies, serial; per tensor the copies in and a reduce-scatter. The copies, on the
          // builder's compute stream, are priced on the data-parallel stream here: both are serial there.
          const double shards = dps_.dense_shards;
          u.gather_dense = u.rs_dense = 0;
          for (double n : unit_parameter_tensors(s_.model, t_.tp, u.kind, u.dense)) {
            if (shards < 2) break;
            u.gather_dense += collective(CollectiveKind::all_gather, n * kParamBytes, dg, st.rank) +
                              op_time(models::tensor_list_copies_op(n * kParamBytes / shards, static_cast<int>(shards)));
            u.rs_dense += op_time(models::tensor_list_copies_op(n * gb / shards, static_cast<int>(shards))) +
                          collective(CollectiveKind::reduce_scatter, n * gb, dg, st.rank);
          }
          u.regather = u.recomputed ? u.gather_dense : 0;
          continue;
        }
        u.gather_dense = collective(CollectiveKind::all_gather, u.dense * kParamBytes, dg, st.rank);
        u.gather_expert = collective(CollectiveKind::all_gather, u.expert * kParamBytes, GroupKind::expert_dp, st.rank);
        u.rs_dense = collective(CollectiveKind::reduce_scatter, u.dense * gb, dg, st.rank);
        if (dps_.hybrid) u.ar_replica = collective(CollectiveKind::all_reduce, u.dense / dps_.dense_shards * gb, GroupKind::replica, st.rank);
        u.rs_expert = collective(CollectiveKind::reduce_scatter, u.expert * gb, GroupKind::expert_dp, st.rank);
      }
    }
    su.chunks.clear();
    stage_units_.resize(static_cast<std::size_t>(t_.pp));
    stage_units_[static_cast<std::size_t>(stage)] = std::move(su);
  }

  // A data-parallel collective issued at `ready` on the stage's serial data-parallel stream.
  Time dp_collective(Stage& st, CollectiveKind kind, double bytes, GroupKind gk, Time ready) {
    return dp_push(st, collective(kind, bytes, gk, st.rank), ready);
  }
  static Time dp_push(Stage& st, Time d, Time ready) {
    if (d <= 0) return -1;
    st.td = std::max(ready, st.td) + d;
    return st.td;
  }

  // A ZeRO 0-2 gradient bucket of `params` on `gk`, issued at `ready`.
  void reduce_bucket(Stage& st, GroupKind gk, double params, Time ready) {
    const Time end = dp_collective(st, dps_.bucket_kind, params * dps_.grad_bytes, gk, ready);
    if (end >= 0) st.reductions = std::max(st.reductions, end);
  }

  // A pass of chunk `c` starting at `start`; returns its end.
  // `accumulates`: the backward runs its gradient accumulation kernels (models::grad_accumulation_applies).
  Time run_pass(Stage& st, int c, bool backward, bool reducing, Time start, bool accumulates) {
    const int zero = t_.zero_stage;
    const auto& units = st.chunks[static_cast<std::size_t>(c)];
    if (zero < 3 && !(backward && reducing) && offload_copy_.empty()) {
      const Time d = backward ? st.bwd[static_cast<std::size_t>(c)] - (accumulates ? 0 : st.acc[static_cast<std::size_t>(c)])
                              : st.fwd[static_cast<std::size_t>(c)];
      return start + slowed(d, std::min(st.td - start, d));
    }
    const int n = static_cast<int>(units.size());
    auto at = [&](int i) -> const Unit& { return units[static_cast<std::size_t>(backward ? n - 1 - i : i)]; };
    Time t = start;
    if (zero >= 3) {
      Time next_ready = -2;  // the prefetched gather of the next unit (-2: not issued)
      for (int i = 0; i < n; ++i) {
        const Unit& u = at(i);
        auto gather = [&](const Unit& g) {
          return std::max({dp_push(st, g.gather_dense, t), dp_push(st, g.gather_expert, t), backward ? dp_push(st, g.regather, t) : Time{-1}});
        };
        const Time ready = next_ready != -2 ? next_ready : gather(u);
        next_ready = t_.overlap_param_gather && i + 1 < n ? gather(at(i + 1)) : -2;
        const Time s0 = offload_before(st, u, backward, std::max(t, ready));
        const Time d = backward ? u.bwd : u.fwd;
        t = s0 + slowed(d, std::min(st.td - s0, d));
        if (!backward) {
          offload_after(st, u, t);
          continue;
        }
        const Time e = std::max({dp_push(st, u.rs_dense, t), dp_push(st, u.ar_replica, t), dp_push(st, u.rs_expert, t)});
        st.reductions = std::max(st.reductions, e);
      }
      return t;
    }
    // ZeRO 0-2, a reducing backward: buckets close as the gradients appear (the builder's add_grads); with
    // CPU activation offload every pass unit by unit.
    const double limit = dps_.bucket_limit;
    double dense = 0, expert = 0;
    auto close = [&](GroupKind gk, double& bucket) {
      if (bucket <= 0) return;
      if (t_.overlap_grad_reduce) reduce_bucket(st, gk, bucket, t);
      else st.deferred.emplace_back(gk, bucket);
      bucket = 0;
    };
    for (int i = 0; i < n; ++i) {
      const Unit& u = at(i);
      t = offload_before(st, u, backward, t);
      const Time d = backward ? u.bwd - (accumulates ? 0 : u.acc) : u.fwd;
      t += slowed(d, std::min(st.td - t, d));
      if (!backward) offload_after(st, u, t);
      if (!backward || !reducing) continue;
      dense += u.dense;
      expert += u.expert;
      if (dense >= limit) close(dps_.dense_group, dense);
      if (expert >= limit) close(GroupKind::expert_dp, expert);
    }
    close(dps_.dense_group, dense);
    close(GroupKind::expert_dp, expert);
    return t;
  }

  // CPU activation offload (offload_copy_s; the builder's offload_before / offload_after, the same waits):
  // before unit `u` starts at `t`, what it waits for -- in the forward layer i's copy out, for layer
  // L - N + i; in the backward the copy back of layer i issued as layer L - 1 - N + i starts, and layer i's
  // own -- and when it may start.
  Time offload_before(Stage& st, const Unit& u, bool backward, Time t) {
    if (offload_copy_.empty() || u.layer < 0) return t;
    const auto n = static_cast<std::int64_t>(offload_copy_.size()), L = s_.model.num_layers;
    if (!backward) return u.layer >= L - n ? std::max(t, offloaded_[static_cast<std::size_t>(u.layer - (L - n))]) : t;
    if (const std::int64_t i = u.layer - (L - 1 - n); i >= 0 && i < n) {
      st.offload = std::max(t, st.offload) + offload_copy_[static_cast<std::size_t>(i)];
      reloaded_[static_cast<std::size_t>(i)] = st.offload;
    }
    return u.layer < n ? std::max(t, reloaded_[static_cast<std::size_t>(u.layer)]) : t;
  }
  // After unit `u`'s forward ends at `t`: an offloaded layer's copy out.
  void offload_after(Stage& st, const Unit& u, Time t) {
    if (u.layer < 0 || u.layer >= static_cast<std::int64_t>(offload_copy_.size())) return;
    st.offload = std::max(t, st.offload) + offload_copy_[static_cast<std::size_t>(u.layer)];
    offloaded_[static_cast<std::size_t>(u.layer)] = st.offload;
  }

  // Runs `a` on stage `st` when what it waits for is done; false when not yet.
  bool run_action(Stage& st, const Action& a) {
    Time ready = st.tc;
    if (a.waits) {
      const Time arrival = (a.forward ? fwd_arrival_ : bwd_arrival_)[a.slot];
      if (arrival < 0) return false;
      --st.pending;
      ready = std::max(ready, arrival) + (a.forward ? st.gather_fwd : st.gather_bwd);
    }
    const bool reducing = !a.forward && (t_.zero_stage == 2 || a.last_micro_batch);
    const bool accumulates = models::grad_accumulation_applies(t_, a.first_micro_batch ? 0 : 1);
    const Time end = run_pass(st, a.chunk, !a.forward, reducing, ready, accumulates);
    st.tc = end;
    if (a.to != Action::kNone) {
      Time& stream = a.forward ? st.send_fwd : st.send_bwd;
      const Time x1 = std::max(end, stream) + (a.forward ? st.p2p_next : st.p2p_prev);
      stream = x1;
      st.sends_end = std::max(st.sends_end, x1);
      (a.forward ? fwd_arrival_ : bwd_arrival_)[a.to] = x1;
      ++stages_[a.to_stage].pending;
      // pipeline_p2p_blocking: the next pass waits for the send (the receiver's rendezvous is not modelled here).
      if (t_.pipeline_p2p_blocking) st.tc = std::max(st.tc, x1);
    }
    if (!a.forward && !st.deferred.empty() && (t_.zero_stage == 2 || a.final_action)) {
      for (const auto& [gk, params] : st.deferred) reduce_bucket(st, gk, params, end);
      st.deferred.clear();
    }
    return true;
  }

  // The optimizer after the last gradient reduction (the end of the builder's build_rank).
  Time finish_stage(int s) {
    Stage& st = stages_[static_cast<std::size_t>(s)];
    const int zero = t_.zero_stage;
    const StageUnits& su = stage_units_[static_cast<std::size_t>(s)];
    const double shard = dps_.optimizer_shard(su, zero);
    Time t = std::max(st.tc, st.reductions);
    t += op_time(models::grad_norm_op(shard));
    const Time ar = dp_collective(st, CollectiveKind::all_reduce, models::grad_norm_all_reduce_op().comm_bytes, GroupKind::dp_cp, t);
    if (ar >= 0) t = ar;
    t += op_time(models::optimizer_op(shard));
    if (zero == 1 || zero == 2) {
      const Time g1 = dp_collective(st, CollectiveKind::all_gather, DataParallelSharding::gathered_dense(su) * kParamBytes,
                                    dps_.dense_group, t);
      Time g2 = -1;
      if (su.separate_experts) g2 = dp_collective(st, CollectiveKind::all_gather, su.rank.expert * kParamBytes, GroupKind::expert_dp, t);
      t = std::max({t, g1, g2});
    }
    return std::max({t, st.td, st.sends_end});
  }

  const Scenario& s_;
  const models::TrainingConfig& t_;
  ScreeningCache::Impl& cache_;
  const topo::Cluster& cluster_;
  const models::ComputeProfile& profile_;
  Layout layout_;
  DataParallelSharding dps_;
  std::int64_t forced_hash_;  // simulation.nccl_algorithm, in the price key
  double contention_;
  UnitOps ops_;  // every unit kind's op list (step_units.hpp, as the builder's)
  std::vector<Stage> stages_;
  std::vector<std::int64_t> split_;  // pipeline_split: layers by stage * v + chunk
  std::vector<StageUnits> stage_units_;
  bool alike_layers_ = false;  // every layer of the model one variant (models::layer_variants)
  std::vector<Time> offload_copy_;           // offload_copy_s of each offloaded layer, one way
  std::vector<Time> offloaded_, reloaded_;   // the current micro-batch's copies out and back: their ends
  int middle_stage_ = 0;           // units_of's last middle stage (0: none yet) and its units
  StageUnits middle_units_;  // parameters and experts of each stage (its chunks moved into Stage)
  std::vector<Time> fwd_arrival_, bwd_arrival_;
  // run_pipeline's recurrence: each stage's compiled order, next pass and limit, the worklist, and the
  // last two cuts.
  std::vector<const CompiledOrder*> order_;
  std::vector<std::size_t> next_, limit_;
  std::vector<int> work_;
  std::vector<char> queued_;
  std::array<Cut, 2> cuts_;
  std::map<std::tuple<const models::LayerOps*, bool, int>, Time> ops_times_;
};

}  // namespace

std::optional<double> screening_step_time_s(const Scenario& s, ScreeningCache& cache) {
  // Several jobs share the fabric; unequal GPUs (stragglers, speed variation, node groups) need every rank:
  // both go to the simulation unestimated.
  if (s.multi_job() || s.heterogeneity.any()) return std::nullopt;
  return to_seconds(Screen(s, cache.impl()).step());
}

}  // namespace cs::sim
