#include "sim/engine/template_executor.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <sstream>
#include <utility>

#include "sim/base/check.hpp"
#include "sim/engine/cancel.hpp"
#include "sim/engine/event_loop.hpp"
#include "sim/engine/event_queue.hpp"
#include "sim/engine/heap4.hpp"

namespace cs::sim {

TemplateInstances::TemplateInstances(const StepTemplate& t) : t_(t) {
  const TaskGraph& g = *t.graph;
  const auto& tasks = g.tasks();
  const auto n = t.num_ranks();
  CS_CHECK(n > 0 && t.rank_type.size() == n && t.rank_slowdown.size() == n);
  CS_CHECK(t.representative.size() == static_cast<std::size_t>(g.num_ranks()));
  // The template's tasks are rank by rank (the builder emits one rank after another).
  std::vector<TaskId> first(static_cast<std::size_t>(g.num_ranks()) + 1, 0);
  for (TaskId id = 0; id < tasks.size(); ++id) {
    CS_CHECK(id == 0 || tasks[id].rank >= tasks[id - 1].rank);
    first[tasks[id].rank + 1] = id + 1;
  }
  for (std::size_t k = 1; k < first.size(); ++k) first[k] = std::max(first[k], first[k - 1]);

  self_.resize(g.num_groups());
  group_begin_.reserve(g.num_groups() + 1);
  for (std::uint32_t k = 0; k < g.num_groups(); ++k) {
    group_begin_.push_back(static_cast<std::uint32_t>(group_ranks_.size()));
    for (const int gpu : g.group(k)) {
      CS_CHECK(gpu >= 0 && static_cast<std::uint32_t>(gpu) < n);
      group_ranks_.push_back(static_cast<std::uint32_t>(gpu));
    }
    std::sort(group_ranks_.begin() + group_begin_.back(), group_ranks_.end());
    self_[k] = {k};
  }
  group_begin_.push_back(static_cast<std::uint32_t>(group_ranks_.size()));
  // The stages of each template group: those of its collectives' members and of its mirrors' ranks. Each
  // group then takes the first column none of its stages' groups has taken (four at 16,384 ranks).
  const auto stages = static_cast<std::size_t>(g.num_ranks());
  std::vector<std::vector<bool>> stages_of(g.num_groups());
  const auto add_stage = [&](std::uint32_t group, std::uint32_t stage) {
    CS_CHECK(stage < stages);
    auto& of = stages_of[group];
    if (of.empty()) of.assign(stages, false);
    of[stage] = true;
  };
  for (const Collective& c : g.collectives()) {
    if (stages_of[c.group].empty())
      for (const std::uint32_t mirror : g.mirrors(c.group))
        for (const std::uint32_t rank : ranks_of(mirror)) add_stage(c.group, t.template_rank[rank]);
    for (const TaskId m : c.members) add_stage(c.group, tasks[m].rank);
  }
  std::vector<std::uint32_t> column(g.num_groups(), kNone);
  std::vector<std::vector<bool>> taken(stages);  // per stage: its groups' columns
  for (std::uint32_t k = 0; k < g.num_groups(); ++k) {
    if (stages_of[k].empty()) continue;
    const auto clashes = [&](std::uint32_t col) {
      for (std::size_t s = 0; s < stages; ++s)
        if (stages_of[k][s] && col < taken[s].size() && taken[s][col]) return true;
      return false;
    };
    std::uint32_t col = 0;
    while (clashes(col)) ++col;
    for (std::size_t s = 0; s < stages; ++s) {
      if (!stages_of[k][s]) continue;
      if (taken[s].size() <= col) taken[s].resize(col + 1, false);
      taken[s][col] = true;
    }
    column[k] = col;
    columns_ = std::max(columns_, col + 1);
  }
  // Each template group's mirrors partition the ranks of its stage(s): a rank's seat in the group's column
  // is the mirror holding it.
  seats_.resize(static_cast<std::size_t>(n) * columns_);
  issue_.reserve(g.collectives().size());
  std::uint32_t slots = 0;
  std::vector<bool> seated(g.num_groups(), false);
  for (const Collective& c : g.collectives()) {
    issue_.push_back({slots, column[c.group]});
    const auto& mirrors = g.mirrors(c.group);
    slots += static_cast<std::uint32_t>(mirrors.size());
    if (seated[c.group]) continue;
    seated[c.group] = true;
    for (std::uint32_t i = 0; i < mirrors.size(); ++i)
      for (const std::uint32_t rank : ranks_of(mirrors[i])) {
        Seat& seat = seats_[static_cast<std::size_t>(rank) * columns_ + column[c.group]];
        CS_CHECK(seat.mirror == kNone);
        seat = {i, mirrors[i], group_begin_[mirrors[i]], group_begin_[mirrors[i] + 1] - group_begin_[mirrors[i]]};
      }
  }
  // Each template rank's collectives in issue order, with their template groups (10^4 ranks walk these
  // instead of every task of their stage).
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> issued(static_cast<std::size_t>(g.num_ranks()));
  for (std::size_t k = 0; k + 1 < first.size(); ++k)
    for (TaskId id = first[k]; id < first[k + 1]; ++id)
      if (tasks[id].collective != kNone) issued[k].emplace_back(tasks[id].collective, g.collectives()[tasks[id].collective].group);
  // Number the instances as the one-by-one builder does: rank by rank, each rank's collectives in issue
  // order, a new one wherever the rank is its group's first (lowest) member. One instance a slot: of_ is
  // reserved whole.
  slot_id_.assign(slots, kNone);
  of_.reserve(slots);
  for (std::uint32_t r = 0; r < n; ++r) {
    const std::uint32_t k = t.template_rank[r];
    CS_CHECK(k < static_cast<std::uint32_t>(g.num_ranks()));
    tasks_ += first[k + 1] - first[k];
    for (const auto& [c, group] : issued[k]) {
      const Seat& seat = seats_[static_cast<std::size_t>(r) * columns_ + column[group]];
      CS_CHECK(seat.mirror != kNone && seat.group == g.mirrors(group)[seat.mirror]);
      if (group_ranks_[seat.begin] != r) continue;
      std::uint32_t& id_of = slot_id_[issue_[c].first_slot + seat.mirror];
      CS_CHECK(id_of == kNone);
      id_of = static_cast<std::uint32_t>(of_.size());
      of_.push_back({c, seat.group});
    }
  }
  for (const std::uint32_t id : slot_id_) CS_CHECK(id != kNone);
}

CollectiveSpec TemplateInstances::collective(std::uint32_t c) const {
  const Of o = of(c);
  CollectiveSpec spec = t_.graph->collectives()[o.collective];
  spec.group = o.group;
  return spec;
}

const TemplateInstances::InFlight* TemplateInstances::find(std::uint32_t instance) const {
  const std::size_t mask = in_flight_.size() - 1;
  for (std::size_t i = hash(instance) & mask;; i = (i + 1) & mask) {
    if (in_flight_[i].id == instance) return &in_flight_[i];
    if (in_flight_[i].id == kNone) return nullptr;
  }
}

void TemplateInstances::begin(std::uint32_t instance, std::uint32_t collective, const Meeting& where) const {
  if (2 * (in_flight_count_ + 1) > in_flight_.size()) {  // grow: re-insert into twice the room
    std::vector<InFlight> old(2 * in_flight_.size());
    old.swap(in_flight_);
    in_flight_count_ = 0;
    for (const InFlight& f : old)
      if (f.id != kNone) begin(f.id, f.collective, {0, f.group, f.begin, f.size});
  }
  const std::size_t mask = in_flight_.size() - 1;
  std::size_t i = hash(instance) & mask;
  while (in_flight_[i].id != kNone) {
    CS_CHECK(in_flight_[i].id != instance);
    i = (i + 1) & mask;
  }
  in_flight_[i] = {instance, collective, where.group, where.begin, where.size};
  ++in_flight_count_;
}

void TemplateInstances::end(std::uint32_t instance) const {
  const std::size_t mask = in_flight_.size() - 1;
  std::size_t i = hash(instance) & mask;
  while (in_flight_[i].id != instance) {
    CS_CHECK(in_flight_[i].id != kNone);
    i = (i + 1) & mask;
  }
  // Backward-shift deletion: pull later entries of the probe run into the hole where their home allows.
  for (std::size_t j = (i + 1) & mask; in_flight_[j].id != kNone; j = (j + 1) & mask) {
    const std::size_t home = hash(in_flight_[j].id) & mask;
    const bool movable = i <= j ? (home <= i || home > j) : (home <= i && home > j);
    if (movable) {
      in_flight_[i] = in_flight_[j];
      i = j;
    }
  }
  in_flight_[i].id = kNone;
  --in_flight_count_;
}

void TemplateInstances::member_ranks(std::uint32_t c, std::vector<std::uint32_t>& out) const {
  const auto m = members_of(c);
  out.insert(out.end(), m.begin(), m.end());
}

namespace {

// The executor's events are one kernel completion per rank at most that is not stale. The reference's
// EventQueue keeps a re-issued completion's stale predecessor in its heap until its time comes (popped,
// counted as an event, ignored); with every rank simulated that is most of a 10^5-entry heap. Here a
// rank's pending completion is withdrawn when it is re-issued, and what the stale one would have done is
// kept: it counts as an event, and the step ends no earlier than it (the reference's clock reaches it).
// Events at the current time go to a FIFO as in EventQueue (a stale one there is popped and ignored, as
// in the reference); order is (time, schedule order) throughout, as there.
//
// Pending completions are kept in buckets: a completion scheduled for the time of the one scheduled just
// before joins its bucket, else it opens a new one, so a bucket is a run of consecutive sequence numbers
// at one time. The buckets are in an indexed 4-ary heap by (time, first sequence number): the ranks of a
// stage run the same kernels, so most completions share their time with the one scheduled just before
// (87 % at 16,384 GPUs on the flow network), and the heap holds and sifts a bucket where it held and
// sifted every rank. Popping the first bucket front to back is (time, sequence) order; a withdrawn event
// is left in its bucket, marked dead, and skipped. A bucketed event keeps only its rank and tag, 8 bytes
// where a whole Event is 24: its time is its bucket's and its order its place there, so the bucket arrays
// the loop walks (a cache miss at each new first bucket) are a third of the size.
class KernelQueue {
 public:
  explicit KernelQueue(std::uint32_t ranks) : pos_(ranks) {}
  Time now() const { return now_; }
  std::uint64_t superseded() const { return superseded_; }
  Time latest_superseded() const { return latest_superseded_; }
  Time next_time() const {
    if (fifo_head_ < fifo_.size()) return now_;
    return heap_.empty() ? kNever : heap_.front().time;
  }
  // The ranks of the event pop() returns next and of the fourth one from now (kNone: none), so that their
  // state can be fetched early: the fourth's is in cache when its turn comes even where the flow network's
  // events in between evicted it (the next one's alone arrived late, its slot's first lines stalling the
  // loop). The fourth is a guess (four on in the FIFO or the first bucket, withdrawn or not, rather than the
  // order pop() follows): a wrong one costs a useless fetch, nothing else.
  std::pair<std::uint32_t, std::uint32_t> peek_targets() const {
    if (fifo_head_ < fifo_.size()) return {fifo_[fifo_head_].target, fifo_head_ + 3 < fifo_.size() ? fifo_[fifo_head_ + 3].target : kNone};
    if (heap_.empty()) return {kNone, kNone};
    const Bucket& b = buckets_[heap_.front().bucket];
    return {b.events[b.head].target, b.head + 3 < b.events.size() ? b.events[b.head + 3].target : kNone};
  }
  // The rank's place in the buckets, which pop() reads (that load was 5 % of execute_template's own samples).
  void prefetch(std::uint32_t rank) const { __builtin_prefetch(&pos_[rank], 1); }
  void advance_to(Time t) {
    CS_CHECK(t >= now_ && t <= next_time());
    now_ = t;
  }
  void schedule(Time at, std::uint32_t rank, std::uint32_t tag) {
    CS_CHECK(at >= now_);
    const Event e{at, next_seq_++, rank, tag};
    if (pos_[rank].bucket != kNone) {  // the rank's pending completion goes stale
      ++superseded_;
      latest_superseded_ = std::max(latest_superseded_, buckets_[pos_[rank].bucket].time);
      withdraw(rank);
    }
    if (at == now_) {
      fifo_.push_back(e);
      return;
    }
    const std::uint32_t b = bucket_for(at, e.seq);
    Bucket& bucket = buckets_[b];
    pos_[rank] = {b, static_cast<std::uint32_t>(bucket.events.size())};
    bucket.events.push_back({rank, tag});
    ++bucket.live;
  }
  Event pop() {
    const bool fifo_has = fifo_head_ < fifo_.size();
    CS_CHECK(fifo_has || !heap_.empty());
    Event e;
    // The FIFO's events are at now, and a bucket at now was filled before now came, so its events precede
    // the FIFO's in (time, sequence) order: the FIFO goes first only when the first bucket is later.
    if (fifo_has && (heap_.empty() || heap_.front().time > now_)) {
      e = fifo_[fifo_head_++];
      if (fifo_head_ == fifo_.size()) {
        fifo_.clear();
        fifo_head_ = 0;
      }
    } else {
      const Entry& top = heap_.front();
      const Pending p = front();
      e = {top.time, kNoSeq, p.target, p.tag};
      withdraw(p.target);
    }
    if (e.time != now_) {
      CS_CHECK(fifo_head_ == fifo_.size());
      now_ = e.time;
    }
    return e;
  }

