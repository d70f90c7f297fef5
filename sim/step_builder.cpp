#include "sim/step_builder.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "models/memory_model.hpp"
#include "models/transformer.hpp"
#include "sim/check.hpp"
#include "sim/layout.hpp"

namespace cs::sim {

using models::CollectiveKind;
using models::Op;
using models::OpKind;
using models::ProcessGroup;

namespace {

// Bytes of a gradient element on the wire (bf16 gradients, as PyTorch DDP and the ZeRO paper count;
// Megatron can reduce in fp32, which doubles this) and of a parameter element in ZeRO all-gathers.
constexpr double kGradBytes = 2.0;
constexpr double kParamBytes = 2.0;

Category category_of(ProcessGroup g) {
  switch (g) {
    case ProcessGroup::tp: return Category::tp_comm;
    case ProcessGroup::cp: return Category::cp_comm;
    case ProcessGroup::ep: return Category::ep_comm;
    case ProcessGroup::dp: return Category::dp_comm;
    case ProcessGroup::pp: return Category::pp_comm;
  }
  return Category::tp_comm;
}

// A compute op with its precomputed duration.
struct TimedOp {
  const Op* op;
  Time duration;
};

class Builder {
 public:
  Builder(const Scenario& s, const models::ComputeProfile& profile)
      : s_(s),
        profile_(profile),
        t_(s.training),
        layout_(t_.tp, t_.cp, t_.dp, t_.pp, t_.ep),
        layer_(models::transformer_layer_ops(s.model, t_)),
        embedding_(models::embedding_ops(s.model, t_)),
        head_(models::lm_head_ops(s.model, t_)) {}

  StepPlan build() {
    StepPlan plan;
    // Which ranks to simulate.
    if (s_.simulation.symmetry) {
      for (int stage = 0; stage < t_.pp; ++stage) plan.global_rank.push_back(layout_.rank({0, 0, 0, stage}));
      plan.mirrors = t_.tp * t_.cp * t_.dp;
    } else {
      for (int r = 0; r < layout_.world_size(); ++r) plan.global_rank.push_back(r);
    }
    plan.graph = TaskGraph(static_cast<int>(plan.global_rank.size()));
    g_ = &plan.graph;
    flops_ = &plan.flops;

    for (std::size_t i = 0; i < plan.global_rank.size(); ++i) build_rank(static_cast<std::uint32_t>(i), plan.global_rank[i]);
    plan.graph.freeze();
    return plan;
  }

 private:
  // Per-rank emission state.
  struct Emitter {
    std::uint32_t rank;
    int global;
    TaskId last_compute = kNone;
    std::vector<TaskId> wait_for;  // tasks the next compute kernel must wait for
    std::map<std::tuple<int, int, int>, int> sequence;  // (group kind, group key, channel) -> next index
  };

  Time op_duration(const Op& op) const { return from_seconds(models::op_time_s(op, s_.gpu, profile_)); }

  TaskId emit_compute(Emitter& e, const Op& op, Category cat, int mb) {
    Task t;
    t.rank = e.rank;
    t.stream = StreamKind::compute;
    t.category = cat;
    t.duration = op_duration(op);
    t.name = g_->intern(op.name);
    t.micro_batch = mb;
    const TaskId id = g_->add_task(t);
    flops_->resize(id + 1, 0.0);
    (*flops_)[id] = op.flops;
    for (TaskId w : e.wait_for) g_->add_dependency(w, id);
    e.wait_for.clear();
    e.last_compute = id;
    return id;
  }

  // The collective shared by every simulated member of `members` (global ranks, the real group), matched
  // by its order on (kind, group, channel).
  TaskId emit_collective(Emitter& e, StreamKind stream, Category cat, CollectiveKind kind, double bytes,
                         const std::vector<int>& members, int channel, const std::string& name, int mb) {
    const int group_key = *std::min_element(members.begin(), members.end());
    const auto key = std::make_tuple(static_cast<int>(cat), group_key, channel);
    const int seq = e.sequence[key]++;
    auto& list = collectives_[key];
    if (static_cast<int>(list.size()) <= seq) {
      CS_CHECK(static_cast<int>(list.size()) == seq);
      Collective c;
      c.kind = kind;
      c.bytes = bytes;
      c.group = group_id(members, e.global, cat == Category::pp_comm);
      list.push_back(g_->add_collective(std::move(c)));
    }
    const std::uint32_t cid = list[static_cast<std::size_t>(seq)];
    CS_CHECK(g_->collectives()[cid].kind == kind && g_->collectives()[cid].bytes == bytes);
    Task t;
    t.rank = e.rank;
    t.stream = stream;
    t.category = cat;
    t.collective = cid;
    t.name = g_->intern(name);
    t.micro_batch = mb;
    const TaskId id = g_->add_task(t);
    flops_->resize(id + 1, 0.0);
    g_->add_member(cid, id);
    return id;
  }

