// Closed-form collective times of the NCCL algorithm model (sim/network/nccl_model.hpp), worked by hand.
#include <catch2/catch.hpp>

#include <algorithm>

#include "sim/network/nccl_model.hpp"

using namespace cs::sim;
using cs::models::CollectiveKind;

namespace {
GroupGeometry one_node(int n, double scaleup_Bps) {
  GroupGeometry g;
  g.ranks = n;
  g.nodes = 1;
  g.per_node = n;
  g.scaleup_Bps = scaleup_Bps;
  g.scaleup_line_Bps = scaleup_Bps / 0.8;
  return g;
}
AlgorithmChoice eval(CollectiveKind k, double S, const GroupGeometry& g, NcclAlgorithm a, NcclProtocol p) {
  bool ok = false;
  const auto c = estimate(k, S, g, a, p, &ok);
  REQUIRE(ok);
  return c;
}
}  // namespace

TEST_CASE("collectives: ring all-reduce time for a given size and bandwidth", "[sim]") {
  // 1 GiB all-reduce over 8 GPUs of one node, 100 GB/s per GPU, Simple protocol (launch 9 us, 3.5 us per
  // NVLink hop, full bandwidth):
  //   each rank sends 2 (n-1)/n S = 2 * 7/8 * 2^30 = 1,879,048,192 bytes, plus the pipeline fill: each of
  //   the 2 (n-1) = 14 steps moves one chunk of min(S/n, kRingPipelineChunkBytes) before the ring streams;
  //   latency = 9 us + 2 (n-1) * 3.5 us = 58 us (all 16 channels open at 1 GiB: no channel ramp).
  const double S = 1073741824.0;
  const auto c = eval(CollectiveKind::all_reduce, S, one_node(8, 100e9), NcclAlgorithm::ring, NcclProtocol::simple);
  REQUIRE(c.bytes_sent_per_rank == Approx(1879048192.0));
  const double fill = 14 * std::min(S / 8, kRingPipelineChunkBytes);
  REQUIRE(to_seconds(c.duration) == Approx(58e-6 + (1879048192.0 + fill) / 100e9).epsilon(1e-9));
  // nccl-tests would report busbw = S/t * 2(n-1)/n -> the link's 100 GB/s for large messages (less the
  // fill, 2.6% at 1 GiB).
  REQUIRE(S / to_seconds(c.duration) * busbw_factor(CollectiveKind::all_reduce, 8) == Approx(100e9).epsilon(0.03));
}

TEST_CASE("collectives: LL wins for small messages, Simple for large ones", "[sim]") {
  // 8 KiB: LL's latency 7 + 14 * 1.4 = 26.6 us beats Simple's 58 us although it halves the bandwidth;
  // 1 GiB: halving the bandwidth costs ~19 ms, so Simple.
  const auto g = one_node(8, 100e9);
  const auto small = choose_algorithm(CollectiveKind::all_reduce, 8192, g);
  REQUIRE(small.protocol == NcclProtocol::ll);
  REQUIRE(to_seconds(small.latency) == Approx(26.6e-6));
  const auto large = choose_algorithm(CollectiveKind::all_reduce, 1073741824.0, g);
  REQUIRE(large.protocol == NcclProtocol::simple);
}

TEST_CASE("collectives: all-gather and reduce-scatter move half an all-reduce's bytes", "[sim]") {
  const auto g = one_node(16, 50e9);
  const double S = 256e6;
  const auto ag = eval(CollectiveKind::all_gather, S, g, NcclAlgorithm::ring, NcclProtocol::simple);
  const auto rs = eval(CollectiveKind::reduce_scatter, S, g, NcclAlgorithm::ring, NcclProtocol::simple);
  const auto ar = eval(CollectiveKind::all_reduce, S, g, NcclAlgorithm::ring, NcclProtocol::simple);
  REQUIRE(ag.bytes_sent_per_rank == Approx(S * 15 / 16));
  REQUIRE(rs.duration == ag.duration);
  REQUIRE(ar.bytes_sent_per_rank == Approx(2 * ag.bytes_sent_per_rank));
}

TEST_CASE("collectives: NVLS needs in-switch reduction and beats the ring where it exists", "[sim]") {
  // 8 H100s: ring busbw = B_up = 360 GB/s; NVLS algbw = 450 * 0.61 = 274.5 GB/s -> busbw 480 GB/s.
  auto g = one_node(8, 360e9);
  g.scaleup_line_Bps = 450e9;
  bool ok = true;
  estimate(CollectiveKind::all_reduce, 1e9, g, NcclAlgorithm::nvls, NcclProtocol::simple, &ok);
  REQUIRE_FALSE(ok);  // g.nvls is false (e.g. an A100 node)
  g.nvls = true;
  const auto c = choose_algorithm(CollectiveKind::all_reduce, 4e9, g);
  REQUIRE(c.algorithm == NcclAlgorithm::nvls);
  const double busbw = 4e9 / to_seconds(c.duration) * busbw_factor(CollectiveKind::all_reduce, 8);
  REQUIRE(busbw == Approx(480e9).epsilon(0.01));
}

TEST_CASE("collectives: across nodes the ring is bound by the group's NIC share", "[sim]") {
  // 2 nodes x 8 GPUs, 4 HDR NICs per node (24 GB/s payload each) -> B_net = 4 * 24 / 8 = 12 GB/s per GPU;
  // a 16-rank ring uses 8 channels, each GPU sends f S / 8 over the network: t ~ f S / (8 * 12 GB/s), so
  // busbw -> 96 GB/s (nccl-tests on such machines: 86-91 GB/s).
  GroupGeometry g;
  g.ranks = 16, g.nodes = 2, g.per_node = 8, g.multi_node = true;
  g.scaleup_Bps = 240e9, g.scaleup_line_Bps = 300e9, g.network_Bps = 12e9;
  const double S = 8e9;
  const auto c = eval(CollectiveKind::all_reduce, S, g, NcclAlgorithm::ring, NcclProtocol::simple);
  REQUIRE(S / to_seconds(c.duration) * busbw_factor(CollectiveKind::all_reduce, 16) == Approx(96e9).epsilon(0.01));
  REQUIRE(busbw_factor(CollectiveKind::send_recv, 2) == 1.0);
  REQUIRE(busbw_factor(CollectiveKind::all_to_all, 4) == Approx(0.75));
}
