#pragma once
// Output files of the CLI and the GUI (reports, traces, CSV, scenarios): written whole or not at all.
#include <string>

namespace cs::sim {

// Writes `text` to `path` through a temporary file in the same folder and a rename, so a reader never sees
// a half-written file. Throws InputError naming the path when it cannot be written.
void write_file_atomically(const std::string& path, const std::string& text);

// Throws the same InputError now when `path` could not be written later (its folder is missing or not
// writable), so a long simulation does not end in that error. Leaves nothing behind.
void check_writable(const std::string& path);

}  // namespace cs::sim