 private:
  static constexpr std::uint32_t kDead = UINT32_MAX;  // Pending::target of a withdrawn event
  // A bucketed event's sequence number is not kept (its bucket's order is schedule order, and the heap
  // orders buckets by their first one); pop() returns it as kNoSeq. 8 bytes an event, not 24.
  static constexpr std::uint64_t kNoSeq = UINT64_MAX;
  struct Pending {
    std::uint32_t target, tag;
  };
  struct Bucket {
    Time time = 0;
    std::vector<Pending> events;  // in schedule order; target kDead: withdrawn
    std::uint32_t head = 0;     // its first live event
    std::uint32_t live = 0;
    std::uint32_t heap_pos = 0;
  };
  struct Entry {
    Time time;
    std::uint64_t seq;  // its first event's
    std::uint32_t bucket;
  };
  struct Pos {
    std::uint32_t bucket = kNone, index = 0;
  };
  const Pending& front() const {
    const Bucket& b = buckets_[heap_.front().bucket];
    return b.events[b.head];
  }
  // The bucket of the previous schedule if it has this time, else a new one: so a bucket holds a run of
  // consecutive sequence numbers, and buckets of equal time are ordered by their first one.
  std::uint32_t bucket_for(Time at, std::uint64_t seq) {
    if (last_ != kNone && buckets_[last_].time == at) return last_;
    std::uint32_t b;
    if (!free_.empty()) {
      b = free_.back();
      free_.pop_back();
    } else {
      b = static_cast<std::uint32_t>(buckets_.size());
      buckets_.emplace_back();
    }
    buckets_[b].time = at;
    const Entry e{at, seq, b};
    heap_.push_back(e);
    heap4_place(heap_, heap_.size() - 1, e, [](const Entry& x, const Entry& y) { return later_in_time(x, y); }, [this](std::size_t k, const Entry& v) { set_entry(k, v); });
    last_ = b;
    return b;
  }
  // The rank's pending event leaves its bucket; an empty bucket leaves the heap.
  void withdraw(std::uint32_t rank) {
    const Pos p = pos_[rank];
    pos_[rank] = Pos{};
    Bucket& b = buckets_[p.bucket];
    b.events[p.index].target = kDead;
    if (--b.live > 0) {
      while (b.events[b.head].target == kDead) ++b.head;
      return;
    }
    heap4_erase(heap_, b.heap_pos, [](const Entry& x, const Entry& y) { return later_in_time(x, y); }, [this](std::size_t k, const Entry& v) { set_entry(k, v); });
    b.events.clear();
    b.head = 0;
    free_.push_back(p.bucket);
    if (last_ == p.bucket) last_ = kNone;
  }
  // Stores an entry in the heap; its bucket's heap_pos follows.
  void set_entry(std::size_t k, const Entry& v) {
    heap_[k] = v;
    buckets_[v.bucket].heap_pos = static_cast<std::uint32_t>(k);
  }

