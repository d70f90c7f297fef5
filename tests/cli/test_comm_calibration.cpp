// Calibration that bites (issue 14, done-when 2): a real 2-node nccl-tests log and a copy of it with every
// time doubled (tests/calibrate/data/SOURCES.md), each fitted with `calibrate fit --scenario`, reproduce
// their own busbw through `clustersim collective`, move a DP-heavy training step by its exposed DP share,
// and say so in the report; without a profile both give the default. Plus the fit-quality report, the
// validate side-by-side, the mismatch warning and the bad-input paths of the profile's NCCL block.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

using namespace clitest;
using nlohmann::json;

namespace {

const fs::path kRealLog = source_dir() / "calibrate/published/nccl-tests-logs/a100-pcie-2node-hdr-allreduce-info-interleaved.log";
const fs::path kSlowLog = source_dir() / "tests/calibrate/data/a100-pcie-2node-hdr-allreduce-doubled.log";
const fs::path kCluster = source_dir() / "examples/a100-2node-hdr-dp.json";

// size -> out-of-place time (s) of an nccl-tests log's data rows (the importer's own test covers parsing;
// here a row is "size count type redop root time algbw busbw #wrong time ...", 13 columns).
std::map<double, double> log_times(const fs::path& log) {
  std::map<double, double> out;
  std::istringstream in(read_text(log));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream row(line);
    std::vector<std::string> t;
    for (std::string w; row >> w;) t.push_back(w);
    if (t.size() != 13 || t[0].find_first_not_of("0123456789") != std::string::npos) continue;
    out[std::stod(t[0])] = std::stod(t[5]) * 1e-6;
  }
  return out;
}

// `calibrate fit LOG --scenario kCluster -o DIR/name`; returns the profile's path.
fs::path fit(const TempDir& dir, const fs::path& log, const std::string& name, CliResult* result = nullptr) {
  const fs::path out = dir / name;
  const CliResult r = run_cli({"calibrate", "fit", log.string(), "--scenario", kCluster.string(), "-o", out.string()});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  if (result) *result = r;
  return out;
}

json collective(const fs::path& profile, const std::string& network = {}) {
  std::vector<std::string> args{"collective", "--scenario", kCluster.string(), "--op", "all_reduce", "--bytes", "1M..1G", "--json"};
  if (!profile.empty()) args.insert(args.end(), {"--profile", profile.string()});
  if (!network.empty()) args.insert(args.end(), {"--network", network});
  const CliResult r = run_cli(args);
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

json run(const fs::path& profile, const std::string& network = {}) {
  std::vector<std::string> args{"run", kCluster.string(), "--json"};
  if (!network.empty()) args.insert(args.end(), {"--set", "simulation.network=" + network});
  if (!profile.empty()) args.insert(args.end(), {"--set", "calibration=" + profile.string()});
  const CliResult r = run_cli(args);
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

}  // namespace

TEST_CASE("comm calibration: a fitted 2-node log and its doubled copy reproduce their busbw from 1 MiB", "[cli][calibration]") {
  // Every size from 1 MiB to 1 GiB within 5 %, on the analytical and on the flow network. NCCL ran LL up
  // to 1 MiB (0.31 GB/s on this system) and Simple from 2 MiB: its tuner (src/graph/tuning.cc at 2.21.5)
  // prices ring LL at 15.4 us + S / 12 GB/s and ring Simple at 74.2 us + S / 24 GB/s here, a switch at
  // 1.41 MB (tests/sim/test_nccl_model_fit.cpp works it out). The chooser does that arithmetic, so the fit
  // prices 1 MiB with LL's constants and 2 MiB with Simple's, and `collective` runs the same choice.
  TempDir dir;
  for (const auto& [log, name] : {std::pair{kRealLog, std::string("real.json")}, std::pair{kSlowLog, std::string("slow.json")}}) {
    INFO(log.filename().string());
    CliResult fitted;
    const fs::path profile = fit(dir, log, name, &fitted);
    CHECK(contains(fitted.out, "\n    1 MiB "));
    std::istringstream lines(fitted.out);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("    1 MiB ", 0) == 0) CHECK(contains(line, "ring/LL        bandwidth-bound"));
      if (line.rfind("    2 MiB ", 0) == 0) CHECK(contains(line, "ring/Simple    bandwidth-bound"));
    }
    CHECK_FALSE(contains(fitted.out, "1048576 B: outlier"));
    const auto measured = log_times(log);
    for (const std::string network : {"analytical", "flow"}) {
      INFO(network);
      const json out = collective(profile, network);
      REQUIRE(out["results"].size() == 11);  // 1 MiB .. 1 GiB
      for (const auto& row : out["results"]) {
        const double size = row["size"].get<double>();
        INFO("size " << size);
        REQUIRE(measured.count(size) == 1);
        CHECK(row["protocol"] == (size <= 1048576 ? "LL" : "Simple"));
        // 2 ranks: busbw = algbw = size / time, so the busbw error is measured time / simulated time - 1.
        const double measured_busbw = size / measured.at(size) / 1e9;
        CHECK(std::abs(row["busbw_GBps"].get<double>() / measured_busbw - 1) <= 0.05);
      }
      CHECK(out["comm_calibration"]["source"] == profile.string());
    }
  }
}

