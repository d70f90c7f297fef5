// Blackwell-era hardware (issue 30): the catalog's 2025-26 GPUs, rack-scale scale-up domains and their
// placement, hardware that cannot be built, the NIC's host-path cap, and the precision recipes' GEMM
// time and memory against hand computations.
#include <catch2/catch.hpp>

#include <cmath>

#include <nlohmann/json.hpp>

#include "models/compute/compute_model.hpp"
#include "models/hardware/gpu_catalog.hpp"
#include "models/memory/memory_model.hpp"
#include "models/workload/transformer.hpp"
#include "sim/base/input_error.hpp"
#include "sim/network/nccl_model.hpp"
#include "sim/scenario/scenario.hpp"
#include "topologies/cluster.hpp"

using namespace cs::sim;
using cs::models::PrecisionRecipe;
using nlohmann::json;

namespace {

// 64 GB200 compute trays of 4 GPUs (256 GPUs) in NVL72 racks, a MoE whose 64 experts are split 32 ways.
json gb200_moe(int ep) {
  return {{"name", "gb200"},
          {"cluster", {{"gpu", "GB200"}, {"nodes", 64}, {"gpus_per_node", 4}, {"intra_node", "nvl72"},
                       {"inter_node", {{"fabric", "fat-tree"}, {"link", "ib-ndr400"}, {"nics_per_node", 4}}}}},
          {"model", {{"preset", "deepseek-moe-16b"}}},
          {"training", {{"seq_length", 4096}, {"global_batch_size", 512}, {"micro_batch_size", 1},
                        {"expert_model_parallel_size", ep}, {"zero_stage", 1}, {"precision", "bf16"}}}};
}

std::string first_error(const json& doc) {
  try {
    parse_scenario(doc, "s.json");
  } catch (const cs::InputError& e) {
    return e.messages().front();
  }
  return "";
}

// Whether every edge of the route from a to b is an NVLink edge (the pair shares a scale-up domain).
bool on_nvlink(const cs::topo::Cluster& c, int a, int b) {
  for (int e : c.route(a, b, 0))
    if (c.edges()[static_cast<std::size_t>(e)].kind != cs::topo::EdgeKind::nvlink) return false;
  return true;
}

}  // namespace

TEST_CASE("catalog: the 2025-26 GPUs carry their datasheet figures and capabilities", "[blackwell]") {
  using cs::models::find_gpu;
  for (const char* name : {"GB200", "GB300", "B200", "B300", "H800", "H20", "MI325X", "MI355X"}) REQUIRE(find_gpu(name) != nullptr);
  // GB200 NVL72 datasheet, rack totals with sparsity / 72 / 2: BF16 360 PF -> 2,500; FP4 1,440 PF -> 10,000.
  CHECK(find_gpu("GB200")->peak_tflops_bf16 == 2500);
  CHECK(find_gpu("GB200")->peak_tflops_fp4 == 10000);
  CHECK(find_gpu("GB200")->scaleup_domain_gpus == 72);
  CHECK(find_gpu("GB300")->peak_tflops_fp4 == 15000);
  CHECK(find_gpu("B200")->scaleup_domain_gpus == 8);
  CHECK(find_gpu("H800")->nvlink_gbps == 400);                    // the export part's NVLink
  CHECK(find_gpu("H800")->peak_tflops_bf16 == find_gpu("H100-SXM")->peak_tflops_bf16);
  CHECK_FALSE(find_gpu("H100-SXM")->has_block_scaled_mma());
  CHECK(find_gpu("MI355X")->has_block_scaled_mma());
  // Host path: PCIe lane rate x 16 x 0.80. Gen4 2 GB/s -> 25.6; Gen5 4 GB/s -> 51.2; Gen6 8 -> 102.4.
  CHECK(find_gpu("A100-80GB")->host_path_GBps() == Approx(25.6));
  CHECK(find_gpu("H100-SXM")->host_path_GBps() == Approx(51.2));
  CHECK(find_gpu("GB300")->host_path_GBps() == Approx(102.4));
}

TEST_CASE("NVL72 placement keeps an EP-32 group inside one rack", "[blackwell]") {
  const Scenario s = parse_scenario(gb200_moe(32), "s.json");
  // TP 1, EP 32: groups of 32 consecutive ranks. 72 = 2 x 32 + 8, so the job takes 64 GPUs of each rack.
  CHECK(placed_domain_gpus(s) == 64);
  CHECK(placement_note(s).find("uses 64 GPUs of each 72-GPU") != std::string::npos);
  const auto placed = make_cluster(s);
  const cs::topo::Cluster consecutive(s.cluster);
  // EP group 2 is ranks 64..95: in 72-GPU racks it straddles racks 0 and 1 (GPU 71 | 72).
  CHECK_FALSE(on_nvlink(consecutive, 64, 95));
  for (int g = 0; g < 256; g += 32)
    for (int r = g + 1; r < g + 32; ++r) REQUIRE(on_nvlink(*placed, g, r));
  CHECK_FALSE(on_nvlink(*placed, 63, 64));  // the next group is in the next rack
  // Groups that tile the rack, or one node, leave the domains as they are.
  CHECK(placed_domain_gpus(parse_scenario(gb200_moe(8), "s.json")) == 0);
}

