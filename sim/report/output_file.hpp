#pragma once
// Output files of the CLI and the GUI (reports, traces, CSV, scenarios): written whole or not at all.
#include <functional>
#include <ostream>
#include <string>

namespace cs::sim {

// Writes `text` to `path` through a temporary file in the same folder and a rename, so a reader never sees
// a half-written file. Throws InputError naming the path when it cannot be written.
void write_file_atomically(const std::string& path, const std::string& text);
// The same for an output too large to hold as one string (a trace): `write` streams the contents into the
// temporary file. An exception from `write` removes the temporary and propagates.
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write);

// Throws the same InputError now when `path` could not be written later (its folder is missing or not
// writable), so a long simulation does not end in that error. Leaves nothing behind.
void check_writable(const std::string& path);

}  // namespace cs::sim
