#include "models/parallelism/layout.hpp"

#include "sim/base/check.hpp"

namespace cs::sim {

using models::ProcessGroup;

GroupKind group_kind(ProcessGroup g) {
  switch (g) {
    case ProcessGroup::tp: return GroupKind::tp;
    case ProcessGroup::cp: return GroupKind::cp;
    case ProcessGroup::ep: return GroupKind::ep;
    case ProcessGroup::dp: return GroupKind::dp;
    case ProcessGroup::pp: return GroupKind::pp;
    case ProcessGroup::etp: return GroupKind::etp;
  }
  return GroupKind::tp;
}

Layout::Layout(int tp, int cp, int dp, int pp, int ep, int shard_size, int etp)
    : tp_(tp), cp_(cp), dp_(dp), pp_(pp), ep_(ep), shard_(shard_size > 0 ? shard_size : dp * cp), etp_(etp > 0 ? etp : tp) {
  CS_CHECK(tp >= 1 && cp >= 1 && dp >= 1 && pp >= 1 && ep >= 1 && (tp * cp * dp) % (ep * etp_) == 0);
  CS_CHECK(shard_ >= 1 && (dp * cp) % shard_ == 0);
}

int Layout::size(GroupKind g) const {
  switch (g) {
    case GroupKind::tp: return tp_;
    case GroupKind::cp: return cp_;
    case GroupKind::ep: return ep_;
    case GroupKind::dp: return dp_;
    case GroupKind::pp: return pp_;
    case GroupKind::dp_cp: return dp_ * cp_;
    case GroupKind::expert_dp: return tp_ * cp_ * dp_ / (ep_ * etp_);
    case GroupKind::etp: return etp_;
    case GroupKind::shard: return shard_;
    case GroupKind::replica: return dp_ * cp_ / shard_;
  }
  return 1;
}

RankCoord Layout::coord(int rank) const {
  CS_CHECK(rank >= 0 && rank < world_size());
  RankCoord c;
  c.tp = rank % tp_;
  c.cp = (rank / tp_) % cp_;
  c.dp = (rank / (tp_ * cp_)) % dp_;
  c.pp = rank / (tp_ * cp_ * dp_);
  return c;
}

std::vector<int> Layout::group(GroupKind g, int r) const {
  const RankCoord base = coord(r);
  std::vector<int> out;
  out.reserve(static_cast<std::size_t>(size(g)));
  // Members of the DP x CP group by index j = cp + CP * dp.
  auto dp_cp_member = [&](int j) {
    RankCoord c = base;
    c.cp = j % cp_;
    c.dp = j / cp_;
    return rank(c);
  };
  const int j_self = base.cp + cp_ * base.dp;
  // The expert view of the stage's TP x CP x DP ranks (header): flat index J = tp + TP (cp + CP dp)
  // read as etp + ETP (ep + EP edp).
  const int stage_ranks = tp_ * cp_ * dp_, stage_base = base.pp * stage_ranks;
  const int J = rank(base) - stage_base;
  const int e_tp = J % etp_, e_ep = (J / etp_) % ep_, e_dp = J / (etp_ * ep_);
  auto expert_member = [&](int etp, int ep, int edp) { return stage_base + etp + etp_ * (ep + ep_ * edp); };
  switch (g) {
    case GroupKind::ep:
      for (int i = 0; i < ep_; ++i) out.push_back(expert_member(e_tp, i, e_dp));
      return out;
    case GroupKind::etp:
      for (int i = 0; i < etp_; ++i) out.push_back(expert_member(i, e_ep, e_dp));
      return out;
    case GroupKind::dp_cp:
      for (int j = 0; j < dp_ * cp_; ++j) out.push_back(dp_cp_member(j));
      return out;
    case GroupKind::expert_dp:
      for (int q = 0; q < stage_ranks / (etp_ * ep_); ++q) out.push_back(expert_member(e_tp, e_ep, q));
      return out;
    case GroupKind::shard:
      for (int j = j_self / shard_ * shard_; j < (j_self / shard_ + 1) * shard_; ++j) out.push_back(dp_cp_member(j));
      return out;
    case GroupKind::replica:
      for (int j = j_self % shard_; j < dp_ * cp_; j += shard_) out.push_back(dp_cp_member(j));
      return out;
    default: break;
  }
  for (int i = 0; i < size(g); ++i) {
    RankCoord c = base;
    switch (g) {
      case GroupKind::tp: c.tp = i; break;
      case GroupKind::cp: c.cp = i; break;
      case GroupKind::dp: c.dp = i; break;
      case GroupKind::pp: c.pp = i; break;
      default: CS_CHECK(false);
    }
    out.push_back(rank(c));
  }
  return out;
}

}  // namespace cs::sim
