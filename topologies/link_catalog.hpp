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
  double payload_GBps() const { return line_rate_gbps / 8.0 * efficiency; }
};

// Scale-up fabric inside a node / domain.
struct IntraNodeSpec {
  std::string name;               // nvswitch, pcie, nvl72
  double gpu_bandwidth_GBps = 0;  // per GPU, per direction, line rate (0: take from the GPU's NVLink)
  double efficiency = 0;          // achievable fraction for NCCL bulk transfers
  double latency_us = 0;          // per hop GPU -> switch -> GPU
  int domain_gpus = 0;            // GPUs on one scale-up fabric (8 for a node, 72 for NVL72); 0 = node
  bool switched = true;           // all-to-all full bandwidth (NVSwitch) vs shared PCIe tree
};

const NetLinkSpec* find_net_link(std::string_view name);
std::vector<std::string> net_link_names();
const IntraNodeSpec* find_intra_node(std::string_view name);
std::vector<std::string> intra_node_names();

}  // namespace cs::topo
