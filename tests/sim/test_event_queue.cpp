// The event queue against a naive reference: a std::multimap keyed by (time, insertion order), on random
// schedules with a fixed seed. Both must pop the same events in the same order, including zero-delay
// events scheduled at the current time (the FIFO path) interleaved with heap events at the same time.
#include <catch2/catch.hpp>

#include <map>
#include <random>

#include "sim/engine/event_queue.hpp"

using namespace cs::sim;

TEST_CASE("event queue: pops in (time, insertion) order like a sorted multimap", "[sim]") {
  std::mt19937_64 rng(12345);
  for (int round = 0; round < 50; ++round) {
    EventQueue q;
    std::multimap<std::pair<Time, std::uint64_t>, std::uint32_t> ref;
    std::uint64_t seq = 0;
    std::uint32_t next_target = 0;
    auto push = [&](Time at) {
      q.schedule(at, next_target, 0);
      ref.emplace(std::make_pair(at, seq++), next_target++);
    };
    for (int i = 0; i < 20; ++i) push(static_cast<Time>(rng() % 50));
    while (!ref.empty()) {
      REQUIRE_FALSE(q.empty());
      REQUIRE(q.next_time() == ref.begin()->first.first);
      const Event e = q.pop();
      REQUIRE(e.time == ref.begin()->first.first);
      REQUIRE(e.target == ref.begin()->second);
      ref.erase(ref.begin());
      REQUIRE(q.now() == e.time);
      // Schedule a few more: some at the current time (FIFO path), some later.
      const int extra = static_cast<int>(rng() % 3);
      for (int k = 0; k < extra && next_target < 400; ++k) push(e.time + static_cast<Time>(rng() % 3 == 0 ? 0 : rng() % 20));
    }
    REQUIRE(q.empty());
    REQUIRE(q.next_time() == kNever);
  }
}

TEST_CASE("event queue: equal times fire first-in first-out", "[sim]") {
  EventQueue q;
  q.schedule(10, 1, 0);
  q.schedule(5, 2, 0);
  q.schedule(10, 3, 0);
  q.schedule(5, 4, 0);
  std::vector<std::uint32_t> order;
  while (!q.empty()) {
    const Event e = q.pop();
    order.push_back(e.target);
    if (e.target == 2) q.schedule(5, 5, 0);  // zero delay: after 4, which was scheduled before it
  }
  REQUIRE(order == std::vector<std::uint32_t>{2, 4, 5, 1, 3});
}

TEST_CASE("event queue: advance_to moves the clock without an event", "[sim]") {
  EventQueue q;
  q.schedule(100, 1, 0);
  q.advance_to(40);
  REQUIRE(q.now() == 40);
  q.schedule(40, 2, 0);  // now a zero-delay event
  REQUIRE(q.pop().target == 2);
  REQUIRE(q.pop().target == 1);
  REQUIRE(q.now() == 100);
}
