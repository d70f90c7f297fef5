#pragma once
// Cluster graph: GPUs, scale-up switches, NICs and the scale-out fabric as one graph.
//
// Vertices are devices (GPU, NVSwitch, PCIe switch, NIC, leaf / spine / core switch); each physical cable is
// a pair of directed edges, one per direction, each with its own bandwidth (bytes/s), latency and kind.
// The graph is plain vectors of vertices and edges (connected() runs Boost.Graph's BFS over a compressed
// sparse row view built when asked); this header exposes only integer ids and plain vectors.
//
// Builders: a node of `gpus_per_node` GPUs on NVSwitch (every GPU one NVLink bundle to the switch, at the
// GPU's per-direction NVLink bandwidth), or on a PCIe switch (optionally with NVLink bridges between
// local GPUs 2i and 2i+1, intra.bridge_bandwidth_GBps > 0), or an NVL72-style domain of 72 GPUs over
// several trays on one NVSwitch fabric; `nics_per_node` NICs per node, each attached to the PCIe switch of
// GPU i*gpus_per_node/nics_per_node. Scale-out fabric:
// - two tiers (default): leaf switches of `leaf_radix` down-ports, spines sized so that the up-link
//   capacity of each leaf is its down-link capacity divided by `oversubscription`;
// - three tiers (`tiers` = 3): leaves are grouped in order into pods of `leaves_per_pod`; each pod has its
//   own spines (leaf tier as above), and spine s of every pod has up-links to core plane s, as many as
//   its down-links divided by `spine_oversubscription`. A flow between pods climbs leaf -> spine s ->
//   core (s, k) -> spine s of the other pod -> leaf. End to end, traffic leaving a pod sees
//   oversubscription x spine_oversubscription.
// The scale-out fabric is one of the registered fabrics (topologies/fabric.hpp): "fat-tree" and "ethernet"
// (the two or three tiers above, NICs fill leaves in order) and "rail-optimized" (NIC j of every node of a
// block of leaf_radix nodes on rail leaf j of that block). A fabric declares its switch levels (FabricLevel:
// name, oversubscription, hops); the network models read those, never a tier's name.
// For the analytical network (no contention) the cluster answers: which level does a group of GPUs
// span, and what per-rank bus bandwidth and per-step latency does a ring over that group see. A ring
// over k GPUs per node on N > 1 nodes crosses each node boundary with all of its data; NCCL spreads its
// channels over the NICs closest to the group's GPUs, so a node's group can use k of the node's NICs'
// share, k / gpus_per_node of the node's NIC capacity (the other GPUs' groups use the rest). Per rank:
//   B = min( B_scaleup , k * nics_per_node / gpus_per_node * B_nic / oversub_of_span ).
// k is the smallest number of group GPUs on any one node the group touches (groups are symmetric in
// practice; the minimum is the conservative choice when they are not). Span: a group inside one node, or
// inside one multi-node scale-up domain (nvl72), is `node` and sees only B_scaleup (on a bridged PCIe
// node, a group that is exactly one bridged pair sees the bridge; any larger ring has PCIe hops and sees
// PCIe); across nodes it is `fabric` at the lowest switch level its cross-node ring steps meet at (the
// fabric decides; for the trees: level 0, the leaf, when all its NICs are on one leaf, or, on a
// rail-optimized fabric, every node uses the same local NIC indices and NIC j of all its nodes sits on one
// rail leaf; else level 1, the spine, when all its leaves are in one pod (always, with two tiers); else
// level 2, the core). oversub_of_span: the product of the levels' oversubscription up to the span's level
// (1 at the leaf; oversubscription at the spine; oversubscription x spine_oversubscription at the core).
// Ring step latency: intra hop for `node`; the level's hops (2 leaf, 4 spine, 6 core) network hops plus
// one intra hop across nodes.
//
// PCIe nodes (intra.switched false; topologies/link_catalog.hpp pcie_sockets() and friends resolve the
// defaults). The node's G GPUs are split in index order over `sockets` root complexes, G / sockets each,
// and within a socket over PCIe switches of `gpus_per_pcie_switch` GPUs:
//   GPU --x16--> PCIe switch --x16--> root complex (socket) <--inter-socket link--> root complex
// every PCIe edge at the catalog's PCIe bandwidth x efficiency, the inter-socket link (QPI / UPI / xGMI,
// NCCL's LINK_SYS) at inter_socket_GBps per direction, one link between every two sockets. With one socket
// and one switch the node is today's single PCIe switch (no root-complex vertex). A route inside the node
// climbs only as far as it must: same switch GPU -> switch -> GPU (NCCL's PIX); other switch, same socket
// GPU -> switch -> root complex -> switch -> GPU (PHB); other socket ... -> root complex -> root complex
// -> ... (SYS). NCCL (src/graph/paths.cc at 5067397, ncclTopoCheckP2p: p2pLevel = PATH_PXB by default)
// does not use P2P beyond PXB and moves such data through host memory (the SHM transport): the same
// links are crossed (the writer's PCIe path up to its socket, the inter-socket link when the sockets
// differ, the reader's path down), which is what is modelled; the host memory's own bandwidth is not.
// A ring over the node's GPUs in index order crosses the inter-socket link twice, once in each
// direction, so every byte the ring moves crosses that link once per direction: a ring's per-rank
// bandwidth is that of its busiest link, min over links of capacity / (ring edges routed over it),
// which for the default 8-GPU two-socket node is the inter-socket link (22 GB/s < 51.2 GB/s PCIe).
// scaleup_ring_Bps() computes it for any group; NCCL's own search sizes rings by the same bottleneck.
//
// A cluster loaded from a file (topology_file.hpp) has no such structure; its group_link() takes the ring
// over the group's GPUs in ascending order and returns, as bus bandwidth, the smallest over consecutive
// pairs (last to first included) of the pair's bottleneck: the widest of the shortest (fewest-hop) paths
// between them, i.e. max over those paths of the min link bandwidth on the path; latency is the largest
// pair latency along those widest paths. This ignores that ring pairs may share a link (a NIC serving
// two GPUs of the group): the flow model sees that sharing, the analytical one does not.
//
// Routing (route()): the directed edges a flow from GPU src to GPU dst traverses.
// - Same scale-up domain (one node, or one nvl72 domain): GPU -> NVSwitch -> GPU, or GPU -> PCIe switch ->
//   GPU on PCIe nodes; a bridged pair (2i, 2i+1) uses its bridge, one edge.
// - Across domains: GPU -> NIC -> leaf [-> spine [-> core -> spine]] -> leaf -> NIC -> GPU. The NIC is
//   the GPU's affinity NIC (local GPU g uses NIC g * nics_per_node / gpus_per_node; with more NICs than
//   GPUs, one of the NICs it owns, chosen by the ECMP hash). Fabric hops are shortest up/down paths.
// - PXN (rail-optimized fabrics, NVLink nodes, ClusterSpec::pxn): when the source's NIC is on a
//   different rail than the destination's, the flow first crosses NVLink to the local GPU with the
//   destination's local index (GPU -> NVSwitch -> proxy GPU), then leaves through that GPU's NIC, on the
//   destination's rail. This is NCCL's PXN (PCI x NVLink, NCCL >= 2.12, on unless NCCL_PXN_DISABLE=1):
//   the proxy GPU's NIC sends data that arrived over NVLink, so cross-rail traffic stays on one rail
//   leaf instead of crossing the spine.
// - ECMP: where several next hops lie on shortest paths (which NIC of several, which spine, which core),
//   the choice is a fixed function of (flow_id, src, dst, decision index): splitmix64 mixing, the same
//   on every platform (never std::hash). The same flow id between the same GPUs always takes the same
//   path; distinct flow ids spread evenly. Including src and dst in the hash mimics a switch hashing the
//   packet 5-tuple, so that a caller reusing a small flow id (a channel number) for every rank pair does
//   not pin all pairs onto one spine.
// - Loaded clusters: fewest hops over the file's directed edges, GPUs other than the destination never
//   being transit vertices, ECMP among equal next hops by the same hash.
// Speed: built clusters index small per-GPU / per-NIC / per-leaf / per-spine edge tables, O(path length)
// per route (at most 10 edges) with no search and no allocation; loaded clusters walk a per-destination
// hop-distance table computed once at load, O(path length x degree).
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "topologies/link_catalog.hpp"

