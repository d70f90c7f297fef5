#pragma once
// Analytical (alpha-beta) collective times, NCCL ring algorithms, no contention.
//
// For a group of n ranks whose slowest spanned level gives each rank a bus bandwidth B (bytes/s, see
// topologies/cluster.hpp: group_link) and a per-step latency a:
//   all-reduce (ring: reduce-scatter then all-gather)  t = 2(n-1)/n * S / B + 2(n-1) a
//   all-gather, reduce-scatter (S = whole output / input) t = (n-1)/n * S / B + (n-1) a
//   all-to-all (pairwise, S = bytes each rank sends in all)  t = (n-1)/n * S / B + (n-1) a
//   broadcast, reduce (pipelined ring)                      t = S / B + (n-1) a
//   send/recv                                               t = S / B + a
// plus a fixed launch-and-synchronise cost per collective (kLaunchLatency). These are exactly the
// nccl-tests bus-bandwidth conventions: busbw = S/t * factor reaches B for large S. The per-rank bytes
// that cross the links (2(n-1)/n S for all-reduce, ...) are returned for link-utilization accounting.
// The flow-level network replaces this with routed, contending flows; with no contention the two agree.
#include "models/op.hpp"
#include "sim/time.hpp"
#include "topologies/cluster.hpp"

namespace cs::sim {

// Kernel launch plus the handshake every NCCL collective starts with (nccl-tests shows ~5-10 us for the
// smallest all-reduce on one NVSwitch node, of which the ring steps are a few us).
inline constexpr double kLaunchLatencySeconds = 4e-6;

struct CollectiveCost {
  Time duration = 0;
  double bytes_sent_per_rank = 0;
};

// nccl-tests' bus-bandwidth factor for a collective over n ranks.
double busbw_factor(models::CollectiveKind kind, int n);

CollectiveCost analytical_collective(models::CollectiveKind kind, double bytes, int n, const topo::GroupLink& link);

}  // namespace cs::sim
