#pragma once
// Slots of a vector reused after their owner is done (flows of the max-min solver, active collectives of
// the flow backend): a finished entry's index goes on a free list, and the next one takes it back before
// the vector grows, so a long run allocates only up to its peak of live entries and ids stay small.
#include <cstdint>
#include <vector>

namespace cs::sim {

// The index of a reusable slot of `items`: the last freed one, else a new default-constructed entry.
template <class T, class A>
std::uint32_t take_slot(std::vector<std::uint32_t>& free, std::vector<T, A>& items) {
  if (!free.empty()) {
    const std::uint32_t slot = free.back();
    free.pop_back();
    return slot;
  }
  items.emplace_back();
  return static_cast<std::uint32_t>(items.size() - 1);
}

}  // namespace cs::sim
