#pragma once
// Reading an input file whole, safely: only a regular file is read (a FIFO, a device such as /dev/zero, a
// socket or a directory is refused at once instead of being read forever or failing obscurely), and only up
// to a stated size, so memory stays bounded whatever the path names. The limits are far above any real
// input of its kind; each says why.
#include <cstdint>
#include <string>

namespace cs::files {

// A scenario is a few KiB; 4 MiB holds 1,000 jobs with room to spare.
inline constexpr std::uintmax_t kMaxScenarioBytes = std::uintmax_t{4} << 20;
// A calibration profile holds a few thousand efficiency points (~100 KiB); a topology file with 10^4 GPUs
// and their links is a few MiB.
inline constexpr std::uintmax_t kMaxProfileBytes = std::uintmax_t{64} << 20;
inline constexpr std::uintmax_t kMaxTopologyBytes = std::uintmax_t{64} << 20;
// Measurement JSON: the harness's files are ~100 KiB, a published-figures file less. (nccl-tests logs are
// streamed a line at a time, bounded by their row limit, not read whole.)
inline constexpr std::uintmax_t kMaxMeasurementBytes = std::uintmax_t{256} << 20;

// The contents of `path`. Throws FileError with one line naming the path when it is missing or unreadable
// ("PATH: " + cannot_open), not a regular file, or larger than `max_bytes` (`what` names the kind of file in
// that message, e.g. "scenario").
std::string read_input_file(const std::string& path, std::uintmax_t max_bytes, const std::string& what,
                            const std::string& cannot_open);

// Throws the FileError read_input_file would for a path that is missing, unreadable or not a regular file
// (for a reader that streams the file itself).
void require_regular_file(const std::string& path, const std::string& what, const std::string& cannot_open);

// True when `path` names an existing regular file of at most `max_bytes` (for sniffing a file's kind before
// reading it; the reader then reports what is wrong with it).
bool is_readable_regular_file(const std::string& path);

}  // namespace cs::files
