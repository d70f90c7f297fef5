#pragma once
// Max-min fair bandwidth sharing between flows on links (progressive filling), the heart of the
// flow-level network.
//
// Every active flow f crosses a set of directed links P(f); link l has capacity C_l (bytes/s). The
// max-min fair allocation is the unique rate vector in which no flow can go faster without slowing a
// flow that is no faster than it. Progressive filling computes it (Bertsekas & Gallager, Data Networks,
// 6.5.2; SimGrid's lmm solver does the same with weights):
//   all flows start unfixed; repeat: for every link l, its fair share s_l = R_l / n_l (R_l = capacity not
//   yet given to fixed flows, n_l = unfixed flows on l); the link with the smallest s_l is a bottleneck:
//   fix each of its unfixed flows at rate s_l and subtract s_l from R of every link those flows cross.
// When a flow is fixed at s on link l', s <= s_l', so s_l' can only grow: a heap of links keyed by s_l
// with lazy re-insertion gives O((L + F |P|) log L) per solve.
//
// Incremental: rates only change in the connected component (links and flows that share links) of a flow
// that started or ended. Flows outside it keep their rates and completion times, so a TP all-reduce inside
// one node never re-solves the fabric. Between solves each flow drains at its rate; its completion time
// is exact (integer picoseconds, rounded up) and re-issued whenever its rate changes.
//
// Worked examples (tests/sim/test_maxmin.cpp): one flow on one link of capacity B gets B; two flows share
// it B/2 each; a flow crossing a B and a B/2 link gets B/2 and a second flow on the B link alone gets the
// other B/2.
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "sim/base/huge_pages.hpp"
#include "sim/engine/time.hpp"

namespace cs::sim {

class MaxMinSolver {
 public:
  explicit MaxMinSolver(std::vector<double> capacity_Bps);

  // A flow of `bytes` over `links` (directed link ids) on behalf of `owner`; it gets a rate at the next
  // solve(). An empty path means a local copy that completes at once. `payload` (0..1] is the share of the
  // bytes counted in link_bytes() (a flow may carry modeled overhead, e.g. a ring's pipeline fill).
  std::uint32_t add_flow(std::span<const int> links, double bytes, std::uint32_t owner, double payload = 1.0);
  // A path kept for the solver's lifetime, for flows that take the same links again and again (a group's
  // lockstep ring inside a node: 5 * 10^6 starts a step at 16,384 GPUs). A flow on it (add_flow_on) copies
  // no links into the path pool, and its narrowest link is known once.
  std::uint32_t keep_path(std::span<const int> links);
  std::uint32_t add_flow_on(std::uint32_t kept_path, double bytes, std::uint32_t owner, double payload = 1.0);
  // Re-computes the rates of every component touched since the last solve, at time `now`.
  void solve(Time now);
  // The earliest completion of an active flow; kNever when none.
  Time next_finish();
  // Removes the flows that complete at `now` (== next_finish()) and appends their owners to `owners`.
  void pop_finished(Time now, std::vector<std::uint32_t>& owners);

  std::size_t active_flows() const { return active_; }
  double rate(std::uint32_t flow) const { return flows_[flow].rate; }
  // Bytes that crossed a link so far (counted when flows are settled).
  double link_bytes(int link) const { return link_bytes_[static_cast<std::size_t>(link)]; }
  std::size_t num_links() const { return capacity_.size(); }
  double capacity(int link) const { return capacity_[static_cast<std::size_t>(link)]; }
  // Active flows (started, not finished) on a link, solved or not yet.
  std::size_t flows_on(int link) const { return tally_[static_cast<std::size_t>(link)].flows; }
  std::uint64_t solves() const { return solves_; }

