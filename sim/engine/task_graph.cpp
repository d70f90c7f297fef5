#include "sim/engine/task_graph.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>

#include "sim/base/check.hpp"
#include "sim/base/name_table.hpp"
#include "sim/engine/cancel.hpp"

namespace cs::sim {

namespace {

constexpr std::array<Named<StreamKind>, 12> kStreamNames{{
    {StreamKind::compute, "compute"}, {StreamKind::comm_tp, "comm-tp"}, {StreamKind::comm_dp, "comm-dp"},
    {StreamKind::pp_send_fwd, "pp-send-fwd"}, {StreamKind::pp_recv_fwd, "pp-recv-fwd"},
    {StreamKind::pp_send_bwd, "pp-send-bwd"}, {StreamKind::pp_recv_bwd, "pp-recv-bwd"},
    {StreamKind::pp_send_fwd_up, "pp-send-fwd-up"}, {StreamKind::pp_recv_fwd_up, "pp-recv-fwd-up"},
    {StreamKind::pp_send_bwd_down, "pp-send-bwd-down"}, {StreamKind::pp_recv_bwd_down, "pp-recv-bwd-down"},
    {StreamKind::offload, "offload"},
}};

constexpr std::array<Named<Category>, 8> kCategoryNames{{
    {Category::compute, "compute"}, {Category::recompute, "recompute"}, {Category::optimizer, "optimizer"},
    {Category::tp_comm, "tp_comm"}, {Category::cp_comm, "cp_comm"}, {Category::ep_comm, "ep_comm"},
    {Category::dp_comm, "dp_comm"}, {Category::pp_comm, "pp_comm"},
}};

}  // namespace

// The tables hold string literals, so each name_of() view is NUL-terminated.
const char* to_string(StreamKind s) { return name_of(kStreamNames, s).data(); }
const char* to_string(Category c) { return name_of(kCategoryNames, c).data(); }

TaskGraph::TaskGraph(int num_ranks)
    : num_ranks_(num_ranks), streams_(static_cast<std::size_t>(num_ranks) * kStreamsPerRank) {
  CS_CHECK(num_ranks > 0);
}

std::uint32_t TaskGraph::intern(std::string_view name) {
  // Names are few (one per op kind) but asked for once per task: a hash lookup; ids follow first use, so
  // their order stays deterministic.
  if (const auto it = name_ids_.find(name); it != name_ids_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(names_.size());
  CS_CHECK(id <= UINT16_MAX);  // Task::name
  names_.emplace_back(name);
  name_ids_.emplace(names_.back(), id);
  return id;
}

TaskId TaskGraph::add_task(const Task& t) {
  CS_CHECK(!frozen_);
  CS_CHECK(t.rank < static_cast<std::uint32_t>(num_ranks_));
  // A duration past the engine's range (int64 picoseconds: 106 days) or not a number converts to a negative
  // Time: an input the loaders' bounds let through. An error for the user, not an abort (issue 32).
  if (t.duration < 0) {
    throw std::runtime_error("task '" + (t.name < names_.size() ? names_[t.name] : std::string("?")) + "' of rank " + std::to_string(t.rank) +
                             " lasts longer than the engine's 106 days of simulated time (or its duration is not a number)");
  }
  const auto id = static_cast<TaskId>(tasks_.size());
  if ((id & 0x3FFFu) == 0) poll_cancel();  // a huge step is cancellable while it is being built
  tasks_.push_back(t);
  streams_[static_cast<std::size_t>(t.rank) * kStreamsPerRank + static_cast<std::size_t>(t.stream)]
      .push_back(id);
  return id;
}

std::uint32_t TaskGraph::add_collective(Collective c) {
  CS_CHECK(!frozen_);
  collectives_.push_back(std::move(c));
  return static_cast<std::uint32_t>(collectives_.size() - 1);
}

namespace {
// A group's members hashed for TaskGraph's group index (splitmix64's finaliser over a running mix).
std::uint64_t hash_members(const std::vector<int>& gpus) {
  std::uint64_t h = 0x9E3779B97F4A7C15ull ^ gpus.size();
  for (const int g : gpus) {
    h ^= static_cast<std::uint32_t>(g);
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
  }
  h ^= h >> 30;
  h *= 0x94D049BB133111EBull;
  return h ^ (h >> 31);
}
}  // namespace

std::uint32_t TaskGraph::add_group(const std::vector<int>& gpus) {
  CS_CHECK(!gpus.empty());
  // Open addressing with linear probing over group ids: a mirrored frontier step registers a million
  // pipeline pairs, and an ordered map keyed by member lists (a node and a copy of the list each) was a
  // fifth of its time. Ids are handed out in order of first registration, as before.
  constexpr std::uint32_t kEmpty = ~0u;
  if (2 * (groups_.size() + 1) > group_slots_.size()) {
    group_slots_.assign(std::max<std::size_t>(64, 2 * group_slots_.size()), kEmpty);
    const std::size_t mask = group_slots_.size() - 1;
    for (std::uint32_t id = 0; id < groups_.size(); ++id) {
      std::size_t at = group_hashes_[id] & mask;
      while (group_slots_[at] != kEmpty) at = (at + 1) & mask;
      group_slots_[at] = id;
    }
  }
  const std::uint64_t h = hash_members(gpus);
  const std::size_t mask = group_slots_.size() - 1;
  std::size_t at = h & mask;
  for (; group_slots_[at] != kEmpty; at = (at + 1) & mask) {
    const std::uint32_t id = group_slots_[at];
    if (group_hashes_[id] == h && groups_[id] == gpus) return id;
  }
  const auto id = static_cast<std::uint32_t>(groups_.size());
  group_slots_[at] = id;
  group_hashes_.push_back(h);
  groups_.push_back(gpus);
  mirrors_.push_back({id});
  return id;
}

void TaskGraph::set_mirrors(std::uint32_t group, std::vector<std::uint32_t> mirrors) {
  CS_CHECK(group < groups_.size());
  for (auto m : mirrors) CS_CHECK(m < groups_.size() && groups_[m].size() == groups_[group].size());
  mirrors_[group] = std::move(mirrors);
}

void TaskGraph::set_rank_weights(std::vector<std::uint32_t> weights) {
  CS_CHECK(weights.size() == static_cast<std::size_t>(num_ranks_));
  rank_weights_ = std::move(weights);
}

void TaskGraph::add_member(std::uint32_t collective, TaskId member) {
  CS_CHECK(collective < collectives_.size() && member < tasks_.size());
  CS_CHECK(tasks_[member].collective == collective);
  collectives_[collective].members.push_back(member);
}

void TaskGraph::add_dependency(TaskId before, TaskId after) {
  CS_CHECK(!frozen_);
  CS_CHECK(before < tasks_.size() && after < tasks_.size() && before != after);
  edges_.emplace_back(before, after);
}

void TaskGraph::freeze() {
  CS_CHECK(!frozen_);
  frozen_ = true;
  const std::size_t n = tasks_.size();
  succ_offset_.assign(n + 1, 0);
  pred_count_.assign(n, 0);
  for (const auto& [a, b] : edges_) {
    ++succ_offset_[a + 1];
    ++pred_count_[b];
  }
  for (std::size_t i = 0; i < n; ++i) succ_offset_[i + 1] += succ_offset_[i];
  succ_.resize(edges_.size());
  std::vector<std::uint32_t> fill(succ_offset_.begin(), succ_offset_.end() - 1);
  for (const auto& [a, b] : edges_) succ_[fill[a]++] = b;
  edges_.clear();
  edges_.shrink_to_fit();
  for (const auto& c : collectives_) CS_CHECK(!c.members.empty() && c.group < groups_.size());
}

}  // namespace cs::sim
