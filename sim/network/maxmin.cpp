#include "sim/network/maxmin.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "sim/base/check.hpp"
#include "sim/engine/heap4.hpp"
#include "sim/network/free_slots.hpp"

namespace cs::sim {

MaxMinSolver::MaxMinSolver(std::vector<double> capacity_Bps)
    : capacity_(std::move(capacity_Bps)),
      link_bytes_(capacity_.size(), 0.0),
      link_flows_(capacity_.size()),
      tally_(capacity_.size()),
      link_touched_(capacity_.size(), 0),
      link_mark_(capacity_.size(), 0),
      residual_(capacity_.size(), 0.0),
      unfixed_(capacity_.size(), 0) {
  for (double c : capacity_) CS_CHECK(c > 0);
}

std::uint32_t MaxMinSolver::add_flow(std::span<const int> links, double bytes, std::uint32_t owner, double payload) {
  const auto begin = static_cast<std::uint32_t>(paths_.size());
  paths_.insert(paths_.end(), links.begin(), links.end());
  live_path_ints_ += links.size();
  return add_flow_at(links, begin, kNotKept, bytes, owner, payload);
}

std::uint32_t MaxMinSolver::keep_path(std::span<const int> links) {
  double narrowest = std::numeric_limits<double>::infinity();
  for (int l : links) {
    CS_CHECK(l >= 0 && static_cast<std::size_t>(l) < capacity_.size());
    narrowest = std::min(narrowest, capacity_[static_cast<std::size_t>(l)]);
  }
  kept_.push_back({static_cast<std::uint32_t>(kept_links_.size()), static_cast<std::uint32_t>(links.size()), narrowest});
  kept_links_.insert(kept_links_.end(), links.begin(), links.end());
  return static_cast<std::uint32_t>(kept_.size() - 1);
}

std::uint32_t MaxMinSolver::add_flow_on(std::uint32_t kept_path, double bytes, std::uint32_t owner, double payload) {
  CS_CHECK(kept_path < kept_.size());
  const KeptPath& k = kept_[kept_path];
  return add_flow_at(std::span<const int>(kept_links_.data() + k.begin, k.len), k.begin, kept_path, bytes, owner, payload);
}

std::uint32_t MaxMinSolver::add_flow_at(std::span<const int> links, std::uint32_t begin, std::uint32_t kept, double bytes,
                                        std::uint32_t owner, double payload) {
  CS_CHECK(bytes >= 0 && payload > 0 && payload <= 1);
  const std::uint32_t id = take_slot(free_flows_, flows_);
  if (flow_mark_.size() < flows_.size()) flow_mark_.push_back(0);
  if (heap_pos_.size() < flows_.size()) heap_pos_.push_back(kNotQueued);
  Flow& f = flows_[id];
  f.path_begin = begin;
  f.path_len = static_cast<std::uint32_t>(links.size());
  f.kept = kept;
  f.remaining = bytes;
  f.rate = 0;
  f.finish = kNever;
  f.owner = owner;
  f.payload = payload;
  heap_pos_[id] = kNotQueued;
  f.active = true;
  ++active_;
  // A flow whose links carry nothing else is a component by itself: solve() gives it its narrowest link
  // without a search, unless a flow added after it shares one of them (then that one's search finds it,
  // listed by then: LinkTally).
  bool lone = true;
  for (int l : links) {
    CS_CHECK(l >= 0 && static_cast<std::size_t>(l) < capacity_.size());
    lone = lone && tally_[static_cast<std::size_t>(l)].flows == 0;
  }
  if (lone && !links.empty()) {
    f.listed = false;
    for (int l : links) {
      LinkTally& t = tally_[static_cast<std::size_t>(l)];
      ++t.flows;
      t.unlisted = id;
    }
    lone_.push_back(id);
  } else {
    f.listed = true;
    for (int l : links) {
      const std::uint32_t other = tally_[static_cast<std::size_t>(l)].unlisted;
      if (other != kNotListed) list_flow(other);
      __builtin_prefetch(&link_flows_[static_cast<std::size_t>(l)], 1);  // for link_push, below: all at once
    }
    for (int l : links) {
      link_push(static_cast<std::size_t>(l), id);
      touch(l);
    }
  }
  pending_.push_back(id);
  return id;
}


void MaxMinSolver::settle(Flow& f, Time now) {
  if (now <= f.last) return;
  const double moved = std::min(f.remaining, f.rate * to_seconds(now - f.last));
  f.remaining -= moved;
  for (int l : path(f)) link_bytes_[static_cast<std::size_t>(l)] += moved * f.payload;
  f.last = now;
}

void MaxMinSolver::solve(Time now) {
  ++solves_;
  ++mark_;
  comp_flows_.clear();
  comp_links_.clear();
  // The touched components: breadth-first over links <-> flows.
  for (int l : touched_) {
    link_touched_[static_cast<std::size_t>(l)] = 0;
    if (link_mark_[static_cast<std::size_t>(l)] == mark_) continue;
    link_mark_[static_cast<std::size_t>(l)] = mark_;
    comp_links_.push_back(l);
  }
  touched_.clear();
  bool shared = false;  // some link of the component carries more than one flow
  for (std::size_t i = 0; i < comp_links_.size(); ++i) {
    const auto on_link = flows_of(static_cast<std::size_t>(comp_links_[i]));
    shared = shared || on_link.size() > 1;
    for (std::uint32_t fid : on_link) {
      if (flow_mark_[fid] == mark_) continue;
      flow_mark_[fid] = mark_;
      comp_flows_.push_back(fid);
      for (int l2 : path(flows_[fid]))
        if (link_mark_[static_cast<std::size_t>(l2)] != mark_) {
          link_mark_[static_cast<std::size_t>(l2)] = mark_;
          comp_links_.push_back(l2);
        }
    }
  }
  // Flows with an empty path (local copies) finish now.
  for (std::uint32_t fid : pending_) {
    Flow& f = flows_[fid];
    f.last = now;
    if (f.path_len == 0 && f.active) {
      f.rate = std::numeric_limits<double>::infinity();
      set_finish(fid, now);
    }
  }
  pending_.clear();
  // Lone flows no search reached: each its own component, no link shared (the fast path below).
  for (std::uint32_t fid : lone_) {
    if (flow_mark_[fid] == mark_ || !flows_[fid].active) continue;
    set_narrowest_rate(flows_[fid]);
    issue_finish(fid, now);
  }
  lone_.clear();
  if (comp_flows_.empty()) return;

  for (std::uint32_t fid : comp_flows_) settle(flows_[fid], now);
  if (!shared) {
    // No two flows share a link (99 % of the solves of a step: a ring inside a node, a pipeline send):
    // progressive filling fixes each flow at its own narrowest link, residual C_l over 1 unfixed flow,
    // so its rate is min over its path of C_l, bit for bit what the filling below computes.
    for (std::uint32_t fid : comp_flows_) set_narrowest_rate(flows_[fid]);
    issue_finishes(now);
    return;
  }
  // Progressive filling over the component.
  // A binary min-heap on (share, link) in a member vector (std::push_heap / pop_heap, exactly what a
  // std::priority_queue with std::greater does, without a new allocation per solve).
  std::vector<ShareKey>& heap = share_heap_;
  heap.clear();
  const auto push = [&heap](double share, int link) {
    heap.emplace_back(share, link);
    std::push_heap(heap.begin(), heap.end(), std::greater<>{});
  };
  for (int l : comp_links_) {
    const auto li = static_cast<std::size_t>(l);
    residual_[li] = capacity_[li];
    unfixed_[li] = tally_[li].flows;
    if (unfixed_[li] > 0) push(residual_[li] / unfixed_[li], l);
  }
  const std::uint32_t fixed_mark = ++mark_;  // flow_mark_ == fixed_mark: rate decided
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>{});
    const auto [key, l] = heap.back();
    heap.pop_back();
    const auto li = static_cast<std::size_t>(l);
    if (unfixed_[li] == 0) continue;
    const double share = std::max(0.0, residual_[li]) / unfixed_[li];
    if (share > key * (1 + 1e-12) + 1e-300) {  // stale: the share grew since this entry was pushed
      push(share, l);
      continue;
    }
    for (std::uint32_t fid : flows_of(li)) {
      if (flow_mark_[fid] == fixed_mark) continue;
      flow_mark_[fid] = fixed_mark;
      flows_[fid].rate = share;
      for (int l2 : path(flows_[fid])) {
        const auto l2i = static_cast<std::size_t>(l2);
        residual_[l2i] -= share;
        --unfixed_[l2i];
        if (l2 != l && unfixed_[l2i] > 0) push(std::max(0.0, residual_[l2i]) / unfixed_[l2i], l2);
      }
    }
  }
  for (std::uint32_t fid : comp_flows_) CS_CHECK(flow_mark_[fid] == fixed_mark);
  issue_finishes(now);
}