  // The task graph's id for a real group, with its mirrors under symmetry: the same group of every rank
  // the simulated one stands for (same pipeline stage, any TP / CP / DP index).
  std::uint32_t group_id(const std::vector<int>& members, int global, bool p2p) {
    const std::uint32_t id = g_->add_group(members);
    if (!s_.simulation.symmetry || !mirrored_.insert(id).second) return id;
    const RankCoord self = layout_.coord(global);
    const ProcessGroup kind = p2p ? ProcessGroup::pp : kind_of_group(members, global);
    std::vector<std::uint32_t> mirrors;
    std::set<std::uint32_t> seen;
    for (int dp = 0; dp < t_.dp; ++dp)
      for (int cp = 0; cp < t_.cp; ++cp)
        for (int tp = 0; tp < t_.tp; ++tp) {
          const int r = layout_.rank({tp, cp, dp, self.pp});
          std::vector<int> gpus;
          if (p2p) {
            // The same pair of stages, shifted to this rank's TP / CP / DP index.
            for (int m : members) {
              RankCoord c = layout_.coord(r);
              c.pp = layout_.coord(m).pp;
              gpus.push_back(layout_.rank(c));
            }
          } else {
            gpus = layout_.group(kind, r);
          }
          const std::uint32_t mid = g_->add_group(gpus);
          if (seen.insert(mid).second) mirrors.push_back(mid);
        }
    g_->set_mirrors(id, std::move(mirrors));
    return id;
  }

  // Which process-group kind `members` is, seen from `global` (the coordinate that varies).
  ProcessGroup kind_of_group(const std::vector<int>& members, int global) const {
    for (ProcessGroup g : {ProcessGroup::tp, ProcessGroup::cp, ProcessGroup::dp, ProcessGroup::ep})
      if (layout_.size(g) == static_cast<int>(members.size()) && layout_.group(g, global) == members) return g;
    CS_CHECK(false);
    return ProcessGroup::tp;
  }

  // `t` consumes what the rank has produced so far: the last kernel and any collective still pending.
  void after_producers(const Emitter& e, TaskId t) {
    if (e.last_compute != kNone) g_->add_dependency(e.last_compute, t);
    for (TaskId w : e.wait_for) g_->add_dependency(w, t);
  }

  // Runs an op list: kernels on the compute stream, collectives on the TP stream between them.
  void run_ops(Emitter& e, const std::vector<Op>& ops, int mb, bool backward) {
    for (const Op& op : ops) {
      if (op.kind == OpKind::collective) {
        const std::vector<int> members = layout_.group(op.group, e.global);
        if (members.size() < 2) continue;
        const TaskId c = emit_collective(e, StreamKind::comm_tp, category_of(op.group), op.collective, op.comm_bytes,
                                         members, 0, op.name, mb);
        after_producers(e, c);
        e.wait_for.clear();
        e.wait_for.push_back(c);
        continue;
      }
      const bool recompute = backward && op.name.rfind("recompute", 0) == 0;
      emit_compute(e, op, op.kind == OpKind::optimizer ? Category::optimizer : recompute ? Category::recompute : Category::compute, mb);
    }
  }

  // Send/recv of a pipeline tensor between neighbouring stages (both simulated under symmetry).
  TaskId emit_p2p(Emitter& e, StreamKind stream, int peer_stage, double bytes, int mb) {
    RankCoord c = layout_.coord(e.global);
    c.pp = peer_stage;
    const int peer = layout_.rank(c);
    std::vector<int> members = {std::min(e.global, peer), std::max(e.global, peer)};
    const bool fwd = stream == StreamKind::pp_send_fwd || stream == StreamKind::pp_recv_fwd;
    const bool send = stream == StreamKind::pp_send_fwd || stream == StreamKind::pp_send_bwd;
    return emit_collective(e, stream, Category::pp_comm, CollectiveKind::send_recv, bytes, members, fwd ? 1 : 2,
                           std::string(send ? "send-" : "recv-") + (fwd ? "activation" : "gradient"), mb);
  }

