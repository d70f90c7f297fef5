#include "sim/network/nccl_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "models/compute/comm_profile.hpp"
#include "sim/base/check.hpp"
#include "sim/network/token_dispatch.hpp"

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
    case NcclAlgorithm::collnet_direct: return "collnet_direct";
    case NcclAlgorithm::collnet_chain: return "collnet_chain";
    case NcclAlgorithm::nvls_tree: return "nvls_tree";
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
  if (!spec.intra.switched && !cluster.from_file()) {
    // A PCIe node: the ring runs at its busiest intra-node link (a switch up-link, the inter-socket link;
    // topologies/cluster.hpp "PCIe nodes"), the bottleneck NCCL's ring search sizes its channels by.
    g.scaleup_Bps = cluster.scaleup_ring_Bps(gpus);
    g.scaleup_line_Bps = g.scaleup_Bps / spec.intra.efficiency;
  }
  const topo::GroupLink link = cluster.group_link(gpus);
  if (g.multi_node && link.span == topo::Span::node) {
    // One NVL72 domain: every GPU of the group is on the one scale-up fabric, as one node's are (NCCL's
    // multi-node NVLink treats the domain as one NVLink clique). Its compute trays are not nodes to any
    // algorithm: an all-to-all sends (n - 1) / n of its buffer over NVLink, not (k - 1) / n with k a tray's GPUs.
    g.multi_node = false;
    g.nodes = 1;
    g.per_node = g.ranks;
  }
  // Each switch level the group climbs above the first divides the NIC share by its oversubscription
  // (the fabric's levels, topologies/fabric.hpp).
  double net = spec.nic.payload_GBps() * 1e9 * spec.nics_per_node / spec.gpus_per_node;
  const auto& levels = cluster.levels();
  for (int l = 1; l <= link.level; ++l) net /= levels[static_cast<std::size_t>(l)].oversubscription;
  g.network_Bps = net;
  g.nvls = spec.intra.nvls && spec.intra.switched && !g.multi_node && g.ranks > 1;
  g.switched = spec.intra.switched;
  g.nvls_nodes = spec.intra.nvls && spec.intra.switched && g.per_node >= 2;
  g.sharp = spec.sharp && g.multi_node;
  g.sharp_levels = link.span == topo::Span::fabric ? link.level + 1 : 1;
  if (spec.nic.latency_given) g.network_hop_extra_s = (spec.nic.latency_us - kReferenceNetworkHopUs) * 1e-6;
  g.network_hop_extra_s += link.network_hop_extra_s;  // a topology file's latencies (0 on built clusters)
  g.scaleup_hop_extra_s = link.scaleup_hop_extra_s;
  // PCIe-only: nodes whose scale-up spec has no NVLink (the catalog's "pcie"; a topology file's scale-up
  // edges say nvlink or pcie per edge, its summary spec keeps nvlink and the structural ranking).
  g.nvlink = spec.intra.nvlink;
  if (g.multi_node && g.nvlink) {
    // Across NVLink nodes NCCL builds one ring per NIC the group's GPUs of a node leave through and
    // doubles them (ncclTopoPostset, src/graph/connect.cc at v2.21.5-1): 16 channels for a node's eight
    // GPUs on eight NICs, 2 for one GPU a node (data parallelism under TP 8).
    const int nics_per_gpu = std::max(1, spec.nics_per_node / std::max(1, spec.gpus_per_node));
    const int nics_used = std::max(1, std::min(spec.nics_per_node, g.per_node * nics_per_gpu));
    g.ring_channels = std::min(kRingChannels, 2 * nics_used);
  }
  if (g.multi_node && !g.nvlink) {
    // NCCL's graph search (src/graph/search.cc at v2.21.5-1): the fastest entry of speedArrayInter that
    // the GPU -> NIC path carries (the GPU's PCIe link, the NIC's line rate), one channel per NIC a GPU
    // has to itself; below 25 GB/s the channels are not duplicated (ncclTopoDupChannels).
    static constexpr std::array<double, 19> kSpeedArrayInter{48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                                             7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
    const double path_GBps = std::min(spec.intra.gpu_bandwidth_GBps, spec.nic.line_rate_gbps / 8.0);
    g.tuner_channel_GBps = kSpeedArrayInter.back();
    for (double s : kSpeedArrayInter)
      if (s <= path_GBps) {
        g.tuner_channel_GBps = s;
        break;
      }
    g.tuner_channels = std::max(1, spec.nics_per_node / std::max(1, g.per_node));
    g.ring_channels = std::min(kRingChannels, 2 * g.tuner_channels);
  }
  return g;
}

