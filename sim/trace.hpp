#pragma once
// Chrome / Perfetto trace of a simulated step (the JSON "traceEvents" format that ui.perfetto.dev and
// chrome://tracing load): one process per node, one thread per GPU stream, one complete ("X") event per
// task while it runs, with the micro-batch and, for collectives, the bytes and group size as args.
// Written to a temporary file and renamed, so a reader never sees half a trace.
#include <string>

#include "sim/scenario.hpp"
#include "sim/simulation.hpp"

namespace cs::sim {

void write_trace(const Scenario& scenario, const SimulationResult& result, const std::string& path);

// Writes `text` to `path` through a temporary file in the same folder and a rename. Throws InputError
// naming the path when it cannot be written.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace cs::sim
