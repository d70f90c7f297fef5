// Link catalog entries. Line rates are from the standards; efficiencies are anchored on nccl-tests
// figures collected in calibrate/published/nccl.json (entry ids quoted beside each value).
//
// How the efficiency is read from nccl-tests: for an all-reduce over N > 1 nodes with one NIC per GPU,
// nccl-tests' busbw ~= (NICs per node) x (payload bandwidth of one NIC), because every ring channel
// carries 2(n-1)/n of its share of the buffer across each node boundary through its own NIC. So the
// per-NIC ceiling a maintainer quotes is directly payload_GBps(), and efficiency = ceiling / line rate.
// Inside a node the ring busbw over NVSwitch is bounded by the per-direction NVLink bandwidth of a GPU, so
// efficiency = ring busbw / per-direction NVLink line rate.
//
// Latencies are per hop (NIC + cable + switch for the network, GPU -> NVSwitch -> GPU inside a node).
// They are of the order of NCCL's own per-step hardware latencies (src/graph/tuning.cc, hwLat: Ring/LL
// ~0.5 us NVLink, ~1 us PCIe, ~1-3 us network); a ring step between two nodes under one leaf is modeled
// as 2 network hops + 1 intra-node hop = 2.6 us on InfiniBand (see cluster.cpp).
#include "topologies/link_catalog.hpp"

#include "sim/base/name_table.hpp"

#include <array>

