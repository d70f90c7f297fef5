#include "models/compute/comm_profile.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

namespace cs::models {

namespace {

std::string lower_no_separators(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != '_' && c != '-' && c != ' ') out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return out;
}

constexpr std::array<std::pair<CollectiveKind, std::string_view>, 6> kCollectives = {{
    {CollectiveKind::all_reduce, "all_reduce"}, {CollectiveKind::all_gather, "all_gather"},
    {CollectiveKind::reduce_scatter, "reduce_scatter"}, {CollectiveKind::all_to_all, "all_to_all"},
    {CollectiveKind::broadcast, "broadcast"}, {CollectiveKind::send_recv, "send_recv"},
}};

constexpr std::array<std::pair<MemOpKind, std::string_view>, 8> kMemKinds = {{
    {MemOpKind::norm, "norm"}, {MemOpKind::elementwise, "elementwise"}, {MemOpKind::activation, "activation"},
    {MemOpKind::softmax, "softmax"}, {MemOpKind::cross_entropy, "cross_entropy"},
    {MemOpKind::embedding, "embedding"}, {MemOpKind::copy, "copy"}, {MemOpKind::optimizer, "optimizer"},
}};

}  // namespace

const CommFit* CommProfile::find(CollectiveKind collective, int ranks, CommLevel level) const {
  const CommFit* any = nullptr;
  for (const auto& f : fits) {
    if (f.collective != collective || f.ranks != ranks || f.level != level) continue;
    if (f.algorithm == "default") return &f;
    if (!any) any = &f;
  }
  return any;
}

double bus_bandwidth_factor(CollectiveKind kind, int ranks) {
  const double n = ranks < 1 ? 1.0 : double(ranks);
  switch (kind) {
    case CollectiveKind::all_reduce: return 2.0 * (n - 1) / n;
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_to_all: return (n - 1) / n;
    case CollectiveKind::broadcast:
    case CollectiveKind::send_recv: return 1.0;
  }
  return 1.0;
}

std::string_view to_string(CollectiveKind kind) {
  for (const auto& [k, name] : kCollectives)
    if (k == kind) return name;
  return "unknown";
}

std::optional<CollectiveKind> parse_collective(std::string_view name) {
  // nccl-tests names ("alltoall", "sendrecv") and ours ("all_to_all", "send_recv") both map.
  const std::string key = lower_no_separators(name);
  for (const auto& [k, canonical] : kCollectives)
    if (lower_no_separators(canonical) == key) return k;
  return std::nullopt;
}

std::string_view to_string(CommLevel level) { return level == CommLevel::nvlink ? "nvlink" : "network"; }

std::optional<CommLevel> parse_comm_level(std::string_view name) {
  if (name == "nvlink") return CommLevel::nvlink;
  if (name == "network") return CommLevel::network;
  return std::nullopt;
}

std::string_view to_string(MemOpKind kind) {
  for (const auto& [k, name] : kMemKinds)
    if (k == kind) return name;
  return "unknown";
}

std::optional<MemOpKind> parse_mem_op_kind(std::string_view name) {
  for (const auto& [k, n] : kMemKinds)
    if (n == name) return k;
  return std::nullopt;
}

}  // namespace cs::models
