#pragma once
// The 4-ary heap the event queues keep (event_queue.cpp, template_executor.cpp): half the levels of a binary
// heap, and a node's children side by side in memory, which is what a pop pays for once the heap outgrows
// the cache (one pending kernel per rank: 10^4-10^5 events at 16,384 GPUs). With unique keys the pop order
// is any heap's.
#include <algorithm>
#include <cstddef>
#include <vector>

namespace cs::sim {

// A 4-ary heap in a vector (children of i: 4i + 1 .. 4i + 4) ordered by `later`; `set(i, e)` stores e at i
// (and may note where it went). Entry i takes e, sifting it up or down.
template <class T, class Later, class Set>
void heap4_place(std::vector<T>& heap, std::size_t i, const T& e, Later later, Set set) {
  while (i > 0 && later(heap[(i - 1) / 4], e)) {
    const std::size_t parent = (i - 1) / 4;
    set(i, heap[parent]);
    i = parent;
  }
  const std::size_t n = heap.size();
  while (true) {
    const std::size_t first = 4 * i + 1;
    if (first >= n) break;
    std::size_t best = first;
    if (first + 4 <= n) {
      // Four children: a tournament of selects (the earlier index on ties, as the loop below), which the
      // compiler can keep free of branches that the predictor loses half the time.
      const std::size_t a = later(heap[first], heap[first + 1]) ? first + 1 : first;
      const std::size_t b = later(heap[first + 2], heap[first + 3]) ? first + 3 : first + 2;
      best = later(heap[a], heap[b]) ? b : a;
    } else {
      for (std::size_t c = first + 1; c < n; ++c)
        if (later(heap[best], heap[c])) best = c;
    }
    if (!later(e, heap[best])) break;
    set(i, heap[best]);
    i = best;
  }
  set(i, e);
}

// Removes entry i: the last entry takes its place (heap4_place sifts it either way).
template <class T, class Later, class Set>
void heap4_erase(std::vector<T>& heap, std::size_t i, Later later, Set set) {
  const T last = heap.back();
  heap.pop_back();
  if (i < heap.size()) heap4_place(heap, i, last, later, set);
}

}  // namespace cs::sim