  std::vector<Entry> heap_;  // buckets by time
  std::vector<Bucket> buckets_;
  std::vector<std::uint32_t> free_;  // buckets not in use
  std::uint32_t last_ = kNone;  // the bucket last scheduled into
  std::vector<Pos> pos_;        // per rank: its pending event (bucket kNone: none)
  std::vector<Event> fifo_;
  std::size_t fifo_head_ = 0;
  std::uint64_t next_seq_ = 0;
  Time now_ = 0;
  std::uint64_t superseded_ = 0;
  Time latest_superseded_ = 0;
};

// The reference executor (executor.cpp) step for step, on (real rank, template task) instead of a task.
// A rank's whole dynamic state is one RankSlot (its kernel, its streams, its totals: five cache lines), so
// that an event touches a few lines of its rank rather than a line in each of a dozen 10^5-entry arrays.
class TemplateExecutor {
 public:
  TemplateExecutor(const StepTemplate& t, const TemplateInstances& inst, CommBackend& network, const ExecutorOptions& o)
      : t_(t),
        g_(*t.graph),
        inst_(inst),
        network_(network),
        slowdown_(1.0 + o.comm_compute_contention),
        queue_(t.num_ranks()),
        ranks_(t.num_ranks()),
        arrived_(inst.num_slots(), 0),
        first_(static_cast<std::size_t>(g_.num_ranks()) + 1, 0) {
    CS_CHECK(o.comm_compute_contention >= 0);
    const auto& tasks = g_.tasks();
    for (TaskId id = 0; id < tasks.size(); ++id) first_[tasks[id].rank + 1] = id + 1;
    for (std::size_t k = 1; k < first_.size(); ++k) first_[k] = std::max(first_[k], first_[k - 1]);
    for (TaskId id = 0; id < tasks.size(); ++id) {
      // A rank's kernels run one at a time on its compute stream, so their union is the sum of their times.
      CS_CHECK(tasks[id].collective != kNone || tasks[id].stream == StreamKind::compute);
      for (const TaskId* s = g_.successors_begin(id); s != g_.successors_end(id); ++s) CS_CHECK(tasks[*s].rank == tasks[id].rank);
    }
    starts_.reserve(tasks.size());
    for (const Task& task : tasks) {
      const auto issue = task.collective == kNone ? TemplateInstances::Issue{0, 0} : inst.issue(task.collective);
      CS_CHECK(issue.column <= UINT16_MAX);
      starts_.push_back({task.collective, issue.first_slot, static_cast<std::uint16_t>(issue.column), task.category});
    }
    // No dependency counts are kept per rank: a stream runs its tasks in order and its head moves past a
    // task exactly when that task finishes, so predecessor p of a rank is done exactly when the rank's
    // head on p's stream is past p's place there. Whether a task is ready is read off the rank's stream
    // heads, which every event touches anyway, and the template's (stream, place) of its predecessors.
    // This replaces a byte per task per rank (10^8 bytes at 16,384 ranks, a cache miss per check).
    std::vector<Place> place(tasks.size(), Place{kNone, 0});
    for (std::size_t k = 0; k < static_cast<std::size_t>(g_.num_ranks()); ++k)
      for (int s = 0; s < kStreamsPerRank; ++s) {
        const auto& list = g_.stream_tasks(static_cast<int>(k), static_cast<StreamKind>(s));
        for (std::uint32_t i = 0; i < list.size(); ++i) place[list[i]] = {i, static_cast<std::uint8_t>(s)};
      }
    std::vector<std::uint32_t> count(tasks.size() + 1, 0);
    for (TaskId id = 0; id < tasks.size(); ++id) {
      CS_CHECK(place[id].index != kNone);  // on a stream
      for (const TaskId* s = g_.successors_begin(id); s != g_.successors_end(id); ++s) ++count[*s + 1];
    }
    for (std::size_t k = 1; k < count.size(); ++k) count[k] += count[k - 1];
    pred_begin_ = count;
    preds_.resize(pred_begin_.back());
    trigger_begin_.reserve(tasks.size() + 1);
    for (TaskId id = 0; id < tasks.size(); ++id) {
      trigger_begin_.push_back(static_cast<std::uint32_t>(triggers_.size()));
      for (const TaskId* s = g_.successors_begin(id); s != g_.successors_end(id); ++s) {
        preds_[count[*s]++] = place[id];
        // The reference executor starts a successor when its count reaches zero: at the last of several
        // edges to it, so only that one triggers here.
        if (std::find(s + 1, g_.successors_end(id), *s) == g_.successors_end(id)) triggers_.push_back({*s, tasks[*s].stream});
      }
    }
    trigger_begin_.push_back(static_cast<std::uint32_t>(triggers_.size()));
    for (TaskId id = 0; id < tasks.size(); ++id) CS_CHECK(pred_begin_[id + 1] - pred_begin_[id] == g_.num_predecessors(id));
    for (std::uint32_t r = 0; r < t.num_ranks(); ++r) ranks_[r].stage = t.template_rank[r];
    // Each template collective's member task per template rank (a pipeline pair has two).
    // Flat, with each member's stage and category beside it: the lookup reads one short run, no task.
    member_begin_.reserve(g_.collectives().size() + 1);
    for (std::size_t c = 0; c < g_.collectives().size(); ++c) {
      member_begin_.push_back(static_cast<std::uint32_t>(members_.size()));
      for (const TaskId m : g_.collectives()[c].members) members_.push_back({tasks[m].rank, m, tasks[m].stream, tasks[m].category});
    }
    member_begin_.push_back(static_cast<std::uint32_t>(members_.size()));
    for (const std::uint32_t r : t.representative) ranks_[r].representative = true;
    for (std::uint32_t r = 0; r < t.num_ranks(); ++r) {
      ranks_[r].base = t.base[t.rank_type[r]].data();
      ranks_[r].slowdown = t.rank_slowdown[r];
    }
    result_.records.resize(tasks.size());
  }

