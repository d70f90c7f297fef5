// nccl-tests logs read a line at a time (parse_nccl_tests_log(std::istream&)), and rows nccl-tests marked
// wrong (#wrong > 0) skipped with one warning.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "calibrate/import/nccl_tests_log.hpp"

using namespace cs::calibrate;

namespace {

const char* const kHeader =
    "# Collective test starting: all_reduce_perf\n"
    "# nThread 1 nGpus 8 minBytes 8 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20\n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n";

}  // namespace

TEST_CASE("nccl-tests log: placements with a nonzero #wrong are skipped with one warning naming their lines", "[calibrate]") {
  // Line 5: both placements right; line 6: out-of-place had 5 wrong elements; line 7: both wrong; line 8:
  // #wrong N/A (not checked) is kept.
  const std::string text = std::string(kHeader) +
                           "     1048576        262144     float     sum      -1    20.00   52.43   91.75      0    20.00   52.43   91.75      0\n"
                           "     1048576        262144     float     sum      -1    20.00   52.43   91.75      5    20.00   52.43   91.75      0\n"
                           "     1048576        262144     float     sum      -1    20.00   52.43   91.75      1    20.00   52.43   91.75      2\n"
                           "     1048576        262144     float     sum      -1    20.00   52.43   91.75    N/A    20.00   52.43   91.75    N/A\n";
  const NcclTestsLog log = parse_nccl_tests_log(text, "t.log");
  REQUIRE(log.problems.size() == 1);
  CHECK(log.problems[0] == "t.log: 2 rows with a nonzero #wrong (nccl-tests found wrong results) skipped: lines 6, 7");
  REQUIRE(log.runs.size() == 1);
  REQUIRE(log.runs[0].rows.size() == 3);  // line 7 entirely gone
  CHECK_FALSE(log.runs[0].rows[1].present[0]);
  CHECK(log.runs[0].rows[1].present[1]);
  const MeasurementSet set = nccl_tests_measurements(log);
  CHECK(set.comm.size() == 5);  // 2 + 1 + 2 placements
  REQUIRE(set.notes.size() == 1);
  CHECK(set.notes[0] == log.problems[0]);
}

TEST_CASE("nccl-tests log: the old format's error column is a max error, not #wrong", "[calibrate]") {
  const std::string text =
      "all_gather_perf -g 8 -b 4294967296 -e 4294967296 -n 100\n"
      "       size         count    type     time   algbw   busbw  error     time   algbw   busbw  error\n"
      "  4294967296     134217728   float    29122  129.05  129.05  1e+00    29169  128.84  128.84  1e+00\n";
  const NcclTestsLog log = parse_nccl_tests_log(text, "old.log");
  CHECK(log.problems.empty());
  REQUIRE(log.runs.size() == 1);
  CHECK(log.runs[0].rows.size() == 1);
}

TEST_CASE("nccl-tests log: a stream gives what the whole text gives, and an overlong line is skipped", "[calibrate]") {
  const std::string rows =
      "     1048576        262144     float     sum      -1    20.00   52.43   91.75      0    20.00   52.43   91.75      0\n"
      "     2097152        524288     float     sum      -1    30.00   69.91  122.34      0    30.00   69.91  122.34      0";
  const std::string text = std::string(kHeader) + "\r\n" + rows;  // a CRLF line, no newline at the end
  std::istringstream in(text);
  const NcclTestsLog streamed = parse_nccl_tests_log(in, "t.log");
  const NcclTestsLog whole = parse_nccl_tests_log(text, "t.log");
  CHECK(streamed.problems == whole.problems);
  REQUIRE(streamed.runs.size() == 1);
  REQUIRE(whole.runs.size() == 1);
  REQUIRE(streamed.runs[0].rows.size() == 2);
  CHECK(streamed.runs[0].ranks == 8);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(streamed.runs[0].rows[i].line == whole.runs[0].rows[i].line);
    CHECK(streamed.runs[0].rows[i].size_bytes == whole.runs[0].rows[i].size_bytes);
    CHECK(streamed.runs[0].rows[i].time_us[1] == whole.runs[0].rows[i].time_us[1]);
  }
  CHECK(streamed.runs[0].rows[1].line == 7);

  // 100 KB without a newline on line 5: no nccl-tests line is that long; skipped, the rest read.
  std::istringstream long_line(std::string(kHeader) + std::string(100000, 'x') + "\n" + rows + "\n");
  const NcclTestsLog l = parse_nccl_tests_log(long_line, "t.log");
  REQUIRE(l.problems.size() == 1);
  CHECK(l.problems[0] == "t.log:5: line longer than 65536 bytes; skipped");
  REQUIRE(l.runs.size() == 1);
  CHECK(l.runs[0].rows.size() == 2);
  CHECK(l.runs[0].rows[0].line == 6);
}

TEST_CASE("nccl-tests log: more than 2x10^5 data rows is refused, the rows not kept", "[calibrate]") {
  // A 200 MB log of data rows held 2.8 million measurements (1.6 GB). Past kMaxNcclTestsRows the parser
  // stops keeping rows and the import is refused naming the first row over the limit (header: 4 lines).
  std::string text = kHeader;
  const std::string row =
      "     1048576        262144     float     sum      -1    20.00   52.43   91.75      0    20.00   52.43   91.75      0\n";
  for (std::size_t i = 0; i < kMaxNcclTestsRows + 10; ++i) text += row;
  std::istringstream in(text);
  const NcclTestsLog log = parse_nccl_tests_log(in, "big.log");
  CHECK(log.row_count() == 0);
  CHECK(log.too_many_rows == "big.log:200005: more than 200000 data rows (200010 in all; an nccl-tests sweep prints tens "
                             "per run): split the file or keep the runs to fit");
  try {
    (void)nccl_tests_measurements(log);
    FAIL("no error");
  } catch (const cs::InputError& e) {
    REQUIRE(e.messages().size() == 1);
    CHECK(e.messages()[0] == log.too_many_rows);
  }
}
