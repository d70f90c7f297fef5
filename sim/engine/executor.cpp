#include "sim/engine/executor.hpp"

#include <cmath>
#include <sstream>

#include "sim/base/check.hpp"
#include "sim/engine/cancel.hpp"
#include "sim/engine/event_loop.hpp"
#include "sim/engine/event_queue.hpp"

namespace cs::sim {
namespace {

class Executor {
 public:
  Executor(const TaskGraph& g, CommBackend& network, const ExecutorOptions& o)
      : g_(g),
        network_(network),
        slowdown_(1.0 + o.comm_compute_contention),
        deps_left_(g.tasks().size()),
        head_(static_cast<std::size_t>(g.num_ranks()) * kStreamsPerRank, 0),
        busy_(head_.size(), 0),
        arrived_(g.collectives().size(), 0),
        active_comm_(static_cast<std::size_t>(g.num_ranks()), 0),
        running_(head_.size()) {
    CS_CHECK(o.comm_compute_contention >= 0);
    result_.records.resize(g.tasks().size());
    for (TaskId t = 0; t < g.tasks().size(); ++t) deps_left_[t] = g.num_predecessors(t);
    queue_.reserve(1024);
  }

  ExecutionResult run() {
    for (int r = 0; r < g_.num_ranks(); ++r)
      for (int s = 0; s < kStreamsPerRank; ++s) try_start(stream_index(static_cast<std::uint32_t>(r), static_cast<StreamKind>(s)));
    result_.events = run_events(
        queue_, network_, [this](std::uint32_t t, std::uint32_t version) { on_compute_done(t, version); },
        [this](std::uint32_t c, std::uint32_t /*next*/) { on_collective_done(c); });
    check_finished();
    result_.makespan = queue_.now();
    return std::move(result_);
  }

 private:
  struct Running {  // the plain (non-collective) task a stream is running, if any
    TaskId task = kNone;
    Time remaining = 0;    // work left, in picoseconds at full speed
    Time last_update = 0;
    bool slowed = false;
    std::uint32_t version = 0;
  };

  static std::size_t stream_index(std::uint32_t rank, StreamKind s) {
    return static_cast<std::size_t>(rank) * kStreamsPerRank + static_cast<std::size_t>(s);
  }

  void try_start(std::size_t si) {
    if (busy_[si]) return;
    const auto rank = static_cast<int>(si / kStreamsPerRank);
    const auto& list = g_.stream_tasks(rank, static_cast<StreamKind>(si % kStreamsPerRank));
    if (head_[si] >= list.size()) return;
    const TaskId t = list[head_[si]];
    if (deps_left_[t] != 0) return;
    busy_[si] = 1;
    const Task& task = g_.tasks()[t];
    auto& rec = result_.records[t];
    rec.arrive = queue_.now();
    if (task.collective == kNone) {
      start_compute(t);
      return;
    }
    const Collective& c = g_.collectives()[task.collective];
    if (++arrived_[task.collective] < c.members.size()) return;
    for (const TaskId m : c.members) {
      result_.records[m].start = queue_.now();
      set_comm_active(g_.tasks()[m].rank, +1);
    }
    network_.start(task.collective, queue_.now());
  }

  void start_compute(TaskId t) {
    const Task& task = g_.tasks()[t];
    Running& run = running_[stream_index(task.rank, task.stream)];
    CS_CHECK(run.task == kNone);
    run.task = t;
    run.remaining = task.duration;
    run.last_update = queue_.now();
    // Only kernels on the compute stream share SMs with NCCL; other plain tasks (copies) run unaffected.
    run.slowed = task.stream == StreamKind::compute && active_comm_[task.rank] > 0;
    result_.records[t].start = queue_.now();
    schedule_compute_done(run);
  }

  Time wall_time_for(const Running& run) const { return wall_time(run.remaining, run.slowed, slowdown_); }

  void schedule_compute_done(Running& run) {
    ++run.version;
    queue_.schedule(queue_.now() + wall_time_for(run), run.task, (run.version << kTagBits) | kComputeDone);
  }

  // A rank's count of data-moving collectives changes: rescale its running kernel if the speed changes.
  void set_comm_active(std::uint32_t rank, int delta) {
    active_comm_[rank] = static_cast<std::uint32_t>(static_cast<int>(active_comm_[rank]) + delta);
    Running& run = running_[stream_index(rank, StreamKind::compute)];
    if (set_speed(run, active_comm_[rank] > 0, queue_.now(), slowdown_)) schedule_compute_done(run);
  }

  void on_compute_done(TaskId t, std::uint32_t version) {
    const Task& task = g_.tasks()[t];
    Running& run = running_[stream_index(task.rank, task.stream)];
    if (run.task != t || (run.version & (UINT32_MAX >> kTagBits)) != version) return;  // stale
    run.task = kNone;
    finish(t);
  }

  void on_collective_done(std::uint32_t c) {
    for (const TaskId m : g_.collectives()[c].members) set_comm_active(g_.tasks()[m].rank, -1);
    for (const TaskId m : g_.collectives()[c].members) finish(m);
  }

  void finish(TaskId t) {
    const Task& task = g_.tasks()[t];
    result_.records[t].end = queue_.now();
    const std::size_t si = stream_index(task.rank, task.stream);
    busy_[si] = 0;
    ++head_[si];
    for (const TaskId* s = g_.successors_begin(t); s != g_.successors_end(t); ++s)
      if (--deps_left_[*s] == 0) try_start(stream_index(g_.tasks()[*s].rank, g_.tasks()[*s].stream));
    try_start(si);
  }

  void check_finished() const {
    std::ostringstream blocked;
    int count = 0;
    for (int r = 0; r < g_.num_ranks(); ++r) {
      for (int s = 0; s < kStreamsPerRank; ++s) {
        const auto& list = g_.stream_tasks(r, static_cast<StreamKind>(s));
        const std::size_t h = head_[stream_index(static_cast<std::uint32_t>(r), static_cast<StreamKind>(s))];
        if (h >= list.size()) continue;
        const Task& t = g_.tasks()[list[h]];
        if (count++ < 8) {
          blocked << (count > 1 ? "; " : "") << "rank " << r << " stream " << to_string(t.stream) << " at '"
                  << g_.name(t.name) << "' (micro-batch " << t.micro_batch << ", ";
          if (t.collective != kNone && deps_left_[list[h]] == 0)
            blocked << arrived_[t.collective] << "/" << g_.collectives()[t.collective].members.size()
                    << " members arrived)";
          else
            blocked << deps_left_[list[h]] << " dependencies pending)";
        }
      }
    }
    if (count > 0) {
      std::ostringstream msg;
      msg << "deadlock: " << count << " streams blocked: " << blocked.str();
      throw DeadlockError(msg.str());
    }
  }

  const TaskGraph& g_;
  CommBackend& network_;
  double slowdown_;
  EventQueue queue_;
  ExecutionResult result_;
  std::vector<std::uint32_t> deps_left_;
  std::vector<std::uint32_t> head_;
  std::vector<std::uint8_t> busy_;
  std::vector<std::uint32_t> arrived_;
  std::vector<std::uint32_t> active_comm_;
  std::vector<Running> running_;
};

}  // namespace

ExecutionResult execute(const TaskGraph& graph, CommBackend& network, const ExecutorOptions& options) {
  return Executor(graph, network, options).run();
}

}  // namespace cs::sim
