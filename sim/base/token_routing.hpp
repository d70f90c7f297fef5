#pragma once
// The routing of an MoE layer's tokens, as far as a token dispatcher's traffic depends on it. The
// workload (models/workload/transformer.cpp) attaches it to the expert-parallel all-to-alls of a
// dispatcher that sends each token once per destination node and once per destination rank (DeepEP,
// HybridEP); the network back-ends turn it into the bytes that cross the network and the scale-up fabric
// (sim/network/token_dispatch.hpp). Empty (experts 0): the all-to-all of every routed copy on its own,
// Megatron-Core's alltoall dispatcher.
//
// One 64-bit word, so that a collective (sim/engine/task_graph.hpp CollectiveSpec, 10^7 of them in a large
// graph) carries it at no size: 17 bits each for the expert and top-k counts (at most 65,536, the scenario's
// limit), 15 for the two group counts (at most 32,767, checked where the scenario is read).
#include <cstdint>

namespace cs::sim {

class TokenRouting {
 public:
  static constexpr std::int32_t kMaxGroups = (1 << 15) - 1;
  TokenRouting() = default;
  // experts <= 65536, topk <= experts, groups and group_topk <= kMaxGroups (groups 0 or 1: no limit).
  TokenRouting(std::int32_t experts, std::int32_t topk, std::int32_t groups, std::int32_t group_topk)
      : bits_(static_cast<std::uint64_t>(experts) | static_cast<std::uint64_t>(topk) << 17 |
              static_cast<std::uint64_t>(groups) << 34 | static_cast<std::uint64_t>(group_topk) << 49) {}
  std::int32_t experts() const { return static_cast<std::int32_t>(bits_ & 0x1ffff); }
  std::int32_t topk() const { return static_cast<std::int32_t>(bits_ >> 17 & 0x1ffff); }
  std::int32_t groups() const { return static_cast<std::int32_t>(bits_ >> 34 & 0x7fff); }
  std::int32_t group_topk() const { return static_cast<std::int32_t>(bits_ >> 49 & 0x7fff); }
  bool per_node() const { return experts() > 0; }
  std::uint64_t bits() const { return bits_; }  // the back-ends' memo keys: 0 for the plain all-to-all
  bool operator==(const TokenRouting&) const = default;

 private:
  std::uint64_t bits_ = 0;
};

}  // namespace cs::sim
