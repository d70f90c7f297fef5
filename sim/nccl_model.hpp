#pragma once
// NCCL's algorithms and protocols as clustersim models them: which algorithm a collective uses, how long
// it takes alone on the cluster (the analytical network), and which point-to-point transfers it makes
// (the flow network expands exactly these into flows).
//
// Group geometry: n ranks on N nodes, k ranks per node; per GPU a scale-up bandwidth B_up (NVLink payload,
// one direction) and a network share B_net = B_nic * nics_per_node / gpus_per_node (NICs are shared by
// the GPUs of a node; the other GPUs of the node run the same collective on their mirrored groups, so a
// group gets only its GPUs' share), divided by the oversubscription when the group crosses spines.
// Protocol p scales bandwidth by e_p (LL moves 4 bytes of data per 8-byte line, LL128 120 of 128, Simple
// all of it) and costs a launch latency L_p plus a per-hop latency h_p (NVLink or network hop).
//
// Time of one collective of S bytes (nccl-tests "size"), f = bus factor (2(n-1)/n all-reduce, (n-1)/n
// all-gather / reduce-scatter / all-to-all, 1 broadcast / send-recv):
//   ring (C = k channels across nodes, each leaving a node through a different GPU and its NIC):
//       t = L_p + s (N/n h_net + (1 - N/n) h_nv) + max( f S (k-1)/k / B_up , f S / k / B_net ) / e_p
//       (s = 2(n-1) steps for all-reduce, n-1 otherwise); within one node t = L_p + s h_nv + f S / B_up / e_p.
//   tree (all-reduce across nodes; NCCL's double binary tree over nodes, a chain inside each node): each
//       half of the data goes up one tree and down again; a node sends at most 3/2 S over the network:
//       t = L_p + 2 (D h_net + (k-1) h_nv) + max( S / B_up , 3/2 S / (k B_net) ) / e_p, D = ceil(log2 N)+1.
//   NVLS (all-reduce inside an NVSwitch node with in-switch reduction): each GPU writes S into the switch,
//       which reduces and multicasts S back; the switch's reduction runs at a fraction e_nvls of line rate:
//       t = L_p + 2 h_nv + S / (B_line e_nvls) / e_p.
//   hierarchical (all-reduce): reduce-scatter inside nodes, k concurrent all-reduces of S/k across nodes,
//       all-gather inside nodes, one after another.
//   pairwise all-to-all: every rank sends S/n to each other rank; the off-node part (n-k)/n S through its
//       network share: t = L_p + (n-1) h + max( (k-1)/n S / B_up , (n-k)/n S / B_net ) / e_p.
//   send/recv: t = L_p + h + S / B / e_p over the pair's path.
// The chooser evaluates every applicable (algorithm, protocol) and takes the fastest, as NCCL's tuner does
// with its own latency/bandwidth tables; `simulation.nccl_algorithm` forces one.
//
// Latency constants: NCCL's tuning model uses launch latencies of a few microseconds and per-hop
// latencies of ~0.6-2 us on NVLink and a few us on InfiniBand; nccl-tests on real machines show the
// smallest all-reduce on one 8-GPU node taking 15-40 us end to end (shared/validation/nccl.json: Azure
// ND H100 v5 ~26 us, ND A100 v4 ~43 us at 1 KiB). The defaults sit at the low end (a bare-metal node); a
// calibration profile fitted from the user's own nccl-tests logs replaces them.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "models/op.hpp"
#include "sim/time.hpp"
#include "topologies/cluster.hpp"

namespace cs::sim {

enum class NcclAlgorithm : std::uint8_t { ring, tree, nvls, hierarchical, pairwise, p2p };
enum class NcclProtocol : std::uint8_t { ll, ll128, simple };
const char* to_string(NcclAlgorithm a);
const char* to_string(NcclProtocol p);

// nccl-tests' bus-bandwidth factor for a collective over n ranks: busbw = algbw * factor
// (2(n-1)/n all-reduce; (n-1)/n all-gather, reduce-scatter, all-to-all; 1 broadcast, send/recv).
double busbw_factor(models::CollectiveKind kind, int n);

struct ProtocolSpec {
  double bandwidth_efficiency;
  double launch_latency_us;
  double hop_latency_nvlink_us;
  double hop_latency_network_us;
};
const ProtocolSpec& protocol_spec(NcclProtocol p);

// In-switch reduction throughput as a fraction of NVLink line rate: nccl-tests all-reduce on 8 H100 with
// NVLS peaks at 275 GB/s algbw (480 busbw) out of 450 GB/s per direction (NVIDIA/nccl-tests#212, NCCL#1455).
inline constexpr double kNvlsEfficiency = 0.61;

// Where a group sits, as the algorithms need it.
struct GroupGeometry {
  int ranks = 1;
  int nodes = 1;
  int per_node = 1;            // k (the smallest count on any node)
  double scaleup_Bps = 0;      // B_up, payload, one direction
  double scaleup_line_Bps = 0; // line rate (for NVLS)
  double network_Bps = 0;      // B_net per GPU, oversubscription applied
  bool nvls = false;           // NVLS possible for this group (one NVSwitch node with in-switch reduction)
  bool multi_node = false;
};
GroupGeometry group_geometry(const topo::Cluster& cluster, std::span<const int> gpus);

struct AlgorithmChoice {
  NcclAlgorithm algorithm = NcclAlgorithm::ring;
  NcclProtocol protocol = NcclProtocol::simple;
  Time latency = 0;        // launch + hops
  Time duration = 0;       // latency + transfer, alone on the cluster
  double bytes_sent_per_rank = 0;
};

// Evaluates one (algorithm, protocol); `ok` false when the algorithm does not apply.
AlgorithmChoice estimate(models::CollectiveKind kind, double bytes, const GroupGeometry& g, NcclAlgorithm a,
                         NcclProtocol p, bool* ok);
// The fastest applicable choice; `forced` (if not empty) restricts the algorithm ("ring", "tree", ...).
AlgorithmChoice choose_algorithm(models::CollectiveKind kind, double bytes, const GroupGeometry& g,
                                 const std::string& forced = {});

}  // namespace cs::sim
