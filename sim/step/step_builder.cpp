#include "sim/step/step_builder.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "models/memory/memory_model.hpp"
#include "models/workload/transformer.hpp"
#include "sim/base/check.hpp"
#include "sim/step/orbits.hpp"
#include "sim/step/step_budget.hpp"
#include "sim/step/step_units.hpp"
#include "models/parallelism/layout.hpp"
#include "models/parallelism/pipeline_schedule.hpp"

namespace cs::sim {

using models::CollectiveKind;
using models::Op;
using models::OpKind;
using models::OpRole;
using models::ProcessGroup;

namespace {

// A parameter element in ZeRO all-gathers takes kParamBytes (bf16 weights), a gradient element on the
// wire TrainingConfig::grad_reduce_dtype (the framework's: bf16 as the ZeRO paper counts, fp32 where
// Megatron reduces in fp32): step_units.hpp, shared with the search's screening tier.

Category category_of(ProcessGroup g) {
  switch (g) {
    case ProcessGroup::tp: return Category::tp_comm;
    case ProcessGroup::cp: return Category::cp_comm;
    case ProcessGroup::ep: return Category::ep_comm;
    case ProcessGroup::dp: return Category::dp_comm;
    case ProcessGroup::pp: return Category::pp_comm;
    case ProcessGroup::etp: return Category::ep_comm;
  }
  return Category::tp_comm;
}

// Everything an op's modelled duration depends on: the op's models::OpTimeKey and the node group whose GPU
// type runs it (0: cluster.gpu).
struct DurationKey {
  models::OpTimeKey op;
  std::int64_t gpu_group = 0;
  bool operator==(const DurationKey&) const = default;
};
struct DurationKeyHash {
  std::size_t operator()(const DurationKey& k) const {
    return models::OpTimeKeyHash{}(k.op) * 1099511628211ULL ^ static_cast<std::size_t>(k.gpu_group);
  }
};

// An FSDP unit (and, for every sharding, the granularity at which gradients become ready): the
// embedding, one transformer layer, or the LM head, with the parameters it holds on this rank.
struct Unit {
  const models::LayerOps* ops;
  double dense;   // parameters reduced / sharded over the dense data-parallel group
  double expert;  // over the expert-data-parallel group
  std::int64_t layer = -1;  // UnitParams::layer: a transformer layer's index in the model, -1 otherwise
  UnitKind kind = UnitKind::layer;
  bool recomputed = false;  // reruns_forward (step_units.hpp)
};

// A MoE layer's passes cut at the EP all-to-alls (with the expert-TP collectives beside them), as
// Megatron-Core's fine-grained schedule cuts a layer (TransformerLayerSchedulePlan in
// megatron/core/models/common/model_chunk_schedule_plan.py @ d98e8a6: pre_dispatch_computation,
// moe_dispatch, mlp, moe_combine). Forward: pre = attention, router and permute; comm1 = the dispatch;
// mid = the experts; comm2 = the combine; post = unpermute, shared experts, residual. Backward: pre = up to
// the combine's backward; comm1 = the combine's backward; mid = the experts' dgrads (and recompute), with
// their wgrads apart in mid_wgrad (delay_wgrad_compute: mlp.backward_dw runs off the layer's chain);
// comm2 = the dispatch's backward; post = the rest (router, norm, attention backward).
struct SplitPass {
  std::vector<Op> pre, comm1, mid, mid_wgrad, comm2, post;
};
struct SplitLayer {
  bool moe = false;  // both passes have their two all-to-all segments
  SplitPass fwd, bwd;
};

bool is_ep_collective(const Op& op) {
  return op.kind == OpKind::collective && (op.group == ProcessGroup::ep || op.group == ProcessGroup::etp);
}

// Cuts one pass; false when it has no dispatch and combine (a dense layer, or EP 1).
bool split_pass(const std::vector<Op>& ops, bool backward, SplitPass& out) {
  int state = 0;  // 0 pre, 1 comm1, 2 mid, 3 comm2, 4 post
  for (const Op& op : ops) {
    const bool comm = is_ep_collective(op);
    if (state == 0 && comm && op.group == ProcessGroup::ep) state = 1;
    else if ((state == 1 || state == 3) && !comm) ++state;
    else if (state == 2 && comm) state = 3;
    else if (state == 4 && comm) return false;
    std::vector<Op>* to[] = {&out.pre, &out.comm1, &out.mid, &out.comm2, &out.post};
    const bool wgrad = backward && state == 2 && op.kind == OpKind::gemm && op.name.ends_with("_wgrad");
    (wgrad ? out.mid_wgrad : *to[state]).push_back(op);
  }
  return state == 4;
}

SplitLayer split_layer(const models::LayerOps& ops) {
  SplitLayer s;
  s.moe = split_pass(ops.forward, false, s.fwd) && split_pass(ops.backward, true, s.bwd);
  return s;
}

class Builder {
 public:
  Builder(const Scenario& s, const models::ComputeProfile& profile, const std::vector<int>& gpus, bool template_mode = false)
      : s_(s),
        profile_(profile),
        gpus_(gpus),
        t_(s.training),
        layout_(t_.tp, t_.cp, t_.dp, t_.pp, t_.ep, t_.zero_stage >= 3 ? t_.fsdp_shard_size : 0, t_.expert_tp()),
        ops_(s.model, t_),
        orbits_(template_mode ? one_class_per_stage() : find_orbits(s, gpus)),
        template_mode_(template_mode) {
    CS_CHECK(gpus_.empty() || static_cast<int>(gpus_.size()) == layout_.world_size());
    CS_CHECK(!template_mode || gpus_.empty());
  }

  // The template of every rank (build_step_template): the mirrored plan of the step's structure, one rank
  // per stage, and what differs between a stage's ranks, their kernels' durations.
  StepTemplatePlan build_template() {
    StepTemplatePlan out;
    const Heterogeneity& h = s_.heterogeneity;
    types_ = {nullptr};
    for (const auto& g : h.groups) types_.push_back(&g.gpu);
    if (types_.size() > UINT8_MAX) {
      out.fallback = "more than 255 GPU types";
      return out;
    }
    if (t_.cpu_offloading_num_layers > 0) {  // the template runs one plain task at a time per rank
      out.fallback = "CPU activation offload (host copies beside the kernels)";
      return out;
    }
    template_base_.assign(types_.size(), {});
    out.plan = build();
    for (auto& b : template_base_) b.resize(out.plan.graph.tasks().size(), 0);
    StepTemplate& spec = out.spec;
    const int world = layout_.world_size();
    const bool slowed = !h.stragglers.empty() || h.cv > 0;
    spec.template_rank.resize(static_cast<std::size_t>(world));
    spec.rank_type.resize(static_cast<std::size_t>(world));
    spec.rank_slowdown.resize(static_cast<std::size_t>(world));
    for (int r = 0; r < world; ++r) {
      spec.template_rank[static_cast<std::size_t>(r)] = static_cast<std::uint32_t>(layout_.coord(r).pp);
      const auto type = std::find(types_.begin(), types_.end(), group_gpu_of(r));
      CS_CHECK(type != types_.end());
      spec.rank_type[static_cast<std::size_t>(r)] = static_cast<std::uint8_t>(type - types_.begin());
      spec.rank_slowdown[static_cast<std::size_t>(r)] = slowed ? h.slowdown(gpu_of(r), s_.cluster.gpus_per_node) : 1.0;
    }
    for (const int rep : out.plan.global_rank) spec.representative.push_back(static_cast<std::uint32_t>(rep));
    spec.base = std::move(template_base_);
    // The one-by-one builder weighs every rank alike on unequal GPUs (build()); so do the instances.
    if (h.any()) spec.rank_weights.assign(static_cast<std::size_t>(world), 1);
    return out;
  }

  StepPlan build() {
    StepPlan plan;
    // Which ranks to simulate: the representative of every class of equal ranks (orbits.hpp), in global
    // rank order (pp, then dp, cp, tp types by their smallest index), each standing for its class; or,
    // without symmetry (or where orbits fall back), every rank.
    if (orbits_.batched) {
      for (int stage = 0; stage < t_.pp; ++stage)
        for (int d = 0; d < orbits_.types(2); ++d)
          for (int c = 0; c < orbits_.types(1); ++c)
            for (int tp = 0; tp < orbits_.types(0); ++tp) {
              plan.global_rank.push_back(layout_.rank({orbits_.rep[0][static_cast<std::size_t>(tp)], orbits_.rep[1][static_cast<std::size_t>(c)],
                                                       orbits_.rep[2][static_cast<std::size_t>(d)], stage}));
              plan.mirrors.push_back(orbits_.count[0][static_cast<std::size_t>(tp)] * orbits_.count[1][static_cast<std::size_t>(c)] *
                                     orbits_.count[2][static_cast<std::size_t>(d)]);
            }
    } else {
      for (int r = 0; r < layout_.world_size(); ++r) plan.global_rank.push_back(r);
      plan.mirrors.assign(plan.global_rank.size(), 1);
    }
    plan.graph = TaskGraph(static_cast<int>(plan.global_rank.size()));
    g_ = &plan.graph;
    flops_ = &plan.flops;
    // Unequal GPUs: the network back-ends weigh each simulated rank by its class (the analytical one's
    // per-GPU bytes), in both the batched and the reference mode, so that the two add the same numbers.
    if (s_.heterogeneity.any())
      plan.graph.set_rank_weights(std::vector<std::uint32_t>(plan.mirrors.begin(), plan.mirrors.end()));
    // The budget's task estimate (within 10% on the shipped scenarios, step_budget.hpp), plus that margin.
    // (Not for a template: the estimate counts every rank, and the template holds one a stage.)
    if (!template_mode_) {
      const auto expected = static_cast<std::size_t>(estimate_step(s_).tasks * 1.1) + 16;
      plan.graph.reserve(expected);
      plan.flops.reserve(expected);
    }

    for (std::size_t i = 0; i < plan.global_rank.size(); ++i) build_rank(static_cast<std::uint32_t>(i), plan.global_rank[i]);
    plan.graph.freeze();
    if (orbits_.batched && s_.heterogeneity.any()) {
      for (const int rep : plan.global_rank) {
        std::vector<int> gpus = {gpu_of(rep)};
        for_class(rep, false, [&](int r) {
          if (r != rep) gpus.push_back(gpu_of(r));
        });
        plan.class_gpus.push_back(std::move(gpus));
      }
    }
    for (int& r : plan.global_rank) r = gpu_of(r);
    return plan;
  }

