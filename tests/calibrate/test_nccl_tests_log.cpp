#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "calibrate/import/import.hpp"
#include "calibrate/import/nccl_tests_log.hpp"

using namespace cs::calibrate;
using cs::models::CollectiveKind;

namespace {

std::string logs_dir() { return std::string(CLUSTERSIM_SOURCE_DIR) + "/calibrate/published/nccl-tests-logs/"; }

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("nccl-tests log: H100 NVLS all-reduce sample imports", "[calibrate]") {
  const std::string path = logs_dir() + "h100-8gpu-allreduce-nvls.log";
  const NcclTestsLog log = parse_nccl_tests_log(slurp(path), path);
  CHECK(log.problems.empty());
  REQUIRE(log.runs.size() == 1);
  const auto& run = log.runs[0];
  CHECK(run.collective == CollectiveKind::all_reduce);  // from the file name: no "Collective test" line
  CHECK(run.ranks == 8);
  CHECK(run.nodes == 1);
  CHECK(run.gpu == "NVIDIA H100 80GB HBM3");
  REQUIRE(run.rows.size() == 6);
  CHECK(run.rows.front().size_bytes == 134217728.0);
  CHECK(run.rows.back().size_bytes == 4294967296.0);
  CHECK(run.rows.back().time_us[0] == 15870.0);
  CHECK(run.rows.back().time_us[1] == 15773.0);
  const MeasurementSet set = nccl_tests_measurements(log);
  CHECK(set.comm.size() == 12);
  CHECK(set.notes.empty());
}

TEST_CASE("nccl-tests log: INFO lines interleaved, two nodes by MPI", "[calibrate]") {
  const std::string path = logs_dir() + "a100-pcie-2node-hdr-allreduce-info-interleaved.log";
  const NcclTestsLog log = parse_nccl_tests_log(slurp(path), path);
  CHECK(log.problems.empty());
  REQUIRE(log.runs.size() == 1);
  const auto& run = log.runs[0];
  CHECK(run.ranks == 2);   // two '#  Rank' lines; nGpus says 1 per process
  CHECK(run.nodes == 2);   // hosts test1 and test2
  CHECK(run.rows.size() == 28);
  CHECK(run.rows.front().size_bytes == 8.0);
  CHECK(run.rows.back().size_bytes == 1073741824.0);
  const MeasurementSet set = nccl_tests_measurements(log);
  CHECK(set.comm.size() == 56);
  CHECK(set.comm.front().nodes == 2);
}

TEST_CASE("nccl-tests log: old format without redop/root, no '#', rank count from -g", "[calibrate]") {
  const std::string path = logs_dir() + "v100-8gpu-allgather-old-format.log";
  const NcclTestsLog log = parse_nccl_tests_log(slurp(path), path);
  CHECK(log.problems.empty());
  REQUIRE(log.runs.size() == 1);
  CHECK(log.runs[0].collective == CollectiveKind::all_gather);
  CHECK(log.runs[0].ranks == 8);
  REQUIRE(log.runs[0].rows.size() == 1);
  CHECK(log.runs[0].rows[0].time_us[0] == 29122.0);
  // busbw 129.05 = 4294967296 B / 29122 us x 7/8: consistent, so both placements import.
  CHECK(nccl_tests_measurements(log).comm.size() == 2);
}

TEST_CASE("nccl-tests log: a garbled copy reports its bad lines and imports the rest", "[calibrate]") {
  std::string text = slurp(logs_dir() + "a100-pcie-2node-hdr-allreduce-info-interleaved.log");
  // Lines are 1-based; find the rows for 4096 B and 65536 B and damage them.
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  int truncated = 0, garbled = 0, contradict = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("        4096", 0) == 0) {
      lines[i] = lines[i].substr(0, 60);  // cut inside the out-of-place block
      truncated = int(i) + 1;
    } else if (lines[i].rfind("       65536", 0) == 0) {
      lines[i].replace(lines[i].find("183.1"), 5, "18x.1");
      garbled = int(i) + 1;
    } else if (lines[i].rfind("    16777216", 0) == 0) {
      lines[i].replace(lines[i].find("2619.1"), 6, "9619.1");  // a digit flipped: busbw no longer matches
      contradict = int(i) + 1;
    }
  }
  REQUIRE(truncated > 0);
  REQUIRE(garbled > 0);
  REQUIRE(contradict > 0);
  std::string damaged;
  for (const auto& l : lines) damaged += l + "\n";
  damaged += "  536870912     134217728     float     sum      -1   83359    6.4";  // truncated last line
  const NcclTestsLog log = parse_nccl_tests_log(damaged, "damaged-allreduce.log");
  REQUIRE(log.problems.size() == 3);
  CHECK_THAT(log.problems[0], Catch::StartsWith("damaged-allreduce.log:" + std::to_string(truncated) + ": truncated"));
  CHECK_THAT(log.problems[1], Catch::StartsWith("damaged-allreduce.log:" + std::to_string(garbled) + ": unreadable"));
  CHECK_THAT(log.problems[2], Catch::StartsWith("damaged-allreduce.log:" + std::to_string(lines.size() + 1) + ": truncated"));
  CHECK(log.row_count() == 26);
  const MeasurementSet set = nccl_tests_measurements(log);
  // The flipped digit only affects the out-of-place column of its row.
  CHECK(set.comm.size() == 26 * 2 - 1);
  bool named = false;
  for (const auto& n : set.notes)
    named = named || n.rfind("damaged-allreduce.log:" + std::to_string(contradict) + ": out-of-place busbw", 0) == 0;
  CHECK(named);
}

