// Cluster graph builder and the analytical group view (the model is in cluster.hpp's essay).
//
// Vertex numbering (stable, deterministic): all GPUs first, so gpu_vertex(g) == g; then scale-up
// switches (one per node, or one per multi-node domain for nvl72); then NICs node by node; then leaves;
// then spines (pod by pod); then cores (plane by plane). Every cable is added as two directed edges, forward then reverse, with equal bandwidth and
// latency, in the plain edge vector (edge ids are its indices). There is no adjacency structure kept: routes of
// a built cluster come from the index tables (cluster_impl.hpp), and connected() builds Boost's compressed
// sparse row graph over the edges when asked (a kept adjacency_list cost ~3x the edge vector's memory: at
// 1,048,576 GPUs, 10^7 directed edges, about 1 GB).
//
// Edge figures:
// - GPU <-> scale-up switch: the GPU's per-direction scale-up bandwidth x efficiency; the per-hop latency
//   (GPU -> switch -> GPU) is split evenly over the two edges of that path.
// - GPU <-> NIC: PCIe x16 between the GPU's PCIe switch and the NIC, modeled as a direct edge to every
//   GPU sharing that NIC. Gen5 x16 (64 GB/s) for NICs up to 400 Gb/s, Gen6 x16 (128 GB/s, ConnectX-8)
//   above, times the pcie catalog efficiency; so the PCIe hop never caps a catalog NIC. Latency 0: the
//   NIC's per-hop latency already includes its DMA.
// - GPU <-> GPU NVLink bridge (bridged PCIe nodes): bridge bandwidth x efficiency, the whole intra-node
//   hop latency on the one edge.
// - NIC <-> leaf, leaf <-> spine, spine <-> core: the NIC link's payload bandwidth and per-hop latency.
//
// Fabric: the registration of spec.fabric (topologies/fabric.hpp) places the NICs on its switches and
// cables them; the leaf / spine / core trees' rules are in topologies/fabrics/tree.cpp. One node: no
// scale-out at all, neither NICs nor switches (nothing would cross them).
#include "topologies/cluster.hpp"

#include <algorithm>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "sim/base/check.hpp"
#include "topologies/cluster_impl.hpp"
#include "topologies/fabric.hpp"
#include "topologies/fabrics/tree.hpp"

