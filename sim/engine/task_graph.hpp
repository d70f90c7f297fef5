#pragma once
// The task graph the engine executes: what every simulated GPU does in one training step.
//
// A rank owns a few streams, like CUDA streams: tasks on one stream run one at a time in issue order;
// tasks on different streams of the same rank may overlap. A task starts when it is at the head of its
// stream, the task before it on that stream has finished, and every task it depends on (on any stream,
// any rank) has finished — CUDA events between streams.
//
// A collective is one operation shared by member tasks, one per participating simulated rank. Each member
// "arrives" when it could start; the collective runs only once every member has arrived (NCCL kernels
// wait for their peers), and all members finish together. While waiting, a member holds its stream (the
// NCCL kernel is launched and spinning) but moves no data.
//
// Everything lives in flat vectors addressed by 32-bit index; dependencies are stored compressed (CSR)
// once the graph is frozen.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sim/base/collective_kind.hpp"
#include "sim/base/token_routing.hpp"
#include "sim/engine/time.hpp"

namespace cs::sim {

// Streams of a rank. Megatron runs TP/CP/EP collectives on the compute stream's critical path; we give
// them their own stream with explicit dependencies so the trace shows them apart (the effect on timing is
// the same: the next kernel waits for them).
enum class StreamKind : std::uint8_t {
  compute,
  comm_tp,      // tensor/context/expert-parallel collectives (blocking)
  comm_dp,      // data-parallel gradient reduction / parameter gathering (overlapped)
  pp_send_fwd,  // activations to the next stage
  pp_recv_fwd,
  pp_send_bwd,  // gradients to the previous stage
  pp_recv_bwd,
  // DualPipeV's chunk-1 transfers (the V's way back up; step_builder.cpp): activations to the previous rank,
  // gradients to the next, each on a stream of its own as PyTorch gives each peer pair its own NCCL
  // communicator, so a transfer to one neighbour never waits behind one to the other.
  pp_send_fwd_up,
  pp_recv_fwd_up,
  pp_send_bwd_down,
  pp_recv_bwd_down,
  // CPU activation offload's copies to and from host memory (sim/step/step_units.hpp offload_copy_s): plain
  // tasks that are not kernels -- they run beside the compute stream unslowed, and the report's breakdown
  // counts them neither as compute nor as communication (a wait for one shows as idle time).
  offload,
};
inline constexpr int kStreamsPerRank = 12;
const char* to_string(StreamKind s);

// What a task's time counts as in the report.
enum class Category : std::uint8_t { compute, recompute, optimizer, tp_comm, cp_comm, ep_comm, dp_comm, pp_comm };
inline constexpr int kNumCategories = 8;
const char* to_string(Category c);
inline bool is_comm(Category c) { return c >= Category::tp_comm; }

using TaskId = std::uint32_t;
inline constexpr std::uint32_t kNone = UINT32_MAX;

// 24 bytes: an unmirrored 16,384-GPU step holds 10^8 of them.
struct Task {
  Time duration = 0;             // compute: at full speed; collective members: unused
  std::uint32_t rank = 0;        // simulated rank
  std::uint32_t collective = kNone;  // index into TaskGraph::collectives for collective members
  std::int32_t micro_batch = -1; // for the trace
  std::uint16_t name = 0;        // index into TaskGraph::names (one per op kind: a few dozen)
  StreamKind stream = StreamKind::compute;
  Category category = Category::compute;
};
static_assert(sizeof(Task) == 24);

// What a network back-end needs of a collective.
// 24 bytes (a large graph holds 10^7 collectives): the byte-wide fields last.
struct CollectiveSpec {
  double bytes = 0;           // nccl-tests "size" of the operation
  TokenRouting routing{};     // all_to_all of a per-node token dispatcher (sim/base/token_routing.hpp)
  std::uint32_t group = 0;    // the real process group (TaskGraph::group), all its GPUs, simulated or not
  CollectiveKind kind = CollectiveKind::all_reduce;
  bool reversed = false;      // send/recv: data goes from the group's second GPU to its first
};
static_assert(sizeof(CollectiveSpec) == 24);

struct Collective : CollectiveSpec {
  std::vector<TaskId> members;  // the tasks of the simulated ranks that take part
};

// The collectives and process groups a network back-end prices (sim/engine/comm_backend.hpp), by index: a
// task graph's own, or the collective instances of a step executed from a per-stage template
// (template_executor.hpp), which never materialises them.
class CollectiveTable {
 public:
  virtual ~CollectiveTable() = default;
  virtual int num_ranks() const = 0;  // simulated ranks
  virtual std::size_t num_collectives() const = 0;
  virtual CollectiveSpec collective(std::uint32_t c) const = 0;
  // The simulated ranks taking part in collective c, in the order its members were added (appended to out).
  virtual void member_ranks(std::uint32_t c, std::vector<std::uint32_t>& out) const = 0;
  virtual std::size_t num_members(std::uint32_t c) const = 0;
  virtual std::size_t num_groups() const = 0;
  virtual const std::vector<int>& group(std::uint32_t id) const = 0;
  virtual const std::vector<std::uint32_t>& mirrors(std::uint32_t group) const = 0;
  virtual const std::vector<std::uint32_t>& rank_weights() const = 0;
};

class TaskGraph final : public CollectiveTable {
 public:
  explicit TaskGraph(int num_ranks);