TEST_CASE("an all-to-all across the compute trays of one NVL72 domain moves its whole buffer over NVLink", "[blackwell]") {
  // 8 GB200 on two trays of one rack, and 8 B200 in one HGX node: both 900 GB/s per direction NVLink5 at the
  // same efficiency, so NCCL's pairwise all-to-all of S bytes sends (n - 1) / n S from every GPU over NVLink
  // either way (topologies/link_catalog.cpp). Before session 16 the trays were taken for nodes inside the
  // domain: only the 3 peers of a GPU's own tray were counted, (k - 1) / n S with k = 4, half the traffic.
  json gb = gb200_moe(8);
  gb["cluster"]["nodes"] = 2;
  json b = gb;
  b["cluster"] = {{"gpu", "B200"}, {"nodes", 1}, {"gpus_per_node", 8}, {"intra_node", "nvswitch"}};
  const cs::topo::Cluster nvl72(parse_scenario(gb, "gb.json").cluster), hgx(parse_scenario(b, "b.json").cluster);
  const std::vector<int> gpus = {0, 1, 2, 3, 4, 5, 6, 7};
  const GroupGeometry g72 = group_geometry(nvl72, gpus), g8 = group_geometry(hgx, gpus);
  CHECK_FALSE(g72.multi_node);
  CHECK(g72.nodes == 1);
  CHECK(g72.per_node == 8);
  const double S = 256.0 * (1 << 20);
  bool ok72 = false, ok8 = false;
  const AlgorithmChoice a72 = estimate(cs::models::CollectiveKind::all_to_all, S, g72, NcclAlgorithm::pairwise, NcclProtocol::simple, &ok72);
  const AlgorithmChoice a8 = estimate(cs::models::CollectiveKind::all_to_all, S, g8, NcclAlgorithm::pairwise, NcclProtocol::simple, &ok8);
  REQUIRE(ok72);
  REQUIRE(ok8);
  CHECK(a72.duration == Approx(a8.duration).epsilon(1e-12));
  // The transfer: 7/8 S at 900 GB/s x 0.80, over the Simple protocol's efficiency.
  const double transfer = to_seconds(a72.duration - a72.latency);
  CHECK(transfer == Approx(7.0 / 8.0 * S / (900e9 * 0.80) / protocol_spec(NcclProtocol::simple).bandwidth_efficiency).epsilon(1e-6));
}

TEST_CASE("hardware that cannot be built is an input error", "[blackwell]") {
  json a100 = gb200_moe(8);
  a100["cluster"]["gpu"] = "A100-80GB";
  CHECK(first_error(a100) ==
        "s.json: cluster.intra_node: a 72-GPU scale-up domain (\"nvl72\") cannot hold A100-80GB: it is built into domains of at most 8 GPUs "
        "(cluster.gpu.scaleup_domain_gpus; NVL72 racks take GB200 / GB300 compute trays)");
  json five = gb200_moe(8);
  five["cluster"]["gpus_per_node"] = 5;
  five["cluster"]["nodes"] = 16;
  CHECK(first_error(five) ==
        "s.json: cluster.gpus_per_node: 5 GPUs per node do not tile the 72-GPU \"nvl72\" domain (a domain holds whole compute trays: 4 GPUs "
        "each in an NVL72)");
  json nvl36 = gb200_moe(8);
  nvl36["cluster"]["intra_node"] = {{"name", "nvl72"}, {"domain_gpus", 30}};
  CHECK(first_error(nvl36) ==
        "s.json: cluster.intra_node.domain_gpus: 30 is not a whole number of nodes (4 GPUs each): a scale-up domain holds whole compute trays");
  nvl36["cluster"]["intra_node"]["domain_gpus"] = 36;
  CHECK(parse_scenario(nvl36, "s.json").cluster.intra.domain_gpus == 36);
}

