#include "sim/engine/template_executor.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "sim/base/check.hpp"
#include "sim/engine/cancel.hpp"
#include "sim/engine/event_queue.hpp"

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

  sorted_.resize(g.num_groups());
  self_.resize(g.num_groups());
  for (std::uint32_t k = 0; k < g.num_groups(); ++k) {
    for (const int gpu : g.group(k)) {
      CS_CHECK(gpu >= 0 && static_cast<std::uint32_t>(gpu) < n);
      sorted_[k].push_back(static_cast<std::uint32_t>(gpu));
    }
    std::sort(sorted_[k].begin(), sorted_[k].end());
    self_[k] = {k};
  }
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
      for (const std::uint32_t rank : sorted_[mirrors[i]]) {
        CS_CHECK(index[rank] == kNone);
        index[rank] = i;
      }
  }
  // Number the instances as the one-by-one builder does: rank by rank, each rank's collectives in issue
  // order, a new one wherever the rank is its group's first (lowest) member.
  slot_id_.assign(slots, kNone);
  for (std::uint32_t r = 0; r < n; ++r) {
    const std::uint32_t k = t.template_rank[r];
    CS_CHECK(k < static_cast<std::uint32_t>(g.num_ranks()));
    tasks_ += first[k + 1] - first[k];
    for (TaskId id = first[k]; id < first[k + 1]; ++id) {
      const std::uint32_t c = tasks[id].collective;
      if (c == kNone) continue;
      const std::uint32_t group = g.collectives()[c].group;
      const std::uint32_t mirror = mirror_index_[group][r];
      CS_CHECK(mirror != kNone);
      const std::uint32_t real = g.mirrors(group)[mirror];
      if (sorted_[real].front() != r) continue;
      std::uint32_t& id_of = slot_id_[first_slot_[c] + mirror];
      CS_CHECK(id_of == kNone);
      id_of = static_cast<std::uint32_t>(collective_.size());
      collective_.push_back(c);
      group_.push_back(real);
    }
  }
  for (const std::uint32_t id : slot_id_) CS_CHECK(id != kNone);
}

CollectiveSpec TemplateInstances::collective(std::uint32_t c) const {
  CollectiveSpec spec = t_.graph->collectives()[collective_[c]];
  spec.group = group_[c];
  return spec;
}

void TemplateInstances::member_ranks(std::uint32_t c, std::vector<std::uint32_t>& out) const {
  const auto& m = members_of(c);
  out.insert(out.end(), m.begin(), m.end());
}

std::uint32_t TemplateInstances::instance(std::uint32_t c, std::uint32_t rank) const {
  const std::uint32_t group = t_.graph->collectives()[c].group;
  const std::uint32_t mirror = mirror_index_[group][rank];
  CS_CHECK(mirror != kNone);
  return slot_id_[first_slot_[c] + mirror];
}