  int num_ranks() const override { return num_ranks_; }
  std::size_t num_collectives() const override { return collectives_.size(); }
  CollectiveSpec collective(std::uint32_t c) const override { return collectives_[c]; }
  void member_ranks(std::uint32_t c, std::vector<std::uint32_t>& out) const override {
    for (const TaskId m : collectives_[c].members) out.push_back(tasks_[m].rank);
  }
  std::size_t num_members(std::uint32_t c) const override { return collectives_[c].members.size(); }
  std::uint32_t intern(std::string_view name);
  const std::string& name(std::uint32_t id) const { return names_[id]; }

  TaskId add_task(const Task& t);  // appended to its stream in issue order
  // Room for `tasks` tasks (an estimate), so that a large graph is not grown by doubling (up to twice the
  // memory it needs, and copies).
  void reserve(std::size_t tasks) { tasks_.reserve(tasks); }
  std::uint32_t add_collective(Collective c);
  // Process groups: the GPUs (global ranks) of a group, in ring order; equal lists share one id.
  std::uint32_t add_group(const std::vector<int>& gpus);
  const std::vector<int>& group(std::uint32_t id) const override { return groups_[id]; }
  std::size_t num_groups() const override { return groups_.size(); }
  // Under symmetry a collective of one group stands for the same collective on every mirrored group
  // (e.g. the TP all-reduce of one TP group is run by every TP group of the stage at the same time). A
  // network model with contention puts all of them on the fabric. By default a group mirrors only itself.
  void set_mirrors(std::uint32_t group, std::vector<std::uint32_t> mirrors);
  const std::vector<std::uint32_t>& mirrors(std::uint32_t group) const override { return mirrors_[group]; }
  // The real ranks each simulated rank stands for (its class of equal ranks, sim/step/orbits.hpp), for a
  // back-end's per-GPU statistics; empty (the default): every simulated rank counts alike.
  void set_rank_weights(std::vector<std::uint32_t> weights);
  const std::vector<std::uint32_t>& rank_weights() const override { return rank_weights_; }
  void add_member(std::uint32_t collective, TaskId member);
  void add_dependency(TaskId before, TaskId after);
  void freeze();  // builds the CSR adjacency; no more edits after this

  const std::vector<Task>& tasks() const { return tasks_; }
  const std::vector<Collective>& collectives() const { return collectives_; }
  std::vector<Collective>& collectives() { return collectives_; }
  // Successors of a task (after freeze).
  const TaskId* successors_begin(TaskId t) const { return succ_.data() + succ_offset_[t]; }
  const TaskId* successors_end(TaskId t) const { return succ_.data() + succ_offset_[t + 1]; }
  std::uint32_t num_predecessors(TaskId t) const { return pred_count_[t]; }
  // Tasks of a stream in issue order.
  const std::vector<TaskId>& stream_tasks(int rank, StreamKind s) const {
    return streams_[static_cast<std::size_t>(rank) * kStreamsPerRank + static_cast<std::size_t>(s)];
  }

 private:
  int num_ranks_;
  bool frozen_ = false;
  std::vector<Task> tasks_;
  std::vector<Collective> collectives_;
  std::vector<std::string> names_;
  // name -> index into names_ (names_ keeps the order of first use; the map only finds them).
  struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, std::uint32_t, NameHash, std::equal_to<>> name_ids_;
  std::vector<std::vector<int>> groups_;
  std::vector<std::vector<std::uint32_t>> mirrors_;
  std::vector<std::uint32_t> rank_weights_;
  std::vector<std::uint32_t> group_slots_;   // add_group's index: group ids by hash of their members
  std::vector<std::uint64_t> group_hashes_;  // per group id
  std::vector<std::pair<TaskId, TaskId>> edges_;
  std::vector<std::uint32_t> succ_offset_;
  std::vector<TaskId> succ_;
  std::vector<std::uint32_t> pred_count_;
  std::vector<std::vector<TaskId>> streams_;
};

}  // namespace cs::sim
