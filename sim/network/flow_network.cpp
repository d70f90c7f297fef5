#include "sim/network/flow_network.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <span>

#include "sim/base/check.hpp"
#include "sim/engine/heap4.hpp"
#include "sim/network/free_slots.hpp"

namespace cs::sim {

using models::CollectiveKind;

namespace {

std::vector<double> link_capacities(const topo::Cluster& cluster) {
  std::vector<double> caps;
  caps.reserve(cluster.edges().size());
  for (const auto& e : cluster.edges()) caps.push_back(e.bandwidth_Bps);
  return caps;
}

// The GPU that carries channel ch of a multi-node collective on node `node` of `nodes` (each node's GPUs
// of the group, k of them used): its local GPU ch, beside the channel's NIC.
int channel_head(std::span<const std::vector<int>> nodes, int k, int node, int ch) {
  return nodes[static_cast<std::size_t>(node)][static_cast<std::size_t>(ch % k)];
}

}  // namespace

FlowNetwork::FlowNetwork(const CollectiveTable& graph, const topo::Cluster& cluster, FlowNetworkOptions options)
    : graph_(graph),
      cluster_(cluster),
      options_(std::move(options)),
      solver_(std::make_unique<MaxMinSolver>(link_capacities(cluster))),
      groups_(graph.num_groups()),
      node_groups_(cluster) {
  route_.reserve(static_cast<std::size_t>(cluster.max_route_edges()));
  probe_.reserve(static_cast<std::size_t>(cluster.max_route_edges()));
  climbs_.reserve(cluster.edges().size());
  for (const auto& e : cluster.edges()) climbs_.push_back(cluster.switch_level(e.dst) >= 1);
}

double FlowNetwork::ring_sent(const CollectiveSpec& c, int n, const AlgorithmChoice& choice, bool multi_node) const {
  return ring_pipeline_bytes(c.kind, c.bytes, n, options_.calibration.ring_chunk_bytes(c.kind, multi_node, choice.protocol),
                             geometry(c.group).ring_channels);
}

bool FlowNetwork::start_cached_ring(const CollectiveSpec& c, const AlgorithmChoice& choice, std::uint32_t slot) {
  // A ring inside one switched node whose channel's links are known (add_lockstep_ring): the one solver
  // flow expand() and launch_phase() would add, without building its edges (tensor parallelism: most of
  // the 10^7 collectives of a step at 16,384 GPUs). Uncalibrated only (calibration rescales edge by edge).
  const GroupGeometry& geo = geometry(c.group);
  const RingLinks& r = groups_[c.group].ring;
  if (choice.algorithm != NcclAlgorithm::ring || geo.multi_node || !geo.switched || options_.calibration.any() ||
      r.edges != static_cast<std::uint32_t>(geo.ranks))  // edges 0: not cached
    return false;
  const int n = geo.ranks;
  const double sent = ring_sent(c, n, choice, false);
  const double bytes = sent / protocol_spec(choice.protocol).bandwidth_efficiency;
  if (bytes <= 0) return false;
  solver_->add_flow_on(r.path, bytes, slot, busbw_factor(c.kind, n) * c.bytes / sent);
  active_[slot].outstanding = 1;
  flows_started_ += static_cast<std::uint64_t>(n);
  return true;
}

bool FlowNetwork::start_send(const CollectiveSpec& c, const AlgorithmChoice& choice, std::uint32_t slot) {
  // A send between two GPUs (pipeline parallelism: 2 * 10^6 a step at 16,384 GPUs) whose group has no
  // mirror to expand: the one flow expand() and launch_phase() would add, routed and identified as they
  // do (channel 0 of its collective), without building a phase. Uncalibrated only (calibration rescales
  // the flow's bytes in expand()).
  const GroupState& gs = groups_[c.group];
  if (choice.algorithm != NcclAlgorithm::p2p || options_.calibration.any() || !gs.alone || gs.first_gpu < 0) return false;
  const double bytes = c.bytes / protocol_spec(choice.protocol).bandwidth_efficiency;
  if (bytes <= 0) return false;
  Active& a = active_[slot];
  route_least_loaded(c.reversed ? gs.second_gpu : gs.first_gpu, c.reversed ? gs.first_gpu : gs.second_gpu,
                     static_cast<std::uint64_t>(a.collective) << 20);
  if (route_.empty()) return true;  // both ends one GPU: nothing to move
  solver_->add_flow(route_, bytes, slot);
  a.outstanding = 1;
  ++flows_started_;
  return true;
}

std::vector<FlowNetwork::FlowSpec> FlowNetwork::spare_phase() const {
  if (spare_phases_.empty()) return {};
  std::vector<FlowSpec> v = std::move(spare_phases_.back());
  spare_phases_.pop_back();
  return v;
}

void FlowNetwork::recycle_phase(std::vector<FlowSpec>&& phase) const {
  phase.clear();
  spare_phases_.push_back(std::move(phase));
}

void FlowNetwork::add_ring(const std::vector<int>& order, double bytes_per_edge, std::vector<FlowSpec>& out) {
  const int m = static_cast<int>(order.size());
  for (int i = 0; i < m; ++i) out.push_back({order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>((i + 1) % m)], bytes_per_edge});
}

