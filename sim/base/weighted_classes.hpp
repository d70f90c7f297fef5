#pragma once
// Values grouped into classes of equal values, in the order of first appearance, each with the total
// weight of the values in it. A mean over real ranks summed class by class adds the same numbers in the
// same order whether a class's ranks were simulated once (one value weighing the class size) or one by
// one (equal values weighing 1 each): what makes batched and one-by-one reports byte-identical
// (sim/step/orbits.hpp; the report in simulation.cpp, the analytical back-end's per-GPU bytes).
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace cs::sim {

// Hash: a function object from T to std::uint64_t; equal values must hash equal.
template <class T, class Hash>
class WeightedClasses {
 public:
  void add(const T& value, std::uint64_t weight) {
    total_ += weight;
    auto& candidates = by_hash_[Hash{}(value)];
    for (std::size_t i : candidates)
      if (values_[i] == value) {
        weights_[i] += weight;
        return;
      }
    candidates.push_back(values_.size());
    values_.push_back(value);
    weights_.push_back(weight);
  }
  std::size_t size() const { return values_.size(); }
  const T& value(std::size_t i) const { return values_[i]; }
  std::uint64_t weight(std::size_t i) const { return weights_[i]; }
  std::uint64_t total() const { return total_; }

 private:
  std::vector<T> values_;
  std::vector<std::uint64_t> weights_;
  std::unordered_map<std::uint64_t, std::vector<std::size_t>> by_hash_;
  std::uint64_t total_ = 0;
};

// FNV-1a over 64-bit words, for the Hash of a WeightedClasses.
struct Fnv1a {
  std::uint64_t h = 1469598103934665603ULL;
  void mix(std::uint64_t v) { h = (h ^ v) * 1099511628211ULL; }
};

}  // namespace cs::sim
