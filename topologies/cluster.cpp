// Cluster graph builder and the analytical group view (the model is in cluster.hpp's essay).
//
// Vertex numbering (stable, deterministic): all GPUs first, so gpu_vertex(g) == g; then scale-up
// switches (one per node, or one per multi-node domain for nvl72); then NICs node by node; then leaves;
// then spines. Every cable is added as two directed edges, forward then reverse, with equal bandwidth and
// latency, both in the Boost graph and in the plain edge vector (same order, so edge i of either is the
// same edge).
//
// Edge figures:
// - GPU <-> scale-up switch: the GPU's per-direction scale-up bandwidth x efficiency; the per-hop latency
//   (GPU -> switch -> GPU) is split evenly over the two edges of that path.
// - GPU <-> NIC: PCIe x16 between the GPU's PCIe switch and the NIC, modeled as a direct edge to every
//   GPU sharing that NIC. Gen5 x16 (64 GB/s) for NICs up to 400 Gb/s, Gen6 x16 (128 GB/s, ConnectX-8)
//   above, times the pcie catalog efficiency; so the PCIe hop never caps a catalog NIC. Latency 0: the
//   NIC's per-hop latency already includes its DMA.
// - NIC <-> leaf and leaf <-> spine: the NIC link's payload bandwidth and per-hop latency.
//
// Fabric: NICs take leaf down-ports in order (fat-tree, ethernet): global NIC n*N + j sits on leaf
// (n*N + j) / leaf_radix. Rail-optimized: NIC j of every node of a block of leaf_radix nodes sits on rail
// leaf block*N + j (with nodes <= leaf_radix, simply leaf j). A leaf with d used down-ports gets
// ceil(d / oversubscription) up-links, one to each of spines 0..; the spine count is the largest up-link
// count. Spines are logical planes of unbounded radix: a real spine layer of bounded radix that provides
// the same up-link capacity behaves the same for the analytical and flow models. One leaf: no spines;
// one node: no scale-out at all, neither NICs nor switches (nothing would cross them).
#include "topologies/cluster.hpp"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "topologies/check.hpp"

namespace cs::topo {
namespace {

struct VertexProps {
  VertexKind kind = VertexKind::gpu;
  int node = -1;
  int index = 0;
};

struct EdgeProps {
  EdgeKind kind = EdgeKind::network;
  double bandwidth_Bps = 0;
  double latency_s = 0;
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, VertexProps,
                                    EdgeProps>;

constexpr double kGBps = 1e9;
constexpr double kUs = 1e-6;

// PCIe x16 per-direction line rates (PCI-SIG): Gen5 32 GT/s, Gen6 64 GT/s.
constexpr double kPcieGen5x16GBps = 64.0;
constexpr double kPcieGen6x16GBps = 128.0;
// Above what a Gen5 x16 slot carries (~504 Gb/s after 128b/130b), a NIC ships on Gen6 (ConnectX-8).
constexpr double kGen5MaxNicGbps = 504.0;

int ceil_div(int a, int b) { return (a + b - 1) / b; }

}  // namespace

struct Cluster::Impl {
  ClusterSpec spec;
  Graph graph;
  std::vector<Vertex> vertices;
  std::vector<Edge> edges;

  int nodes_per_domain = 1;  // nodes sharing one scale-up fabric (>1 only for nvl72-style domains)
  int first_switch = 0;
  int first_nic = 0;
  int first_leaf = 0;
  int first_spine = 0;
  int num_leaves = 0;
  int num_spines = 0;
  std::vector<int> nic_leaf;  // leaf number of global NIC n*N + j; empty for one node
  double scaleup_Bps = 0;     // per GPU, per direction, payload

  int add_vertex(VertexKind kind, int node, int index) {
    const auto v = boost::add_vertex(VertexProps{kind, node, index}, graph);
    CS_TOPO_CHECK(static_cast<std::size_t>(v) == vertices.size());
    vertices.push_back(Vertex{kind, node, index});
    return static_cast<int>(v);
  }

  void add_cable(int a, int b, EdgeKind kind, double bandwidth_Bps, double latency_s) {
    CS_TOPO_CHECK(a != b && bandwidth_Bps > 0 && latency_s >= 0);
    for (const auto& [src, dst] : {std::pair{a, b}, std::pair{b, a}}) {
      const auto [e, added] = boost::add_edge(static_cast<Graph::vertex_descriptor>(src),
                                              static_cast<Graph::vertex_descriptor>(dst),
                                              EdgeProps{kind, bandwidth_Bps, latency_s}, graph);
      CS_TOPO_CHECK(added);
      (void)e;
      edges.push_back(Edge{src, dst, kind, bandwidth_Bps, latency_s});
    }
  }