 private:
  struct Flow {
    std::uint32_t path_begin = 0, path_len = 0;
    double remaining = 0;  // bytes
    double rate = 0;       // bytes/s
    Time last = 0;         // remaining is as of this time
    Time finish = kNever;
    double payload = 1.0;
    std::uint32_t owner = 0;
    bool active = false;
    bool listed = false;  // in its links' lists (link_flows_): see LinkTally
    std::uint32_t kept = kNotKept;  // its kept path (path_begin then indexes kept_links_), or kNotKept
  };
  static constexpr std::uint32_t kNotQueued = UINT32_MAX;
  static constexpr std::uint32_t kNotKept = UINT32_MAX;
  static constexpr std::uint32_t kNotListed = UINT32_MAX;  // LinkTally::unlisted: none
  std::span<const int> path(const Flow& f) const {
    return {(f.kept == kNotKept ? paths_.data() : kept_links_.data()) + f.path_begin, f.path_len};
  }
  std::uint32_t add_flow_at(std::span<const int> links, std::uint32_t begin, std::uint32_t kept, double bytes,
                            std::uint32_t owner, double payload);
  void settle(Flow& f, Time now);
  void issue_finishes(Time now);  // each component flow's completion from its new rate
  void issue_finish(std::uint32_t flow, Time now);
  void set_narrowest_rate(Flow& f) const;  // its rate when no link of its component carries another flow
  void touch(int link) {
    if (!link_touched_[static_cast<std::size_t>(link)]) {
      link_touched_[static_cast<std::size_t>(link)] = 1;
      touched_.push_back(link);
    }
  }
  void remove_from_links(std::uint32_t flow);
  void compact_paths();
  // finishes_: one entry per flow with a completion time, a 4-ary heap on (time, flow) indexed by
  // heap_pos_ (per flow: its entry, or kNotQueued), so that a re-issued completion replaces its predecessor
  // in place. heap_pos_ is an array of its own, not a field of Flow: every entry a pop or push moves
  // updates its flow's position, and 4 bytes a flow stay in cache where a 64-byte record does not.
  struct Finish {
    Time time;
    std::uint32_t flow;
  };
  void set_finish(std::uint32_t flow, Time finish);
  // (time, flow) order, the later first: one 128-bit comparison (times are >= 0), flags for heap4's
  // selects where two compares branched.
  __extension__ using Key = unsigned __int128;
  static Key finish_key(const Finish& f) { return static_cast<Key>(static_cast<std::uint64_t>(f.time)) << 32 | f.flow; }
  static bool finish_later(const Finish& a, const Finish& b) { return finish_key(a) > finish_key(b); }
  void store_finish(std::size_t k, const Finish& v) {  // finishes_[k] = v; heap_pos follows
    finishes_[k] = v;
    heap_pos_[v.flow] = static_cast<std::uint32_t>(k);
  }
  void place_finish(std::uint32_t i, const Finish& e);        // entry i takes e (heap4_place)
  void unqueue_top();

  std::vector<double> capacity_;
  std::vector<double> link_bytes_;
  // The active flows on a link, in the order they came (the order the filling visits them): up to
  // kInline in place (32 bytes a link, no allocation: most links carry one flow or none), more in a vector
  // of spills_ while the link is busier than that.
  //
  // Beside them each link's tally (8 bytes a link, 10^5 links in cache where the 32-byte lists miss): its
  // active flows, read by every start's lone test and every route probe, and its unlisted flow. A flow
  // that starts alone on all its links (most: a tensor-parallel ring inside a node, a pipeline send) is
  // counted but not listed, and leaves without a list to erase it from; the first flow to come onto one of
  // its links lists it first, before itself, which is the order the lists would hold anyway (nothing came
  // onto its links in between). On the 16,384-GPU unmirrored run the lists' pushes and erases were 6 % of
  // the time.
  struct LinkTally {
    std::uint32_t flows = 0;
    std::uint32_t unlisted = kNotListed;  // the flow alone on it and not in its list
  };
  void list_flow(std::uint32_t flow);  // puts an unlisted flow into its links' lists
  static constexpr std::uint32_t kInline = 7;
  static constexpr std::uint32_t kNoSpill = UINT32_MAX;
  struct LinkFlows {
    std::uint32_t spill = kNoSpill;
    std::uint32_t in[kInline] = {};
  };
  std::span<const std::uint32_t> flows_of(std::size_t link) const {
    const LinkFlows& lf = link_flows_[link];
    return {lf.spill == kNoSpill ? lf.in : spills_[lf.spill].data(), tally_[link].flows};
  }
  void link_push(std::size_t link, std::uint32_t flow);
  void link_erase(std::size_t link, std::uint32_t flow);  // keeps the others' order
  HugeVector<LinkFlows> link_flows_;
  std::vector<LinkTally> tally_;  // per link
  std::vector<std::vector<std::uint32_t>> spills_;
  std::vector<std::uint32_t> free_spills_;
  HugeVector<Flow> flows_;
  std::vector<std::uint32_t> heap_pos_;  // per flow (finishes_)
  std::vector<std::uint32_t> free_flows_;
  HugeVector<int> paths_;
  struct KeptPath {
    std::uint32_t begin, len;
    double narrowest;  // its smallest capacity
  };
  std::vector<KeptPath> kept_;
  std::vector<int> kept_links_;
  std::size_t active_ = 0;
  std::size_t live_path_ints_ = 0;
  std::vector<std::uint32_t> pending_;  // flows added since the last solve
  std::vector<std::uint32_t> lone_;     // of those, the ones added on links that carried nothing
  std::vector<int> touched_;            // links whose flow set changed since the last solve
  std::vector<std::uint8_t> link_touched_;
  std::vector<Finish> finishes_;
  std::uint64_t solves_ = 0;
  // Scratch for solve(), kept to avoid allocation.
  std::vector<std::uint32_t> comp_flows_;
  std::vector<std::uint32_t> due_;  // of pop_finished
  std::vector<int> comp_links_;
  std::vector<std::uint32_t> link_mark_, flow_mark_;
  std::uint32_t mark_ = 0;
  std::vector<double> residual_;
  std::vector<std::uint32_t> unfixed_;
  using ShareKey = std::pair<double, int>;  // (fair share, link)
  std::vector<ShareKey> share_heap_;
};

}  // namespace cs::sim