namespace cs::topo {

enum class VertexKind { gpu, nvswitch, pcie_switch, nic, leaf, spine, core, root_complex };
enum class EdgeKind { nvlink, pcie, network, inter_socket };

struct ClusterSpec {
  int nodes = 1;
  int gpus_per_node = 8;
  IntraNodeSpec intra;           // resolved; gpu_bandwidth_GBps filled from the GPU when 0 in the catalog
  std::string fabric = "fat-tree";
  NetLinkSpec nic;               // resolved
  int nics_per_node = 8;
  double oversubscription = 1.0; // leaf up-link vs down-link capacity
  int leaf_radix = 32;           // down ports per leaf switch
  int tiers = 2;                 // 2: leaf-spine; 3: leaf-spine-core in pods
  int leaves_per_pod = 8;        // tiers = 3: consecutive leaves per pod
  double spine_oversubscription = 1.0;  // tiers = 3: pod spine down-link vs core up-link capacity
  bool pxn = true;               // rail-optimized NVLink nodes: cross-rail flows go via the dst-rail GPU
  bool sharp = false;            // the switches reduce in the network (InfiniBand SHARP): NCCL's CollNet
};

struct Vertex {
  VertexKind kind;
  int node;   // node index, -1 for fabric switches and for a scale-up switch spanning nodes (nvl72)
  int index;  // GPU index within the cluster for GPUs, local index otherwise (NIC j of its node; leaf,
              // spine, core and multi-node scale-up domain numbers for those; loaded clusters: ordinal
              // among the vertices of that kind)
};

struct Edge {
  int src, dst;
  EdgeKind kind;
  double bandwidth_Bps;  // payload bandwidth (line rate x efficiency), this direction
  double latency_s;
};

// Where a group of GPUs sits: on one GPU, inside one scale-up domain (a node, or a multi-node NVLink
// domain), or across domains on the scale-out fabric (GroupLink::level says how high).
enum class Span { single_gpu, node, fabric };

// One switch level of a scale-out fabric, bottom (0) up, as its registration declares it
// (topologies/fabric.hpp). A group whose cross-node ring steps meet no lower than level l sees the
// product of the oversubscriptions of levels 1..l and `hops` network hops per ring step.
struct FabricLevel {
  std::string name;               // the switch tier ("leaf", "spine", "core"), for messages and tests
  double oversubscription = 1.0;  // up-link capacity below down-link capacity of the level beneath; 1 at level 0
  int hops = 2;                   // network edges of a ring step whose pair meets at this level
};

struct GroupLink {
  Span span;
  double bus_bandwidth_Bps;  // per-rank bandwidth a ring over the group sees (formula above)
  double step_latency_s;     // latency of one ring step over the slowest level spanned
  int level = -1;            // Span::fabric: index into Cluster::levels(); -1 otherwise
  // Loaded clusters only (0 on built ones): what the file's latencies add to one ring step over the
  // latencies the NCCL model's hop figures were measured with (sim/network/nccl_model.hpp, "Latency"), the
  // catalog's kScaleupReferenceHopUs = 0.6 us from GPU to GPU inside a node (its NVSwitch hop) and
  // kNetworkReferenceEdgeUs = 1 us for every network edge a step crosses (its InfiniBand hop, NIC ->
  // switch or switch -> NIC). Over the ring's pairs of each kind (inside a node, across nodes), the largest
  // sum along the pair's widest fewest-hop path of (edge latency - reference), minus 0.6 us inside a node;
  // at least minus the reference of one step (a file of zero latencies makes a step that much faster, never
  // faster than the protocol's own cost). A file at the reference figures (scenarios/mi300x-two-racks.dot)
  // adds 0.
  double scaleup_hop_extra_s = 0;
  double network_hop_extra_s = 0;
};

// An explicit graph, for Cluster::from_graph (load_topology builds one from a file).
// Preconditions (checked, a violation aborts; load_topology validates user files first with messages):
// vertices [0, G) are the GPUs with index == vertex id, numbered node by node (node 0's GPUs first), every
// node 0..N-1 holding the same number of GPUs; edges are directed, between existing distinct vertices,
// with bandwidth > 0 and latency >= 0; a cable is two edges.
struct GraphDescription {
  std::vector<Vertex> vertices;
  std::vector<Edge> edges;
  std::vector<std::string> vertex_names;  // for messages; may be empty
};

class Cluster {
 public:
  explicit Cluster(const ClusterSpec& spec);
  // A cluster over an arbitrary graph. spec() then summarises it (fabric and intra names "custom",
  // nodes and gpus_per_node counted, the node-0 ring's scale-up bandwidth and latency, the slowest
  // network edge as NIC); routes are fewest-hop paths (see the essay above).
  static Cluster from_graph(GraphDescription graph);
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
  int num_spines() const;  // all pods together
  int num_cores() const;   // 0 with two tiers (or one pod)
  int num_pods() const;    // 1 with two tiers; 0 without a fabric
  bool from_file() const;  // built by from_graph
  // The scale-out fabric's switch levels, bottom up (the registration's; on a loaded cluster leaf, spine and
  // core at the summary's figures). Empty never: a one-node cluster keeps its fabric's levels.
  const std::vector<FabricLevel>& levels() const;
  // The switch level of a fabric switch vertex (0 = the level NICs plug into); -1 for any other vertex.
  int switch_level(int vertex) const;
  // "gpu", "node" or the fabric level's name: where a group link sits, in words.
  std::string span_name(const GroupLink& link) const;
  bool connected() const;  // every vertex reachable from GPU 0 (each cable is two directed edges)
  // First GPU pair (a, b), a < b in lexicographic order, such that a cannot reach b or b cannot reach a
  // over routable paths; nullopt when every GPU reaches every other.
  std::optional<std::pair<int, int>> unreachable_gpu_pair() const;