// Three phases, one after another: reduce-scatter inside nodes, all-reduce of S/k across nodes among
// GPUs of equal local index, all-gather inside nodes.
void FlowNetwork::add_hierarchical_phases(std::span<const std::vector<int>> nodes, int k, double S, double e,
                                          std::vector<std::vector<FlowSpec>>& phases) const {
  const double kk = k;
  std::vector<FlowSpec> intra_rs, inter, intra_ag;
  for (const auto& local : nodes) add_ring(local, (kk - 1) / kk * S / e, intra_rs);
  const int N = static_cast<int>(nodes.size());
  for (int j = 0; j < k; ++j) {
    std::vector<int>& order = order_;
    order.clear();
    for (const auto& local : nodes) order.push_back(local[static_cast<std::size_t>(j)]);
    add_ring(order, 2.0 * (N - 1) / N * (S / kk) / e, inter);
  }
  intra_ag = intra_rs;
  phases.back() = std::move(intra_rs);
  phases.push_back(std::move(inter));
  phases.push_back(std::move(intra_ag));
}

void FlowNetwork::apply_calibration(const CollectiveSpec& c, const AlgorithmChoice& choice, bool multi_node,
                                    std::vector<std::vector<FlowSpec>>& phases, std::size_t first_phase) const {
  const auto p = static_cast<std::size_t>(choice.protocol);
  const ScopeConstants& up = options_.calibration.at(c.kind, CommScope::intra_node);
  const ScopeConstants& net = options_.calibration.at(c.kind, CommScope::inter_node);
  for (std::size_t ph = first_phase; ph < phases.size(); ++ph)
    for (FlowSpec& f : phases[ph]) {
      const bool across = f.src >= 0 && f.dst >= 0 && cluster_.node_of_gpu(f.src) != cluster_.node_of_gpu(f.dst);
      const ScopeConstants& sc = across && multi_node ? net : up;
      if (!sc.calibrated) continue;
      f.bytes /= sc.bandwidth_scale[p];
      f.payload *= sc.bandwidth_scale[p];
    }
}

// An all-to-all's flows, `S` bytes a rank at the protocol's efficiency `e`: S / n to every peer, or, for a
// per-node token dispatch (token_dispatch.hpp), each GPU's network share to the GPU of its local index on every
// other node and the node's GPUs exchanging their scale-up share (their own tokens and those they forward), all
// at once. `nodes` is empty for a group inside one node.
void FlowNetwork::add_pairwise_flows(const std::vector<int>& gpus, std::span<const std::vector<int>> nodes, int k, double S,
                                     double e, const DispatchShares& dispatch, std::vector<FlowSpec>& flows) {
  const int n = static_cast<int>(gpus.size());
  const int N = static_cast<int>(nodes.size());
  if (!dispatch.per_node() || N <= 1) {
    const double each = !dispatch.per_node() ? S / n / e : S * dispatch.scaleup / (n - 1) / e;
    for (int a : gpus)
      for (int b : gpus)
        if (a != b) flows.push_back({a, b, each});
    return;
  }
  auto gpu = [&](int node, int i) { return nodes[static_cast<std::size_t>(node)][static_cast<std::size_t>(i)]; };
  for (int x = 0; x < N; ++x)
    for (int i = 0; i < k; ++i) {
      for (int y = 0; y < N; ++y)
        if (y != x) flows.push_back({gpu(x, i), gpu(y, i), S * dispatch.network / (N - 1) / e});
      for (int j = 0; j < k; ++j)
        if (j != i) flows.push_back({gpu(x, i), gpu(x, j), S * dispatch.scaleup / (k - 1) / e});
    }
}

