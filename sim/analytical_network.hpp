#pragma once
// The analytical network back-end: each collective takes its closed-form alpha-beta time
// (collectives.hpp) over the slowest level its group spans, independent of everything else on the
// fabric. No contention by construction; the flow back-end adds it.
#include <map>
#include <queue>
#include <tuple>

#include "sim/comm_backend.hpp"
#include "sim/task_graph.hpp"
#include "topologies/cluster.hpp"

namespace cs::sim {

class AnalyticalNetwork : public CommBackend {
 public:
  AnalyticalNetwork(const TaskGraph& graph, const topo::Cluster& cluster);
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

  const TaskGraph& graph_;
  const topo::Cluster& cluster_;
  std::map<std::tuple<int, double, std::uint32_t>, Cost> costs_;  // (kind, bytes, group)
  std::vector<topo::GroupLink> group_links_;
  std::vector<bool> have_link_;
  using Pending = std::tuple<Time, std::uint64_t, std::uint32_t>;  // (end, start order, collective)
  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> in_flight_;
  std::uint64_t started_ = 0;
  double scaleup_bytes_ = 0, scaleout_bytes_ = 0;  // summed over member ranks
};

}  // namespace cs::sim
