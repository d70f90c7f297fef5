#include "sim/network/token_dispatch.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "sim/base/check.hpp"

namespace cs::sim {

namespace {

// C(n, r) as a double (n up to 65535; only ratios of these are used).
double choose(int n, int r) {
  if (r < 0 || r > n) return 0;
  return std::exp(std::lgamma(n + 1.0) - std::lgamma(r + 1.0) - std::lgamma(n - r + 1.0));
}

// C(pool - s, k) / C(pool, k): none of k distinct draws from `pool` lands in a given s of them.
double miss_all(int pool, int s, int k) {
  double p = 1;
  for (int i = 0; i < k; ++i) {
    const int left = pool - s - i;
    if (left <= 0) return 0;
    p *= static_cast<double>(left) / (pool - i);
  }
  return p;
}

}  // namespace

double dispatch_hit_probability(const TokenRouting& r, int lo, int hi) {
  const int E = r.experts(), k = r.topk();
  const int G = r.groups() > 1 ? r.groups() : 1, g = r.groups() > 1 ? r.group_topk() : 1;
  CS_CHECK(E > 0 && k > 0 && E % G == 0 && g >= 1 && g <= G && 0 <= lo && lo < hi && hi <= E);
  const int size = E / G, pool = g * size;
  CS_CHECK(k <= pool);
  // The groups [first, last] the unit overlaps, and how many of the unit's experts lie in each.
  const int first = lo / size, last = (hi - 1) / size, m = last - first + 1;
  // ways[j][s]: subsets of j of those groups whose overlaps sum to s (counted as doubles).
  const int units = hi - lo;
  std::vector<std::vector<double>> ways(static_cast<std::size_t>(m) + 1, std::vector<double>(static_cast<std::size_t>(units) + 1, 0));
  ways[0][0] = 1;
  for (int grp = first; grp <= last; ++grp) {
    const int o = std::min(hi, (grp + 1) * size) - std::max(lo, grp * size);
    for (int j = grp - first; j >= 0; --j)
      for (int s = units - o; s >= 0; --s)
        ways[static_cast<std::size_t>(j) + 1][static_cast<std::size_t>(s + o)] += ways[static_cast<std::size_t>(j)][static_cast<std::size_t>(s)];
  }
  // A token selects g of the G groups uniformly: j of the m given (each such subset) and g - j of the
  // other G - m; then its k experts among the g size selected ones.
  const double all = choose(G, g);
  double hit = 0;
  for (int j = 1; j <= std::min(m, g); ++j) {
    const double rest = choose(G - m, g - j) / all;
    if (rest == 0) continue;
    for (int s = 1; s <= units; ++s) {
      const double w = ways[static_cast<std::size_t>(j)][static_cast<std::size_t>(s)];
      if (w != 0) hit += w * rest * (1 - miss_all(pool, s, k));
    }
  }
  return hit;
}

DispatchShares dispatch_shares(const TokenRouting& r, int ranks, int nodes, int per_node) {
  CS_CHECK(r.per_node() && ranks >= 1 && nodes >= 1 && nodes * per_node == ranks && r.experts() % ranks == 0);
  const int per_rank = r.experts() / ranks, per_unit_node = per_rank * per_node;
  double node_hits = 0, rank_hits = 0;
  for (int u = 0; u < nodes; ++u) node_hits += dispatch_hit_probability(r, u * per_unit_node, (u + 1) * per_unit_node);
  for (int i = 0; i < ranks; ++i) rank_hits += dispatch_hit_probability(r, i * per_rank, (i + 1) * per_rank);
  const double k = r.topk();
  DispatchShares d;
  d.network = node_hits * (nodes - 1) / nodes / k;
  d.scaleup = rank_hits * (per_node - 1) / per_node / k;
  return d;
}

}  // namespace cs::sim
