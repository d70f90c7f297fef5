#pragma once
// The traffic of an MoE token dispatcher that sends a token once per destination node and once per
// destination rank, as DeepEP's and HybridEP's do (Megatron-Core's flex dispatcher), against the alltoall
// dispatcher's one copy per routed expert.
//
// DeepEP (deepseek-ai/DeepEP v1.2.1 = 9af0e0d, deep_ep/buffer.py get_dispatch_layout and
// internode_dispatch): the layout counts num_tokens_per_rdma_rank (tokens bound for each node) and
// is_token_in_rank (a token bound for a rank once, whatever number of its experts the rank holds); the
// internode kernels send each token once over RDMA to the GPU of the same local index on each destination
// node, which forwards it over NVLink to the node's destination ranks; the intranode kernels send it once
// per destination rank. Its README measures the normal kernels at 43-58 GB/s "RDMA bottleneck bandwidth"
// on 50 GB/s CX7 NICs (EP 16-64, the DeepSeek-V3 setting): the network carries the deduplicated bytes at
// about line rate, as priced here.
//
// With balanced routing (every expert equally likely) a token's k experts are k distinct experts drawn
// uniformly; with group-limited routing (Megatron-Core moe_router_num_groups / moe_router_group_topk,
// megatron/core/transformer/moe/moe_utils.py group_limited_topk @ NVIDIA/Megatron-LM d98e8a64) first
// group_topk of the equal expert groups, uniformly, then k experts among theirs. A unit holding expert
// range [lo, hi) (a rank: E / n contiguous experts, Megatron's local_expert_indices; a node: its ranks')
// receives the token with probability P(unit), computed exactly below. Per rank and per token (h bytes a
// copy, S = T k h the routed copies):
//   network: one copy per remote destination node, sum over nodes of P(node) x (N - 1) / N
//            (by symmetry a sender's own node is any of the N), over k copies: share of S;
//   scale-up: one copy per destination rank that is not the receiving (entry) GPU of its node, each
//            rank being its node's entry for 1 / per_node of the senders: sum of P(rank) (per_node - 1) /
//            per_node, over k.
#include "sim/base/collective_kind.hpp"
#include "sim/base/token_routing.hpp"

namespace cs::sim {

// Negative shares (the default): no per-node dispatch, the pairwise exchange of every routed copy.
struct DispatchShares {
  double network = -1;  // bytes a rank sends to other nodes, over the all-to-all's S (T k h)
  double scaleup = -1;  // bytes a rank sends over the scale-up fabric (its own and forwarded), over S
  bool per_node() const { return network >= 0; }
  bool operator==(const DispatchShares&) const = default;
};

// P(a token routed by `r` picks an expert in [lo, hi)), 0 <= lo < hi <= r.experts().
double dispatch_hit_probability(const TokenRouting& r, int lo, int hi);

// The shares of a group of `ranks` = nodes x per_node ranks (per_node consecutive ranks a node, ranks
// dividing r.experts()). r.per_node() must hold.
DispatchShares dispatch_shares(const TokenRouting& r, int ranks, int nodes, int per_node);

}  // namespace cs::sim
