#pragma once
// A network back-end for engine tests: every collective takes a duration the test chose, independent of
// everything else, so executor behaviour can be checked against hand-computed schedules.
#include <queue>
#include <tuple>
#include <vector>

#include "sim/engine/comm_backend.hpp"

namespace cs::sim::testing {

class FixedNetwork : public CommBackend {
 public:
  explicit FixedNetwork(std::vector<Time> durations) : durations_(std::move(durations)) {}
  void start(std::uint32_t c, Time now) override {
    started_.push_back(now);
    pending_.emplace(now + durations_.at(c), order_++, c);
  }
  Time next_completion() const override { return pending_.empty() ? kNever : std::get<0>(pending_.top()); }
  void pop_completed(Time now, std::vector<std::uint32_t>& done) override {
    while (!pending_.empty() && std::get<0>(pending_.top()) == now) {
      done.push_back(std::get<2>(pending_.top()));
      pending_.pop();
    }
  }
  std::vector<LinkLoad> link_loads() const override { return {}; }
  const std::vector<Time>& started() const { return started_; }

 private:
  using Item = std::tuple<Time, std::uint64_t, std::uint32_t>;
  std::vector<Time> durations_;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> pending_;
  std::uint64_t order_ = 0;
  std::vector<Time> started_;
};

}  // namespace cs::sim::testing
