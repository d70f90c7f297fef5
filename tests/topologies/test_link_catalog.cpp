// Link catalog: names the scenarios use, and efficiencies held against the nccl-tests figures in
// calibrate/published/nccl.json that they were chosen from.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "topologies/link_catalog.hpp"

using namespace cs::topo;

TEST_CASE("catalog holds every DESIGN.md link name, in a fixed order", "[topologies]") {
  const std::vector<std::string> net = {"ib-hdr200", "ib-ndr400", "ib-xdr800", "roce-100g",
                                        "roce-200g", "roce-400g", "eth-40g",   "eth-100g"};
  CHECK(net_link_names() == net);
  CHECK(intra_node_names() == std::vector<std::string>{"nvswitch", "pcie", "nvl72", "pcie-nvlink-bridge"});
  for (const auto& name : net) {
    const NetLinkSpec* link = find_net_link(name);
    REQUIRE(link != nullptr);
    CHECK(link->name == name);
    CHECK(link->efficiency > 0.0);
    CHECK(link->efficiency <= 1.0);
    CHECK(link->latency_us > 0.0);
  }
  CHECK(find_net_link("ib-ndr") == nullptr);
  CHECK(find_intra_node("nvlink") == nullptr);
}

TEST_CASE("InfiniBand payload matches nccl-tests per-NIC ceilings", "[topologies]") {
  // nccltests267 / nccltests290 (maintainer): 46-49 GB/s per NDR NIC of 50 GB/s line.
  const NetLinkSpec* ndr = find_net_link("ib-ndr400");
  REQUIRE(ndr != nullptr);
  CHECK(ndr->payload_GBps() == Approx(48.0));
  CHECK(ndr->payload_GBps() >= 46.0);
  CHECK(ndr->payload_GBps() <= 49.0);
  // nccl812: 192 GB/s busbw over 8x HDR per DGX A100 = 24 GB/s per NIC.
  const NetLinkSpec* hdr = find_net_link("ib-hdr200");
  REQUIRE(hdr != nullptr);
  CHECK(8.0 * hdr->payload_GBps() == Approx(192.0));
  CHECK(find_net_link("ib-xdr800")->payload_GBps() == Approx(96.0));
}

TEST_CASE("RoCE sits at the deployed measurement, TCP below RDMA with kernel latency", "[topologies]") {
  // nccl1221: 8x 400G RoCE per H100 node, 320-330 GB/s busbw = 40-41.3 GB/s per NIC.
  const NetLinkSpec* roce = find_net_link("roce-400g");
  REQUIRE(roce != nullptr);
  CHECK(8.0 * roce->payload_GBps() == Approx(328.0));
  CHECK(8.0 * roce->payload_GBps() >= 320.0);
  CHECK(8.0 * roce->payload_GBps() <= 330.0);
  CHECK(roce->rdma);

  const NetLinkSpec* ib = find_net_link("ib-ndr400");
  for (const char* name : {"eth-40g", "eth-100g"}) {
    const NetLinkSpec* eth = find_net_link(name);
    REQUIRE(eth != nullptr);
    CHECK_FALSE(eth->rdma);
    CHECK(eth->efficiency < roce->efficiency);
    CHECK(eth->latency_us >= 10.0 * ib->latency_us);
  }
}

TEST_CASE("scale-up entries: NVSwitch efficiency brackets A100 and H100 ring busbw", "[topologies]") {
  const IntraNodeSpec* nvs = find_intra_node("nvswitch");
  REQUIRE(nvs != nullptr);
  CHECK(nvs->gpu_bandwidth_GBps == 0.0);  // taken from the GPU's NVLink by the caller
  CHECK(nvs->switched);
  // A100: 231.58 GB/s ring busbw peak of 300 GB/s per direction (azure_a100_8gpu_allreduce_sweep).
  CHECK(300.0 * nvs->efficiency == Approx(231.58).epsilon(0.05));
  // H100: ~370 GB/s ring busbw of 450 GB/s per direction (nccltests212, nccl1455).
  CHECK(450.0 * nvs->efficiency == Approx(370.0).epsilon(0.05));

  const IntraNodeSpec* pcie = find_intra_node("pcie");
  REQUIRE(pcie != nullptr);
  CHECK_FALSE(pcie->switched);
  CHECK(pcie->gpu_bandwidth_GBps == 64.0);

  const IntraNodeSpec* nvl72 = find_intra_node("nvl72");
  REQUIRE(nvl72 != nullptr);
  CHECK(nvl72->domain_gpus == 72);
  CHECK(nvl72->gpu_bandwidth_GBps == 900.0);
  // NVLink SHARP: fifth-generation NVSwitch has it; the generic nvswitch entry leaves it to the caller
  // (A100's NVSwitch has none, H100/H200's has), PCIe nodes never.
  CHECK(nvl72->nvls);
  CHECK_FALSE(nvs->nvls);
  CHECK_FALSE(pcie->nvls);
  CHECK(pcie->bridge_bandwidth_GBps == 0.0);

  // Bridged PCIe cards: PCIe as above plus a 600 GB/s bidirectional = 300 GB/s per direction bridge.
  const IntraNodeSpec* bridged = find_intra_node("pcie-nvlink-bridge");
  REQUIRE(bridged != nullptr);
  CHECK_FALSE(bridged->switched);
  CHECK(bridged->gpu_bandwidth_GBps == 64.0);
  CHECK(bridged->bridge_bandwidth_GBps == 300.0);
}
