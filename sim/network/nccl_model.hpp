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
//   ring (C = k channels across nodes, each leaving a node through a different GPU and its NIC). NCCL
//       pipelines a ring in chunks: the last chunk still has to travel all s steps after the first has
//       arrived, so a rank sends in effect X = f S + s c bytes, c = min(S/n, C_ring ch/16) the chunk of one
//       step over the ring's ch channels (C_ring / 16 on each; times ch / channels open for a small message
//       that opens fewer, see "Latency") (ring_pipeline_bytes). ch is 16 inside a node; across nodes it is
//       NCCL's channel count there, one ring per NIC the node's ranks leave through, doubled
//       (GroupGeometry::ring_channels): 16 for eight GPUs a node on eight NICs, 2 for one GPU a node:
//       t = L_p + s (N/n h_net + (1 - N/n) h_nv) + max( X (k-1)/k / B_up , X / k / B_net ) / e_p
//       (s = 2(n-1) steps for all-reduce, n-1 otherwise); within one node t = L_p + s h_nv + X / B_up / e_p.
//       The fill term is why busbw climbs so slowly between 1 MiB and 1 GiB on a real node: with
//       C_ring = 3.5 MB the Azure ND A100 v4 sweep is matched within 10% from 1 MiB to 8 GiB (at 32 MiB
//       the fill is 45% of the time, at 8 GiB 0.3%). The fill is a chunk per step on every channel, so a
//       ring on fewer channels (one GPU a node: 2 over its NIC) fills with fewer bytes: the same ~9 us a
//       step at 400 Gb/s as 16 channels on NVLink, the order of NCCL's own per-step latency of a Simple
//       ring across the network (hwLat[NET][RING][SIMPLE] 14 us, tuning.cc), where a 3.5 MB chunk at one
//       NIC's rate would be 73 us a step and halve the bandwidth of a 48-node ring at 128 MiB.
//   tree (all-reduce across nodes; NCCL's double binary tree over nodes, src/graph/trees.cc: a binary
//       tree and its mirror (even N) or shift (odd N), each carrying half the data, one per channel; a
//       chain inside each node): a node's leader sends S/2k to every tree neighbour per tree, W of them
//       over both trees (W = tree_max_sends(N): 2 for N = 2, 4 when every node is interior in one tree
//       and a leaf in the other); the chain moves S up and S down through every GPU but the ends:
//       t = L_p + 2 (D h_net + (k-1) h_nv) + max( 2(k-1)/k S / B_up , W S / (2k B_net) ) / e_p,
//       D = ceil(log2 N)+1. NCCL's tuner prices every tree with W = 4 (its tree/ring bandwidth ratio 1/2),
//       so at N = 2 it keeps the ring for large messages although the tree would be faster: nccl-tests
//       on two 4xHDR A100 nodes shows the ring's 86-91 GB/s, not the tree's ~180 (nccl.json). The
//       chooser ranks by that tuner time (`tuned`); the simulated time is the structure's.
//   NVLS (all-reduce inside an NVSwitch node with in-switch reduction; Simple protocol only, as in
//       NCCL): each GPU writes S into the switch, which reduces and multicasts S back; the switch's
//       reduction runs at a fraction e_nvls of line rate, and one chunk of c = min(S/2, C_nvls) fills the
//       reduce/multicast pipeline (nvls_pipeline_bytes):
//       t = L_p + L_nvls + 2 h_nv + (S + c) / (B_line e_nvls), L_nvls the extra set-up of the multicast
//       objects and switch reduction (kNvlsLaunchLatencyUs), so that small messages stay on the LL ring.
//   hierarchical (all-reduce): reduce-scatter inside nodes, k concurrent all-reduces of S/k across nodes,
//       all-gather inside nodes, one after another. NCCL has no such algorithm (it is Horovod's and
//       torch's hierarchical all-reduce): considered only when forced.
//   pairwise all-to-all: every rank sends S/n to each other rank; the off-node part (n-k)/n S through its
//       network share: t = L_p + (n-1) h + max( (k-1)/n S / B_up , (n-k)/n S / B_net ) / e_p.
//   send/recv: t = L_p + h + S / B / e_p over the pair's path, B = B_net across nodes, else B_up. Over a
//       group of n > 2 it is a ring shift (context parallelism's KV exchange: every rank sends S to the
//       next one at once); every flow is alone on its path, so the time is the same.
// The chooser evaluates every applicable (algorithm, protocol) and takes the fastest by the tuner's
// estimate, as NCCL's tuner does with its own latency/bandwidth tables; `simulation.nccl_algorithm` forces
// one.
//
//   In-network and in-switch reduction across nodes (all-reduce, Simple protocol only, as in NCCL). When
//   each is eligible is NCCL's rule (src/graph/tuning.cc at NVIDIA/nccl 5067397, ncclTopoTuneModel: NVLS
//   Tree disabled on a single node; CollNet Direct / Chain, and NVLS across nodes, only with CollNet,
//   i.e. a SHARP fabric, "collnetEnable"; CollNet Direct only on NVSwitch systems, nvsCount > 0; NVLS
//   needs two or more local GPUs, src/transport/nvls.cc ncclNvlsInit: gpuCount < 2 -> no NVLS):
//   collnet_chain (SHARP, cluster.inter_node.sharp): inside each node a chain of the k GPUs reduces to
//       the channel's head, the head sends its S/k share up to the switches' aggregation tree once and
//       receives the reduced S/k once, and the chain broadcasts it back (k channels, heads rotated):
//       t = L_p + 2 ((k-1) h_nv + A h_net) + max( 2(k-1)/k S / B_up , S / (k B_net) ) / e_p,
//       A = 1, 2, 3 network hops up to the aggregation root (leaf, spine, core: the group's span). A rank's
//       network bytes are S/k each way where the ring's are 2(n-1)/n S / k: SHARP halves them.
//   collnet_direct (SHARP on NVSwitch nodes): the same bytes, the intra-node part a direct reduce-scatter
//       to the heads and all-gather from them over the switch instead of a chain:
//       t = L_p + 2 (h_nv + A h_net) + max( 2(k-1)/k S / B_up , S / (k B_net) ) / e_p.
//   nvls (across nodes, NVLS nodes on a SHARP fabric: NCCL's NVLS with nNodes > 1): NVLS inside the node
//       and SHARP for each GPU's S/k between nodes:
//       t = L_p + L_nvls + 2 (h_nv + A h_net) + max( nvls_pipeline_bytes(S) / (B_line e_nvls) , S / (k B_net) ).
//   nvls_tree (NVLS nodes, nodes > 1, k >= 2; no SHARP needed): NVLS reduces inside each node, the k
//       heads of a node each run NCCL's double binary tree over the nodes with an S/k share (the tree's
//       W sends of S/2k), NVLS multicasts the result:
//       t = L_p + L_nvls + 2 (h_nv + D' h_net) + max( nvls_pipeline_bytes(S) / (B_line e_nvls) , W S / (2k B_net) ),
//       D' = ceil(log2 N). The tuner prices it with W = 2 at N <= 2 (tuning.cc: interBw x 2 for the
//       2-node NVLS tree) and W = 4 beyond. nccl-tests on 2 H100 nodes with NVLS on (nccl1221): 430 GB/s
//       busbw; this model gives ~515 (the NVLS part, 275 GB/s algbw x 2(n-1)/n), 20% high.
// Deliberately ignored: PAT, SHARP's own switch reduction rate (taken as line rate) and its
// aggregation-tree set-up, and the tree's own pipeline fill.
//
// Latency (the small-message regime). A collective of a few KiB moves almost nothing; its time is
//   t = L_p + (steps) h_p + (fill of one chunk per step on the channels the message opens).
// L_p is what every NCCL kernel pays once: the launch, NCCL's enqueue of the work element, the first
// flag exchange and the completion the stream waits for. h_p is one ring (or tree) step: the sender's
// store of data and flag crossing one hop (GPU -> NVSwitch -> GPU, a PCIe switch, or NIC -> fabric ->
// NIC), the receiver's poll seeing the flag, its reduction and its own store. LL stores 8-byte
// data+flag words, so a step costs one store latency; LL128 waits for a whole 128-byte line of a warp;
// Simple synchronises a step through a separate flag after the data (a fence between them), which is
// why NCCL's own tuning tables (src/graph/tuning.cc: a base latency per algorithm and protocol plus a
// per-hop latency per link kind, NVLink < PCIe < network) order them LL < LL128 < Simple.
// Numbers: LL is anchored on two measurements that differ only in step count, both rings over NVLink:
// 2 A100s, 8 B all-reduce, 9.85 us (NVIDIA/nccl-tests#331; 2 steps) and 8 H100s, 1-8 KiB, 25.6-27 us
// (nccl.json azure_h100_8gpu_allreduce_sweep; 14 steps): L_LL = 7 us, h_LL(NVLink) = 1.4 us. LL128 and
// Simple follow NCCL's tuning-table ratios over LL (per NVLink hop about 2x and 2.5x, launch a little
// more): L = 8 / 9 us, h = 2.5 / 3.5 us; network hops 2.7 / 4.0 / 6.0 us as NCCL's Ring/NET row. NVLS
// adds the multicast set-up and in-switch reduction start (kNvlsLaunchLatencyUs = 22 us, of the order of
// NCCL's NVLS base latency): 9 + 22 + 2 x 3.5 = 38 us, the flat ~42 us of the H100 sweep from 64 KiB to
// 2 MiB (time minus the transfer).
// A custom inter-node link (cluster.inter_node.link as an object) with its own latency_us: the network row
// of the table stands for NCCL over the catalog's InfiniBand, whose wire, switch and NIC cost
// kReferenceNetworkHopUs = 1 us a hop (topologies/link_catalog.cpp); the custom link replaces that part, so
// every network hop of every protocol costs h_p + (latency_us - kReferenceNetworkHopUs)
// (GroupGeometry::network_hop_extra_s). The catalog's links keep the table as measured. A topology file's
// latencies enter the same way, scale-up hops included (GroupGeometry::scaleup_hop_extra_s): a step costs
// h_p + the file's latency along its path over the catalog's (topologies/cluster.hpp, GroupLink).
// Channel ramp: NCCL gives a small message few channels (it shrinks the channel count until every
// thread has work), so the per-step chunk of a small ring crosses its hop on one channel, at 1/ch of the
// ring's rate (ch its full channel count, 16 inside a node): the fill term is multiplied by
// ch / ring_channels(S). This is what makes the H100
// LL ring's time climb from 27 us at 8 KiB to 33.5 us at 32 KiB and NCCL switch to NVLS at 64 KiB; from
// 1 MiB on all 16 channels run and the ring is as before.
// Not modeled: host-side issue time of the benchmark loop. nccl-tests' time per iteration is the larger
// of the GPU time and the time the host needs to issue one iteration; on Azure ND A100 v4 the 1 KiB ..
// 512 KiB all-reduce stays flat at 42-48 us (nccl.json azure_a100_8gpu_allreduce_sweep) where the same
// ring on H100 takes 26 us, a property of that VM's host, not of the network; training launches
// collectives asynchronously ahead of the GPU, so it does not pay it either.
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "models/workload/op.hpp"
#include "sim/engine/time.hpp"
#include "sim/base/token_routing.hpp"
#include "sim/network/token_dispatch.hpp"
#include "topologies/cluster.hpp"

