#include "sim/network/collective_run.hpp"

#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "models/compute/comm_profile.hpp"
#include "sim/network/analytical_network.hpp"
#include "sim/base/check.hpp"
#include "sim/engine/executor.hpp"
#include "sim/network/flow_network.hpp"
#include "sim/network/make_network.hpp"
#include "sim/engine/task_graph.hpp"

namespace cs::sim {

std::vector<int> first_gpus(int n) {
  std::vector<int> out(static_cast<std::size_t>(n));
  std::iota(out.begin(), out.end(), 0);
  return out;
}

CollectiveRunResult run_collective(const topo::Cluster& cluster, models::CollectiveKind kind, double bytes,
                                   std::span<const int> gpus, const CollectiveRunOptions& options) {
  CS_CHECK(!gpus.empty() && bytes >= 0);
  TaskGraph graph(1);
  Collective c;
  c.kind = kind;
  c.bytes = bytes;
  c.group = graph.add_group(std::vector<int>(gpus.begin(), gpus.end()));
  const std::uint32_t cid = graph.add_collective(std::move(c));
  Task t;
  t.rank = 0;
  t.stream = StreamKind::comm_tp;
  t.category = Category::tp_comm;
  t.collective = cid;
  t.name = static_cast<std::uint16_t>(graph.intern(models::to_string(kind)));
  graph.add_member(cid, graph.add_task(t));
  graph.freeze();

  CollectiveRunResult r;
  const GroupGeometry geo = group_geometry(cluster, gpus);
  r.choice = choose_algorithm(kind, bytes, geo, options.forced_algorithm,
                              options.calibration.any() ? &options.calibration : nullptr);
  const std::unique_ptr<CommBackend> net =
      make_network(options.network, graph, cluster, options.forced_algorithm, options.calibration);
  const ExecutionResult ex = execute(graph, *net, ExecutorOptions{});
  if (const auto* flow = dynamic_cast<const FlowNetwork*>(net.get())) r.flows = flow->flows_started();
  r.time = ex.makespan;
  r.events = ex.events;
  if (r.time > 0) {
    r.algbw_GBps = bytes / to_seconds(r.time) / 1e9;
    r.busbw_GBps = r.algbw_GBps * busbw_factor(kind, static_cast<int>(gpus.size()));
  }
  return r;
}

}  // namespace cs::sim