 private:
  Orbits one_class_per_stage() const {
    Orbits o;
    o.batched = true;
    const std::array<int, 3> sizes = {t_.tp, t_.cp, t_.dp};
    for (std::size_t a = 0; a < 3; ++a) {
      o.type_of[a].assign(static_cast<std::size_t>(sizes[a]), 0);
      o.rep[a] = {0};
      o.count[a] = {sizes[a]};
    }
    return o;
  }

  // Per-rank emission state.
  struct Emitter {
    std::uint32_t rank;
    int global;
    TaskId last_compute = kNone;
    std::vector<TaskId> wait_for;  // tasks the next compute kernel must wait for
    std::unordered_map<std::uint64_t, int> sequence;  // (category, channel, group id) -> next index
    double ring_step_bytes = 0;    // pending ring-attention KV exchange for the next attention op
    // The rank's GPU (sim/scenario/heterogeneity.hpp), fixed for the build: its node group's GPU type
    // (nullptr: cluster.gpu) and the factor its kernels are stretched by.
    const models::GpuSpec* group_gpu = nullptr;
    double slowdown = 1;
  };

  // The members of `global`'s class (orbits.hpp) at its stage, in rank order (dp, cp, tp); with
  // `whole_stage`, every rank of the stage.
  template <class F>
  void for_class(int global, bool whole_stage, F f) const {
    const RankCoord self = layout_.coord(global);
    auto same = [&](int axis, int a, int b) {
      const auto& type = orbits_.type_of[static_cast<std::size_t>(axis)];
      return whole_stage || type[static_cast<std::size_t>(a)] == type[static_cast<std::size_t>(b)];
    };
    for (int dp = 0; dp < t_.dp; ++dp)
      if (same(2, dp, self.dp))
        for (int cp = 0; cp < t_.cp; ++cp)
          if (same(1, cp, self.cp))
            for (int tp = 0; tp < t_.tp; ++tp)
              if (same(0, tp, self.tp)) f(layout_.rank({tp, cp, dp, self.pp}));
  }
  int gpu_of(int rank) const { return gpus_.empty() ? rank : gpus_[static_cast<std::size_t>(rank)]; }
  // A process group of ranks, as the task graph records it: their GPUs.
  std::uint32_t add_group(const std::vector<int>& ranks) {
    if (gpus_.empty()) return g_->add_group(ranks);
    std::vector<int> g;
    g.reserve(ranks.size());
    for (int r : ranks) g.push_back(gpu_of(r));
    return g_->add_group(g);
  }

  // The compute model is a pure function of the op's shape; a step repeats each shape for every layer and
  // micro-batch, so durations are memoized per build (the GEMM interpolation dominated a search's time).
  // On a heterogeneous cluster (sim/scenario/heterogeneity.hpp) the op runs at the speed of the rank's GPU:
  // its node group's GPU type, stretched by the GPU's slowdown.
  const models::GpuSpec* group_gpu_of(int rank) const {
    const Heterogeneity& h = s_.heterogeneity;
    return h.groups.empty() ? nullptr : h.node_gpu(gpu_of(rank) / s_.cluster.gpus_per_node);
  }
  // The op at its node group's GPU type, before any per-GPU slowdown.
  Time base_duration(const Op& op, const models::GpuSpec* group_gpu) {
    const Heterogeneity& h = s_.heterogeneity;
    const DurationKey key{models::op_time_key(op), group_gpu ? static_cast<std::int64_t>(group_gpu - &h.groups.front().gpu) + 1 : 0};
    const auto it = durations_.find(key);
    if (it != durations_.end()) return it->second;
    const Time t = from_seconds(models::op_time_s(op, group_gpu ? *group_gpu : s_.gpu, profile_));
    durations_.emplace(key, t);
    return t;
  }
  // `t` stretched by a rank's slowdown (stragglers, speed variation).
  static Time slowed(Time t, double slowdown) {
    return slowdown == 1 ? t : static_cast<Time>(std::llround(static_cast<double>(t) * slowdown));
  }

  // `op` lives in one of the builder's own op lists (stable for the build): its duration on a GPU type
  // and its name id are looked up by address, once per op and GPU type rather than once per task.
  struct OpFacts {
    Time base_duration;
    std::uint32_t name;
  };
  struct OpKeyHash {
    std::size_t operator()(const std::pair<const Op*, const models::GpuSpec*>& k) const {
      return std::hash<const void*>{}(k.first) * 31 + std::hash<const void*>{}(k.second);
    }
  };
  const OpFacts& stable_op(const Op& op, const models::GpuSpec* group_gpu) {
    const auto key = std::make_pair(&op, group_gpu);
    auto it = op_facts_.find(key);
    if (it == op_facts_.end())
      it = op_facts_.emplace(key, OpFacts{base_duration(op, group_gpu), g_->intern(op.name)}).first;
    return it->second;
  }

  TaskId emit_compute(Emitter& e, const Op& op, Category cat, int mb, bool stable = false) {
    Task t;
    t.rank = e.rank;
    t.stream = StreamKind::compute;
    t.category = cat;
    if (stable) {
      const OpFacts& f = stable_op(op, e.group_gpu);
      t.duration = slowed(f.base_duration, e.slowdown);
      t.name = static_cast<std::uint16_t>(f.name);
    } else {
      t.duration = slowed(base_duration(op, e.group_gpu), e.slowdown);
      t.name = static_cast<std::uint16_t>(g_->intern(op.name));
    }
    t.micro_batch = mb;
    const TaskId id = g_->add_task(t);
    flops_->resize(id + 1, 0.0);
    (*flops_)[id] = op.flops * op.repeat;
    // The template's durations of this kernel on every GPU type (the same lookups as above).
    for (std::size_t k = 0; template_mode_ && k < types_.size(); ++k) {
      template_base_[k].resize(id + 1, 0);
      template_base_[k][id] = stable ? stable_op(op, types_[k]).base_duration : base_duration(op, types_[k]);
    }
    for (TaskId w : e.wait_for) g_->add_dependency(w, id);
    e.wait_for.clear();
    e.last_compute = id;
    return id;
  }

  // The collective shared by every simulated member of `members` (global ranks, the real group of kind
  // `kind`; GroupKind::pp stands for a point-to-point pair), matched by its order on (category, group,
  // channel).
  TaskId emit_collective(Emitter& e, StreamKind stream, Category cat, CollectiveKind kind, double bytes, GroupKind gk,
                         const std::vector<int>& members, int channel, std::string_view name, int mb,
                         bool reversed = false, const TokenRouting& routing = {}) {
    const std::uint32_t group = group_id(members, e.global, gk);
    CS_CHECK(channel >= 0 && channel < 256);
    const std::uint64_t key = (static_cast<std::uint64_t>(cat) << 40) | (static_cast<std::uint64_t>(channel) << 32) | group;
    const int seq = e.sequence[key]++;
    auto& list = collectives_[key];
    if (static_cast<int>(list.size()) <= seq) {
      CS_CHECK(static_cast<int>(list.size()) == seq);
      Collective c;
      c.kind = kind;
      c.bytes = bytes;
      c.group = group;
      c.reversed = reversed;
      c.routing = routing;
      list.push_back(g_->add_collective(std::move(c)));
    }
    const std::uint32_t cid = list[static_cast<std::size_t>(seq)];
    CS_CHECK(g_->collectives()[cid].kind == kind && g_->collectives()[cid].bytes == bytes &&
             g_->collectives()[cid].reversed == reversed && g_->collectives()[cid].routing == routing);
    Task t;
    t.rank = e.rank;
    t.stream = stream;
    t.category = cat;
    t.collective = cid;
    t.name = static_cast<std::uint16_t>(g_->intern(name));
    t.micro_batch = mb;
    const TaskId id = g_->add_task(t);
    flops_->resize(id + 1, 0.0);
    g_->add_member(cid, id);
    return id;
  }