  int leaf_of_nic(int node, int nic) const {
    if (nic_leaf.empty()) return -1;
    return nic_leaf[static_cast<std::size_t>(node * spec.nics_per_node + nic)];
  }

  // Local NIC indices a GPU's traffic uses: with N <= G GPU g shares NIC g*N/G; with N > G GPU g owns the
  // NICs j with j*G/N == g.
  void nics_of_local_gpu(int local_gpu, std::set<int>& out) const {
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

  void build();
  void build_fabric();
};

void Cluster::Impl::build() {
  const ClusterSpec& s = spec;
  CS_TOPO_CHECK(s.nodes >= 1 && s.gpus_per_node >= 1);
  // The caller resolves the scale-up bandwidth (nvswitch: from the GPU's NVLink) before building.
  CS_TOPO_CHECK(s.intra.gpu_bandwidth_GBps > 0);
  CS_TOPO_CHECK(s.intra.efficiency > 0 && s.intra.efficiency <= 1);
  CS_TOPO_CHECK(s.intra.latency_us >= 0);
  CS_TOPO_CHECK(s.fabric == "fat-tree" || s.fabric == "rail-optimized" || s.fabric == "ethernet");
  CS_TOPO_CHECK(s.nics_per_node >= 0);
  if (s.nodes > 1) {
    CS_TOPO_CHECK(s.nics_per_node >= 1);
    CS_TOPO_CHECK(s.nic.line_rate_gbps > 0 && s.nic.efficiency > 0 && s.nic.efficiency <= 1);
    CS_TOPO_CHECK(s.nic.latency_us >= 0);
    CS_TOPO_CHECK(s.oversubscription > 0);
    CS_TOPO_CHECK(s.leaf_radix >= 1);
  }

  const int domain_gpus = s.intra.domain_gpus;
  CS_TOPO_CHECK(domain_gpus >= 0);
  if (domain_gpus > s.gpus_per_node) {
    CS_TOPO_CHECK(domain_gpus % s.gpus_per_node == 0);
    nodes_per_domain = domain_gpus / s.gpus_per_node;
  }
  scaleup_Bps = s.intra.gpu_bandwidth_GBps * kGBps * s.intra.efficiency;

  const int num_gpus = s.nodes * s.gpus_per_node;
  for (int gpu = 0; gpu < num_gpus; ++gpu) add_vertex(VertexKind::gpu, gpu / s.gpus_per_node, gpu);

  // Scale-up switches. The last nvl72 domain may be partial when nodes is not a multiple of its size.
  first_switch = static_cast<int>(vertices.size());
  const VertexKind switch_kind = s.intra.switched ? VertexKind::nvswitch : VertexKind::pcie_switch;
  const EdgeKind scaleup_kind = s.intra.switched ? EdgeKind::nvlink : EdgeKind::pcie;
  const int num_domains = ceil_div(s.nodes, nodes_per_domain);
  for (int d = 0; d < num_domains; ++d) {
    if (nodes_per_domain == 1) {
      add_vertex(switch_kind, d, 0);
    } else {
      add_vertex(switch_kind, -1, d);
    }
  }
  const double half_hop_s = s.intra.latency_us * kUs / 2.0;
  for (int gpu = 0; gpu < num_gpus; ++gpu) {
    const int domain = gpu / s.gpus_per_node / nodes_per_domain;
    add_cable(gpu, first_switch + domain, scaleup_kind, scaleup_Bps, half_hop_s);
  }

  // NICs and their PCIe attachment.
  first_nic = static_cast<int>(vertices.size());
  if (s.nodes > 1) {
    for (int node = 0; node < s.nodes; ++node) {
      for (int j = 0; j < s.nics_per_node; ++j) add_vertex(VertexKind::nic, node, j);
    }
    const IntraNodeSpec* pcie = find_intra_node("pcie");
    CS_TOPO_CHECK(pcie != nullptr);
    const double pcie_line_GBps =
        s.nic.line_rate_gbps > kGen5MaxNicGbps ? kPcieGen6x16GBps : kPcieGen5x16GBps;
    const double pcie_Bps = pcie_line_GBps * kGBps * pcie->efficiency;
    for (int node = 0; node < s.nodes; ++node) {
      for (int local = 0; local < s.gpus_per_node; ++local) {
        std::set<int> nics;
        nics_of_local_gpu(local, nics);
        for (const int j : nics) {
          add_cable(node * s.gpus_per_node + local, first_nic + node * s.nics_per_node + j,
                    EdgeKind::pcie, pcie_Bps, 0.0);
        }
      }
    }
  }

  first_leaf = static_cast<int>(vertices.size());
  first_spine = first_leaf;
  if (s.nodes > 1) build_fabric();

  CS_TOPO_CHECK(boost::num_vertices(graph) == vertices.size());
  CS_TOPO_CHECK(boost::num_edges(graph) == edges.size());
}

void Cluster::Impl::build_fabric() {
  const ClusterSpec& s = spec;
  const int n_nics = s.nics_per_node;
  const int radix = s.leaf_radix;
  nic_leaf.assign(static_cast<std::size_t>(s.nodes * n_nics), -1);
  if (s.fabric == "rail-optimized") {
    // Rail j of each block of `radix` nodes is one leaf; NIC j of a node plugs into its rail.
    num_leaves = ceil_div(s.nodes, radix) * n_nics;
    for (int node = 0; node < s.nodes; ++node) {
      for (int j = 0; j < n_nics; ++j) {
        nic_leaf[static_cast<std::size_t>(node * n_nics + j)] = (node / radix) * n_nics + j;
      }
    }
  } else {
    num_leaves = ceil_div(s.nodes * n_nics, radix);
    for (int i = 0; i < s.nodes * n_nics; ++i) nic_leaf[static_cast<std::size_t>(i)] = i / radix;
  }

  const double net_Bps = s.nic.payload_GBps() * kGBps;
  const double hop_s = s.nic.latency_us * kUs;
  first_leaf = static_cast<int>(vertices.size());
  for (int leaf = 0; leaf < num_leaves; ++leaf) add_vertex(VertexKind::leaf, -1, leaf);
  std::vector<int> down_ports(static_cast<std::size_t>(num_leaves), 0);
  for (int i = 0; i < s.nodes * n_nics; ++i) {
    const int leaf = nic_leaf[static_cast<std::size_t>(i)];
    CS_TOPO_CHECK(leaf >= 0 && leaf < num_leaves);
    ++down_ports[static_cast<std::size_t>(leaf)];
    add_cable(first_nic + i, first_leaf + leaf, EdgeKind::network, net_Bps, hop_s);
  }

  // Up-links: capacity up = capacity down / oversubscription, rounded up to whole cables. The epsilon
  // keeps e.g. 16 / (16/3) from rounding 3.0000000001 up to 4.
  std::vector<int> up_links(down_ports.size(), 0);
  first_spine = static_cast<int>(vertices.size());
  num_spines = 0;
  if (num_leaves > 1) {
    for (std::size_t leaf = 0; leaf < down_ports.size(); ++leaf) {
      CS_TOPO_CHECK(down_ports[leaf] <= radix);
      up_links[leaf] = static_cast<int>(std::ceil(down_ports[leaf] / s.oversubscription - 1e-9));
      num_spines = std::max(num_spines, up_links[leaf]);
    }
    for (int spine = 0; spine < num_spines; ++spine) add_vertex(VertexKind::spine, -1, spine);
    for (int leaf = 0; leaf < num_leaves; ++leaf) {
      for (int spine = 0; spine < up_links[static_cast<std::size_t>(leaf)]; ++spine) {
        add_cable(first_leaf + leaf, first_spine + spine, EdgeKind::network, net_Bps, hop_s);
      }
    }
  }
}

Cluster::Cluster(const ClusterSpec& spec) : impl_(std::make_unique<Impl>()) {
  impl_->spec = spec;
  impl_->build();
  CS_TOPO_CHECK(connected());
}

Cluster::~Cluster() = default;
Cluster::Cluster(Cluster&&) noexcept = default;
Cluster& Cluster::operator=(Cluster&&) noexcept = default;

const ClusterSpec& Cluster::spec() const { return impl_->spec; }

int Cluster::num_gpus() const { return impl_->spec.nodes * impl_->spec.gpus_per_node; }

int Cluster::node_of_gpu(int gpu) const {
  CS_TOPO_CHECK(gpu >= 0 && gpu < num_gpus());
  return gpu / impl_->spec.gpus_per_node;
}

int Cluster::leaf_of_node(int node) const {
  CS_TOPO_CHECK(node >= 0 && node < impl_->spec.nodes);
  if (impl_->nic_leaf.empty()) return -1;
  return impl_->leaf_of_nic(node, 0);
}

int Cluster::gpu_vertex(int gpu) const {
  CS_TOPO_CHECK(gpu >= 0 && gpu < num_gpus());
  return gpu;
}

int Cluster::nic_vertex(int node, int nic) const {
  CS_TOPO_CHECK(node >= 0 && node < impl_->spec.nodes);
  CS_TOPO_CHECK(nic >= 0 && nic < impl_->spec.nics_per_node);
  if (impl_->spec.nodes == 1) return -1;
  return impl_->first_nic + node * impl_->spec.nics_per_node + nic;
}

int Cluster::leaf_of_nic(int node, int nic) const {
  CS_TOPO_CHECK(node >= 0 && node < impl_->spec.nodes);
  CS_TOPO_CHECK(nic >= 0 && nic < impl_->spec.nics_per_node);
  return impl_->leaf_of_nic(node, nic);
}

int Cluster::num_leaves() const { return impl_->num_leaves; }
int Cluster::num_spines() const { return impl_->num_spines; }

const std::vector<Vertex>& Cluster::vertices() const { return impl_->vertices; }
const std::vector<Edge>& Cluster::edges() const { return impl_->edges; }

bool Cluster::connected() const {
  struct CountDiscovered : boost::default_bfs_visitor {
    std::size_t* count;
    explicit CountDiscovered(std::size_t* c) : count(c) {}
    void discover_vertex(Graph::vertex_descriptor, const Graph&) const { ++*count; }
  };
  const Graph& g = impl_->graph;
  if (boost::num_vertices(g) == 0) return true;
  std::size_t discovered = 0;
  boost::breadth_first_search(g, boost::vertex(0, g), boost::visitor(CountDiscovered(&discovered)));
  return discovered == boost::num_vertices(g);
}

GroupLink Cluster::group_link(std::span<const int> gpus) const {
  const Impl& im = *impl_;
  const ClusterSpec& s = im.spec;
  CS_TOPO_CHECK(!gpus.empty());
  std::vector<int> sorted(gpus.begin(), gpus.end());
  std::sort(sorted.begin(), sorted.end());
  CS_TOPO_CHECK(sorted.front() >= 0 && sorted.back() < num_gpus());
  CS_TOPO_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());

