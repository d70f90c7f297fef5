// The max-min solver (sim/network/maxmin.hpp) on worked examples: hand-computed shares and completion times.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "sim/network/maxmin.hpp"

using namespace cs::sim;

namespace {

constexpr double B = 100e9;  // 100 GB/s
constexpr double kGB = 1e9;

std::uint32_t add(MaxMinSolver& s, std::vector<int> links, double bytes, std::uint32_t owner = 0) {
  return s.add_flow(links, bytes, owner);
}

// Pops every completion in order; returns (time, owner) pairs.
std::vector<std::pair<Time, std::uint32_t>> drain(MaxMinSolver& s) {
  std::vector<std::pair<Time, std::uint32_t>> out;
  std::vector<std::uint32_t> owners;
  for (Time t = s.next_finish(); t != kNever; t = s.next_finish()) {
    owners.clear();
    s.pop_finished(t, owners);
    for (auto o : owners) out.emplace_back(t, o);
    s.solve(t);
  }
  return out;
}

Time seconds(double s) { return from_seconds(s); }

}  // namespace

TEST_CASE("maxmin: one flow on one link gets the whole link", "[sim][maxmin]") {
  // 1 GB over 100 GB/s: rate B, done after 10 ms.
  MaxMinSolver s({B});
  const auto f = add(s, {0}, 1 * kGB);
  s.solve(0);
  REQUIRE(s.rate(f) == Approx(B));
  REQUIRE(s.next_finish() == seconds(0.01));
  const auto done = drain(s);
  REQUIRE(done.size() == 1);
  REQUIRE(s.link_bytes(0) == Approx(1 * kGB));
}

TEST_CASE("maxmin: two flows on one link share it equally", "[sim][maxmin]") {
  // 2 x 1 GB over 100 GB/s: B/2 each, both done after 20 ms (2 GB through the link).
  MaxMinSolver s({B});
  const auto a = add(s, {0}, 1 * kGB, 1), b = add(s, {0}, 1 * kGB, 2);
  s.solve(0);
  REQUIRE(s.rate(a) == Approx(B / 2));
  REQUIRE(s.rate(b) == Approx(B / 2));
  const auto done = drain(s);
  REQUIRE(done.size() == 2);
  REQUIRE(done[0].first == seconds(0.02));
  REQUIRE(done[1].first == seconds(0.02));
}

TEST_CASE("maxmin: a flow over a B and a B/2 link gets B/2, a flow alone on the B link the other B/2", "[sim][maxmin]") {
  // Link 0: B, link 1: B/2. Flow a crosses both, flow b only link 0.
  // Link 1's fair share B/2 (one flow) equals link 0's B/2 (two flows): a = B/2; link 0 has B/2 left for b.
  MaxMinSolver s({B, B / 2});
  const auto a = add(s, {0, 1}, 1 * kGB), b = add(s, {0}, 1 * kGB);
  s.solve(0);
  REQUIRE(s.rate(a) == Approx(B / 2));
  REQUIRE(s.rate(b) == Approx(B / 2));
  // With link 1 at B/4 instead: a is held to B/4 there, and b takes the 3B/4 that a leaves on link 0.
  MaxMinSolver s2({B, B / 4});
  const auto a2 = add(s2, {0, 1}, 1 * kGB), b2 = add(s2, {0}, 1 * kGB);
  s2.solve(0);
  REQUIRE(s2.rate(a2) == Approx(B / 4));
  REQUIRE(s2.rate(b2) == Approx(3 * B / 4));
}

TEST_CASE("maxmin: three flows with one bottleneck", "[sim][maxmin]") {
  // Link 0: 10 GB/s, link 1: 4 GB/s. f1 on {0, 1}, f2 on {1}, f3 on {0}.
  // Bottleneck: link 1, share 4/2 = 2 (< link 0's 10/2 = 5): f1 = f2 = 2 GB/s.
  // Link 0 then has 10 - 2 = 8 GB/s for f3 alone.
  MaxMinSolver s({10e9, 4e9});
  const auto f1 = add(s, {0, 1}, kGB), f2 = add(s, {1}, kGB), f3 = add(s, {0}, kGB);
  s.solve(0);
  REQUIRE(s.rate(f1) == Approx(2e9));
  REQUIRE(s.rate(f2) == Approx(2e9));
  REQUIRE(s.rate(f3) == Approx(8e9));
}