  // The task graph's id for a real group, with its mirrors under symmetry: the same group of every rank
  // the simulated one stands for (same pipeline stage, any TP / CP / DP index).
  // The members of rank `global`'s group of `kind`, memoized: every layer and micro-batch asks again.
  const std::vector<int>& group_of(GroupKind kind, int global) {
    const std::uint64_t key = (static_cast<std::uint64_t>(kind) << 32) | static_cast<std::uint32_t>(global);
    auto it = members_.find(key);
    if (it == members_.end()) it = members_.emplace(key, layout_.group(kind, global)).first;
    return it->second;  // unordered_map keeps references to elements valid across rehashing
  }

  std::uint32_t group_id(const std::vector<int>& members, int global, GroupKind kind) {
    // Memoized by what determines the group: its kind and the asking rank, or a pipeline pair's two ranks.
    const std::uint64_t key = kind == GroupKind::pp
                                  ? (static_cast<std::uint64_t>(kind) << 56) | (static_cast<std::uint64_t>(members.front()) << 28) |
                                        static_cast<std::uint64_t>(members.back())
                                  : (static_cast<std::uint64_t>(kind) << 56) | static_cast<std::uint32_t>(global);
    CS_CHECK(kind != GroupKind::pp || members.size() == 2);
    if (const auto it = group_ids_.find(key); it != group_ids_.end()) return it->second;
    const std::uint32_t id = group_id_uncached(members, global, kind);
    group_ids_.emplace(key, id);
    return id;
  }

  // Under symmetry a group's mirrors are the same group of every rank the simulated ones stand for. The
  // flow back-end puts their traffic on the fabric (TaskGraph::set_mirrors): the groups of the members of
  // the asking rank's class (every representative in the group asks for the same set: they differ only on
  // the axes the group runs over). The analytical back-end prices contention in closed form from the
  // groups on the fabric at once: every peer group of the stage, whichever class drives it, as the
  // reference run's translates do. A homogeneous cluster has one class per stage, where the two coincide.
  std::uint32_t group_id_uncached(const std::vector<int>& members, int global, GroupKind kind) {
    const std::uint32_t id = add_group(members);
    if (!orbits_.batched || !mirrored_.insert(id).second) return id;
    std::vector<std::uint32_t> mirrors;
    const bool whole_stage = s_.simulation.network != NetworkBackend::flow;
    // The groups of one kind other than pipeline pairs partition the stage's ranks, each listed in the same
    // order whichever member asks (Layout::group), so a rank already seen as a member adds nothing: each
    // group is built once instead of once per member (at 65,536 ranks a stage, DP 8,192: 5e8 members).
    const int stage_ranks = t_.tp * t_.cp * t_.dp;
    const int stage_base = layout_.coord(global).pp * stage_ranks;
    std::vector<char> covered(kind == GroupKind::pp ? 0 : static_cast<std::size_t>(stage_ranks), 0);
    std::vector<int> member_stages;  // a pipeline pair's two stages
    if (kind == GroupKind::pp)
      for (int m : members) member_stages.push_back(layout_.coord(m).pp);
    std::vector<int> gpus;  // scratch: a mirrored stage has 10^5 ranks
    for_class(global, whole_stage, [&](int r) {
      gpus.clear();
      if (kind == GroupKind::pp) {
        // The same pair of stages, shifted to this rank's TP / CP / DP index.
        RankCoord c = layout_.coord(r);
        for (int stage : member_stages) {
          c.pp = stage;
          gpus.push_back(layout_.rank(c));
        }
      } else {
        if (covered[static_cast<std::size_t>(r - stage_base)]) return;
        gpus = layout_.group(kind, r);
        for (int m : gpus) covered[static_cast<std::size_t>(m - stage_base)] = 1;
      }
      const std::uint32_t mid = add_group(gpus);
      if (mid >= mirror_seen_.size()) mirror_seen_.resize(std::max<std::size_t>(mid + 1, 2 * mirror_seen_.size()), 0);
      if (!mirror_seen_[mid]) {
        mirror_seen_[mid] = 1;
        mirrors.push_back(mid);
      }
    });
    for (const std::uint32_t m : mirrors) mirror_seen_[m] = 0;  // all clear again for the next group
    g_->set_mirrors(id, std::move(mirrors));
    return id;
  }

  // `t` consumes what the rank has produced so far: the last kernel and any collective still pending.
  void after_producers(const Emitter& e, TaskId t) {
    if (e.last_compute != kNone) g_->add_dependency(e.last_compute, t);
    for (TaskId w : e.wait_for) g_->add_dependency(w, t);
  }

  // What the workload builder says the kernel is for (Op::role): recompute time counts for HFU, not MFU.
  static Category compute_category(const Op& op) {
    switch (op.role) {
      case OpRole::recompute: return Category::recompute;
      case OpRole::optimizer: return Category::optimizer;
      case OpRole::forward:
      case OpRole::backward: break;
    }
    return op.kind == OpKind::optimizer ? Category::optimizer : Category::compute;
  }

  // Ring attention (cp > 1): the attention op in cp steps, step i's KV transfer overlapping step i's
  // compute and gating step i + 1 (see the header).
  void run_ring_attention(Emitter& e, const Op& op, int mb, bool backward) {
    const int cp = t_.cp;
    const Op step = models::ring_attention_round(op, cp);
    const Category cat = compute_category(op);
    const std::vector<int>& ring = group_of(GroupKind::cp, e.global);
    for (int i = 0; i < cp; ++i) {
      TaskId transfer = kNone;
      if (i + 1 < cp) {
        transfer = emit_collective(e, StreamKind::comm_tp, Category::cp_comm, CollectiveKind::send_recv, e.ring_step_bytes,
                                   GroupKind::cp, ring, 0, backward && op.kind == OpKind::attention_bwd ? "cp_kv_bwd" : "cp_kv", mb);
        after_producers(e, transfer);
      }
      emit_compute(e, step, cat, mb);
      if (transfer != kNone) e.wait_for.push_back(transfer);
    }
    e.ring_step_bytes = 0;
  }

  // tp_comm_overlap applies to this TP all-gather / reduce-scatter (step_builder.hpp).
  bool overlappable_tp(const Op& op, CollectiveKind kind) const {
    return t_.tp_comm_overlap && t_.sequence_parallel && t_.tp > 1 && op.kind == OpKind::collective &&
           op.group == ProcessGroup::tp && op.collective == kind;
  }

  // Runs an op list: kernels on the compute stream, collectives on the TP stream between them.
  void run_ops(Emitter& e, const std::vector<Op>& ops, int mb, bool backward) {
    TaskId overlapped = kNone;  // the overlapped part of a TP collective the op after the next GEMM waits for
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      const Op* next = i + 1 < ops.size() ? &ops[i + 1] : nullptr;
      if (overlappable_tp(op, CollectiveKind::all_gather) && next && next->kind == OpKind::gemm) {
        const std::vector<int>& members = group_of(group_kind(op.group), e.global);
        const double chunk = op.comm_bytes / t_.tp;
        const TaskId first = emit_collective(e, StreamKind::comm_tp, category_of(op.group), op.collective, chunk,
                                             group_kind(op.group), members, 0, op.name, mb);
        after_producers(e, first);
        overlapped = emit_collective(e, StreamKind::comm_tp, category_of(op.group), op.collective, op.comm_bytes - chunk,
                                     group_kind(op.group), members, 0, op.name, mb);
        after_producers(e, overlapped);
        e.wait_for.clear();
        e.wait_for.push_back(first);
        continue;
      }
      if (op.kind == OpKind::gemm && next && overlappable_tp(*next, CollectiveKind::reduce_scatter)) {
        const std::vector<int>& members = group_of(group_kind(next->group), e.global);
        const double chunk = next->comm_bytes / t_.tp;
        // Starts with the GEMM (after what the GEMM waits for), beside it on the comm_tp stream.
        const TaskId rest = emit_collective(e, StreamKind::comm_tp, category_of(next->group), next->collective,
                                            next->comm_bytes - chunk, group_kind(next->group), members, 0, next->name, mb);
        after_producers(e, rest);
        emit_compute(e, op, compute_category(op), mb, true);
        const TaskId last = emit_collective(e, StreamKind::comm_tp, category_of(next->group), next->collective, chunk,
                                            group_kind(next->group), members, 0, next->name, mb);
        after_producers(e, last);
        e.wait_for.clear();
        e.wait_for.push_back(rest);
        e.wait_for.push_back(last);
        if (overlapped != kNone) e.wait_for.push_back(overlapped), overlapped = kNone;
        ++i;  // the reduce-scatter is emitted
        continue;
      }
      if (op.kind == OpKind::collective) {
        const std::vector<int>& members = group_of(group_kind(op.group), e.global);
        if (members.size() < 2) continue;
        if (op.group == ProcessGroup::cp) {
          // The KV exchange of ring attention: issued step by step with the attention op that follows.
          CS_CHECK(op.collective == CollectiveKind::send_recv && e.ring_step_bytes == 0);
          e.ring_step_bytes = models::ring_hop_bytes(op, t_.cp);
          continue;
        }
        const TaskId c = emit_collective(e, blocking_stream_, category_of(op.group), op.collective, op.comm_bytes,
                                         group_kind(op.group), members, 0, op.name, mb, false, op.routing);
        after_producers(e, c);
        e.wait_for.clear();
        e.wait_for.push_back(c);
        continue;
      }
      if ((op.kind == OpKind::attention_fwd || op.kind == OpKind::attention_bwd) && e.ring_step_bytes > 0) {
        run_ring_attention(e, op, mb, backward);
        continue;
      }
      emit_compute(e, op, compute_category(op), mb, true);
      if (overlapped != kNone && op.kind == OpKind::gemm) e.wait_for.push_back(overlapped), overlapped = kNone;
    }
    if (overlapped != kNone) e.wait_for.push_back(overlapped);
    CS_CHECK(e.ring_step_bytes == 0);
  }

