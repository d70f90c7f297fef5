// Stragglers, speed variation and mixed GPUs (sim/scenario/heterogeneity.hpp): a slow GPU stretches
// exactly what the schedule makes wait for it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/hardware/gpu_catalog.hpp"
#include "sim/base/input_error.hpp"
#include "sim/report/report.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"
#include "sim/step/step_builder.hpp"

using namespace cs::sim;
using nlohmann::json;

namespace {

// TP8 PP4 DP32 on 1024 H100 (128 nodes): 8 layers, two per stage, 8 micro-batches per step.
json tp8_pp4_dp32() {
  return json::parse(R"json({"name": "straggler",
    "cluster": {"gpu": "H100-SXM", "nodes": 128, "gpus_per_node": 8,
                "inter_node": {"fabric": "fat-tree", "link": "ib-ndr400"}},
    "model": {"num_layers": 8, "hidden_size": 4096, "num_attention_heads": 32, "ffn_hidden_size": 16384,
              "vocab_size": 32000},
    "training": {"seq_length": 2048, "global_batch_size": 256, "micro_batch_size": 1,
                 "tensor_model_parallel_size": 8, "pipeline_model_parallel_size": 4}})json");
}

double step_s(const json& doc) { return simulate(parse_scenario(doc, "s.json")).report.step_time_s; }

}  // namespace

TEST_CASE("straggler: one GPU 25% slower stretches its pipeline stage, and the step by what 1F1B implies", "[sim][heterogeneity]") {
  const json base = tp8_pp4_dp32();
  const Scenario s0 = parse_scenario(base, "s.json");
  const SimulationResult r0 = simulate(s0);
  const double t0 = r0.report.step_time_s;
  // Compute per micro-batch of each stage (forward + backward), from the baseline's own tasks: one
  // simulated rank per stage under symmetry, rank i = stage i.
  const int m = 8, p = 4;
  REQUIRE(r0.plan.graph.num_ranks() == p);
  std::vector<double> c(p, 0.0);
  for (const auto& t : r0.plan.graph.tasks())
    if (t.stream == StreamKind::compute && t.category != Category::optimizer) c[t.rank] += to_seconds(t.duration) / m;
  const double c_max = *std::max_element(c.begin(), c.end());
  // GPU 0 is TP rank 0 of DP replica 0 on stage 0. Each TP collective of its group waits for it, so the
  // replica's stage 0 computes at 1.25 c0 per micro-batch. 1F1B with stage times c_i runs
  //   T = sum_i c_i + (m - 1) max_i c_i  (+ the communication that does not overlap),
  // and the other 31 replicas, with their DP all-reduce waiting for the slow one, end with it. So
  //   T1 - T0 = 0.25 c0 + (m - 1) (max(c_max, 1.25 c0) - c_max).
  json slow = base;
  slow["cluster"]["stragglers"] = json::array({{{"gpu", 0}, {"slowdown", 1.25}}});
  const double t1 = step_s(slow);
  const double expected = 0.25 * c[0] + (m - 1) * (std::max(c_max, 1.25 * c[0]) - c_max);
  INFO(std::setprecision(6) << "T0 " << t0 << " s, T1 " << t1 << " s, c = " << c[0] << " " << c[1] << " " << c[2] << " " << c[3] << ", expected +" << expected);
  CHECK(t1 - t0 == Approx(expected).epsilon(0.02));  // measured: +1.3608 ms against +1.3512 ms
  CHECK(t1 > t0);
  // A slow GPU on another stage stretches that stage instead; a slowdown of 1 changes nothing.
  json none = base;
  none["cluster"]["stragglers"] = json::array({{{"gpu", 5}, {"slowdown", 1.0}}});
  CHECK(step_s(none) == Approx(t0).epsilon(1e-9));
}

