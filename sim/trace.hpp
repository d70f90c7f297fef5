#pragma once
// Chrome / Perfetto trace of a simulated step (the JSON "traceEvents" format that ui.perfetto.dev and
// chrome://tracing load): one process per node, one thread per GPU stream, one complete ("X") event per
// task while it runs, with the micro-batch and, for collectives, the bytes and group size as args.
// Written to a temporary file and renamed, so a reader never sees half a trace.
#include <string>

#include "sim/output_file.hpp"  // write_file_atomically, which the trace and other outputs share
#include "sim/scenario.hpp"
#include "sim/simulation.hpp"

namespace cs::sim {

void write_trace(const Scenario& scenario, const SimulationResult& result, const std::string& path);

}  // namespace cs::sim