  TemplateResult run() {
    for (std::uint32_t r = 0; r < t_.num_ranks(); ++r)
      for (int s = 0; s < kStreamsPerRank; ++s) try_start(r, static_cast<StreamKind>(s));
    result_.events = run_events(
        queue_, network_,
        [this](std::uint32_t rank, std::uint32_t version) {
          prefetch_ahead();
          on_compute_done(rank, version);
        },
        [this](std::uint32_t c, std::uint32_t next) {
          if (next != kNone) prefetch_members(next);
          on_collective_done(c);
        });
    check_finished();
    result_.events += queue_.superseded();
    result_.makespan = std::max(queue_.now(), queue_.latest_superseded());
    result_.ranks.reserve(ranks_.size());
    result_.kernel_square_sum.reserve(ranks_.size());
    for (const RankSlot& r : ranks_) {
      result_.ranks.push_back({r.busy_time, r.exposed_by_kind, r.compute, r.exposed});
      result_.kernel_square_sum.push_back(r.kernel_square_sum);
    }
    return std::move(result_);
  }

 private:
  // A rank's whole dynamic state, on five lines of its own: what a collective's start or end reads of each
  // member on the first (its counters and kernel), the third (stream starts, exposure) and the fifth (the
  // exposure per kind, when it has no kernel); the others are read by its own events. The next events'
  // slots are fetched whole while this one is handled (prefetch_slot).
  struct alignas(64) RankSlot {
    // The kernel its compute stream runs, if any (set_speed's fields).
    TaskId task = kNone;
    std::uint32_t version = 0;
    Time remaining = 0;
    Time last_update = 0;
    std::uint32_t stage = 0;      // its template rank
    Time last = 0;                // when the exposure was last brought up to date
    std::uint8_t comm = 0;        // data-moving collectives (the reference's active_comm_): one a stream at most
    std::uint8_t kernels = 0;     // plain tasks running: the compute stream's, one at most
    bool slowed = false;          // the kernel runs slowed by communication
    bool representative = false;  // its records are kept
    std::uint8_t busy = 0;        // per stream (bit): a task runs on it
    Category category = Category::compute;  // the kernel's
    std::array<std::uint8_t, kNumCategories> kind{};  // data-moving collectives per category
    // The second line.
    alignas(64) const Time* base = nullptr;  // its GPU type's full-speed durations (StepTemplate::base)
    double slowdown = 1;          // StepTemplate::rank_slowdown
    double kernel_square_sum = 0;
    Time compute = 0;             // RankTotals::compute
    std::array<std::uint32_t, kStreamsPerRank> head{};  // per stream: its next task, by position in the stream
    std::array<Time, kStreamsPerRank> start{};          // per stream: when its current task began
    Time exposed = 0;                                   // RankTotals::exposed
    std::array<Time, kNumCategories> busy_time{};       // RankTotals::busy
    std::array<Time, kNumCategories> exposed_by_kind{};
  };
  // Six lines since DualPipeV's four streams (task_graph.hpp) lengthened head and start (five before).
  static_assert(sizeof(RankSlot) == 6 * 64 && offsetof(RankSlot, base) == 64);