TEST_CASE("mixed GPUs: a DP job over half A100 and half H100 nodes runs at the A100 step", "[sim][heterogeneity]") {
  // Equal shards (every framework splits the batch evenly), so the H100 replicas wait for the A100 ones at
  // every gradient all-reduce: the step is the all-A100 step (within 3%; the H100 nodes' buckets start no
  // earlier, the all-reduce needs every member).
  const json a100 = json::parse(R"json({"name": "mixed",
    "cluster": {"gpu": "A100-80GB", "nodes": 8, "gpus_per_node": 8,
                "inter_node": {"fabric": "fat-tree", "link": "ib-hdr200"}},
    "model": {"preset": "llama2-7b"},
    "training": {"seq_length": 4096, "global_batch_size": 128, "micro_batch_size": 1, "zero_stage": 1}})json");
  json mixed = a100;
  mixed["cluster"]["node_groups"] = json::array({{{"gpu", "A100-80GB"}, {"nodes", 4}}, {{"gpu", "H100-SXM"}, {"nodes", 4}}});
  json h100 = a100;
  h100["cluster"]["gpu"] = "H100-SXM";
  const double ta = step_s(a100), tm = step_s(mixed), th = step_s(h100);
  INFO("A100 " << ta << " s, mixed " << tm << " s, H100 " << th << " s");
  CHECK(tm == Approx(ta).epsilon(0.03));
  CHECK(th < 0.8 * ta);  // and the H100 step really is faster
}

TEST_CASE("speed variation: per-GPU draws are deterministic per seed and vanish at cv 0", "[sim][heterogeneity]") {
  Heterogeneity h;
  h.cv = 0.05;
  h.seed = 7;
  const double a = h.slowdown(123, 8), b = h.slowdown(123, 8);
  CHECK(a == b);
  CHECK(a != h.slowdown(124, 8));
  // exp(cv Z): over many GPUs the log of the factor has mean ~0 and standard deviation ~cv.
  double sum = 0, sum2 = 0;
  const int n = 20000;
  for (int g = 0; g < n; ++g) {
    const double l = std::log(h.slowdown(g, 8));
    sum += l;
    sum2 += l * l;
  }
  const double mean = sum / n, sd = std::sqrt(sum2 / n - mean * mean);
  CHECK(std::abs(mean) < 3 * 0.05 / std::sqrt(n) + 1e-4);
  CHECK(sd == Approx(0.05).epsilon(0.03));
  h.cv = 0;
  CHECK(h.slowdown(123, 8) == 1.0);
  // A node's straggler entry covers all its GPUs; factors multiply.
  h.stragglers = {{-1, 2, 1.5}, {17, -1, 2.0}};
  CHECK(h.slowdown(16, 8) == 1.5);
  CHECK(h.slowdown(17, 8) == 3.0);
  CHECK(h.slowdown(24, 8) == 1.0);
}

