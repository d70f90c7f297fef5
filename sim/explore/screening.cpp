#include "sim/explore/screening.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <map>
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
using OpKey = Key<15, 2>;          // everything models::op_time_s reads of an op (the builder's DurationKey)
using CollectiveKey = Key<11, 1>;  // kind, group kind, layout, rank (or a pipeline pair); bytes

}  // namespace

struct ScreeningCache::Impl {
  explicit Impl(const topo::ClusterSpec& spec) : cluster(spec) {}
  topo::Cluster cluster;
  std::unordered_map<OpKey, Time, KeyHash> ops;
  std::unordered_map<CollectiveKey, Time, KeyHash> collectives;
  std::map<std::tuple<int, int, int, int, int>, std::vector<PipelineAction>> orders;  // (schedule, p, m, stage, v)
};

ScreeningCache::ScreeningCache(const topo::ClusterSpec& spec) : impl_(std::make_unique<Impl>(spec)) {}
ScreeningCache::~ScreeningCache() = default;
const topo::Cluster& ScreeningCache::cluster() const { return impl_->cluster; }

namespace {

// The step builder's units, wire sizes and buckets are step_units.hpp's (shared with the builder).

struct Unit {
  const models::LayerOps* ops;
  double dense, expert;
  // The unit's data-parallel collectives (0: none): ZeRO-3 gathers (dense, expert), reduce-scatters and
  // the HYBRID_SHARD all-reduce across replicas.
  Time gather_dense = 0, gather_expert = 0, rs_dense = 0, ar_replica = 0, rs_expert = 0;
  Time fwd = 0, bwd = 0;
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
        contention_(s.contention()),
        layer_(models::transformer_layer_ops(s.model, t_)),
        mixed_(has_dense_layers(s.model)),
        embedding_(models::embedding_ops(s.model, t_)),
        head_(models::lm_head_ops(s.model, t_)) {
    if (s.model.window_size > 0) window_layer_ = models::transformer_layer_ops(s.model, t_, true);
    if (mixed_) {
      dense_layer_ = models::transformer_layer_ops(s.model, t_, false, false);
      if (s.model.window_size > 0) dense_window_layer_ = models::transformer_layer_ops(s.model, t_, true, false);
    }
  }

  Time step() {
    const int p = t_.pp, v = t_.vp;
    const int m = static_cast<int>(t_.num_micro_batches());
    stages_.resize(static_cast<std::size_t>(p));
    // The pipeline split in model order: chunk c of stage s follows chunk c of stage s - 1 (and chunk
    // c - 1 of the last stage), as models::first_layer_of_chunk counts.
    chunk_layers_.assign(static_cast<std::size_t>(p * v), 0);
    first_layer_.assign(static_cast<std::size_t>(p * v), 0);
    std::int64_t layer = 0;
    for (int c = 0; c < v; ++c)
      for (int s = 0; s < p; ++s) {
        const auto k = static_cast<std::size_t>(s * v + c);
        first_layer_[k] = layer;
        chunk_layers_[k] = models::layers_in_chunk(s_.model, t_, s, c);
        layer += chunk_layers_[k];
      }
    for (int s = 0; s < p; ++s) prepare_stage(s);
    // The pipeline tensor to the neighbouring virtual stage (the builder's emit_p2p), priced once per pair.
    const double bytes = static_cast<double>(t_.micro_batch_size) * static_cast<double>(t_.seq_length / t_.cp) *
                         static_cast<double>(s_.model.hidden_size) * 2.0 / (t_.sequence_parallel ? t_.tp : 1);
    for (int s = 0; s < p && p > 1; ++s) {
      Stage& st = stages_[static_cast<std::size_t>(s)];
      st.p2p_next = p2p(s, s == p - 1 ? 0 : s + 1, bytes);
      st.p2p_prev = p2p(s, s == 0 ? p - 1 : s - 1, bytes);
    }
    const std::size_t slots = static_cast<std::size_t>(p) * static_cast<std::size_t>(v) * static_cast<std::size_t>(m);
    fwd_arrival_.assign(slots, -1);
    bwd_arrival_.assign(slots, -1);
    std::vector<const std::vector<PipelineAction>*> order(static_cast<std::size_t>(p));
    for (int s = 0; s < p; ++s) {
      auto& slot = cache_.orders[{static_cast<int>(t_.pipeline_schedule), p, m, s, v}];
      if (slot.empty()) slot = pipeline_order(t_.pipeline_schedule, p, m, s, v);
      order[static_cast<std::size_t>(s)] = &slot;
    }
    std::vector<std::size_t> next(static_cast<std::size_t>(p), 0);
    // The schedule's recurrence: advance every stage while its next pass has what it waits for.
    for (bool progress = true; progress;) {
      progress = false;
      for (int s = 0; s < p; ++s) {
        auto& k = next[static_cast<std::size_t>(s)];
        const auto& ord = *order[static_cast<std::size_t>(s)];
        while (k < ord.size() && run_action(s, ord[k], k + 1 == ord.size(), m)) ++k, progress = true;
      }
    }
    for (int s = 0; s < p; ++s) CS_CHECK(next[static_cast<std::size_t>(s)] == order[static_cast<std::size_t>(s)]->size());
    Time end = 0;
    for (int s = 0; s < p; ++s) end = std::max(end, finish_stage(s));
    return end;
  }