TEST_CASE("maxmin: when a flow finishes the one it shared with speeds up", "[sim][maxmin]") {
  // Link B; flow a of 0.5 GB, flow b of 1 GB, both start at 0 at B/2.
  //   a done at 0.5 GB / 50 GB/s = 10 ms; b has moved 0.5 GB, 0.5 GB left, now at B:
  //   b done at 10 ms + 0.5 GB / 100 GB/s = 15 ms.
  MaxMinSolver s({B});
  add(s, {0}, 0.5 * kGB, 1);
  const auto b = add(s, {0}, 1 * kGB, 2);
  s.solve(0);
  REQUIRE(s.next_finish() == seconds(0.010));
  std::vector<std::uint32_t> owners;
  s.pop_finished(seconds(0.010), owners);
  REQUIRE(owners == std::vector<std::uint32_t>{1});
  s.solve(seconds(0.010));
  REQUIRE(s.rate(b) == Approx(B));
  REQUIRE(s.next_finish() == seconds(0.015));
  REQUIRE(drain(s).back().first == seconds(0.015));
  REQUIRE(s.link_bytes(0) == Approx(1.5 * kGB));
}

TEST_CASE("maxmin: a flow in an untouched component keeps its rate and completion time", "[sim][maxmin]") {
  // Flow x alone on link 2 (B): done at 1 GB / B = 10 ms whatever happens on links 0 and 1.
  MaxMinSolver s({B, B, B});
  const auto x = add(s, {2}, 1 * kGB, 9);
  s.solve(0);
  const Time x_done = s.next_finish();
  REQUIRE(x_done == seconds(0.01));
  // Traffic on links 0 and 1 starting and finishing before x is done.
  add(s, {0, 1}, 0.1 * kGB, 1);
  add(s, {0}, 0.2 * kGB, 2);
  s.solve(seconds(0.001));
  REQUIRE(s.rate(x) == Approx(B));
  const auto done = drain(s);
  REQUIRE(done.size() == 3);
  REQUIRE(done.back().second == 9);
  REQUIRE(done.back().first == x_done);
}

TEST_CASE("maxmin: a flow with an empty path completes at once", "[sim][maxmin]") {
  MaxMinSolver s({B});
  add(s, {}, 1 * kGB, 3);
  s.solve(seconds(0.5));
  REQUIRE(s.next_finish() == seconds(0.5));
}

TEST_CASE("maxmin: only the payload share of a flow counts on its links", "[sim][maxmin]") {
  MaxMinSolver s({B});
  s.add_flow(std::vector<int>{0}, 1 * kGB, 0, 0.25);
  REQUIRE(s.flows_on(0) == 1);
  s.solve(0);
  drain(s);
  REQUIRE(s.flows_on(0) == 0);
  REQUIRE(s.link_bytes(0) == Approx(0.25 * kGB));
}