void MaxMinSolver::set_narrowest_rate(Flow& f) const {
  if (f.kept != kNotKept) {
    f.rate = kept_[f.kept].narrowest;
    return;
  }
  double rate = std::numeric_limits<double>::infinity();
  for (int l : path(f)) rate = std::min(rate, capacity_[static_cast<std::size_t>(l)]);
  f.rate = rate;
}

void MaxMinSolver::issue_finish(std::uint32_t fid, Time now) {
  const Flow& f = flows_[fid];
  CS_CHECK(f.rate > 0);
  const double seconds = f.remaining / f.rate;
  set_finish(fid, now + static_cast<Time>(std::ceil(seconds * 1e12)));
}

void MaxMinSolver::issue_finishes(Time now) {
  for (std::uint32_t fid : comp_flows_) issue_finish(fid, now);
}

// The order is (time, flow id), as the lazy heap of (time, flow, version) entries this replaces popped its
// live entries: one entry per flow, replaced in place when a solve re-issues its completion (unchanged:
// left alone), instead of a stale entry per solve of its component to pop later.
void MaxMinSolver::set_finish(std::uint32_t fid, Time finish) {
  Flow& f = flows_[fid];
  std::uint32_t& pos = heap_pos_[fid];
  if (pos != kNotQueued && f.finish == finish) return;
  f.finish = finish;
  if (pos == kNotQueued) {
    pos = static_cast<std::uint32_t>(finishes_.size());
    finishes_.push_back({finish, fid});
  }
  place_finish(pos, Finish{finish, fid});
}

