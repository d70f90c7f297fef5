// The error band of a report (sim/report/error_band.hpp): classes by hand, the band of a small table by
// hand, and the compiled-in table (calibrate/published/residuals.json) against the validation it comes
// from. Nothing here quotes a number of the table: it is regenerated (scripts/regenerate_residuals.sh)
// whenever the model moves, so every expectation is derived from the table itself.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "models/hardware/gpu_catalog.hpp"
#include "sim/base/input_error.hpp"
#include "sim/report/error_band.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"
#include "sim/validation/validate_training.hpp"

using namespace cs::sim;
using nlohmann::json;

namespace {

const std::string kSource = CLUSTERSIM_SOURCE_DIR;
const std::string kPublished = kSource + "/calibrate/published/published-train.json";

BandFeatures features(const std::string& gpu, int gpus, int nodes, double params, int tp, int pp, int ep, int zero,
                      const std::string& link) {
  BandFeatures f;
  f.gpu = gpu, f.num_gpus = gpus, f.nodes = nodes, f.parameters = params;
  f.tp = tp, f.pp = pp, f.ep = ep, f.zero_stage = zero;
  f.inter_link = link;
  return f;
}

ResidualRow row(const std::string& id, const BandFeatures& f, double error) { return {id, "high", f, error}; }

}  // namespace

TEST_CASE("error band: classes of a scenario, by hand", "[sim][band]") {
  // EP wins over PP, PP over TP, TP or CP over plain data parallelism.
  CHECK(band_class(features("H100-SXM", 64, 8, 4.7e10, 2, 4, 8, 1, "ib-ndr400")).strategy == "moe");
  CHECK(band_class(features("H100-SXM", 64, 8, 7e10, 8, 4, 1, 1, "ib-ndr400")).strategy == "pipeline");
  CHECK(band_class(features("H100-SXM", 64, 8, 7e10, 8, 1, 1, 1, "ib-ndr400")).strategy == "tensor");
  BandFeatures cp = features("H100-SXM", 64, 8, 7e10, 1, 1, 1, 1, "ib-ndr400");
  cp.cp = 2;
  CHECK(band_class(cp).strategy == "tensor");
  CHECK(band_class(features("A100-80GB", 64, 8, 7e9, 1, 1, 1, 3, "roce-200g")).strategy == "data");
  // Scale by GPU count, edges included in the lower class.
  CHECK(band_class(features("H100-SXM", 8, 1, 8e9, 1, 1, 1, 0, "")).scale == "1-8 GPUs");
  CHECK(band_class(features("H100-SXM", 64, 8, 8e9, 1, 1, 1, 0, "ib-ndr400")).scale == "9-64 GPUs");
  CHECK(band_class(features("H100-SXM", 512, 64, 8e9, 1, 1, 1, 0, "ib-ndr400")).scale == "65-512 GPUs");
  CHECK(band_class(features("H100-SXM", 4096, 512, 8e9, 1, 1, 1, 0, "ib-ndr400")).scale == "513-4096 GPUs");
  CHECK(band_class(features("H100-SXM", 4104, 513, 8e9, 1, 1, 1, 0, "ib-ndr400")).scale == "over 4096 GPUs");
  // Network tier from the link name; one node is scale-up only whatever the link.
  CHECK(band_class(features("H100-SXM", 8, 1, 8e9, 1, 1, 1, 0, "ib-ndr400")).network == "scale-up only");
  CHECK(band_class(features("H100-SXM", 16, 2, 8e9, 1, 1, 1, 0, "ib-hdr200")).network == "infiniband");
  CHECK(band_class(features("H100-SXM", 16, 2, 8e9, 1, 1, 1, 0, "roce-400g")).network == "ethernet");
  CHECK(band_class(features("H100-SXM", 16, 2, 8e9, 1, 1, 1, 0, "eth-100g")).network == "ethernet");
  CHECK(band_class(features("H100-SXM", 16, 2, 8e9, 1, 1, 1, 0, "custom")).network == "custom");
  // Framework family from the sharding: ZeRO >= 2 is FSDP / DeepSpeed, else Megatron (DDP, ZeRO-1).
  CHECK(band_class(features("H100-SXM", 16, 2, 8e9, 1, 1, 1, 3, "ib-ndr400")).framework == "fsdp/zero");
  CHECK(band_class(features("H100-SXM", 16, 2, 8e9, 1, 1, 1, 2, "ib-ndr400")).framework == "fsdp/zero");
  CHECK(band_class(features("H100-SXM", 16, 2, 8e9, 1, 1, 1, 1, "ib-ndr400")).framework == "megatron");
}

