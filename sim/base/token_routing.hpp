#pragma once
// The routing of an MoE layer's tokens, as far as a token dispatcher's traffic depends on it. The
// workload (models/workload/transformer.cpp) attaches it to the expert-parallel all-to-alls of a
// dispatcher that sends each token once per destination node and once per destination rank (DeepEP,
// HybridEP); the network back-ends turn it into the bytes that cross the network and the scale-up fabric
// (sim/network/token_dispatch.hpp). Empty (experts 0): the all-to-all of every routed copy on its own,
// Megatron-Core's alltoall dispatcher.
#include <cstdint>

namespace cs::sim {

struct TokenRouting {
  std::int32_t experts = 0;     // routed experts, <= 65536 (0: every routed copy sent on its own)
  std::int32_t topk = 0;        // experts per token, <= experts
  std::int32_t groups = 0;      // group-limited routing: experts in `groups` equal groups (0 or 1: no limit)
  std::int32_t group_topk = 0;  // a token's experts come from at most this many groups
  bool per_node() const { return experts > 0; }
  // One word for the back-ends' memo keys (0 for the plain all-to-all): 17 bits each for the expert and
  // top-k counts, 15 for the group counts (groups <= experts / 2 when limiting: 2^15).
  std::uint64_t bits() const {
    return static_cast<std::uint64_t>(experts) | static_cast<std::uint64_t>(topk) << 17 |
           static_cast<std::uint64_t>(groups & 0x7fff) << 34 | static_cast<std::uint64_t>(group_topk & 0x7fff) << 49;
  }
  bool operator==(const TokenRouting&) const = default;
};

}  // namespace cs::sim
