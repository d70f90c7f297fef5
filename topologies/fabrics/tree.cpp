// The two- and three-tier tree fabric shared by fat-tree, ethernet and rail-optimized (tree.hpp).
//
// Cabling. NICs take leaf down-ports as the registration places them (in order for fat-tree and ethernet:
// global NIC n*N + j sits on leaf (n*N + j) / leaf_radix; rail-optimized: NIC j of every node of a block of
// leaf_radix nodes sits on rail leaf block*N + j, with nodes <= leaf_radix simply leaf j). A leaf with d
// used down-ports gets ceil(d / oversubscription) up-links, one to each of spines 0..; the spine count is
// the largest up-link count. Spines are logical planes of unbounded radix: a real spine layer of bounded
// radix that provides the same up-link capacity behaves the same for the analytical and flow models. One
// leaf: no spines (one node has no scale-out at all: cluster.cpp builds no NICs and calls no fabric).
// Three tiers: leaf l is in pod l / leaves_per_pod and its up-links go to its pod's spines 0..u_l-1 (a pod
// has as many spines as its largest u_l). Pod spine s has d_s down-links (leaves of the pod with u_l > s)
// and ceil(d_s / spine_oversubscription) up-links, to cores 0.. of core plane s; plane s has as many cores
// as its largest such count. One pod: no cores. Planes keep every inter-pod path leaf -> spine s -> core
// (s, k) -> spine s -> leaf, so the equal-cost set is {s < min(u_A, u_B)} x {k < min(c_A,s, c_B,s)}.
// Vertices: leaves, then spines (pod by pod), then cores (plane by plane); every cable carries the NIC
// link's payload bandwidth and per-hop latency.
//
// Routes: one ecmp_pick per choice over a count known in O(1): which spine (decision 1, among
// s < min(u_A, u_B): spine s of a pod reaches exactly the pod's leaves with u_l > s), which core
// (decision 2, among k < min(c_A,s, c_B,s) in plane s).
#include "topologies/fabrics/tree.hpp"

#include <algorithm>
#include <cmath>

#include "sim/base/check.hpp"
#include "sim/base/units.hpp"
#include "topologies/cluster_impl.hpp"

namespace cs::topo::tree {
namespace {

using detail::kUs;

std::size_t at(int i) { return static_cast<std::size_t>(i); }
int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Cables needed to carry `down` cables' worth of capacity at ratio `oversub`. The epsilon keeps e.g.
// 16 / (16/3) from rounding 3.0000000001 up to 4.
int up_links_for(int down, double oversub) {
  return static_cast<int>(std::ceil(down / oversub - 1e-9));
}

// Where each group starts when groups of `sizes` are numbered end to end after `total`; `total` ends at
// the sum.
std::vector<int> group_starts(const std::vector<int>& sizes, int& total) {
  std::vector<int> first(sizes.size(), 0);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    first[i] = total;
    total += sizes[i];
  }
  return first;
}

// Leaves and their NIC cables; returns each leaf's used down-ports.
std::vector<int> cable_leaves(Cluster::Impl& c, double net_Bps, double hop_s) {
  const ClusterSpec& s = c.spec;
  const int n_nics = s.nics_per_node;
  c.first_leaf = static_cast<int>(c.vertices.size());
  for (int leaf = 0; leaf < c.num_leaves; ++leaf) c.add_vertex(VertexKind::leaf, -1, leaf);
  std::vector<int> down_ports(at(c.num_leaves), 0);
  c.nic_up_edge.assign(at(s.nodes * n_nics), -1);
  c.nic_down_edge.assign(at(s.nodes * n_nics), -1);
  for (int i = 0; i < s.nodes * n_nics; ++i) {
    const int leaf = c.nic_leaf[at(i)];
    CS_CHECK(leaf >= 0 && leaf < c.num_leaves);
    ++down_ports[at(leaf)];
    const int e = c.add_cable(c.first_nic + i, c.first_leaf + leaf, EdgeKind::network, net_Bps, hop_s);
    c.nic_up_edge[at(i)] = e;
    c.nic_down_edge[at(i)] = e + 1;
  }
  return down_ports;
}

// Core tier: pod spine s -> core plane s.
void cable_cores(Cluster::Impl& c, const std::vector<int>& pod_spines, const std::vector<int>& spine_down, double net_Bps,
                 double hop_s) {
  const ClusterSpec& s = c.spec;
  const int planes = *std::max_element(pod_spines.begin(), pod_spines.end());
  std::vector<int> plane_cores(at(planes), 0);
  for (int pod = 0; pod < c.num_pods; ++pod) {
    for (int p = 0; p < pod_spines[at(pod)]; ++p) {
      const int spine = c.pod_first_spine[at(pod)] + p;
      c.spine_up_count[at(spine)] = up_links_for(spine_down[at(spine)], s.spine_oversubscription);
      c.max_spine_up = std::max(c.max_spine_up, c.spine_up_count[at(spine)]);
      plane_cores[at(p)] = std::max(plane_cores[at(p)], c.spine_up_count[at(spine)]);
    }
  }
  const std::vector<int> plane_first_core = group_starts(plane_cores, c.num_cores);
  for (int core = 0; core < c.num_cores; ++core) c.add_vertex(VertexKind::core, -1, core);
  c.spine_up_edge.assign(at(c.num_spines * c.max_spine_up), -1);
  c.spine_down_edge.assign(at(c.num_spines * c.max_spine_up), -1);
  for (int pod = 0; pod < c.num_pods; ++pod) {
    for (int p = 0; p < pod_spines[at(pod)]; ++p) {
      const int spine = c.pod_first_spine[at(pod)] + p;
      for (int k = 0; k < c.spine_up_count[at(spine)]; ++k) {
        const int core = plane_first_core[at(p)] + k;
        const int e = c.add_cable(c.first_spine + spine, c.first_core + core, EdgeKind::network, net_Bps, hop_s);
        c.spine_up_edge[at(spine * c.max_spine_up + k)] = e;
        c.spine_down_edge[at(spine * c.max_spine_up + k)] = e + 1;
      }
    }
  }
}

}  // namespace

