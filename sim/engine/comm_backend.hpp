#pragma once
// The narrow interface between the executor and a network model (after ASTRA-sim's split of system and
// network): the executor says when a collective starts moving data; the network model says when it is
// done. What happens in between (closed-form time, or flows on routed links sharing bandwidth) is the
// model's business, so the network back-end can be swapped without touching the engine.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/engine/time.hpp"

namespace cs::sim {

// Traffic a class of links carried during the step, for the report.
struct LinkLoad {
  std::string name;          // "scale-up (nvswitch)", "scale-out (ib-ndr400)", or a link's own name
  double bytes_per_gpu = 0;  // per GPU (or per link), per step
  double bandwidth_Bps = 0;  // capacity per GPU (or per link), one direction
};

class CommBackend {
 public:
  virtual ~CommBackend() = default;
  // Collective `collective` (index into the task graph) starts moving data at `now`.
  virtual void start(std::uint32_t collective, Time now) = 0;
  // The earliest time a started collective completes; kNever when none is in flight.
  virtual Time next_completion() const = 0;
  // Appends the collectives that complete at `now` (== next_completion()) to `done`, in a deterministic
  // order, and forgets them.
  virtual void pop_completed(Time now, std::vector<std::uint32_t>& done) = 0;
  // Traffic per class of links over the whole run.
  virtual std::vector<LinkLoad> link_loads() const = 0;
};

}  // namespace cs::sim