  void build_rank(std::uint32_t sim_rank, int global) {
    Emitter e{sim_rank, global, kNone, {}, {}};
    const RankCoord coord = layout_.coord(global);
    const int stage = coord.pp;
    const bool first = stage == 0, last = stage == t_.pp - 1;
    const int layers = static_cast<int>(s_.model.num_layers / t_.pp);
    const int m = static_cast<int>(t_.num_micro_batches());
    // Pipeline tensor: [micro_batch, seq / cp, hidden] in bf16; with sequence parallelism each TP rank
    // holds (and sends) only its 1/tp slice.
    const double p2p_bytes = static_cast<double>(t_.micro_batch_size) * static_cast<double>(t_.seq_length / t_.cp) *
                             static_cast<double>(s_.model.hidden_size) * 2.0 / (t_.sequence_parallel ? t_.tp : 1);

    // Parameters this rank holds before ZeRO sharding (models::parameters_on_rank: its layers' share over
    // TP plus the embedding / LM head on the first / last stage). Their gradients become ready in backward
    // order: LM head, layers last to first, embedding. Expert parameters are reduced over the same DP
    // group here (their smaller expert-data-parallel group is not modelled yet).
    const double rank_params = models::parameters_on_rank(s_.model, t_, stage).total();
    const double emb_params = models::embedding_parameters(s_.model) / t_.tp;
    const double first_emb = first ? (s_.model.untie_embeddings ? emb_params / 2 : emb_params) : 0;
    const double last_emb = last && t_.pp > 1 ? std::min(emb_params / (s_.model.untie_embeddings ? 2 : 1), rank_params - first_emb) : 0;
    const double layer_params = (rank_params - first_emb - last_emb) / layers;

    const auto order = pipeline_order(t_.pipeline_schedule, t_.pp, m, stage);
    std::vector<int> dp_members = layout_.group(ProcessGroup::dp, global);
    const bool reduce_grads = dp_members.size() > 1;
    std::vector<TaskId> grad_reductions;
    // Gradient buckets of the last micro-batch's backward, in the order they fill up. With
    // overlap_grad_reduce each is reduced as soon as it is full; without, all are reduced (the same
    // buckets) after the backward pass ends.
    double bucket = 0;
    std::vector<double> deferred;
    auto reduce_bucket = [&](double params, int mb) {
      const CollectiveKind kind = t_.zero_stage >= 1 ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce;
      const TaskId c = emit_collective(e, StreamKind::comm_dp, Category::dp_comm, kind, params * kGradBytes, dp_members, 0,
                                       t_.zero_stage >= 1 ? "grad-reduce-scatter" : "grad-all-reduce", mb);
      after_producers(e, c);
      grad_reductions.push_back(c);
    };
    auto close_bucket = [&](int mb) {
      if (bucket <= 0 || !reduce_grads) return;
      if (t_.overlap_grad_reduce)
        reduce_bucket(bucket, mb);
      else
        deferred.push_back(bucket);
      bucket = 0;
    };
    const double bucket_limit = s_.simulation.grad_bucket_params;
    auto add_grads = [&](double params, int mb, bool last_pass) {
      if (!last_pass || !reduce_grads) return;
      bucket += params;
      if (bucket >= bucket_limit) close_bucket(mb);
    };

    for (const PipelineAction& a : order) {
      const int mb = a.micro_batch;
      if (a.forward) {
        if (!first) e.wait_for.push_back(emit_p2p(e, StreamKind::pp_recv_fwd, stage - 1, p2p_bytes, mb));
        if (first) run_ops(e, embedding_.forward, mb, false);
        for (int l = 0; l < layers; ++l) run_ops(e, layer_.forward, mb, false);
        if (last) run_ops(e, head_.forward, mb, false);
        if (!last) after_producers(e, emit_p2p(e, StreamKind::pp_send_fwd, stage + 1, p2p_bytes, mb));
      } else {
        const bool last_pass = mb == m - 1;
        if (!last) e.wait_for.push_back(emit_p2p(e, StreamKind::pp_recv_bwd, stage + 1, p2p_bytes, mb));
        if (last) {
          run_ops(e, head_.backward, mb, true);
          add_grads(last_emb, mb, last_pass);
        }
        for (int l = 0; l < layers; ++l) {
          run_ops(e, layer_.backward, mb, true);
          add_grads(layer_params, mb, last_pass);
        }
        if (first) {
          run_ops(e, embedding_.backward, mb, true);
          add_grads(first_emb, mb, last_pass);
        }
        if (!first) after_producers(e, emit_p2p(e, StreamKind::pp_send_bwd, stage - 1, p2p_bytes, mb));
        if (last_pass) {
          close_bucket(mb);
          for (double params : deferred) reduce_bucket(params, mb);
        }
      }
    }

    // Optimizer step after every gradient reduction; ZeRO gathers the updated parameter shards back.
    for (TaskId c : grad_reductions) e.wait_for.push_back(c);
    const double shard = t_.zero_stage >= 1 ? rank_params / t_.dp : rank_params;
    emit_compute(e, models::optimizer_op(shard), Category::optimizer, -1);
    if (t_.zero_stage >= 1 && reduce_grads) {
      const TaskId gather = emit_collective(e, StreamKind::comm_dp, Category::dp_comm, CollectiveKind::all_gather,
                                            rank_params * kParamBytes, dp_members, 1, "param-all-gather", -1);
      after_producers(e, gather);
    }
  }

  const Scenario& s_;
  const models::ComputeProfile& profile_;
  const models::TrainingConfig& t_;
  Layout layout_;
  models::LayerOps layer_, embedding_, head_;
  TaskGraph* g_ = nullptr;
  std::vector<double>* flops_ = nullptr;
  std::map<std::tuple<int, int, int>, std::vector<std::uint32_t>> collectives_;
  std::set<std::uint32_t> mirrored_;
};

}  // namespace

StepPlan build_step(const Scenario& s, const models::ComputeProfile& profile) {
  return Builder(s, profile).build();
}

}  // namespace cs::sim
