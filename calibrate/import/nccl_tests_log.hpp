#pragma once
// Import of nccl-tests text output (all_reduce_perf and siblings), as users have it.
//
// The format (shared/ECOSYSTEM.md 1.1-1.3; nccl-tests src/util.cu, writeDeviceReport / writeResultHeader /
// writeBenchmarkLinePreamble / writeBenchmarkLineBody at NVIDIA/nccl-tests a0b82b2, v2.19.6): '#' preamble
// lines ("nccl-tests version", "Collective test starting: X_perf", "nThread a nGpus b ... graph: g", one
// "#  Rank r Group g Pid p on HOST device d [bus] NAME" line per rank), a column header, then one row per size:
//
//   size count type redop root | time algbw busbw #wrong | time algbw busbw #wrong [| extra columns]
//                                   out-of-place               in-place
//
// time in microseconds, algbw and busbw in GB/s (1e9 bytes). What this parser accepts, because real logs
// have it (each variant has a test in tests/calibrate/test_nccl_tests_log_variants.cpp):
// - launcher prefixes on every line: `srun -l` / `--label` ("0: ", " 12: "), Open MPI `--tag-output`
//   ("[1,0]<stdout>:", Open MPI 5 "[1,0]<stdout>: "; also lodged mid-line, where a partial line was
//   forwarded), MPICH / Intel MPI `-l` / `-prepend-rank` ("[0] "); removed before anything else. With MPI
//   only rank 0 prints tables; when several tasks print their own (nccl-tests built without MPI, one test
//   per task) the first task's are read and the others' lines skipped in one note;
// - NCCL INFO / WARN / TRACE lines (NCCL src/debug.cc at NVIDIA/nccl 5067397: "host:pid:tid [dev] NCCL
//   INFO msg", WARN with a newline before it and "file:line" after the device, possibly a "[%F %T] "
//   timestamp) between lines and in the middle of a data row: the message is cut out, the row part before
//   it kept, and a row left short is completed by the continuation line that follows (an INFO line's
//   host glued to the row's last number, "-1node1:12:34 [0] NCCL INFO", is split at the host name);
// - CRLF line ends; several runs in one file (a run starts at "Collective test starting", "nThread" or an
//   "X_perf ..." command line once the previous run has rows; a second column header after rows starts a
//   table that keeps the run's collective, ranks and GPU); headers that lost their '#' to Markdown;
// - old formats (nccl-tests cbe7f65 2019, 119a0ec 2020): leading columns per collective ("size count type"
//   for all_gather, "... redop" for all_reduce / reduce_scatter / alltoall, "... root" for broadcast,
//   "... redop root" for reduce), an "error" column (a max error, "%5.0le") instead of "#wrong", and the
//   old alltoall's blank redop (it passed "" as the op name: a header naming redop over rows without one);
//   without a header the leading columns are told from the row itself;
// - one placement only (a header with one time/algbw/busbw block: out-of-place unless its label line names
//   only in-place); "N/A" or "1e+00" in the #wrong column; per-iteration blocks (-I 1: eight columns a
//   block, read from the header), trailing timestamp columns (-S 1), both ignored; -G CUDA-graph runs
//   (nccl-tests divides the time of a graph launch by the launches it replays: common.cu BenchTime, so
//   rows are per-collective like any other; the run records "graph: N").
//
// What a run is taken to be, first source that has it (the source is kept in the run):
// - collective: "Collective test starting", else a "*_perf" command line, else --op (hints), else the
//   file name; none of them: the run is skipped with a note saying to pass --op;
// - ranks: the '#  Rank' lines (max rank + 1), else NCCL INFO "nRanks N" (init.cc), else --ranks, else
//   nThread x nGpus (or "-g N" x "-t N" of a command line, whichever came last; both count one process's
//   ranks only, which is why --ranks goes before them);
// - nodes: distinct host names of the rank lines, else NCCL INFO "nNodes M", else --nodes, else 1;
// - GPU: the device name of rank 0's line, else --gpu; algorithm: "NCCL_ALGO set by environment to X".
// A hint the log contradicts is ignored with a note.
//
// Every line that held data but gave none is reported once, with its line number and why: truncated,
// unreadable, a continuation with no row before it, rows of a run that names no collective or rank count
// (one note naming their lines), placements whose #wrong is nonzero (nccl-tests found wrong results: a
// broken run, not a timing; one warning with their count and line numbers), busbw inconsistent with size /
// time at the run's rank count. NCCL WARN lines are counted in one note. The rest of the file is imported;
// only a file with no usable row at all is an error.
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
  // Where each came from: "Collective test starting", "command line", "--op", "file name"; "device
  // lines", "NCCL INFO", "--ranks", "nThread x nGpus", "-g x -t"; "--nodes"; "--gpu". Empty: unknown.
  std::string collective_from, ranks_from, nodes_from, gpu_from;
  int cuda_graph_launches = 0;                         // "graph: N" of the nThread line (-G N); 0: none
  std::vector<NcclTestsRow> rows;
};

// What the command line says about logs that do not say it themselves (--op, --ranks, --nodes, --gpu).
struct NcclTestsHints {
  std::optional<models::CollectiveKind> collective;
  int ranks = 0;
  int nodes = 0;
  std::string gpu;  // a device or catalog name ("H100-SXM")
};

struct NcclTestsLog {
  std::string file;
  std::vector<NcclTestsRun> runs;
  std::vector<std::string> problems;  // "FILE:LINE: what", rows skipped
  std::vector<std::string> launchers; // prefixes removed, in the order first met ("srun --label", ...)
  // More data rows than kMaxNcclTestsRows: the rows are dropped (memory stays bounded) and
  // nccl_tests_measurements refuses the file with this message.
  std::string too_many_rows;
  std::size_t row_count() const;
};

// The most data rows one log may hold: an nccl-tests sweep prints tens of rows per run, so 2 x 10^5 is
// thousands of runs; a file with more is refused rather than fitted from gigabytes of points.
inline constexpr std::size_t kMaxNcclTestsRows = 200000;

// Parses the text of one log. Never throws: problems are collected in the result.
NcclTestsLog parse_nccl_tests_log(std::string_view text, const std::string& file, const NcclTestsHints& hints = {});
// The same, read from a stream a line at a time: memory holds one line and the rows, never the text (a
// 200 MB log). A line over 64 KiB (no nccl-tests line is) is a problem, skipped.
NcclTestsLog parse_nccl_tests_log(std::istream& in, const std::string& file, const NcclTestsHints& hints = {});

// The measurements of a parsed log: one per row and placement (out-of-place, in-place). Runs without a
// collective or rank count, and rows whose busbw contradicts size/time, become notes. Throws
// InputError (all problems, then "no usable measurement") when nothing usable remains.
MeasurementSet nccl_tests_measurements(const NcclTestsLog& log);

// Whether a file whose text starts with '[' is a launcher-tagged log ("[1,0]<stdout>:", "[0] ") rather
// than a JSON array: `start` is the file's first bytes after leading white space.
bool starts_with_launcher_tag(std::string_view start);

// The collective a name denotes: "all_reduce_perf", "./build/alltoall_perf", a file name such as
// "h100-8gpu-allreduce-nvls.log". nullopt when none is named.
std::optional<models::CollectiveKind> collective_from_name(std::string_view name);

}  // namespace cs::calibrate
