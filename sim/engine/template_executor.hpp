#pragma once
// Every rank of a step executed from a shared per-stage template (simulation.symmetry false), without a
// task graph of 10^8 tasks.
//
// The template is the mirrored step (sim/step/step_builder.hpp): one simulated rank per pipeline stage,
// its collectives on the real process groups with every translate of each group over the stage as its
// mirrors. Every real rank of a stage runs that stage's task list: the same tasks, streams, dependencies
// (all inside the rank) and collectives, with its own kernel durations (the template task's full-speed
// duration on the rank's GPU type, stretched by the rank's own slowdown exactly as the builder does:
// llround(t x slowdown)) and each collective on the rank's own group (the mirror of the template's group
// that contains it). That is what the one-by-one builder emits for the rank, since it runs the same code
// per rank and nothing but the GPU type and the slowdown depends on the rank beyond its group structure.
//
// Per real rank the executor keeps only dynamic state: each stream's head (which also says which of the
// rank's tasks are done, so no dependency counts are kept), the running kernel, and the rank's running
// totals for the report (busy time per category, the union of its kernels, its communication not covered
// by a kernel, per kind), accumulated as the state changes instead of from 10^8 task records. A collective instance, numbered as the one-by-one graph
// numbers its collectives (by the first member rank to issue it, in rank order), is a template
// collective and a mirror group; the network back-ends see the instances through CollectiveTable.
//
// Every step the reference executor (executor.hpp) takes is taken here in the same order: the streams
// started rank by rank, successors in their edge order, a collective's members in rank order, the same
// events scheduled with the same sequence numbers. The outputs are therefore byte-identical to a run of
// the materialised graph (tests/sim/test_template_executor.cpp).
//
// Premises (simulation.cpp checks them and otherwise runs the materialised graph): one job, rank r on GPU
// r (the groups' GPUs are the member ranks).
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "sim/base/check.hpp"
#include "sim/base/huge_pages.hpp"
#include "sim/engine/comm_backend.hpp"
#include "sim/engine/executor.hpp"
#include "sim/engine/task_graph.hpp"

namespace cs::sim {

struct StepTemplate {
  const TaskGraph* graph = nullptr;          // the template: simulated rank k = stage k's task list
  std::vector<std::uint32_t> template_rank;  // per real rank: its template rank (stage)
  std::vector<std::uint32_t> representative; // per template rank: the real rank its records are kept for
  // Full-speed duration of every template task (0 for collective members) on each GPU type, and each
  // real rank's GPU type and slowdown.
  std::vector<std::vector<Time>> base;
  std::vector<std::uint8_t> rank_type;
  std::vector<double> rank_slowdown;
  std::vector<std::uint32_t> rank_weights;  // for the network back-ends (TaskGraph::rank_weights)

  std::uint32_t num_ranks() const { return static_cast<std::uint32_t>(template_rank.size()); }
};

// The collective instances of a template run, numbered as the one-by-one graph numbers its collectives.
class TemplateInstances final : public CollectiveTable {
 public:
  explicit TemplateInstances(const StepTemplate& t);

  int num_ranks() const override { return static_cast<int>(t_.num_ranks()); }
  std::size_t num_collectives() const override { return of_.size(); }
  CollectiveSpec collective(std::uint32_t c) const override;
  void member_ranks(std::uint32_t c, std::vector<std::uint32_t>& out) const override;
  std::size_t num_members(std::uint32_t c) const override { return members_of(c).size(); }
  std::size_t num_groups() const override { return t_.graph->num_groups(); }
  const std::vector<int>& group(std::uint32_t id) const override { return t_.graph->group(id); }
  const std::vector<std::uint32_t>& mirrors(std::uint32_t group) const override { return self_[group]; }
  const std::vector<std::uint32_t>& rank_weights() const override { return t_.rank_weights; }

