#pragma once
// Internal to topologies/: the state behind Cluster, shared by cluster.cpp (builders, group view),
// routing.cpp (routes), from_graph and the fabric registrations (topologies/fabrics/). Included by topologies/*.cpp only, never by a public header.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "topologies/cluster.hpp"
#include "topologies/fabric.hpp"
#include "sim/base/units.hpp"

namespace cs::topo {
namespace detail {

constexpr double kUs = 1e-6;

// splitmix64 finaliser (Steele, Lea, Flood 2014): a fixed bijective mix, identical on every platform.
constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// ECMP choice in [0, n) for decision `decision` of the flow (flow_id, src, dst); n >= 1. Multiply-shift
// maps the top 32 bits onto [0, n) without a division (bias below 2^-32 * n).
inline int ecmp_pick(std::uint64_t flow_id, int src, int dst, int decision, int n) {
  std::uint64_t h = splitmix64(flow_id);
  h = splitmix64(h ^ (static_cast<std::uint64_t>(static_cast<std::uint32_t>(src)) << 32 |
                      static_cast<std::uint32_t>(dst)));
  h = splitmix64(h + static_cast<std::uint64_t>(decision));
  return static_cast<int>(((h >> 32) * static_cast<std::uint64_t>(n)) >> 32);
}

}  // namespace detail

struct Cluster::Impl {
  ClusterSpec spec;
  std::vector<Vertex> vertices;
  std::vector<Edge> edges;
  bool loaded = false;  // built by from_graph
  const Fabric* fabric = nullptr;    // the registration that builds the scale-out fabric; nullptr when loaded
  std::vector<FabricLevel> levels;   // its switch levels (Cluster::levels())

  int nodes_per_domain = 1;  // nodes sharing one scale-up fabric (>1 only for nvl72-style domains)
  int first_switch = 0;
  int first_nic = 0;
  int first_leaf = 0;
  int first_spine = 0;
  int first_core = 0;
  int num_leaves = 0;
  int num_spines = 0;
  int num_cores = 0;
  int num_pods = 0;
  std::vector<int> nic_leaf;  // leaf number of global NIC n*N + j; empty for one node
  double scaleup_Bps = 0;     // per GPU, per direction, payload
  double bridge_Bps = 0;      // bridged PCIe pairs, per direction, payload; 0 = no bridges
  bool pxn = false;           // PXN applies: rail-optimized fabric, NVLink nodes, spec.pxn
  // PCIe host side (cluster.hpp "PCIe nodes"): 0 switches per node = one switch per node, no root complex.
  int pcie_sockets = 1;
  int pcie_gpus_per_switch = 0;  // > 0 only when the node has several switches or sockets
  int pcie_switches_per_node = 1;
  std::vector<int> switch_up_edge;    // [node * switches + s]: PCIe switch -> its root complex
  std::vector<int> switch_down_edge;  // [node * switches + s]: root complex -> PCIe switch
  std::vector<int> socket_edge;       // [(node * sockets + a) * sockets + b]: root complex a -> b, -1 for a == b

  // Route tables of a built cluster: directed edge ids, -1 where there is no such edge.
  std::vector<int> gpu_up_edge;    // GPU -> its scale-up switch
  std::vector<int> gpu_down_edge;  // scale-up switch -> GPU
  std::vector<int> bridge_edge;    // GPU -> its bridge partner
  int max_owned_nics = 0;          // most NICs one local GPU owns
  std::vector<int> owned_count;    // [local GPU]: NICs it owns
  std::vector<int> owned_nic;      // [local GPU * max_owned_nics + k]: local index of its k-th NIC
  std::vector<int> gpu_nic_edge;   // [gpu * max_owned_nics + k]: GPU -> its k-th NIC
  std::vector<int> nic_gpu_edge;   // [gpu * max_owned_nics + k]: that NIC -> GPU
  std::vector<int> nic_up_edge;    // [global NIC]: NIC -> leaf
  std::vector<int> nic_down_edge;  // [global NIC]: leaf -> NIC
  std::vector<int> leaf_pod;       // [leaf]: pod
  std::vector<int> leaf_up_count;  // [leaf]: up-links u_l, to pod spines 0..u_l-1
  int max_leaf_up = 0;
  std::vector<int> leaf_up_edge;    // [leaf * max_leaf_up + s]: leaf -> spine s of its pod
  std::vector<int> leaf_down_edge;  // [leaf * max_leaf_up + s]: that spine -> leaf
  std::vector<int> pod_first_spine; // [pod]: global spine number of the pod's spine 0
  std::vector<int> spine_up_count;  // [global spine]: up-links c to cores 0..c-1 of its plane
  int max_spine_up = 0;
  std::vector<int> spine_up_edge;   // [global spine * max_spine_up + k]: spine -> core k of its plane
  std::vector<int> spine_down_edge; // [global spine * max_spine_up + k]: that core -> spine

  // Loaded clusters.
  std::vector<std::string> vertex_names;
  std::vector<int> gpu_node;   // [gpu]: node
  std::vector<int> out_begin;  // CSR over out-edges: edges of vertex v are out_edges[out_begin[v]..]
  std::vector<int> out_edges;
  std::vector<int> dist;       // [dst_gpu * V + v]: hops from v to dst_gpu; -1 unreachable

  int add_vertex(VertexKind kind, int node, int index);
  // Returns the id of the forward edge; the reverse edge is id + 1.
  int add_cable(int a, int b, EdgeKind kind, double bandwidth_Bps, double latency_s);
  int leaf_of_nic(int node, int nic) const {
    if (nic_leaf.empty()) return -1;
    return nic_leaf[static_cast<std::size_t>(node * spec.nics_per_node + nic)];
  }
  void nics_of_local_gpu(int local_gpu, std::set<int>& out) const;

  void build();
  void build_pcie_host();  // build()'s parts
  void build_nics();
  void build_loaded();
  void summarise_network(int nodes);  // build_loaded's NIC figures
  void route_built(int src, int dst, std::uint64_t flow_id, std::vector<int>& out) const;
  void route_loaded(int src, int dst, std::uint64_t flow_id, std::vector<int>& out) const;
  GroupLink group_link_loaded(const std::vector<int>& sorted) const;
};

}  // namespace cs::topo