TEST_CASE("a NIC is capped by its GPU's PCIe host link, with a note", "[blackwell]") {
  json doc = {{"name", "a100"},
              {"cluster", {{"gpu", "A100-80GB"}, {"nodes", 2}, {"gpus_per_node", 8},
                           {"inter_node", {{"fabric", "fat-tree"}, {"link", "ib-ndr400"}}}}},
              {"model", {{"preset", "llama3-8b"}}},
              {"training", {{"seq_length", 4096}, {"global_batch_size", 16}, {"micro_batch_size", 1}}}};
  const Scenario s = parse_scenario(doc, "s.json");
  // NDR400 moves 48 GB/s; an A100's PCIe Gen4 x16 host link 2 x 16 x 0.80 = 25.6.
  CHECK(s.cluster.nic.payload_GBps() == Approx(25.6));
  REQUIRE(s.notes.size() == 1);
  CHECK(s.notes[0] == "the ib-ndr400 NIC moves 25.6 GB/s, not its 48: A100-80GB's PCIe Gen4 x16 host link caps GPUDirect RDMA (cluster.gpu.pcie_gen)");
  doc["cluster"]["gpu"] = "H100-SXM";  // Gen5: 51.2 > 48, untouched
  const Scenario h = parse_scenario(doc, "s.json");
  CHECK(h.cluster.nic.payload_GBps() == Approx(48.0));
  CHECK(h.notes.empty());
}

TEST_CASE("precision recipes: quantize traffic, saved inputs and GEMM time by hand", "[blackwell]") {
  using cs::models::quantize_bytes_per_element;
  using cs::models::saved_gemm_input_bytes;
  // Per element of a GEMM input (bf16 read = 2): per-tensor FP8 writes 1 (+1 transposed on Hopper).
  CHECK(quantize_bytes_per_element(PrecisionRecipe::fp8, true) == 4.0);
  CHECK(quantize_bytes_per_element(PrecisionRecipe::fp8_delayed, false) == 3.0);
  CHECK(quantize_bytes_per_element(PrecisionRecipe::fp8_current, false) == 5.0);          // + the amax read
  CHECK(quantize_bytes_per_element(PrecisionRecipe::fp8_blockwise, false) == 4.0625);     // 2+1+1+2x4/128
  CHECK(quantize_bytes_per_element(PrecisionRecipe::mxfp8, false) == 4.0625);             // 2+1+1+2x1/32
  CHECK(quantize_bytes_per_element(PrecisionRecipe::nvfp4, false) == 5.125);              // 2+2+0.5+0.5+2/16
  CHECK(quantize_bytes_per_element(PrecisionRecipe::bf16, true) == 0.0);
  CHECK(saved_gemm_input_bytes(PrecisionRecipe::mxfp8) == 1.03125);
  CHECK(saved_gemm_input_bytes(PrecisionRecipe::nvfp4) == 0.5625);

  // Activation memory of one Llama 3 8B layer (s 4096, b 1, no TP, no recompute) against bf16: the saved
  // inputs of QKV and FC1 (h wide) and of FC2 (f wide) shrink from 2 bytes to the recipe's g; the out-proj
  // input is stored as the fused attention kernel's bf16 output O (which it keeps anyway) plus the
  // quantized copy, so it adds g: (2h + f) x T x (g - 2) + h x T x g.
  json doc = {{"name", "m"},
              {"cluster", {{"gpu", "B200"}, {"nodes", 1}, {"gpus_per_node", 8}}},
              {"model", {{"preset", "llama3-8b"}}},
              {"training", {{"seq_length", 4096}, {"global_batch_size", 8}, {"micro_batch_size", 1}, {"precision", "bf16"}}}};
  const Scenario bf = parse_scenario(doc, "m.json");
  doc["training"]["precision"] = "mxfp8";
  const Scenario mx = parse_scenario(doc, "m.json");
  doc["training"]["precision"] = "nvfp4";
  const Scenario fp4 = parse_scenario(doc, "m.json");
  const double T = 4096, h = 4096, f = 14336;
  const double a_bf = cs::models::activation_bytes_per_layer(bf.model, bf.training, false);
  CHECK(cs::models::activation_bytes_per_layer(mx.model, mx.training, false) - a_bf == Approx((2 * h + f) * T * (1.03125 - 2) + h * T * 1.03125));
  CHECK(cs::models::activation_bytes_per_layer(fp4.model, fp4.training, false) - a_bf == Approx((2 * h + f) * T * (0.5625 - 2) + h * T * 0.5625));

  // GEMM time: the same big GEMM on B200 in FP8 (mxfp8) and FP4 (nvfp4) differs by the peaks' ratio,
  // 9,000 / 4,500 = 2, for its math; both use the bf16 efficiency times the same fp8/bf16 ratio.
  CHECK(mx.training.precision == cs::models::Dtype::fp8);
  CHECK(fp4.training.precision == cs::models::Dtype::fp4);
  const auto* b200 = cs::models::find_gpu("B200");
  CHECK(b200->peak_tflops(cs::models::Dtype::fp4) / b200->peak_tflops(cs::models::Dtype::fp8) == 2.0);
}

