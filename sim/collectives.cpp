#include "sim/collectives.hpp"

#include "sim/check.hpp"

namespace cs::sim {

using models::CollectiveKind;

double busbw_factor(CollectiveKind kind, int n) {
  CS_CHECK(n >= 1);
  const double nn = n;
  switch (kind) {
    case CollectiveKind::all_reduce: return 2.0 * (nn - 1) / nn;
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_to_all: return (nn - 1) / nn;
    case CollectiveKind::broadcast:
    case CollectiveKind::send_recv: return 1.0;
  }
  return 1.0;
}

CollectiveCost analytical_collective(CollectiveKind kind, double bytes, int n, const topo::GroupLink& link) {
  CS_CHECK(n >= 1 && bytes >= 0);
  if (n == 1 && kind != CollectiveKind::send_recv) return {};
  CS_CHECK(link.bus_bandwidth_Bps > 0);
  const double steps = kind == CollectiveKind::all_reduce ? 2.0 * (n - 1)
                       : kind == CollectiveKind::send_recv ? 1.0
                                                           : static_cast<double>(n - 1);
  const double sent = busbw_factor(kind, n) * bytes;
  const double seconds = kLaunchLatencySeconds + steps * link.step_latency_s + sent / link.bus_bandwidth_Bps;
  return {from_seconds(seconds), sent};
}

}  // namespace cs::sim