  // Send/recv of a pipeline tensor between two stages (both simulated under symmetry). Channels keep the
  // four flows of a stage pair apart — activations and gradients, each way (interleaved schedules with
  // p = 2 send activations both ways between the same two stages).
  TaskId emit_p2p(Emitter& e, StreamKind stream, int peer_stage, double bytes, int mb) {
    RankCoord c = layout_.coord(e.global);
    CS_CHECK(c.pp != peer_stage);
    c.pp = peer_stage;
    const int peer = layout_.rank(c);
    const std::vector<int> members = {std::min(e.global, peer), std::max(e.global, peer)};
    const bool fwd = stream == StreamKind::pp_send_fwd || stream == StreamKind::pp_recv_fwd || stream == StreamKind::pp_send_fwd_up ||
                     stream == StreamKind::pp_recv_fwd_up;
    const bool send = stream == StreamKind::pp_send_fwd || stream == StreamKind::pp_send_bwd || stream == StreamKind::pp_send_fwd_up ||
                      stream == StreamKind::pp_send_bwd_down;
    const int sender = send ? e.global : peer;
    const int channel = 1 + (fwd ? 0 : 2) + (sender == members[0] ? 0 : 1);
    return emit_collective(e, stream, Category::pp_comm, CollectiveKind::send_recv, bytes, GroupKind::pp, members, channel,
                           send ? (fwd ? "send-activation" : "send-gradient") : (fwd ? "recv-activation" : "recv-gradient"), mb,
                           sender != members[0]);
  }

  // A data-parallel collective on the comm_dp stream after `deps` (nothing when the group is one rank).
  TaskId emit_dp(Emitter& e, CollectiveKind kind, double bytes, GroupKind gk, int channel, const char* name, int mb,
                 const std::vector<TaskId>& deps) {
    const std::vector<int>& members = group_of(gk, e.global);
    if (members.size() < 2 || bytes <= 0) return kNone;
    const TaskId c = emit_collective(e, StreamKind::comm_dp, Category::dp_comm, kind, bytes, gk, members, channel, name, mb);
    for (TaskId d : deps)
      if (d != kNone) g_->add_dependency(d, c);
    return c;
  }

  // One rank's tasks for a training step (build_rank). The members are what the rank's passes share -- its
  // emitter, the stage's units, the data-parallel sharding and gradient buckets, the pipeline order -- and
  // the member functions the pieces of the step, grouped by concern: data-parallel buckets and reductions,
  // ZeRO-3 gathers, ZeRO-1's parameter gathers in forward, a chunk's units, pipeline sends and receives and
  // the schedule's actions, the combined 1F1B / DualPipeV pairs, the schedule, the step's end.
  struct RankBuild {
    RankBuild(Builder& owner, std::uint32_t sim_rank, int global) : builder(owner), e{sim_rank, global, kNone, {}, {}, 0} {
      // Per rank, not per task: the node-group lookup and the straggler / speed-variation draw.
      e.group_gpu = builder.group_gpu_of(global);
      const Heterogeneity& het = builder.s_.heterogeneity;
      if (!het.stragglers.empty() || het.cv > 0) e.slowdown = het.slowdown(builder.gpu_of(global), builder.s_.cluster.gpus_per_node);
      for (int c = 0; c < v; ++c)
        for (const UnitParams& u : su.chunks[static_cast<std::size_t>(c)])
          chunk_units[static_cast<std::size_t>(c)].push_back(
              {&builder.ops_.of(u), u.dense, u.expert, u.layer, u.kind, reruns_forward(u)});
      for (const double seconds : offload_copy_s(builder.s_.model, builder.t_, e.group_gpu ? *e.group_gpu : builder.s_.gpu))
        offload_copy.push_back(from_seconds(seconds));
    }

    Builder& builder;
    Emitter e;
    const RankCoord coord = builder.layout_.coord(e.global);
    const int stage = coord.pp;
    const int p = builder.t_.pp, v = builder.t_.vp;
    const bool first = stage == 0, last = stage == p - 1;
    const int m = static_cast<int>(builder.t_.num_micro_batches());
    const int zero = builder.t_.zero_stage;
    // Pipeline tensor: [micro_batch, seq / cp, hidden] in bf16; with sequence parallelism each TP rank
    // holds (and sends) only its 1/tp slice.
    const double p2p_bytes = static_cast<double>(builder.t_.micro_batch_size) * static_cast<double>(builder.t_.seq_length / builder.t_.cp) *
                             static_cast<double>(builder.s_.model.hidden_size) * 2.0 / (builder.t_.sequence_parallel ? builder.t_.tp : 1);

    // The rank's FSDP units and the sharding of their parameters (step_units.hpp, the one formula the
    // screening tier shares).
    const StageUnits su = stage_units(builder.s_.model, builder.t_, stage);
    const models::RankParameters& rp = su.rank;
    const bool separate_experts = su.separate_experts;
    std::vector<std::vector<Unit>> chunk_units = std::vector<std::vector<Unit>>(static_cast<std::size_t>(v));  // the constructor fills it
    // CPU activation offload (PP 1, so the chunk is the model's L layers): each offloaded layer's copy time
    // one way (offload_copy_s, on the rank's GPU), and the micro-batch's copies out and back so far.
    std::vector<Time> offload_copy;
    std::vector<TaskId> offloaded, reloaded;

    const DataParallelSharding dps = data_parallel_sharding(builder.s_, builder.layout_);
    const bool hybrid = dps.hybrid;
    const GroupKind dense_group = dps.dense_group;
    const GroupKind expert_group = GroupKind::expert_dp;
    const double dense_shards = dps.dense_shards;
    std::vector<TaskId> grad_reductions;

    // ZeRO 0-2: bucketed gradient reduction (dense and expert buckets apart), cut at dps.bucket_limit.
    const CollectiveKind bucket_kind = dps.bucket_kind;
    const char* bucket_name = zero >= 1 ? "grad-reduce-scatter" : "grad-all-reduce";
    const double bucket_limit = dps.bucket_limit;
    double dense_bucket = 0, expert_bucket = 0;
    std::vector<std::pair<GroupKind, double>> deferred;
    void reduce_bucket(GroupKind gk, double params, int mb) {
      std::vector<TaskId> deps = e.wait_for;
      deps.push_back(e.last_compute);
      const TaskId c = builder.emit_dp(e, bucket_kind, params * dps.grad_bytes, gk, 0, bucket_name, mb, deps);
      if (c != kNone) grad_reductions.push_back(c);
    }
    void close_bucket(GroupKind gk, double& bucket, int mb) {
      if (bucket <= 0) return;
      if (builder.t_.overlap_grad_reduce)
        reduce_bucket(gk, bucket, mb);
      else
        deferred.emplace_back(gk, bucket);
      bucket = 0;
    }
    // Without gradient_accumulation_fusion the unit's fresh weight gradients are added into the
    // accumulated ones by a kernel of their own after its backward (models::grad_accumulation_op), before
    // its bucket can be reduced. The loader allows that only under ZeRO 0 / 1 (the whole gradient kept).
    void accumulate_grads(const Unit& u, int mb) {
      if (!models::grad_accumulation_applies(builder.t_, mb)) return;
      CS_CHECK(zero <= 1);
      builder.emit_compute(e, models::grad_accumulation_op(u.dense + u.expert, builder.t_), Category::compute, mb);
    }
    void add_grads(const Unit& u, int mb) {
      dense_bucket += u.dense;
      expert_bucket += u.expert;
      if (dense_bucket >= bucket_limit) close_bucket(dense_group, dense_bucket, mb);
      if (expert_bucket >= bucket_limit) close_bucket(expert_group, expert_bucket, mb);
    }