double busbw_factor(CollectiveKind kind, int n) { return models::bus_bandwidth_factor(kind, n); }


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

bool nccl_tuner_applies(const GroupGeometry& g) { return g.multi_node && !g.nvlink && g.tuner_channels > 0; }

double nccl_tuner_time_us(CollectiveKind kind, double S, const GroupGeometry& g, NcclAlgorithm a, NcclProtocol p,
                          bool* ok) {
  // src/graph/tuning.cc at NVIDIA/nccl v2.21.5-1 (ab2b89c4); every number below is that file's, the
  // derivation is in nccl_model.hpp. Index [0] LL, [1] LL128, [2] Simple.
  *ok = false;
  if (!nccl_tuner_applies(g) || p == NcclProtocol::ll128) return 0;  // LL128: NVLink systems only
  const bool ring = a == NcclAlgorithm::ring, tree = a == NcclAlgorithm::tree;
  const bool all_reduce = kind == CollectiveKind::all_reduce;
  const bool gather_scatter = kind == CollectiveKind::all_gather || kind == CollectiveKind::reduce_scatter;
  if (!(ring && (all_reduce || gather_scatter || kind == CollectiveKind::broadcast)) && !(tree && all_reduce)) return 0;
  const int n = g.ranks, N = g.nodes, pi = static_cast<int>(p);
  const bool simple = p == NcclProtocol::simple;
  // baseLat, hwLat[PCI] and hwLat[NET] rows of Tree and Ring.
  static constexpr double kBaseLat[2][3] = {{6.8, 14.0, 0}, {6.6, 14.0, 8.4}};
  static constexpr double kPciLat[2][3] = {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}};
  static constexpr double kNetLat[2][3] = {{5.0, 8.5, 28}, {2.7, 4.0, 14.0}};
  // llMaxBws[0] (x86 Intel host, N = 2 / N > 2), perChMaxTreeBws[Ampere].
  const double ll_max_bw = N <= 2 ? 39.0 : 20.4;
  const double per_ch_max_tree_bw = N <= 2 ? 23.6 : 17.8;
  const double net_overhead = 1.0 * (simple ? 3 : 1);  // getNetOverhead(): Intel 1 us
  const double nsteps = all_reduce ? 2.0 * (n - 1) : gather_scatter ? n - 1.0 : n;
  const double n_inter = all_reduce ? 2.0 * N : gather_scatter ? N - 1.0 : N;
  const int ai = ring ? 1 : 0;
  double bw = g.tuner_channels * g.tuner_channel_GBps;
  if (ring && p == NcclProtocol::ll) bw = std::min(ll_max_bw, bw * .5);
  if (tree) bw = std::min(bw * .92, g.tuner_channels * per_ch_max_tree_bw);
  if (tree && p == NcclProtocol::ll) bw = std::min(bw * 1.0 / 3.8, ll_max_bw);
  if (tree && g.per_node == 1) bw *= .85;  // one GPU a node: NCCL_TOPO_PATTERN_TREE (search.cc)
  bw *= ring ? n / nsteps : .5;
  double lat = kBaseLat[ai][pi];
  const double inter_lat = kNetLat[ai][pi];
  if (ring && kind == CollectiveKind::broadcast) {
    lat += inter_lat;
  } else if (ring) {
    lat += (nsteps - n_inter) * std::max(kPciLat[ai][pi], net_overhead) + n_inter * inter_lat;
  } else {
    const auto log2i = [](long v) { long l = 0; while (v >>= 1) ++l; return l; };
    lat += 2 * ((n / N - 1) * kPciLat[ai][pi] + static_cast<double>(log2i(N)) * inter_lat);
  }
  // ncclTopoGetAlgoTime
  if (tree) {
    static constexpr double kTreeCorrection[3][23] = {
        {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
        {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
        {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};
    long log_size = 0;
    for (long v = static_cast<long>(S) >> 6; v >>= 1;) ++log_size;
    if (log_size < 23) bw *= kTreeCorrection[pi][log_size];
  }
  if (ring && simple && all_reduce && S / (2.0 * g.tuner_channels * n) >= 64) lat *= 1.4;  // comm->nChannels = 2C
  *ok = true;
  return lat + S / (1000 * bw);
}

double ring_channels(double S, int max_channels) {
  return std::clamp(S / kRingChannelMinBytes, 1.0, static_cast<double>(max_channels));
}

double ring_pipeline_bytes(CollectiveKind kind, double S, int n, double chunk_bytes, int max_channels) {
  const double steps = kind == CollectiveKind::all_reduce ? 2.0 * (n - 1) : n - 1.0;
  // The chunk is per channel (chunk_bytes / kRingChannels on each): a ring on fewer channels fills with less.
  const double chunk = chunk_bytes * max_channels / kRingChannels;
  return busbw_factor(kind, n) * S + steps * std::min(S / n, chunk) * max_channels / ring_channels(S, max_channels);
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
  const double hnv = ps.hop_latency_nvlink_us * 1e-6 + g.scaleup_hop_extra_s + up.hop_extra_s;
  const double hnet = ps.hop_latency_network_us * 1e-6 + g.network_hop_extra_s + net.hop_extra_s;
  const double B_up = g.scaleup_Bps * up.bw_scale, B_line = g.scaleup_line_Bps * up.bw_scale;
  const double B_net = g.network_Bps * net.bw_scale;
  double lat = ps.launch_latency_us * 1e-6, transfer = 0, tuned_transfer = -1;
  switch (a) {
    case NcclAlgorithm::ring: {
      if (kind == CollectiveKind::send_recv || kind == CollectiveKind::all_to_all || n < 2) return c;
      const double steps = kind == CollectiveKind::all_reduce ? 2.0 * (n - 1) : n - 1.0;
      const double sent = ring_pipeline_bytes(kind, S, n, ring_chunk_bytes, g.ring_channels);
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
      if (kind != CollectiveKind::all_reduce || p != NcclProtocol::simple) return c;
      if (g.nvls) {
        lat += kNvlsLaunchLatencyUs * 1e-6 + 2 * hnv;
        transfer = nvls_pipeline_bytes(S) / (B_line * kNvlsEfficiency);
        break;
      }
      // Across nodes: NVLS inside, SHARP between the nodes (NCCL's NVLS with nNodes > 1 needs CollNet).
      if (!g.multi_node || !g.sharp || !g.nvls_nodes) return c;
      lat += kNvlsLaunchLatencyUs * 1e-6 + 2 * (hnv + g.sharp_levels * hnet);
      transfer = std::max(nvls_pipeline_bytes(S) / (B_line * kNvlsEfficiency), S / (k * B_net));
      break;
    }
    case NcclAlgorithm::collnet_direct:
    case NcclAlgorithm::collnet_chain: {
      if (kind != CollectiveKind::all_reduce || !g.sharp || p != NcclProtocol::simple) return c;
      const bool direct = a == NcclAlgorithm::collnet_direct;
      if (direct && !g.switched) return c;  // NCCL: CollNet Direct only on NVSwitch systems
      lat += 2 * ((k > 1 ? (direct ? 1.0 : k - 1.0) : 0.0) * hnv + g.sharp_levels * hnet);
      const double intra = k > 1 ? 2.0 * (k - 1) / k * S / B_up : 0.0;
      transfer = std::max(intra, S / (k * B_net));
      break;
    }
    case NcclAlgorithm::nvls_tree: {
      if (kind != CollectiveKind::all_reduce || !g.multi_node || !g.nvls_nodes || p != NcclProtocol::simple) return c;
      const double depth = std::ceil(std::log2(static_cast<double>(N)));
      lat += kNvlsLaunchLatencyUs * 1e-6 + 2 * (hnv + depth * hnet);
      const double intra = nvls_pipeline_bytes(S) / (B_line * kNvlsEfficiency);
      transfer = std::max(intra, tree_max_sends(N) * S / (2.0 * k) / B_net);
      // NCCL's tuner doubles the NVLS tree's network bandwidth at nNodes <= 2 (W = 2) and keeps W = 4 beyond.
      tuned_transfer = std::max(intra, (N <= 2 ? 2 : 4) * S / (2.0 * k) / B_net);
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
      if (g.dispatch.per_node()) {
        // A per-node token dispatch (token_dispatch.hpp): one hop to each other node's entry GPU, one to
        // each GPU of the node; the network and the scale-up fabric carry their shares at once.
        lat += (N - 1) * hnet + (k - 1) * hnv;
        transfer = std::max(g.dispatch.scaleup * S / B_up, g.multi_node ? g.dispatch.network * S / B_net : 0.0);
        break;
      }
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

double NcclCalibration::ring_chunk_bytes(CollectiveKind kind, bool multi_node, NcclProtocol p) const {
  const ScopeConstants& sc = at(kind, multi_node ? CommScope::inter_node : CommScope::intra_node);
  if (!sc.calibrated) return kRingPipelineChunkBytes;
  return p == NcclProtocol::ll ? sc.ring_chunk_bytes_ll : sc.ring_chunk_bytes;
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
    used = cost_of(kind, S, g, a, p, up, net, calibration->ring_chunk_bytes(kind, g.multi_node, p), ok);
  }
  c.latency = from_seconds(used.latency);
  c.duration = from_seconds(used.latency + used.transfer);
  c.tuned = from_seconds(base.latency + base.tuned_transfer);
  if (nccl_tuner_applies(g)) {
    bool tuner_ok = false;
    const double us = nccl_tuner_time_us(kind, S, g, a, p, &tuner_ok);
    if (tuner_ok) c.tuned = from_seconds(us * 1e-6);
  }
  c.bytes_sent_per_rank = g.dispatch.per_node() && a == NcclAlgorithm::pairwise
                              ? (g.dispatch.network + g.dispatch.scaleup) * S
                              : busbw_factor(kind, g.ranks) * S;
  return c;
}

GroupGeometry with_dispatch(GroupGeometry g, CollectiveKind kind, const TokenRouting& routing) {
  if (kind != CollectiveKind::all_to_all || !routing.per_node() || g.nodes * g.per_node != g.ranks) return g;
  g.dispatch = dispatch_shares(routing, g.ranks, g.nodes, g.per_node);
  return g;
}

AlgorithmChoice choose_algorithm(CollectiveKind kind, double bytes, const GroupGeometry& g, const std::string& forced,
                                 const NcclCalibration* calibration) {
  AlgorithmChoice best;
  bool have = false;
  if (g.ranks < 2) return best;  // nothing to move
  for (int pass = 0; pass < 2 && !have; ++pass)  // a forced algorithm that does not apply falls back
  for (NcclAlgorithm a : {NcclAlgorithm::nvls, NcclAlgorithm::ring, NcclAlgorithm::tree, NcclAlgorithm::hierarchical,
                          NcclAlgorithm::pairwise, NcclAlgorithm::p2p, NcclAlgorithm::nvls_tree,
                          NcclAlgorithm::collnet_direct, NcclAlgorithm::collnet_chain}) {
    if (pass == 0 && !forced.empty() && forced != to_string(a)) continue;
    // NCCL has no hierarchical all-reduce of its own (that is Horovod's / torch's): only when forced.
    if (a == NcclAlgorithm::hierarchical && (pass == 1 || forced != to_string(a))) continue;
    for (NcclProtocol p : {NcclProtocol::ll, NcclProtocol::ll128, NcclProtocol::simple}) {
      // NCCL enables LL128 by default "only on Volta/Ampere/Hopper+NVLink" (src/graph/tuning.cc at
      // v2.21.5-1, ncclTopoTuneModel: typeIntra <= PATH_NVB, typeInter <= PATH_PXB).
      if (p == NcclProtocol::ll128 && !g.nvlink) continue;
      bool ok = false;
      const AlgorithmChoice c = estimate(kind, bytes, g, a, p, &ok, calibration);
      if (ok && (!have || c.tuned < best.tuned)) best = c, have = true;
    }
  }
  CS_CHECK(have);
  return best;
}

}  // namespace cs::sim