Fabric fabric(std::string_view name, std::string_view description, bool rails, void (*place_nics)(Cluster::Impl&)) {
  Fabric f{name, description, rails, keys(), levels};
  f.place_nics = place_nics;
  f.build = cable_tree;
  f.group_level = group_level;
  f.route = route;
  return f;
}

std::vector<FabricKey> keys() {
  return {
      {"oversubscription", nullptr, &ClusterSpec::oversubscription, 1.0},
      {"leaf_radix", &ClusterSpec::leaf_radix, nullptr, 32},
      {"tiers", &ClusterSpec::tiers, nullptr, 2},
      {"leaves_per_pod", &ClusterSpec::leaves_per_pod, nullptr, 8},
      {"spine_oversubscription", nullptr, &ClusterSpec::spine_oversubscription, 1.0},
  };
}

std::vector<FabricLevel> loaded_levels(const ClusterSpec& spec) {
  return {{"leaf", 1.0, 2}, {"spine", spec.oversubscription, 4}, {"core", spec.spine_oversubscription, 6}};
}

std::vector<FabricLevel> levels(const ClusterSpec& spec) {
  std::vector<FabricLevel> out = loaded_levels(spec);
  if (spec.tiers != 3) out.pop_back();
  return out;
}

void place_nics_in_order(Cluster::Impl& c) {
  const ClusterSpec& s = c.spec;
  c.nic_leaf.assign(at(s.nodes * s.nics_per_node), -1);
  c.num_leaves = ceil_div(s.nodes * s.nics_per_node, s.leaf_radix);
  for (int i = 0; i < s.nodes * s.nics_per_node; ++i) c.nic_leaf[at(i)] = i / s.leaf_radix;
}

