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
  // Each template group's mirrors partition the ranks of its stage(s): a rank's mirror is the one holding it.
  mirror_index_.resize(g.num_groups());
  first_slot_.reserve(g.collectives().size());
  std::uint32_t slots = 0;
  for (const Collective& c : g.collectives()) {
    first_slot_.push_back(slots);
    const auto& mirrors = g.mirrors(c.group);
    slots += static_cast<std::uint32_t>(mirrors.size());
    auto& index = mirror_index_[c.group];
    if (!index.empty()) continue;
    index.assign(n, kNone);
    for (std::uint32_t i = 0; i < mirrors.size(); ++i)
      for (const std::uint32_t rank : ranks_of(mirrors[i])) {
        CS_CHECK(index[rank] == kNone);
        index[rank] = i;
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
      const std::uint32_t mirror = mirror_index_[group][r];
      CS_CHECK(mirror != kNone);
      const std::uint32_t real = g.mirrors(group)[mirror];
      if (ranks_of(real).front() != r) continue;
      std::uint32_t& id_of = slot_id_[first_slot_[c] + mirror];
      CS_CHECK(id_of == kNone);
      id_of = static_cast<std::uint32_t>(of_.size());
      of_.push_back({c, real});
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

void TemplateInstances::begin(std::uint32_t instance, std::uint32_t collective, std::uint32_t group) const {
  if (2 * (in_flight_count_ + 1) > in_flight_.size()) {  // grow: re-insert into twice the room
    std::vector<InFlight> old(2 * in_flight_.size());
    old.swap(in_flight_);
    in_flight_count_ = 0;
    for (const InFlight& f : old)
      if (f.id != kNone) begin(f.id, f.collective, f.group);
  }
  const std::size_t mask = in_flight_.size() - 1;
  std::size_t i = hash(instance) & mask;
  while (in_flight_[i].id != kNone) {
    CS_CHECK(in_flight_[i].id != instance);
    i = (i + 1) & mask;
  }
  in_flight_[i] = {instance, collective, group};
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
  // The rank of the event pop() returns next (kNone: none), so that its state can be fetched early.
  std::uint32_t peek_target() const {
    if (fifo_head_ < fifo_.size()) return fifo_[fifo_head_].target;
    return heap_.empty() ? kNone : front().target;
  }
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
      for (const TaskId m : g_.collectives()[c].members) members_.push_back({tasks[m].rank, m, tasks[m].category});
    }
    member_begin_.push_back(static_cast<std::uint32_t>(members_.size()));
    for (const std::uint32_t r : t.representative) ranks_[r].representative = true;
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
      result_.ranks.push_back(r.totals);
      result_.kernel_square_sum.push_back(r.kernel_square_sum);
    }
    return std::move(result_);
  }

 private:
  struct Running {  // the kernel the rank's compute stream runs, if any
    TaskId task = kNone;
    std::uint32_t version = 0;
    Time remaining = 0;
    Time last_update = 0;
    bool slowed = false;
  };
  struct StreamSlot {
    Time start = 0;          // when its current task began
    std::uint32_t head = 0;  // its next task, by position in the template's stream
    std::uint8_t busy = 0;
  };
  struct RankSlot {
    Running run;
    std::uint32_t stage = 0;         // its template rank
    bool representative = false;     // its records are kept
    Time last = 0;                   // when the exposure below was last brought up to date
    std::uint32_t comm = 0;          // data-moving collectives (the reference's active_comm_)
    std::uint32_t kernels = 0;       // plain tasks running
    std::array<std::uint16_t, kNumCategories> kind{};  // data-moving collectives per category
    std::array<StreamSlot, kStreamsPerRank> streams{};
    RankTotals totals;
    double kernel_square_sum = 0;
  };

  // The predecessors of template task t that rank `st` has not finished (see the constructor).
  int pending(const RankSlot& st, TaskId t) const {
    int n = 0;
    for (std::uint32_t i = pred_begin_[t]; i < pred_begin_[t + 1]; ++i) n += st.streams[preds_[i].stream].head <= preds_[i].index;
    return n;
  }
  bool ready(const RankSlot& st, TaskId t) const {
    for (std::uint32_t i = pred_begin_[t]; i < pred_begin_[t + 1]; ++i)
      if (st.streams[preds_[i].stream].head <= preds_[i].index) return false;
    return true;
  }

  // Brings the rank's exposed communication up to now (its state is about to change).
  void advance(RankSlot& st) {
    const Time now = queue_.now();
    if (now != st.last && st.kernels == 0 && st.comm > 0) {
      const Time dt = now - st.last;
      st.totals.exposed += dt;
      for (std::size_t k = 0; k < kNumCategories; ++k)
        if (st.kind[k] > 0) st.totals.exposed_by_kind[k] += dt;
    }
    st.last = now;
  }

  void try_start(std::uint32_t rank, StreamKind stream) {
    RankSlot& st = ranks_[rank];
    StreamSlot& ss = st.streams[static_cast<std::size_t>(stream)];
    if (ss.busy) return;
    const auto& list = g_.stream_tasks(static_cast<int>(st.stage), stream);
    if (ss.head >= list.size()) return;
    const TaskId t = list[ss.head];
    if (!ready(st, t)) return;
    ss.busy = 1;
    const Task& task = g_.tasks()[t];
    if (st.representative) result_.records[t].arrive = queue_.now();
    if (task.collective == kNone) {
      start_compute(rank, st, ss, t);
      return;
    }
    const TemplateInstances::Meeting where = inst_.meeting(task.collective, rank);
    const auto members = inst_.ranks_of(where.group);
    if (++arrived_[where.slot] < members.size()) return;
    for (const std::uint32_t m : members) {
      const TaskId mt = member_task(task.collective, ranks_[m].stage);
      const Task& mtask = g_.tasks()[mt];
      RankSlot& ms = ranks_[m];
      ms.streams[static_cast<std::size_t>(mtask.stream)].start = queue_.now();
      if (ms.representative) result_.records[mt].start = queue_.now();
      set_comm_active(m, ms, +1, mtask.category);
    }
    const std::uint32_t id = inst_.instance_of_slot(where.slot);
    inst_.begin(id, task.collective, where.group);
    network_.start(id, queue_.now());
  }

  struct Member {
    std::uint32_t stage;
    TaskId task;
    Category category;
  };
  const Member& member(std::uint32_t c, std::uint32_t stage) const {
    for (std::uint32_t i = member_begin_[c]; i + 1 < member_begin_[c + 1]; ++i)
      if (members_[i].stage == stage) return members_[i];
    CS_CHECK(members_[member_begin_[c + 1] - 1].stage == stage);
    return members_[member_begin_[c + 1] - 1];
  }
  TaskId member_task(std::uint32_t c, std::uint32_t stage) const { return member(c, stage).task; }

  // Each event reads its rank's slot, a cache miss at 10^4 ranks whose events interleave: the next
  // event's is fetched while this one is handled, the lines an event reads before the totals (its kernel,
  // dependency base, counters and streams).
  void prefetch_ahead() const {
    const std::uint32_t next = queue_.peek_target();
    if (next < ranks_.size()) prefetch_slot(next);
  }
  void prefetch_slot(std::uint32_t rank) const {
    const char* p = reinterpret_cast<const char*>(&ranks_[rank]);
    for (std::size_t line = 0; line < offsetof(RankSlot, totals); line += 64) __builtin_prefetch(p + line);
  }

  void start_compute(std::uint32_t rank, RankSlot& st, StreamSlot& ss, TaskId t) {
    Running& run = st.run;
    CS_CHECK(run.task == kNone);
    const Time duration = t_.duration(rank, t);
    run.task = t;
    run.remaining = duration;
    run.last_update = queue_.now();
    run.slowed = st.comm > 0;  // plain tasks run on the compute stream only
    ss.start = queue_.now();
    if (st.representative) result_.records[t].start = queue_.now();
    const double d = to_seconds(duration);
    st.kernel_square_sum += d * d;
    advance(st);
    ++st.kernels;
    schedule_compute_done(run, rank);
  }

  Time wall_time_for(const Running& run) const { return wall_time(run.remaining, run.slowed, slowdown_); }

  void schedule_compute_done(Running& run, std::uint32_t rank) {
    ++run.version;
    queue_.schedule(queue_.now() + wall_time_for(run), rank, (run.version << kTagBits) | kComputeDone);
  }

  void set_comm_active(std::uint32_t rank, RankSlot& st, int delta, Category category) {
    advance(st);
    auto& kind = st.kind[static_cast<std::size_t>(category)];
    kind = static_cast<std::uint16_t>(static_cast<int>(kind) + delta);
    st.comm = static_cast<std::uint32_t>(static_cast<int>(st.comm) + delta);
    if (set_speed(st.run, st.comm > 0, queue_.now(), slowdown_)) schedule_compute_done(st.run, rank);
  }

  void on_compute_done(std::uint32_t rank, std::uint32_t version) {
    RankSlot& st = ranks_[rank];
    Running& run = st.run;
    if (run.task == kNone || (run.version & (UINT32_MAX >> kTagBits)) != version) return;  // stale
    const TaskId t = run.task;
    run.task = kNone;
    advance(st);
    --st.kernels;
    st.totals.compute += queue_.now() - st.streams[static_cast<std::size_t>(StreamKind::compute)].start;
    finish(rank, st, t);
  }

  // The rank slots of a collective's members (prefetch_slot): the network's
  // completions at one time come as a batch (a stage's tensor-parallel groups finish together), so the next
  // collective's are fetched while this one's are handled.
  void prefetch_members(std::uint32_t id) const {
    for (const std::uint32_t m : inst_.members_of(id)) prefetch_slot(m);
  }

  void on_collective_done(std::uint32_t id) {
    const TemplateInstances::Of of = inst_.of(id);
    inst_.end(id);
    const std::uint32_t c = of.collective;
    const auto members = inst_.ranks_of(of.group);
    for (const std::uint32_t m : members) set_comm_active(m, ranks_[m], -1, member(c, ranks_[m].stage).category);
    for (const std::uint32_t m : members) finish(m, ranks_[m], member_task(c, ranks_[m].stage));
  }

  void finish(std::uint32_t rank, RankSlot& st, TaskId t) {
    const Task& task = g_.tasks()[t];
    const Time now = queue_.now();
    StreamSlot& ss = st.streams[static_cast<std::size_t>(task.stream)];
    st.totals.busy[static_cast<std::size_t>(task.category)] += now - ss.start;
    if (st.representative) result_.records[t].end = now;
    ss.busy = 0;
    ++ss.head;
    for (std::uint32_t i = trigger_begin_[t]; i < trigger_begin_[t + 1]; ++i)
      if (ready(st, triggers_[i].task)) try_start(rank, triggers_[i].stream);
    try_start(rank, task.stream);
  }

  void check_finished() {
    std::ostringstream blocked;
    int count = 0;
    for (std::uint32_t r = 0; r < t_.num_ranks(); ++r) {
      const RankSlot& st = ranks_[r];
      for (int s = 0; s < kStreamsPerRank; ++s) {
        const auto& list = g_.stream_tasks(static_cast<int>(st.stage), static_cast<StreamKind>(s));
        const std::size_t h = st.streams[static_cast<std::size_t>(s)].head;
        if (h >= list.size()) continue;
        const Task& t = g_.tasks()[list[h]];
        const int waiting = pending(st, list[h]);
        if (count++ < 8) {
          blocked << (count > 1 ? "; " : "") << "rank " << r << " stream " << to_string(t.stream) << " at '" << g_.name(t.name)
                  << "' (micro-batch " << t.micro_batch << ", ";
          if (t.collective != kNone && waiting == 0) {
            const TemplateInstances::Meeting where = inst_.meeting(t.collective, r);
            blocked << arrived_[where.slot] << "/" << inst_.ranks_of(where.group).size() << " members arrived)";
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
  std::vector<std::uint32_t> member_begin_;  // per template collective: its run in members_
  std::vector<Member> members_;
};

}  // namespace

TemplateResult execute_template(const StepTemplate& t, const TemplateInstances& instances, CommBackend& network,
                                const ExecutorOptions& options) {
  return TemplateExecutor(t, instances, network, options).run();
}

}  // namespace cs::sim