TEST_CASE("error band: the band of a small table, by hand", "[sim][band]") {
  // Five pipeline runs on InfiniBand at 65-512 GPUs (four Megatron, one FSDP), two tensor runs.
  const BandFeatures pipe = features("A100-80GB", 128, 16, 1.75e11, 8, 4, 1, 1, "ib-hdr200");
  BandFeatures pipe_fsdp = pipe;
  pipe_fsdp.zero_stage = 3;
  const BandFeatures tensor = features("H100-SXM", 8, 1, 2.2e10, 8, 1, 1, 1, "");
  ResidualTable t;
  t.rows = {row("p1", pipe, -0.10), row("p2", pipe, 0.05), row("p3", pipe, 0.02), row("p4", pipe, -0.04),
            row("p5", pipe_fsdp, 0.30), row("t1", tensor, 0.08), row("t2", tensor, -0.01)};

  // All four features match p1..p4: the band is their range, [-10%, +5%]; median of {-0.10, -0.04,
  // 0.02, 0.05} = (-0.04 + 0.02) / 2 = -0.01; a 2 s step is expected in [2 x 0.90, 2 x 1.05].
  ErrorBand b = expected_error_band(pipe, 2.0, t);
  REQUIRE(b.available);
  CHECK(b.points == 4);
  CHECK(b.matched_features == 4);
  CHECK(b.matched == "pipeline, 65-512 GPUs, infiniband, megatron");
  CHECK(b.error_low == Approx(-0.10));
  CHECK(b.error_high == Approx(0.05));
  CHECK(b.error_median == Approx(-0.01));
  CHECK(b.step_time_low_s == Approx(1.8));
  CHECK(b.step_time_high_s == Approx(2.1));
  CHECK_FALSE(b.out_of_domain);
  CHECK(band_text(b) == "1.800 s .. 2.100 s (-10.0% .. +5.0%, median -1.0%; 4 validated runs: pipeline, 65-512 GPUs, infiniband, megatron)");

  // The FSDP pipeline run alone is one point (< 3): the band drops the framework and takes all five,
  // [-10%, +30%], median +2%.
  b = expected_error_band(pipe_fsdp, 1.0, t);
  CHECK(b.points == 5);
  CHECK(b.matched_features == 3);
  CHECK(b.matched == "pipeline, 65-512 GPUs, infiniband");
  CHECK(b.error_low == Approx(-0.10));
  CHECK(b.error_high == Approx(0.30));
  CHECK(b.error_median == Approx(0.02));

  // The tensor runs are two: strategy + scale + network, then strategy + scale, then strategy have two
  // rows each, so the band is every run's: [-10%, +30%] over 7, median +0.02.
  b = expected_error_band(tensor, 1.0, t);
  CHECK(b.points == 7);
  CHECK(b.matched_features == 0);
  CHECK(b.matched == "all runs");
  CHECK(b.error_median == Approx(0.02));
  CHECK_FALSE(b.out_of_domain);

  // Out of domain: a GPU never compared, a GPU count and a model size outside the compared ones
  // (8..128 GPUs, 22B..175B), a strategy with no row.
  b = expected_error_band(features("B200", 1024, 128, 4.05e11, 1, 1, 8, 1, "ib-xdr800"), 1.0, t);
  CHECK(b.out_of_domain);
  REQUIRE(b.out_of_domain_reasons.size() == 4);
  CHECK(b.out_of_domain_reasons[0] == "GPU B200 never compared (validated: A100-80GB, H100-SXM)");
  CHECK(b.out_of_domain_reasons[1] == "1024 GPUs outside the validated 8-128");
  CHECK(b.out_of_domain_reasons[2] == "405B parameters outside the validated 22B-175B");
  CHECK(b.out_of_domain_reasons[3] == "strategy mix moe never compared");
  CHECK(b.matched == "all runs");

  // An empty table gives no band.
  CHECK_FALSE(expected_error_band(pipe, 1.0, ResidualTable{}).available);
}

