#include "sim/network/analytical_network.hpp"

#include <algorithm>

#include "sim/base/check.hpp"

namespace cs::sim {

AnalyticalNetwork::AnalyticalNetwork(const TaskGraph& graph, const topo::Cluster& cluster, std::string forced_algorithm,
                                     NcclCalibration calibration)
    : graph_(graph),
      cluster_(cluster),
      forced_algorithm_(std::move(forced_algorithm)),
      calibration_(std::move(calibration)),
      geometry_(graph.num_groups()),
      have_geometry_(graph.num_groups(), false) {}

const AnalyticalNetwork::Cost& AnalyticalNetwork::cost(std::uint32_t collective) {
  const Collective& c = graph_.collectives()[collective];
  const auto key = std::make_tuple(static_cast<int>(c.kind), c.bytes, c.group);
  auto it = costs_.find(key);
  if (it != costs_.end()) return it->second;
  const auto& gpus = graph_.group(c.group);
  if (!have_geometry_[c.group]) {
    geometry_[c.group] = group_geometry(cluster_, gpus);
    have_geometry_[c.group] = true;
  }
  const GroupGeometry& geo = geometry_[c.group];
  const AlgorithmChoice cc = choose_algorithm(c.kind, c.bytes, geo, forced_algorithm_,
                                                calibration_.any() ? &calibration_ : nullptr);
  Cost out{cc.duration, cc.bytes_sent_per_rank, 0};
  if (geo.multi_node) {
    // In a ring over k ranks per node, k - 1 of each node's k hops stay on the scale-up fabric and one
    // crosses the network: a rank's bytes split (k-1)/k scale-up, 1/k scale-out on average.
    const int node0 = cluster_.node_of_gpu(gpus[0]);
    const auto k = static_cast<double>(std::count_if(gpus.begin(), gpus.end(), [&](int g) { return cluster_.node_of_gpu(g) == node0; }));
    out.scaleout_bytes = cc.bytes_sent_per_rank / k;
    out.scaleup_bytes = cc.bytes_sent_per_rank - out.scaleout_bytes;
  }
  return costs_.emplace(key, out).first->second;
}

Time AnalyticalNetwork::duration(std::uint32_t collective) { return cost(collective).duration; }

void AnalyticalNetwork::start(std::uint32_t collective, Time now) {
  const Cost& c = cost(collective);
  const double members = static_cast<double>(graph_.collectives()[collective].members.size());
  scaleup_bytes_ += c.scaleup_bytes * members;
  scaleout_bytes_ += c.scaleout_bytes * members;
  in_flight_.emplace(now + c.duration, started_++, collective);
}

Time AnalyticalNetwork::next_completion() const { return in_flight_.empty() ? kNever : std::get<0>(in_flight_.top()); }

void AnalyticalNetwork::pop_completed(Time now, std::vector<std::uint32_t>& done) {
  while (!in_flight_.empty() && std::get<0>(in_flight_.top()) == now) {
    done.push_back(std::get<2>(in_flight_.top()));
    in_flight_.pop();
  }
}

std::vector<LinkLoad> AnalyticalNetwork::link_loads() const {
  const auto& spec = cluster_.spec();
  const double ranks = graph_.num_ranks();
  std::vector<LinkLoad> out;
  out.push_back({"scale-up (" + spec.intra.name + ")", scaleup_bytes_ / ranks, spec.intra.gpu_bandwidth_GBps * 1e9});
  if (spec.nodes > 1)
    out.push_back({"scale-out (" + spec.nic.name + ")", scaleout_bytes_ / ranks,
                   spec.nic.line_rate_gbps / 8 * 1e9 * spec.nics_per_node / spec.gpus_per_node});
  return out;
}

}  // namespace cs::sim
