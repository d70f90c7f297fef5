#pragma once
// The flow-level network back-end: every collective becomes the point-to-point transfers its NCCL
// algorithm makes (nccl_model.hpp), each a flow on its routed path (topologies' route()), and all flows
// in flight share every link max-min fairly (maxmin.hpp). Oversubscribed spines, NICs shared by several
// GPUs, rail layouts and a second job on the fabric therefore change collective times by themselves.
//
// Granularity: a ring's steps are pipelined by NCCL so that each ring edge streams continuously; we model
// each ring edge as one flow carrying all the bytes that edge carries over the whole collective, and add
// the algorithm's latency (launch and hops) once its last flow finishes. Inside one node a ring channel's
// edges are one flow over all their links where that is exact (add_lockstep_ring: NCCL's ring runs in
// lockstep). Across nodes a ring uses one
// channel per local GPU of the group, each leaving the node through a different GPU (and so NIC), as
// NCCL's channels do. Symmetry: when a simulated collective spans nodes, the same collective of every
// mirrored group is put on the fabric too (TaskGraph::mirrors), so the representative sees the traffic of
// the ranks it stands for; inside one node mirrored groups use disjoint links and are not expanded.
//
// Path choice: a flow takes the least loaded of up to 64 of the fabric's equal-cost paths (by its
// busiest link's share capacity / (flows + 1), at the moment it starts). Static per-flow ECMP hashing
// would let a few long NCCL flows collide on one up-link of a non-blocking fat-tree and halve a ring's
// bandwidth from 8 nodes on (measured, 192 GB/s on DGX A100 8xHDR clusters, says they do not):
// InfiniBand routes fat-trees deterministically per destination (d-mod-k), which keeps shift patterns
// such as rings collision-free, Quantum switches add adaptive routing, and on RoCE NCCL spreads every
// connection over several queue pairs (NCCL_IB_QPS_PER_CONNECTION) that ECMP hashes apart. Where the
// links themselves are too few (an oversubscribed tier), flows still share them max-min fairly.
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/engine/comm_backend.hpp"
#include "sim/network/maxmin.hpp"
#include "sim/network/nccl_model.hpp"
#include "sim/network/node_groups.hpp"
#include "sim/network/token_dispatch.hpp"
#include "sim/engine/task_graph.hpp"
#include "topologies/cluster.hpp"

namespace cs::sim {

struct FlowNetworkOptions {
  std::string forced_algorithm;  // "" = NCCL-like choice
  // Calibrated NCCL constants (nccl_model.hpp): latencies through the chooser's estimate, bandwidth by
  // scaling each flow's bytes by 1 / bandwidth_scale of the tier it crosses (a flow between nodes: the
  // network tier; inside a node or into the NVSwitch: the scale-up tier), so a link of capacity B carries
  // it as if it ran at B x scale while its data is still counted once on the link.
  NcclCalibration calibration{};
};

class FlowNetwork : public CommBackend {
 public:
  FlowNetwork(const CollectiveTable& graph, const topo::Cluster& cluster, FlowNetworkOptions options = {});
  void start(std::uint32_t collective, Time now) override;
  Time next_completion() const override;
  void pop_completed(Time now, std::vector<std::uint32_t>& done) override;
  std::vector<LinkLoad> link_loads() const override;

  // What the chooser picked for a collective (valid once started).
  const AlgorithmChoice& choice(std::uint32_t collective) const;
  std::uint64_t flows_started() const { return flows_started_; }
  const MaxMinSolver& solver() const { return *solver_; }

