// Closed-form collective times (analytical network back-end).
#include <catch2/catch.hpp>

#include "sim/collectives.hpp"

using namespace cs::sim;
using cs::models::CollectiveKind;

TEST_CASE("collectives: ring all-reduce time, worked by hand", "[sim]") {
  // 1 GiB over 8 ranks at a bus bandwidth of 100 GB/s per rank and 1 us per ring step:
  //   bytes each rank sends = 2 (n-1)/n S = 2 * 7/8 * 2^30 = 1,879,048,192
  //   t = launch 4 us + 2 (n-1) * 1 us + 1,879,048,192 / 100e9 s = 4 us + 14 us + 18,790.48192 us
  cs::topo::GroupLink link{cs::topo::Span::node, 100e9, 1e-6};
  const double S = 1073741824.0;
  const auto c = analytical_collective(CollectiveKind::all_reduce, S, 8, link);
  REQUIRE(c.bytes_sent_per_rank == Approx(1879048192.0));
  REQUIRE(to_seconds(c.duration) == Approx(4e-6 + 14e-6 + 1879048192.0 / 100e9).epsilon(1e-12));
  // The bus bandwidth nccl-tests would report approaches the link's 100 GB/s for large messages.
  const double busbw = S / to_seconds(c.duration) * busbw_factor(CollectiveKind::all_reduce, 8);
  REQUIRE(busbw == Approx(100e9).epsilon(0.002));
}

TEST_CASE("collectives: all-gather and reduce-scatter move half an all-reduce", "[sim]") {
  cs::topo::GroupLink link{cs::topo::Span::spine, 50e9, 0};
  const double S = 256e6;
  const auto ar = analytical_collective(CollectiveKind::all_reduce, S, 16, link);
  const auto ag = analytical_collective(CollectiveKind::all_gather, S, 16, link);
  const auto rs = analytical_collective(CollectiveKind::reduce_scatter, S, 16, link);
  REQUIRE(ag.bytes_sent_per_rank == Approx(S * 15 / 16));
  REQUIRE(rs.duration == ag.duration);
  // Without the per-step latency, all-reduce = reduce-scatter + all-gather, less one launch.
  REQUIRE(to_seconds(ar.duration) == Approx(to_seconds(ag.duration) + to_seconds(rs.duration) - kLaunchLatencySeconds));
}

TEST_CASE("collectives: a group of one moves nothing; send/recv is one hop", "[sim]") {
  cs::topo::GroupLink link{cs::topo::Span::leaf, 25e9, 2e-6};
  REQUIRE(analytical_collective(CollectiveKind::all_reduce, 1e9, 1, link).duration == 0);
  const auto p2p = analytical_collective(CollectiveKind::send_recv, 25e6, 2, link);
  REQUIRE(to_seconds(p2p.duration) == Approx(4e-6 + 2e-6 + 1e-3));
  REQUIRE(busbw_factor(CollectiveKind::send_recv, 2) == 1.0);
  REQUIRE(busbw_factor(CollectiveKind::all_to_all, 4) == Approx(0.75));
}
