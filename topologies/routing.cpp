// Routes over a cluster (the rules are in cluster.hpp's essay), and the graph-driven state of clusters
// built from an explicit graph (from_graph).
//
// Built clusters: a route is assembled from per-GPU and per-NIC edge tables filled by the builder, so each
// hop is one array read, and every ECMP decision is one ecmp_pick over a count known in O(1): which owned
// NIC (decision 0) here, the switches between the two NICs by the fabric's registration (Fabric::route;
// the trees' spine and core choices, decisions 1 and 2, are in topologies/fabrics/tree.cpp). No search, no allocation, no cache to invalidate or share between
// threads: computing a route costs about what looking one up in a hash map would.
//
// Loaded clusters: for every destination GPU d a breadth-first search over the reversed edges gives
// dist_d(v), the fewest hops from v to d, not expanding through other GPUs (a GPU is an endpoint, not a
// router). A route walks from src taking, at each vertex u, one of the out-edges u -> v with
// dist_d(v) = dist_d(u) - 1 (v = d or v not a GPU), picked by ecmp_pick with the hop number as the
// decision. Memory: G x V ints, fine for hand-written files (a 1,000-GPU file with 2,000 vertices: 8 MB).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "sim/base/check.hpp"
#include "topologies/cluster.hpp"
#include "topologies/cluster_impl.hpp"

