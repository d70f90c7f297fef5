#pragma once
// Rank placement and process groups, in Megatron-Core's default order tp-cp-ep-dp-pp: TP is innermost
// (consecutive ranks, so a TP group sits inside one node on NVLink), PP outermost. Rank r has coordinates
//   tp = r % TP,  cp = (r / TP) % CP,  dp = (r / (TP CP)) % DP,  pp = r / (TP CP DP)
// and sits on GPU r (node r / gpus_per_node). Expert parallelism is carved out of the data-parallel
// dimension (Megatron-Core): an EP group is EP consecutive DP indices.
#include <vector>

#include "models/op.hpp"

namespace cs::sim {

struct RankCoord {
  int tp = 0, cp = 0, dp = 0, pp = 0;
};

class Layout {
 public:
  Layout(int tp, int cp, int dp, int pp, int ep);
  int world_size() const { return tp_ * cp_ * dp_ * pp_; }
  int size(models::ProcessGroup g) const;
  int rank(const RankCoord& c) const { return c.tp + tp_ * (c.cp + cp_ * (c.dp + dp_ * c.pp)); }
  RankCoord coord(int rank) const;
  // Global ranks (= GPU indices) of the group of `g` that contains `rank`, in group order.
  std::vector<int> group(models::ProcessGroup g, int rank) const;
  int tp() const { return tp_; }
  int cp() const { return cp_; }
  int dp() const { return dp_; }
  int pp() const { return pp_; }
  int ep() const { return ep_; }

 private:
  int tp_, cp_, dp_, pp_, ep_;
};

}  // namespace cs::sim
