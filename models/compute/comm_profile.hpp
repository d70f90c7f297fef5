#pragma once
// Communication side of a calibration profile: per collective, the fitted constants of the NCCL model and
// an alpha-beta summary of the same measurements.
//
// The constants the simulator applies are `nccl` (NcclConstants below): fitted by
// sim/network/nccl_model_fit.hpp against the NCCL model itself (sim/network/nccl_model.hpp) on the
// cluster the measurement ran on, per protocol a bandwidth scale of the tier (intra-node = scale-up,
// inter-node = network) and an extra latency per hop of that tier. Both network back-ends read them,
// and they carry to other rank counts by the algorithms' structure.
//
// The alpha-beta line is the size summary people read (it does not carry to another rank count and no
// model reads it). Each entry is one fitted group of nccl-tests-style measurements (same collective,
// algorithm, rank count and link level):
//
//   t(S) = alpha + factor(n) * S / beta
//
// with S the nccl-tests "size" (bytes), factor(n) nccl-tests' bus-bandwidth factor (2(n-1)/n for
// all-reduce, (n-1)/n for all-gather, reduce-scatter and all-to-all, 1 for broadcast and send/recv), so
// beta is the bus bandwidth the collective reaches for large messages (nccl-tests' busbw plateau) and
// alpha is everything that does not scale with size (launch, handshake, ring steps). The fit itself
// (robust least squares, R^2, worst point) lives in calibrate/; the network model consumes the numbers.
//
// level: "nvlink" when every rank of the group sits in one node (one scale-up domain), "network" when the
// group spans nodes. algorithm: as NCCL names it ("ring", "tree", "nvls", ...) or "default" when the
// measurement left NCCL to choose.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/workload/op.hpp"

namespace cs::models {

enum class CommLevel { nvlink, network };

// The NCCL model's constants fitted from one group (sim/network/nccl_model_fit.hpp).
struct NcclConstants {
  bool fitted = false;
  int nodes = 1;                  // of the cluster fitted against (the measurement's)
  std::string nic;                // its inter-node link (catalog name; empty inside one node)
  // Per protocol (LL, LL128, Simple): achieved / modelled bandwidth of the level's tier. A protocol the
  // measurement never ran takes the nearest measured one's (Simple, LL128, LL in that order).
  double bandwidth_scale_ll = 1, bandwidth_scale_ll128 = 1, bandwidth_scale_simple = 1;
  double hop_latency_extra_us = 0;  // added to every hop of the tier (may be negative, down to -h)
  double ring_chunk_bytes = 3.5e6;  // the ring's pipeline chunk on the tier (sim/network/nccl_model.hpp)
  double ring_chunk_bytes_ll = 3.5e6;  // the same under LL (absent from a profile: ring_chunk_bytes)
};

struct CommFit {
  CollectiveKind collective = CollectiveKind::all_reduce;
  std::string algorithm = "default";
  int ranks = 0;
  CommLevel level = CommLevel::nvlink;
  double alpha_us = 0;   // size-independent time per collective call, microseconds
  double beta_GBps = 0;  // bus bandwidth, GB/s (1e9 bytes/s), nccl-tests' busbw convention
  double r2 = 0;         // coefficient of determination of the fit (in log time; see calibrate/)
  int points = 0;        // measurements the fit used
  std::string gpu;       // catalog name of the GPU measured (informational; empty when unknown)
  NcclConstants nccl;    // the model's constants (absent from older profiles: not fitted)
};

struct CommProfile {
  std::string source;  // where the numbers came from
  std::vector<CommFit> fits;

  // The fit for (collective, ranks, level) with algorithm "default" preferred, else any algorithm;
  // nullptr when none was measured.
  const CommFit* find(CollectiveKind collective, int ranks, CommLevel level) const;
};

// nccl-tests' bus-bandwidth factor (the `factor(n)` above): busbw = S / t * factor.
double bus_bandwidth_factor(CollectiveKind kind, int ranks);

std::string_view to_string(CollectiveKind kind);       // "all_reduce", "all_gather", ...
std::optional<CollectiveKind> parse_collective(std::string_view name);  // also accepts "allreduce", "alltoall", "sendrecv"
std::string_view to_string(CommLevel level);           // "nvlink", "network"
std::optional<CommLevel> parse_comm_level(std::string_view name);
std::string_view to_string(MemOpKind kind);            // "norm", "elementwise", ...
std::optional<MemOpKind> parse_mem_op_kind(std::string_view name);

}  // namespace cs::models