  // Where real rank `rank` meets the others in template collective `c`: a slot (one per template
  // collective and mirror group, in template order), the mirror group and its ranks.
  struct Meeting {
    std::uint32_t slot, group, begin, size;  // the ranks: group_ranks_[begin, begin + size)
  };
  // Per template collective: its first slot and its template group's column (below).
  struct Issue {
    std::uint32_t first_slot, column;
  };
  Issue issue(std::uint32_t c) const { return issue_[c]; }
  Meeting meeting(Issue k, std::uint32_t rank) const {
    const Seat& s = seats_[static_cast<std::size_t>(rank) * columns_ + k.column];
    return {k.first_slot + s.mirror, s.group, s.begin, s.size};
  }
  Meeting meeting(std::uint32_t c, std::uint32_t rank) const { return meeting(issue_[c], rank); }
  std::span<const std::uint32_t> ranks(const Meeting& m) const { return {group_ranks_.data() + m.begin, m.size}; }
  // Fetches the rank's seats (meeting() reads one of them) ahead of its next event.
  void prefetch(std::uint32_t rank) const {
    const Seat* s = seats_.data() + static_cast<std::size_t>(rank) * columns_;
    __builtin_prefetch(s);
    __builtin_prefetch(s + columns_ - 1);
  }
  std::size_t num_slots() const { return slot_id_.size(); }
  std::uint32_t instance_of_slot(std::uint32_t slot) const { return slot_id_[slot]; }
  std::uint32_t instance(std::uint32_t c, std::uint32_t rank) const { return slot_id_[meeting(c, rank).slot]; }
  // An instance's template collective and real group.
  struct Of {
    std::uint32_t collective, group;
  };
  Of of(std::uint32_t instance) const {
    const InFlight* f = find(instance);
    return f ? Of{f->collective, f->group} : of_[instance];
  }
  // The real ranks of a group or an instance, ascending (the one-by-one graph's member order).
  std::span<const std::uint32_t> ranks_of(std::uint32_t group) const {
    return {group_ranks_.data() + group_begin_[group], group_begin_[group + 1] - group_begin_[group]};
  }
  std::span<const std::uint32_t> members_of(std::uint32_t instance) const {
    const InFlight* f = find(instance);
    return f ? members(*f) : ranks_of(of_[instance].group);
  }
  // An instance in flight: its template collective and its ranks, one look-up.
  struct Running {
    std::uint32_t collective;
    std::span<const std::uint32_t> members;
  };
  Running running(std::uint32_t instance) const {
    const InFlight* f = find(instance);
    CS_CHECK(f != nullptr);
    return {f->collective, members(*f)};
  }
  // The executor says which instances are in flight (10^4 at most, against 10^7 instances): looking them
  // up there stays in cache, where of_ is a miss per look-up.
  void begin(std::uint32_t instance, std::uint32_t collective, const Meeting& where) const;
  void end(std::uint32_t instance) const;
  std::uint64_t num_tasks() const { return tasks_; }

 private:
  const StepTemplate& t_;
  // A rank's mirror of each template group its stage uses, as a seat in a row of columns_ per real rank:
  // a template group has one column, none shared by two groups of one stage. A collective's arrival reads
  // its rank's row (64 bytes at 16,384 ranks: four columns; fetched with the rank's state) instead of a
  // 64 KiB mirror index per group, the group's mirror list and its ranks' offsets: 4-5 dependent misses,
  // 5.6 x 10^7 arrivals at 16,384 ranks.
  struct Seat {
    std::uint32_t mirror = kNone, group = 0, begin = 0, size = 0;  // the mirror's real group and its ranks
  };
  std::vector<Issue> issue_;
  std::uint32_t columns_ = 0;
  HugeVector<Seat> seats_;
  HugeVector<std::uint32_t> slot_id_;                    // slot (Issue::first_slot + mirror) -> instance
  HugeVector<Of> of_;  // per instance: its template collective and its real group
  // Open addressing with linear probing on the instance id (kNone: empty), at most half full.
  struct InFlight {
    std::uint32_t id = kNone, collective = 0, group = 0, begin = 0, size = 0;  // the group's ranks as in Meeting
  };
  const InFlight* find(std::uint32_t instance) const;
  std::span<const std::uint32_t> members(const InFlight& f) const { return {group_ranks_.data() + f.begin, f.size}; }
  static std::size_t hash(std::uint32_t id) { return static_cast<std::size_t>((id * 0x9E3779B97F4A7C15ULL) >> 32); }
  mutable std::vector<InFlight> in_flight_ = std::vector<InFlight>(1024);
  mutable std::size_t in_flight_count_ = 0;
  // Per group its ranks, ascending: group k's are group_ranks_[group_begin_[k], group_begin_[k + 1]). One
  // array (10^5 entries at 16,384 ranks) rather than a vector each, so that a collective's members are one
  // read in cache, not a vector header and then its heap block.
  std::vector<std::uint32_t> group_begin_;
  std::vector<std::uint32_t> group_ranks_;
  std::vector<std::vector<std::uint32_t>> self_;          // per group: {itself} (every rank is simulated)
  std::uint64_t tasks_ = 0;
};

// Per real rank, what sim/report/breakdown.hpp's rank_times derives from its task records.
struct RankTotals {
  std::array<Time, kNumCategories> busy{};
  std::array<Time, kNumCategories> exposed_by_kind{};
  Time compute = 0;
  Time exposed = 0;
};

struct TemplateResult {
  Time makespan = 0;
  std::uint64_t events = 0;
  std::vector<RankTotals> ranks;             // per real rank
  std::vector<double> kernel_square_sum;     // per real rank: sum of its compute-stream kernels' seconds squared
  std::vector<TaskRecord> records;           // per template task: its representative's (StepTemplate::representative)
};

TemplateResult execute_template(const StepTemplate& t, const TemplateInstances& instances, CommBackend& network,
                                const ExecutorOptions& options);

}  // namespace cs::sim