TEST_CASE("error band: a residual table reads back what it wrote and names bad rows", "[sim][band]") {
  ResidualTable t;
  t.source = "test";
  t.rows = {row("a", features("H100-SXM", 16, 2, 8e9, 2, 1, 1, 1, "ib-ndr400"), -0.125)};
  const ResidualTable back = parse_residual_table(to_json(t), "r.json");
  REQUIRE(back.rows.size() == 1);
  CHECK(back.source == "test");
  CHECK(back.rows[0].id == "a");
  CHECK(back.rows[0].error == -0.125);
  CHECK(band_class(back.rows[0].features).scale == "9-64 GPUs");

  CHECK_THROWS_WITH(parse_residual_table(json::array(), "r.json"),
                    "r.json: expected an object with \"rows\": [...] (the output of scripts/regenerate_residuals.sh)");
  json doc = to_json(t);
  doc["rows"][0].erase("error");
  CHECK_THROWS_WITH(parse_residual_table(doc, "r.json"), "r.json: rows[0].error: missing");
  doc = to_json(t);
  doc["rows"][0]["num_gpus"] = "many";
  CHECK_THROWS_WITH(parse_residual_table(doc, "r.json"), "r.json: rows[0].num_gpus: expected a number >= 1");
  doc = to_json(t);
  doc["rows"][0]["eror"] = 0.1;
  CHECK_THROWS_WITH(parse_residual_table(doc, "r.json"), "r.json: rows[0].eror: unknown key");
  doc = to_json(t);
  doc["rows"][0]["error"] = -1;
  CHECK_THROWS_WITH(parse_residual_table(doc, "r.json"), "r.json: rows[0].error: expected a number > -1 (a step time ratio minus 1)");
}

TEST_CASE("error band: every row of the compiled-in table lies inside its own band", "[sim][band]") {
  const ResidualTable& t = residual_table();
  REQUIRE(!t.rows.empty());  // scripts/regenerate_residuals.sh writes it; an empty table gives no band at all
  for (const ResidualRow& r : t.rows) {
    INFO(r.id);
    const ErrorBand b = expected_error_band(r.features, 1.0);
    REQUIRE(b.available);
    CHECK(b.points >= std::min(kMinBandPoints, t.rows.size()));
    CHECK(b.error_low <= r.error);
    CHECK(r.error <= b.error_high);
    CHECK_FALSE(b.out_of_domain);  // a compared run is inside what was compared
  }
}

TEST_CASE("error band: a validated case simulated now has its measured step time inside its band", "[sim][band]") {
  // The three compared runs with the fewest GPUs (cheap to simulate), converted from the published file
  // as `validate` does and run: the measured step time (the published figure in the source's own
  // convention) lies inside the report's band. If this fails after a model change, the table is stale:
  // run scripts/regenerate_residuals.sh.
  const ResidualTable& t = residual_table();
  REQUIRE(!t.rows.empty());
  std::vector<ResidualRow> rows = t.rows;
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.features.num_gpus < b.features.num_gpus; });
  rows.resize(std::min<std::size_t>(rows.size(), 3));
  const auto points = convert_published_training(read_json_file(kPublished), kPublished);
  for (const ResidualRow& row : rows) {
    INFO(row.id << " (stale table? run scripts/regenerate_residuals.sh)");
    const auto p = std::find_if(points.begin(), points.end(), [&](const auto& x) { return x.id == row.id; });
    REQUIRE(p != points.end());
    REQUIRE_FALSE(p->skipped);
    const Report r = simulate(parse_scenario(p->scenario, kPublished + ": " + p->id)).report;
    const ErrorBand& b = r.step_time_band;
    REQUIRE(b.available);
    CHECK(band_class(band_features(r)).scale == band_class(row.features).scale);
    // Measured step time = tokens per step / (measured tokens/s per GPU x GPUs).
    const double tokens_per_step = r.tokens_per_s * r.step_time_s;
    const double measured_step = tokens_per_step / (p->measured_tokens_per_s_per_gpu * r.num_gpus);
    INFO("measured " << measured_step << " s, band " << b.step_time_low_s << " .. " << b.step_time_high_s);
    CHECK(measured_step >= b.step_time_low_s * (1 - 1e-9));
    CHECK(measured_step <= b.step_time_high_s * (1 + 1e-9));
  }
}