namespace {

constexpr std::uint32_t kTagBits = 1;
constexpr std::uint32_t kComputeDone = 0;

// The reference executor (executor.cpp) step for step, on (real rank, template task) instead of a task.
class TemplateExecutor {
 public:
  TemplateExecutor(const StepTemplate& t, const TemplateInstances& inst, CommBackend& network, const ExecutorOptions& o)
      : t_(t),
        g_(*t.graph),
        inst_(inst),
        network_(network),
        slowdown_(1.0 + o.comm_compute_contention),
        head_(static_cast<std::size_t>(t.num_ranks()) * kStreamsPerRank, 0),
        busy_(head_.size(), 0),
        start_(head_.size(), 0),
        running_(head_.size()),
        arrived_(inst.num_collectives(), 0),
        ranks_(t.num_ranks()),
        first_(static_cast<std::size_t>(g_.num_ranks()) + 1, 0),
        offset_(t.num_ranks(), 0) {
    CS_CHECK(o.comm_compute_contention >= 0);
    const auto& tasks = g_.tasks();
    for (TaskId id = 0; id < tasks.size(); ++id) first_[tasks[id].rank + 1] = id + 1;
    for (std::size_t k = 1; k < first_.size(); ++k) first_[k] = std::max(first_[k], first_[k - 1]);
    // Dependencies left, one byte a task: every rank starts from its template's counts.
    std::vector<std::uint8_t> preds(tasks.size());
    for (TaskId id = 0; id < tasks.size(); ++id) {
      CS_CHECK(g_.num_predecessors(id) <= UINT8_MAX);
      preds[id] = static_cast<std::uint8_t>(g_.num_predecessors(id));
      // A rank's kernels run one at a time on its compute stream, so their union is the sum of their times.
      CS_CHECK(tasks[id].collective != kNone || tasks[id].stream == StreamKind::compute);
      for (const TaskId* s = g_.successors_begin(id); s != g_.successors_end(id); ++s) CS_CHECK(tasks[*s].rank == tasks[id].rank);
    }
    std::uint64_t total = 0;
    for (std::uint32_t r = 0; r < t.num_ranks(); ++r) {
      offset_[r] = total;
      const std::uint32_t k = t.template_rank[r];
      total += first_[k + 1] - first_[k];
    }
    deps_left_.resize(total);
    for (std::uint32_t r = 0; r < t.num_ranks(); ++r) {
      const std::uint32_t k = t.template_rank[r];
      std::copy(preds.begin() + first_[k], preds.begin() + first_[k + 1], deps_left_.begin() + static_cast<std::ptrdiff_t>(offset_[r]));
    }
    // Each template collective's member task per template rank (a pipeline pair has two).
    member_task_.resize(g_.collectives().size());
    for (std::size_t c = 0; c < g_.collectives().size(); ++c)
      for (const TaskId m : g_.collectives()[c].members) member_task_[c].push_back(m);
    is_rep_.assign(t.num_ranks(), 0);
    for (const std::uint32_t r : t.representative) is_rep_[r] = 1;
    result_.records.resize(tasks.size());
    result_.ranks.resize(t.num_ranks());
    result_.kernel_square_sum.assign(t.num_ranks(), 0.0);
    queue_.reserve(1024);
  }

  TemplateResult run() {
    for (std::uint32_t r = 0; r < t_.num_ranks(); ++r)
      for (int s = 0; s < kStreamsPerRank; ++s) try_start(stream_index(r, static_cast<StreamKind>(s)));
    std::vector<std::uint32_t> done;
    while (true) {
      const Time next_local = queue_.next_time();
      const Time next_network = network_.next_completion();
      if (next_local == kNever && next_network == kNever) break;
      ++result_.events;
      poll_cancel();
      if (next_network < next_local) {
        queue_.advance_to(next_network);
        network_.pop_completed(next_network, done);
        for (const std::uint32_t c : done) on_collective_done(c);
        done.clear();
        continue;
      }
      const Event e = queue_.pop();
      on_compute_done(e.target, e.tag >> kTagBits);
    }
    check_finished();
    result_.makespan = queue_.now();
    return std::move(result_);
  }

 private:
  struct Running {
    TaskId task = kNone;
    Time remaining = 0;
    Time last_update = 0;
    bool slowed = false;
    std::uint32_t version = 0;
  };
  struct RankState {
    Time last = 0;                   // when the exposure below was last brought up to date
    std::uint32_t comm = 0;          // data-moving collectives (the reference's active_comm_)
    std::uint32_t kernels = 0;       // plain tasks running
    std::array<std::uint16_t, kNumCategories> kind{};  // data-moving collectives per category
  };

  static std::size_t stream_index(std::uint32_t rank, StreamKind s) {
    return static_cast<std::size_t>(rank) * kStreamsPerRank + static_cast<std::size_t>(s);
  }
  std::uint8_t& deps(std::uint32_t rank, TaskId t) {
    return deps_left_[offset_[rank] + (t - first_[t_.template_rank[rank]])];
  }

