#include "sim/network/nccl_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "sim/base/check.hpp"

namespace cs::sim {

using models::CollectiveKind;

const char* to_string(NcclAlgorithm a) {
  switch (a) {
    case NcclAlgorithm::ring: return "ring";
    case NcclAlgorithm::tree: return "tree";
    case NcclAlgorithm::nvls: return "nvls";
    case NcclAlgorithm::hierarchical: return "hierarchical";
    case NcclAlgorithm::pairwise: return "pairwise";
    case NcclAlgorithm::p2p: return "p2p";
  }
  return "?";
}

const char* to_string(NcclProtocol p) {
  switch (p) {
    case NcclProtocol::ll: return "LL";
    case NcclProtocol::ll128: return "LL128";
    case NcclProtocol::simple: return "Simple";
  }
  return "?";
}

const ProtocolSpec& protocol_spec(NcclProtocol p) {
  // bandwidth efficiency: LL carries 4 data bytes per 8-byte flagged line, LL128 120 of 128 bytes; Simple
  // all. Latencies (us): launch, per scale-up hop, per network hop. Derivation in nccl_model.hpp
  // ("Latency"): LL anchored on two measurements, LL128 and Simple in the ratios of NCCL's tuning tables.
  static const ProtocolSpec ll{0.5, 7.0, 1.4, 2.7};
  static const ProtocolSpec ll128{120.0 / 128.0, 8.0, 2.5, 4.0};
  static const ProtocolSpec simple{1.0, 9.0, 3.5, 6.0};
  switch (p) {
    case NcclProtocol::ll: return ll;
    case NcclProtocol::ll128: return ll128;
    case NcclProtocol::simple: return simple;
  }
  return simple;
}

GroupGeometry group_geometry(const topo::Cluster& cluster, std::span<const int> gpus) {
  CS_CHECK(!gpus.empty());
  const auto& spec = cluster.spec();
  GroupGeometry g;
  g.ranks = static_cast<int>(gpus.size());
  std::map<int, int> per_node;
  for (int gpu : gpus) ++per_node[cluster.node_of_gpu(gpu)];
  g.nodes = static_cast<int>(per_node.size());
  g.per_node = INT32_MAX;
  for (const auto& [node, count] : per_node) g.per_node = std::min(g.per_node, count);
  g.multi_node = g.nodes > 1;
  g.scaleup_line_Bps = spec.intra.gpu_bandwidth_GBps * 1e9;
  g.scaleup_Bps = g.scaleup_line_Bps * spec.intra.efficiency;
  const topo::GroupLink link = cluster.group_link(gpus);
  if (g.multi_node && link.span == topo::Span::node) g.multi_node = false;  // one NVL72 domain
  double net = spec.nic.payload_GBps() * 1e9 * spec.nics_per_node / spec.gpus_per_node;
  if (link.span == topo::Span::spine || link.span == topo::Span::core) net /= spec.oversubscription;
  if (link.span == topo::Span::core) net /= spec.spine_oversubscription;
  g.network_Bps = net;
  g.nvls = spec.intra.nvls && spec.intra.switched && !g.multi_node && g.ranks > 1;
  if (spec.nic.latency_given) g.network_hop_extra_s = (spec.nic.latency_us - kReferenceNetworkHopUs) * 1e-6;
  return g;
}

double busbw_factor(CollectiveKind kind, int n) {
  const double nn = n;
  switch (kind) {
    case CollectiveKind::all_reduce: return 2.0 * (nn - 1) / nn;
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_to_all: return (nn - 1) / nn;
    case CollectiveKind::broadcast:
    case CollectiveKind::send_recv: return 1.0;
  }
  return 1.0;
}


namespace {

// NCCL's binary tree (src/graph/trees.cc, ncclGetBtree): the parent of `rank` among n, -1 for the root.
// A rank's lowest set bit says its level; odd ranks are leaves.
int btree_parent(int n, int rank) {
  if (rank == 0) return -1;
  int bit = 1;
  while (bit < n && !(bit & rank)) bit <<= 1;
  int up = (rank ^ bit) | (bit << 1);
  if (up >= n) up = rank ^ bit;
  return up;
}

}  // namespace

std::array<int, 2> double_binary_tree_parents(int nodes, int node) {
  CS_CHECK(nodes >= 1 && node >= 0 && node < nodes);
  const int t0 = btree_parent(nodes, node);
  int t1;
  if (nodes % 2 == 1) {  // shift by one
    const int u = btree_parent(nodes, (node - 1 + nodes) % nodes);
    t1 = u < 0 ? -1 : (u + 1) % nodes;
  } else {  // mirror
    const int u = btree_parent(nodes, nodes - 1 - node);
    t1 = u < 0 ? -1 : nodes - 1 - u;
  }
  return {t0, t1};
}

int tree_max_sends(int nodes) {
  std::vector<int> sends(static_cast<std::size_t>(nodes), 0);
  for (int v = 0; v < nodes; ++v)
    for (int p : double_binary_tree_parents(nodes, v))
      if (p >= 0) ++sends[static_cast<std::size_t>(v)], ++sends[static_cast<std::size_t>(p)];  // up and down
  return *std::max_element(sends.begin(), sends.end());
}

double ring_channels(double S) {
  return std::clamp(S / kRingChannelMinBytes, 1.0, static_cast<double>(kRingChannels));
}

double ring_pipeline_bytes(CollectiveKind kind, double S, int n, double chunk_bytes) {
  const double steps = kind == CollectiveKind::all_reduce ? 2.0 * (n - 1) : n - 1.0;
  return busbw_factor(kind, n) * S + steps * std::min(S / n, chunk_bytes) * kRingChannels / ring_channels(S);
}

double nvls_pipeline_bytes(double S) { return S + std::min(S / 2, kNvlsPipelineChunkBytes); }

namespace {

// One tier's constants as estimate() applies them.
struct Tier {
  double bw_scale = 1.0;    // multiplies the tier's bandwidth
  double hop_extra_s = 0;   // added to each of its hops
};

struct Cost {
  double latency = 0, transfer = 0, tuned_transfer = -1;
};

// The model of one (algorithm, protocol) (nccl_model.hpp) with tier constants `up` (scale-up) and `net`
// (network). `ok` false when the algorithm does not apply.
Cost cost_of(CollectiveKind kind, double S, const GroupGeometry& g, NcclAlgorithm a, NcclProtocol p, Tier up, Tier net,
             double ring_chunk_bytes, bool* ok) {
  *ok = false;
  Cost c;
  const ProtocolSpec& ps = protocol_spec(p);
  const int n = g.ranks, N = g.nodes, k = g.per_node;
  const double hnv = ps.hop_latency_nvlink_us * 1e-6 + up.hop_extra_s;
  const double hnet = ps.hop_latency_network_us * 1e-6 + g.network_hop_extra_s + net.hop_extra_s;
  const double B_up = g.scaleup_Bps * up.bw_scale, B_line = g.scaleup_line_Bps * up.bw_scale;
  const double B_net = g.network_Bps * net.bw_scale;
  double lat = ps.launch_latency_us * 1e-6, transfer = 0, tuned_transfer = -1;
  switch (a) {
    case NcclAlgorithm::ring: {
      if (kind == CollectiveKind::send_recv || kind == CollectiveKind::all_to_all || n < 2) return c;
      const double steps = kind == CollectiveKind::all_reduce ? 2.0 * (n - 1) : n - 1.0;
      const double sent = ring_pipeline_bytes(kind, S, n, ring_chunk_bytes);
      if (!g.multi_node) {
        lat += steps * hnv;
        transfer = sent / B_up;
      } else {
        const double net_share = static_cast<double>(N) / n;
        lat += steps * (net_share * hnet + (1 - net_share) * hnv);
        transfer = std::max(sent * (k - 1) / k / B_up, sent / k / B_net);
      }
      break;
    }
    case NcclAlgorithm::tree: {
      if (kind != CollectiveKind::all_reduce || !g.multi_node) return c;
      const double depth = std::ceil(std::log2(static_cast<double>(N))) + 1;
      lat += 2 * (depth * hnet + (k - 1) * hnv);
      const double chain = k > 1 ? 2.0 * (k - 1) / k * S / B_up : 0.0;
      transfer = std::max(chain, tree_max_sends(N) * S / (2.0 * k) / B_net);
      // NCCL's tuner prices a tree at half the network bandwidth whatever N (every node interior in one
      // tree: 4 sends of S/2k), so at N = 2, where each node sends only 2, it still prefers the ring.
      tuned_transfer = std::max(chain, 4 * S / (2.0 * k) / B_net);
      break;
    }
    case NcclAlgorithm::nvls: {
      if (kind != CollectiveKind::all_reduce || !g.nvls || p != NcclProtocol::simple) return c;
      lat += kNvlsLaunchLatencyUs * 1e-6 + 2 * hnv;
      transfer = nvls_pipeline_bytes(S) / (B_line * kNvlsEfficiency);
      break;
    }
    case NcclAlgorithm::hierarchical: {
      if (kind != CollectiveKind::all_reduce || !g.multi_node || k < 2) return c;
      const double kk = k;
      lat += 2 * (kk - 1) * hnv + 2 * (N - 1) * hnet + ps.launch_latency_us * 2e-6;
      transfer = 2 * (kk - 1) / kk * S / B_up + 2.0 * (N - 1) / N * (S / kk) / B_net;
      break;
    }
    case NcclAlgorithm::pairwise: {
      if (kind != CollectiveKind::all_to_all || n < 2) return c;
      lat += (n - 1) * (g.multi_node ? hnet : hnv);
      const double local = (k - 1.0) / n * S, remote = static_cast<double>(n - k) / n * S;
      transfer = std::max(local / B_up, g.multi_node ? remote / B_net : 0.0);
      break;
    }
    case NcclAlgorithm::p2p: {
      if (kind != CollectiveKind::send_recv) return c;
      // A pair, or a ring shift over n > 2 (each GPU sends S to the next): every flow alone on its path;
      // a flow that leaves the node goes through its GPU's NIC share.
      lat += g.multi_node ? hnet : hnv;
      transfer = S / (g.multi_node ? B_net : B_up);
      break;
    }
  }
  *ok = true;
  if (tuned_transfer < 0) tuned_transfer = transfer;
  c.latency = lat;
  c.transfer = transfer / ps.bandwidth_efficiency;
  c.tuned_transfer = tuned_transfer / ps.bandwidth_efficiency;
  return c;
}

Tier tier_of(const NcclCalibration* cal, CollectiveKind kind, CommScope scope, NcclProtocol p) {
  if (!cal) return {};
  const ScopeConstants& sc = cal->at(kind, scope);
  if (!sc.calibrated) return {};
  return {sc.bandwidth_scale[static_cast<std::size_t>(p)], sc.hop_latency_extra_us * 1e-6};
}

}  // namespace

const char* to_string(CommScope s) { return s == CommScope::intra_node ? "intra-node" : "inter-node"; }

double NcclCalibration::ring_chunk_bytes(CollectiveKind kind, bool multi_node) const {
  const ScopeConstants& net = at(kind, CommScope::inter_node);
  const ScopeConstants& up = at(kind, CommScope::intra_node);
  if (multi_node && net.calibrated) return net.ring_chunk_bytes;
  if (!multi_node && up.calibrated) return up.ring_chunk_bytes;
  return kRingPipelineChunkBytes;
}

bool NcclCalibration::any() const {
  for (const auto& kind : by_kind)
    for (const auto& scope : kind)
      if (scope.calibrated) return true;
  return false;
}

AlgorithmChoice estimate(CollectiveKind kind, double S, const GroupGeometry& g, NcclAlgorithm a, NcclProtocol p, bool* ok) {
  return estimate(kind, S, g, a, p, ok, nullptr);
}

AlgorithmChoice estimate(CollectiveKind kind, double S, const GroupGeometry& g, NcclAlgorithm a, NcclProtocol p, bool* ok,
                         const NcclCalibration* calibration) {
  AlgorithmChoice c;
  c.algorithm = a;
  c.protocol = p;
  const Cost base = cost_of(kind, S, g, a, p, {}, {}, kRingPipelineChunkBytes, ok);
  if (!*ok) return c;
  Cost used = base;
  // A calibration applies to the tiers of its scope: a group inside one node has only the scale-up
  // tier (intra-node constants); a group across nodes takes the inter-node constants for its network
  // tier and, where the profile measured them, the intra-node ones for its scale-up part.
  if (calibration) {
    const Tier up = tier_of(calibration, kind, CommScope::intra_node, p);
    const Tier net = g.multi_node ? tier_of(calibration, kind, CommScope::inter_node, p) : Tier{};
    used = cost_of(kind, S, g, a, p, up, net, calibration->ring_chunk_bytes(kind, g.multi_node), ok);
  }
  c.latency = from_seconds(used.latency);
  c.duration = from_seconds(used.latency + used.transfer);
  c.tuned = from_seconds(base.latency + base.tuned_transfer);
  c.bytes_sent_per_rank = busbw_factor(kind, g.ranks) * S;
  return c;
}

AlgorithmChoice choose_algorithm(CollectiveKind kind, double bytes, const GroupGeometry& g, const std::string& forced,
                                 const NcclCalibration* calibration) {
  AlgorithmChoice best;
  bool have = false;
  if (g.ranks < 2) return best;  // nothing to move
  for (int pass = 0; pass < 2 && !have; ++pass)  // a forced algorithm that does not apply falls back
  for (NcclAlgorithm a : {NcclAlgorithm::nvls, NcclAlgorithm::ring, NcclAlgorithm::tree, NcclAlgorithm::hierarchical,
                          NcclAlgorithm::pairwise, NcclAlgorithm::p2p}) {
    if (pass == 0 && !forced.empty() && forced != to_string(a)) continue;
    // NCCL has no hierarchical all-reduce of its own (that is Horovod's / torch's): only when forced.
    if (a == NcclAlgorithm::hierarchical && (pass == 1 || forced != to_string(a))) continue;
    for (NcclProtocol p : {NcclProtocol::ll, NcclProtocol::ll128, NcclProtocol::simple}) {
      bool ok = false;
      const AlgorithmChoice c = estimate(kind, bytes, g, a, p, &ok, calibration);
      if (ok && (!have || c.tuned < best.tuned)) best = c, have = true;
    }
  }
  CS_CHECK(have);
  return best;
}

}  // namespace cs::sim