  // The predecessors of template task t that rank `st` has not finished (see the constructor).
  int pending(const RankSlot& st, TaskId t) const {
    int n = 0;
    for (std::uint32_t i = pred_begin_[t]; i < pred_begin_[t + 1]; ++i) n += st.head[preds_[i].stream] <= preds_[i].index;
    return n;
  }
  bool ready(const RankSlot& st, TaskId t) const {
    for (std::uint32_t i = pred_begin_[t]; i < pred_begin_[t + 1]; ++i)
      if (st.head[preds_[i].stream] <= preds_[i].index) return false;
    return true;
  }

  // Brings the rank's exposed communication up to now (its state is about to change).
  void advance(RankSlot& st) {
    const Time now = queue_.now();
    if (now != st.last && st.kernels == 0 && st.comm > 0) {
      const Time dt = now - st.last;
      st.exposed += dt;
      for (std::size_t k = 0; k < kNumCategories; ++k)
        if (st.kind[k] > 0) st.exposed_by_kind[k] += dt;
    }
    st.last = now;
  }

  static std::uint8_t bit(StreamKind stream) { return static_cast<std::uint8_t>(1u << static_cast<unsigned>(stream)); }

  void try_start(std::uint32_t rank, StreamKind stream) {
    RankSlot& st = ranks_[rank];
    const auto s = static_cast<std::size_t>(stream);
    if (st.busy & bit(stream)) return;
    const auto& list = g_.stream_tasks(static_cast<int>(st.stage), stream);
    if (st.head[s] >= list.size()) return;
    const TaskId t = list[st.head[s]];
    if (!ready(st, t)) return;
    st.busy |= bit(stream);
    const Start& task = starts_[t];
    if (st.representative) result_.records[t].arrive = queue_.now();
    if (task.collective == kNone) {
      st.category = task.category;
      start_compute(rank, st, s, t);
      return;
    }
    const TemplateInstances::Meeting where = inst_.meeting({task.first_slot, task.column}, rank);
    if (++arrived_[where.slot] < where.size) return;
    const auto members = inst_.ranks(where);
    for (const std::uint32_t m : members) {
      RankSlot& ms = ranks_[m];
      const Member& mm = member(task.collective, ms.stage);
      ms.start[static_cast<std::size_t>(mm.stream)] = queue_.now();
      if (ms.representative) result_.records[mm.task].start = queue_.now();
      set_comm_active(m, ms, +1, mm.category);
    }
    const std::uint32_t id = inst_.instance_of_slot(where.slot);
    inst_.begin(id, task.collective, where);
    network_.start(id, queue_.now());
  }