void FlowNetwork::expand(const CollectiveSpec& c, std::uint32_t group, const AlgorithmChoice& choice,
                         const DispatchShares& dispatch, std::vector<std::vector<FlowSpec>>& phases) const {
  const std::vector<int>& gpus = graph_.group(group);
  const int n = static_cast<int>(gpus.size());
  const double e = protocol_spec(choice.protocol).bandwidth_efficiency;
  const double S = c.bytes;
  // A ring, send or pairwise exchange inside one node needs no per-node view (the common case: tensor
  // parallelism, 10^7 collectives a step at 16,384 GPUs).
  const bool multi_node = geometry(c.group).multi_node;
  const bool per_node = multi_node || !(choice.algorithm == NcclAlgorithm::ring || choice.algorithm == NcclAlgorithm::p2p ||
                                        choice.algorithm == NcclAlgorithm::pairwise);
  const std::span<const std::vector<int>> nodes = per_node ? node_groups_.of(gpus) : std::span<const std::vector<int>>();
  std::size_t k_min = gpus.size();
  for (const auto& local : nodes) k_min = std::min(k_min, local.size());
  const int k = static_cast<int>(k_min);
  // Channel ch's head on a node: its local GPU ch (the GPU beside the channel's NIC).
  auto head = [&](int node, int ch) { return channel_head(nodes, k, node, ch); };
  // Channel ch's chain inside a node, from its head through the node's GPUs, `bytes` each way per edge.
  auto chain = [&](int node, int ch, double bytes, std::vector<FlowSpec>& out) {
    const auto& local = nodes[static_cast<std::size_t>(node)];
    for (int i = 0; i + 1 < k; ++i) {
      const int a = local[static_cast<std::size_t>((ch + i) % k)], b = local[static_cast<std::size_t>((ch + i + 1) % k)];
      out.push_back({b, a, bytes});
      out.push_back({a, b, bytes});
    }
  };
  // NVLS inside the nodes: each GPU writes S into the switch and receives the reduced S back; the switch
  // reduces at a fraction kNvlsEfficiency of line rate, so the flows are scaled from the link's payload
  // capacity to that.
  auto nvls = [&](std::vector<FlowSpec>& out) {
    const double scale = cluster_.spec().intra.efficiency / kNvlsEfficiency;
    const double sent = nvls_pipeline_bytes(S);
    for (int g : gpus) {
      out.push_back({g, -1, sent * scale / e, S / (sent * scale)});
      out.push_back({-1, g, sent * scale / e, S / (sent * scale)});
    }
  };
  const std::size_t first_phase = phases.size();
  auto& flows = phases.emplace_back(spare_phase());
  double payload = 1.0;  // share of a flow's bytes that is data on the wire (the rest is pipeline fill)
  switch (choice.algorithm) {
    case NcclAlgorithm::ring: {
      // Every ring edge carries what its sender sends, pipeline fill included (nccl_model.hpp).
      const double sent = ring_sent(c, n, choice, multi_node);
      payload = busbw_factor(c.kind, n) * S / sent;
      if (!multi_node) {
        const std::size_t first = flows.size();
        add_ring(gpus, sent / e, flows);
        flows[first].lockstep = static_cast<std::uint32_t>(flows.size() - first);
        flows[first].group = group;
        break;
      }
      // One channel per local GPU; channel ch enters and leaves each node through a rotated local order.
      for (int ch = 0; ch < k; ++ch) {
        std::vector<int>& order = order_;
        order.clear();
        for (const auto& local : nodes)
          for (int i = 0; i < k; ++i) order.push_back(local[static_cast<std::size_t>((i + ch) % k)]);
        add_ring(order, sent / k / e, flows);
      }
      break;
    }
    case NcclAlgorithm::tree: {
      // Per channel (one per local GPU) and per tree (two, each half the data): a chain inside each node
      // from its leader, and NCCL's double binary tree over the nodes' leaders (nccl_model.hpp). Data
      // flows up and down each edge.
      const int N = static_cast<int>(nodes.size());
      const double part = S / (2.0 * k) / e;
      for (int ch = 0; ch < k; ++ch)
        for (int t = 0; t < 2; ++t)
          for (int node = 0; node < N; ++node) {
            chain(node, ch, part, flows);
            const int parent = double_binary_tree_parents(N, node)[static_cast<std::size_t>(t)];
            if (parent < 0) continue;
            flows.push_back({head(node, ch), head(parent, ch), part});
            flows.push_back({head(parent, ch), head(node, ch), part});
          }
      break;
    }
    case NcclAlgorithm::nvls: {
      nvls(flows);
      // Across nodes on a SHARP fabric: each GPU's S/k share through SHARP too.
      if (multi_node) add_sharp_flows(nodes, k, S / k / e, flows);
      break;
    }
    case NcclAlgorithm::collnet_direct:
    case NcclAlgorithm::collnet_chain:
    case NcclAlgorithm::nvls_tree: {
      // In-network / in-switch reduction across nodes (nccl_model.hpp). Channel ch's head on each node is
      // its local GPU ch (the GPU beside the channel's NIC); it carries the channel's S/k share.
      const int N = static_cast<int>(nodes.size());
      const double share = S / k / e;
      for (int node = 0; node < N; ++node) {
        const auto& local = nodes[static_cast<std::size_t>(node)];
        if (choice.algorithm == NcclAlgorithm::collnet_chain) {
          // Per channel a chain from the head through the node's GPUs: S/k up it and S/k down it.
          for (int ch = 0; ch < k; ++ch) chain(node, ch, share, flows);
        } else if (choice.algorithm == NcclAlgorithm::collnet_direct) {
          // Reduce-scatter to the heads and all-gather from them, directly over the switch: S/k each way.
          for (int i = 0; i < k; ++i)
            for (int j = 0; j < k; ++j)
              if (i != j) flows.push_back({local[static_cast<std::size_t>(i)], local[static_cast<std::size_t>(j)], 2 * share});
        }
      }
      if (choice.algorithm == NcclAlgorithm::nvls_tree) {
        // NVLS inside each node (as for one node), then the heads' double binary trees between the nodes.
        nvls(flows);
        for (int ch = 0; ch < k; ++ch)
          for (int t = 0; t < 2; ++t)
            for (int node = 0; node < N; ++node) {
              const int parent = double_binary_tree_parents(N, node)[static_cast<std::size_t>(t)];
              if (parent < 0) continue;
              flows.push_back({head(node, ch), head(parent, ch), share / 2});
              flows.push_back({head(parent, ch), head(node, ch), share / 2});
            }
        break;
      }
      add_sharp_flows(nodes, k, share, flows);
      break;
    }
    case NcclAlgorithm::hierarchical: {
      add_hierarchical_phases(nodes, k, S, e, phases);
      break;
    }
    case NcclAlgorithm::pairwise: {
      add_pairwise_flows(gpus, nodes, k, S, e, dispatch, flows);
      break;
    }
    case NcclAlgorithm::p2p: {
      if (n == 2) {
        const int src = c.reversed ? gpus[1] : gpus[0], dst = c.reversed ? gpus[0] : gpus[1];
        flows.push_back({src, dst, S / e});
      } else {
        add_ring(gpus, S / e, flows);  // ring shift: every GPU sends S to the next (context parallelism)
      }
      break;
    }
  }
  if (payload != 1.0)
    for (FlowSpec& f : phases.back()) f.payload = payload;
  if (options_.calibration.any()) apply_calibration(c, choice, multi_node, phases, first_phase);
}

