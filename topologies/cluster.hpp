#pragma once
// Cluster graph: GPUs, scale-up switches, NICs and the scale-out fabric as one graph.
//
// Vertices are devices (GPU, NVSwitch, PCIe switch, NIC, leaf / spine switch); each physical cable is a
// pair of directed edges, one per direction, each with its own bandwidth (bytes/s), latency and kind.
// The graph is a Boost.Graph adjacency_list inside the implementation; this header exposes only integer
// ids and plain vectors so that callers never see Boost types.
//
// Builders for the foundation: a node of `gpus_per_node` GPUs on NVSwitch (every GPU one NVLink bundle to
// the switch, at the GPU's per-direction NVLink bandwidth) or on a PCIe switch tree; `nics_per_node` NICs
// per node, each attached to the PCIe switch of GPU i*gpus_per_node/nics_per_node; a two-tier fat-tree:
// leaf switches of `leaf_radix` down-ports, spines sized so that the up-link capacity of each leaf is its
// down-link capacity divided by `oversubscription`.
//
// For the analytical network (no contention) the cluster answers: which level does a group of GPUs
// span, and what per-rank bus bandwidth and per-step latency does a ring over that group see. A ring
// over k GPUs per node on N > 1 nodes crosses each node boundary with all of its data; NCCL spreads its
// channels over the NICs closest to the group's GPUs, so a node's group can use k of the node's NICs'
// share, k / gpus_per_node of the node's NIC capacity (the other GPUs' groups use the rest). Per rank:
//   B = min( B_scaleup , k * nics_per_node / gpus_per_node * B_nic / oversub_if_spans_leaves ).
// k is the smallest number of group GPUs on any one node the group touches (groups are symmetric in
// practice; the minimum is the conservative choice when they are not). Span: a group inside one node, or
// inside one multi-node scale-up domain (nvl72), is `node` and sees only B_scaleup; across nodes it is
// `leaf` when its cross-node ring steps stay under one leaf switch (all its NICs on one leaf, or, on a
// rail-optimized fabric, every node uses the same local NIC indices and NIC j of all its nodes sits on one
// rail leaf), else `spine`. Ring step latency: intra hop for `node`; 2 (leaf) or 4 (spine) network hops
// plus one intra hop across nodes. fabric "ethernet" builds the same two tiers as "fat-tree".
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "topologies/link_catalog.hpp"

namespace cs::topo {

enum class VertexKind { gpu, nvswitch, pcie_switch, nic, leaf, spine };
enum class EdgeKind { nvlink, pcie, network };

struct ClusterSpec {
  int nodes = 1;
  int gpus_per_node = 8;
  IntraNodeSpec intra;           // resolved; gpu_bandwidth_GBps filled from the GPU when 0 in the catalog
  std::string fabric = "fat-tree";
  NetLinkSpec nic;               // resolved
  int nics_per_node = 8;
  double oversubscription = 1.0; // leaf up-link vs down-link capacity
  int leaf_radix = 32;           // down ports per leaf switch
};

struct Vertex {
  VertexKind kind;
  int node;   // node index, -1 for fabric switches and for a scale-up switch spanning nodes (nvl72)
  int index;  // GPU index within the cluster for GPUs, local index otherwise (NIC j of its node; leaf,
              // spine and multi-node scale-up domain numbers for those)
};

struct Edge {
  int src, dst;
  EdgeKind kind;
  double bandwidth_Bps;  // payload bandwidth (line rate x efficiency), this direction
  double latency_s;
};

// Where a group of GPUs sits.
enum class Span { single_gpu, node, leaf, spine };

struct GroupLink {
  Span span;
  double bus_bandwidth_Bps;  // per-rank bandwidth a ring over the group sees (formula above)
  double step_latency_s;     // latency of one ring step over the slowest level spanned
};

class Cluster {
 public:
  explicit Cluster(const ClusterSpec& spec);
  ~Cluster();
  Cluster(Cluster&&) noexcept;
  Cluster& operator=(Cluster&&) noexcept;

  const ClusterSpec& spec() const;
  int num_gpus() const;
  int node_of_gpu(int gpu) const;
  int leaf_of_node(int node) const;  // leaf of the node's NIC 0 (0-based leaf number); -1: no fabric
  int gpu_vertex(int gpu) const;
  int nic_vertex(int node, int nic) const;     // -1 for a one-node cluster (built without NICs)
  int leaf_of_nic(int node, int nic) const;  // leaf number; -1 when there is no fabric (one node)
  int num_leaves() const;
  int num_spines() const;
  bool connected() const;  // every vertex reachable from GPU 0 (each cable is two directed edges)

  const std::vector<Vertex>& vertices() const;
  const std::vector<Edge>& edges() const;

  // The analytical view of a group (GPU indices; any order).
  GroupLink group_link(std::span<const int> gpus) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cs::topo