TEST_CASE("heterogeneity: bad input names the key", "[sim][heterogeneity]") {
  const auto message = [](const json& cluster_patch) {
    json doc = tp8_pp4_dp32();
    doc["cluster"].update(cluster_patch);
    try {
      parse_scenario(doc, "s.json");
    } catch (const cs::InputError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  CHECK_THAT(message({{"stragglers", json::array({{{"gpu", 1024}, {"slowdown", 1.2}}})}}),
             Catch::Contains("s.json: cluster.stragglers[0].gpu: 1024 is outside the cluster (1024 GPUs: 0..1023)"));
  CHECK_THAT(message({{"stragglers", json::array({{{"gpu", 1}, {"node", 1}, {"slowdown", 1.2}}})}}),
             Catch::Contains("s.json: cluster.stragglers[0]: give either gpu (a cluster GPU index) or node (a node index)"));
  CHECK_THAT(message({{"stragglers", json::array({{{"node", 3}, {"slowdown", 0.5}}})}}),
             Catch::Contains("s.json: cluster.stragglers[0].slowdown: 0.5 is out of range"));
  CHECK_THAT(message({{"speed_variation", {{"cv", 2}}}}), Catch::Contains("s.json: cluster.speed_variation.cv: 2 is out of range"));
  CHECK_THAT(message({{"node_groups", json::array({{{"gpu", "H100-SXM"}, {"nodes", 100}}})}}),
             Catch::Contains("s.json: cluster.node_groups: the groups hold 100 nodes, cluster.nodes is 128"));
  CHECK_THAT(message({{"node_groups", json::array({{{"gpu", "H10"}, {"nodes", 128}}})}}),
             Catch::Contains("s.json: cluster.node_groups[0].gpu: unknown GPU \"H10\""));
  CHECK_THAT(message({{"node_groups", json::array({{{"gpu", "A100-40GB"}, {"nodes", 128}}})}}),
             Catch::Contains("s.json: cluster.node_groups[0].gpu: A100-40GB has less memory"));
}

TEST_CASE("mixed GPUs: each node group is priced by its own type, and the cluster's price is their mean over nodes", "[sim][heterogeneity][price]") {
  // 2 A100 nodes and 6 H100 nodes of 8 GPUs. A table prices each type: (2 x 1.5 + 6 x 3.0) / 8 = 2.625 $
  // per GPU-hour; $ per step is then 64 GPUs x 2.625 $/h x step / 3600.
  json doc = json::parse(R"json({"name": "mixed",
    "cluster": {"gpu": "A100-80GB", "nodes": 8, "gpus_per_node": 8,
                "node_groups": [{"gpu": "A100-80GB", "nodes": 2}, {"gpu": "H100-SXM", "nodes": 6}],
                "price_per_gpu_hour": {"A100-80GB": 1.5, "H100-SXM": 3.0},
                "inter_node": {"fabric": "fat-tree", "link": "ib-hdr200"}},
    "model": {"preset": "llama2-7b"},
    "training": {"seq_length": 4096, "global_batch_size": 128, "micro_batch_size": 1}})json");
  const Scenario s = parse_scenario(doc, "s.json");
  CHECK(s.price_per_gpu_hour_usd == Approx(2.625));
  const auto r = simulate(s).report;
  CHECK(r.cost.usd_per_step == Approx(64 * 2.625 * r.step_time_s / 3600));

  // A number is cluster.gpu's price (as everywhere); the H100 nodes take the H100's catalog list price.
  doc["cluster"]["price_per_gpu_hour"] = 1.5;
  const double h100_list = cs::models::find_gpu("H100-SXM")->price_per_gpu_hour_usd;
  CHECK(parse_scenario(doc, "s.json").price_per_gpu_hour_usd == Approx((2 * 1.5 + 6 * h100_list) / 8));
  // No price at all: each group's catalog price.
  doc["cluster"].erase("price_per_gpu_hour");
  const double a100_list = cs::models::find_gpu("A100-80GB")->price_per_gpu_hour_usd;
  CHECK(parse_scenario(doc, "s.json").price_per_gpu_hour_usd == Approx((2 * a100_list + 6 * h100_list) / 8));
}

TEST_CASE("mixed GPUs, two jobs: each job is priced and powered by its own nodes' GPU type", "[sim][heterogeneity][price]") {
  // 4 nodes: 0-1 A100 at 1.5 $/GPU-h, 2-3 H100 at 3.0. Job a on nodes {0, 2}: (1.5 + 3.0) / 2 = 2.25;
  // job b on {1}: 1.5; job c on {3}: 3.0 (the cluster's blend, 2.25, is nobody's but a's).
  json doc = json::parse(R"json({"name": "mixed jobs",
    "cluster": {"gpu": "A100-80GB", "nodes": 4, "gpus_per_node": 8,
                "node_groups": [{"gpu": "A100-80GB", "nodes": 2}, {"gpu": "H100-SXM", "nodes": 2}],
                "price_per_gpu_hour": {"A100-80GB": 1.5, "H100-SXM": 3.0},
                "inter_node": {"fabric": "fat-tree", "link": "ib-hdr200"}},
    "jobs": [
      {"name": "a", "nodes": [0, 2], "model": {"preset": "llama2-7b"}, "training": {"seq_length": 2048, "global_batch_size": 16, "micro_batch_size": 1}},
      {"name": "b", "nodes": [1], "model": {"preset": "llama2-7b"}, "training": {"seq_length": 2048, "global_batch_size": 8, "micro_batch_size": 1}},
      {"name": "c", "nodes": [3], "model": {"preset": "llama2-7b"}, "training": {"seq_length": 2048, "global_batch_size": 8, "micro_batch_size": 1}}]})json");
  const Scenario s = parse_scenario(doc, "s.json");
  CHECK(s.price_per_gpu_hour_usd == Approx(2.25));
  CHECK(s.job_scenario(0).price_per_gpu_hour_usd == Approx(2.25));
  CHECK(s.job_scenario(1).price_per_gpu_hour_usd == Approx(1.5));
  CHECK(s.job_scenario(2).price_per_gpu_hour_usd == Approx(3.0));
  const auto result = simulate(s);
  const auto& jobs = result.multi_job.jobs;
  REQUIRE(jobs.size() == 3);
  for (std::size_t j = 0; j < 3; ++j) {
    const double price = s.job_scenario(j).price_per_gpu_hour_usd;
    const double gpus = 8.0 * static_cast<double>(s.jobs[j].nodes.size());
    CHECK(jobs[j].price_per_gpu_hour_usd == Approx(price));
    CHECK(jobs[j].cost.usd_per_step == Approx(gpus * price * jobs[j].step_time_s / 3600));
  }
  // Power too: the H100 job's GPUs draw the H100's TDP, the A100 job's the A100's.
  CHECK(s.job_scenario(1).heterogeneity.node_mean([](const cs::models::GpuSpec& g) { return g.tdp_w; }, 0) ==
        cs::models::find_gpu("A100-80GB")->tdp_w);
  CHECK(s.job_scenario(2).heterogeneity.node_mean([](const cs::models::GpuSpec& g) { return g.tdp_w; }, 0) ==
        cs::models::find_gpu("H100-SXM")->tdp_w);
}