namespace cs::sim {

enum class NcclAlgorithm : std::uint8_t { ring, tree, nvls, hierarchical, pairwise, p2p, collnet_direct, collnet_chain, nvls_tree };
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
// Extra launch latency of NVLS over the Simple ring's: NCCL's tuning tables (src/graph/tuning.cc, baseLat)
// give NVLS a base latency of the order of 25 us against a few us for Ring/Tree, which keeps NCCL on the
// LL ring below ~1 MiB on one H100 node (Azure ND H100 v5's 1 KiB all-reduce takes ~26 us).
inline constexpr double kNvlsLaunchLatencyUs = 22.0;
// The per-hop latency of the link the table's network row was measured on (InfiniBand; see "Latency").
inline constexpr double kReferenceNetworkHopUs = 1.0;

// Pipeline chunks (bytes over all channels) whose fill time the ring and NVLS pay (see above). Fitted to
// the nccl-tests sweeps in calibrate/published/nccl.json at sizes >= 32 MiB: Azure ND A100 v4 (ring; busbw
// 132.8 at 32 MiB, 166.6 at 64 MiB out of a 231.6 GB/s plateau) and Azure ND H100 v5 (NVLS; 295.5 at
// 32 MiB, 423.4 at 256 MiB out of 478.9). NCCL's Simple protocol steps are 512 KiB per channel
// (NCCL_BUFFSIZE 4 MiB / NCCL_STEPS 8), several channels at once: the fitted figures are of that order.
inline constexpr double kRingPipelineChunkBytes = 3.5e6;
inline constexpr double kNvlsPipelineChunkBytes = 16e6;
// Channels of a ring at full size, and the bytes of message each channel needs before NCCL opens it
// (NCCL shrinks the channel count, then the thread count, for small messages so that every thread has
// work; see "Latency" above). Below kRingChannels x kRingChannelMinBytes a ring runs on fewer channels.
inline constexpr int kRingChannels = 16;
inline constexpr double kRingChannelMinBytes = 65536;

// Channels a ring runs on for a message of S bytes: clamp(S / kRingChannelMinBytes, 1, max_channels)
// (max_channels: the group's GroupGeometry::ring_channels, kRingChannels inside an NVLink node).
double ring_channels(double S, int max_channels = kRingChannels);
// Bytes a rank of a ring sends in effect, fill included (the fill step runs on ring_channels(S) of
// max_channels channels, each with its share C / kRingChannels of the chunk):
// f S + s min(S/n, C max_channels / kRingChannels) max_channels / ring_channels(S), C = kRingPipelineChunkBytes.
// `chunk_bytes` replaces kRingPipelineChunkBytes (a calibrated tier's ScopeConstants::ring_chunk_bytes).
double ring_pipeline_bytes(models::CollectiveKind kind, double S, int n, double chunk_bytes = kRingPipelineChunkBytes,
                           int max_channels = kRingChannels);
// Bytes an NVLS all-reduce writes into the switch per GPU in effect: S + min(S/2, kNvlsPipelineChunkBytes).
double nvls_pipeline_bytes(double S);
// NCCL's double binary tree over `nodes` nodes: the parent of `node` in tree 0 and tree 1 (-1: root).
std::array<int, 2> double_binary_tree_parents(int nodes, int node);
// The most tree-edge sends of any node over both trees (each edge carries data up and down).
int tree_max_sends(int nodes);

// Where a group sits, as the algorithms need it.
struct GroupGeometry {
  int ranks = 1;
  int nodes = 1;
  int per_node = 1;            // k (the smallest count on any node)
  double scaleup_Bps = 0;      // B_up, payload, one direction
  double scaleup_line_Bps = 0; // line rate (for NVLS)
  double network_Bps = 0;      // B_net per GPU, oversubscription applied
  bool nvls = false;           // NVLS possible for this group (one NVSwitch node with in-switch reduction)
  bool nvls_nodes = false;     // its nodes have NVLS and it has >= 2 GPUs on each (nvls_tree, nvls across nodes)
  bool switched = true;        // NVSwitch nodes (CollNet Direct needs them)
  bool sharp = false;          // across nodes on a fabric with in-network reduction (cluster.inter_node.sharp)
  int sharp_levels = 1;        // switch levels up to SHARP's aggregation root: the span's fabric level + 1
  bool multi_node = false;
  double network_hop_extra_s = 0;  // added to every network hop: a custom link's latency over the reference
                                   // (or a topology file's, topologies/cluster.hpp GroupLink)
  double scaleup_hop_extra_s = 0;  // added to every scale-up hop: a topology file's latency over the reference
  // The node's GPUs talk over NVLink (NVSwitch, NVL72, NVLink bridges; a topology file's "custom" nodes
  // count as such); false: PCIe only (IntraNodeSpec::nvlink, the catalog's "pcie"). NCCL enables LL128 only with NVLink, and the chooser of a group across PCIe-only
  // nodes ranks by NCCL's own tuner tables (nccl_tuner_time_us below).
  bool nvlink = true;
  // NCCL's ring/tree graph for a group across PCIe-only nodes (src/graph/search.cc at v2.21.5): channels
  // and the bandwidth of each, GB/s (see nccl_tuner_time_us). 0 where the tuner tables are not used.
  int tuner_channels = 0;
  double tuner_channel_GBps = 0;
  // Channels of a full-size ring (ring_channels, ring_pipeline_bytes): kRingChannels inside an NVLink
  // node; across NVLink nodes two per NIC the group's GPUs of a node leave through (at most
  // kRingChannels); across PCIe-only nodes NCCL's communicator channels, twice the graph's (ncclTopoPostset
  // doubles them, src/graph/connect.cc at v2.21.5-1): "2 coll channels" in the 2-node A100 PCIe log's INFO lines.
  int ring_channels = kRingChannels;
  // An all-to-all of a per-node token dispatcher (token_dispatch.hpp, set by with_dispatch): the shares of
  // S it sends over the network and over the scale-up fabric. None (the default): the pairwise exchange of
  // S / n with every peer (NCCL's all-to-all, Megatron-Core's alltoall dispatcher).
  DispatchShares dispatch;
  // Every field: groups of equal geometry get the same algorithm, time and flows (FlowNetwork's memo).
  bool operator==(const GroupGeometry&) const = default;
};
GroupGeometry group_geometry(const topo::Cluster& cluster, std::span<const int> gpus);
// `g` for a collective of `kind` routed by `routing`: the dispatch shares set for a per-node token
// dispatcher's all-to-all (routing.per_node()) on a group of whole nodes, else `g` unchanged.
GroupGeometry with_dispatch(GroupGeometry g, CollectiveKind kind, const TokenRouting& routing);

struct AlgorithmChoice {
  NcclAlgorithm algorithm = NcclAlgorithm::ring;
  NcclProtocol protocol = NcclProtocol::simple;
  Time latency = 0;        // launch + hops
  Time duration = 0;       // latency + transfer, alone on the cluster
  Time tuned = 0;          // what NCCL's tuner believes duration to be (the chooser ranks by it)
  double bytes_sent_per_rank = 0;
};

// NCCL's own tuner (src/graph/tuning.cc at NVIDIA/nccl v2.21.5-1 = ab2b89c4: ncclTopoTuneModel and
// ncclTopoGetAlgoTime), what NCCL believes one (algorithm, protocol) costs, in us, for a group across
// PCIe-only nodes (nccl_tuner_applies). NCCL picks the smallest of these; it knows nothing of what the
// hardware achieves. The arithmetic, for n ranks on N nodes, ppn = n / N, the ring graph's C channels of
// b GB/s each (search.cc: the largest speedArrayInter entry {48, 30, 28, 24, 20, ...} not above the GPU's
// PCIe link and its NIC's line rate, C = max(1, NICs per node / ppn); the graph is not duplicated below
// 25 GB/s, ncclTopoDupChannels; ncclTopoPostset then doubles the communicator's channels to 2C):
//   bus bandwidth B = C b (bwIntra at N <= 2, bwInter above: the same graph here), then
//     ring LL      min(llMaxBw, B / 2)           llMaxBw = 39 (N = 2) / 20.4 (N > 2), x86 Intel host
//     ring Simple  B
//     tree         min(0.92 B, C perChMaxTreeBw) perChMaxTreeBw = 23.6 (N = 2) / 17.8 (Ampere row)
//     tree LL      min(that / 3.8, llMaxBw);  x 0.85 when ppn = 1 (NCCL_TOPO_PATTERN_TREE)
//   algorithm bandwidth: ring x n / nsteps, tree x 0.5 (nsteps 2(n-1) all-reduce, n-1 all-gather /
//     reduce-scatter, n broadcast)
//   latency: ring  baseLat + (nsteps - nInter) max(intraLat, netOverhead) + nInter interLat, nInter =
//     2N all-reduce (sic, at 2.21.5), N-1 all-gather / reduce-scatter; netOverhead 1 us (Intel), x3 for
//     Simple; baseLat 6.6 / 8.4 (LL / Simple), intraLat the PCI row 1.0 / 5.7, interLat the NET row
//     2.7 / 14.0. broadcast: baseLat + interLat (sameChannels).
//            tree  baseLat 6.8 / 0 + 2 ((ppn-1) 1.0 / 28 + log2(N) 5.0 / 28)
//   time = latency (x 1.4 for a Simple ring all-reduce once S / (2C n) >= 64, the "plateau effect") +
//     S / (1000 bw), the tree's bw times treeCorrectionFactor[p][log2(S / 64)] below 256 MiB.
// LL128 is off (tuning.cc enables it "only on Volta/Ampere/Hopper+NVLink": typeIntra <= PATH_NVB and
// typeInter <= PATH_PXB), CollNet too (it needs NCCL_COLLNET_ENABLE=1, init.cc). The table rows that need
// the host CPU vendor take Intel's (an AMD host: netOverhead 2 us, llMaxBw 22.5 at N = 2), and the GPU
// rows Ampere's (the generation of the PCIe cards measured; Hopper's perChMaxTreeBw is 41.4 at N = 2).
// On 2 nodes x 1 A100 PCIe with one HDR NIC (calibrate/published/nccl-tests-logs/a100-pcie-2node-hdr-
// allreduce-info-interleaved.log): ring LL 15.4 us + S / 12 GB/s, ring Simple 74.2 us + S / 24 GB/s, so
// NCCL runs LL up to 1 MiB (102.8 against 117.9 us) and Simple from 2 MiB (161.6 against 190.2 us): the
// switch sits at 1.41 MB, where the log's busbw jumps from 0.31 to 5.74 GB/s. `ok` false when NCCL has no
// such (algorithm, protocol) for the collective.
bool nccl_tuner_applies(const GroupGeometry& g);
double nccl_tuner_time_us(models::CollectiveKind kind, double bytes, const GroupGeometry& g, NcclAlgorithm a,
                          NcclProtocol p, bool* ok);

// Evaluates one (algorithm, protocol); `ok` false when the algorithm does not apply.
AlgorithmChoice estimate(models::CollectiveKind kind, double bytes, const GroupGeometry& g, NcclAlgorithm a,
                         NcclProtocol p, bool* ok);
// Calibrated constants (a profile's comm part fitted by sim/network/nccl_model_fit.hpp). The model's
// constants that a measurement can pin down without knowing the cluster better than the scenario does,
// per collective kind and scope (intra-node: the scale-up tier, B_up, the NVLS line rate and h_nv;
// inter-node: the network tier, B_net and h_net):
//   bandwidth_scale[p]   achieved / modelled bandwidth of the tier under protocol p (LL, LL128, Simple):
//                        the tier's B is multiplied by it wherever the protocol's transfer crosses that
//                        tier (the ring's and tree's network share, the chain's and NVLS's scale-up part);
//   hop_latency_extra_us added to every hop of the tier (h_nv or h_net), every protocol alike;
//   ring_chunk_bytes     the ring's pipeline chunk C_ring over 16 channels (its fill term; a ring on ch
//                        channels fills with C_ring ch / 16) on the tier: a ring across
//                        nodes takes the network tier's, one inside a node the scale-up tier's; LL128 and
//                        Simple share it, LL has its own (ring_chunk_bytes_ll): NCCL gives LL its own
//                        buffer and step (src/init.cc at v2.21.5-1: DEFAULT_LL_BUFFSIZE = 8 lines x 512
//                        threads x NCCL_STEPS x 16 B = 512 KiB of flagged lines against Simple's 4 MiB),
//                        so its pipeline fills at another granularity.
// Both are structural: a ring over n ranks still pays 2(n-1) hops and 2(n-1)/n S on the tier, so a fit
// at 16 ranks carries to 256 by the algorithm. NCCL's own tuner does not know a fabric is slow (its
// tables in src/graph/tuning.cc are static per GPU generation and link kind), so the chooser keeps
// ranking by the default constants (`AlgorithmChoice::tuned`) and only the simulated time moves.
enum class CommScope : std::uint8_t { intra_node, inter_node };
inline constexpr int kNumCollectiveKinds = 6;
const char* to_string(CommScope s);

struct ScopeConstants {
  bool calibrated = false;
  std::array<double, 3> bandwidth_scale{1.0, 1.0, 1.0};  // indexed by NcclProtocol
  double hop_latency_extra_us = 0;
  double ring_chunk_bytes = kRingPipelineChunkBytes;     // LL128 and Simple
  double ring_chunk_bytes_ll = kRingPipelineChunkBytes;  // LL (its own buffer and steps in NCCL)
};

struct NcclCalibration {
  std::array<std::array<ScopeConstants, 2>, kNumCollectiveKinds> by_kind{};
  std::string source;  // the profile's file
  const ScopeConstants& at(models::CollectiveKind kind, CommScope scope) const {
    return by_kind[static_cast<std::size_t>(kind)][static_cast<std::size_t>(scope)];
  }
  ScopeConstants& at(models::CollectiveKind kind, CommScope scope) {
    return by_kind[static_cast<std::size_t>(kind)][static_cast<std::size_t>(scope)];
  }
  bool any() const;
  // The ring pipeline chunk a group of `kind` uses under protocol p (multi_node: the network tier's when
  // calibrated).
  double ring_chunk_bytes(models::CollectiveKind kind, bool multi_node, NcclProtocol p) const;
};

// Evaluates one (algorithm, protocol) with calibrated constants (`calibration` may be null: defaults);
// `tuned` is always the default constants' estimate.
AlgorithmChoice estimate(models::CollectiveKind kind, double bytes, const GroupGeometry& g, NcclAlgorithm a,
                         NcclProtocol p, bool* ok, const NcclCalibration* calibration);

// The choice NCCL's tuner makes; `forced` (if not empty) restricts the algorithm ("ring", "tree", ...).
//
// The rule mirrored is NCCL's own (src/graph/tuning.cc at NVIDIA/nccl 5067397, ncclTopoGetAlgoTime and
// ncclTopoTuneModel): every enabled (algorithm, protocol) gets time = latency + S / bandwidth from the
// tuner's static tables, and the smallest time wins. Those tables price a tree's algorithm bandwidth at
// half its bus bandwidth (`ratio *= .5`, and .92 of it for the all-reduce tree) and a ring's at
// nRanks / nsteps of it, using the intra-node bandwidth for both at nNodes <= 2; so for large messages on
// two nodes NCCL runs the ring even where the double binary tree, which sends each byte once across the
// network instead of twice, would be faster. The switch is real: nccl-tests on two 8-GPU A100 nodes
// (nccl.json nccltests100, nccltests175) shows the ring's 86-91 GB/s, not the tree's ~180, at 1-8 GiB.
// So the chooser ranks by `tuned` (the tuner's view, W = 4 sends for every tree) and the simulated time
// is the structure's `duration`; `simulation.nccl_algorithm` (NCCL_ALGO) forces the tree where a user
// runs it. docs/calibration.md ("Which algorithm NCCL picks") shows the 16-rank 100 GbE case.
// Across PCIe-only nodes (nccl_tuner_applies) `tuned` is NCCL's own table arithmetic instead
// (nccl_tuner_time_us), and LL128 is never chosen on nodes without NVLink; NVLink nodes keep the
// structural ranking above, which matches their measured switches.
AlgorithmChoice choose_algorithm(models::CollectiveKind kind, double bytes, const GroupGeometry& g,
                                 const std::string& forced = {}, const NcclCalibration* calibration = nullptr);

}  // namespace cs::sim