  struct Member {
    std::uint32_t stage;
    TaskId task;
    StreamKind stream;
    Category category;
  };
  const Member& member(std::uint32_t c, std::uint32_t stage) const {
    for (std::uint32_t i = member_begin_[c]; i + 1 < member_begin_[c + 1]; ++i)
      if (members_[i].stage == stage) return members_[i];
    CS_CHECK(members_[member_begin_[c + 1] - 1].stage == stage);
    return members_[member_begin_[c + 1] - 1];
  }

  // Each event reads its rank's slot and, at a collective's arrival, its seats, a cache miss at 10^4 ranks
  // whose events interleave: the next event's and the fourth's (KernelQueue::peek_targets) are fetched
  // while this one is handled.
  void prefetch_ahead() const {
    const auto [next, ahead] = queue_.peek_targets();
    if (next < ranks_.size()) {
      queue_.prefetch(next);
      prefetch_slot(next);
    }
    if (ahead < ranks_.size()) prefetch_slot(ahead);
  }
  void prefetch_slot(std::uint32_t rank) const {
    const char* p = reinterpret_cast<const char*>(&ranks_[rank]);
    for (std::size_t line = 0; line < sizeof(RankSlot); line += 64) __builtin_prefetch(p + line);
    inst_.prefetch(rank);
  }