TEST_CASE("block-scaled recipes need block-scaled tensor cores", "[blackwell]") {
  json doc = {{"name", "m"},
              {"cluster", {{"gpu", "H100-SXM"}, {"nodes", 1}, {"gpus_per_node", 8}}},
              {"model", {{"preset", "llama3-8b"}}},
              {"training", {{"seq_length", 4096}, {"global_batch_size", 8}, {"micro_batch_size", 1}, {"precision", "mxfp8"}}}};
  CHECK(first_error(doc) ==
        "s.json: training.precision: \"mxfp8\" needs block-scaled tensor cores (Blackwell, MI355X; H100-SXM has none: "
        "cluster.gpu.peak_tflops_fp4 is 0)");
  doc["training"]["precision"] = "fp8_blockwise";  // DeepSeek-V3 ran it on H800
  CHECK(first_error(doc).empty());
  doc["cluster"]["gpu"] = "A100-80GB";
  CHECK(first_error(doc) == "s.json: training.precision: \"fp8_blockwise\" needs a GPU with fp8 tensor cores (A100-80GB has none)");
}

// cluster.power_limit_w (GpuSpec::clock_fraction). Oracle: dynamic power C V^2 f with V ~ f gives P ~ f^3, so
// under a cap the SM clock is (cap / tdp)^(1/3) of its own: 500 of 700 W -> cbrt(5/7) = 0.8939. A math-bound
// GEMM's time less the launch overhead is 1 / 0.8939 = 1.1187 times the uncapped; a memory-bound copy's is
// unchanged (HBM's clock is not lowered); the board draws the cap.
TEST_CASE("a power limit slows tensor math by the cube root of the cap, not memory, and draws the cap", "[blackwell]") {
  using namespace cs::models;
  GpuSpec capped = *find_gpu("H100-SXM");
  const GpuSpec full = capped;
  capped.power_limit_w = 500;
  CHECK(capped.clock_fraction() == Approx(std::cbrt(500.0 / 700.0)));
  CHECK(capped.clock_fraction() == Approx(0.8939).epsilon(1e-4));
  CHECK(capped.board_power_w() == 500);
  CHECK(full.clock_fraction() == 1.0);
  CHECK(full.board_power_w() == 700);

  const ComputeProfile& p = default_compute_profile();
  const double launch = p.launch_overhead_us * 1e-6;
  Op gemm;
  gemm.kind = OpKind::gemm;
  gemm.dtype = Dtype::bf16;
  gemm.gemm = {8192, 8192, 8192};
  gemm.flops = 2.0 * 8192.0 * 8192.0 * 8192.0;
  CHECK((op_time_s(gemm, capped, p) - launch) / (op_time_s(gemm, full, p) - launch) == Approx(std::cbrt(700.0 / 500.0)));
  Op copy;
  copy.kind = OpKind::memory_bound;
  copy.mem_kind = MemOpKind::copy;
  copy.bytes = 1e9;
  CHECK(op_time_s(copy, capped, p) == op_time_s(copy, full, p));

  json doc = {{"name", "h100"},
              {"cluster", {{"gpu", "H100-SXM"}, {"nodes", 1}, {"gpus_per_node", 8}, {"power_limit_w", 500}}},
              {"model", {{"preset", "llama3-8b"}}},
              {"training", {{"seq_length", 4096}, {"global_batch_size", 16}, {"micro_batch_size", 1}}}};
  const Scenario s = parse_scenario(doc, "s.json");
  CHECK(s.gpu.power_limit_w == 500);
  REQUIRE(s.notes.size() == 1);
  CHECK(s.notes[0] == "H100-SXM capped at 500 of 700 W (cluster.power_limit_w): tensor math at 0.894 of its clock, as (cap / board power)^(1/3); "
                      "memory-bound kernels unchanged; energy at the cap");
  doc["cluster"]["power_limit_w"] = 800;
  CHECK(first_error(doc) == "s.json: cluster.power_limit_w: 800 W is outside H100-SXM's range (175 to its board power, 700 W: a cap only lowers the "
                            "board power, and boards accept no less than about a quarter of it)");
  doc["cluster"]["power_limit_w"] = 100;
  CHECK(first_error(doc) == "s.json: cluster.power_limit_w: 100 W is outside H100-SXM's range (175 to its board power, 700 W: a cap only lowers the "
                            "board power, and boards accept no less than about a quarter of it)");
  doc["cluster"]["power_limit_w"] = 700;  // at the board power: no cap, no note
  CHECK(parse_scenario(doc, "s.json").notes.empty());
}
