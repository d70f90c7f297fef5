#pragma once
// Import of nccl-tests text output (all_reduce_perf and siblings), as users have it.
//
// The format (shared/ECOSYSTEM.md 1.1-1.3, from nccl-tests src/util.cu): '#' preamble lines (version,
// "Collective test starting: X_perf", "nThread a nGpus b ...", one "#  Rank r Group g Pid p on HOST device
// d [bus] NAME" line per rank), a column header, then one data row per size:
//
//   size count type redop root | time algbw busbw #wrong | time algbw busbw #wrong [| extra columns]
//                                   out-of-place               in-place
//
// time in microseconds, algbw and busbw in GB/s (1e9 bytes). What this parser accepts, because real logs
// have it: several runs concatenated (a run starts at a "Collective test starting", "nThread" or
// "X_perf ..." command line once the previous run has rows); NCCL INFO lines interleaved anywhere;
// headers that lost their '#' to Markdown; the old format without redop and root columns; "N/A" or
// "1e+00" in the #wrong column; per-iteration blocks (-I 1: eight columns a block, read from the header)
// and trailing timestamp columns (-S 1), which are ignored. Rank count: the '#  Rank' lines of the run
// (max rank + 1), else nThread x nGpus, else "-g N" / "-t N" on a command line. Nodes: distinct host
// names of the rank lines. Collective: the "Collective test starting" line, else a "*_perf" command
// line, else the file name. Algorithm: "NCCL_ALGO set by environment to X" in the INFO lines, else
// "default".
//
// Bad rows (truncated, unreadable numbers, busbw inconsistent with size / time at the run's rank count)
// are reported with their line number and skipped; so are placements whose #wrong is nonzero (nccl-tests
// found wrong results: a broken run, not a timing), in one warning with their count and line numbers; the rest of the file is imported. Only a file with no
// usable row at all is an error.
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "calibrate/import/measurement.hpp"

namespace cs::calibrate {

struct NcclTestsRow {
  int line = 0;
  double size_bytes = 0;
  std::int64_t count = 0;
  std::string type;
  // [0] out-of-place, [1] in-place
  bool present[2] = {false, false};
  double time_us[2] = {0, 0};
  double busbw_GBps[2] = {0, 0};
};

struct NcclTestsRun {
  int first_line = 0;
  std::string collective_name;                         // as printed ("all_reduce_perf")
  std::optional<models::CollectiveKind> collective;
  int ranks = 0;                                       // 0: unknown
  int nodes = 0;                                       // 0: unknown (taken as 1)
  std::string gpu;                                     // device name of rank 0
  std::string algorithm = "default";
  std::vector<NcclTestsRow> rows;
};

struct NcclTestsLog {
  std::string file;
  std::vector<NcclTestsRun> runs;
  std::vector<std::string> problems;  // "FILE:LINE: what", rows skipped
  // More data rows than kMaxNcclTestsRows: the rows are dropped (memory stays bounded) and
  // nccl_tests_measurements refuses the file with this message.
  std::string too_many_rows;
  std::size_t row_count() const;
};

// The most data rows one log may hold: an nccl-tests sweep prints tens of rows per run, so 2 x 10^5 is
// thousands of runs; a file with more is refused rather than fitted from gigabytes of points.
inline constexpr std::size_t kMaxNcclTestsRows = 200000;

// Parses the text of one log. Never throws: problems are collected in the result.
NcclTestsLog parse_nccl_tests_log(std::string_view text, const std::string& file);
// The same, read from a stream a line at a time: memory holds one line and the rows, never the text (a
// 200 MB log). A line over 64 KiB (no nccl-tests line is) is a problem, skipped.
NcclTestsLog parse_nccl_tests_log(std::istream& in, const std::string& file);

// The measurements of a parsed log: one per row and placement (out-of-place, in-place). Runs without a
// collective or rank count, and rows whose busbw contradicts size/time, become notes. Throws
// InputError (all problems, then "no usable measurement") when nothing usable remains.
MeasurementSet nccl_tests_measurements(const NcclTestsLog& log);

// The collective a name denotes: "all_reduce_perf", "./build/alltoall_perf", a file name such as
// "h100-8gpu-allreduce-nvls.log". nullopt when none is named.
std::optional<models::CollectiveKind> collective_from_name(std::string_view name);

}  // namespace cs::calibrate
