#include "sim/layout.hpp"

#include "sim/check.hpp"

namespace cs::sim {

using models::ProcessGroup;

Layout::Layout(int tp, int cp, int dp, int pp, int ep) : tp_(tp), cp_(cp), dp_(dp), pp_(pp), ep_(ep) {
  CS_CHECK(tp >= 1 && cp >= 1 && dp >= 1 && pp >= 1 && ep >= 1 && dp % ep == 0);
}

int Layout::size(ProcessGroup g) const {
  switch (g) {
    case ProcessGroup::tp: return tp_;
    case ProcessGroup::cp: return cp_;
    case ProcessGroup::ep: return ep_;
    case ProcessGroup::dp: return dp_;
    case ProcessGroup::pp: return pp_;
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

std::vector<int> Layout::group(ProcessGroup g, int r) const {
  const RankCoord base = coord(r);
  std::vector<int> out;
  out.reserve(static_cast<std::size_t>(size(g)));
  for (int i = 0; i < size(g); ++i) {
    RankCoord c = base;
    switch (g) {
      case ProcessGroup::tp: c.tp = i; break;
      case ProcessGroup::cp: c.cp = i; break;
      case ProcessGroup::ep: c.dp = base.dp / ep_ * ep_ + i; break;
      case ProcessGroup::dp: c.dp = i; break;
      case ProcessGroup::pp: c.pp = i; break;
    }
    out.push_back(rank(c));
  }
  return out;
}

}  // namespace cs::sim