void FlowNetwork::add_sharp_flows(std::span<const std::vector<int>> nodes, int k, double share,
                                  std::vector<FlowSpec>& flows) const {
  // SHARP (cluster.inter_node.sharp): per channel ch, every node's head (local GPU ch) sends its S/k share
  // up to its leaf and receives the reduced share from it, once each way; the leaves reduce what is under
  // them and, where the group spans several leaves, each other leaf sends one reduced stream to the
  // aggregation root (the leaf of node 0's head) and gets one back, over the spine (and core) between.
  const int N = static_cast<int>(nodes.size());
  auto head = [&](int node, int ch) { return channel_head(nodes, k, node, ch); };
  using Seg = FlowSpec::Segment;
  for (int ch = 0; ch < k; ++ch) {
    const int root = head(0, ch);
    std::vector<int> leaves_seen;
    for (int node = 0; node < N; ++node) {
      const int h = head(node, ch);
      const int peer = node == 0 ? head(1, ch) : root;
      flows.push_back({h, peer, share, 1.0, Seg::to_leaf});
      flows.push_back({peer, h, share, 1.0, Seg::from_leaf});
      if (node == 0) continue;
      const int leaf = cluster_.leaf_of_node(cluster_.node_of_gpu(h));
      if (leaf == cluster_.leaf_of_node(cluster_.node_of_gpu(root)) ||
          std::find(leaves_seen.begin(), leaves_seen.end(), leaf) != leaves_seen.end())
        continue;
      leaves_seen.push_back(leaf);
      flows.push_back({h, root, share, 1.0, Seg::between_leaves});
      flows.push_back({root, h, share, 1.0, Seg::between_leaves});
    }
  }
}

