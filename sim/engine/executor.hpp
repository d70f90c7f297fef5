#pragma once
// The discrete-event executor: runs a frozen TaskGraph to completion and records when every task ran.
//
// Two sources of events share one clock: the executor's own queue (kernels finishing, zero-delay "start
// the next task") and the network back-end (collectives finishing). At equal times the executor's events
// go first, then the network's, so the order is fixed.
//
// Stream semantics are CUDA's (see task_graph.hpp). Compute kernels progress at full speed unless a
// collective of the same rank is moving data at the same time: then they progress at 1/(1 + c), where
// c = `comm_compute_contention` models the SMs and HBM bandwidth that NCCL kernels take from compute
// (NCCL runs its channels as thread blocks on the same SMs and streams its buffers through the same HBM).
// A running kernel's remaining work is rescaled whenever that changes, and its completion event is
// re-issued; the stale one is recognised by a version number and ignored.
//
// A graph that cannot finish (a cycle, or a collective whose members wait on each other) is a bug in
// whoever built it: the executor reports the blocked ranks and streams by name and aborts the run.
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "sim/engine/comm_backend.hpp"
#include "sim/engine/task_graph.hpp"

namespace cs::sim {

struct ExecutorOptions {
  double comm_compute_contention = 0.0;
};

struct TaskRecord {
  Time arrive = kNever;  // could start (collective members: arrived and waiting for peers)
  Time start = kNever;   // began doing work
  Time end = kNever;
};

struct ExecutionResult {
  Time makespan = 0;
  std::uint64_t events = 0;
  std::vector<TaskRecord> records;  // by TaskId
};

class DeadlockError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Runs the graph; `network` decides how long each collective moves data.
ExecutionResult execute(const TaskGraph& graph, CommBackend& network, const ExecutorOptions& options);

}  // namespace cs::sim