TEST_CASE("mixed GPUs: the report's header and JSON name the mix, and --set cluster.gpu keeps it", "[sim][heterogeneity]") {
  // 3 A100 nodes + 1 H100 node of 8 GPUs: 24 + 8 of 32. A uniform cluster has no gpu_mix at all, so its
  // reports are unchanged.
  json doc = json::parse(R"json({"name": "mixed",
    "cluster": {"gpu": "A100-80GB", "nodes": 4, "gpus_per_node": 8,
                "inter_node": {"fabric": "fat-tree", "link": "ib-hdr200"}},
    "model": {"preset": "llama2-7b"},
    "training": {"seq_length": 4096, "global_batch_size": 64, "micro_batch_size": 1}})json");
  const Report uniform = simulate(parse_scenario(doc, "s.json")).report;
  CHECK(uniform.gpu_mix.empty());
  CHECK_FALSE(to_json(uniform)["cluster"].contains("gpu_mix"));
  CHECK(to_text(uniform).find("cluster       32 x A100-80GB (4 nodes") != std::string::npos);
  doc["cluster"]["node_groups"] = json::array({{{"gpu", "A100-80GB"}, {"nodes", 3}}, {{"gpu", "H100-SXM"}, {"nodes", 1}}});
  const Report mixed = simulate(parse_scenario(doc, "s.json")).report;
  CHECK(mixed.gpu_mix == "24 x A100-80GB + 8 x H100-SXM");
  CHECK(to_json(mixed)["cluster"]["gpu_mix"] == "24 x A100-80GB + 8 x H100-SXM");
  CHECK(to_text(mixed).find("cluster       32 GPUs: 24 x A100-80GB + 8 x H100-SXM (4 nodes") != std::string::npos);
  // cluster.gpu changed on the mixed file (what --set cluster.gpu=H100-SXM does): the groups stay, and so
  // does the header's mix, instead of claiming 32 H100.
  doc["cluster"]["gpu"] = "H100-SXM";
  CHECK(simulate(parse_scenario(doc, "s.json")).report.gpu_mix == "24 x A100-80GB + 8 x H100-SXM");
}