void MaxMinSolver::place_finish(std::uint32_t i, const Finish& e) {
  heap4_place(finishes_, i, e, [](const Finish& a, const Finish& b) { return finish_later(a, b); }, [this](std::size_t k, const Finish& v) { store_finish(k, v); });
}

void MaxMinSolver::unqueue_top() {
  heap_pos_[finishes_.front().flow] = kNotQueued;
  heap4_erase(finishes_, 0, [](const Finish& a, const Finish& b) { return finish_later(a, b); }, [this](std::size_t k, const Finish& v) { store_finish(k, v); });
}

Time MaxMinSolver::next_finish() { return finishes_.empty() ? kNever : finishes_.front().time; }

void MaxMinSolver::link_push(std::size_t link, std::uint32_t flow) {
  LinkFlows& lf = link_flows_[link];
  std::uint32_t& n = tally_[link].flows;
  if (lf.spill == kNoSpill && n < kInline) {
    lf.in[n++] = flow;
    return;
  }
  if (lf.spill == kNoSpill) {  // the in-place room is full: the list moves to a vector of its own
    lf.spill = take_slot(free_spills_, spills_);
    spills_[lf.spill].assign(lf.in, lf.in + n);
  }
  spills_[lf.spill].push_back(flow);
  ++n;
}

void MaxMinSolver::link_erase(std::size_t link, std::uint32_t flow) {
  LinkFlows& lf = link_flows_[link];
  std::uint32_t& n = tally_[link].flows;
  std::uint32_t* v = lf.spill == kNoSpill ? lf.in : spills_[lf.spill].data();
  std::uint32_t i = 0;
  while (i < n && v[i] != flow) ++i;
  CS_CHECK(i < n);
  std::copy(v + i + 1, v + n, v + i);  // keep order: deterministic sums
  --n;
  if (lf.spill != kNoSpill) {
    spills_[lf.spill].pop_back();
    if (n == 0) {
      free_spills_.push_back(lf.spill);
      lf.spill = kNoSpill;
    }
  }
}