  // `t` (a compute task of the rank's template) on the rank: the builder's Builder::slowed, from the rank's
  // slot rather than StepTemplate's per-rank type and slowdown (two more misses, 6 % of try_start).
  static Time duration(const RankSlot& st, TaskId t) {
    const Time b = st.base[t];
    return st.slowdown == 1 ? b : static_cast<Time>(std::llround(static_cast<double>(b) * st.slowdown));
  }

  void start_compute(std::uint32_t rank, RankSlot& st, std::size_t s, TaskId t) {
    CS_CHECK(st.task == kNone);
    const Time d = duration(st, t);
    st.task = t;
    st.remaining = d;
    st.last_update = queue_.now();
    st.slowed = st.comm > 0;  // plain tasks run on the compute stream only
    st.start[s] = queue_.now();
    if (st.representative) result_.records[t].start = queue_.now();
    const double seconds = to_seconds(d);
    st.kernel_square_sum += seconds * seconds;
    advance(st);
    ++st.kernels;
    schedule_compute_done(st, rank);
  }

  void schedule_compute_done(RankSlot& st, std::uint32_t rank) {
    ++st.version;
    queue_.schedule(queue_.now() + wall_time(st.remaining, st.slowed, slowdown_), rank, (st.version << kTagBits) | kComputeDone);
  }

  void set_comm_active(std::uint32_t rank, RankSlot& st, int delta, Category category) {
    advance(st);
    auto& kind = st.kind[static_cast<std::size_t>(category)];
    kind = static_cast<std::uint8_t>(static_cast<int>(kind) + delta);
    st.comm = static_cast<std::uint8_t>(static_cast<int>(st.comm) + delta);
    if (set_speed(st, st.comm > 0, queue_.now(), slowdown_)) schedule_compute_done(st, rank);
  }

  void on_compute_done(std::uint32_t rank, std::uint32_t version) {
    RankSlot& st = ranks_[rank];
    if (st.task == kNone || (st.version & (UINT32_MAX >> kTagBits)) != version) return;  // stale
    const TaskId t = st.task;
    st.task = kNone;
    advance(st);
    --st.kernels;
    st.compute += queue_.now() - st.start[static_cast<std::size_t>(StreamKind::compute)];
    finish(rank, st, t, StreamKind::compute, st.category);
  }