  const double intra_s = s.intra.latency_us * kUs;
  // One GPU: nothing crosses a link. Report the scale-up figures (finite, so callers multiplying by 0
  // bytes stay finite) and no latency.
  if (sorted.size() == 1) return GroupLink{Span::single_gpu, im.scaleup_Bps, 0.0};

  const int first_domain = sorted.front() / s.gpus_per_node / im.nodes_per_domain;
  const bool one_domain = std::all_of(sorted.begin(), sorted.end(), [&](int g) {
    return g / s.gpus_per_node / im.nodes_per_domain == first_domain;
  });
  if (one_domain) return GroupLink{Span::node, im.scaleup_Bps, intra_s};

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

  std::set<int> leaves;
  for (const auto& [node, nics] : per_node_nics) {
    for (const int j : nics) leaves.insert(im.leaf_of_nic(node, j));
  }
  bool under_one_leaf = leaves.size() == 1;
  if (!under_one_leaf) {
    // NCCL lines channels up on same-index NICs across nodes: when every node uses the same local NICs
    // and NIC j of all of them sits on one (rail) leaf, each cross-node ring step stays under a leaf.
    const std::set<int>& ref = per_node_nics.begin()->second;
    bool rails_line_up = true;
    for (const auto& [node, nics] : per_node_nics) {
      if (nics != ref) rails_line_up = false;
    }
    if (rails_line_up) {
      const int ref_node = per_node_nics.begin()->first;
      for (const int j : ref) {
        for (const auto& [node, nics] : per_node_nics) {
          if (im.leaf_of_nic(node, j) != im.leaf_of_nic(ref_node, j)) rails_line_up = false;
        }
      }
    }
    under_one_leaf = rails_line_up;
  }

  const Span span = under_one_leaf ? Span::leaf : Span::spine;
  const double oversub = span == Span::spine ? s.oversubscription : 1.0;
  const double net_Bps = static_cast<double>(k) * s.nics_per_node / s.gpus_per_node *
                         s.nic.payload_GBps() * kGBps / oversub;
  const int hops = span == Span::leaf ? 2 : 4;
  const double latency_s = hops * s.nic.latency_us * kUs + intra_s;
  return GroupLink{span, std::min(im.scaleup_Bps, net_Bps), latency_s};
}

}  // namespace cs::topo