  // Brings the rank's exposed communication up to now (its state is about to change).
  void advance(std::uint32_t rank) {
    RankState& st = state_of(rank);
    const Time now = queue_.now();
    if (now != st.last && st.kernels == 0) {
      const Time dt = now - st.last;
      RankTotals& tot = result_.ranks[rank];
      if (st.comm > 0) tot.exposed += dt;
      for (std::size_t k = 0; k < kNumCategories; ++k)
        if (st.kind[k] > 0) tot.exposed_by_kind[k] += dt;
    }
    st.last = now;
  }
  RankState& state_of(std::uint32_t rank) { return ranks_[rank]; }

  void try_start(std::size_t si) {
    if (busy_[si]) return;
    const auto rank = static_cast<std::uint32_t>(si / kStreamsPerRank);
    const std::uint32_t k = t_.template_rank[rank];
    const auto& list = g_.stream_tasks(static_cast<int>(k), static_cast<StreamKind>(si % kStreamsPerRank));
    if (head_[si] >= list.size()) return;
    const TaskId t = list[head_[si]];
    if (deps(rank, t) != 0) return;
    busy_[si] = 1;
    const Task& task = g_.tasks()[t];
    if (is_rep_[rank]) result_.records[t].arrive = queue_.now();
    if (task.collective == kNone) {
      start_compute(rank, si, t);
      return;
    }
    const std::uint32_t id = inst_.instance(task.collective, rank);
    const auto& members = inst_.members_of(id);
    if (++arrived_[id] < members.size()) return;
    for (const std::uint32_t m : members) {
      const TaskId mt = member_task(task.collective, m);
      start_[stream_index(m, g_.tasks()[mt].stream)] = queue_.now();
      if (is_rep_[m]) result_.records[mt].start = queue_.now();
      set_comm_active(m, +1, g_.tasks()[mt].category);
    }
    network_.start(id, queue_.now());
  }

  TaskId member_task(std::uint32_t c, std::uint32_t rank) const {
    const std::uint32_t k = t_.template_rank[rank];
    for (const TaskId m : member_task_[c])
      if (g_.tasks()[m].rank == k) return m;
    CS_CHECK(false);
    return kNone;
  }

  void start_compute(std::uint32_t rank, std::size_t si, TaskId t) {
    const Task& task = g_.tasks()[t];
    Running& run = running_[si];
    CS_CHECK(run.task == kNone);
    const Time duration = t_.duration(rank, t);
    run.task = t;
    run.remaining = duration;
    run.last_update = queue_.now();
    run.slowed = task.stream == StreamKind::compute && state_of(rank).comm > 0;
    start_[si] = queue_.now();
    if (is_rep_[rank]) result_.records[t].start = queue_.now();
    if (task.stream == StreamKind::compute) {
      const double d = to_seconds(duration);
      result_.kernel_square_sum[rank] += d * d;
    }
    advance(rank);
    ++state_of(rank).kernels;
    schedule_compute_done(run, si);
  }

  Time wall_time_for(const Running& run) const {
    return run.slowed ? static_cast<Time>(std::llround(static_cast<double>(run.remaining) * slowdown_)) : run.remaining;
  }

  void schedule_compute_done(Running& run, std::size_t si) {
    ++run.version;
    queue_.schedule(queue_.now() + wall_time_for(run), static_cast<std::uint32_t>(si), (run.version << kTagBits) | kComputeDone);
  }

  void set_comm_active(std::uint32_t rank, int delta, Category category) {
    advance(rank);
    RankState& st = state_of(rank);
    st.kind[static_cast<std::size_t>(category)] =
        static_cast<std::uint16_t>(static_cast<int>(st.kind[static_cast<std::size_t>(category)]) + delta);
    st.comm = static_cast<std::uint32_t>(static_cast<int>(st.comm) + delta);
    const std::size_t si = stream_index(rank, StreamKind::compute);
    Running& run = running_[si];
    const bool slowed = st.comm > 0;
    if (run.task == kNone || slowed == run.slowed || slowdown_ == 1.0) {
      run.slowed = slowed;
      return;
    }
    const Time elapsed = queue_.now() - run.last_update;
    const Time done = run.slowed ? static_cast<Time>(std::llround(static_cast<double>(elapsed) / slowdown_)) : elapsed;
    run.remaining = std::max<Time>(0, run.remaining - done);
    run.last_update = queue_.now();
    run.slowed = slowed;
    schedule_compute_done(run, si);
  }