namespace cs::topo {
namespace {

using detail::kUs;

// PCIe x16 per-direction line rates (PCI-SIG): Gen5 32 GT/s, Gen6 64 GT/s.
constexpr double kPcieGen5x16GBps = 64.0;
constexpr double kPcieGen6x16GBps = 128.0;
// Above what a Gen5 x16 slot carries (~504 Gb/s after 128b/130b), a NIC ships on Gen6 (ConnectX-8).
constexpr double kGen5MaxNicGbps = 504.0;

int ceil_div(int a, int b) { return (a + b - 1) / b; }

int pcie_sockets_of(const IntraNodeSpec& intra, int gpus_per_node) { return topo::pcie_sockets(intra, gpus_per_node); }

std::size_t at(int i) { return static_cast<std::size_t>(i); }

}  // namespace

int Cluster::Impl::add_vertex(VertexKind kind, int node, int index) {
  vertices.push_back(Vertex{kind, node, index});
  return static_cast<int>(vertices.size() - 1);
}

int Cluster::Impl::add_cable(int a, int b, EdgeKind kind, double bandwidth_Bps, double latency_s) {
  CS_CHECK(a != b && bandwidth_Bps > 0 && latency_s >= 0);
  const int forward = static_cast<int>(edges.size());
  CS_CHECK(a >= 0 && b >= 0 && static_cast<std::size_t>(std::max(a, b)) < vertices.size());
  for (const auto& [src, dst] : {std::pair{a, b}, std::pair{b, a}}) edges.push_back(Edge{src, dst, kind, bandwidth_Bps, latency_s});
  return forward;
}

// Local NIC indices a GPU's traffic uses: with N <= G GPU g shares NIC g*N/G; with N > G GPU g owns the
// NICs j with j*G/N == g.
void Cluster::Impl::nics_of_local_gpu(int local_gpu, std::set<int>& out) const {
  const int g = spec.gpus_per_node;
  const int n = spec.nics_per_node;
  if (n <= g) {
    out.insert(local_gpu * n / g);
  } else {
    for (int j = 0; j < n; ++j) {
      if (j * g / n == local_gpu) out.insert(j);
    }
  }
}

void Cluster::Impl::build() {
  const ClusterSpec& s = spec;
  CS_CHECK(s.nodes >= 1 && s.gpus_per_node >= 1);
  // The caller resolves the scale-up bandwidth (nvswitch: from the GPU's NVLink) before building.
  CS_CHECK(s.intra.gpu_bandwidth_GBps > 0);
  CS_CHECK(s.intra.efficiency > 0 && s.intra.efficiency <= 1);
  CS_CHECK(s.intra.latency_us >= 0);
  CS_CHECK(s.intra.bridge_bandwidth_GBps >= 0);
  CS_CHECK(s.intra.bridge_bandwidth_GBps == 0 || !s.intra.switched);  // bridges: PCIe nodes only
  fabric = find_fabric(s.fabric);
  CS_CHECK(fabric != nullptr);  // the scenario reader takes the name from the registry
  levels = fabric->levels(s);
  CS_CHECK(!levels.empty());
  CS_CHECK(s.nics_per_node >= 0);
  if (s.nodes > 1) {
    CS_CHECK(s.nics_per_node >= 1);
    CS_CHECK(s.nic.line_rate_gbps > 0 && s.nic.efficiency > 0 && s.nic.efficiency <= 1);
    CS_CHECK(s.nic.latency_us >= 0);
  }

  const int domain_gpus = s.intra.domain_gpus;
  CS_CHECK(domain_gpus >= 0);
  if (domain_gpus > s.gpus_per_node) {
    CS_CHECK(domain_gpus % s.gpus_per_node == 0);
    nodes_per_domain = domain_gpus / s.gpus_per_node;
  }
  scaleup_Bps = s.intra.gpu_bandwidth_GBps * kGBps * s.intra.efficiency;
  bridge_Bps = s.intra.bridge_bandwidth_GBps * kGBps * s.intra.efficiency;
  pxn = s.pxn && fabric->rails && s.intra.switched;

  const int num_gpus = s.nodes * s.gpus_per_node;
  {
    // Reserve the edges up front: grown by doubling, the vector's peak was 2-3x its final size (at 1,048,576
    // GPUs, 10^7 edges of 32 bytes). An upper bound for fabrics of oversubscription >= 1 (a leaf has at most
    // as many up-links as down-links plus one; likewise a spine): scale-up and PCIe cables of the nodes,
    // GPU-NIC cables, NIC-leaf, leaf-spine and spine-core cables, two directed edges each. With an
    // oversubscription below 1 the vector grows past it as before.
    const std::size_t G = static_cast<std::size_t>(num_gpus), N = static_cast<std::size_t>(s.nodes);
    const std::size_t nics = s.nodes > 1 ? N * static_cast<std::size_t>(s.nics_per_node) : 0;
    const std::size_t owned = s.gpus_per_node > 0 ? static_cast<std::size_t>((s.nics_per_node + s.gpus_per_node - 1) / s.gpus_per_node) : 0;
    const std::size_t sockets = static_cast<std::size_t>(std::max(1, s.intra.sockets));
    const std::size_t pcie = s.intra.switched ? 0 : N * (G / N + sockets * sockets);
    const std::size_t leaves = nics / static_cast<std::size_t>(std::max(1, s.leaf_radix)) + N + 1;
    const std::size_t bridges = s.intra.bridge_bandwidth_GBps > 0 ? G / 2 : 0;
    edges.reserve(2 * (G + pcie + bridges + G * std::max<std::size_t>(1, owned) + 3 * nics + 2 * leaves));
    // Vertices: GPUs, scale-up and PCIe switches and root complexes, NICs, and spines and cores estimated at
    // as many as the leaves each (a small fabric can have more spines than leaves: the vector then grows).
    vertices.reserve(G + N * (G / N + sockets + 1) + nics + 3 * leaves);
  }
  for (int gpu = 0; gpu < num_gpus; ++gpu) add_vertex(VertexKind::gpu, gpu / s.gpus_per_node, gpu);

  // Scale-up switches. The last nvl72 domain may be partial when nodes is not a multiple of its size.
  first_switch = static_cast<int>(vertices.size());
  const VertexKind switch_kind = s.intra.switched ? VertexKind::nvswitch : VertexKind::pcie_switch;
  const EdgeKind scaleup_kind = s.intra.switched ? EdgeKind::nvlink : EdgeKind::pcie;
  if (!s.intra.switched) {
    // PCIe host side: sockets and switches per node (cluster.hpp "PCIe nodes").
    pcie_sockets = pcie_sockets_of(s.intra, s.gpus_per_node);
    const int per_switch = topo::pcie_gpus_per_switch(s.intra, s.gpus_per_node);
    CS_CHECK(pcie_sockets >= 1 && s.gpus_per_node % pcie_sockets == 0);
    CS_CHECK(per_switch >= 1 && (s.gpus_per_node / pcie_sockets) % per_switch == 0);
    CS_CHECK(pcie_inter_socket_GBps(s.intra) > 0);
    pcie_switches_per_node = s.gpus_per_node / per_switch;
    if (pcie_sockets > 1 || pcie_switches_per_node > 1) pcie_gpus_per_switch = per_switch;
    else pcie_switches_per_node = 1;
  }
  const int num_domains = ceil_div(s.nodes, nodes_per_domain);
  for (int d = 0; d < num_domains; ++d) {
    if (nodes_per_domain == 1) {
      for (int sw = 0; sw < pcie_switches_per_node; ++sw) add_vertex(switch_kind, d, sw);
    } else {
      add_vertex(switch_kind, -1, d);
    }
  }
  const double half_hop_s = s.intra.latency_us * kUs / 2.0;
  gpu_up_edge.assign(at(num_gpus), -1);
  gpu_down_edge.assign(at(num_gpus), -1);
  for (int gpu = 0; gpu < num_gpus; ++gpu) {
    const int domain = gpu / s.gpus_per_node / nodes_per_domain;
    const int sw = pcie_gpus_per_switch > 0 ? domain * pcie_switches_per_node + gpu % s.gpus_per_node / pcie_gpus_per_switch
                                            : domain;
    const int e = add_cable(gpu, first_switch + sw, scaleup_kind, scaleup_Bps, half_hop_s);
    gpu_up_edge[at(gpu)] = e;
    gpu_down_edge[at(gpu)] = e + 1;
  }
  if (pcie_gpus_per_switch > 0) build_pcie_host();

  // NVLink bridges between local GPUs 2i and 2i+1 of PCIe nodes.
  bridge_edge.assign(at(num_gpus), -1);
  if (bridge_Bps > 0) {
    for (int node = 0; node < s.nodes; ++node) {
      for (int local = 0; local + 1 < s.gpus_per_node; local += 2) {
        const int a = node * s.gpus_per_node + local;
        const int e = add_cable(a, a + 1, EdgeKind::nvlink, bridge_Bps, s.intra.latency_us * kUs);
        bridge_edge[at(a)] = e;
        bridge_edge[at(a + 1)] = e + 1;
      }
    }
  }

  // NICs and their PCIe attachment.
  first_nic = static_cast<int>(vertices.size());
  if (s.nodes > 1) build_nics();

  first_leaf = static_cast<int>(vertices.size());
  first_spine = first_leaf;
  first_core = first_leaf;
  if (s.nodes > 1) {
    fabric->place_nics(*this);
    fabric->build(*this);
  }
}

// PCIe host side (cluster.hpp "PCIe nodes"): root complexes, switch up-links, inter-socket links.
void Cluster::Impl::build_pcie_host() {
  const ClusterSpec& s = spec;
  // Root complexes, one per socket, after the switches; each switch's x16 up-link to its socket's root
  // complex (the same PCIe bandwidth as a GPU's link, no latency of its own: the intra-node hop latency
  // is on the GPU edges); one inter-socket link between every two sockets.
  const int first_rc = static_cast<int>(vertices.size());
  const int S = pcie_sockets;
  for (int node = 0; node < s.nodes; ++node)
    for (int k = 0; k < S; ++k) add_vertex(VertexKind::root_complex, node, k);
  const int switches_per_socket = pcie_switches_per_node / S;
  switch_up_edge.assign(at(s.nodes * pcie_switches_per_node), -1);
  switch_down_edge.assign(at(s.nodes * pcie_switches_per_node), -1);
  for (int node = 0; node < s.nodes; ++node)
    for (int sw = 0; sw < pcie_switches_per_node; ++sw) {
      const int i = node * pcie_switches_per_node + sw;
      const int e = add_cable(first_switch + i, first_rc + node * S + sw / switches_per_socket, EdgeKind::pcie, scaleup_Bps, 0.0);
      switch_up_edge[at(i)] = e;
      switch_down_edge[at(i)] = e + 1;
    }
  const double socket_Bps = pcie_inter_socket_GBps(s.intra) * kGBps;
  socket_edge.assign(at(s.nodes * S * S), -1);
  for (int node = 0; node < s.nodes; ++node)
    for (int a = 0; a < S; ++a)
      for (int b = a + 1; b < S; ++b) {
        const int e = add_cable(first_rc + node * S + a, first_rc + node * S + b, EdgeKind::inter_socket, socket_Bps, 0.0);
        socket_edge[at((node * S + a) * S + b)] = e;
        socket_edge[at((node * S + b) * S + a)] = e + 1;
      }
}

// The NICs of every node and their PCIe cables to the GPUs that own them (more than one node only).
void Cluster::Impl::build_nics() {
  const ClusterSpec& s = spec;
  const int num_gpus = s.nodes * s.gpus_per_node;
  for (int node = 0; node < s.nodes; ++node) {
    for (int j = 0; j < s.nics_per_node; ++j) add_vertex(VertexKind::nic, node, j);
  }
  owned_count.assign(at(s.gpus_per_node), 0);
  std::vector<std::set<int>> owned(at(s.gpus_per_node));
  for (int local = 0; local < s.gpus_per_node; ++local) {
    nics_of_local_gpu(local, owned[at(local)]);
    owned_count[at(local)] = static_cast<int>(owned[at(local)].size());
    max_owned_nics = std::max(max_owned_nics, owned_count[at(local)]);
  }
  owned_nic.assign(at(s.gpus_per_node * max_owned_nics), -1);
  for (int local = 0; local < s.gpus_per_node; ++local) {
    int k = 0;
    for (const int j : owned[at(local)]) owned_nic[at(local * max_owned_nics + k++)] = j;
  }

  const IntraNodeSpec* pcie = find_intra_node("pcie");
  CS_CHECK(pcie != nullptr);
  const double pcie_line_GBps =
      s.nic.line_rate_gbps > kGen5MaxNicGbps ? kPcieGen6x16GBps : kPcieGen5x16GBps;
  const double pcie_Bps = pcie_line_GBps * kGBps * pcie->efficiency;
  gpu_nic_edge.assign(at(num_gpus * max_owned_nics), -1);
  nic_gpu_edge.assign(at(num_gpus * max_owned_nics), -1);
  for (int node = 0; node < s.nodes; ++node) {
    for (int local = 0; local < s.gpus_per_node; ++local) {
      const int gpu = node * s.gpus_per_node + local;
      for (int k = 0; k < owned_count[at(local)]; ++k) {
        const int j = owned_nic[at(local * max_owned_nics + k)];
        const int e = add_cable(gpu, first_nic + node * s.nics_per_node + j, EdgeKind::pcie, pcie_Bps, 0.0);
        gpu_nic_edge[at(gpu * max_owned_nics + k)] = e;
        nic_gpu_edge[at(gpu * max_owned_nics + k)] = e + 1;
      }
    }
  }
}

Cluster::Cluster() : impl_(std::make_unique<Impl>()) {}

Cluster::Cluster(const ClusterSpec& spec) : impl_(std::make_unique<Impl>()) {
  impl_->spec = spec;
  impl_->build();  // connected by construction (tests check connected() on every builder)
}

Cluster Cluster::from_graph(GraphDescription graph) {
  Cluster c;
  c.impl_->loaded = true;
  c.impl_->vertices = std::move(graph.vertices);
  c.impl_->edges = std::move(graph.edges);
  c.impl_->vertex_names = std::move(graph.vertex_names);
  c.impl_->build_loaded();
  c.impl_->levels = tree::loaded_levels(c.impl_->spec);
  return c;
}

Cluster::~Cluster() = default;
Cluster::Cluster(Cluster&&) noexcept = default;
Cluster& Cluster::operator=(Cluster&&) noexcept = default;

const ClusterSpec& Cluster::spec() const { return impl_->spec; }

int Cluster::num_gpus() const { return impl_->spec.nodes * impl_->spec.gpus_per_node; }

int Cluster::node_of_gpu(int gpu) const {
  CS_CHECK(gpu >= 0 && gpu < num_gpus());
  return gpu / impl_->spec.gpus_per_node;
}

int Cluster::leaf_of_node(int node) const {
  CS_CHECK(node >= 0 && node < impl_->spec.nodes);
  if (impl_->nic_leaf.empty()) return -1;
  return impl_->leaf_of_nic(node, 0);
}

int Cluster::gpu_vertex(int gpu) const {
  CS_CHECK(gpu >= 0 && gpu < num_gpus());
  return gpu;
}

int Cluster::nic_vertex(int node, int nic) const {
  CS_CHECK(node >= 0 && node < impl_->spec.nodes);
  CS_CHECK(nic >= 0 && nic < impl_->spec.nics_per_node);
  if (impl_->spec.nodes == 1 || impl_->loaded) return -1;
  return impl_->first_nic + node * impl_->spec.nics_per_node + nic;
}

int Cluster::leaf_of_nic(int node, int nic) const {
  CS_CHECK(node >= 0 && node < impl_->spec.nodes);
  CS_CHECK(nic >= 0 && nic < impl_->spec.nics_per_node);
  return impl_->leaf_of_nic(node, nic);
}

int Cluster::num_leaves() const { return impl_->num_leaves; }
int Cluster::num_spines() const { return impl_->num_spines; }
int Cluster::num_cores() const { return impl_->num_cores; }
int Cluster::num_pods() const { return impl_->num_pods; }
bool Cluster::from_file() const { return impl_->loaded; }
const std::vector<FabricLevel>& Cluster::levels() const { return impl_->levels; }

int Cluster::switch_level(int vertex) const {
  CS_CHECK(vertex >= 0 && at(vertex) < impl_->vertices.size());
  switch (impl_->vertices[at(vertex)].kind) {
    case VertexKind::leaf: return 0;
    case VertexKind::spine: return 1;
    case VertexKind::core: return 2;
    default: return -1;
  }
}

std::string Cluster::span_name(const GroupLink& link) const {
  if (link.span == Span::single_gpu) return "gpu";
  if (link.span == Span::node) return "node";
  CS_CHECK(link.level >= 0 && at(link.level) < impl_->levels.size());
  return impl_->levels[at(link.level)].name;
}

const std::vector<Vertex>& Cluster::vertices() const { return impl_->vertices; }
const std::vector<Edge>& Cluster::edges() const { return impl_->edges; }

bool Cluster::connected() const {
  using Csr = boost::compressed_sparse_row_graph<boost::directedS>;
  struct CountDiscovered : boost::default_bfs_visitor {
    std::size_t* count;
    explicit CountDiscovered(std::size_t* c) : count(c) {}
    void discover_vertex(Csr::vertex_descriptor, const Csr&) const { ++*count; }
  };
  const std::size_t n = impl_->vertices.size();
  if (n == 0) return true;
  std::vector<std::pair<std::size_t, std::size_t>> arcs;
  arcs.reserve(impl_->edges.size());
  for (const Edge& e : impl_->edges) arcs.emplace_back(static_cast<std::size_t>(e.src), static_cast<std::size_t>(e.dst));
  const Csr g(boost::edges_are_unsorted_multi_pass, arcs.begin(), arcs.end(), n);
  std::size_t discovered = 0;
  boost::breadth_first_search(g, boost::vertex(0, g), boost::visitor(CountDiscovered(&discovered)));
  return discovered == n;
}

GroupLink Cluster::group_link(std::span<const int> gpus) const {
  const Impl& im = *impl_;
  const ClusterSpec& s = im.spec;
  CS_CHECK(!gpus.empty());
  std::vector<int> sorted(gpus.begin(), gpus.end());
  std::sort(sorted.begin(), sorted.end());
  CS_CHECK(sorted.front() >= 0 && sorted.back() < num_gpus());
  CS_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
  if (im.loaded) return im.group_link_loaded(sorted);

  const double intra_s = s.intra.latency_us * kUs;
  // One GPU: nothing crosses a link. Report the scale-up figures (finite, so callers multiplying by 0
  // bytes stay finite) and no latency.
  if (sorted.size() == 1) return GroupLink{Span::single_gpu, im.scaleup_Bps, 0.0};

  const int first_domain = sorted.front() / s.gpus_per_node / im.nodes_per_domain;
  const bool one_domain = std::all_of(sorted.begin(), sorted.end(), [&](int g) {
    return g / s.gpus_per_node / im.nodes_per_domain == first_domain;
  });
  if (one_domain) {
    // A bridged pair talks over its bridge only; any larger ring has PCIe hops.
    if (sorted.size() == 2 && im.bridge_edge[at(sorted[0])] >= 0 &&
        im.edges[at(im.bridge_edge[at(sorted[0])])].dst == sorted[1]) {
      return GroupLink{Span::node, im.bridge_Bps, intra_s};
    }
    return GroupLink{Span::node, s.intra.switched ? im.scaleup_Bps : scaleup_ring_Bps(sorted), intra_s};
  }

  // Across scale-up domains (so across nodes, and there is a fabric). Per node: how many group GPUs and
  // which local NICs they use. std::map keeps the iteration order deterministic.
  std::map<int, int> per_node_count;
  std::map<int, std::set<int>> per_node_nics;
  for (const int g : sorted) {
    const int node = g / s.gpus_per_node;
    ++per_node_count[node];
    im.nics_of_local_gpu(g % s.gpus_per_node, per_node_nics[node]);
  }
  int k = s.gpus_per_node;
  for (const auto& [node, count] : per_node_count) k = std::min(k, count);

  // The fabric says how high the group's cross-node ring steps climb; each level above the first divides
  // the NIC share by its oversubscription.
  const int level = im.fabric->group_level(im, per_node_nics);
  CS_CHECK(level >= 0 && at(level) < im.levels.size());
  double oversub = 1.0;
  for (int l = 1; l <= level; ++l) oversub *= im.levels[at(l)].oversubscription;
  const int hops = im.levels[at(level)].hops;
  const double net_Bps = static_cast<double>(k) * s.nics_per_node / s.gpus_per_node *
                         s.nic.payload_GBps() * kGBps / oversub;
  const double latency_s = hops * s.nic.latency_us * kUs + intra_s;
  const double up_Bps = s.intra.switched ? im.scaleup_Bps : scaleup_ring_Bps(sorted);
  return GroupLink{Span::fabric, std::min(up_Bps, net_Bps), latency_s, level};
}

double Cluster::scaleup_ring_Bps(std::span<const int> gpus) const {
  const Impl& im = *impl_;
  // Per node, its GPUs in group order (nodes in order of first appearance).
  std::vector<std::vector<int>> per_node;
  std::map<int, std::size_t> slot;
  for (const int g : gpus) {
    const auto [it, fresh] = slot.emplace(node_of_gpu(g), per_node.size());
    if (fresh) per_node.emplace_back();
    per_node[it->second].push_back(g);
  }
  std::map<int, double> units;  // edge id -> ring pairs routed over it (one node at a time)
  std::vector<int> path;
  const double gpu_Bps = im.loaded ? spec().intra.gpu_bandwidth_GBps * kGBps * spec().intra.efficiency : im.scaleup_Bps;
  const int G = spec().gpus_per_node;
  double best = std::numeric_limits<double>::infinity();
  for (const auto& local : per_node) {
    if (local.size() < 2) continue;
    units.clear();
    // The node's other GPUs run the same collective on their groups at the same time (a TP2 x DP4 node runs
    // two DP rings): the group's translates by local GPU index that are disjoint from those already taken.
    std::vector<bool> taken(at(G), false);
    std::set<int> own;  // the edges the group's own ring uses: only they slow it
    for (int d = 0; d < G; ++d) {
      std::vector<int> shifted;
      bool free = true;
      for (const int g : local) {
        const int moved = g - g % G + (g % G + d) % G;
        free = free && !taken[at(moved % G)];
        shifted.push_back(moved);
      }
      if (!free) continue;
      for (const int g : shifted) taken[at(g % G)] = true;
      for (std::size_t i = 0; i < shifted.size(); ++i) {
        route(shifted[i], shifted[(i + 1) % shifted.size()], 0, path);
        for (const int e : path) {
          units[e] += 1;
          if (d == 0) own.insert(e);
        }
      }
    }
    for (const int e : own) best = std::min(best, im.edges[at(e)].bandwidth_Bps / units[e]);
  }
  return std::isfinite(best) ? best : gpu_Bps;
}

}  // namespace cs::topo