  const std::vector<Vertex>& vertices() const;
  const std::vector<Edge>& edges() const;

  // The analytical view of a group (GPU indices; any order).
  GroupLink group_link(std::span<const int> gpus) const;
  // Per-rank scale-up bandwidth of a ring over the group inside its nodes: per node, the group's GPUs of
  // that node in group order as a cycle (a ring channel across nodes uses the same consecutive pairs),
  // together with the same cycle of every group the node's other GPUs run at the same time (the group's
  // translates by local GPU index, each disjoint from those before: a TP2 x DP4 node's two DP rings), each
  // pair routed, and over the links the group's own ring uses the busiest one's capacity / (pairs routed
  // over it), min over the nodes. On an
  // NVSwitch node every pair uses its own GPU links, so this is the GPU's scale-up bandwidth; on a PCIe
  // node it is the switch up-link or the inter-socket link where the ring shares or crosses them. A
  // group with one GPU per node has no intra-node hop: the GPU's scale-up bandwidth.
  double scaleup_ring_Bps(std::span<const int> gpus) const;

  // The directed edge ids (indices into edges()) of the path a flow from GPU src to GPU dst takes, in
  // order: edge i ends where edge i+1 starts, the first starts at src, the last ends at dst; empty when
  // src == dst. `out` is cleared and filled: no allocation once out.capacity() >= max_route_edges(), so a
  // caller that keeps one buffer routes millions of flows allocation-free. Thread-safe (const, no cache).
  void route(int src_gpu, int dst_gpu, std::uint64_t flow_id, std::vector<int>& out) const;
  std::vector<int> route(int src_gpu, int dst_gpu, std::uint64_t flow_id) const;  // convenience
  int max_route_edges() const;  // upper bound of a route's length (10 on built clusters)

  // Defined in the internal topologies/cluster_impl.hpp; public only so that a fabric's builder
  // (topologies/fabric.hpp) can name it.
  struct Impl;

 private:
  Cluster();
  std::unique_ptr<Impl> impl_;
};

}  // namespace cs::topo
