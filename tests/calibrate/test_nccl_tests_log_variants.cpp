// One test per nccl-tests log variant users have (issue 14, "Import everything users have"): the rows that
// import and the message of every skipped line. The files are in tests/calibrate/data/nccl-tests-logs/,
// written from the real logs of calibrate/published/nccl-tests-logs by make_variants.py (SOURCES.md there).
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "calibrate/import/import.hpp"
#include "calibrate/import/nccl_tests_log.hpp"

using namespace cs::calibrate;
using cs::models::CollectiveKind;

namespace {

std::string variants_dir() { return std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/calibrate/data/nccl-tests-logs/"; }
std::string published_dir() { return std::string(CLUSTERSIM_SOURCE_DIR) + "/calibrate/published/nccl-tests-logs/"; }

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The file read as the CLI reads it (a line at a time), and checked to give what the whole text gives.
NcclTestsLog parse_both(const std::string& path, const NcclTestsHints& hints = {}) {
  const NcclTestsLog whole = parse_nccl_tests_log(std::string_view(slurp(path)), path, hints);
  const NcclTestsLog streamed = read_nccl_tests_log(path, hints);
  CHECK(streamed.problems == whole.problems);
  REQUIRE(streamed.runs.size() == whole.runs.size());
  for (std::size_t r = 0; r < whole.runs.size(); ++r) {
    REQUIRE(streamed.runs[r].rows.size() == whole.runs[r].rows.size());
    for (std::size_t i = 0; i < whole.runs[r].rows.size(); ++i) {
      CHECK(streamed.runs[r].rows[i].line == whole.runs[r].rows[i].line);
      CHECK(streamed.runs[r].rows[i].time_us[0] == whole.runs[r].rows[i].time_us[0]);
      CHECK(streamed.runs[r].rows[i].time_us[1] == whole.runs[r].rows[i].time_us[1]);
    }
  }
  return whole;
}

// The A100 2-node log's 28 rows (8 B .. 1 GiB, both placements), as published.
void check_a100_rows(const NcclTestsRun& run) {
  REQUIRE(run.rows.size() == 28);
  CHECK(run.rows.front().size_bytes == 8.0);
  CHECK(run.rows.front().time_us[0] == 17.08);
  CHECK(run.rows.front().time_us[1] == 16.76);
  CHECK(run.rows[9].size_bytes == 4096.0);
  CHECK(run.rows[9].time_us[0] == 22.76);
  CHECK(run.rows[17].size_bytes == 1048576.0);
  CHECK(run.rows[17].time_us[0] == 3332.3);
  CHECK(run.rows[17].time_us[1] == 3392.5);
  CHECK(run.rows.back().size_bytes == 1073741824.0);
  CHECK(run.rows.back().time_us[0] == 166733.0);
  for (const auto& row : run.rows) CHECK((row.present[0] && row.present[1]));
  CHECK(run.ranks == 2);
  CHECK(run.nodes == 2);
  CHECK(run.gpu == "NVIDIA A100-PCIE-40GB");
}

}  // namespace

TEST_CASE("nccl-tests variant: srun --label task prefixes", "[calibrate]") {
  const std::string path = variants_dir() + "srun-label-a100-2node-allreduce.log";
  const NcclTestsLog log = parse_both(path);
  CHECK(log.problems.empty());
  CHECK(log.launchers == std::vector<std::string>{"srun --label"});
  REQUIRE(log.runs.size() == 1);
  check_a100_rows(log.runs[0]);
  CHECK(log.runs[0].ranks_from == "device lines");
  CHECK(nccl_tests_measurements(log).comm.size() == 56);

  // Labels are right-aligned to the widest task id: " 0: " and "12: " in a 16-task job; only task 0 prints.
  const std::string wide =
      " 0: # Collective test starting: all_gather_perf\n"
      " 0: # nThread 1 nGpus 1 minBytes 1048576 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20\n"
      "12: n2:77:78 [0] NCCL INFO comm 0x1 rank 12 nRanks 16 nNodes 2 localRanks 8 localRank 4 MNNVL 0\n"
      " 0: #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      " 0:      1048576         16384     float    none      -1    20.00   52.43   49.15      0    20.00   52.43   49.15      0\n";
  const NcclTestsLog l = parse_nccl_tests_log(wide, "wide.log");
  CHECK(l.problems.empty());
  REQUIRE(l.runs.size() == 1);
  REQUIRE(l.runs[0].rows.size() == 1);
  CHECK(l.runs[0].ranks == 16);  // NCCL INFO nRanks: no rank lines, nGpus 1 is one process's share
  CHECK(l.runs[0].ranks_from == "NCCL INFO");
  CHECK(l.runs[0].nodes == 2);
}

TEST_CASE("nccl-tests variant: Open MPI tag-output, also lodged mid-row", "[calibrate]") {
  // Line 73: "[1,0]<stdout>:  65536 ... -1[1,0]<stdout>:    183.1 ...", a row forwarded in two chunks.
  const std::string path = variants_dir() + "openmpi-tag-output-a100-2node-allreduce.log";
  const NcclTestsLog log = parse_both(path);
  CHECK(log.problems.empty());
  CHECK(log.launchers == std::vector<std::string>{"Open MPI --tag-output"});
  REQUIRE(log.runs.size() == 1);
  check_a100_rows(log.runs[0]);
  CHECK(log.runs[0].rows[13].line == 73);
  CHECK(log.runs[0].rows[13].time_us[0] == 183.1);

  // Open MPI 5 puts a space after the tag.
  const std::string v5 =
      "[1,0]<stdout>: # Collective test starting: all_reduce_perf\n"
      "[1,0]<stdout>: #  Rank  0 Group  0 Pid 1 on a device  0 [0x01] NVIDIA H200\n"
      "[1,0]<stdout>: #  Rank  1 Group  0 Pid 2 on b device  0 [0x01] NVIDIA H200\n"
      "[1,0]<stdout>:      1048576        262144     float     sum      -1    20.00   52.43   52.43      0    20.00   52.43   52.43      0\n";
  const NcclTestsLog l = parse_nccl_tests_log(v5, "v5.log");
  CHECK(l.problems.empty());
  REQUIRE(l.runs.size() == 1);
  CHECK(l.runs[0].rows.size() == 1);
  CHECK(l.runs[0].nodes == 2);
}

TEST_CASE("nccl-tests variant: NCCL INFO and WARN lines in the middle of rows", "[calibrate]") {
  // Line 60: INFO glued after the 8 B row's root ("-1test1:5425:5439 [0] NCCL INFO ..."), an INFO line,
  // then the rest of the row on line 62. Line 71: INFO inside the 4096 B row's time ("22.7" | "6").
  // Lines 80-82: the 1 MiB row, a WARN (newline first, then a timestamp), the in-place block.
  const std::string path = variants_dir() + "info-mid-row-a100-2node-allreduce.log";
  const NcclTestsLog log = parse_both(path);
  REQUIRE(log.problems.size() == 1);
  CHECK(log.problems[0] == path + ":81: 1 NCCL WARN line (first: \"NET/IB : Got async event : port active\"); the rows "
                                  "were imported, check the run was healthy");
  REQUIRE(log.runs.size() == 1);
  check_a100_rows(log.runs[0]);
  CHECK(log.runs[0].rows[0].line == 60);
  CHECK(log.runs[0].rows[9].line == 71);
  CHECK(log.runs[0].rows[17].line == 80);
  const MeasurementSet set = nccl_tests_measurements(log);
  CHECK(set.comm.size() == 56);
  CHECK(set.notes == log.problems);
}

TEST_CASE("nccl-tests variant: CRLF line ends", "[calibrate]") {
  const std::string path = variants_dir() + "crlf-h100-8gpu-allreduce.log";
  REQUIRE(slurp(path).find("\r\n") != std::string::npos);
  const NcclTestsLog log = parse_both(path);
  CHECK(log.problems.empty());
  REQUIRE(log.runs.size() == 1);
  CHECK(log.runs[0].gpu == "NVIDIA H100 80GB HBM3");  // no '\r' left in the device name
  CHECK(log.runs[0].ranks == 8);
  CHECK(log.runs[0].collective == CollectiveKind::all_reduce);
  CHECK(log.runs[0].collective_from == "file name");
  REQUIRE(log.runs[0].rows.size() == 6);
  CHECK(log.runs[0].rows.back().time_us[1] == 15773.0);
  CHECK(nccl_tests_measurements(log).comm.size() == 12);
}

TEST_CASE("nccl-tests variant: several tables in one file", "[calibrate]") {
  const std::string path = variants_dir() + "several-tables-h100-allreduce-v100-allgather.log";
  const NcclTestsLog log = parse_both(path);
  CHECK(log.problems.empty());
  REQUIRE(log.runs.size() == 2);
  CHECK(log.runs[0].collective == CollectiveKind::all_reduce);
  CHECK(log.runs[0].collective_from == "Collective test starting");
  CHECK(log.runs[0].ranks == 8);
  CHECK(log.runs[0].rows.size() == 6);
  CHECK(log.runs[1].collective == CollectiveKind::all_gather);
  CHECK(log.runs[1].collective_from == "command line");
  CHECK(log.runs[1].ranks == 8);
  CHECK(log.runs[1].ranks_from == "-g x -t");
  CHECK(log.runs[1].first_line == 29);  // the command line (2 + 24 + 2 lines before it)
  REQUIRE(log.runs[1].rows.size() == 1);
  CHECK(log.runs[1].rows[0].time_us[0] == 29122.0);
  CHECK(nccl_tests_measurements(log).comm.size() == 12 + 2);

  // A second column header after rows, with no run header between: a table of the same run's program.
  const std::string two =
      "# Collective test starting: all_gather_perf\n"
      "# nThread 1 nGpus 4 minBytes 1048576 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "      1048576         65536     float    none      -1    20.00   52.43   39.32      0    20.00   52.43   39.32      0\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "      4194304        262144     float    none      -1    50.00   83.89   62.91      0    50.00   83.89   62.91      0\n";
  const NcclTestsLog l = parse_nccl_tests_log(two, "two.log");
  CHECK(l.problems.empty());
  REQUIRE(l.runs.size() == 2);
  CHECK(l.runs[1].first_line == 5);
  CHECK(l.runs[1].collective == CollectiveKind::all_gather);
  CHECK(l.runs[1].ranks == 4);
  CHECK(l.runs[1].rows.size() == 1);
}

TEST_CASE("nccl-tests variant: out-of-place only and in-place only tables", "[calibrate]") {
  const std::string path = variants_dir() + "out-of-place-only-h100-8gpu-allreduce.log";
  const NcclTestsLog log = parse_both(path);
  CHECK(log.problems.empty());
  REQUIRE(log.runs.size() == 1);
  REQUIRE(log.runs[0].rows.size() == 6);
  for (const auto& row : log.runs[0].rows) CHECK((row.present[0] && !row.present[1]));
  CHECK(log.runs[0].rows.back().time_us[0] == 15870.0);
  const MeasurementSet set = nccl_tests_measurements(log);
  REQUIRE(set.comm.size() == 6);
  CHECK_FALSE(set.comm[0].in_place);

  // The label line names only in-place: the one block is the in-place one.
  const std::string in_place =
      "# Collective test starting: all_reduce_perf\n"
      "#  Rank  0 Group  0 Pid 1 on a device  0 [0x01] NVIDIA H200\n"
      "#  Rank  1 Group  0 Pid 1 on a device  1 [0x02] NVIDIA H200\n"
      "#                                                              in-place\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
      "      1048576        262144     float     sum      -1    20.00   52.43   52.43      0\n";
  const NcclTestsLog l = parse_nccl_tests_log(in_place, "ip.log");
  CHECK(l.problems.empty());
  REQUIRE(l.runs.size() == 1);
  REQUIRE(l.runs[0].rows.size() == 1);
  CHECK((!l.runs[0].rows[0].present[0] && l.runs[0].rows[0].present[1]));
  const MeasurementSet s = nccl_tests_measurements(l);
  REQUIRE(s.comm.size() == 1);
  CHECK(s.comm[0].in_place);

  // A row cut short in a two-block table is truncated, not taken for one placement.
  const std::string cut =
      "# Collective test starting: all_reduce_perf\n"
      "# nThread 1 nGpus 2\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "      1048576        262144     float     sum      -1    20.00   52.43   52.43      0\n"
      "      2097152        524288     float     sum      -1    30.00   69.91   69.91      0    30.00   69.91   69.91      0\n";
  const NcclTestsLog c = parse_nccl_tests_log(cut, "cut.log");
  REQUIRE(c.problems.size() == 1);
  CHECK(c.problems[0] == "cut.log:4: truncated data row (expected at least 13 fields, got 9); skipped");
  CHECK(c.row_count() == 1);
}

TEST_CASE("nccl-tests variant: old all-to-all with error column, no root, blank redop", "[calibrate]") {
  // nccl-tests 119a0ec (2020) alltoall.cu: header "size count type redop time ... error", rows printed
  // with opName "" (blank redop), no root; rank lines without "Group".
  const std::string path = variants_dir() + "v100-8gpu-alltoall-old-format.log";
  const NcclTestsLog log = parse_both(path);
  CHECK(log.problems.empty());
  REQUIRE(log.runs.size() == 1);
  const auto& run = log.runs[0];
  CHECK(run.collective == CollectiveKind::all_to_all);
  CHECK(run.collective_from == "file name");
  CHECK(run.ranks == 8);
  CHECK(run.nodes == 1);
  CHECK(run.gpu == "Tesla V100-SXM2-32GB");
  REQUIRE(run.rows.size() == 6);
  CHECK(run.rows[0].size_bytes == 1048576.0);
  CHECK(run.rows[0].time_us[0] == 47.49);
  CHECK(run.rows[0].time_us[1] == 48.99);
  CHECK(run.rows.back().time_us[0] == 7709.6);
  // busbw = S / t x 7/8 at 8 ranks on every row: nothing contradicts.
  const MeasurementSet set = nccl_tests_measurements(log);
  CHECK(set.comm.size() == 12);
  CHECK(set.notes.empty());

  // The other old layouts, headless (no column header: told from the row): all_reduce with redop and no
  // root (12 fields), broadcast with root and no redop (12), all_gather with neither (11, the shipped V100
  // log), and an old "error" of 1e+00 that is not a #wrong count.
  const std::string old_rows =
      "all_reduce_perf -g 2\n"
      "     1048576        262144   float     sum    20.00   52.43   52.43  0e+00    20.00   52.43   52.43  1e+00\n"
      "broadcast_perf -g 2\n"
      "     1048576        262144   float       0    20.00   52.43   52.43  0e+00    20.00   52.43   52.43  0e+00\n";
  const NcclTestsLog o = parse_nccl_tests_log(old_rows, "old.log");
  CHECK(o.problems.empty());
  REQUIRE(o.runs.size() == 2);
  CHECK(o.runs[0].collective == CollectiveKind::all_reduce);
  REQUIRE(o.runs[0].rows.size() == 1);
  CHECK((o.runs[0].rows[0].present[0] && o.runs[0].rows[0].present[1]));
  CHECK(o.runs[1].collective == CollectiveKind::broadcast);
  REQUIRE(o.runs[1].rows.size() == 1);
  CHECK(o.runs[1].rows[0].time_us[0] == 20.0);
}

TEST_CASE("nccl-tests variant: -G CUDA-graph run", "[calibrate]") {
  const std::string path = variants_dir() + "graph-h100-8gpu-allreduce.log";
  const NcclTestsLog log = parse_both(path);
  CHECK(log.problems.empty());
  REQUIRE(log.runs.size() == 1);
  CHECK(log.runs[0].cuda_graph_launches == 1);
  // --gpu names what the device lines already say (the catalog's H100-SXM): nothing to note; another GPU
  // is ignored, noted.
  CHECK(parse_nccl_tests_log(slurp(path), path, NcclTestsHints{std::nullopt, 0, 0, "H100-SXM"}).problems.empty());
  const NcclTestsLog other = parse_nccl_tests_log(slurp(path), "g.log", NcclTestsHints{std::nullopt, 0, 0, "A100-40GB"});
  REQUIRE(other.problems.size() == 1);
  CHECK(other.problems[0] == "g.log:1: --gpu A100-40GB ignored: the log's device lines name NVIDIA H100 80GB HBM3");
  REQUIRE(other.runs.size() == 1);
  CHECK(other.runs[0].gpu == "NVIDIA H100 80GB HBM3");
  CHECK(log.runs[0].collective_from == "command line");
  CHECK(log.runs[0].ranks == 8);  // the rank lines (the command line's -g 8 agrees)
  CHECK(log.runs[0].ranks_from == "device lines");
  REQUIRE(log.runs[0].rows.size() == 6);
  CHECK(log.runs[0].rows[0].time_us[0] == 613.3);
  CHECK(nccl_tests_measurements(log).comm.size() == 12);
}

TEST_CASE("nccl-tests variant: headless paste takes its collective from --op", "[calibrate]") {
  // Starts at "# Using devices": no nThread line, no closing lines, and "headless-paste-h100" names no
  // collective. Without --op: the rows are reported with the fix; with it, they import.
  const std::string path = variants_dir() + "headless-paste-h100.log";
  const NcclTestsLog bare = parse_both(path);
  CHECK(bare.problems.empty());
  REQUIRE(bare.runs.size() == 1);
  CHECK_FALSE(bare.runs[0].collective);
  CHECK(bare.runs[0].rows.size() == 6);
  try {
    (void)nccl_tests_measurements(bare);
    FAIL("no error");
  } catch (const cs::InputError& e) {
    REQUIRE(e.messages().size() == 2);
    CHECK(e.messages()[0] == path + ":1: the run names no collective (no 'Collective test starting' line, *_perf "
                                    "command line or collective in the file name): pass --op NAME (all_reduce, "
                                    "all_gather, reduce_scatter, all_to_all, broadcast, send_recv); 6 rows (lines "
                                    "14-19) skipped");
    CHECK_THAT(e.messages()[1], Catch::StartsWith(path + ": no usable nccl-tests measurement"));
  }
  NcclTestsHints hints;
  hints.collective = CollectiveKind::all_reduce;
  const NcclTestsLog log = parse_both(path, hints);
  CHECK(log.problems.empty());
  REQUIRE(log.runs.size() == 1);
  CHECK(log.runs[0].collective == CollectiveKind::all_reduce);
  CHECK(log.runs[0].collective_from == "--op");
  CHECK(log.runs[0].ranks == 8);
  CHECK(log.runs[0].gpu == "NVIDIA H100 80GB HBM3");
  const MeasurementSet set = import_file(path, hints);
  CHECK(set.comm.size() == 12);

  // The file name names it when --op is not given; a log that names its own collective keeps it, noted.
  const NcclTestsLog named = parse_nccl_tests_log(slurp(path), "paste-allgather.log");
  REQUIRE(named.runs.size() == 1);
  CHECK(named.runs[0].collective == CollectiveKind::all_gather);
  const NcclTestsLog own = parse_nccl_tests_log(slurp(variants_dir() + "graph-h100-8gpu-allreduce.log"), "g.log",
                                                NcclTestsHints{CollectiveKind::broadcast, 0, 0, ""});
  REQUIRE(own.runs.size() == 1);
  CHECK(own.runs[0].collective == CollectiveKind::all_reduce);
  REQUIRE(own.problems.size() == 1);
  CHECK(own.problems[0] == "g.log:1: --op broadcast ignored: the log names all_reduce_perf");
}

TEST_CASE("nccl-tests variant: rows-only paste takes ranks, nodes and GPU from the command line", "[calibrate]") {
  const std::string path = variants_dir() + "rows-only-paste.txt";
  NcclTestsHints op;
  op.collective = CollectiveKind::all_reduce;
  const NcclTestsLog bare = parse_both(path, op);
  REQUIRE(bare.runs.size() == 1);
  CHECK(bare.runs[0].rows.size() == 11);
  try {
    (void)nccl_tests_measurements(bare);
    FAIL("no error");
  } catch (const cs::InputError& e) {
    REQUIRE(e.messages().size() == 2);
    CHECK(e.messages()[0] == path + ":1: rank count unknown (no '#  Rank' lines, NCCL INFO nRanks, nThread/nGpus or "
                                    "-g): pass --ranks N, a collective needs 2 or more; 11 rows (lines 1-11) skipped");
  }
  NcclTestsHints all = op;
  all.ranks = 2;
  all.nodes = 2;
  all.gpu = "A100-40GB";
  const NcclTestsLog log = parse_both(path, all);
  CHECK(log.problems.empty());
  REQUIRE(log.runs.size() == 1);
  const auto& run = log.runs[0];
  CHECK(run.ranks == 2);
  CHECK(run.ranks_from == "--ranks");
  CHECK(run.nodes == 2);
  CHECK(run.nodes_from == "--nodes");
  CHECK(run.gpu == "A100-40GB");
  CHECK(run.gpu_from == "--gpu");
  const MeasurementSet set = nccl_tests_measurements(log);
  REQUIRE(set.comm.size() == 22);
  CHECK(set.comm[0].nodes == 2);
  CHECK(set.comm[0].gpu == "A100-40GB");
  CHECK(guess_gpu(set.comm[0].gpu) != nullptr);

  // A wrong --ranks shows: busbw = algbw x 2(n-1)/n no longer matches the printed one above 1 GB/s.
  NcclTestsHints wrong = all;
  wrong.ranks = 8;
  const MeasurementSet w = nccl_tests_measurements(parse_nccl_tests_log(slurp(path), path, wrong));
  // 2 MiB .. 1 GiB print busbw >= 1 GB/s: 10 rows noted once each, both placements; 1 MiB (0.31) passes.
  // Line 2: 2097152 B / 365.5 us = 5.7378 GB/s algbw, x 2 x 7/8 = 10.0411 GB/s, not the printed 5.74.
  CHECK(w.comm.size() == 2);
  REQUIRE(w.notes.size() == 10);
  CHECK(w.notes[0] == path + ":2: out-of-place and in-place busbw 5.74 and 5.74 GB/s contradict size / time at 8 "
                             "ranks (10.0411, 10.0493 GB/s); skipped");
}

TEST_CASE("nccl-tests variant: ranks and nodes from NCCL INFO lines, hints the log contradicts ignored", "[calibrate]") {
  // The table and the INFO lines without the '#' preamble: "comm ... rank 0 nRanks 2 nNodes 2".
  const std::string path = variants_dir() + "a100-info-only-paste-allreduce.log";
  NcclTestsHints hints;
  hints.ranks = 4;
  hints.nodes = 4;
  const NcclTestsLog log = parse_both(path, hints);
  REQUIRE(log.problems.size() == 2);
  CHECK(log.problems[0] == path + ":1: --ranks 4 ignored: the log's NCCL INFO name 2 ranks");
  CHECK(log.problems[1] == path + ":1: --nodes 4 ignored: the log's NCCL INFO name 2 nodes");
  REQUIRE(log.runs.size() == 1);
  const auto& run = log.runs[0];
  CHECK(run.ranks == 2);
  CHECK(run.ranks_from == "NCCL INFO");
  CHECK(run.nodes == 2);
  CHECK(run.nodes_from == "NCCL INFO");
  CHECK(run.collective == CollectiveKind::all_reduce);
  CHECK(run.gpu.empty());
  REQUIRE(run.rows.size() == 28);
  CHECK(run.rows.front().line == 51);
  CHECK(nccl_tests_measurements(log).comm.size() == 56);
}

TEST_CASE("nccl-tests variant: fragments and truncated rows are each reported once", "[calibrate]") {
  // Line 4: a row cut short with nothing after it (the next line is a new row); line 6: numbers with no
  // row to continue; line 7: a row cut by an INFO line whose continuation never comes (a '#' line follows).
  const std::string text =
      "# Collective test starting: all_reduce_perf\n"
      "# nThread 1 nGpus 2\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "      1048576        262144     float     sum      -1    20.00\n"
      "      2097152        524288     float     sum      -1    30.00   69.91   69.91      0    30.00   69.91   69.91      0\n"
      "    30.00   69.91   69.91      0\n"
      "      4194304       1048576     float     sum      -1h1:1:2 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via P2P/IPC\n"
      "# Out of bounds values : 0 OK\n";
  const NcclTestsLog log = parse_nccl_tests_log(text, "f.log");
  REQUIRE(log.problems.size() == 3);
  CHECK(log.problems[0] == "f.log:4: truncated data row (expected at least 13 fields, got 6); skipped");
  CHECK(log.problems[1] == "f.log:6: numbers outside a data row (\"30.00   69.91   69.91      0\": no row before it "
                           "for them to continue); skipped");
  CHECK(log.problems[2] == "f.log:7: truncated data row (expected at least 13 fields, got 5); skipped");
  CHECK(log.row_count() == 1);
}

TEST_CASE("nccl-tests variant: every published log still imports as before", "[calibrate]") {
  for (const char* name : {"h100-8gpu-allreduce-nvls.log", "a100-pcie-2node-hdr-allreduce-info-interleaved.log",
                           "v100-8gpu-allgather-old-format.log"}) {
    const NcclTestsLog log = parse_both(published_dir() + name);
    CHECK(log.problems.empty());
    CHECK(log.launchers.empty());
  }
}

TEST_CASE("nccl-tests variant: srun tasks that each ran their own test keep one task's run", "[calibrate]") {
  // `srun -l -n 2 all_reduce_perf -g 2` with nccl-tests built without MPI: each task is a separate 2-GPU
  // test and prints its own header and rows. Task 0's lines come first and are read; task 1's (lines 2, 4,
  // 6, 8 and 10) are skipped in one note. NCCL INFO lines of other tasks are still read.
  const std::string text =
      "0: # nThread 1 nGpus 2 minBytes 1048576 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20\n"
      "1: # nThread 1 nGpus 2 minBytes 1048576 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20\n"
      "0: #  Rank  0 Group  0 Pid 11 on n1 device  0 [0x01] NVIDIA H200\n"
      "1: #  Rank  0 Group  0 Pid 12 on n2 device  0 [0x01] NVIDIA H200\n"
      "0: #  Rank  1 Group  0 Pid 11 on n1 device  1 [0x02] NVIDIA H200\n"
      "1: #  Rank  1 Group  0 Pid 12 on n2 device  1 [0x02] NVIDIA H200\n"
      "0: #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "1: #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "0:      1048576        262144     float     sum      -1    20.00   52.43   52.43      0    20.00   52.43   52.43      0\n"
      "1:      1048576        262144     float     sum      -1    21.00   49.93   49.93      0    21.00   49.93   49.93      0\n"
      "1: n2:12:13 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0\n";
  const NcclTestsLog log = parse_nccl_tests_log(text, "srun-nompi-allreduce.log");
  REQUIRE(log.problems.size() == 1);
  CHECK(log.problems[0] == "srun-nompi-allreduce.log: 5 lines from launcher tasks other than task 0 skipped (each task "
                           "printed its own run: nccl-tests built without MPI runs a separate test in every task): "
                           "lines 2, 4, 6, 8, 10");
  REQUIRE(log.runs.size() == 1);
  CHECK(log.runs[0].ranks == 2);
  CHECK(log.runs[0].nodes == 1);  // host n1 only
  REQUIRE(log.runs[0].rows.size() == 1);
  CHECK(log.runs[0].rows[0].time_us[0] == 20.0);
}