TEST_CASE("error band: validate --json carries the residual table the band is read from", "[sim][band]") {
  // The smallest compared run alone through validate: its residual table is one row with its error.
  const ResidualTable& t = residual_table();
  REQUIRE(!t.rows.empty());
  const auto smallest = std::min_element(t.rows.begin(), t.rows.end(),
                                         [](const auto& a, const auto& b) { return a.features.num_gpus < b.features.num_gpus; });
  json one = json::array();
  for (const json& e : read_json_file(kPublished))
    if (e.at("id") == smallest->id) one.push_back(e);
  REQUIRE(one.size() == 1);
  const TrainingValidation v = validate_published_training(one, kPublished, 1);
  const json out = to_json(v);
  REQUIRE(out.contains("residual_table"));
  const ResidualTable table = parse_residual_table(out.at("residual_table"), "validate --json");
  REQUIRE(table.rows.size() == 1);
  CHECK(table.rows[0].id == smallest->id);
  CHECK(table.rows[0].error == v.points[0].error);
  CHECK(table.rows[0].features.num_gpus == v.points[0].gpus);
}

TEST_CASE("error band: an out-of-domain scenario is flagged", "[sim][band]") {
  // A catalog GPU the table never compared (derived from the table, not named here), on the one-node
  // Llama-3 8B scenario: flagged, with the GPU named.
  const ResidualTable& t = residual_table();
  REQUIRE(!t.rows.empty());
  std::set<std::string> compared;
  for (const auto& r : t.rows) compared.insert(r.features.gpu);
  std::string other;
  for (const auto& name : cs::models::gpu_names())  // the scenario's NVSwitch node needs NVLink
    if (other.empty() && !compared.count(name) && cs::models::find_gpu(name)->nvlink_gbps > 0) other = name;
  REQUIRE(!other.empty());
  const std::string file = kSource + "/scenarios/llama3-8b-h100x8.json";
  const Report r = simulate(load_scenario(file, {"cluster.gpu=" + other})).report;
  const ErrorBand& b = r.step_time_band;
  REQUIRE(b.available);
  CHECK(b.out_of_domain);
  REQUIRE(!b.out_of_domain_reasons.empty());
  CHECK(b.out_of_domain_reasons[0].rfind("GPU " + other + " never compared (validated: ", 0) == 0);
  // The band is still there, around the step.
  CHECK(b.step_time_low_s == Approx(r.step_time_s * (1 + b.error_low)));
  CHECK(b.step_time_high_s == Approx(r.step_time_s * (1 + b.error_high)));

  // A GPU count past the largest compared run: flagged with the range.
  int max_gpus = 0;
  for (const auto& row : t.rows) max_gpus = std::max(max_gpus, row.features.num_gpus);
  BandFeatures big = t.rows.front().features;
  big.num_gpus = max_gpus * 2;
  const ErrorBand far = expected_error_band(big, 1.0);
  CHECK(far.out_of_domain);
  bool named = false;
  for (const auto& reason : far.out_of_domain_reasons) named = named || reason.rfind(std::to_string(max_gpus * 2) + " GPUs outside the validated ", 0) == 0;
  CHECK(named);
}
