#include "sim/engine/event_queue.hpp"

#include <algorithm>

#include "sim/base/check.hpp"

namespace cs::sim {

void EventQueue::schedule(Time at, std::uint32_t target, std::uint32_t tag) {
  CS_CHECK(at >= now_);
  const Event e{at, next_seq_++, target, tag};
  if (at == now_) {
    fifo_.push_back(e);
    return;
  }
  // A 4-ary heap (children of i: 4i + 1 .. 4i + 4): half the levels of a binary heap, and a node's children
  // side by side in memory, which is what a pop pays for once the heap outgrows the cache (one pending
  // kernel per stream: 10^4-10^5 events at 16,384 GPUs). Keys (time, seq) are unique, so the pop order is
  // the binary heap's.
  std::size_t i = heap_.size();
  heap_.push_back(e);
  while (i > 0) {
    const std::size_t parent = (i - 1) / 4;
    if (!later(heap_[parent], e)) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

void EventQueue::pop_top() {
  const Event last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n == 0) return;
  std::size_t i = 0;
  while (true) {
    const std::size_t first = 4 * i + 1;
    if (first >= n) break;
    std::size_t best = first;
    const std::size_t end = std::min(first + 4, n);
    for (std::size_t c = first + 1; c < end; ++c)
      if (later(heap_[best], heap_[c])) best = c;
    if (!later(last, heap_[best])) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = last;
}

Time EventQueue::next_time() const {
  if (fifo_head_ < fifo_.size()) return now_;
  return heap_.empty() ? kNever : heap_.front().time;
}

void EventQueue::advance_to(Time t) {
  CS_CHECK(t >= now_ && t <= next_time());
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