 private:
  struct Stage {
    int rank = 0;  // the simulated rank of the stage: TP, CP, DP index 0, as the builder's symmetry picks
    std::vector<std::vector<Unit>> chunks;
    std::vector<Time> fwd, bwd;  // a chunk's whole pass without data-parallel traffic
    Time tc = 0;                 // compute stream free
    Time td = 0;                 // data-parallel stream free
    Time reductions = 0;         // the last gradient reduction ends
    Time send_fwd = 0, send_bwd = 0;  // pipeline send streams free
    Time sends_end = 0;
    Time p2p_next = 0, p2p_prev = 0;  // a send to the next / previous virtual stage
    std::vector<std::pair<GroupKind, double>> deferred;
  };

  const models::LayerOps* unit_ops(UnitKind k) const {
    switch (k) {
      case UnitKind::embedding: return &embedding_;
      case UnitKind::layer: return &layer_;
      case UnitKind::window_layer: return &window_layer_;
      case UnitKind::dense_layer: return &dense_layer_;
      case UnitKind::dense_window_layer: return &dense_window_layer_;
      case UnitKind::head: return &head_;
    }
    return &layer_;
  }

  // The builder's rounding of models::op_time_s (memoized across the layouts of a search).
  Time op_time(const Op& op) {
    const auto& a = op.attention;
    const OpKey key{{static_cast<std::int64_t>(op.kind), static_cast<std::int64_t>(op.dtype), static_cast<std::int64_t>(op.mem_kind),
                     op.gemm.m, op.gemm.n, op.gemm.k, a.batch, a.heads_q, a.heads_kv, a.seq_q, a.seq_kv, a.head_dim,
                     static_cast<std::int64_t>(a.causal), static_cast<std::int64_t>(a.kernel), op.repeat},
                    {op.flops, op.bytes}};
    if (const auto it = cache_.ops.find(key); it != cache_.ops.end()) return it->second;
    const Time t = from_seconds(models::op_time_s(op, s_.gpu, profile_));
    cache_.ops.emplace(key, t);
    return t;
  }

  CollectiveKey collective_key(CollectiveKind kind, double bytes, int gk, int a, int b) const {
    return {{static_cast<std::int64_t>(kind), gk, t_.tp, t_.cp, t_.dp, t_.pp, t_.ep, layout_.etp(), layout_.shard_size(), a, b},
            {bytes}};
  }
  Time priced(const CollectiveKey& key, const std::vector<int>& members, CollectiveKind kind, double bytes) {
    if (const auto it = cache_.collectives.find(key); it != cache_.collectives.end()) return it->second;
    Time d = 0;
    if (members.size() >= 2 && bytes > 0)
      d = choose_algorithm(kind, bytes, group_geometry(cluster_, members), s_.simulation.nccl_algorithm).duration;
    cache_.collectives.emplace(key, d);
    return d;
  }