namespace cs::topo {
namespace {

// InfiniBand (HDR/NDR/XDR) line rates are data rates: the 64b/66b (HDR) or 256b/257b + RS-FEC (NDR,
// XDR) line coding is already outside the quoted 200/400/800 Gb/s, so what remains between line rate
// and payload is the IB transport headers (LRH 8 + BTH 12 + ICRC 4 + VCRC 2 = 26 B per 4096 B MTU
// packet, ~0.6%), flow-control credits and ACKs, and NCCL's own protocol (Simple protocol chunking,
// proxy-thread pacing, GPU<->NIC PCIe DMA through GPUDirect RDMA). Measured ceilings:
//   HDR 200 Gb/s = 25 GB/s line: ~24 GB/s per NIC (nccl412_a800_intra_inter maintainer: "~24 GB/s per
//     HDR NIC"; nccl812_dgxa100_8xhdr: 192 GB/s busbw with 8x HDR = 24 GB/s each;
//     nccltests252_ring_4nic: 95.3 GB/s with 4 NICs = 23.8 each) -> 0.96.
//   NDR 400 Gb/s = 50 GB/s line: 48-49 GB/s per NIC (nccltests267_cx7_ndr_per_nic maintainer),
//     46-48 GB/s (nccltests290_h100_single_node maintainer) -> 0.96 (48 GB/s).
//   XDR 800 Gb/s = 100 GB/s line: no measurement in nccl.json; same transport and NCCL path as NDR
//     (ConnectX-8 on PCIe Gen6 x16, so PCIe is not the bottleneck) -> 0.96 by extrapolation.
constexpr double kIbEfficiency = 0.96;
constexpr double kIbLatencyUs = 1.0;  // NIC + ~130 ns Quantum switch + cable; RDMA, no kernel

// RoCEv2: same NIC silicon (ConnectX) and GPUDirect RDMA path as IB, with heavier framing (Ethernet
// preamble+IFG 20 + MAC 14 + FCS 4 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 = 82 B per 4096 B payload, ~2%),
// and a lossless fabric that depends on PFC pause frames and ECN/DCQCN rate control, which throttles
// senders below line rate under load; ECMP hashing of few, long-lived NCCL flows also collides. The
// only deployed RoCE measurement in nccl.json, nccl1221_h100_roce_multi_node (H100, 8x 400G RoCE per
// node), gives 330 GB/s busbw on 2 nodes and 320 GB/s on 4 nodes: 41.3 and 40 GB/s per NIC of 50 GB/s
// = 0.83 / 0.80. A well-tuned CX-7 RoCE fabric can reach the IB ceiling (nccltests267_cx7_ndr_per_nic,
// 48-49 GB/s, maintainer) but that is the best case, so the catalog takes the deployed figure: 0.82.
constexpr double kRoceEfficiency = 0.82;
constexpr double kRoceLatencyUs = 1.5;  // Ethernet switches (~0.3-0.6 us) are slower than IB's ~0.13 us

// TCP Ethernet (NCCL NET/Socket transport, no RDMA): every byte is copied between GPU, a pinned host
// bounce buffer and the kernel socket buffers, and TCP/IP framing at a 1500 B MTU costs
// 1460/1538 = 0.95 before any copy. A few sockets per NIC (NCCL_NSOCKS_PERTHREAD x NCCL_SOCKET_NTHREADS)
// on a 40/100 GbE NIC typically land at 70-80% of line rate; nccl.json has no TCP entry, so 0.75 is an
// engineering estimate, marked as such. The kernel stack (syscalls, interrupts, softirq) puts ~10-30 us
// on every hop instead of ~1-2 us: 20 us.
constexpr double kTcpEfficiency = 0.75;
constexpr double kTcpLatencyUs = 20.0;

NetLinkSpec ib(const char* name, double line_rate_gbps) {
  NetLinkSpec l{name, line_rate_gbps, kIbEfficiency, kIbLatencyUs, true};
  l.in_network_reduction = true;
  return l;
}

const std::array<NetLinkSpec, 8>& net_links() {
  static const std::array<NetLinkSpec, 8> links = {{
      // IBTA HDR: 4 lanes x 50 Gb/s (PAM4) = 200 Gb/s data rate (ConnectX-6). InfiniBand switches reduce in
      // the network (SHARP; Quantum and later).
      ib("ib-hdr200", 200.0),
      // IBTA NDR: 4 lanes x 100 Gb/s = 400 Gb/s (ConnectX-7, Quantum-2).
      ib("ib-ndr400", 400.0),
      // IBTA XDR: 4 lanes x 200 Gb/s = 800 Gb/s (ConnectX-8, Quantum-X800).
      ib("ib-xdr800", 800.0),
      // IEEE 802.3 100GBASE-R / 200GBASE-R / 400GBASE-R, carrying RoCEv2.
      {"roce-100g", 100.0, kRoceEfficiency, kRoceLatencyUs, true},
      {"roce-200g", 200.0, kRoceEfficiency, kRoceLatencyUs, true},
      {"roce-400g", 400.0, kRoceEfficiency, kRoceLatencyUs, true},
      // IEEE 802.3 40GBASE-R / 100GBASE-R, carrying TCP sockets.
      {"eth-40g", 40.0, kTcpEfficiency, kTcpLatencyUs, false},
      {"eth-100g", 100.0, kTcpEfficiency, kTcpLatencyUs, false},
  }};
  return links;
}

// Scale-up fabrics.
//
// nvswitch: every GPU has one NVLink bundle to the NVSwitch plane at its full per-direction NVLink
//   bandwidth (A100 NVLink3 300 GB/s, H100 NVLink4 450 GB/s per direction); gpu_bandwidth_GBps = 0 says
//   "take it from the GPU" (nvlink bidirectional / 2), which the caller fills in. Efficiency is the ring
//   busbw ceiling over that line rate:
//     A100: 231.58 GB/s peak (azure_a100_8gpu_allreduce_sweep, 8 GiB), 232.54 GB/s
//       (nccltests175_a100_1node_2node) of 300 -> 0.77.
//     H100: Ring 365-370 GB/s for 2..8 GPUs (nccl1455_h100_nvls_*), and the maintainer's "~20% protocol
//       overhead -> ~370 GB/s effective NVLink busbw" (nccltests212_h100_ring_vs_nvls) of 450 -> 0.82.
//   The overhead is NVLink's packet/flit headers and flow control (the maintainer's ~20%) plus NCCL's
//   flag/step synchronisation between the SM-driven copies. One catalog value covers both generations:
//   0.80 (A100 +4%, H100 -2.5%). NVLS (in-switch reduction) all-reduce goes above this (476-480 GB/s on
//   8 H100s) because the switch does the reduction; that is an algorithm, not link efficiency, and is
//   modeled by the collective layer, not here.
// pcie: GPUs without NVLink talk peer-to-peer over PCIe Gen5 x16: 32 GT/s x 16 lanes = 64 GB/s per
//   direction nominal. Efficiency: 128b/130b coding (0.985) x TLP framing at 256 B max payload
//   (256 / (256 + ~24 B header/LCRC/sequence/framing) = 0.91) x DLLP ACK/flow-control traffic and the
//   root-complex peer-to-peer forwarding (~0.9) = ~0.80. nccl.json has no 8-GPU PCIe sweep (the only
//   PCIe-card entry, nccltests194, uses an NVLink bridge), so this is derived, not measured. The GPUs are
//   not switched all-to-all (switched = false): they sit under PCIe switches under the root complexes of
//   the node's sockets, joined by the inter-socket link (IntraNodeSpec::sockets, gpus_per_pcie_switch,
//   inter_socket_GBps; cluster.hpp "PCIe nodes"), and a ring runs at its busiest link's bandwidth.
// pcie-nvlink-bridge: PCIe cards (A100 PCIe, H100 PCIe / H100 NVL) whose GPUs are bridged in pairs: the
//   pair (2i, 2i+1) shares an NVLink bridge, everything else goes over PCIe as in "pcie". Bridge: NVIDIA
//   A100 PCIe and H100 NVL datasheets, 600 GB/s bidirectional per GPU over three bridges = 300 GB/s per
//   direction; the caller may override. Efficiency and latency as "pcie" (the PCIe hops dominate a ring;
//   the bridge is the same NVLink protocol whose efficiency nvswitch measures at 0.80, equal by luck).
// nvl72: GB200 NVL72, 72 Blackwell GPUs on one NVLink5 switch fabric (9 switch trays), 1.8 TB/s
//   bidirectional = 900 GB/s per direction per GPU (NVIDIA GB200 NVL72 datasheet). No nccl.json
//   measurement; same NVLink protocol family as NVLink4 -> the nvswitch efficiency, 0.80.
//   Fifth-generation NVSwitch reduces in the fabric: nvls = true.
const std::array<IntraNodeSpec, 4>& intra_nodes() {
  static const std::array<IntraNodeSpec, 4> specs = {{
      {.name = "nvswitch", .gpu_bandwidth_GBps = 0.0, .efficiency = 0.80, .latency_us = 0.6, .generation_from_gpu = true},
      {.name = "pcie", .gpu_bandwidth_GBps = 64.0, .efficiency = 0.80, .latency_us = 1.0, .switched = false, .nvlink = false},
      {.name = "nvl72", .gpu_bandwidth_GBps = 900.0, .efficiency = 0.80, .latency_us = 0.6, .domain_gpus = 72, .nvls = true},
      {.name = "pcie-nvlink-bridge", .gpu_bandwidth_GBps = 64.0, .efficiency = 0.80, .latency_us = 1.0, .switched = false,
       .bridge_bandwidth_GBps = 300.0},
  }};
  return specs;
}

}  // namespace

int pcie_sockets(const IntraNodeSpec& intra, int gpus_per_node) {
  if (intra.sockets > 0) return intra.sockets;
  return gpus_per_node >= 4 && gpus_per_node % 2 == 0 ? 2 : 1;
}

int pcie_gpus_per_switch(const IntraNodeSpec& intra, int gpus_per_node) {
  if (intra.gpus_per_pcie_switch > 0) return intra.gpus_per_pcie_switch;
  return gpus_per_node / pcie_sockets(intra, gpus_per_node);
}

double pcie_inter_socket_GBps(const IntraNodeSpec& intra) {
  return intra.inter_socket_GBps > 0 ? intra.inter_socket_GBps : kDefaultInterSocketGBps;
}

const NetLinkSpec* find_net_link(std::string_view name) { return sim::find_named(net_links(), name); }
std::vector<std::string> net_link_names() { return sim::names_in(net_links()); }
const IntraNodeSpec* find_intra_node(std::string_view name) { return sim::find_named(intra_nodes(), name); }
std::vector<std::string> intra_node_names() { return sim::names_in(intra_nodes()); }

}  // namespace cs::topo