void MaxMinSolver::list_flow(std::uint32_t fid) {
  Flow& f = flows_[fid];
  CS_CHECK(!f.listed);
  f.listed = true;
  for (int l : path(f)) {
    LinkTally& t = tally_[static_cast<std::size_t>(l)];
    CS_CHECK(t.flows > 0 && (t.unlisted == fid || t.unlisted == kNotListed));  // kNotListed: a link twice on its path
    t.unlisted = kNotListed;
    --t.flows;  // link_push counts it again
    link_push(static_cast<std::size_t>(l), fid);
  }
}

void MaxMinSolver::remove_from_links(std::uint32_t fid) {
  const Flow& f = flows_[fid];
  if (!f.listed) {  // alone on its links all along
    for (int l : path(f)) {
      LinkTally& t = tally_[static_cast<std::size_t>(l)];
      CS_CHECK(t.unlisted == fid && t.flows > 0);
      if (--t.flows == 0) t.unlisted = kNotListed;  // > 0: a link twice on its path
    }
    return;
  }
  for (int l : path(f)) {
    link_erase(static_cast<std::size_t>(l), fid);
    if (tally_[static_cast<std::size_t>(l)].flows > 0) touch(l);  // an emptied link changes no other flow's rate
  }
}

void MaxMinSolver::pop_finished(Time now, std::vector<std::uint32_t>& owners) {
  // The flows due now leave the heap first (a batch: a pipeline stage's tensor-parallel rings finish
  // together), their records fetched meanwhile; then each is settled and taken off its links in the same
  // order, the next one's links fetched while this one is handled (its link counters and byte totals,
  // read after 10^3 other flows' were: misses that were a tenth of the 16,384-GPU run).
  due_.clear();
  while (next_finish() == now) {
    due_.push_back(finishes_.front().flow);
    unqueue_top();
    __builtin_prefetch(&flows_[due_.back()]);
  }
  for (std::size_t i = 0; i < due_.size(); ++i) {
    if (i + 1 < due_.size())
      for (int l : path(flows_[due_[i + 1]])) {
        __builtin_prefetch(&link_bytes_[static_cast<std::size_t>(l)]);
        __builtin_prefetch(&tally_[static_cast<std::size_t>(l)]);
      }
    const std::uint32_t fid = due_[i];
    Flow& f = flows_[fid];
    settle(f, now);
    f.remaining = 0;
    f.active = false;
    --active_;
    owners.push_back(f.owner);
    remove_from_links(fid);
    if (f.kept == kNotKept) live_path_ints_ -= f.path_len;
    free_flows_.push_back(fid);
  }
  compact_paths();
}

void MaxMinSolver::compact_paths() {
  // Flows only ever append to the path pool. Every flow done: it starts over. Otherwise, once the dead
  // paths outweigh the live ones (a step that always has flows in flight, as every rank of 16,384 GPUs
  // does), the live paths are packed in flow order: amortised O(1) a flow, the pool at most about twice
  // what is live. Only where a path sits moves; nothing reads the order.
  if (live_path_ints_ == 0) {
    paths_.clear();
    return;
  }
  if (paths_.size() < 2 * live_path_ints_ + (1u << 20)) return;
  HugeVector<int> packed;
  packed.reserve(2 * live_path_ints_);
  for (Flow& f : flows_) {
    if (!f.active || f.path_len == 0 || f.kept != kNotKept) continue;
    const auto begin = static_cast<std::uint32_t>(packed.size());
    const auto p = path(f);
    packed.insert(packed.end(), p.begin(), p.end());
    f.path_begin = begin;
  }
  CS_CHECK(packed.size() == live_path_ints_);
  paths_.swap(packed);
}

}  // namespace cs::sim
