// Several jobs on one cluster (Scenario::jobs, simulate() in sim/simulation.hpp): placement, validation,
// and the slowdown that sharing the fabric causes — worked out by hand where the model allows it.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "sim/base/input_error.hpp"
#include "sim/report/report.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"

using namespace cs::sim;
using nlohmann::json;

namespace {

// A data-parallel-heavy job: llama2-7b, TP 8 inside each node, DP 16 across 16 nodes, one micro-batch
// per GPU (global batch 16), so a step is ~60 ms of compute per GPU against a gradient all-reduce of
// 2 x 15/16 x (6.7e9 / 8 x 2 bytes) ~ 3.2 GB per GPU, 8 GPUs behind one NIC: the network dominates
// (~0.8 s of the ~0.87 s step alone).
json dp_job(const std::string& name, const json& nodes) {
  return {{"name", name},
          {"nodes", nodes},
          {"model", {{"preset", "llama2-7b"}}},
          {"training", {{"seq_length", 2048}, {"global_batch_size", 16}, {"micro_batch_size", 1}, {"tensor_model_parallel_size", 8}}}};
}

// 32 nodes of 8 H100, one NDR400 NIC per node, a two-tier fat-tree of `leaf_radix`-port leaves at 4:1.
json cluster(int leaf_radix) {
  return {{"gpu", "H100-SXM"},
          {"nodes", 32},
          {"gpus_per_node", 8},
          {"intra_node", "nvswitch"},
          {"inter_node",
           {{"fabric", "fat-tree"}, {"link", "ib-ndr400"}, {"nics_per_node", 1}, {"oversubscription", 4}, {"leaf_radix", leaf_radix}}}};
}

// Jobs a and b interleaved two nodes at a time: a on nodes 0,1, 4,5, 8,9, ...; b on 2,3, 6,7, ...
json interleaved(int first) {
  json nodes = json::array();
  for (int leaf = 0; leaf < 8; ++leaf) nodes.push_back(4 * leaf + first), nodes.push_back(4 * leaf + first + 1);
  return nodes;
}

json two_jobs(int leaf_radix, const json& nodes_a, const json& nodes_b, const std::string& network = "flow") {
  return {{"name", "two-jobs"},
          {"cluster", cluster(leaf_radix)},
          {"jobs", {dp_job("a", nodes_a), dp_job("b", nodes_b)}},
          {"simulation", {{"network", network}, {"nccl_algorithm", "ring"}}}};
}

json range(int first, int count) {
  json nodes = json::array();
  for (int n = first; n < first + count; ++n) nodes.push_back(n);
  return nodes;
}

MultiJobReport run(const json& doc) { return simulate(parse_scenario(doc, "jobs.json")).multi_job; }

// The cs::InputError message of parsing `doc` ("" when it parses).
std::string error_of(const json& doc) {
  try {
    parse_scenario(doc, "jobs.json");
  } catch (const cs::InputError& e) {
    return e.what();
  }
  return "";
}

double dp_busy(const Report& r) { return r.busy_s[static_cast<std::size_t>(Category::dp_comm)]; }

}  // namespace

TEST_CASE("jobs: placement by count, by first_node and by list, each job validated on its own GPUs", "[sim]") {
  json doc = two_jobs(4, 4, 0);
  doc["jobs"][0]["nodes"] = 4;  // nodes 0..3
  doc["jobs"][1].erase("nodes");
  doc["jobs"][1]["gpus"] = 48;  // 6 nodes, right after job 0: nodes 4..9
  doc["jobs"][1]["training"]["global_batch_size"] = 48;
  Scenario s = parse_scenario(doc, "jobs.json");
  REQUIRE(s.jobs.size() == 2);
  CHECK(s.jobs[0].nodes == std::vector<int>{0, 1, 2, 3});
  CHECK(s.jobs[1].nodes == std::vector<int>{4, 5, 6, 7, 8, 9});
  CHECK(s.jobs[0].training.dp == 4);  // 32 GPUs / TP 8
  CHECK(s.jobs[1].training.dp == 6);
  // Job 1's rank 9 is local GPU 1 of its second node, node 5: GPU 41.
  CHECK(s.job_gpus(1).at(9) == 41);
  const Scenario view = s.job_scenario(1);
  CHECK(view.num_gpus() == 48);
  CHECK(view.jobs.empty());

  doc["jobs"][1]["first_node"] = 20;
  s = parse_scenario(doc, "jobs.json");
  CHECK(s.jobs[1].nodes.front() == 20);
  CHECK(s.jobs[1].nodes.back() == 25);

  // Lists are taken in rank order as given.
  s = parse_scenario(two_jobs(4, json{7, 3}, json{1}), "jobs.json");
  CHECK(s.job_gpus(0).at(8) == 24);
  CHECK(s.job_gpus(0).at(0) == 56);
}