    // DeepSpeed 0.3's ZeRO-3 (models::Zero3Collectives::per_tensor_synchronous): the unit's parameter
    // tensors (unit_parameter_tensors), each all-gathered on its own after everything the device has issued
    // (the compute stream, and the reduce-scatters queued ahead on comm_dp), then copied out of the flat
    // buffer by world_size copy kernels. PyTorch runs those on the NCCL stream; every one of them is serial
    // with the next gather's synchronize anyway, so they sit on the compute stream (the template executor's
    // plain tasks live there) and count as kernels (compute), as the other copy kernels do. A recomputed
    // layer is gathered twice before its backward (for the recompute, then for the backward, both serial).
    // Its gradients: per tensor, the list copied in, then the reduce-scatter on comm_dp.
    const bool per_tensor = zero >= 3 && builder.t_.zero3_collectives == models::Zero3Collectives::per_tensor_synchronous;
    std::vector<double> tensor_shares(const Unit& u) const {
      return unit_parameter_tensors(builder.s_.model, builder.t_.tp, u.kind, u.dense);
    }
    void gather_tensors(const Unit& u, int mb, int passes) {
      std::vector<TaskId> pending;
      std::swap(pending, e.wait_for);
      const std::vector<double> sizes = tensor_shares(u);
      for (int pass = 0; pass < passes; ++pass)
        for (double n : sizes) {
          const TaskId g = builder.emit_dp(e, CollectiveKind::all_gather, n * kParamBytes, dense_group, 1, "param-all-gather", mb, {e.last_compute});
          if (g == kNone) continue;
          e.wait_for.push_back(g);
          builder.emit_compute(e, models::tensor_list_copies_op(n * kParamBytes / dense_shards, static_cast<int>(dense_shards)), Category::compute, mb);
        }
      e.wait_for = std::move(pending);
    }
    void reduce_tensors(const Unit& u, int mb) {
      for (double n : tensor_shares(u)) {
        if (dense_shards < 2) break;
        builder.emit_compute(e, models::tensor_list_copies_op(n * dps.grad_bytes / dense_shards, static_cast<int>(dense_shards)), Category::compute, mb);
        const TaskId rs = builder.emit_dp(e, CollectiveKind::reduce_scatter, n * dps.grad_bytes, dense_group, 0, "grad-reduce-scatter", mb, {e.last_compute});
        if (rs != kNone) grad_reductions.push_back(rs);
      }
    }
    // ZeRO-3: a unit's parameter gathers (dense and expert) and its gradient reduce-scatter (+ the
    // HYBRID_SHARD all-reduce of the shard across nodes).
    TaskId gather_unit(const Unit& u, int mb) {
      const std::vector<TaskId> deps = {e.last_compute};
      TaskId last_gather = builder.emit_dp(e, CollectiveKind::all_gather, u.dense * kParamBytes, dense_group, 1, "param-all-gather", mb, deps);
      const TaskId eg = builder.emit_dp(e, CollectiveKind::all_gather, u.expert * kParamBytes, expert_group, 1, "param-all-gather", mb, deps);
      return eg != kNone ? eg : last_gather;
    }
    void reduce_unit(const Unit& u, int mb) {
      const std::vector<TaskId> deps = {e.last_compute};
      const TaskId rs = builder.emit_dp(e, CollectiveKind::reduce_scatter, u.dense * dps.grad_bytes, dense_group, 0, "grad-reduce-scatter", mb, deps);
      if (rs != kNone) grad_reductions.push_back(rs);
      if (hybrid) {
        const TaskId ar = builder.emit_dp(e, CollectiveKind::all_reduce, u.dense / dense_shards * dps.grad_bytes, GroupKind::replica, 0,
                                          "grad-all-reduce-replicas", mb, {rs, e.last_compute});
        if (ar != kNone) grad_reductions.push_back(ar);
      }
      const TaskId ers = builder.emit_dp(e, CollectiveKind::reduce_scatter, u.expert * dps.grad_bytes, expert_group, 0, "grad-reduce-scatter", mb, deps);
      if (ers != kNone) grad_reductions.push_back(ers);
    }

    // ZeRO-1 with the parameter all-gather behind the next forward (Megatron-Core's overlap_param_gather,
    // megatron/core/distributed/param_and_grad_buffer.py at d98e8a6): the updated parameters come back
    // bucket by bucket, the buckets being the gradient buckets (a model chunk's units cut in backward
    // order at bucket_limit, dense and expert apart). In the chunk's first forward, bucket 0's gather is
    // issued at the forward pre-hook of its first unit and waited for (exposed); each wait dispatches the
    // next bucket's gather (finish_param_sync -> next_param_gather_bucket_group.start_param_sync), which
    // then runs behind bucket b's forward until bucket b + 1's first unit waits for it. The step is the
    // steady state: these are the previous step's updated parameters, and the optimizer step issues no
    // gather of its own.
    const bool gather_in_forward = zero == 1 && builder.t_.param_gather_overlaps_forward;
    struct GatherBucket {
      int first_unit;  // forward order
      double params;
    };
    // Buckets of one chunk for one kind of parameters, in forward order.
    std::vector<GatherBucket> param_buckets(const std::vector<Unit>& units, bool expert) const {
      std::vector<GatherBucket> out;
      double open = 0;
      for (int i = static_cast<int>(units.size()) - 1; i >= 0; --i) {
        const Unit& u = units[static_cast<std::size_t>(i)];
        open += expert ? u.expert : u.dense;
        if (open >= bucket_limit || (i == 0 && open > 0)) {
          out.push_back({i, open});
          open = 0;
        }
      }
      std::reverse(out.begin(), out.end());
      return out;
    }
    struct GatherChain {
      std::vector<GatherBucket> buckets;
      std::vector<TaskId> issued;
      GroupKind group;
    };
    // Issue bucket b's gather (once) after what the rank has computed and the previous bucket's gather.
    void issue_gather(GatherChain& chain, std::size_t b, int mb) {
      if (b >= chain.buckets.size() || chain.issued[b] != kNone) return;
      const TaskId prev = b > 0 ? chain.issued[b - 1] : kNone;
      chain.issued[b] = builder.emit_dp(e, CollectiveKind::all_gather, chain.buckets[b].params * kParamBytes, chain.group, 1,
                                        "param-all-gather", mb, {e.last_compute, prev});
    }
    // Before unit i of the chunk's first forward: wait for its buckets, dispatching the next ones.
    void gather_before_unit(std::vector<GatherChain>& chains, int i, int mb) {
      for (GatherChain& chain : chains)
        for (std::size_t b = 0; b < chain.buckets.size(); ++b) {
          if (chain.buckets[b].first_unit != i) continue;
          issue_gather(chain, b, mb);
          if (chain.issued[b] != kNone) e.wait_for.push_back(chain.issued[b]);
          issue_gather(chain, b + 1, mb);
        }
    }
    std::vector<bool> chunk_gathered = std::vector<bool>(static_cast<std::size_t>(v), false);

    // One pass (forward or backward of one chunk for one micro-batch) over its units.
    // `part`: a zero-bubble schedule's B or W of the backward (backward_ops), the whole backward otherwise.
    void run_units(const std::vector<Unit>& units, int mb, bool backward, bool reducing, bool first_forward = false,
                   BackwardPart part = BackwardPart::whole) {
      std::vector<GatherChain> chains;
      if (first_forward && gather_in_forward) {
        for (const bool expert : {false, true}) {
          GatherChain chain{param_buckets(units, expert), {}, expert ? expert_group : dense_group};
          chain.issued.assign(chain.buckets.size(), kNone);
          chains.push_back(std::move(chain));
        }
      }
      const int n = static_cast<int>(units.size());
      std::vector<TaskId> gathers(static_cast<std::size_t>(n), kNone);
      std::vector<bool> gathered(static_cast<std::size_t>(n), false);
      auto at = [&](int i) { return backward ? n - 1 - i : i; };
      auto gather = [&](int i) {
        if (gathered[static_cast<std::size_t>(i)]) return;
        gathered[static_cast<std::size_t>(i)] = true;
        gathers[static_cast<std::size_t>(i)] = gather_unit(units[static_cast<std::size_t>(at(i))], mb);
      };
      for (int i = 0; i < n; ++i) {
        const Unit& u = units[static_cast<std::size_t>(at(i))];
        if (per_tensor) {
          gather_tensors(u, mb, backward && u.recomputed ? 2 : 1);
        } else if (zero >= 3) {
          gather(i);
          if (builder.t_.overlap_param_gather && i + 1 < n) gather(i + 1);  // prefetch the next unit
          if (gathers[static_cast<std::size_t>(i)] != kNone) e.wait_for.push_back(gathers[static_cast<std::size_t>(i)]);
        }
        if (!chains.empty()) gather_before_unit(chains, i, mb);
        if (u.layer >= 0 && !offload_copy.empty()) offload_before(u.layer, mb, backward);
        builder.run_ops(e, !backward ? u.ops->forward : part == BackwardPart::whole ? u.ops->backward : builder.backward_ops(*u.ops, part), mb, backward);
        if (!backward && u.layer >= 0 && u.layer < static_cast<std::int64_t>(offload_copy.size())) offload_after(u.layer, mb);
        if (!backward || part == BackwardPart::input) continue;  // the weight gradients come with W
        accumulate_grads(u, mb);
        if (per_tensor)
          reduce_tensors(u, mb);
        else if (zero >= 3)
          reduce_unit(u, mb);
        else if (reducing)
          add_grads(u, mb);
      }
      if (backward && reducing && zero < 3 && part != BackwardPart::input) {
        close_bucket(dense_group, dense_bucket, mb);
        close_bucket(expert_group, expert_bucket, mb);
      }
    }