bool FlowNetwork::cut_route(FlowSpec::Segment segment) {
  if (segment == FlowSpec::Segment::whole) return !route_.empty();
  const auto& edges = cluster_.edges();
  auto is_leaf = [&](int v) { return cluster_.switch_level(v) == 0; };  // a first-level switch (a tree's leaf)
  std::size_t first = route_.size(), last = route_.size();  // first edge into a leaf, last edge out of one
  for (std::size_t i = 0; i < route_.size(); ++i) {
    const auto& e = edges[static_cast<std::size_t>(route_[i])];
    if (first == route_.size() && is_leaf(e.dst)) first = i;
    if (is_leaf(e.src)) last = i;
  }
  CS_CHECK(first < route_.size() && last < route_.size());
  std::size_t begin = 0, end = route_.size();
  if (segment == FlowSpec::Segment::to_leaf) end = first + 1;
  if (segment == FlowSpec::Segment::from_leaf) begin = last;
  if (segment == FlowSpec::Segment::between_leaves) begin = first + 1, end = last;
  if (begin >= end) {
    route_.clear();
    return false;
  }
  route_.erase(route_.begin() + static_cast<std::ptrdiff_t>(end), route_.end());
  route_.erase(route_.begin(), route_.begin() + static_cast<std::ptrdiff_t>(begin));
  return true;
}

void FlowNetwork::start(std::uint32_t collective, Time now) {
  const CollectiveSpec c = graph_.collective(collective);
  Shape& shape = shape_of(c.group);
  const GroupGeometry& geo = shape.geometry;
  // The options (forced algorithm, calibration) are fixed for this network: the memo's key is the rest.
  const auto kind = static_cast<std::uint32_t>(c.kind);
  const auto bits = std::bit_cast<std::uint64_t>(c.bytes);
  const std::uint64_t routing = c.routing.bits();
  const ChoiceMemo* memo = memo_find(shape, kind, bits, routing);
  if (!memo) {
    const GroupGeometry routed = with_dispatch(geo, c.kind, c.routing);
    const AlgorithmChoice* chosen = &choice_store_.emplace_back(
        choose_algorithm(c.kind, c.bytes, routed, options_.forced_algorithm, options_.calibration.any() ? &options_.calibration : nullptr));
    shape.memo.push_back({kind, bits, routing, chosen, routed.dispatch});
    memo = &shape.memo.back();
  }
  const AlgorithmChoice choice = *memo->choice;
  const DispatchShares dispatch = memo->dispatch;

  const std::uint32_t slot = take_slot(free_slots_, active_);
  Active& a = active_[slot];
  a.collective = collective;
  a.outstanding = 0;
  a.latency = choice.latency;
  a.phases.clear();
  if (geo.ranks >= 2 && c.bytes > 0 && !start_cached_ring(c, choice, slot) && !start_send(c, choice, slot)) {
    // The group itself, and under symmetry every mirrored group when the traffic leaves the node.
    const auto& mirrors = graph_.mirrors(c.group);
    std::vector<std::vector<FlowSpec>>& phases = mirror_phases_;
    for (auto& p : phases) recycle_phase(std::move(p));
    phases.clear();
    // On a PCIe node the mirrored groups share the switch up-links and the inter-socket link: expand them too.
    if ((geo.multi_node || !geo.switched) && mirrors.size() > 1) {
      for (std::uint32_t m : mirrors) expand(c, m, choice, dispatch, phases);
      // expand() appended each mirror's phases; merge phase i of every mirror into one phase.
      const std::size_t per = phases.size() / mirrors.size();
      for (std::size_t i = 0; i < per; ++i) {
        std::vector<FlowSpec> merged = spare_phase();
        for (std::size_t m = 0; m < mirrors.size(); ++m)
          merged.insert(merged.end(), phases[m * per + i].begin(), phases[m * per + i].end());
        a.phases.push_back(std::move(merged));
      }
    } else {
      expand(c, c.group, choice, dispatch, a.phases);
    }
    std::reverse(a.phases.begin(), a.phases.end());  // expand() appends in run order; back() runs first
    launch_phase(slot, now);
  }
  if (a.outstanding == 0) {
    push_done(now, a.latency, collective);
    free_slots_.push_back(slot);
    return;
  }
  solver_->solve(now);
}