TEST_CASE("comm calibration: without a profile both clusters give the default prediction", "[cli][calibration]") {
  // The two logs differ only in their times; the scenario names no profile, so `collective` without
  // --profile is the default model, the same table for both, and it matches neither log's slow fabric.
  const json a = collective({}), b = collective({});
  CHECK(a == b);
  CHECK_FALSE(a.contains("comm_calibration"));
  const auto measured = log_times(kRealLog);
  const double size = 1073741824.0;
  const double default_busbw = a["results"].back()["busbw_GBps"].get<double>();
  CHECK(default_busbw > 2 * size / measured.at(size) / 1e9);  // the HDR default is far above the 6.4 GB/s measured
}

TEST_CASE("comm calibration: a DP-heavy step on the slow profile is slower by its exposed DP share", "[cli][calibration]") {
  TempDir dir;
  const fs::path real = fit(dir, kRealLog, "real.json"), slow = fit(dir, kSlowLog, "slow.json");
  const json d = run({}), r = run(real), s = run(slow);
  const auto step = [](const json& j) { return j["step_time_s"].get<double>(); };
  const auto dp = [](const json& j) { return j["exposed_comm_s_by_kind"]["dp_comm"].get<double>(); };
  // The scenario all-reduces every gradient across the two nodes with overlap_grad_reduce off, so the DP
  // all-reduce is exposed and nothing else in the step crosses the network: with the compute unchanged,
  //   step(slow) - step(real) = dp(slow) - dp(real),
  // and the slow fabric's constants are the real ones with the bandwidth halved and the hop latency
  // doubled-and-more, so on these bandwidth-bound buckets dp(slow) = 2 dp(real) within the fit's 5 %.
  CHECK(dp(r) > 0.3 * step(r));  // DP-heavy indeed
  CHECK(std::abs((step(s) - step(r)) - (dp(s) - dp(r))) <= 1e-6 * step(s));
  CHECK(std::abs(dp(s) / dp(r) - 2) <= 0.05 * 2);
  CHECK(step(s) > step(r));
  // Both network back-ends apply the profile: the flow and the analytical network give the same step
  // (nothing contends in this job).
  for (const std::string network : {"flow", "analytical"}) {
    INFO(network);
    CHECK(step(run(slow, network)) == Approx(step(s)).epsilon(1e-6));
  }
  // Without a profile: the default constants, and both calibrated steps are slower than it (the real
  // cluster runs at 6.4 GB/s against the HDR link's ~24).
  CHECK(step(d) < step(r));
  CHECK_FALSE(d.contains("comm_calibration"));
  // The report says which constants it used, per collective kind and scope, and the profile's file.
  const json& cal = s["comm_calibration"];
  CHECK(cal["source"] == slow.string());
  int calibrated = 0;
  for (const auto& c : cal["collectives"]) {
    if (c["constants"] == "calibrated") {
      ++calibrated;
      CHECK(c["collective"] == "all_reduce");
      CHECK(c["scope"] == "inter-node");
    } else {
      CHECK(c["constants"] == "default");
    }
  }
  CHECK(calibrated == 1);
  CHECK(cal["collectives"].size() == 12);  // 6 kinds x 2 scopes
}

TEST_CASE("comm calibration: the text report names the calibrated constants and the profile", "[cli][calibration]") {
  TempDir dir;
  const fs::path real = fit(dir, kRealLog, "real.json");
  const CliResult r = run_cli({"run", kCluster.string(), "--set", "calibration=" + real.string()});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "comm constants    calibrated (" + real.string() +
                            "): all_reduce inter-node; default: every other collective and scope\n"));
  CHECK(r.err.empty());  // measured on this very cluster: no warning
}

TEST_CASE("comm calibration: a profile from another GPU, NIC and rank count warns once", "[cli][calibration]") {
  TempDir dir;
  const fs::path real = fit(dir, kRealLog, "real.json");
  const CliResult r = run_cli({"run", (scenarios_dir() / "llama2-13b-a100x64-hdr200.json").string(), "--set",
                               "calibration=" + real.string()});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  const auto lines = r.err_lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == "warning: calibration profile " + real.string() +
                        " was measured on A100-40GB, ib-hdr200, 2 ranks; this scenario runs A100-80GB, ib-hdr200, 64 "
                        "ranks: its NCCL constants are applied as fitted, by the algorithms' structure");
}

