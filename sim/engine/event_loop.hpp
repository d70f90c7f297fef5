#pragma once
// What the two executors (executor.cpp: a materialised task graph; template_executor.cpp: every rank off a
// per-stage template) share, so that they take the same steps in the same order: the event loop over the
// executor's own queue and the network back-end, and a kernel's rescaling under communication contention.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "sim/engine/cancel.hpp"
#include "sim/engine/comm_backend.hpp"
#include "sim/engine/event_queue.hpp"
#include "sim/engine/task_graph.hpp"
#include "sim/engine/time.hpp"

namespace cs::sim {

// The executors' own events are all "kernel done"; the tag carries the kernel's version so that a
// completion re-issued after a speed change makes the old one stale.
inline constexpr std::uint32_t kTagBits = 1;
inline constexpr std::uint32_t kComputeDone = 0;

// Runs to the end: at equal times the queue's events first, then the network's. Returns the events handled.
template <class Queue, class OnCompute, class OnCollective>
std::uint64_t run_events(Queue& queue, CommBackend& network, OnCompute on_compute_done, OnCollective on_collective_done) {
  std::uint64_t events = 0;
  std::vector<std::uint32_t> done;
  while (true) {
    const Time next_local = queue.next_time();
    const Time next_network = network.next_completion();
    if (next_local == kNever && next_network == kNever) break;
    ++events;
    poll_cancel();  // one relaxed load: an event of the flow network can take milliseconds
    if (next_network < next_local) {
      queue.advance_to(next_network);
      network.pop_completed(next_network, done);
      // The next one rides along, so that an executor can fetch its state while this one is handled.
      for (std::size_t i = 0; i < done.size(); ++i) on_collective_done(done[i], i + 1 < done.size() ? done[i + 1] : kNone);
      done.clear();
      continue;
    }
    const Event e = queue.pop();
    on_compute_done(e.target, e.tag >> kTagBits);
  }
  return events;
}

// A kernel's wall time for `remaining` work (picoseconds at full speed), slowed by `slowdown` or not.
inline Time wall_time(Time remaining, bool slowed, double slowdown) {
  return slowed ? static_cast<Time>(std::llround(static_cast<double>(remaining) * slowdown)) : remaining;
}
// The work done in `elapsed` wall time at that speed.
inline Time work_done(Time elapsed, bool slowed, double slowdown) {
  return slowed ? static_cast<Time>(std::llround(static_cast<double>(elapsed) / slowdown)) : elapsed;
}

// A running kernel's speed becomes `slowed` at `now`: its remaining work is brought up to now at the old
// speed. Returns whether its completion must be re-issued (the speed changed). R: a task (kNone: none),
// remaining, last_update, slowed.
template <class R>
bool set_speed(R& run, bool slowed, Time now, double slowdown) {
  if (run.task == kNone || slowed == run.slowed || slowdown == 1.0) {
    run.slowed = slowed;
    return false;
  }
  run.remaining = std::max<Time>(0, run.remaining - work_done(now - run.last_update, run.slowed, slowdown));
  run.last_update = now;
  run.slowed = slowed;
  return true;
}

}  // namespace cs::sim