FlowNetwork::Shape& FlowNetwork::shape_of(std::uint32_t group) {
  GroupState& gs = groups_[group];
  if (gs.shape != kNone) return shapes_[gs.shape];
  const std::vector<int>& gpus = graph_.group(group);
  if (gpus.size() == 2) gs.first_gpu = gpus[0], gs.second_gpu = gpus[1];
  gs.alone = graph_.mirrors(group).size() == 1;
  GroupGeometry geo = group_geometry(cluster_, gpus);
  const std::uint64_t h = (static_cast<std::uint64_t>(geo.ranks) << 32) ^ (static_cast<std::uint64_t>(geo.nodes) << 8) ^
                          static_cast<std::uint64_t>(geo.per_node);
  for (auto [it, end] = shape_index_.equal_range(h); it != end; ++it)
    if (shapes_[it->second].geometry == geo) {
      gs.shape = it->second;
      return shapes_[gs.shape];
    }
  gs.shape = static_cast<std::uint32_t>(shapes_.size());
  shapes_.push_back({std::move(geo), {}});
  shape_index_.emplace(h, gs.shape);
  return shapes_.back();
}

const FlowNetwork::ChoiceMemo* FlowNetwork::memo_find(const Shape& shape, std::uint32_t kind, std::uint64_t bits,
                                                      std::uint64_t routing) {
  for (const ChoiceMemo& m : shape.memo)
    if (m.kind == kind && m.bytes_bits == bits && m.routing == routing) return &m;
  return nullptr;
}

const AlgorithmChoice& FlowNetwork::choice(std::uint32_t collective) const {
  // The memo of start(): nothing kept per collective (10^7 of them a step at 16,384 GPUs).
  const CollectiveSpec c = graph_.collective(collective);
  const std::uint32_t shape = groups_[c.group].shape;
  CS_CHECK(shape != kNone);  // started
  const ChoiceMemo* memo = memo_find(shapes_[shape], static_cast<std::uint32_t>(c.kind), std::bit_cast<std::uint64_t>(c.bytes),
                                    c.routing.bits());
  CS_CHECK(memo != nullptr);
  return *memo->choice;
}

void FlowNetwork::launch_phase(std::uint32_t slot, Time now) {
  Active& a = active_[slot];
  while (!a.phases.empty() && a.outstanding == 0) {
    std::vector<FlowSpec> flows = std::move(a.phases.back());
    a.phases.pop_back();
    std::uint64_t channel = 0;
    for (std::size_t i = 0; i < flows.size(); ++i) {
      const FlowSpec& f = flows[i];
      if (f.bytes <= 0) continue;
      if (f.lockstep > 1) {
        a.outstanding += add_lockstep_ring(flows, i, slot, channel, a.collective);
        i += f.lockstep - 1;
        continue;
      }
      const std::uint64_t flow_id = (static_cast<std::uint64_t>(a.collective) << 20) ^ channel++;
      if (f.dst < 0 || f.src < 0) {
        // NVLS: the GPU's link into (or out of) the switch, taken from a route to another GPU of the node.
        const int g = f.src < 0 ? f.dst : f.src;
        const int other = g % cluster_.spec().gpus_per_node == 0 ? g + 1 : g - 1;
        cluster_.route(f.src < 0 ? other : g, f.src < 0 ? g : other, flow_id, route_);
        CS_CHECK(!route_.empty());
        const int link = f.src < 0 ? route_.back() : route_.front();
        solver_->add_flow(std::span<const int>(&link, 1), f.bytes, slot, f.payload);
      } else {
        route_least_loaded(f.src, f.dst, flow_id);
        if (!cut_route(f.segment)) continue;
        solver_->add_flow(route_, f.bytes, slot, f.payload);
      }
      ++a.outstanding;
      ++flows_started_;
    }
    recycle_phase(std::move(flows));
  }
  (void)now;
}