TEST_CASE("maxmin: rates are max-min fair and feasible on random flows, and deterministic", "[sim][maxmin]") {
  // 40 links, 200 flows over 1..4 random links, fixed seed. Every link's rates sum to at most its
  // capacity, and every flow has a saturated link on which no flow is faster (the max-min certificate).
  // Solving the same input twice gives the same completion sequence, bit for bit.
  auto run = [](std::vector<std::pair<Time, std::uint32_t>>* seq, bool check) {
    std::mt19937_64 rng(42);
    std::vector<double> caps;
    for (int l = 0; l < 40; ++l) caps.push_back(1e9 * (1 + static_cast<double>(rng() % 100)));
    MaxMinSolver s(caps);
    std::vector<std::vector<int>> paths;
    for (std::uint32_t f = 0; f < 200; ++f) {
      std::vector<int> p;
      const int len = 1 + static_cast<int>(rng() % 4);
      for (int i = 0; i < len; ++i) {
        const int l = static_cast<int>(rng() % 40);
        if (std::find(p.begin(), p.end(), l) == p.end()) p.push_back(l);
      }
      paths.push_back(p);
      s.add_flow(p, 1e6 * (1 + static_cast<double>(rng() % 1000)), f);
    }
    s.solve(0);
    if (check) {
      std::vector<double> used(40, 0);
      for (std::uint32_t f = 0; f < 200; ++f)
        for (int l : paths[f]) used[static_cast<std::size_t>(l)] += s.rate(f);
      for (int l = 0; l < 40; ++l) REQUIRE(used[static_cast<std::size_t>(l)] <= caps[static_cast<std::size_t>(l)] * (1 + 1e-9));
      for (std::uint32_t f = 0; f < 200; ++f) {
        bool certified = false;
        for (int l : paths[f]) {
          if (used[static_cast<std::size_t>(l)] < caps[static_cast<std::size_t>(l)] * (1 - 1e-9)) continue;
          double fastest = 0;
          for (std::uint32_t g = 0; g < 200; ++g)
            if (std::find(paths[g].begin(), paths[g].end(), l) != paths[g].end()) fastest = std::max(fastest, s.rate(g));
          if (s.rate(f) >= fastest * (1 - 1e-9)) certified = true;
        }
        REQUIRE(certified);
      }
    }
    *seq = drain(s);
  };
  std::vector<std::pair<Time, std::uint32_t>> a, b;
  run(&a, true);
  run(&b, false);
  REQUIRE(a.size() == 200);
  REQUIRE(a == b);
}

TEST_CASE("maxmin: a flow on a kept path is the flow on those links, and lone flows list themselves when joined", "[sim][maxmin]") {
  // The same random traffic twice: once every flow with add_flow, once the flows of a few fixed paths
  // with keep_path / add_flow_on. Flows start over time (some alone on their links, later joined), so
  // the unlisted lone flows and their listing are exercised; completions, times and link bytes must be
  // equal bit for bit.
  const auto run = [](bool kept, std::vector<std::pair<Time, std::uint32_t>>& done, std::vector<double>& bytes) {
    std::mt19937_64 rng(11);
    std::vector<double> caps;
    for (int l = 0; l < 24; ++l) caps.push_back(1e9 * (1 + static_cast<double>(rng() % 8)));
    MaxMinSolver s(caps);
    std::vector<std::vector<int>> fixed;
    for (int p = 0; p < 6; ++p) {
      std::vector<int> path;
      for (int i = 0; i < 1 + p % 4; ++i) {
        const int l = static_cast<int>(rng() % 24);
        if (std::find(path.begin(), path.end(), l) == path.end()) path.push_back(l);
      }
      fixed.push_back(path);
    }
    std::vector<std::uint32_t> ids;
    if (kept)
      for (const auto& p : fixed) ids.push_back(s.keep_path(p));
    std::vector<std::uint32_t> owners;
    Time now = 0;
    for (std::uint32_t f = 0; f < 300; ++f) {
      const auto p = static_cast<std::size_t>(rng() % fixed.size());
      const double size = 1e6 * (1 + static_cast<double>(rng() % 50));
      if (kept) s.add_flow_on(ids[p], size, f);
      else s.add_flow(fixed[p], size, f);
      s.solve(now);
      // Let some time pass, completing what is due meanwhile.
      const Time until = now + static_cast<Time>(rng() % 3'000'000'000ULL);
      while (s.next_finish() <= until) {
        now = s.next_finish();
        owners.clear();
        s.pop_finished(now, owners);
        for (auto o : owners) done.emplace_back(now, o);
        s.solve(now);
      }
      now = until;
    }
    for (const auto& d : drain(s)) done.push_back(d);
    for (int l = 0; l < 24; ++l) bytes.push_back(s.link_bytes(l));
  };
  std::vector<std::pair<Time, std::uint32_t>> a, b;
  std::vector<double> bytes_a, bytes_b;
  run(false, a, bytes_a);
  run(true, b, bytes_b);
  REQUIRE(a.size() == 300);
  REQUIRE(a == b);
  REQUIRE(bytes_a == bytes_b);
}
