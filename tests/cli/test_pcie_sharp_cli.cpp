// The scenario keys of the PCIe host side (cluster.intra_node.sockets, gpus_per_pcie_switch,
// inter_socket_GBps) and of SHARP (cluster.inter_node.sharp, the forced CollNet / NVLS Tree algorithms):
// each bad input is one line naming the file and key, exit code 2; each good one changes the run.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "cli_helpers.hpp"

using namespace clitest;
using nlohmann::json;

namespace {

CliResult run_doc(const TempDir& dir, const json& doc, fs::path& file) {
  file = dir.write_json("scenario.json", doc);
  return run_cli({"run", file.string(), "--json"});
}

// The run's one stderr line must be `file: tail` (the file is only known once run_doc has written it).
void check_one_line(const CliResult& r, const fs::path& file, const std::string& tail) {
  INFO(r.describe());
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  const auto lines = r.err_lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == file.string() + tail);
}

// Llama-3 8B on one node of 8 H100 PCIe cards (TP2 DP4 as the shipped H100 scenario).
json pcie_doc(const json& intra) {
  json doc = scenario_json("llama3-8b-h100x8.json");
  doc["cluster"]["gpu"] = "H100-PCIe";
  doc["cluster"]["intra_node"] = intra;
  return doc;
}

double step_time(const CliResult& r) {
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out).at("step_time_s").get<double>();
}

}  // namespace

TEST_CASE("PCIe host keys: bad values are refused with the key named", "[cli][pcie]") {
  TempDir dir;
  fs::path file;
  json nvswitch = scenario_json("llama3-8b-h100x8.json");
  nvswitch["cluster"]["intra_node"] = {{"name", "nvswitch"}, {"sockets", 2}};
  check_one_line(run_doc(dir, nvswitch, file), file,
                 ": cluster.intra_node.sockets: PCIe nodes only: on \"nvswitch\" GPU traffic stays on "
                                 "NVLink and never crosses the sockets");
  check_one_line(run_doc(dir, pcie_doc({{"name", "pcie"}, {"sockets", 3}}), file), file,
                 ": cluster.intra_node.sockets: 3 sockets do not split the 8 GPUs of a node evenly");
  check_one_line(run_doc(dir, pcie_doc({{"name", "pcie"}, {"gpus_per_pcie_switch", 3}}), file), file,
                 ": cluster.intra_node.gpus_per_pcie_switch: 3 GPUs per switch do not divide the 4 GPUs "
                                 "of a socket (8 GPUs per node over 2 sockets)");
  check_one_line(run_doc(dir, pcie_doc({{"name", "pcie"}, {"inter_socket_GBps", 0}}), file), file,
                 ": cluster.intra_node.inter_socket_GBps: 0 is out of range (expected a number >= 0.1)");
}

TEST_CASE("PCIe host keys change the run: the inter-socket link bounds the data-parallel all-reduce", "[cli][pcie]") {
  TempDir dir;
  fs::path file;
  // TP2 x DP4: the two DP rings {0,2,4,6} and {1,3,5,7} each cross the sockets once per direction.
  // Default (2 sockets, one switch of 4 GPUs each, 22 GB/s): 2 ring edges per direction on the inter-socket
  // link, 11 GB/s. At 100 or 200 GB/s the bottleneck moves to the switch's x16 up-link, which carries
  // 2 -> 4 and 3 -> 5: 51.2 / 2 = 25.6 GB/s either way. One socket (8 GPUs on one switch): 51.2 GB/s.
  const double two_socket = step_time(run_doc(dir, pcie_doc({{"name", "pcie"}}), file));
  const double fast_link = step_time(run_doc(dir, pcie_doc({{"name", "pcie"}, {"inter_socket_GBps", 100}}), file));
  const double faster_link = step_time(run_doc(dir, pcie_doc({{"name", "pcie"}, {"inter_socket_GBps", 200}}), file));
  const double one_socket = step_time(run_doc(dir, pcie_doc({{"name", "pcie"}, {"sockets", 1}}), file));
  CHECK(two_socket > fast_link);
  CHECK(fast_link == Approx(faster_link).epsilon(1e-12));
  CHECK(fast_link > one_socket);
}

