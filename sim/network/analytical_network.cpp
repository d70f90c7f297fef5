#include "sim/network/analytical_network.hpp"

#include <algorithm>
#include <bit>
#include <map>
#include <set>
#include <utility>

#include "sim/base/check.hpp"
#include "sim/base/weighted_classes.hpp"

namespace cs::sim {

namespace {

// The inter-node transfers (src GPU, dst GPU) one group's algorithm makes, as FlowNetwork::expand lays
// them out (same node order, channel rotation, tree shape); transfers inside a node are left out.
// With `per_node_dispatch` a pairwise exchange is a per-node token dispatch's (token_dispatch.hpp): each GPU
// sends across nodes only to the GPU of its own local index on each other node. `order` is scratch.
void inter_node_transfers(std::span<const int> gpus, NcclAlgorithm algorithm, bool per_node_dispatch, NodeGroups& node_groups,
                          std::vector<int>& order, std::vector<std::pair<int, int>>& out) {
  const auto node_of = [&](int g) { return node_groups.node(g); };
  if (algorithm == NcclAlgorithm::p2p && gpus.size() == 2) {  // a pipeline pair (as the case below), without the tables
    if (node_of(gpus[0]) != node_of(gpus[1])) out.emplace_back(gpus[0], gpus[1]);
    return;
  }
  const std::span<const std::vector<int>> nodes = node_groups.of(gpus);  // in order of first appearance
  std::size_t k_min = nodes.front().size();
  for (const auto& local : nodes) k_min = std::min(k_min, local.size());
  const int k = static_cast<int>(k_min);
  const int N = static_cast<int>(nodes.size());
  auto add = [&](int a, int b) {
    if (node_of(a) != node_of(b)) out.emplace_back(a, b);
  };
  auto ring = [&](const std::vector<int>& ring_order) {
    for (std::size_t i = 0; i < ring_order.size(); ++i) add(ring_order[i], ring_order[(i + 1) % ring_order.size()]);
  };
  auto local = [&](int node, int i) { return nodes[static_cast<std::size_t>(node)][static_cast<std::size_t>(i)]; };
  switch (algorithm) {
    case NcclAlgorithm::ring:
      for (int ch = 0; ch < k; ++ch) {
        order.clear();
        for (int node = 0; node < N; ++node)
          for (int i = 0; i < k; ++i) order.push_back(local(node, (i + ch) % k));
        ring(order);
      }
      break;
    case NcclAlgorithm::tree:
    case NcclAlgorithm::nvls_tree:  // the heads' trees between the nodes (NVLS inside them crosses no tier)
      for (int ch = 0; ch < k; ++ch)
        for (int t = 0; t < 2; ++t)
          for (int node = 0; node < N; ++node) {
            const int parent = double_binary_tree_parents(N, node)[static_cast<std::size_t>(t)];
            if (parent < 0) continue;
            add(local(node, ch % k), local(parent, ch % k));
            add(local(parent, ch % k), local(node, ch % k));
          }
      break;
    case NcclAlgorithm::hierarchical:
      for (int j = 0; j < k; ++j) {
        order.clear();
        for (int node = 0; node < N; ++node) order.push_back(local(node, j));
        ring(order);
      }
      break;
    case NcclAlgorithm::pairwise:
      if (per_node_dispatch) {
        for (int j = 0; j < k; ++j)
          for (int x = 0; x < N; ++x)
            for (int y = 0; y < N; ++y)
              if (x != y) add(local(x, j), local(y, j));
        break;
      }
      for (int a : gpus)
        for (int b : gpus)
          if (a != b) add(a, b);
      break;
    case NcclAlgorithm::p2p:
      if (gpus.size() == 2) {
        add(gpus[0], gpus[1]);
      } else {
        order.assign(gpus.begin(), gpus.end());
        ring(order);
      }
      break;
    case NcclAlgorithm::nvls:            // inside one node, or across nodes through SHARP:
    case NcclAlgorithm::collnet_direct:  // SHARP reduces in the leaf, so one stream per channel and leaf
    case NcclAlgorithm::collnet_chain:   // climbs; the NIC links carry S/k each way, what B_share charges
      break;
  }
}

// The algorithms whose inter-node part is SHARP's in-network reduction (nccl_model.hpp).
bool sharp_reduction(NcclAlgorithm a) {
  return a == NcclAlgorithm::collnet_direct || a == NcclAlgorithm::collnet_chain || a == NcclAlgorithm::nvls;
}

}  // namespace

AnalyticalNetwork::AnalyticalNetwork(const CollectiveTable& graph, const topo::Cluster& cluster, std::string forced_algorithm,
                                     NcclCalibration calibration)
    : graph_(graph),
      cluster_(cluster),
      costs_(graph.num_groups()),
      forced_algorithm_(std::move(forced_algorithm)),
      calibration_(std::move(calibration)),
      geometry_(graph.num_groups()),
      have_geometry_(graph.num_groups(), false),
      node_groups_(cluster) {}

const AnalyticalNetwork::Cost& AnalyticalNetwork::cost(std::uint32_t collective) {
  const CollectiveSpec c = graph_.collective(collective);
  const int kind = static_cast<int>(c.kind);
  const auto bits = std::bit_cast<std::uint64_t>(c.bytes + 0.0);  // + 0.0: -0 as +0
  const std::uint64_t routing = c.routing.bits();
  auto& memo = costs_[c.group];
  for (const CostMemo& m : memo)
    if (m.kind == kind && m.bytes_bits == bits && m.routing == routing) return *m.cost;
  const auto& gpus = graph_.group(c.group);
  if (!have_geometry_[c.group]) {
    geometry_[c.group] = group_geometry(cluster_, gpus);
    have_geometry_[c.group] = true;
  }
  const GroupGeometry geo = with_dispatch(geometry_[c.group], c.kind, c.routing);
  const bool dispatch = geo.dispatch.per_node();
  AlgorithmChoice cc = choose_algorithm(c.kind, c.bytes, geo, forced_algorithm_, calibration_.any() ? &calibration_ : nullptr);
  if (geo.multi_node && !cluster_.from_file()) {
    // Time the chosen algorithm on the traffic that really crosses each tier (see the header).
    const auto& spec = cluster_.spec();
    GroupGeometry tiered = geo;
    tiered.network_Bps = spec.nic.payload_GBps() * 1e9 * spec.nics_per_node / spec.gpus_per_node /
                         tier_factor(c.group, cc.algorithm, dispatch);
    bool ok = false;
    const AlgorithmChoice timed = estimate(c.kind, c.bytes, tiered, cc.algorithm, cc.protocol, &ok,
                                               calibration_.any() ? &calibration_ : nullptr);
    CS_CHECK(ok);
    cc.duration = timed.duration;
  }
  Cost out{cc.duration, cc.bytes_sent_per_rank, 0};
  if (geo.multi_node) {
    // In a ring over k ranks per node, k - 1 of each node's k hops stay on the scale-up fabric and one
    // crosses the network: a rank's bytes split (k-1)/k scale-up, 1/k scale-out on average.
    const int node0 = cluster_.node_of_gpu(gpus[0]);
    const auto k = static_cast<double>(std::count_if(gpus.begin(), gpus.end(), [&](int g) { return cluster_.node_of_gpu(g) == node0; }));
    out.scaleout_bytes = cc.bytes_sent_per_rank / k;
    out.scaleup_bytes = cc.bytes_sent_per_rank - out.scaleout_bytes;
    if (sharp_reduction(cc.algorithm)) {
      // SHARP: a node's data goes up once and comes back reduced once, S/k per rank through its NIC share
      // (not the ring's 2(n-1)/n S / k); inside the node 2(k-1)/k S (chain, or scatter and gather).
      out.scaleout_bytes = c.bytes / k;
      out.scaleup_bytes = 2 * (k - 1) / k * c.bytes;
    }
    if (cc.algorithm == NcclAlgorithm::pairwise) {
      // An all-to-all is no ring: S / n to each peer, (n - k) / n of S across nodes and (k - 1) / n inside
      // its node (nccl_model.cpp), or a per-node dispatch's shares.
      const double n = static_cast<double>(gpus.size());
      out.scaleout_bytes = dispatch ? geo.dispatch.network * c.bytes : (n - k) / n * c.bytes;
      out.scaleup_bytes = dispatch ? geo.dispatch.scaleup * c.bytes : (k - 1) / n * c.bytes;
    }
  }
  const Cost* stored = &cost_store_.emplace_back(out);
  costs_[c.group].push_back({kind, bits, routing, stored});
  return *stored;
}

void AnalyticalNetwork::tier_capacities() {
  const auto& vertices = cluster_.vertices();
  const auto& edges = cluster_.edges();
  // The fabric's switches (Cluster::switch_level >= 0) are numbered from the smallest such vertex id, so the
  // per-switch tables are as long as the switch range, not the vertex count (10^6 GPUs and NICs).
  int lo = static_cast<int>(vertices.size()), hi = -1, top = -1;
  std::vector<std::int8_t> level(vertices.size(), -1);
  for (std::size_t v = 0; v < vertices.size(); ++v) {
    level[v] = static_cast<std::int8_t>(cluster_.switch_level(static_cast<int>(v)));
    if (level[v] >= 0) {
      lo = std::min(lo, static_cast<int>(v));
      hi = std::max(hi, static_cast<int>(v));
      top = std::max(top, static_cast<int>(level[v]));
    }
  }
  auto lvl = [&](int v) { return static_cast<int>(level[static_cast<std::size_t>(v)]); };
  const auto range = static_cast<std::size_t>(std::max(0, hi - lo + 1));
  auto at = [&](int v) { return static_cast<std::size_t>(v - lo); };
  // A switch's group key: a first-level switch is its own group; a switch above belongs to the group of
  // the switches under it, keyed by the smallest first-level vertex below it (a tree's spine: its pod's
  // first leaf). Levels are keyed bottom up, one pass over the edges per level that has a level above it.
  std::vector<int> key(range, -1);
  for (std::size_t v = 0; v < range; ++v)
    if (lvl(lo + static_cast<int>(v)) == 0) key[v] = lo + static_cast<int>(v);
  for (int l = 1; l < top; ++l) {
    for (const auto& e : edges) {
      if (lvl(e.src) != l - 1 || lvl(e.dst) != l) continue;
      int& k = key[at(e.dst)];
      k = k < 0 ? key[at(e.src)] : std::min(k, key[at(e.src)]);
    }
  }
  // Slots: one per edge into or out of a NIC (each cable counts on its own), then per group key and level
  // l below the top two aggregate resources: the group's links from level l up to level l + 1, and back
  // down (a tree: a leaf's up-links and down-links; a pod's links to and from the cores).
  edge_slot_.assign(edges.size(), -1);
  std::int32_t nic_slots = 0;
  for (std::size_t l = 0; l < edges.size(); ++l)
    if (vertices[static_cast<std::size_t>(edges[l].src)].kind == topo::VertexKind::nic ||
        vertices[static_cast<std::size_t>(edges[l].dst)].kind == topo::VertexKind::nic)
      edge_slot_[l] = nic_slots++;
  const int kinds = 2 * std::max(0, top);
  auto slot = [&](int v, int which) { return nic_slots + static_cast<std::int32_t>(static_cast<std::size_t>(kinds) * at(v)) + which; };
  slot_cap_Bps_.assign(static_cast<std::size_t>(nic_slots) + static_cast<std::size_t>(kinds) * range, 0);
  for (std::size_t l = 0; l < edges.size(); ++l) {
    const auto& e = edges[l];
    const int s = lvl(e.src), d = lvl(e.dst);
    std::int32_t k = edge_slot_[l];
    if (s >= 0 && d == s + 1) k = slot(key[at(e.src)], 2 * s);      // up from level s
    if (d >= 0 && s == d + 1) k = slot(key[at(e.dst)], 2 * d + 1);  // down to level d
    edge_slot_[l] = k;
    if (k >= 0) slot_cap_Bps_[static_cast<std::size_t>(k)] += e.bandwidth_Bps;  // summed in edge order
  }
  slot_units_.assign(slot_cap_Bps_.size(), 0);
  sent_.assign(static_cast<std::size_t>(cluster_.num_gpus()), 0);
  have_capacities_ = true;
}

double AnalyticalNetwork::tier_factor(std::uint32_t group, NcclAlgorithm algorithm, bool per_node_dispatch) {
  const auto key = std::make_pair(group, static_cast<int>(algorithm) | (per_node_dispatch ? 1 << 16 : 0));
  if (auto it = tier_factors_.find(key); it != tier_factors_.end()) return it->second;
  if (!have_capacities_) tier_capacities();
  const auto& spec = cluster_.spec();
  // The groups on the fabric at once: the mirrors, or else the group's translates by local GPU index.
  std::vector<std::pair<int, int>>& transfers = transfers_;  // scratch: its capacity is kept across calls
  transfers.clear();
  const auto& mirrors = graph_.mirrors(group);
  if (mirrors.size() > 1) {
    for (std::uint32_t m : mirrors) inter_node_transfers(graph_.group(m), algorithm, per_node_dispatch, node_groups_, order_, transfers);
  } else {
    std::set<std::vector<int>> seen;
    const int G = spec.gpus_per_node;
    for (int d = 0; d < G; ++d) {
      std::vector<int> shifted;
      for (int g : graph_.group(group)) shifted.push_back(g - g % G + (g % G + d) % G);
      std::vector<int> sorted = shifted;
      std::sort(sorted.begin(), sorted.end());
      if (seen.insert(sorted).second) inter_node_transfers(shifted, algorithm, per_node_dispatch, node_groups_, order_, transfers);
    }
  }
  // Units per tier resource (a NIC cable, a leaf's up- or down-links, a pod's core links) and sent per GPU,
  // in scratch kept across calls: only what the transfers touch is counted, maximised and reset (a call per
  // group: 10^4 groups with every rank simulated, each a few dozen transfers on a fabric of 10^5 edges;
  // 10^6 transfers for a mirrored group of a million GPUs). A maximum is exact in any order.
  std::vector<std::int32_t> touched_slots, touched_gpus;
  std::vector<int> path;
  path.reserve(static_cast<std::size_t>(cluster_.max_route_edges()));
  std::uint64_t flow_id = 0;
  for (const auto& [src, dst] : transfers) {
    if (sent_[static_cast<std::size_t>(src)]++ == 0) touched_gpus.push_back(src);
    cluster_.route(src, dst, flow_id++, path);
    for (int l : path) {
      const std::int32_t k = edge_slot_[static_cast<std::size_t>(l)];
      if (k >= 0 && slot_units_[static_cast<std::size_t>(k)]++ == 0) touched_slots.push_back(k);
    }
  }
  double busiest = 0;  // seconds per unit byte on the busiest tier resource
  for (const std::int32_t k : touched_slots)
    busiest = std::max(busiest, slot_units_[static_cast<std::size_t>(k)] / slot_cap_Bps_[static_cast<std::size_t>(k)]);
  double most_sent = 0;
  for (const std::int32_t g : touched_gpus) most_sent = std::max(most_sent, sent_[static_cast<std::size_t>(g)]);
  for (const std::int32_t k : touched_slots) slot_units_[static_cast<std::size_t>(k)] = 0;
  for (const std::int32_t g : touched_gpus) sent_[static_cast<std::size_t>(g)] = 0;
  const double share_Bps = spec.nic.payload_GBps() * 1e9 * spec.nics_per_node / spec.gpus_per_node;
  const double tau = most_sent > 0 ? std::max(1.0, busiest * share_Bps / most_sent) : 1.0;
  return tier_factors_.emplace(key, tau).first->second;
}

Time AnalyticalNetwork::duration(std::uint32_t collective) { return cost(collective).duration; }

void AnalyticalNetwork::start(std::uint32_t collective, Time now) {
  const Cost& c = cost(collective);
  if (!graph_.rank_weights().empty()) {
    rank_bytes_.resize(static_cast<std::size_t>(graph_.num_ranks()));
    member_ranks_.clear();
    graph_.member_ranks(collective, member_ranks_);
    for (const std::uint32_t rank : member_ranks_) {
      auto& b = rank_bytes_[rank];
      b.first += c.scaleup_bytes;
      b.second += c.scaleout_bytes;
    }
  } else {
    const double members = static_cast<double>(graph_.num_members(collective));
    scaleup_bytes_ += c.scaleup_bytes * members;
    scaleout_bytes_ += c.scaleout_bytes * members;
  }
  in_flight_.emplace(now + c.duration, started_++, collective);
}

Time AnalyticalNetwork::next_completion() const { return in_flight_.empty() ? kNever : std::get<0>(in_flight_.top()); }

void AnalyticalNetwork::pop_completed(Time now, std::vector<std::uint32_t>& done) {
  while (!in_flight_.empty() && std::get<0>(in_flight_.top()) == now) {
    done.push_back(std::get<2>(in_flight_.top()));
    in_flight_.pop();
  }
}

std::vector<LinkLoad> AnalyticalNetwork::link_loads() const {
  const auto& spec = cluster_.spec();
  double ranks = graph_.num_ranks();
  double scaleup = scaleup_bytes_, scaleout = scaleout_bytes_;
  if (const auto& w = graph_.rank_weights(); !w.empty()) {
    // Ranks with equal bytes form one class, weighed by the real ranks it stands for
    // (sim/base/weighted_classes.hpp): one-by-one and batched runs add the same numbers in the same order.
    struct BytesHash {
      std::uint64_t operator()(const std::pair<double, double>& b) const {
        Fnv1a f;
        f.mix(std::bit_cast<std::uint64_t>(b.first + 0.0));  // + 0.0: -0 and +0 hash alike
        f.mix(std::bit_cast<std::uint64_t>(b.second + 0.0));
        return f.h;
      }
    };
    WeightedClasses<std::pair<double, double>, BytesHash> classes;
    for (std::size_t r = 0; r < w.size(); ++r)
      classes.add(r < rank_bytes_.size() ? rank_bytes_[r] : std::pair<double, double>{0, 0}, w[r]);
    scaleup = scaleout = 0;
    for (std::size_t k = 0; k < classes.size(); ++k) {
      scaleup += classes.value(k).first * static_cast<double>(classes.weight(k));
      scaleout += classes.value(k).second * static_cast<double>(classes.weight(k));
    }
    ranks = static_cast<double>(classes.total());
  }
  std::vector<LinkLoad> out;
  out.push_back({"scale-up (" + spec.intra.name + ")", scaleup / ranks, spec.intra.gpu_bandwidth_GBps * 1e9});
  if (spec.nodes > 1)
    out.push_back({"scale-out (" + spec.nic.name + ")", scaleout / ranks,
                   spec.nic.line_rate_gbps / 8 * 1e9 * spec.nics_per_node / spec.gpus_per_node});
  return out;
}

}  // namespace cs::sim