    // CPU activation offload, as Transformer Engine's DefaultOffloadSynchronizer runs it (transformer_engine/
    // pytorch/cpu_offload.py @ NVIDIA/TransformerEngine d0067d0): layers 0..N-1 of the L are offloaded
    // (offload_layer_map, L602-626), both ways on one copy stream (offload_stream, L509).
    //  - forward: layer i's copy out starts once its forward is done (TE issues it on entering layer i + 1,
    //    fwd_step, L628-638); layer L - N + i's forward waits for it (wait_event(finish_offload_event)
    //    before layer i's GPU tensors are dropped).
    //  - backward: layer i's copy back starts when layer L - 1 - N + i's backward starts (bwd_step, L640-647;
    //    its buffers are allocated on the main stream and the copy waits on it, L331-364); layer i's backward
    //    waits for it (pop_tensor's wait on the reload event, L402-444).
    const std::int64_t offload_layers = builder.s_.model.num_layers;
    void offload_before(std::int64_t layer, int mb, bool backward) {
      const auto n = static_cast<std::int64_t>(offload_copy.size()), L = offload_layers;
      if (!backward) {
        if (layer == 0) offloaded.clear();
        if (layer >= L - n) e.wait_for.push_back(offloaded[static_cast<std::size_t>(layer - (L - n))]);
        return;
      }
      if (layer == L - 1) reloaded.assign(static_cast<std::size_t>(n), kNone);
      if (const std::int64_t i = layer - (L - 1 - n); i >= 0 && i < n) reloaded[static_cast<std::size_t>(i)] = host_copy(i, "offload-h2d", mb);
      if (layer < n) e.wait_for.push_back(reloaded[static_cast<std::size_t>(layer)]);
    }
    void offload_after(std::int64_t layer, int mb) { offloaded.push_back(host_copy(layer, "offload-d2h", mb)); }
    // Layer i's copy, after everything the rank has issued so far on its compute and TP streams.
    TaskId host_copy(std::int64_t i, const char* name, int mb) {
      Task t;
      t.rank = e.rank;
      t.stream = StreamKind::offload;
      t.duration = offload_copy[static_cast<std::size_t>(i)];
      t.name = static_cast<std::uint16_t>(builder.g_->intern(name));
      t.micro_batch = mb;
      const TaskId id = builder.g_->add_task(t);
      builder.flops_->resize(id + 1, 0.0);
      builder.after_producers(e, id);
      return id;
    }

    // The pipeline transfers of the plain schedules (models::PipelineTensorSplit, pipeline_p2p_blocking).
    // Split: each TP rank sends 1/tp of the tensor and the receiver all-gathers the whole tensor over TP
    // before the pass uses it (Megatron-LM's gather_split_1d_tensor, DeepSpeed's PartitionedTensor.full(),
    // both an all_gather on the compute path); under `partitioned` a stage also re-gathers its own output
    // before that output's backward (DeepSpeed's _exec_backward_pass).
    // Blocking: the transfers happen at communication points between passes, in program order, as
    // Megatron-LM 2021-2022's schedules call _communicate (batch_isend_irecv of the point's sends and
    // receives, req.wait(), torch.cuda.synchronize(), megatron/schedules.py and p2p_communication.py @
    // de7dc40f): a point's sends (of the passes since the point before) and receives (of the passes up to
    // the next point) are all posted after the pass before the point, and the pass after it waits for all
    // of them (and for the gathers, which follow the synchronize). 1F1B and GPipe have a point after every
    // pass (send_forward_recv_backward, send_backward_recv_forward, ...); the interleaved schedule has none
    // between a steady-state forward and the backward right after it (forward k, backward k, then one
    // send_forward_backward_recv_forward_backward). DeepSpeed's PipelineEngine (dist.send / dist.recv, one
    // instruction after the other) is taken as the 1F1B points.
    const bool split_p2p = builder.t_.pipeline_tensor_split != models::PipelineTensorSplit::none && builder.t_.tp > 1 && !builder.t_.sequence_parallel;
    const double wire_bytes = split_p2p ? p2p_bytes / builder.t_.tp : p2p_bytes;
    const bool blocking_p2p = builder.t_.pipeline_p2p_blocking;
    void tp_gather(const char* name, int mb) {
      const TaskId g = builder.emit_collective(e, builder.blocking_stream_, Category::pp_comm, CollectiveKind::all_gather, p2p_bytes, GroupKind::tp,
                                               builder.group_of(GroupKind::tp, e.global), 0, name, mb);
      builder.after_producers(e, g);
      e.wait_for.clear();
      e.wait_for.push_back(g);
    }
    // The gathers of a received tensor (split only), after the receive (in e.wait_for).
    void gathers(bool fwd, int mb) {
      if (!split_p2p) return;
      if (!fwd && builder.t_.pipeline_tensor_split == models::PipelineTensorSplit::partitioned) tp_gather("regather-output", mb);
      tp_gather(fwd ? "gather-activation" : "gather-gradient", mb);
    }
    void recv_p2p(StreamKind stream, int peer, int mb) {
      e.wait_for.push_back(builder.emit_p2p(e, stream, peer, wire_bytes, mb));
      gathers(stream == StreamKind::pp_recv_fwd, mb);
    }
    void send_p2p(StreamKind stream, int peer, int mb) { builder.after_producers(e, builder.emit_p2p(e, stream, peer, wire_bytes, mb)); }

    const std::vector<PipelineAction> order = pipeline_order(builder.t_.pipeline_schedule, p, m, stage, v);
    // Neighbours in the model's layer order: (stage - 1, c) or, wrapping, (p - 1, c - 1) before; (stage
    // + 1, c) or (0, c + 1) after.
    const int prev_stage = first ? p - 1 : stage - 1, next_stage = last ? 0 : stage + 1;
    bool has_prev(const PipelineAction& a) const { return !(first && a.chunk == 0); }
    bool has_next(const PipelineAction& a) const { return !(last && a.chunk == v - 1); }
    // The stage an action receives from and the one it sends to (-1: none). A W has neither. ZBV's V
    // (pipeline_schedule.hpp): chunk c of this rank is virtual stage k = s (c 0) or 2p - 1 - s (c 1),
    // virtual stage j runs on rank j (j < p) or 2p - 1 - j; a forward receives from k - 1 and sends to k + 1,
    // a backward the other way; the turn at rank p - 1 stays on the rank (program order carries it).
    const bool v_shape = sim::v_shape(builder.t_.pipeline_schedule);
    int peer_of(const PipelineAction& a, bool send) const {
      if (a.part == BackwardPart::weight) return -1;
      const bool up = a.forward != send;  // towards the embedding in layer order
      if (!v_shape) return up ? (has_prev(a) ? prev_stage : -1) : (has_next(a) ? next_stage : -1);
      const int k = a.chunk == 0 ? stage : 2 * p - 1 - stage, j = up ? k - 1 : k + 1;
      if (j < 0 || j >= 2 * p) return -1;
      const int rank = j < p ? j : 2 * p - 1 - j;
      return rank == stage ? -1 : rank;
    }
    // The stream of an action's transfer: DualPipeV's chunk 1 (the V's way back up) on streams of its own
    // (task_graph.hpp), so each stream talks to one neighbour about one kind of tensor.
    const bool own_up_streams = builder.t_.pipeline_schedule == models::PipelineSchedule::dualpipev;
    StreamKind p2p_stream(const PipelineAction& a, bool send) const {
      const bool up = own_up_streams && a.chunk == 1;
      if (a.forward) return send ? (up ? StreamKind::pp_send_fwd_up : StreamKind::pp_send_fwd) : (up ? StreamKind::pp_recv_fwd_up : StreamKind::pp_recv_fwd);
      return send ? (up ? StreamKind::pp_send_bwd_down : StreamKind::pp_send_bwd) : (up ? StreamKind::pp_recv_bwd_down : StreamKind::pp_recv_bwd);
    }
    // Blocking: the point before action k (none between an interleaved steady-state forward and its backward).
    bool point_before(std::size_t k) const {
      return k == 0 || v == 1 || !(order[k - 1].forward && !order[k].forward);
    }
    struct PendingSend {
      StreamKind stream;
      int peer, mb;
    };
    std::vector<PendingSend> pending_sends;
    // A communication point: the pending sends and the receives of the passes up to the next point, all
    // after the last pass; the next pass waits for them all.
    void run_point(std::size_t k) {
      std::vector<TaskId> posted;
      for (const PendingSend& ps : pending_sends) {
        const TaskId t = builder.emit_p2p(e, ps.stream, ps.peer, wire_bytes, ps.mb);
        builder.after_producers(e, t);
        posted.push_back(t);
      }
      pending_sends.clear();
      std::vector<std::pair<bool, int>> received;  // (forward, micro-batch)
      for (std::size_t j = k; j < order.size() && (j == k || !point_before(j)); ++j) {
        const PipelineAction& a = order[j];
        const bool recv = a.forward ? has_prev(a) : has_next(a);
        if (!recv) continue;
        const TaskId r = builder.emit_p2p(e, a.forward ? StreamKind::pp_recv_fwd : StreamKind::pp_recv_bwd, a.forward ? prev_stage : next_stage,
                                          wire_bytes, a.micro_batch);
        if (e.last_compute != kNone) builder.g_->add_dependency(e.last_compute, r);
        posted.push_back(r);
        received.emplace_back(a.forward, a.micro_batch);
      }
      for (TaskId t : posted) e.wait_for.push_back(t);
      for (const auto& [fwd, mb] : received) gathers(fwd, mb);
    }

