#pragma once
// One collective, alone on a cluster: what `clustersim collective` prints and what the NCCL validation
// tests compare with nccl-tests.
//
// The collective runs through the same engine as a training step: a task graph of one simulated rank
// whose single task is a member of the collective, over a process group that holds every GPU of the
// group (all of them take part, as in nccl-tests, so there are no mirrors to add). The executor asks the
// chosen network back-end when it is done; the time is that completion time, i.e. the algorithm's launch
// and hop latency plus the transfer (nccl-tests' "time" column, one iteration, no warm-up effects).
//
// nccl-tests' conventions (shared/ECOSYSTEM.md 1.4): `bytes` is the nccl-tests "size" column; for
// all-gather and reduce-scatter it is the whole array (per-rank count x ranks), for all-to-all the whole
// send buffer of a rank; algbw = size / time (GB = 1e9 B); busbw = algbw x busbw_factor(kind, n).
// A send/recv over two GPUs moves `bytes` from the first to the second; over more GPUs it is a ring
// shift (every GPU sends `bytes` to the next one), as the context-parallel KV exchange does.
#include <cstdint>
#include <span>
#include <string>

#include "models/workload/op.hpp"
#include "sim/base/network_backend.hpp"
#include "sim/network/nccl_model.hpp"
#include "sim/engine/time.hpp"
#include "topologies/cluster.hpp"

namespace cs::sim {

struct CollectiveRunOptions {
  NetworkBackend network = NetworkBackend::flow;
  std::string forced_algorithm;   // "" = NCCL-like choice; "ring", "tree", "nvls", "hierarchical"
  NcclCalibration calibration{};  // a profile's fitted NCCL constants (nccl_model_fit.hpp); empty: defaults
};

struct CollectiveRunResult {
  Time time = 0;                  // end to end
  AlgorithmChoice choice;         // what the chooser picked (algorithm, protocol, latency, alone-time)
  std::uint64_t flows = 0;        // flows put on the fabric (flow network only)
  std::uint64_t events = 0;       // engine events
  double algbw_GBps = 0;          // size / time, 1e9 B/s
  double busbw_GBps = 0;          // algbw x nccl-tests' bus factor
};

CollectiveRunResult run_collective(const topo::Cluster& cluster, models::CollectiveKind kind, double bytes,
                                   std::span<const int> gpus, const CollectiveRunOptions& options = {});

// The first n GPUs of the cluster (node-major: node 0's GPUs first), as nccl-tests places its ranks.
std::vector<int> first_gpus(int n);

}  // namespace cs::sim
