#pragma once
// The budget of a simulation, checked before anything is built: how many tasks, events and bytes the step
// of a scenario will need, estimated from its shape alone, and a refusal (an input error naming the knob
// that drives the size) when that is past the scenario's limits.
//
// Why: every size in a scenario is legal on its own, but their product is what the step builder
// materialises. One GPU with 10^5 micro-batches is 10^5 x (layers x ops per layer) tasks; 10^6 nodes is a
// cluster graph of 8 x 10^6 GPUs before the first task. Without a budget such a scenario runs for minutes and
// ends in std::bad_alloc; with it, the user gets one line in milliseconds saying which knob to turn.
//
// The estimate follows build_step (step_builder.hpp) without building anything:
//   tasks = sum over simulated ranks of
//             m x sum over the rank's model chunks of (tasks of the chunk's forward + backward pass)
//           + the pipeline send/recv pairs (at most 4 per micro-batch and chunk) + the data-parallel
//             collectives + the optimizer's three tasks,
//   where a pass's tasks are its units' op lists (embedding, layers, LM head) with each op one task except
//   a collective on a group of one rank (none), a TP all-gather / reduce-scatter under tp_comm_overlap (two),
//   and an attention op under context parallelism (cp steps and cp - 1 KV transfers); ZeRO-3 adds a gather
//   per unit and pass and a reduce-scatter per unit and backward. Under symmetry one rank per class of
//   equal ranks is simulated (orbits.hpp: one per pipeline stage on equal GPUs), otherwise every rank; a
//   multi-job scenario builds every job alone and all together.
//   events ~ 1.25 tasks: one per task ending, plus the network's flow completions (measured on the shipped
//   scenarios: 1.0-1.27).
//   memory ~ 100 B per task built (with simulation.symmetry false on one job: ~4 B per task executed from
//   the per-stage template, sim/engine/template_executor.hpp, + 100 B per template task) (the task 24 B, its record 24 B, its FLOPs 8 B, its edges, its stream slot and
//   its collective's member entry; the vectors are reserved from this estimate, not grown by doubling:
//   measured 85-93 B a task on the 10^8 tasks of Llama-3 405B over 16,384 H100 unmirrored, 8.0-8.8 GiB,
//   bench/README.md) + per GPU 1.5 KB (analytical) or 2.5 KB (flow) for the cluster
//   graph, the routes and the process groups of the mirrored ranks + 1 KB per NIC and its switch ports
//   (measured on the 64-node NDR400 scenario from 64 to 2048 nodes, and from 8 to 10^6 NICs per node: 125 B
//   a NIC at 4096, 950 B at 10^6, where the 8 x 10^6 NICs took 7.3 GiB and 27 s) + 8 KB per job of a
//   multi-job scenario (its view of the scenario, its report, its alone run's link loads).
// tests/sim/test_step_budget.cpp holds the memory estimate above the peak simulate() really adds (measured in
// a child process) on every shipped scenario and on generated ones (hundreds of one-node jobs, symmetry off).
// The default limits, 2 x 10^8 tasks and 4 GiB: the largest shipped scenario takes 0.4 M tasks and 50 MB,
// and a sweep runs one simulation per CPU thread at once.
// The test holds the task estimate within a factor of 1.5 of the real count on every shipped scenario.
#include <cstdint>
#include <string>

#include "sim/scenario/scenario.hpp"

namespace cs::sim {

struct StepEstimate {
  double tasks = 0, events = 0, memory_bytes = 0;
  // What drives the size, for the message.
  double simulated_ranks = 0;
  double micro_batches = 0;   // the largest over the jobs
  double layers_per_rank = 0; // the largest over the simulated ranks
  double gpus = 0, nics = 0;
};

// `materialised`: the graph of every task is built (simulate_materialised), not a per-stage template.
StepEstimate estimate_step(const Scenario& s, bool materialised = false);

// Throws InputError (one line naming the scenario file, the estimate, the limit and the knob) when the
// estimate is past simulation.max_tasks or simulation.max_memory_gib.
void check_budget(const Scenario& s, bool materialised = false);

}  // namespace cs::sim