    // One pass alone: the schedule's action k.
    void run_action(std::size_t k) {
      const PipelineAction& a = order[k];
      const int mb = a.micro_batch, c = a.chunk;
      const int from = peer_of(a, false), to = peer_of(a, true);
      const auto& units = chunk_units[static_cast<std::size_t>(c)];
      const bool final_action = k + 1 == order.size();
      if (blocking_p2p && point_before(k)) run_point(k);
      if (a.forward) {
        if (from >= 0 && !blocking_p2p) recv_p2p(p2p_stream(a, false), from, mb);
        const bool first_forward = !chunk_gathered[static_cast<std::size_t>(c)];
        chunk_gathered[static_cast<std::size_t>(c)] = true;
        run_units(units, mb, false, false, first_forward);
        if (to >= 0) {
          if (blocking_p2p) pending_sends.push_back({StreamKind::pp_send_fwd, to, mb});
          else send_p2p(p2p_stream(a, true), to, mb);
        }
        if (blocking_p2p && final_action) run_point(order.size());
      } else {
        // DDP / ZeRO-1 reduce the accumulated gradients once, in the last micro-batch's backward (its W
        // under a zero-bubble schedule); ZeRO-2 every micro-batch.
        const bool reducing = zero == 2 || mb == m - 1;
        if (from >= 0 && !blocking_p2p) recv_p2p(p2p_stream(a, false), from, mb);
        run_units(units, mb, true, reducing, false, a.part);
        if (to >= 0) {
          if (blocking_p2p) pending_sends.push_back({StreamKind::pp_send_bwd, to, mb});
          else send_p2p(p2p_stream(a, true), to, mb);
        }
        if (blocking_p2p && final_action) run_point(order.size());  // the last sends, before the deferred buckets
        // Without overlap the buckets go after the backward: after each micro-batch's (ZeRO-2), else after
        // the rank's last backward pass.
        if (a.part != BackwardPart::input && !deferred.empty() && (zero == 2 || final_action)) {
          for (const auto& [gk, params] : deferred) reduce_bucket(gk, params, mb);
          deferred.clear();
        }
      }
    }

    // overlap_moe_expert_parallel_comm (Megatron-Core's combined 1F1B, megatron/core/pipeline_parallel/
    // combined_1f1b.py and schedules.py @ d98e8a6): one more forward in the warm-up ("we schedule one extra
    // micro-batch forward step before the 1f1b stages ... to ensure the forward and backward computations are
    // independent in all 1f1b steps"; without pipelining the first forward runs alone), then each steady-state
    // step runs forward k + 1 and backward k of the schedule's own orders together, layer by layer
    // (TransformerModelChunkSchedulePlan.run: forward layer i with backward layer n - 1 - i, the chunk's
    // embedding forward and LM-head backward before them, its LM-head forward and embedding backward after).
    // A layer pair (TransformerLayerSchedulePlan.run, model_chunk_schedule_plan.py @ d98e8a6):
    //   EP comm (comm_tp stream): combine_bwd      | dispatch_fwd -> dispatch_bwd         | combine_fwd
    //   compute:                  pre_dispatch_fwd | mlp_bwd -> mlp_bwd_dw -> mlp_fwd     | pre_dispatch_bwd
    // each all-to-all after its own pass's producer and before its own pass's consumer (the real data
    // dependencies), so it runs beside the other pass's compute; the two passes' TP collectives run on the
    // compute stream as Megatron runs them (blocking_stream_).
    struct Pass {
      int mb;
      std::vector<TaskId> wait;  // what the pass's next task waits for
      TaskId last = kNone;       // the pass's last kernel
    };
    void run_seg(Pass& pass, const std::vector<Op>& ops, bool backward) {
      if (ops.empty()) return;
      const TaskId before = e.last_compute;
      e.wait_for = std::move(pass.wait);
      builder.run_ops(e, ops, pass.mb, backward);
      pass.wait = std::move(e.wait_for);
      e.wait_for.clear();
      if (e.last_compute != before) pass.last = e.last_compute;
    }
    void run_comm(Pass& pass, const std::vector<Op>& ops) {
      TaskId issued = kNone;
      for (const Op& op : ops) {
        const std::vector<int>& members = builder.group_of(group_kind(op.group), e.global);
        if (members.size() < 2) continue;
        const TaskId c = builder.emit_collective(e, StreamKind::comm_tp, category_of(op.group), op.collective, op.comm_bytes,
                                                 group_kind(op.group), members, 0, op.name, pass.mb, false, op.routing);
        if (pass.last != kNone) builder.g_->add_dependency(pass.last, c);
        for (TaskId w : pass.wait) builder.g_->add_dependency(w, c);
        pass.wait.clear();
        issued = c;
      }
      if (issued != kNone) pass.wait.push_back(issued);
    }
    void backward_done(Pass& b, const Unit& u, bool reducing) {
      if (models::grad_accumulation_applies(builder.t_, b.mb)) {  // after the unit's backward, on the compute stream
        e.wait_for = std::move(b.wait);
        b.wait.clear();
        accumulate_grads(u, b.mb);
        b.last = e.last_compute;
      }
      if (!reducing) return;
      e.wait_for = b.wait;
      add_grads(u, b.mb);
      e.wait_for.clear();
    }
    void run_layer_pair(Pass& f, const Unit& fu, Pass& b, const Unit& bu, bool reducing) {
      const SplitLayer& fs = builder.split_of(*fu.ops);
      const SplitLayer& bs = builder.split_of(*bu.ops);
      if (!fs.moe || !bs.moe) {  // no all-to-all to hide on one side: the two one after the other
        run_seg(f, fu.ops->forward, false);
        run_seg(b, bu.ops->backward, true);
        backward_done(b, bu, reducing);
        return;
      }
      run_seg(b, bs.bwd.pre, true);
      run_comm(b, bs.bwd.comm1);  // combine_bwd, beside the forward's pre-dispatch compute
      run_seg(f, fs.fwd.pre, false);
      run_comm(f, fs.fwd.comm1);  // dispatch_fwd, beside the experts' backward
      run_seg(b, bs.bwd.mid, true);
      run_comm(b, bs.bwd.comm2);  // dispatch_bwd, after the experts' dgrads: beside their wgrads and forward
      std::vector<TaskId> dispatch_bwd = std::move(b.wait);
      b.wait.clear();
      run_seg(b, bs.bwd.mid_wgrad, true);
      for (TaskId w : dispatch_bwd) b.wait.push_back(w);
      run_seg(f, fs.fwd.mid, false);
      run_comm(f, fs.fwd.comm2);  // combine_fwd, beside the backward's pre-dispatch compute
      run_seg(b, bs.bwd.post, true);
      backward_done(b, bu, reducing);
      run_seg(f, fs.fwd.post, false);
    }
    static bool is_layer(const UnitParams& u) { return u.kind == UnitKind::layer; }
    void run_pair(std::size_t kf, std::size_t kb) {
      const PipelineAction& fa = order[kf];
      const PipelineAction& ba = order[kb];
      const int fc = fa.chunk, bc = ba.chunk;
      // The peers of the two passes (peer_of: the V's turn and ends on a V-shaped schedule).
      const int f_from = peer_of(fa, false), f_to = peer_of(fa, true), b_from = peer_of(ba, false), b_to = peer_of(ba, true);
      Pass f{fa.micro_batch, {}, kNone}, b{ba.micro_batch, {}, kNone};
      if (f_from >= 0) f.wait.push_back(builder.emit_p2p(e, p2p_stream(fa, false), f_from, p2p_bytes, f.mb));
      if (b_from >= 0) b.wait.push_back(builder.emit_p2p(e, p2p_stream(ba, false), b_from, p2p_bytes, b.mb));
      for (TaskId w : e.wait_for) f.wait.push_back(w);
      e.wait_for.clear();
      const bool reducing = b.mb == m - 1;
      const auto& fus = chunk_units[static_cast<std::size_t>(fc)];
      const auto& bus = chunk_units[static_cast<std::size_t>(bc)];
      const auto& fkinds = su.chunks[static_cast<std::size_t>(fc)];
      const auto& bkinds = su.chunks[static_cast<std::size_t>(bc)];
      // Forward order of the forward chunk's units; backward order of the backward chunk's.
      std::vector<std::size_t> f_layers, b_layers, f_before, f_after, b_before, b_after;
      for (std::size_t i = 0; i < fus.size(); ++i)
        (is_layer(fkinds[i]) ? f_layers : (f_layers.empty() ? f_before : f_after)).push_back(i);
      for (std::size_t i = bus.size(); i-- > 0;)
        (is_layer(bkinds[i]) ? b_layers : (b_layers.empty() ? b_before : b_after)).push_back(i);
      builder.blocking_stream_ = StreamKind::compute;
      for (std::size_t i : f_before) run_seg(f, fus[i].ops->forward, false);
      for (std::size_t i : b_before) {
        run_seg(b, bus[i].ops->backward, true);
        backward_done(b, bus[i], reducing);
      }
      const std::size_t both = std::min(f_layers.size(), b_layers.size());
      for (std::size_t i = 0; i < both; ++i) run_layer_pair(f, fus[f_layers[i]], b, bus[b_layers[i]], reducing);
      for (std::size_t i = both; i < b_layers.size(); ++i) {
        run_seg(b, bus[b_layers[i]].ops->backward, true);
        backward_done(b, bus[b_layers[i]], reducing);
      }
      for (std::size_t i = both; i < f_layers.size(); ++i) run_seg(f, fus[f_layers[i]].ops->forward, false);
      for (std::size_t i : f_after) run_seg(f, fus[i].ops->forward, false);
      for (std::size_t i : b_after) {
        run_seg(b, bus[i].ops->backward, true);
        backward_done(b, bus[i], reducing);
      }
      builder.blocking_stream_ = StreamKind::comm_tp;
      if (reducing) {
        e.wait_for = b.wait;
        close_bucket(dense_group, dense_bucket, b.mb);
        close_bucket(expert_group, expert_bucket, b.mb);
        e.wait_for.clear();
      }
      auto send = [&](Pass& pass, StreamKind stream, int peer) {
        const TaskId t = builder.emit_p2p(e, stream, peer, p2p_bytes, pass.mb);
        if (pass.last != kNone) builder.g_->add_dependency(pass.last, t);
        for (TaskId w : pass.wait) builder.g_->add_dependency(w, t);
      };
      if (f_to >= 0) send(f, p2p_stream(fa, true), f_to);
      if (b_to >= 0) send(b, p2p_stream(ba, true), b_to);
      for (const Pass* pass : {&f, &b})
        for (TaskId w : pass->wait) e.wait_for.push_back(w);
      if (!deferred.empty() && kb + 1 == order.size()) {
        for (const auto& [gk, params] : deferred) reduce_bucket(gk, params, b.mb);
        deferred.clear();
      }
    }