  void on_compute_done(std::uint32_t si, std::uint32_t version) {
    Running& run = running_[si];
    if (run.task == kNone || (run.version & (UINT32_MAX >> kTagBits)) != version) return;  // stale
    const TaskId t = run.task;
    run.task = kNone;
    const auto rank = static_cast<std::uint32_t>(si / kStreamsPerRank);
    advance(rank);
    --state_of(rank).kernels;
    result_.ranks[rank].compute += queue_.now() - start_[si];
    finish(rank, si, t);
  }

  void on_collective_done(std::uint32_t id) {
    const std::uint32_t c = inst_.template_collective(id);
    const auto& members = inst_.members_of(id);
    for (const std::uint32_t m : members) set_comm_active(m, -1, g_.tasks()[member_task(c, m)].category);
    for (const std::uint32_t m : members) {
      const TaskId mt = member_task(c, m);
      finish(m, stream_index(m, g_.tasks()[mt].stream), mt);
    }
  }

  void finish(std::uint32_t rank, std::size_t si, TaskId t) {
    const Task& task = g_.tasks()[t];
    const Time now = queue_.now();
    result_.ranks[rank].busy[static_cast<std::size_t>(task.category)] += now - start_[si];
    if (is_rep_[rank]) result_.records[t].end = now;
    busy_[si] = 0;
    ++head_[si];
    for (const TaskId* s = g_.successors_begin(t); s != g_.successors_end(t); ++s)
      if (--deps(rank, *s) == 0) try_start(stream_index(rank, g_.tasks()[*s].stream));
    try_start(si);
  }

  void check_finished() {
    std::ostringstream blocked;
    int count = 0;
    for (std::uint32_t r = 0; r < t_.num_ranks(); ++r) {
      for (int s = 0; s < kStreamsPerRank; ++s) {
        const auto& list = g_.stream_tasks(static_cast<int>(t_.template_rank[r]), static_cast<StreamKind>(s));
        const std::size_t h = head_[stream_index(r, static_cast<StreamKind>(s))];
        if (h >= list.size()) continue;
        const Task& t = g_.tasks()[list[h]];
        if (count++ < 8) {
          blocked << (count > 1 ? "; " : "") << "rank " << r << " stream " << to_string(t.stream) << " at '" << g_.name(t.name)
                  << "' (micro-batch " << t.micro_batch << ", ";
          if (t.collective != kNone && deps(r, list[h]) == 0) {
            const std::uint32_t id = inst_.instance(t.collective, r);
            blocked << arrived_[id] << "/" << inst_.members_of(id).size() << " members arrived)";
          } else {
            blocked << static_cast<int>(deps(r, list[h])) << " dependencies pending)";
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
  EventQueue queue_;
  TemplateResult result_;
  std::vector<std::uint32_t> head_;
  std::vector<std::uint8_t> busy_;
  std::vector<Time> start_;  // when each stream's current task began
  std::vector<Running> running_;
  std::vector<std::uint16_t> arrived_;
  std::vector<RankState> ranks_;
  std::vector<TaskId> first_;           // per template rank: its first task
  std::vector<std::uint64_t> offset_;   // per real rank: its first slot in deps_left_
  std::vector<std::uint8_t> deps_left_;
  std::vector<std::vector<TaskId>> member_task_;
  std::vector<std::uint8_t> is_rep_;
};

}  // namespace

TemplateResult execute_template(const StepTemplate& t, const TemplateInstances& instances, CommBackend& network,
                                const ExecutorOptions& options) {
  return TemplateExecutor(t, instances, network, options).run();
}

}  // namespace cs::sim