  // The analytical network's duration of a collective of `bytes` on the group of `kind` holding `rank`
  // (0 for a group of one rank, which the builder leaves out).
  Time collective(CollectiveKind kind, double bytes, GroupKind gk, int rank) {
    const CollectiveKey key = collective_key(kind, bytes, static_cast<int>(gk), rank, -1);
    if (const auto it = cache_.collectives.find(key); it != cache_.collectives.end()) return it->second;
    return priced(key, layout_.group(gk, rank), kind, bytes);
  }
  Time p2p(int from_stage, int to_stage, double bytes) {
    const int a = stages_[static_cast<std::size_t>(from_stage)].rank, b = stages_[static_cast<std::size_t>(to_stage)].rank;
    const CollectiveKey key = collective_key(CollectiveKind::send_recv, bytes, -1, std::min(a, b), std::max(a, b));
    return priced(key, {std::min(a, b), std::max(a, b)}, CollectiveKind::send_recv, bytes);
  }
  // A kernel of length d overlapped by data-moving communication for o: at 1/(1 + c) speed while
  // overlapped (the executor's contention).
  Time slowed(Time d, Time o) const {
    if (o <= 0 || contention_ <= 0 || d <= 0) return d;
    const double c = contention_;
    const double od = static_cast<double>(o), dd = static_cast<double>(d);
    if (od / (1 + c) >= dd) return static_cast<Time>(std::llround(dd * (1 + c)));
    return d + static_cast<Time>(std::llround(od * c / (1 + c)));
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
          ring_bytes = op.comm_bytes / (t_.cp - 1);
          continue;
        }
        const Time c0 = std::max(t, comm_free);
        t = comm_free = c0 + collective(op.collective, op.comm_bytes, group_kind(op.group), rank);
        continue;
      }
      if ((op.kind == OpKind::attention_fwd || op.kind == OpKind::attention_bwd) && ring_bytes > 0) {
        Op step = op;
        step.flops = op.flops / t_.cp;
        step.bytes = op.bytes / t_.cp;
        step.attention.seq_kv = op.attention.seq_kv / t_.cp;
        const Time sd = op_time(step), xd = collective(CollectiveKind::send_recv, ring_bytes, GroupKind::cp, rank);
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

  // The units of each chunk with the parameters they hold (step_units.hpp, as the builder's build_rank).
  void prepare_stage(int stage) {
    Stage& st = stages_[static_cast<std::size_t>(stage)];
    st.rank = layout_.rank({0, 0, 0, stage});
    const int v = t_.vp;
    StageUnits su = stage_units(s_.model, t_, stage);
    st.chunks.assign(static_cast<std::size_t>(v), {});
    st.fwd.assign(static_cast<std::size_t>(v), 0);
    st.bwd.assign(static_cast<std::size_t>(v), 0);
    const GroupKind dg = dps_.dense_group;
    const double gb = dps_.grad_bytes;
    for (int c = 0; c < v; ++c) {
      auto& units = st.chunks[static_cast<std::size_t>(c)];
      for (const UnitParams& up : su.chunks[static_cast<std::size_t>(c)]) units.push_back({unit_ops(up.kind), up.dense, up.expert});
      for (Unit& u : units) {
        u.fwd = ops_time(u.ops, false, st.rank);
        u.bwd = ops_time(u.ops, true, st.rank);
        st.fwd[static_cast<std::size_t>(c)] += u.fwd;
        st.bwd[static_cast<std::size_t>(c)] += u.bwd;
        if (t_.zero_stage < 3) continue;
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
  Time run_pass(Stage& st, int c, bool backward, bool reducing, Time start) {
    const int zero = t_.zero_stage;
    const auto& units = st.chunks[static_cast<std::size_t>(c)];
    if (zero < 3 && !(backward && reducing)) {
      const Time d = backward ? st.bwd[static_cast<std::size_t>(c)] : st.fwd[static_cast<std::size_t>(c)];
      return start + slowed(d, std::min(st.td - start, d));
    }
    const int n = static_cast<int>(units.size());
    auto at = [&](int i) -> const Unit& { return units[static_cast<std::size_t>(backward ? n - 1 - i : i)]; };
    Time t = start;
    if (zero >= 3) {
      Time next_ready = -2;  // the prefetched gather of the next unit (-2: not issued)
      for (int i = 0; i < n; ++i) {
        const Unit& u = at(i);
        auto gather = [&](const Unit& g) { return std::max(dp_push(st, g.gather_dense, t), dp_push(st, g.gather_expert, t)); };
        const Time ready = next_ready != -2 ? next_ready : gather(u);
        next_ready = t_.overlap_param_gather && i + 1 < n ? gather(at(i + 1)) : -2;
        const Time s0 = std::max(t, ready);
        const Time d = backward ? u.bwd : u.fwd;
        t = s0 + slowed(d, std::min(st.td - s0, d));
        if (!backward) continue;
        const Time e = std::max({dp_push(st, u.rs_dense, t), dp_push(st, u.ar_replica, t), dp_push(st, u.rs_expert, t)});
        st.reductions = std::max(st.reductions, e);
      }
      return t;
    }
    // ZeRO 0-2, a reducing backward: buckets close as the gradients appear (the builder's add_grads).
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
      const Time d = u.bwd;
      t += slowed(d, std::min(st.td - t, d));
      dense += u.dense;
      expert += u.expert;
      if (dense >= limit) close(dps_.dense_group, dense);
      if (expert >= limit) close(GroupKind::expert_dp, expert);
    }
    close(dps_.dense_group, dense);
    close(GroupKind::expert_dp, expert);
    return t;
  }

  // Runs `a` on stage `s` when what it waits for is done; false when not yet.
  bool run_action(int s, const PipelineAction& a, bool final_action, int m) {
    const int p = t_.pp, v = t_.vp;
    Stage& st = stages_[static_cast<std::size_t>(s)];
    const int mb = a.micro_batch, c = a.chunk;
    const bool first = s == 0, last = s == p - 1;
    const bool has_prev = !(first && c == 0), has_next = !(last && c == v - 1);
    const std::size_t slot = (static_cast<std::size_t>(s) * static_cast<std::size_t>(v) + static_cast<std::size_t>(c)) *
                                 static_cast<std::size_t>(m) + static_cast<std::size_t>(mb);
    Time ready = st.tc;
    if (a.forward && has_prev) {
      if (fwd_arrival_[slot] < 0) return false;
      ready = std::max(ready, fwd_arrival_[slot]);
    }
    if (!a.forward && has_next) {
      if (bwd_arrival_[slot] < 0) return false;
      ready = std::max(ready, bwd_arrival_[slot]);
    }
    const bool reducing = !a.forward && (t_.zero_stage == 2 || mb == m - 1);
    const Time end = run_pass(st, c, !a.forward, reducing, ready);
    st.tc = end;
    if (a.forward && has_next) {
      const int to = last ? 0 : s + 1, to_chunk = last ? c + 1 : c;
      const Time x1 = std::max(end, st.send_fwd) + st.p2p_next;
      st.send_fwd = x1;
      st.sends_end = std::max(st.sends_end, x1);
      fwd_arrival_[(static_cast<std::size_t>(to) * static_cast<std::size_t>(v) + static_cast<std::size_t>(to_chunk)) *
                       static_cast<std::size_t>(m) + static_cast<std::size_t>(mb)] = x1;
    }
    if (!a.forward && has_prev) {
      const int to = first ? p - 1 : s - 1, to_chunk = first ? c - 1 : c;
      const Time x1 = std::max(end, st.send_bwd) + st.p2p_prev;
      st.send_bwd = x1;
      st.sends_end = std::max(st.sends_end, x1);
      bwd_arrival_[(static_cast<std::size_t>(to) * static_cast<std::size_t>(v) + static_cast<std::size_t>(to_chunk)) *
                       static_cast<std::size_t>(m) + static_cast<std::size_t>(mb)] = x1;
    }
    if (!a.forward && !st.deferred.empty() && (t_.zero_stage == 2 || final_action)) {
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
  double contention_;
  models::LayerOps layer_, window_layer_;
  bool mixed_;
  models::LayerOps dense_layer_, dense_window_layer_, embedding_, head_;
  std::vector<Stage> stages_;
  std::vector<std::int64_t> chunk_layers_, first_layer_;  // by stage * v + chunk
  std::vector<StageUnits> stage_units_;  // parameters and experts of each stage (its chunks moved into Stage)
  std::vector<Time> fwd_arrival_, bwd_arrival_;
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
