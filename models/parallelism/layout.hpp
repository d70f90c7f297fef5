#pragma once
// Rank placement and process groups, in Megatron-Core's default order tp-cp-ep-dp-pp: TP is innermost
// (consecutive ranks, so a TP group sits inside one node on NVLink), PP outermost. Rank r has coordinates
//   tp = r % TP,  cp = (r / TP) % CP,  dp = (r / (TP CP)) % DP,  pp = r / (TP CP DP)
// and sits on GPU r (node r / gpus_per_node). Experts fold over the same ranks (Megatron-Core's MoE
// parallel folding): a stage's TP x CP x DP ranks, flat index j = tp + TP (cp + CP dp), are re-read in
// the expert order etp-ep-edp, j = etp + ETP (ep + EP edp), with ETP x EP x EDP = TP x CP x DP. With
// ETP = TP (Megatron's default) and CP = 1 an EP group is EP consecutive DP indices at a fixed TP index:
// expert parallelism carved out of data parallelism.
//   ep         same etp and edp, every ep index (the all-to-all group)
//   etp        same ep and edp: ETP consecutive ranks (the expert-TP all-gather / reduce-scatter group)
//
// Gradient and parameter-sharding groups (what the data-parallel side of the step runs on):
//   dp_cp      the DP x CP ranks of one (tp, pp) position: Megatron reduces dense gradients over them,
//              since CP ranks hold the same weights and see different tokens; ZeRO shards dense states
//              over them. Size D = DP * CP, member index j = cp + CP * dp.
//   expert_dp  the ranks holding the same expert slices: same etp and ep, every edp index: size
//              TP CP DP / (ETP EP) (Megatron's expert-data-parallel group).
//   shard      FSDP HYBRID_SHARD: the dp_cp group cut into consecutive blocks of S members (S = the
//              DP x CP ranks of one node, see TrainingConfig::fsdp_shard_size); parameters are sharded
//              and gathered inside a block.
//   replica    the members of dp_cp with the same index inside their block (one per block, D / S of
//              them, one per node): the sharded gradients are all-reduced across them.
// With S = 0 (no hybrid sharding) shard = dp_cp and replica = the rank alone.
#include <vector>

#include "models/workload/op.hpp"

namespace cs::sim {

struct RankCoord {
  int tp = 0, cp = 0, dp = 0, pp = 0;
};

// Every kind of process group the step builder runs collectives on.
enum class GroupKind { tp, cp, ep, dp, pp, dp_cp, expert_dp, shard, replica, etp };
GroupKind group_kind(models::ProcessGroup g);

class Layout {
 public:
  // etp 0: expert TP = tp.
  Layout(int tp, int cp, int dp, int pp, int ep, int shard_size = 0, int etp = 0);
  int world_size() const { return tp_ * cp_ * dp_ * pp_; }
  int size(models::ProcessGroup g) const { return size(group_kind(g)); }
  int size(GroupKind g) const;
  int rank(const RankCoord& c) const { return c.tp + tp_ * (c.cp + cp_ * (c.dp + dp_ * c.pp)); }
  RankCoord coord(int rank) const;
  // Global ranks (= GPU indices) of the group of `g` that contains `rank`, in group order.
  std::vector<int> group(models::ProcessGroup g, int rank) const { return group(group_kind(g), rank); }
  std::vector<int> group(GroupKind g, int rank) const;
  int tp() const { return tp_; }
  int cp() const { return cp_; }
  int dp() const { return dp_; }
  int pp() const { return pp_; }
  int ep() const { return ep_; }
  int etp() const { return etp_; }
  int shard_size() const { return shard_; }  // members of a HYBRID_SHARD block (= DP * CP without)

 private:
  int tp_, cp_, dp_, pp_, ep_, shard_, etp_;
};

}  // namespace cs::sim
