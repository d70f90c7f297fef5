#pragma once
// The analytical network back-end: each collective takes the closed-form time of the algorithm NCCL
// would pick (nccl_model.hpp), independent of everything else on the fabric. No contention by
// construction; the flow back-end runs the same algorithms as flows and adds it, and where nothing
// contends the two agree.
#include <map>
#include <queue>
#include <string>
#include <tuple>

#include "sim/engine/comm_backend.hpp"
#include "sim/network/nccl_model.hpp"
#include "sim/engine/task_graph.hpp"
#include "topologies/cluster.hpp"

namespace cs::sim {

class AnalyticalNetwork : public CommBackend {
 public:
  AnalyticalNetwork(const TaskGraph& graph, const topo::Cluster& cluster, std::string forced_algorithm = {},
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

  const TaskGraph& graph_;
  const topo::Cluster& cluster_;
  std::map<std::tuple<int, double, std::uint32_t>, Cost> costs_;  // (kind, bytes, group)
  std::string forced_algorithm_;
  NcclCalibration calibration_;  // calibrated constants (nccl_model.hpp); default-constructed: none
  std::vector<GroupGeometry> geometry_;
  std::vector<bool> have_geometry_;
  using Pending = std::tuple<Time, std::uint64_t, std::uint32_t>;  // (end, start order, collective)
  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> in_flight_;
  std::uint64_t started_ = 0;
  double scaleup_bytes_ = 0, scaleout_bytes_ = 0;  // summed over member ranks
};

}  // namespace cs::sim