TEST_CASE("jobs: bad input names the job's JSON path", "[sim]") {
  json doc = two_jobs(4, range(0, 16), range(16, 16));

  json both = doc;
  both["model"] = {{"preset", "llama2-7b"}};
  CHECK_THAT(error_of(both), Catch::Contains("jobs.json: model: not allowed with jobs"));

  json overlap = doc;
  overlap["jobs"][1]["nodes"] = range(12, 16);
  CHECK_THAT(error_of(overlap), Catch::Contains("jobs.json: jobs[1].nodes: node 12 is already used by jobs[0] (\"a\")"));

  json outside = doc;
  outside["jobs"][1]["nodes"][3] = 40;
  CHECK_THAT(error_of(outside), Catch::Contains("jobs.json: jobs[1].nodes[3]: node 40 is outside the cluster (cluster.nodes 32"));

  json too_many = doc;
  too_many["jobs"][0]["nodes"] = 20;
  too_many["jobs"][1]["nodes"] = 16;  // after job 0: nodes 20..35
  CHECK_THAT(error_of(too_many), Catch::Contains("jobs.json: jobs[1].nodes: nodes 20..35 reach outside the cluster"));

  json partial = doc;
  partial["jobs"][1].erase("nodes");
  partial["jobs"][1]["gpus"] = 12;
  CHECK_THAT(error_of(partial), Catch::Contains("jobs.json: jobs[1].gpus: 12 is not a whole number of nodes"));

  json tp = doc;
  tp["jobs"][1]["training"]["tensor_model_parallel_size"] = 3;
  const std::string tp_error = error_of(tp);
  CHECK_THAT(tp_error, Catch::Contains("jobs.json: jobs[1].training: tensor (3) x pipeline (1) x context (1) = 3 does not divide the 128 GPUs "
                                       "(jobs[1].nodes 16 x cluster.gpus_per_node 8)"));

  json heads = doc;
  heads["jobs"][0]["training"]["tensor_model_parallel_size"] = 16;  // divides the job's 128 GPUs, not its 24 heads
  heads["jobs"][0]["model"] = {{"preset", "llama2-7b"}, {"num_attention_heads", 24}, {"num_query_groups", 24}, {"hidden_size", 4608}};
  CHECK_THAT(error_of(heads), Catch::Contains("jobs.json: jobs[0].training.tensor_model_parallel_size: 16 does not divide model.num_attention_heads (24)"));

  json typo = doc;
  typo["jobs"][0]["training"]["tensor_parallel_size"] = 8;
  CHECK_THAT(error_of(typo), Catch::Contains("jobs.json: jobs[0].training.tensor_parallel_size: unknown key"));

  json dup = doc;
  dup["jobs"][1]["name"] = "a";
  CHECK_THAT(error_of(dup), Catch::Contains("jobs.json: jobs[1].name: \"a\" is already the name of jobs[0]"));

  json empty = doc;
  empty["jobs"] = json::array();
  CHECK_THAT(error_of(empty), Catch::Contains("jobs.json: jobs: expected a non-empty array"));

  json nowhere = doc;
  nowhere["jobs"][0].erase("nodes");
  CHECK_THAT(error_of(nowhere), Catch::Contains("jobs.json: jobs[0]: missing nodes"));
}

TEST_CASE("jobs: --set reaches into a job by index", "[sim]") {
  json doc = two_jobs(4, range(0, 16), range(16, 16));
  apply_override(doc, "jobs.1.training.global_batch_size=32", "jobs.json");
  apply_override(doc, "jobs[0].training.micro_batch_size=1", "jobs.json");
  const Scenario s = parse_scenario(doc, "jobs.json");
  CHECK(s.jobs[1].training.global_batch_size == 32);
  CHECK_THROWS_WITH(apply_override(doc, "jobs.2.name=c", "jobs.json"),
                    Catch::Contains("jobs.json: --set jobs.2.name: \"jobs\" is an array of 2"));
}

