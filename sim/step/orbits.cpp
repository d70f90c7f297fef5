#include "sim/step/orbits.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>

#include "models/parallelism/layout.hpp"

namespace cs::sim {

namespace {

int& axis_of(RankCoord& c, int axis) { return axis == 0 ? c.tp : axis == 1 ? c.cp : c.dp; }

// Does swapping indices a and b of `axis` (on every rank) map every group of `kind` onto a group of that
// kind, member by member, or onto itself? Groups never span stages, so stage 0 shows all of them.
bool swap_preserves(const Layout& layout, GroupKind kind, int axis, int a, int b) {
  auto swapped = [&](int r) {
    RankCoord c = layout.coord(r);
    int& x = axis_of(c, axis);
    x = x == a ? b : x == b ? a : x;
    return layout.rank(c);
  };
  const int stage = layout.tp() * layout.cp() * layout.dp();
  for (int r = 0; r < stage; ++r) {
    const std::vector<int> g = layout.group(kind, r);
    if (g.front() != r) continue;  // each group once, from its first member
    std::vector<int> image;
    image.reserve(g.size());
    for (int m : g) image.push_back(swapped(m));
    const std::vector<int> target = layout.group(kind, image.front());
    if (image == target) continue;
    std::vector<int> a_sorted = image, g_sorted = g;
    std::sort(a_sorted.begin(), a_sorted.end());
    std::sort(g_sorted.begin(), g_sorted.end());
    if (a_sorted != g_sorted) return false;  // neither the same collective instance nor a translate
  }
  return true;
}

}  // namespace

Orbits find_orbits(const Scenario& s, const std::vector<int>& gpus) {
  const models::TrainingConfig& t = s.training;
  const Layout layout(t.tp, t.cp, t.dp, t.pp, t.ep, t.zero_stage >= 3 ? t.fsdp_shard_size : 0, t.expert_tp());
  const std::array<int, 3> sizes = {t.tp, t.cp, t.dp};
  Orbits o;
  auto one_type = [&](Orbits& out) {
    for (std::size_t a = 0; a < 3; ++a) {
      out.type_of[a].assign(static_cast<std::size_t>(sizes[a]), 0);
      out.rep[a] = {0};
      out.count[a] = {sizes[a]};
    }
  };
  if (!s.simulation.symmetry) return o;
  const Heterogeneity& h = s.heterogeneity;
  if (!h.any()) {
    o.batched = true;
    one_type(o);
    return o;
  }
  if (!gpus.empty()) {
    o.fallback = "a job of a multi-job scenario on unequal GPUs";
    return o;
  }
  // Signatures: the node group's GPU type (by group) and the slowdown.
  const int world = layout.world_size();
  const bool slowed = !h.stragglers.empty() || h.cv > 0;
  std::vector<std::pair<std::uintptr_t, double>> sig(static_cast<std::size_t>(world));
  for (int r = 0; r < world; ++r) {
    const models::GpuSpec* gpu = h.groups.empty() ? nullptr : h.node_gpu(r / s.cluster.gpus_per_node);
    sig[static_cast<std::size_t>(r)] = {reinterpret_cast<std::uintptr_t>(gpu), slowed ? h.slowdown(r, s.cluster.gpus_per_node) : 1.0};
  }
  for (int a = 0; a < 3; ++a) {
    const auto ax = static_cast<std::size_t>(a);
    // Index i's signatures over every combination of the other coordinates, in rank order.
    std::vector<std::vector<std::pair<std::uintptr_t, double>>> keys(static_cast<std::size_t>(sizes[ax]));
    for (int r = 0; r < world; ++r) {
      RankCoord c = layout.coord(r);
      keys[static_cast<std::size_t>(axis_of(c, a))].push_back(sig[static_cast<std::size_t>(r)]);
    }
    std::map<std::vector<std::pair<std::uintptr_t, double>>, int> type_of_key;
    o.type_of[ax].resize(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const auto [it, fresh] = type_of_key.emplace(std::move(keys[i]), static_cast<int>(o.rep[ax].size()));
      if (fresh) {
        o.rep[ax].push_back(static_cast<int>(i));
        o.count[ax].push_back(0);
      }
      o.type_of[ax][i] = it->second;
      ++o.count[ax][static_cast<std::size_t>(it->second)];
    }
  }
  // The groups folded in another order than tp-cp-dp: every swap of equal indices must preserve them.
  std::vector<GroupKind> folded;
  if (s.model.num_moe_experts > 0) folded.insert(folded.end(), {GroupKind::ep, GroupKind::etp, GroupKind::expert_dp});
  if (t.zero_stage >= 3 && layout.shard_size() < layout.size(GroupKind::dp_cp))
    folded.insert(folded.end(), {GroupKind::shard, GroupKind::replica});
  for (GroupKind kind : folded) {
    if (layout.size(kind) < 2) continue;
    for (int a = 0; a < 3; ++a) {
      const auto ax = static_cast<std::size_t>(a);
      for (int i = 0; i < sizes[ax]; ++i) {
        const int rep = o.rep[ax][static_cast<std::size_t>(o.type_of[ax][static_cast<std::size_t>(i)])];
        if (i == rep || swap_preserves(layout, kind, a, rep, i)) continue;
        const bool expert = kind == GroupKind::ep || kind == GroupKind::etp || kind == GroupKind::expert_dp;
        o.fallback = std::string(expert ? "the expert groups (etp-ep-edp folding)" : "the FSDP hybrid-shard blocks") +
                     " do not respect the classes of equal " + (a == 0 ? "TP" : a == 1 ? "CP" : "DP") + " indices";
        o.type_of = {};
        o.rep = {};
        o.count = {};
        return o;
      }
    }
  }
  o.batched = true;
  return o;
}

}  // namespace cs::sim