// A ring channel inside one node as one flow. NCCL's ring runs in lockstep: a rank forwards a chunk only
// once it has received it and the next rank has a free slot for it (NCCL_STEPS slots a connection: the
// primitives' waitPeer on the peer's head / tail counters, src/device/prims_simple.h, NVIDIA/nccl
// v2.21.5-1), so every edge of a channel moves at the pace of its slowest one, a few chunks apart. Every
// edge carries the same bytes; inside a node each crosses its own GPU ports. One solver flow over the
// union of the edges' links, at the rate of its narrowest, is then what the edges as separate flows
// compute whenever they share no link (no link twice on the union, every edge's narrowest link as fast as
// any other's: checked here, else the edges go as separate flows): the same rate, completion and bytes on
// every link, for a fraction of the work. With other traffic on one of its links the whole channel slows
// to that edge's share, as the real ring does, where separate flows would let the other edges run ahead.
std::uint32_t FlowNetwork::add_lockstep_ring(const std::vector<FlowSpec>& flows, std::size_t i, std::uint32_t slot,
                                             std::uint64_t& channel, std::uint32_t collective) {
  const FlowSpec& head = flows[i];
  flows_started_ += head.lockstep;
  ring_path_.clear();
  ring_edge_end_.clear();
  if (link_in_ring_.empty()) link_in_ring_.assign(static_cast<std::size_t>(solver_->num_links()), 0);
  bool exact = true;
  double narrowest = -1;
  for (std::size_t j = i; j < i + head.lockstep; ++j) {
    const FlowSpec& f = flows[j];
    CS_CHECK(f.src >= 0 && f.dst >= 0 && f.bytes == head.bytes && f.payload == head.payload && f.segment == FlowSpec::Segment::whole);
    route_least_loaded(f.src, f.dst, (static_cast<std::uint64_t>(collective) << 20) ^ channel++);
    CS_CHECK(!route_.empty());
    double edge_min = std::numeric_limits<double>::infinity();
    for (int l : route_) {
      auto& mark = link_in_ring_[static_cast<std::size_t>(l)];
      exact = exact && !mark;
      mark = 1;
      edge_min = std::min(edge_min, solver_->capacity(l));
      ring_path_.push_back(l);
    }
    ring_edge_end_.push_back(static_cast<std::uint32_t>(ring_path_.size()));
    exact = exact && (narrowest < 0 || edge_min == narrowest);
    narrowest = edge_min;
  }
  for (int l : ring_path_) link_in_ring_[static_cast<std::size_t>(l)] = 0;
  // A built cluster routes inside a node by the two GPUs alone (no ECMP, no load): a group's channel has
  // the same links every time, kept once for start_cached_ring (a calibrated network comes here on every
  // start and finds them kept).
  RingLinks& r = groups_[head.group].ring;
  if (exact && !cluster_.from_file() && r.edges == 0) r = {solver_->keep_path(ring_path_), head.lockstep};
  if (exact) {
    solver_->add_flow(ring_path_, head.bytes, slot, head.payload);
    return 1;
  }
  // Not exact: each edge as its own flow, on the route it was given above (routes inside a node do not
  // depend on the load, so routing them one by one would give the same).
  std::uint32_t begin = 0;
  for (std::uint32_t end : ring_edge_end_) {
    solver_->add_flow(std::span<const int>(ring_path_.data() + begin, end - begin), head.bytes, slot, head.payload);
    begin = end;
  }
  return head.lockstep;
}

bool FlowNetwork::climbs_above_first_level(const std::vector<int>& path) const {
  for (int l : path)
    if (climbs_[static_cast<std::size_t>(l)]) return true;
  return false;
}

void FlowNetwork::route_least_loaded(int src, int dst, std::uint64_t flow_id) {
  // Up to kRouteProbes candidate paths (the cluster's ECMP choice under different flow ids); keep the one
  // whose busiest link would give the flow the largest fair share, capacity / (flows on it + 1); ties go
  // to the earlier probe. A probe whose links carry nothing yet ends the search; a path that climbs above
  // no first-level fabric switch (inside a node, under one first-level switch) has no alternative and is
  // taken at once.
  double best = -1;
  for (std::uint64_t probe = 0; probe < kRouteProbes; ++probe) {
    cluster_.route(src, dst, flow_id + (probe << 40), probe == 0 ? route_ : probe_);
    const std::vector<int>& path = probe == 0 ? route_ : probe_;
    if (probe == 0 && !climbs_above_first_level(route_)) break;  // inside a node or under one first-level switch: one path
    double share = std::numeric_limits<double>::infinity();
    bool idle = true;
    for (int l : path) {
      const std::size_t n = solver_->flows_on(l);
      idle = idle && n == 0;
      share = std::min(share, solver_->capacity(l) / static_cast<double>(n + 1));
    }
    if (probe == 0 || share > best) {
      if (probe > 0) route_.swap(probe_);
      best = share;
    }
    if (idle) break;
  }
}