TEST_CASE("PCIe host keys through --set on a fabric given by name: the name becomes the object's name", "[cli][pcie]") {
  // "intra_node": "pcie" and {"name": "pcie", "sockets": 1} are the same catalog fabric, the second adjusted,
  // so --set cluster.intra_node.sockets=1 on the first is the second (a custom GPU or link has no such
  // form: --set cluster.gpu.hbm_gib=80 on a named GPU stays refused, test_bad_input.cpp).
  TempDir dir;
  fs::path file;
  const double by_object = step_time(run_doc(dir, pcie_doc({{"name", "pcie"}, {"sockets", 1}}), file));
  const fs::path named = dir.write_json("named.json", pcie_doc("pcie"));
  const double by_set = step_time(run_cli({"run", named.string(), "--json", "--set", "cluster.intra_node.sockets=1"}));
  const double two_socket = step_time(run_cli({"run", named.string(), "--json"}));
  CHECK(by_set == by_object);
  CHECK(by_set < two_socket);
}

TEST_CASE("SHARP keys: bad combinations are refused with the key named", "[cli][sharp]") {
  TempDir dir;
  fs::path file;
  json eth = scenario_json("llama2-13b-a100x64-eth100g.json");
  eth["cluster"]["inter_node"]["sharp"] = true;
  check_one_line(run_doc(dir, eth, file), file,
                 ": cluster.inter_node.sharp: SHARP is the in-network reduction of InfiniBand switches; "
                                 "\"" + eth["cluster"]["inter_node"]["link"].get<std::string>() + "\" is Ethernet");
  json no_sharp = scenario_json("llama2-13b-a100x64-hdr200.json");
  no_sharp["simulation"] = {{"nccl_algorithm", "collnet_direct"}};
  check_one_line(run_doc(dir, no_sharp, file), file,
                 ": simulation.nccl_algorithm: \"collnet_direct\" is NCCL's CollNet (SHARP in-network "
                                 "reduction) and needs a fabric that has it (cluster.inter_node.sharp: true)");
  json pcie = pcie_doc("pcie");
  pcie["cluster"]["nodes"] = 2;
  pcie["cluster"]["inter_node"] = {{"fabric", "fat-tree"}, {"link", "ib-ndr400"}, {"sharp", true}};
  pcie["simulation"] = {{"nccl_algorithm", "collnet_direct"}};
  check_one_line(run_doc(dir, pcie, file), file,
                 ": simulation.nccl_algorithm: \"collnet_direct\" needs NVSwitch nodes (NCCL runs it only "
                                 "there); cluster.intra_node \"pcie\" has none (use \"collnet_chain\")");
  json a100 = scenario_json("llama2-13b-a100x64-hdr200.json");  // A100 NVSwitch: no in-switch reduction
  a100["simulation"] = {{"nccl_algorithm", "nvls_tree"}};
  check_one_line(run_doc(dir, a100, file), file,
                 ": simulation.nccl_algorithm: \"nvls_tree\" needs NVSwitch with in-switch reduction "
                                 "(NVLink SHARP: H100 / H200 / B200 nodes, NVL72); cluster.intra_node \"nvswitch\" has none");
}

TEST_CASE("SHARP changes the run: the data-parallel all-reduce goes through the switches", "[cli][sharp]") {
  // Llama-2 13B on 8 A100 nodes, TP2 DP32, without ZeRO (so the gradients are all-reduced, not
  // reduce-scattered): the DP groups hold 4 GPUs on each of 8 nodes, so CollNet Direct is eligible with
  // SHARP and sends S/4 per GPU through the network where the ring sends 2 x 31/32 S / 4.
  TempDir dir;
  fs::path file;
  json doc = scenario_json("llama2-13b-a100x64-hdr200.json");
  doc["training"]["zero_stage"] = 0;
  const double ring = step_time(run_doc(dir, doc, file));
  doc["cluster"]["inter_node"]["sharp"] = false;
  CHECK(step_time(run_doc(dir, doc, file)) == ring);  // the default, stated
  doc["cluster"]["inter_node"]["sharp"] = true;
  CHECK(step_time(run_doc(dir, doc, file)) < ring);
}