TEST_CASE("jobs: one job over the whole cluster is the single-job scenario", "[sim]") {
  // The same model, training and GPUs, in the two forms: the same step, to the picosecond.
  json multi = two_jobs(4, range(0, 32), json::array());
  multi["jobs"].erase(1);
  multi["jobs"][0]["training"]["global_batch_size"] = 32;
  json single = multi;
  single.erase("jobs");
  single["model"] = multi["jobs"][0]["model"];
  single["training"] = multi["jobs"][0]["training"];
  for (const char* network : {"analytical", "flow"}) {
    INFO(network);
    multi["simulation"]["network"] = single["simulation"]["network"] = network;
    const SimulationResult one = simulate(parse_scenario(single, "one.json"));
    const MultiJobReport jobs = run(multi);
    REQUIRE(jobs.jobs.size() == 1);
    CHECK(jobs.jobs[0].step_time_s == one.report.step_time_s);
    CHECK(jobs.jobs[0].mfu == one.report.mfu);
    CHECK(jobs.jobs[0].slowdown == 1.0);
    CHECK(jobs.jobs[0].num_gpus == 256);
  }
}

TEST_CASE("jobs: two jobs interleaved under 4:1 oversubscribed leaves slow each other (flow network)", "[sim]") {
  // Fabric: 4-port leaves, so nodes 4l..4l+3 sit on leaf l (8 leaves); 4:1 gives each leaf
  // ceil(4 / 4) = 1 up-link of one NIC's bandwidth C, to the one spine.
  // Job a runs on nodes 0,1 | 4,5 | 8,9 | ... (two per leaf), job b on 2,3 | 6,7 | ...
  // Each job's DP all-reduce is one ring per TP index (8 rings) over its 16 nodes in rank order:
  // 0 -> 1 stays in leaf 0, 1 -> 4 crosses leaf 0 -> spine -> leaf 1, ..., 29 -> 0 wraps around: every
  // leaf sends one edge of each ring up and receives one down.
  //  - Alone: node 1's NIC carries 8 flows (its edge of each of the 8 rings) and leaf 0's up-link the same
  //    8 flows: both have capacity C, so every flow gets C/8 — NIC and up-link are both just saturated.
  //  - Together: leaf 0's up-link carries a's 8 flows (node 1 -> 4) and b's 8 (node 3 -> 6): C/16 each.
  //    The in-leaf edges (0 -> 1) still get C/8, but a ring is as slow as its slowest edge, so the
  //    bandwidth part of every inter-node all-reduce takes twice as long.
  // The jobs are identical and start together, so their buckets run at the same moments and this holds
  // for every bucket: each job's DP communication time doubles (less the per-step latency, which does
  // not), and its step grows by the part of that which backward does not hide — all of it here (below).
  const MultiJobReport shared = run(two_jobs(4, interleaved(0), interleaved(2)));
  json alone_doc = two_jobs(4, interleaved(0), interleaved(2));
  alone_doc["jobs"].erase(1);
  const MultiJobReport alone = run(alone_doc);
  REQUIRE(shared.jobs.size() == 2);
  const Report& a = shared.jobs[0];
  const Report& b = shared.jobs[1];
  INFO("a: " << a.step_time_s << " s (alone " << a.step_time_alone_s << " s), b: " << b.step_time_s << " s (alone "
             << b.step_time_alone_s << " s)");
  CHECK(a.slowdown > 1.5);
  CHECK(b.slowdown > 1.5);
  CHECK(a.slowdown == Approx(b.slowdown).epsilon(1e-6));  // symmetric jobs
  CHECK(a.step_time_s == Approx(a.slowdown * a.step_time_alone_s).epsilon(1e-12));
  // The alone run inside the shared simulation is the job simulated by itself.
  CHECK(a.step_time_alone_s == Approx(alone.jobs[0].step_time_s).epsilon(1e-12));
  // DP communication doubles (the per-collective latency, ~tens of us on ~21 buckets, is the rest).
  const double ratio = dp_busy(a) / dp_busy(alone.jobs[0]);
  CHECK(ratio > 1.9);
  CHECK(ratio <= 2.0 + 1e-9);
  // And the step grows by all of the extra DP time: with ~0.8 s of all-reduce against ~40 ms of
  // backward, the DP stream is busy from the first bucket to the optimizer step, so every second the
  // buckets take longer lands on the critical path.
  INFO("DP busy: " << dp_busy(a) << " s shared, " << dp_busy(alone.jobs[0]) << " s alone");
  CHECK(a.step_time_s - a.step_time_alone_s == Approx(dp_busy(a) - dp_busy(alone.jobs[0])).epsilon(0.02));
  // Compute is untouched.
  CHECK(a.breakdown.compute_s == Approx(alone.jobs[0].breakdown.compute_s).epsilon(1e-9));
}