void cable_tree(Cluster::Impl& c) {
  const ClusterSpec& s = c.spec;
  CS_CHECK(s.tiers == 2 || s.tiers == 3);
  CS_CHECK(s.oversubscription > 0);
  CS_CHECK(s.leaf_radix >= 1);
  if (s.tiers == 3) CS_CHECK(s.leaves_per_pod >= 1 && s.spine_oversubscription > 0);
  const double net_Bps = s.nic.payload_GBps() * kGBps;
  const double hop_s = s.nic.latency_us * kUs;
  const std::vector<int> down_ports = cable_leaves(c, net_Bps, hop_s);

  // Leaf tier: capacity up = capacity down / oversubscription, rounded up to whole cables.
  c.leaf_up_count.assign(at(c.num_leaves), 0);
  c.leaf_pod.assign(at(c.num_leaves), 0);
  const int per_pod = s.tiers == 3 ? s.leaves_per_pod : std::max(1, c.num_leaves);
  c.num_pods = ceil_div(c.num_leaves, per_pod);
  c.first_spine = static_cast<int>(c.vertices.size());
  c.first_core = c.first_spine;
  c.num_spines = 0;
  if (c.num_leaves <= 1) return;
  for (int leaf = 0; leaf < c.num_leaves; ++leaf) {
    CS_CHECK(down_ports[at(leaf)] <= s.leaf_radix);
    c.leaf_pod[at(leaf)] = leaf / per_pod;
    c.leaf_up_count[at(leaf)] = up_links_for(down_ports[at(leaf)], s.oversubscription);
    c.max_leaf_up = std::max(c.max_leaf_up, c.leaf_up_count[at(leaf)]);
  }
  std::vector<int> pod_spines(at(c.num_pods), 0);
  for (int leaf = 0; leaf < c.num_leaves; ++leaf) {
    int& n = pod_spines[at(c.leaf_pod[at(leaf)])];
    n = std::max(n, c.leaf_up_count[at(leaf)]);
  }
  c.pod_first_spine = group_starts(pod_spines, c.num_spines);
  for (int spine = 0; spine < c.num_spines; ++spine) c.add_vertex(VertexKind::spine, -1, spine);
  c.leaf_up_edge.assign(at(c.num_leaves * c.max_leaf_up), -1);
  c.leaf_down_edge.assign(at(c.num_leaves * c.max_leaf_up), -1);
  std::vector<int> spine_down(at(c.num_spines), 0);
  for (int leaf = 0; leaf < c.num_leaves; ++leaf) {
    for (int k = 0; k < c.leaf_up_count[at(leaf)]; ++k) {
      const int spine = c.pod_first_spine[at(c.leaf_pod[at(leaf)])] + k;
      ++spine_down[at(spine)];
      const int e = c.add_cable(c.first_leaf + leaf, c.first_spine + spine, EdgeKind::network, net_Bps, hop_s);
      c.leaf_up_edge[at(leaf * c.max_leaf_up + k)] = e;
      c.leaf_down_edge[at(leaf * c.max_leaf_up + k)] = e + 1;
    }
  }

  c.first_core = static_cast<int>(c.vertices.size());
  c.spine_up_count.assign(at(c.num_spines), 0);
  if (s.tiers != 3 || c.num_pods <= 1) return;
  cable_cores(c, pod_spines, spine_down, net_Bps, hop_s);
}

int group_level(const Cluster::Impl& c, const std::map<int, std::set<int>>& nics_per_node) {
  std::set<int> leaves;
  for (const auto& [node, nics] : nics_per_node) {
    for (const int j : nics) leaves.insert(c.leaf_of_nic(node, j));
  }
  if (leaves.size() == 1) return 0;
  // NCCL lines channels up on same-index NICs across nodes: when every node uses the same local NICs
  // and NIC j of all of them sits on one (rail) leaf, each cross-node ring step stays under a leaf.
  const std::set<int>& ref = nics_per_node.begin()->second;
  bool rails_line_up = true;
  for (const auto& [node, nics] : nics_per_node) {
    if (nics != ref) rails_line_up = false;
  }
  if (rails_line_up) {
    const int ref_node = nics_per_node.begin()->first;
    for (const int j : ref) {
      for (const auto& [node, nics] : nics_per_node) {
        if (c.leaf_of_nic(node, j) != c.leaf_of_nic(ref_node, j)) rails_line_up = false;
      }
    }
  }
  if (rails_line_up) return 0;
  const int pod = c.leaf_pod[at(*leaves.begin())];
  const bool one_pod = std::all_of(leaves.begin(), leaves.end(), [&](int l) { return c.leaf_pod[at(l)] == pod; });
  return one_pod ? 1 : 2;
}

void route(const Cluster::Impl& c, std::uint64_t flow_id, int src, int dst, int nic_a, int nic_b, std::vector<int>& out) {
  const int leaf_a = c.nic_leaf[at(nic_a)];
  const int leaf_b = c.nic_leaf[at(nic_b)];
  if (leaf_a == leaf_b) return;
  const int up = std::min(c.leaf_up_count[at(leaf_a)], c.leaf_up_count[at(leaf_b)]);
  CS_CHECK(up >= 1);
  const int s = detail::ecmp_pick(flow_id, src, dst, 1, up);
  out.push_back(c.leaf_up_edge[at(leaf_a * c.max_leaf_up + s)]);
  const int pod_a = c.leaf_pod[at(leaf_a)];
  const int pod_b = c.leaf_pod[at(leaf_b)];
  if (pod_a != pod_b) {
    const int spine_a = c.pod_first_spine[at(pod_a)] + s;
    const int spine_b = c.pod_first_spine[at(pod_b)] + s;
    const int cores = std::min(c.spine_up_count[at(spine_a)], c.spine_up_count[at(spine_b)]);
    CS_CHECK(cores >= 1);
    const int k = detail::ecmp_pick(flow_id, src, dst, 2, cores);
    out.push_back(c.spine_up_edge[at(spine_a * c.max_spine_up + k)]);
    out.push_back(c.spine_down_edge[at(spine_b * c.max_spine_up + k)]);
  }
  out.push_back(c.leaf_down_edge[at(leaf_b * c.max_leaf_up + s)]);
}

}  // namespace cs::topo::tree