    // The rank's passes in the schedule's order: one by one (run_action), or two at once (run_pair).
    void run_schedule() {
      if (builder.t_.pipeline_schedule == models::PipelineSchedule::dualpipev) {
        // DualPipeV's own pairs (pipeline_schedule.hpp: _forward_backward_chunk), whatever
        // overlap_moe_expert_parallel_comm says: the overlap is the schedule's.
        for (std::size_t k = 0; k < order.size(); ++k) {
          if (order[k].paired_with_next && chunk_gathered[static_cast<std::size_t>(order[k].chunk)]) {
            CS_CHECK(k + 1 < order.size() && !order[k + 1].forward && order[k + 1].part == BackwardPart::whole);
            run_pair(k, k + 1);
            ++k;
          } else {
            run_action(k);
          }
        }
      } else if (!builder.t_.overlap_moe_expert_parallel_comm || builder.t_.ep < 2) {  // EP 1: no all-to-all, the plain schedule
        for (std::size_t k = 0; k < order.size(); ++k) run_action(k);
      } else {
        std::vector<std::size_t> forwards, backwards;
        std::size_t warmup = 0;
        for (std::size_t k = 0; k < order.size(); ++k) {
          (order[k].forward ? forwards : backwards).push_back(k);
          if (order[k].forward && backwards.empty()) ++warmup;
        }
        CS_CHECK(forwards.size() == backwards.size());
        // The schedule's order runs its warm-up forwards, then forward, backward, ...: the forwards before the
        // first backward are the warm-up and one more, Megatron-Core's warm-up under the overlap.
        const std::size_t alone = std::min(warmup, forwards.size());
        for (std::size_t i = 0; i < alone; ++i) run_action(forwards[i]);
        std::size_t j = 0;
        for (std::size_t i = alone; i < forwards.size(); ++i, ++j) {
          if (!chunk_gathered[static_cast<std::size_t>(order[forwards[i]].chunk)]) {  // a chunk's first forward: alone
            run_action(forwards[i]);
            run_action(backwards[j]);
          } else {
            run_pair(forwards[i], backwards[j]);
          }
        }
        for (; j < backwards.size(); ++j) run_action(backwards[j]);
      }
      CS_CHECK(deferred.empty());
    }

    // Optimizer step after every gradient reduction, on the rank's shard; ZeRO-1/2 gather the updated
    // parameter shards back (ZeRO-3 gathers them in the next step's forward).
    void finish_step() {
      for (TaskId c : grad_reductions) e.wait_for.push_back(c);
      const double shard = dps.optimizer_shard(su, zero);
      // clip_grad: the norm over the rank's fp32 gradients (its shard under the distributed optimizer), one
      // fp32 sum of squares all-reduced (Megatron spans TP x PP x DP; DP x CP is the group built here, and a
      // 4 B all-reduce costs its latency only), then Adam with the clip scale folded in.
      builder.emit_compute(e, models::grad_norm_op(shard), Category::optimizer, -1);
      const TaskId norm_ar = builder.emit_dp(e, CollectiveKind::all_reduce, models::grad_norm_all_reduce_op().comm_bytes, GroupKind::dp_cp, 2,
                                             "grad-norm-all-reduce", -1, {e.last_compute});
      if (norm_ar != kNone) e.wait_for.push_back(norm_ar);
      builder.emit_compute(e, models::optimizer_op(shard), Category::optimizer, -1);
      if ((zero == 1 && !gather_in_forward) || zero == 2) {
        const std::vector<TaskId> deps = {e.last_compute};
        const double dense_params = DataParallelSharding::gathered_dense(su);
        const TaskId g1 = builder.emit_dp(e, CollectiveKind::all_gather, dense_params * kParamBytes, dense_group, 1, "param-all-gather", -1, deps);
        if (g1 != kNone) builder.after_producers(e, g1);
        if (separate_experts) {
          const TaskId g2 = builder.emit_dp(e, CollectiveKind::all_gather, rp.expert * kParamBytes, expert_group, 1, "param-all-gather", -1, deps);
          if (g2 != kNone) builder.after_producers(e, g2);
        }
      }
    }
  };

  void build_rank(std::uint32_t sim_rank, int global) {
    RankBuild r(*this, sim_rank, global);
    r.run_schedule();
    r.finish_step();
  }

  // The stream of the blocking TP / CP / EP collectives run_ops emits: comm_tp, or, while paired passes
  // run (overlap_moe_expert_parallel_comm), the compute stream, as Megatron-Core runs them there and keeps
  // its own stream for the EP all-to-all.
  StreamKind blocking_stream_ = StreamKind::comm_tp;
  std::unordered_map<const models::LayerOps*, SplitLayer> split_layers_;  // split_layer

  // A zero-bubble schedule's B and W of a unit's backward (pipeline_schedule.hpp): W is the weight
  // gradients, the wgrad GEMMs and the embedding's gradient scatter-add; B everything else in its order
  // (recompute, dgrads, attention and norm backwards, the TP collectives of the input gradients). Built once
  // per op list; the vectors stay put for the build (stable_op).
  std::unordered_map<const models::LayerOps*, std::array<std::vector<Op>, 2>> backward_parts_;
  const std::vector<Op>& backward_ops(const models::LayerOps& ops, BackwardPart part) {
    CS_CHECK(part != BackwardPart::whole);
    auto it = backward_parts_.find(&ops);
    if (it == backward_parts_.end()) {
      std::array<std::vector<Op>, 2> parts;
      for (const Op& op : ops.backward) {
        const bool weight = (op.kind == OpKind::gemm && op.name.ends_with("_wgrad")) ||
                            (op.kind == OpKind::memory_bound && op.mem_kind == models::MemOpKind::embedding);
        parts[weight ? 1 : 0].push_back(op);
      }
      it = backward_parts_.emplace(&ops, std::move(parts)).first;
    }
    return it->second[part == BackwardPart::input ? 0 : 1];
  }

  const SplitLayer& split_of(const models::LayerOps& ops) {
    auto it = split_layers_.find(&ops);
    if (it == split_layers_.end()) it = split_layers_.emplace(&ops, split_layer(ops)).first;
    return it->second;
  }

  const Scenario& s_;
  const models::ComputeProfile& profile_;
  const std::vector<int>& gpus_;  // GPU of each rank; empty: rank r on GPU r
  const models::TrainingConfig& t_;
  Layout layout_;
  UnitOps ops_;  // every unit kind's op list (step_units.hpp)
  Orbits orbits_;
  bool template_mode_ = false;
  std::vector<const models::GpuSpec*> types_;   // template mode: the GPU types (nullptr: cluster.gpu)
  std::vector<std::vector<Time>> template_base_;  // template mode: per type, per task
  TaskGraph* g_ = nullptr;
  std::vector<double>* flops_ = nullptr;
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> collectives_;  // by emit_collective's key
  std::unordered_map<std::pair<const Op*, const models::GpuSpec*>, OpFacts, OpKeyHash> op_facts_;  // stable_op
  std::set<std::uint32_t> mirrored_;
  std::vector<char> mirror_seen_;  // group_id_uncached's scratch: group id -> already a mirror (all 0 between calls)
  std::unordered_map<DurationKey, Time, DurationKeyHash> durations_;
  std::unordered_map<std::uint64_t, std::vector<int>> members_;    // group_of
  std::unordered_map<std::uint64_t, std::uint32_t> group_ids_;     // group_id
};

}  // namespace

StepPlan build_step(const Scenario& s, const models::ComputeProfile& profile) {
  return build_step(s, profile, {});
}

StepPlan build_step(const Scenario& s, const models::ComputeProfile& profile, const std::vector<int>& gpus) {
  return Builder(s, profile, gpus).build();
}

StepTemplatePlan build_step_template(const Scenario& s, const models::ComputeProfile& profile) {
  return Builder(s, profile, {}, true).build_template();
}

}  // namespace cs::sim
