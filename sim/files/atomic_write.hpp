#pragma once
// Output files (reports, traces, CSV, calibration profiles, scenarios saved by the GUI): written whole or
// not at all.
//
// The text goes to a temporary file that mkstemp creates with a unique name in the target's own folder
// (".NAME.XXXXXX.tmp"), then rename(2) puts it in place: a reader sees the old file or the new one, never a
// half-written one; two writers of one path both succeed (the last rename wins, each file whole); a user's
// own NAME.tmp is never touched; the temporary is removed on every failure path, and when SIGINT, SIGTERM or
// SIGHUP ends the process mid-write (a handler, installed where the signal's action is the default one,
// removes every open temporary and then lets the signal end the process as before).
//
// What the target may be:
//   - missing or a regular file: written (a regular file keeps its permission bits; a new one gets
//     0666 less the umask, like any file the user creates);
//   - a symbolic link: followed; the file it points to is replaced and the link stays (a link to a missing
//     file is refused);
//   - a directory, a FIFO, a device or a socket: refused with a message ("--trace /dev/stdout" does not
//     replace /dev/stdout);
//   - one of the command's own input files: refused (check_output_path), so `calibrate fit LOG -o LOG`
//     cannot overwrite the measurement it read.
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace cs::files {

// Writes `text` to `path` as above. Throws FileError naming the path when it cannot.
void write_file_atomically(const std::string& path, const std::string& text);
// The same for an output too large to hold as one string (a trace): `write` streams the contents into the
// temporary file. An exception from `write` removes the temporary and propagates.
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write);

// An input file of a command: its path and, for a file a scenario names, the key that names it.
struct InputFile {
  std::string path;
  std::string named_by;  // e.g. "cluster.topology_file"; empty for a file given on the command line
};

// Throws the FileError now that write_file_atomically(path) would throw later for the target's kind or its
// folder (missing, not writable), or when `path` is the same file as one of `inputs` (compared by
// std::filesystem::equivalent: through links and other spellings), so a long simulation does not end in
// that error and an output never replaces what the command reads. `option` (e.g. "--trace") starts the
// message when given. Leaves nothing behind.
void check_output_path(const std::string& path, const std::vector<InputFile>& inputs, const std::string& option = {});
void check_output_path(const std::string& path, const std::vector<std::string>& inputs = {});

}  // namespace cs::files