TEST_CASE("jobs: on disjoint switches, or with the analytical network, jobs do not slow each other", "[sim]") {
  SECTION("each job under its own leaf: no link shared") {
    // 16-port leaves: job a's 16 nodes fill leaf 0, job b's leaf 1. Every ring edge stays inside its
    // leaf (NIC -> leaf -> NIC), so no flow of a shares a link with a flow of b: slowdown 1.
    const MultiJobReport r = run(two_jobs(16, range(0, 16), range(16, 16)));
    for (const Report& j : r.jobs) {
      INFO(j.job);
      CHECK(j.slowdown == Approx(1.0).epsilon(1e-9).margin(0));
    }
  }
  SECTION("shared spine switch, disjoint links: still 1") {
    // 4-port leaves with the jobs side by side (a on leaves 0-3, b on leaves 4-7): both cross the one
    // spine, but each job's traffic uses its own leaves' up-links and the spine's down-links to its own
    // leaves. The model's switches are non-blocking; only links are shared, and none is.
    const MultiJobReport r = run(two_jobs(4, range(0, 16), range(16, 16)));
    for (const Report& j : r.jobs) {
      INFO(j.job);
      CHECK(j.slowdown == Approx(1.0).epsilon(1e-9).margin(0));
    }
  }
  SECTION("the analytical network has no contention by construction") {
    const MultiJobReport r = run(two_jobs(4, interleaved(0), interleaved(2), "analytical"));
    for (const Report& j : r.jobs) {
      INFO(j.job);
      CHECK(j.slowdown == 1.0);
    }
  }
}

TEST_CASE("jobs: the report has every single-job key plus the job's, and is deterministic", "[sim]") {
  json doc = two_jobs(4, interleaved(0), interleaved(2));
  doc["jobs"][1]["model"] = {{"preset", "llama2-13b"}};  // a longer job: its tail runs alone
  const Scenario s = parse_scenario(doc, "jobs.json");
  const SimulationResult first = simulate(s);
  const json out = to_json(first.multi_job);
  REQUIRE(out.at("jobs").size() == 2);
  for (const json& j : out.at("jobs")) {
    for (const char* key : {"/step_time_s", "/tokens_per_s", "/mfu", "/breakdown_s/compute", "/memory_gib/total",
                            "/cost/usd_per_step", "/utilization/gpu_busy", "/step_time_alone_s", "/slowdown"})
      CHECK(j.contains(json::json_pointer(key)));
    CHECK(j.at("cluster").at("num_gpus") == 128);
    CHECK(j.at("job_nodes").size() == 16);
  }
  CHECK(out.at("jobs")[0].at("job") == "a");
  CHECK(out.at("makespan_s").get<double>() ==
        std::max(out.at("jobs")[0].at("step_time_s").get<double>(), out.at("jobs")[1].at("step_time_s").get<double>()));
  // Job 0's report is also result.report, for callers that know one job.
  CHECK(to_json(first.report) == out.at("jobs")[0]);
  // Single-job reports carry none of the job keys.
  CHECK(!to_json(simulate(s.job_scenario(0)).report).contains("slowdown"));
  // Byte-identical twice.
  CHECK(to_json(simulate(s).multi_job).dump() == out.dump());
  CHECK(to_text(simulate(s).multi_job) == to_text(first.multi_job));
}