void FlowNetwork::push_done(Time now, Time latency, std::uint32_t collective) {
  if (latency != last_latency_) {
    const auto [it, added] = lane_of_.try_emplace(latency, static_cast<std::uint32_t>(lanes_.size()));
    if (added) lanes_.emplace_back();
    last_latency_ = latency;
    last_lane_ = it->second;
  }
  Lane& lane = lanes_[last_lane_];
  const Done d{now + latency, done_seq_++, collective};
  CS_CHECK(lane.head == lane.waits.size() || lane.waits.back().time <= d.time);  // now never goes back
  if (lane.head == lane.waits.size()) {  // an empty lane: its first wait joins the heap
    lane.waits.clear();
    lane.head = 0;
    const LaneHead h{d.time, d.seq, last_lane_};
    heads_.push_back(h);
    heap4_place(heads_, heads_.size() - 1, h, head_later, [this](std::size_t k, const LaneHead& v) { heads_[k] = v; });
  } else if (2 * lane.head > lane.waits.size()) {  // a lane that never empties: ended waits go once they are
    // the majority (the moves are fewer than the waits popped since: amortised O(1) a wait)
    lane.waits.erase(lane.waits.begin(), lane.waits.begin() + static_cast<std::ptrdiff_t>(lane.head));
    lane.head = 0;
  }
  lane.waits.push_back(d);
}

Time FlowNetwork::next_completion() const {
  const Time flows = solver_->next_finish();
  const Time done = heads_.empty() ? kNever : heads_.front().time;
  return std::min(flows, done);
}

void FlowNetwork::pop_completed(Time now, std::vector<std::uint32_t>& done) {
  if (solver_->next_finish() == now) {
    finished_.clear();
    solver_->pop_finished(now, finished_);
    for (std::uint32_t slot : finished_) __builtin_prefetch(&active_[slot]);
    for (std::uint32_t slot : finished_) {
      Active& a = active_[slot];
      CS_CHECK(a.outstanding > 0);
      if (--a.outstanding > 0) continue;
      launch_phase(slot, now);
      if (a.outstanding == 0) {
        push_done(now, a.latency, a.collective);
        free_slots_.push_back(slot);
      }
    }
    solver_->solve(now);
  }
  const auto set = [this](std::size_t k, const LaneHead& v) { heads_[k] = v; };
  while (!heads_.empty() && heads_.front().time == now) {
    const std::uint32_t l = heads_.front().lane;
    Lane& lane = lanes_[l];
    done.push_back(lane.waits[lane.head].collective);
    if (++lane.head < lane.waits.size()) {  // the lane's next wait takes its place
      const Done& next = lane.waits[lane.head];
      heap4_place(heads_, 0, LaneHead{next.time, next.seq, l}, head_later, set);
    } else {
      heap4_erase(heads_, 0, head_later, set);
    }
  }
}

std::vector<LinkLoad> FlowNetwork::link_loads() const {
  // Per class of link: mean bytes over the links that carried traffic, and the busiest link.
  struct Class {
    const char* name;
    double bytes = 0;
    int used = 0;
    double capacity = 0;
    int busiest = -1;
    double busiest_util = -1;
  };
  Class classes[4] = {{"scale-up links (mean of used)"}, {"PCIe links (mean of used)"}, {"network links (mean of used)"},
                      {"inter-socket links (mean of used)"}};
  const auto& edges = cluster_.edges();
  for (std::size_t l = 0; l < edges.size(); ++l) {
    const double b = solver_->link_bytes(static_cast<int>(l));
    if (b <= 0) continue;
    Class& k = classes[static_cast<int>(edges[l].kind)];
    k.bytes += b;
    ++k.used;
    k.capacity = edges[l].bandwidth_Bps;
    const double util = b / edges[l].bandwidth_Bps;
    if (util > k.busiest_util) k.busiest_util = util, k.busiest = static_cast<int>(l);
  }
  auto vname = [&](int v) {
    const auto& vx = cluster_.vertices()[static_cast<std::size_t>(v)];
    static const char* kinds[] = {"gpu", "nvswitch", "pcie-switch", "nic", "leaf", "spine", "core", "root-complex"};
    return std::string(kinds[static_cast<int>(vx.kind)]) + std::to_string(vx.index) +
           (vx.node >= 0 && vx.kind != topo::VertexKind::gpu ? "@node" + std::to_string(vx.node) : "");
  };
  std::vector<LinkLoad> out;
  for (const Class& k : classes) {
    if (k.used == 0) continue;
    out.push_back({k.name, k.bytes / k.used, k.capacity});
    const auto& e = edges[static_cast<std::size_t>(k.busiest)];
    out.push_back({std::string("busiest: ") + vname(e.src) + " -> " + vname(e.dst), solver_->link_bytes(k.busiest), e.bandwidth_Bps});
  }
  return out;
}

}  // namespace cs::sim
