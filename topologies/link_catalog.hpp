#pragma once
// Link catalog: the scale-up (inside a node) and scale-out (between nodes) links clustersim knows.
//
// Bandwidths are line rates from the standards / datasheets (source beside each entry in the .cpp).
// `efficiency` is the fraction of line rate a bulk NCCL transfer achieves on that link (protocol
// headers, flow control, PCIe/NIC DMA limits): e.g. NDR400 InfiniBand moves ~48 GB/s of payload out of
// 50 GB/s line rate in nccl-tests' per-NIC ceiling. Latency is per hop (switch + cable + NIC), the alpha
// term of alpha-beta.
#include <string>
#include <string_view>
#include <vector>

namespace cs::topo {

// Scale-out NIC link (one direction).
struct NetLinkSpec {
  std::string name;
  double line_rate_gbps = 0;  // Gbit/s per direction
  double efficiency = 0;      // achievable payload fraction of line rate
  double latency_us = 0;      // per hop
  bool rdma = true;           // false for TCP Ethernet (kernel stack: more latency, lower efficiency)
  // A scenario's custom link whose latency_us is given: the NCCL model's per-hop network latency follows
  // it (sim/network/nccl_model.hpp). The catalog's links keep the NCCL tuning table's network row.
  bool latency_given = false;
  // The switches of this link's fabric can reduce in the network (InfiniBand SHARP): what
  // cluster.inter_node.sharp asks for is possible. A custom link (cluster.inter_node.link as an object)
  // is trusted to have it.
  bool in_network_reduction = false;
  double payload_GBps() const { return line_rate_gbps / 8.0 * efficiency; }
};

// Scale-up fabric inside a node / domain.
//
// Which direction a number means: every bandwidth here is per GPU and per direction. NVIDIA quotes NVLink
// as a bidirectional total per GPU, so the caller halves the GPU's datasheet figure:
//   A100 NVLink3 (12 links x 50 GB/s)      600 GB/s bidirectional -> 300 GB/s per direction
//   H100/H200 NVLink4 (18 links x 50 GB/s)  900 GB/s bidirectional -> 450 GB/s per direction
//   B200/GB200 NVLink5 (18 links x 100 GB/s) 1.8 TB/s bidirectional -> 900 GB/s per direction
// `nvls` says the switches can reduce in the fabric (NVLink SHARP, "NVLS" in NCCL): third-generation
// NVSwitch (H100/H200 HGX) and later (NVL72), not the A100's second-generation NVSwitch. The catalog's
// "nvswitch" entry serves both A100 and H100 nodes, so it leaves nvls false and says generation_from_gpu:
// the caller sets nvls (and the bandwidth) from the GPU; the collectives layer decides whether to use it.
struct IntraNodeSpec {
  std::string name;               // nvswitch, pcie, nvl72, pcie-nvlink-bridge
  double gpu_bandwidth_GBps = 0;  // per GPU, per direction, line rate (0: take from the GPU's NVLink)
  double efficiency = 0;          // achievable fraction for NCCL bulk transfers (also on the bridges)
  double latency_us = 0;          // per hop GPU -> switch -> GPU (a bridge hop GPU -> GPU costs the same)
  int domain_gpus = 0;            // GPUs on one scale-up fabric (8 for a node, 72 for NVL72); 0 = node
  bool switched = true;           // all-to-all full bandwidth (NVSwitch) vs shared PCIe tree
  bool nvls = false;              // in-switch reduction (NVLink SHARP) available; see above
  // PCIe nodes only: > 0 puts an NVLink bridge between local GPUs 2i and 2i+1 (per direction, line rate).
  double bridge_bandwidth_GBps = 0;
  // PCIe nodes only (switched == false): the host side of the node (cluster.hpp, "PCIe nodes"). 0 = the
  // default, resolved by pcie_sockets() / pcie_gpus_per_switch() / pcie_inter_socket_GBps().
  int sockets = 0;               // CPU sockets (root complexes), GPUs split evenly over them in index order
  int gpus_per_pcie_switch = 0;  // GPUs under one PCIe switch; the switches of a socket hang off its root complex
  double inter_socket_GBps = 0;  // the inter-socket link (QPI / UPI / xGMI), per direction, payload
  // Capabilities, read instead of the catalog name:
  bool nvlink = true;  // GPUs reach a peer over NVLink (a switch or a bridge); false: PCIe only
  // The switch generation follows the GPU (one catalog entry for A100 and H100 nodes): with
  // gpu_bandwidth_GBps 0 the bandwidth is the GPU's NVLink, which it then needs, and nvls is the GPU's
  // NVSwitch generation's (GpuSpec::nvswitch_has_nvls) unless the scenario says.
  bool generation_from_gpu = false;
};

// The inter-socket bandwidth NCCL's topology search assumes for Intel Sapphire Rapids, the CPU of current
// two-socket PCIe GPU servers: SRP_QPI_BW = 22 GB/s (NVIDIA/nccl src/graph/topo.h at 5067397; the same
// table has SKL_QPI_BW 10, AMD_BW 16, ERP_QPI_BW 40 for Emerald Rapids). NCCL sizes its rings with it, so
// a ring that crosses the sockets is built to run at most this fast.
inline constexpr double kDefaultInterSocketGBps = 22.0;
// Sockets of a PCIe node of `gpus_per_node` GPUs: the spec's, else 2 when the GPUs split evenly over two
// sockets and there are at least 4 of them (8-GPU PCIe servers are two-socket machines with half the GPUs
// on each: nccl-tests#307's 8x RTX 4090 topology, NCCL#1639's 2x Xeon 8480+ with 8 RTX 5090), else 1.
int pcie_sockets(const IntraNodeSpec& intra, int gpus_per_node);
// GPUs per PCIe switch: the spec's, else all GPUs of a socket under one switch (nccl-tests#307: GPU0-3 PIX).
int pcie_gpus_per_switch(const IntraNodeSpec& intra, int gpus_per_node);
double pcie_inter_socket_GBps(const IntraNodeSpec& intra);

const NetLinkSpec* find_net_link(std::string_view name);
std::vector<std::string> net_link_names();
const IntraNodeSpec* find_intra_node(std::string_view name);
std::vector<std::string> intra_node_names();

}  // namespace cs::topo
