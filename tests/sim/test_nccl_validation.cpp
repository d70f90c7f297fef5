// The simulated NCCL against published nccl-tests figures (shared/validation/nccl.json): every setup the
// topologies can express is built here as a ClusterSpec, run through run_collective() (the engine with
// the flow network, as `clustersim collective` does) and held within 15% of the published busbw at the
// published sizes. Full sweeps are held at sizes >= 32 MiB; below that only their shape is held (busbw
// rising ~linearly with size below 1 MiB, a plateau at the top), because the small-message latency of the
// Azure machines (25-45 us for a 1 KiB all-reduce) is well above the bare-metal defaults of nccl_model.hpp
// (see the validation tables in the issue note). Published figures are read from the file, not copied.
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

// A published sweep: within 15% at sizes >= 32 MiB; latency-bound shape below 1 MiB; plateau at the top.
void check_sweep(const cs::topo::ClusterSpec& s, const std::string& id) {
  std::vector<std::pair<double, double>> points;  // JSON object keys come sorted as text: sort by size
  for (const auto& [size_text, value] : entry(id).at("measured").at("busbw_GBps_by_bytes").items())
    points.emplace_back(std::stod(size_text), value.get<double>());
  std::sort(points.begin(), points.end());
  double prev = 0, prev_size = 0, top = 0, below_top = 0;
  for (const auto& [size, value] : points) {
    const std::string size_text = std::to_string(static_cast<long long>(size));
    {
      const double busbw = all_reduce(s, size).busbw_GBps;
      if (size >= 32 * kMiB) check_close(busbw, value, id + " at " + size_text + " B");
      if (size <= 1 * kMiB && prev > 0) {
        // Latency-bound: doubling the size nearly doubles busbw up to 64 KiB, and still by more than 1.4x
        // up to 1 MiB (the published sweeps stay at ~1.9x up to 1 MiB: their latency is 2-3x ours).
        INFO(id << ": busbw " << prev << " at " << prev_size << " B -> " << busbw << " at " << size << " B");
        CHECK(busbw / prev > (size <= 64 * 1024.0 ? 1.8 : 1.4));
        CHECK(busbw / prev < 2.05);
      }
      if (size == 2 * kGiB) below_top = busbw;
      if (size == 8 * kGiB) top = busbw;
      prev = busbw, prev_size = size;
    }
  }
  REQUIRE(top > 0);
  CHECK(top / below_top < 1.03);  // plateau: within 3% between 2 and 8 GiB
}

}  // namespace

TEST_CASE("nccl validation: A100 8-GPU all-reduce sweep (Azure ND A100 v4)", "[sim][nccl]") {
  check_sweep(a100(), "azure_a100_8gpu_allreduce_sweep");
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
