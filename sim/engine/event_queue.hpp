#pragma once
// The event queue: a (4-ary) heap ordered by (time, insertion sequence), plus a FIFO for events scheduled
// at the current time (after OMNeT++'s cEventHeap). In a task graph most events are zero-delay
// ("dependency done, start the next task now"); those skip the heap entirely.
//
// Ordering: events fire in increasing time; among equal times, in the order they were scheduled. Events
// in the FIFO were all scheduled at `now` after every heap event already present, so comparing the heap
// top's (time, seq) with the FIFO front's decides which is next.
//
// An event is two 32-bit words interpreted by the owner (what happened, to which index). Nothing is
// allocated per event once the vectors have grown; cancelling is the owner's business (it keeps a version
// per target and ignores stale events, as ns-3 marks cancelled events instead of removing them).
#include <cstdint>
#include <vector>

#include "sim/engine/time.hpp"

namespace cs::sim {

// (time, seq) order, the later one first: how events fire, and how anything keyed like them (a bucket of
// events by its first one, template_executor.cpp) is ordered.
template <class T>
bool later_in_time(const T& a, const T& b) {
  return a.time != b.time ? a.time > b.time : a.seq > b.seq;
}

struct Event {
  Time time;
  std::uint64_t seq;
  std::uint32_t target;
  std::uint32_t tag;
};

class EventQueue {
 public:
  void schedule(Time at, std::uint32_t target, std::uint32_t tag);
  bool empty() const { return heap_.empty() && fifo_head_ == fifo_.size(); }
  std::size_t size() const { return heap_.size() + (fifo_.size() - fifo_head_); }
  Time now() const { return now_; }
  // Removes and returns the next event and advances now() to its time. Precondition: !empty().
  Event pop();
  // Time of the next event (kNever when empty).
  Time next_time() const;
  // Moves the clock forward to `t` without an event (another event source, e.g. the network, is next).
  // Precondition: now() <= t <= next_time().
  void advance_to(Time t);
  void reserve(std::size_t n) { heap_.reserve(n); fifo_.reserve(n); }

 private:
  static bool later(const Event& a, const Event& b) { return later_in_time(a, b); }
  void pop_top();  // removes heap_.front()
  std::vector<Event> heap_;
  std::vector<Event> fifo_;
  std::size_t fifo_head_ = 0;
  std::uint64_t next_seq_ = 0;
  Time now_ = 0;
};

}  // namespace cs::sim
