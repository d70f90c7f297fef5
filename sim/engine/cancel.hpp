#pragma once
// Cancelling a simulation that is running: a front end (the GUI's Cancel, a superseding knob edit, Quit)
// sets a flag, and the simulation on the worker thread stops within milliseconds by throwing Cancelled,
// which unwinds the half-built graph and the executor's state, so all of their memory is freed.
//
// The flag reaches the simulation through a scope on the worker's thread (CancelScope, installed by
// sim::simulate) rather than through every builder's signature: the step builder creates the task graph
// itself, and the two loops that grow with a scenario's size poll it, TaskGraph::add_task (every 2^14
// tasks) and the executor's event loop (every event: one relaxed load, where one event of the flow network can take milliseconds). The scope is thread-local, so two simulations
// on two threads each see only their own flag; without a scope nothing is ever cancelled.
#include <atomic>
#include <stdexcept>

namespace cs::sim {

class Cancelled : public std::runtime_error {
 public:
  Cancelled() : std::runtime_error("simulation cancelled") {}
};

namespace detail {
inline thread_local const std::atomic<bool>* cancel_flag = nullptr;
}

// While alive, poll_cancel() on this thread throws Cancelled once *flag is true. Scopes nest.
class CancelScope {
 public:
  explicit CancelScope(const std::atomic<bool>* flag) : previous_(detail::cancel_flag) { detail::cancel_flag = flag; }
  ~CancelScope() { detail::cancel_flag = previous_; }
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

 private:
  const std::atomic<bool>* previous_;
};

// For a thread the caller does not run a scope on but whose whole life belongs to one cancellable job
// (a sweep's worker threads, started by sim/explore): polls `flag` from now until the thread ends.
inline void watch_cancel_on_this_thread(const std::atomic<bool>* flag) { detail::cancel_flag = flag; }

inline void poll_cancel() {
  const std::atomic<bool>* f = detail::cancel_flag;
  if (f != nullptr && f->load(std::memory_order_relaxed)) throw Cancelled();
}

}  // namespace cs::sim
