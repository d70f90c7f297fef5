#pragma once
// Output files of the CLI and the GUI (reports, traces, CSV, scenarios): written whole or not at all,
// through sim/files/atomic_write.hpp (a unique temporary beside the target and a rename; what a target may
// be — a symbolic link is followed, a directory, FIFO or device refused — is written there).
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/files/atomic_write.hpp"

namespace cs::sim {

struct Scenario;

// Writes to `path` atomically what `write` streams into the temporary file. Throws InputError naming the
// path when it cannot be written; an exception from `write` removes the temporary and propagates.
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write);
// The same for a text held whole.
inline void write_file_atomically(const std::string& path, const std::string& text) {
  write_file_atomically(path, [&text](std::ostream& out) { out.write(text.data(), static_cast<std::streamsize>(text.size())); });
}

// Throws the same InputError now when `path` could not be written later (its folder is missing or not
// writable, it is a directory, FIFO or device) or is the same file as one of `inputs` (the command's input
// files), so a long simulation does not end in that error. Leaves nothing behind.
void check_writable(const std::string& path, const std::vector<std::string>& inputs = {});
// The same for the output of `option` (e.g. "--trace", named in the message) against every file the command
// reads, the files a scenario names included (scenario_inputs).
void check_writable(const std::string& option, const std::string& path, const std::vector<files::InputFile>& inputs);

// The files a run of the scenario `file` reads: the scenario itself, its cluster.topology_file and its
// calibration profile (each resolved against the scenario's folder, as the scenario reader does).
std::vector<files::InputFile> scenario_inputs(const Scenario& s, const std::string& file);
// The same from the scenario's JSON (a sweep's base, before any point is parsed).
std::vector<files::InputFile> scenario_inputs(const nlohmann::json& doc, const std::string& file);

}  // namespace cs::sim
