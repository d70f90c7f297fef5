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
// "nvswitch" entry serves both A100 and H100 nodes, so it leaves nvls false and the caller sets it from the
// GPU; the collectives layer decides whether to use it.
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
};

const NetLinkSpec* find_net_link(std::string_view name);
std::vector<std::string> net_link_names();
const IntraNodeSpec* find_intra_node(std::string_view name);
std::vector<std::string> intra_node_names();

}  // namespace cs::topo