TEST_CASE("comm calibration: calibrate fit prints residuals per size, worst points and ignored sizes", "[cli][calibration]") {
  TempDir dir;
  CliResult r;
  fit(dir, kRealLog, "real.json", &r);
  CHECK(contains(r.out, "NCCL model constants, A100-40GB all_reduce default 2 ranks network (inter-node, 2 node(s), ib-hdr200):"));
  CHECK(contains(r.out, "residual per size (time predicted / measured - 1):"));
  CHECK(contains(r.out, "worst points:"));
  CHECK(contains(r.out, "sizes ignored: 18 latency-bound (they pin the hop latency, not the bandwidth); 8 left out:\n"));
  CHECK(contains(r.out, "no row with #wrong\n"));
  // The profile keeps the constants.
  const json p = json::parse(read_text(dir / "real.json"));
  REQUIRE(p["comm"].size() == 1);
  const json& n = p["comm"][0]["nccl"];
  CHECK(n["nodes"] == 2);
  CHECK(n["nic"] == "ib-hdr200");
  CHECK(n["bandwidth_scale_Simple"].get<double>() < 0.5);  // 6.4 GB/s on a ~24 GB/s HDR link
}

TEST_CASE("comm calibration: a multi-node log without --scenario keeps its alpha-beta and says why", "[cli][calibration]") {
  TempDir dir;
  const CliResult r = run_cli({"calibrate", "fit", kRealLog.string(), "-o", (dir / "p.json").string()});
  INFO(r.describe());
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "\nNCCL model constants, A100-40GB all_reduce default 2 ranks network: not fitted (name the cluster it "
                        "ran on with --scenario S.json); the profile keeps its alpha-beta summary only\n"));
  CHECK_FALSE(json::parse(read_text(dir / "p.json"))["comm"][0].contains("nccl"));
}

TEST_CASE("comm calibration: validate prints the busbw error with the default model and with the profile", "[cli][calibration]") {
  TempDir dir;
  const fs::path slow = fit(dir, kSlowLog, "slow.json");
  const CliResult t = run_cli({"validate", kSlowLog.string(), "--scenario", kCluster.string(), "--profile", slow.string()});
  INFO(t.describe());
  REQUIRE(t.exit_code == 0);
  CHECK(contains(t.out, "busbw error, default NCCL constants vs profile " + slow.string() + ":"));
  const CliResult j = run_cli({"validate", kSlowLog.string(), "--scenario", kCluster.string(), "--profile", slow.string(), "--json"});
  REQUIRE(j.exit_code == 0);
  const json doc = json::parse(j.out);
  const json& cmp = doc["comm_profile_comparison"];
  CHECK(cmp["profile"] == slow.string());
  CHECK(cmp["points"].size() == 56);  // 28 sizes, out-of-place and in-place
  CHECK(cmp["profile_mean_abs_busbw_error"].get<double>() < 0.25 * cmp["default_mean_abs_busbw_error"].get<double>());
  // Without a profile the comparison is absent and the output is as before.
  const CliResult plain = run_cli({"validate", kSlowLog.string(), "--scenario", kCluster.string(), "--json"});
  REQUIRE(plain.exit_code == 0);
  CHECK_FALSE(json::parse(plain.out).contains("comm_profile_comparison"));
}

TEST_CASE("comm calibration: a profile's nccl block out of range is refused naming its path", "[cli][calibration][bad-input]") {
  TempDir dir;
  const fs::path real = fit(dir, kRealLog, "real.json");
  json p = json::parse(read_text(real));
  p["comm"][0]["nccl"]["bandwidth_scale_Simple"] = 0;
  const fs::path bad = dir.write_json("bad.json", p);
  const CliResult r = run_cli({"collective", "--scenario", kCluster.string(), "--op", "all_reduce", "--profile", bad.string()});
  CHECK(r.exit_code == 2);
  const auto lines = r.err_lines();
  REQUIRE(lines.size() == 1);
  CHECK(contains(lines[0], bad.string() + ": comm[0].nccl.bandwidth_scale_Simple: 0 is out of range (expected a bandwidth scale in [0.001, 1000])"));
}

TEST_CASE("comm calibration: a profile's nccl block with an unknown key is refused naming it", "[cli][calibration][bad-input]") {
  TempDir dir;
  const fs::path real = fit(dir, kRealLog, "real.json");
  json p = json::parse(read_text(real));
  p["comm"][0]["nccl"]["hop_latency_us"] = 3;
  const fs::path bad = dir.write_json("bad.json", p);
  const CliResult r = run_cli({"collective", "--scenario", kCluster.string(), "--op", "all_reduce", "--profile", bad.string()});
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, bad.string() + ": comm[0].nccl.hop_latency_us:"));
}
