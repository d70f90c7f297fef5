#include "sim/engine/event_queue.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "sim/base/check.hpp"
#include "sim/engine/heap4.hpp"

namespace cs::sim {

namespace {

// An event before now: a time that wrapped past the engine's range (now + a duration over INT64_MAX
// picoseconds, 106 days) or came from a duration that was no number. Thrown rather than aborted: the
// inputs' bounds should have kept it out, and the user gets a line, not a crash (issue 32).
[[noreturn]] void time_out_of_range(Time at, Time now) {
  throw std::runtime_error("event queue: an event at " + std::to_string(at) + " ps is before now (" + std::to_string(now) +
                           " ps): simulated time passed the engine's 106 days or a duration was not a number");
}

}  // namespace

void EventQueue::schedule(Time at, std::uint32_t target, std::uint32_t tag) {
  if (at < now_) time_out_of_range(at, now_);
  const Event e{at, next_seq_++, target, tag};
  if (at == now_) {
    fifo_.push_back(e);
    return;
  }
  heap_.push_back(e);
  heap4_place(heap_, heap_.size() - 1, e, [](const Event& a, const Event& b) { return later(a, b); }, [this](std::size_t i, const Event& v) { heap_[i] = v; });
}

void EventQueue::pop_top() {
  heap4_erase(heap_, 0, [](const Event& a, const Event& b) { return later(a, b); }, [this](std::size_t i, const Event& v) { heap_[i] = v; });
}

Time EventQueue::next_time() const {
  if (fifo_head_ < fifo_.size()) return now_;
  return heap_.empty() ? kNever : heap_.front().time;
}

void EventQueue::advance_to(Time t) {
  if (t < now_) time_out_of_range(t, now_);
  CS_CHECK(t <= next_time());
  now_ = t;
}

Event EventQueue::pop() {
  CS_CHECK(!empty());
  const bool fifo_has = fifo_head_ < fifo_.size();
  const bool take_fifo = fifo_has && (heap_.empty() || later(heap_.front(), fifo_[fifo_head_]));
  Event e;
  if (take_fifo) {
    e = fifo_[fifo_head_++];
    if (fifo_head_ == fifo_.size()) {  // drained: reuse the storage
      fifo_.clear();
      fifo_head_ = 0;
    }
  } else {
    e = heap_.front();
    pop_top();
  }
  if (e.time != now_) {
    // Time moves on: anything left in the FIFO was scheduled at the old now, which is impossible
    // because FIFO events sort before any later heap event.
    CS_CHECK(fifo_head_ == fifo_.size());
    now_ = e.time;
  }
  return e;
}

}  // namespace cs::sim