 private:
  struct FlowSpec {
    int src, dst;      // GPUs; dst < 0: the NVSwitch (NVLS write), src < 0: from the NVSwitch (multicast)
    double bytes;
    double payload = 1.0;  // share of `bytes` that is data (the rest: pipeline fill, not counted on links)
    // Which part of the src -> dst route the flow takes (SHARP: data climbs to the aggregation tree in the
    // switches and comes back reduced, so a flow ends or starts at a switch): the whole route, up to and
    // including the first edge into a leaf, from the last edge out of a leaf, or between those two leaves.
    enum class Segment : std::uint8_t { whole, to_leaf, from_leaf, between_leaves };
    Segment segment = Segment::whole;
    // > 1 on the first edge of a ring channel inside one node: this and the next lockstep - 1 specs are the
    // channel's edges, one solver flow over all their links where that is exact (launch_phase).
    std::uint32_t lockstep = 1;
    std::uint32_t group = 0;  // the lockstep ring's group
  };
  struct Active {
    std::uint32_t collective = 0;
    std::uint32_t outstanding = 0;
    std::vector<std::vector<FlowSpec>> phases;  // phases still to run, in reverse order (back = next)
    Time latency = 0;
  };
  // Appends the phases of collective c run by `group` (c's own group or one of its mirrors).
  void expand(const CollectiveSpec& c, std::uint32_t group, const AlgorithmChoice& choice, const DispatchShares& dispatch,
              std::vector<std::vector<FlowSpec>>& phases) const;
  // expand's parts: a ring's flows, the hierarchical algorithm's three phases, and a calibration profile's
  // bandwidth scales on the new phases (the group's GPUs per node: node_groups_).
  static void add_ring(const std::vector<int>& order, double bytes_per_edge, std::vector<FlowSpec>& out);
  void add_hierarchical_phases(std::span<const std::vector<int>> nodes, int k, double S, double e,
                               std::vector<std::vector<FlowSpec>>& phases) const;
  void apply_calibration(const CollectiveSpec& c, const AlgorithmChoice& choice, bool multi_node,
                         std::vector<std::vector<FlowSpec>>& phases, std::size_t first_phase) const;
  void launch_phase(std::uint32_t slot, Time now);
  // SHARP's flows of one group (nccl_model.hpp collnet_*, nvls across nodes): see the .cpp.
  void add_sharp_flows(std::span<const std::vector<int>> nodes, int k, double share, std::vector<FlowSpec>& flows) const;
  // An all-to-all's flows, plain or a per-node token dispatch's (see the .cpp).
  static void add_pairwise_flows(const std::vector<int>& gpus, std::span<const std::vector<int>> nodes, int k, double S, double e,
                                 const DispatchShares& dispatch, std::vector<FlowSpec>& flows);
  // route_ = the least loaded of a few ECMP candidate paths from src to dst (see the essay above).
  void route_least_loaded(int src, int dst, std::uint64_t flow_id);
  static constexpr std::uint64_t kRouteProbes = 64;
  bool climbs_above_first_level(const std::vector<int>& path) const;
  // Cuts route_ to `segment` (FlowSpec::Segment); false when nothing is left (both ends under one leaf).
  bool cut_route(FlowSpec::Segment segment);