TEST_CASE("nccl-tests log: concatenated runs, markdown-stripped headers, N/A and timestamps", "[calibrate]") {
  const std::string text =
      "# nccl-tests version 2.19.6 nccl-headers=22807 nccl-library=22807\n"
      "# Collective test starting: reduce_scatter_perf\n"
      "# nThread 1 nGpus 4 minBytes 1048576 maxBytes 4194304 step: 2(factor) warmup iters: 1 iters: 20 agg iters: 1 validation: 0 graph: 0\n"
      "#\n"
      "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n"
      "     1048576         65536     float     sum      -1    20.00   52.43   39.32     N/A    20.00   52.43   39.32     N/A 2024-01-01 10:00:00\n"
      "     4194304        262144     float     sum      -1    50.00   83.89   62.91     N/A    50.00   83.89   62.91     N/A 2024-01-01 10:00:01\n"
      "# Collective test concluded: reduce_scatter_perf\n"
      " Collective test starting: broadcast_perf\n"
      " nThread 1 nGpus 2 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 1 iters: 20\n"
      "  Rank  0 Group  0 Pid 1 on a device  0 [0x01] NVIDIA H200\n"
      "  Rank  1 Group  0 Pid 1 on a device  1 [0x02] NVIDIA H200\n"
      "       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n"
      "           8             2     float    none       0    10.00    0.00    0.00       0    10.00    0.00    0.00       0\n"
      "          16             4     float    none       0    10.00    0.00    0.00       0    10.00    0.00    0.00       0\n";
  const NcclTestsLog log = parse_nccl_tests_log(text, "mixed.log");
  CHECK(log.problems.empty());
  REQUIRE(log.runs.size() == 2);
  CHECK(log.runs[0].collective == CollectiveKind::reduce_scatter);
  CHECK(log.runs[0].ranks == 4);  // nThread x nGpus: no rank lines
  CHECK(log.runs[0].rows.size() == 2);
  CHECK(log.runs[1].collective == CollectiveKind::broadcast);
  CHECK(log.runs[1].ranks == 2);
  CHECK(log.runs[1].gpu == "NVIDIA H200");
  CHECK(log.runs[1].rows.size() == 2);
  CHECK(nccl_tests_measurements(log).comm.size() == 8);
}

TEST_CASE("nccl-tests log: a file with nothing usable is an error naming it", "[calibrate]") {
  const NcclTestsLog log = parse_nccl_tests_log("hello\n  12 garbage\n", "nothing.log");
  REQUIRE_THROWS_WITH(nccl_tests_measurements(log), Catch::Contains("nothing.log: no usable nccl-tests measurement"));
}

TEST_CASE("import: published nccl.json sweeps become points, quoted figures are noted", "[calibrate]") {
  const MeasurementSet set = import_file(std::string(CLUSTERSIM_SOURCE_DIR) + "/calibrate/published/nccl.json");
  // Sweeps: Azure A100 (24 sizes), Azure H100 (24), ring 4-NIC (rank count unknown: noted), H100 PCIe (3).
  CHECK(set.comm.size() == 24 + 24 + 3);
  CHECK(!set.notes.empty());
  for (const auto& m : set.comm) CHECK(m.time_s > 0);
}
