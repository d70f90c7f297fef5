#pragma once
// The analytical network back-end: each collective takes the closed-form time of the algorithm NCCL
// would pick (nccl_model.hpp), independent of everything else on the fabric. No contention between
// collectives by construction; the flow back-end runs the same algorithms as flows and adds it, and where
// nothing contends the two agree.
//
// Tier crossing. nccl_model's closed forms give each GPU its share of its node's NICs, B_share =
// B_nic x nics_per_node / gpus_per_node. Above the NICs a built fabric may be thinner: a leaf has
// ceil(d / oversubscription) up-links for d down-ports, a pod's spines ceil(d / spine_oversubscription)
// up-links to the cores (topologies/cluster.cpp). Whether that costs anything depends on how much of the
// collective's traffic really leaves the leaf (or the pod), which the placement decides: a ring over 32
// node-major nodes of 8 GPUs and 8 NICs, 4 nodes per 32-port leaf, leaves each leaf once per channel, so
// 8 flows per leaf climb through 32 / o up-links and only o > 4 slows it; a ring over the same nodes taken
// leaf-stride changes leaf on every hop (32 flows per leaf) and pays from o > 1 on. So instead of dividing
// B_share by the oversubscription of the span, the analytical model counts, once per (group, algorithm):
//   - the inter-node transfers of the algorithm exactly as the flow back-end expands them (ring channels
//     in the same rotated order, NCCL's double binary tree per channel and tree, pairwise all-to-all,
//     hierarchical's inter-node rings, ring shifts), for the group and every group it stands for (its
//     mirrors under symmetry; without symmetry, its translates by local GPU index within the node, the
//     groups the other GPUs of the node run at the same time, which B_share assumes too); all transfers
//     of one algorithm carry equal bytes, so a transfer is one unit;
//   - each transfer's routed path (Cluster::route: the same NIC choice, PXN proxy and rail leaf as the
//     flow back-end), adding one unit to every tier resource it crosses: its NIC link (per cable), the
//     up-links of its source leaf and the down-links of its destination leaf (per leaf, all spines
//     together: the flow back-end spreads flows over the least loaded equal-cost paths), and the up- and
//     down-links between a pod's spines and the cores (per pod);
//   - U, the most units any one GPU sends off its node (what the closed forms charge at B_share: 1 per
//     ring channel, W tree sends, n - k all-to-all peers).
// The busiest resource r takes load_r / cap_r seconds per unit byte where the closed form takes
// U / B_share, so the tier factor is tau = max(1, max_r(load_r / cap_r) x B_share / U) and the collective
// is timed by nccl_model's estimate() for the chosen algorithm and protocol with B_net = B_share / tau.
// The algorithm itself is chosen on group_geometry() as it stands (the flow back-end chooses on the same
// geometry), so both back-ends run the same algorithm and differ only where flows really contend: ECMP
// imbalance (the flow back-end's greedy path choice can leave two flows on one up-link where a perfect
// spread leaves one), and collectives of different groups overlapping in time.
// Clusters loaded from a topology file have no tiers to count; they keep group_geometry()'s bandwidth.
#include <cstdint>
#include <map>
#include <queue>
#include <string>
#include <deque>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "sim/engine/comm_backend.hpp"
#include "sim/network/nccl_model.hpp"
#include "sim/network/node_groups.hpp"
#include "sim/engine/task_graph.hpp"
#include "topologies/cluster.hpp"

namespace cs::sim {

class AnalyticalNetwork : public CommBackend {
 public:
  AnalyticalNetwork(const CollectiveTable& graph, const topo::Cluster& cluster, std::string forced_algorithm = {},
                    NcclCalibration calibration = {});
  void start(std::uint32_t collective, Time now) override;
  Time next_completion() const override;
  void pop_completed(Time now, std::vector<std::uint32_t>& done) override;
  std::vector<LinkLoad> link_loads() const override;

  // Duration of a collective alone on the cluster (also used to size sweeps and by tests).
  Time duration(std::uint32_t collective);

 private:
  struct Cost {
    Time duration;
    double scaleup_bytes;   // per member rank
    double scaleout_bytes;
  };
  const Cost& cost(std::uint32_t collective);
  // tau (see above) for a group and algorithm (a pairwise one as a per-node token dispatch's: across nodes
  // only between GPUs of one local index), computed once.
  double tier_factor(std::uint32_t group, NcclAlgorithm algorithm, bool per_node_dispatch);
  void tier_capacities();


  const CollectiveTable& graph_;
  const topo::Cluster& cluster_;
  // Memoized per (kind, bytes, group): per group a short list (a group's collectives come in a few sizes),
  // looked up at every start; with every rank simulated there are 10^4 groups, and a hash table's node was
  // a cache miss a start.
  struct CostMemo {
    int kind;
    std::uint64_t bytes_bits;
    std::uint64_t routing;  // TokenRouting::bits
    const Cost* cost;
  };
  std::vector<std::vector<CostMemo>> costs_;  // per group
  std::deque<Cost> cost_store_;               // stable addresses
  std::string forced_algorithm_;
  NcclCalibration calibration_;  // calibrated constants (nccl_model.hpp); default-constructed: none
  std::vector<GroupGeometry> geometry_;
  std::vector<bool> have_geometry_;
  using Pending = std::tuple<Time, std::uint64_t, std::uint32_t>;  // (end, start order, collective)
  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> in_flight_;
  std::map<std::pair<std::uint32_t, int>, double> tier_factors_;
  // Tier resources (tier_capacities()): each edge into or out of a NIC on its own; per fabric level below
  // the top, a switch group's links up to the next level (and back down) summed (a tree: a leaf's up-links
  // over all its spines; a pod's spine-to-core links). edge_slot_[edge]
  // is the resource the edge belongs to (-1: none, e.g. NVLink), slot_cap_Bps_ its capacity in bytes/s.
  std::vector<std::int32_t> edge_slot_;
  std::vector<double> slot_cap_Bps_;
  bool have_capacities_ = false;
  std::uint64_t started_ = 0;
  double scaleup_bytes_ = 0, scaleout_bytes_ = 0;  // summed over member ranks
  // With rank weights (TaskGraph::rank_weights: classes of equal ranks), per simulated rank instead, so
  // that the mean per GPU weighs each by its class.
  std::vector<std::pair<double, double>> rank_bytes_;
  std::vector<std::uint32_t> member_ranks_;  // scratch for start()
  std::vector<double> slot_units_, sent_;  // scratch for tier_factor() per slot and GPU, all 0 between calls
  std::vector<std::pair<int, int>> transfers_;  // scratch for tier_factor(): the inter-node transfers
  NodeGroups node_groups_;                      // scratch for tier_factor(): a group's GPUs by node
  std::vector<int> order_;                      // scratch for tier_factor(): a ring's order
};

}  // namespace cs::sim