  const CollectiveTable& graph_;
  const topo::Cluster& cluster_;
  FlowNetworkOptions options_;
  std::unique_ptr<MaxMinSolver> solver_;  // behind a pointer: next_completion() is const but lazily pops
  std::vector<std::uint8_t> climbs_;  // per edge: it goes into a fabric switch above the first level (Cluster::switch_level)
  // choose_algorithm is a pure function of (kind, bytes, group geometry) for this network's options:
  // memoized per (geometry, kind, bytes). Groups of equal geometry (a "shape": a handful per cluster, every
  // tensor-parallel group of a homogeneous cluster is one) share their memo, which stays in cache. A memo
  // per group, as before, was three cache misses a start with every rank simulated (10^5 groups: the
  // group's state, its memo's heap block, the choice it points to; 9 % of the 16,384-GPU unmirrored run,
  // perf) and a 100-byte geometry per group besides.
  struct ChoiceMemo {
    std::uint32_t kind;
    std::uint64_t bytes_bits;
    std::uint64_t routing;      // TokenRouting::bits
    const AlgorithmChoice* choice;
    DispatchShares dispatch;    // a per-node token dispatch's shares (none: the plain all-to-all)
  };
  struct Shape {
    GroupGeometry geometry;
    std::vector<ChoiceMemo> memo;  // into choice_store_
  };
  std::vector<Shape> shapes_;
  std::unordered_multimap<std::uint64_t, std::uint32_t> shape_index_;  // by a hash of the geometry's counts
  // Per group: its lockstep ring's links, kept in the solver (MaxMinSolver::keep_path) where the ring is
  // exact and the cluster built (routes fixed); edges 0: none kept.
  struct RingLinks {
    std::uint32_t path = 0, edges = 0;
  };
  // Per group, all a start of a ring or a send reads of it (24 bytes, set at its first start): the group's
  // own vectors (its GPUs, its mirrors) were three cache misses a send with every rank simulated.
  struct GroupState {
    std::uint32_t shape = kNone;  // into shapes_; kNone: not started yet
    RingLinks ring;
    int first_gpu = -1, second_gpu = -1;  // a group of two GPUs: they, in group order (start_send)
    bool alone = false;                   // it is its only mirror
  };
  // The group's shape, found (or added) at its first start.
  Shape& shape_of(std::uint32_t group);
  const GroupGeometry& geometry(std::uint32_t group) const { return shapes_[groups_[group].shape].geometry; }
  static const ChoiceMemo* memo_find(const Shape& shape, std::uint32_t kind, std::uint64_t bits, std::uint64_t routing);
  std::vector<GroupState> groups_;
  std::deque<AlgorithmChoice> choice_store_;  // stable addresses
  // Scratch of start() / expand(), kept so that starting a collective allocates nothing once warm.
  std::vector<std::vector<FlowSpec>> mirror_phases_;
  mutable std::vector<int> order_;
  HugeVector<Active> active_;
  std::vector<std::uint32_t> free_slots_;
  // Collectives whose flows are done, waiting out their latency, in (end, sequence) order. A wait runs
  // from now to now + latency, and the latency is the collective's algorithm choice's (a few values a
  // run), so the waits of one latency end in the order they began: a lane per latency is a FIFO, and a
  // 4-ary heap (heap4.hpp) orders the lanes' first waits. One heap of every wait (10^3 deep with every
  // rank simulated, 10^7 pops a step) was a third of pop_completed.
  struct Done {
    Time time;
    std::uint64_t seq;
    std::uint32_t collective;
  };
  struct Lane {
    std::vector<Done> waits;
    std::size_t head = 0;  // waits before it have ended
  };
  struct LaneHead {
    Time time;
    std::uint64_t seq;
    std::uint32_t lane;
  };
  static bool head_later(const LaneHead& a, const LaneHead& b) { return a.time != b.time ? a.time > b.time : a.seq > b.seq; }
  void push_done(Time now, Time latency, std::uint32_t collective);
  std::vector<Lane> lanes_;
  std::unordered_map<Time, std::uint32_t> lane_of_;  // by latency
  Time last_latency_ = -1;
  std::uint32_t last_lane_ = 0;
  std::vector<LaneHead> heads_;  // one per lane with a wait
  std::uint64_t done_seq_ = 0;
  std::uint64_t flows_started_ = 0;
  // The bytes each edge of a ring of n ranks sends for c (pipeline fill included).
  double ring_sent(const CollectiveSpec& c, int n, const AlgorithmChoice& choice, bool multi_node) const;
  // Starts c's ring as one flow when its group's channel links are cached (by add_lockstep_ring); false:
  // take the general path.
  bool start_cached_ring(const CollectiveSpec& c, const AlgorithmChoice& choice, std::uint32_t slot);
  // Starts a send between two GPUs as one flow where expand() would give that; false: take the general path.
  bool start_send(const CollectiveSpec& c, const AlgorithmChoice& choice, std::uint32_t slot);
  // Adds the ring channel that starts at flows[i] (FlowSpec::lockstep edges), caching its links where
  // start_cached_ring can reuse them; returns the solver flows added.
  std::uint32_t add_lockstep_ring(const std::vector<FlowSpec>& flows, std::size_t i, std::uint32_t slot, std::uint64_t& channel,
                                  std::uint32_t collective);
  std::vector<int> route_, probe_;  // scratch
  std::vector<int> ring_path_;              // scratch of add_lockstep_ring: the channel's links, edge by edge
  std::vector<std::uint32_t> ring_edge_end_;  // where each edge's links end in ring_path_
  std::vector<std::uint8_t> link_in_ring_;  // per link: already on ring_path_
  // Emptied phase vectors, reused so that starting a collective allocates nothing once warm.
  std::vector<FlowSpec> spare_phase() const;
  void recycle_phase(std::vector<FlowSpec>&& phase) const;
  mutable std::vector<std::vector<FlowSpec>> spare_phases_;
  mutable NodeGroups node_groups_;  // scratch of expand(): the group's GPUs by node
  std::vector<std::uint32_t> finished_;  // scratch
};

}  // namespace cs::sim