  // The rank slots of a collective's members (prefetch_slot): the network's
  // completions at one time come as a batch (a stage's tensor-parallel groups finish together), so the next
  // collective's are fetched while this one's are handled.
  void prefetch_members(std::uint32_t id) const {
    for (const std::uint32_t m : inst_.running(id).members) prefetch_slot(m);
  }

  void on_collective_done(std::uint32_t id) {
    const auto [c, members] = inst_.running(id);
    inst_.end(id);
    for (const std::uint32_t m : members) set_comm_active(m, ranks_[m], -1, member(c, ranks_[m].stage).category);
    for (const std::uint32_t m : members) {
      const Member& mm = member(c, ranks_[m].stage);
      finish(m, ranks_[m], mm.task, mm.stream, mm.category);
    }
  }

  // Task t of the rank, on `stream` and counted as `category`, ends: both passed by the caller (the
  // running kernel's, the collective member's), and each successor's stream kept beside it in triggers_, so
  // that no task record is read (a miss per task: 15 % of the loop's own time).
  void finish(std::uint32_t rank, RankSlot& st, TaskId t, StreamKind stream, Category category) {
    const Time now = queue_.now();
    const auto s = static_cast<std::size_t>(stream);
    st.busy_time[static_cast<std::size_t>(category)] += now - st.start[s];
    if (st.representative) result_.records[t].end = now;
    st.busy &= static_cast<std::uint8_t>(~bit(stream));
    ++st.head[s];
    for (std::uint32_t i = trigger_begin_[t]; i < trigger_begin_[t + 1]; ++i)
      if (ready(st, triggers_[i].task)) try_start(rank, triggers_[i].stream);
    try_start(rank, stream);
  }

  void check_finished() {
    std::ostringstream blocked;
    int count = 0;
    for (std::uint32_t r = 0; r < t_.num_ranks(); ++r) {
      const RankSlot& st = ranks_[r];
      for (int s = 0; s < kStreamsPerRank; ++s) {
        const auto& list = g_.stream_tasks(static_cast<int>(st.stage), static_cast<StreamKind>(s));
        const std::size_t h = st.head[static_cast<std::size_t>(s)];
        if (h >= list.size()) continue;
        const Task& t = g_.tasks()[list[h]];
        const int waiting = pending(st, list[h]);
        if (count++ < 8) {
          blocked << (count > 1 ? "; " : "") << "rank " << r << " stream " << to_string(t.stream) << " at '" << g_.name(t.name)
                  << "' (micro-batch " << t.micro_batch << ", ";
          if (t.collective != kNone && waiting == 0) {
            const TemplateInstances::Meeting where = inst_.meeting(t.collective, r);
            blocked << arrived_[where.slot] << "/" << where.size << " members arrived)";
          } else {
            blocked << waiting << " dependencies pending)";
          }
        }
      }
    }
    if (count > 0) {
      std::ostringstream msg;
      msg << "deadlock: " << count << " streams blocked: " << blocked.str();
      throw DeadlockError(msg.str());
    }
  }

  const StepTemplate& t_;
  const TaskGraph& g_;
  const TemplateInstances& inst_;
  CommBackend& network_;
  double slowdown_;
  TemplateResult result_;
  KernelQueue queue_;
  HugeVector<RankSlot> ranks_;
  HugeVector<std::uint16_t> arrived_;  // per slot
  std::vector<TaskId> first_;           // per template rank: its first task
  // Per template task: its predecessors' streams and places there, and the successors its finish may start.
  struct Place {
    std::uint32_t index;
    std::uint8_t stream;
  };
  struct Trigger {
    TaskId task;
    StreamKind stream;
  };
  std::vector<std::uint32_t> pred_begin_;
  std::vector<Place> preds_;
  std::vector<std::uint32_t> trigger_begin_;
  std::vector<Trigger> triggers_;
  // Per template task what try_start reads of it, its collective's meeting inputs included: 12 bytes where
  // the Task and then the collective's Issue were two dependent reads of 24 and 8.
  struct Start {
    std::uint32_t collective, first_slot;
    std::uint16_t column;
    Category category;
  };
  std::vector<Start> starts_;
  std::vector<std::uint32_t> member_begin_;  // per template collective: its run in members_
  std::vector<Member> members_;
};

}  // namespace

TemplateResult execute_template(const StepTemplate& t, const TemplateInstances& instances, CommBackend& network,
                                const ExecutorOptions& options) {
  return TemplateExecutor(t, instances, network, options).run();
}

}  // namespace cs::sim