namespace cs::topo {
namespace {

using detail::ecmp_pick;
using detail::kUs;

std::size_t at(int i) { return static_cast<std::size_t>(i); }

constexpr int kMaxBuiltRouteEdges = 10;  // PXN NVLink 2 + GPU-NIC 1 + NIC-leaf 1 + leaf..leaf 4 + 2

// The latencies the NCCL model's hop figures stand for (GroupLink::*_hop_extra_s, cluster.hpp): the catalog's
// NVSwitch hop GPU -> switch -> GPU (topologies/link_catalog.cpp, "nvswitch" 0.6 us) and its InfiniBand
// hop, 1 us (link_catalog.cpp kIbLatencyUs; sim/network/nccl_model.hpp kReferenceNetworkHopUs). Written as
// the loader converts a file's figure (x * kUs) so that a file at these figures adds exactly 0.
constexpr double kScaleupReferenceHopS = 0.6 * kUs;
constexpr double kNetworkReferenceEdgeS = 1.0 * kUs;
// Sums of latency differences below this (a femtosecond, a thousandth of the engine's tick) are rounding.
constexpr double kLatencyRoundingS = 1e-15;

double snap(double extra_s) { return std::abs(extra_s) < kLatencyRoundingS ? 0.0 : extra_s; }

}  // namespace

void Cluster::route(int src_gpu, int dst_gpu, std::uint64_t flow_id, std::vector<int>& out) const {
  CS_CHECK(src_gpu >= 0 && src_gpu < num_gpus() && dst_gpu >= 0 && dst_gpu < num_gpus());
  out.clear();
  if (src_gpu == dst_gpu) return;
  if (impl_->loaded) {
    impl_->route_loaded(src_gpu, dst_gpu, flow_id, out);
  } else {
    impl_->route_built(src_gpu, dst_gpu, flow_id, out);
  }
}

std::vector<int> Cluster::route(int src_gpu, int dst_gpu, std::uint64_t flow_id) const {
  std::vector<int> out;
  out.reserve(at(max_route_edges()));
  route(src_gpu, dst_gpu, flow_id, out);
  return out;
}

int Cluster::max_route_edges() const {
  const Impl& im = *impl_;
  if (!im.loaded) return kMaxBuiltRouteEdges;
  const int v = static_cast<int>(im.vertices.size());
  int longest = 0;
  for (int d = 0; d < num_gpus(); ++d) {
    for (int g = 0; g < num_gpus(); ++g) longest = std::max(longest, im.dist[at(d * v + g)]);
  }
  return longest;
}

std::optional<std::pair<int, int>> Cluster::unreachable_gpu_pair() const {
  const Impl& im = *impl_;
  if (!im.loaded) return std::nullopt;  // built clusters are connected by construction (checked)
  const int v = static_cast<int>(im.vertices.size());
  for (int a = 0; a < num_gpus(); ++a) {
    for (int b = a + 1; b < num_gpus(); ++b) {
      if (im.dist[at(b * v + a)] < 0 || im.dist[at(a * v + b)] < 0) return std::pair{a, b};
    }
  }
  return std::nullopt;
}

void Cluster::Impl::route_built(int src, int dst, std::uint64_t flow_id, std::vector<int>& out) const {
  const int g = spec.gpus_per_node;
  const int n = spec.nics_per_node;
  const int src_node = src / g;
  const int dst_node = dst / g;
  const int src_local = src % g;
  const int dst_local = dst % g;

  if (src_node / nodes_per_domain == dst_node / nodes_per_domain) {
    const int bridge = bridge_edge[at(src)];
    if (bridge >= 0 && edges[at(bridge)].dst == dst) {
      out.push_back(bridge);
    } else if (pcie_gpus_per_switch > 0 && src_local / pcie_gpus_per_switch != dst_local / pcie_gpus_per_switch) {
      // PCIe host side: up to the source switch's root complex, across sockets if they differ, down.
      const int sw_a = src_node * pcie_switches_per_node + src_local / pcie_gpus_per_switch;
      const int sw_b = dst_node * pcie_switches_per_node + dst_local / pcie_gpus_per_switch;
      const int per_socket = g / pcie_sockets;
      const int sock_a = src_local / per_socket, sock_b = dst_local / per_socket;
      out.push_back(gpu_up_edge[at(src)]);
      out.push_back(switch_up_edge[at(sw_a)]);
      if (sock_a != sock_b) out.push_back(socket_edge[at((src_node * pcie_sockets + sock_a) * pcie_sockets + sock_b)]);
      out.push_back(switch_down_edge[at(sw_b)]);
      out.push_back(gpu_down_edge[at(dst)]);
    } else {
      out.push_back(gpu_up_edge[at(src)]);
      out.push_back(gpu_down_edge[at(dst)]);
    }
    return;
  }

  // Decision 0: which of its NICs each end uses. The same hash with the same count picks the same k, so
  // two GPUs with the same local index use the same local NIC.
  const int m = max_owned_nics;
  const int dst_k = ecmp_pick(flow_id, src, dst, 0, owned_count[at(dst_local)]);
  const int dst_nic = owned_nic[at(dst_local * m + dst_k)];
  int src_gpu = src;
  int src_k = ecmp_pick(flow_id, src, dst, 0, owned_count[at(src_local)]);
  int src_nic = owned_nic[at(src_local * m + src_k)];
  if (src_nic != dst_nic && pxn) {
    // PXN: over NVLink to the GPU of the destination's local index, out through its NIC (dst's rail).
    src_gpu = src_node * g + dst_local;
    out.push_back(gpu_up_edge[at(src)]);
    out.push_back(gpu_down_edge[at(src_gpu)]);
    src_k = dst_k;
    src_nic = dst_nic;
  }
  const int nic_a = src_node * n + src_nic;
  const int nic_b = dst_node * n + dst_nic;
  out.push_back(gpu_nic_edge[at(src_gpu * m + src_k)]);
  out.push_back(nic_up_edge[at(nic_a)]);

  fabric->route(*this, flow_id, src, dst, nic_a, nic_b, out);
  out.push_back(nic_down_edge[at(nic_b)]);
  out.push_back(nic_gpu_edge[at(dst * m + dst_k)]);
}

void Cluster::Impl::route_loaded(int src, int dst, std::uint64_t flow_id, std::vector<int>& out) const {
  const int v_count = static_cast<int>(vertices.size());
  const int* d = dist.data() + static_cast<std::ptrdiff_t>(dst) * v_count;
  CS_CHECK(d[src] > 0);  // unreachable pairs are rejected at load
  const int num_gpu = spec.nodes * spec.gpus_per_node;
  auto usable = [&](int e, int u) {
    const int w = edges[at(e)].dst;
    return d[w] == d[u] - 1 && (w == dst || w >= num_gpu);
  };
  int u = src;
  for (int hop = 0; u != dst; ++hop) {
    const int begin = out_begin[at(u)];
    const int end = out_begin[at(u + 1)];
    int candidates = 0;
    for (int i = begin; i < end; ++i) candidates += usable(out_edges[at(i)], u) ? 1 : 0;
    CS_CHECK(candidates >= 1);
    int pick = ecmp_pick(flow_id, src, dst, hop, candidates);
    for (int i = begin; i < end; ++i) {
      const int e = out_edges[at(i)];
      if (!usable(e, u)) continue;
      if (pick-- == 0) {
        out.push_back(e);
        u = edges[at(e)].dst;
        break;
      }
    }
  }
}

void Cluster::Impl::build_loaded() {
  const int v_count = static_cast<int>(vertices.size());
  int num_gpu = 0;
  while (num_gpu < v_count && vertices[at(num_gpu)].kind == VertexKind::gpu) ++num_gpu;
  CS_CHECK(num_gpu >= 1);
  for (int v = num_gpu; v < v_count; ++v) CS_CHECK(vertices[at(v)].kind != VertexKind::gpu);
  int nodes = 0;
  for (int gpu = 0; gpu < num_gpu; ++gpu) {
    const Vertex& x = vertices[at(gpu)];
    CS_CHECK(x.index == gpu && x.node >= 0);
    CS_CHECK(gpu == 0 || x.node >= vertices[at(gpu - 1)].node);
    nodes = std::max(nodes, x.node + 1);
  }
  CS_CHECK(num_gpu % nodes == 0);
  const int per_node = num_gpu / nodes;
  for (int gpu = 0; gpu < num_gpu; ++gpu) CS_CHECK(vertices[at(gpu)].node == gpu / per_node);

  for (const Edge& e : edges) {
    CS_CHECK(e.src >= 0 && e.src < v_count && e.dst >= 0 && e.dst < v_count && e.src != e.dst);
    CS_CHECK(e.bandwidth_Bps > 0 && e.latency_s >= 0);
  }

  // CSR adjacency (out and in), edges in id order so that routes do not depend on Boost's storage.
  const int e_count = static_cast<int>(edges.size());
  out_begin.assign(at(v_count + 1), 0);
  std::vector<int> in_begin(at(v_count + 1), 0);
  for (const Edge& e : edges) {
    ++out_begin[at(e.src + 1)];
    ++in_begin[at(e.dst + 1)];
  }
  for (int v = 0; v < v_count; ++v) {
    out_begin[at(v + 1)] += out_begin[at(v)];
    in_begin[at(v + 1)] += in_begin[at(v)];
  }
  out_edges.assign(at(e_count), -1);
  std::vector<int> in_edges(at(e_count), -1);
  {
    std::vector<int> out_fill(out_begin.begin(), out_begin.end() - 1);
    std::vector<int> in_fill(in_begin.begin(), in_begin.end() - 1);
    for (int i = 0; i < e_count; ++i) {
      out_edges[at(out_fill[at(edges[at(i)].src)]++)] = i;
      in_edges[at(in_fill[at(edges[at(i)].dst)]++)] = i;
    }
  }

  // Per-destination hop distances, not expanding through other GPUs.
  dist.assign(at(num_gpu) * at(v_count), -1);
  std::vector<int> queue;
  queue.reserve(at(v_count));
  for (int dst = 0; dst < num_gpu; ++dst) {
    int* d = dist.data() + static_cast<std::ptrdiff_t>(dst) * v_count;
    queue.clear();
    d[dst] = 0;
    queue.push_back(dst);
    for (std::size_t head = 0; head < queue.size(); ++head) {
      const int u = queue[head];
      if (u < num_gpu && u != dst) continue;
      for (int i = in_begin[at(u)]; i < in_begin[at(u + 1)]; ++i) {
        const int w = edges[at(in_edges[at(i)])].src;
        if (d[w] < 0) {
          d[w] = d[u] + 1;
          queue.push_back(w);
        }
      }
    }
  }

  // Summary spec. Counts are exact; the link figures describe the node-0 ring (scale-up) and the
  // slowest network edge (NIC), for reports that print them.
  spec.nodes = nodes;
  spec.gpus_per_node = per_node;
  spec.fabric = "custom";
  spec.intra = IntraNodeSpec{};
  spec.intra.name = "custom";
  spec.intra.efficiency = 1.0;
  spec.intra.switched = false;
  for (const Vertex& x : vertices) {
    if (x.kind == VertexKind::nvswitch) spec.intra.switched = true;
    if (x.kind == VertexKind::leaf) ++num_leaves;
    if (x.kind == VertexKind::spine) ++num_spines;
    if (x.kind == VertexKind::core) ++num_cores;
  }
  num_pods = num_leaves > 0 ? 1 : 0;
  summarise_network(nodes);
  spec.oversubscription = 1.0;
  spec.tiers = num_cores > 0 ? 3 : 2;
  spec.pxn = false;
  scaleup_Bps = std::numeric_limits<double>::infinity();
  if (per_node > 1) {
    bool reachable = true;
    for (int a = 0; a < per_node && reachable; ++a) {
      for (int b = 0; b < per_node; ++b) {
        if (a != b && dist[at(b) * at(v_count) + at(a)] < 0) reachable = false;
      }
    }
    if (reachable) {
      std::vector<int> node0(at(per_node));
      for (int i = 0; i < per_node; ++i) node0[at(i)] = i;
      const GroupLink l = group_link_loaded(node0);
      scaleup_Bps = l.bus_bandwidth_Bps;
      spec.intra.latency_us = l.step_latency_s / kUs;
    }
  }
  if (per_node == 1) {
    // No GPU-to-GPU traffic inside a node, but the NCCL model still divides by the scale-up bandwidth (a
    // 1-GPU node's share of it is 0 bytes): GPU 0's widest link stands for it.
    scaleup_Bps = 0;
    for (int k = out_begin[0]; k < out_begin[1]; ++k) scaleup_Bps = std::max(scaleup_Bps, edges[at(out_edges[at(k)])].bandwidth_Bps);
  }
  if (!std::isfinite(scaleup_Bps)) scaleup_Bps = 0;
  spec.intra.gpu_bandwidth_GBps = scaleup_Bps / kGBps;
}

// The summary's NIC figures (build_loaded): the slowest network edge, and the NICs per node. Every figure
// the NCCL model divides by is positive on a cluster of several nodes (issue 32: GPUs cabled to the leaf
// without a NIC made 0 NICs per node, and a file without network edges a NIC of 0 Gb/s, both an infinite
// transfer time): a node without NIC vertices counts its own vertices cabled out of the node (a GPU with
// its own network port), at least one; a file without network edges takes its slowest edge out of a node.
void Cluster::Impl::summarise_network(int nodes) {
  const int v_count = static_cast<int>(vertices.size());
  int nics = 0;
  for (const Vertex& x : vertices) nics += x.kind == VertexKind::nic ? 1 : 0;
  std::vector<bool> port(at(v_count), false);  // a vertex of a node with an edge out of that node
  for (const Edge& e : edges) {
    const int node = vertices[at(e.src)].node;
    if (node >= 0 && vertices[at(e.dst)].node != node) port[at(e.src)] = true;
  }
  const int ports = static_cast<int>(std::count(port.begin(), port.end(), true));
  spec.nics_per_node = nics >= nodes || nodes == 1 ? nics / nodes : std::max(1, ports / nodes);
  spec.nic = NetLinkSpec{};
  spec.nic.name = "custom";
  spec.nic.efficiency = 1.0;
  double slowest_net_Bps = std::numeric_limits<double>::infinity(), slowest_out_Bps = slowest_net_Bps;
  double net_latency_s = 0, out_latency_s = 0;
  for (const Edge& e : edges) {
    if (e.kind == EdgeKind::network && e.bandwidth_Bps < slowest_net_Bps) {
      slowest_net_Bps = e.bandwidth_Bps;
      net_latency_s = e.latency_s;
    }
    if (port[at(e.src)] && vertices[at(e.dst)].node != vertices[at(e.src)].node && e.bandwidth_Bps < slowest_out_Bps) {
      slowest_out_Bps = e.bandwidth_Bps;
      out_latency_s = e.latency_s;
    }
  }
  if (!std::isfinite(slowest_net_Bps) && nodes > 1) {
    slowest_net_Bps = slowest_out_Bps;
    net_latency_s = out_latency_s;
  }
  if (std::isfinite(slowest_net_Bps)) {
    spec.nic.line_rate_gbps = slowest_net_Bps / kGBps * 8.0;
    spec.nic.latency_us = net_latency_s / kUs;
  }
}

GroupLink Cluster::Impl::group_link_loaded(const std::vector<int>& sorted) const {
  const int v_count = static_cast<int>(vertices.size());
  const int num_gpu = spec.nodes * spec.gpus_per_node;
  if (sorted.size() == 1) return GroupLink{Span::single_gpu, scaleup_Bps, 0.0};

  // Widest shortest path per ring pair: over the vertices in increasing distance to b, width(u) = max
  // over usable out-edges u -> w of min(bandwidth, width(w)), ties broken by the smaller latency sum.
  struct Best {
    double width_Bps = -1;
    double latency_s = 0;
    double extra_s = 0;  // sum of (edge latency - its reference: 1 us on network edges, else 0)
    int tier = 0;  // highest fabric tier on the path: 0 none, 1 leaf, 2 spine, 3 core
  };
  auto tier_of = [&](int v) {
    switch (vertices[at(v)].kind) {
      case VertexKind::leaf: return 1;
      case VertexKind::spine: return 2;
      case VertexKind::core: return 3;
      default: return 0;
    }
  };
  std::vector<Best> best(at(v_count));
  std::vector<int> order;
  double bus_Bps = std::numeric_limits<double>::infinity();
  double step_s = 0;
  int tier = 0;
  // The largest extra of the pairs inside a node and across nodes (none yet: -inf).
  double up_extra_s = -std::numeric_limits<double>::infinity(), net_extra_s = up_extra_s;
  const std::size_t n = sorted.size();
  for (std::size_t i = 0; i < n; ++i) {
    const int a = sorted[i];
    const int b = sorted[(i + 1) % n];
    const int* d = dist.data() + static_cast<std::ptrdiff_t>(b) * v_count;
    CS_CHECK(d[a] > 0);
    order.clear();
    for (int v = 0; v < v_count; ++v) {
      if (d[v] >= 0 && d[v] <= d[a]) order.push_back(v);
    }
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return d[x] < d[y]; });
    for (const int u : order) {
      Best& bu = best[at(u)];
      bu = Best{};
      if (u == b) {
        bu.width_Bps = std::numeric_limits<double>::infinity();
        continue;
      }
      if (u < num_gpu && u != a) continue;  // GPUs are not transit vertices
      for (int k = out_begin[at(u)]; k < out_begin[at(u + 1)]; ++k) {
        const Edge& e = edges[at(out_edges[at(k)])];
        if (d[e.dst] != d[u] - 1 || (e.dst < num_gpu && e.dst != b)) continue;
        const Best& bw = best[at(e.dst)];
        const double width = std::min(e.bandwidth_Bps, bw.width_Bps);
        const double latency = e.latency_s + bw.latency_s;
        if (width > bu.width_Bps || (width == bu.width_Bps && latency < bu.latency_s)) {
          bu.width_Bps = width;
          bu.latency_s = latency;
          bu.extra_s = e.latency_s - (e.kind == EdgeKind::network ? kNetworkReferenceEdgeS : 0.0) + bw.extra_s;
          bu.tier = std::max(bw.tier, tier_of(e.dst));
        }
      }
    }
    const Best& ba = best[at(a)];
    CS_CHECK(ba.width_Bps > 0);
    bus_Bps = std::min(bus_Bps, ba.width_Bps);
    step_s = std::max(step_s, ba.latency_s);
    tier = std::max(tier, ba.tier);
    if (vertices[at(a)].node == vertices[at(b)].node) {
      up_extra_s = std::max(up_extra_s, ba.extra_s - kScaleupReferenceHopS);
    } else {
      net_extra_s = std::max(net_extra_s, ba.extra_s);
    }
  }
  const int node = sorted.front() / spec.gpus_per_node;
  const bool one_node = std::all_of(sorted.begin(), sorted.end(),
                                    [&](int g) { return g / spec.gpus_per_node == node; });
  // Across nodes, the highest switch on the ring's paths is the span's level (Cluster::levels(): leaf,
  // spine, core; a file without switches counts as the first level).
  GroupLink link{one_node ? Span::node : Span::fabric, bus_Bps, step_s, one_node ? -1 : std::clamp(tier - 1, 0, 2)};
  // At least one reference step faster (cluster.hpp); none of the kind: nothing to add.
  if (std::isfinite(up_extra_s)) link.scaleup_hop_extra_s = snap(std::max(up_extra_s, -kScaleupReferenceHopS));
  if (std::isfinite(net_extra_s)) link.network_hop_extra_s = snap(std::max(net_extra_s, -kNetworkReferenceEdgeS));
  return link;
}

}  // namespace cs::topo
