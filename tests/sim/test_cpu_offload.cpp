// CPU activation offload (training.cpu_offloading_num_layers; Transformer Engine's offload context as
// Megatron-Core uses it): the memory it leaves on the GPU, the copies' stalls, worked by hand.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/memory/memory_model.hpp"
#include "models/workload/transformer.hpp"
#include "sim/explore/screening.hpp"
#include "sim/report/report.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"
#include "sim/step/step_budget.hpp"
#include "sim/step/step_units.hpp"

using namespace cs::sim;
using nlohmann::json;

namespace {

// One H100 (no data-parallel traffic), a 4-layer Llama-shaped model, one micro-batch of 4096 tokens.
json base(int offloaded, int layers = 4) {
  json doc = {{"name", "host copies"},
              {"cluster", {{"gpu", "H100-SXM"}, {"nodes", 1}, {"gpus_per_node", 1}, {"intra_node", "nvswitch"}}},
              {"model", {{"num_layers", layers}, {"hidden_size", 4096}, {"num_attention_heads", 32}, {"num_query_groups", 8},
                         {"ffn_hidden_size", 14336}, {"vocab_size", 32000}, {"activation", "swiglu"}}},
              {"training", {{"seq_length", 4096}, {"global_batch_size", 1}, {"micro_batch_size", 1}, {"precision", "bf16"},
                            {"recompute_granularity", "none"}}},
              {"simulation", {{"network", "analytical"}}}};
  if (offloaded > 0) doc["training"]["cpu_offloading_num_layers"] = offloaded;
  return doc;
}

Scenario scenario(const json& doc) { return parse_scenario(doc, "offload.json"); }

// The compute stream's kernels of rank 0 in issue order, as (name, duration).
std::vector<Time> kernel_durations(const SimulationResult& r) {
  std::vector<Time> out;
  for (const TaskId id : r.plan.graph.stream_tasks(0, StreamKind::compute)) out.push_back(r.plan.graph.tasks()[id].duration);
  return out;
}

}  // namespace

TEST_CASE("offload memory: the GPU keeps L - N layers' activations, derived by hand", "[sim]") {
  // L = 4 layers, N = 1 (layer 0 offloaded). TE drops layer 0's set when layer L - N + 0 = 3 starts its
  // forward, and reloads it when layer L - 1 - N + 0 = 2 starts its backward. While layer j runs the GPU
  // holds the layers i <= j that are not offloaded (i >= 1) or not yet dropped (i > j - 3):
  //   j = 0: {0}   j = 1: {0, 1}   j = 2: {0, 1, 2}   j = 3: {1, 2, 3}   (the backward the same, in reverse)
  // so the peak is 3 = L - N sets of a (the layers are alike): one set a fewer than without offload.
  // With N = 3 (L - N = 1, TE's "no overlap" case): j = 0: {0}, j = 1: {1} (0 dropped as 1 starts), ... : 1 set.
  const Scenario off0 = scenario(base(0)), off1 = scenario(base(1)), off3 = scenario(base(3));
  const double a = cs::models::activation_bytes_per_layer(off0.model, off0.training);
  const double none = cs::models::peak_memory_per_gpu(off0.model, off0.training).activations_bytes;
  CHECK(cs::models::offload_peak_layer_bytes(off1.model, off1.training) == Approx(3 * a));
  CHECK(cs::models::offload_peak_layer_bytes(off3.model, off3.training) == Approx(a));
  CHECK(cs::models::peak_memory_per_gpu(off1.model, off1.training).activations_bytes == Approx(none - a));
  CHECK(cs::models::peak_memory_per_gpu(off3.model, off3.training).activations_bytes == Approx(none - 3 * a));
  // The report's memory is the same figure.
  CHECK(simulate(off1).report.memory.activations_bytes == Approx(none - a));
}

TEST_CASE("offload time: a copy slower than the compute it overlaps stalls by the difference, by hand", "[sim]") {
  // L = 4, N = 1 on one GPU (no collectives): the compute stream runs embedding, layers 0-3, head forward,
  // head, layers 3-0, embedding backward, then the optimizer. Layer 0's copy out (c) starts when its
  // forward ends and overlaps layers 1 and 2's forwards (f each); layer 3's forward waits for it: a stall
  // of c - 2f when c > 2f. Its copy back starts with layer 2's backward and overlaps layers 2 and 1's
  // backwards (b each); layer 0's backward waits: a stall of c - 2b where c > 2b. So the step is longer by
  // (c - 2f) + max(0, c - 2b). A layer here stores ~0.57 GB (bf16, 4096 tokens): c ~11 ms over PCIe Gen5
  // (51.2 GB/s), above two of its forwards.
  const Scenario s0 = scenario(base(0)), s1 = scenario(base(1));
  const SimulationResult r0 = simulate_materialised(s0), r1 = simulate_materialised(s1);
  const Time c = from_seconds(offload_copy_s(s1.model, s1.training, s1.gpu).at(0));
  CHECK(c == from_seconds(cs::models::offloaded_layer_bytes(s1.model, s1.training, 0) / (51.2e9)));
  // The kernels are the same in both runs; split the compute stream's at the layer boundaries (alike layers:
  // the same kernel count each, embedding and head kernels around them).
  const std::vector<Time> k0 = kernel_durations(r0), k1 = kernel_durations(r1);
  REQUIRE(k0 == k1);
  const UnitOps ops(s0.model, s0.training);
  auto kernels = [](const std::vector<cs::models::Op>& list) {
    std::size_t n = 0;
    for (const auto& op : list) n += op.kind != cs::models::OpKind::collective;
    return n;
  };
  const std::size_t ef = kernels(ops.embedding.forward), lf = kernels(ops.layer().forward), hf = kernels(ops.head.forward);
  const std::size_t hb = kernels(ops.head.backward), lb = kernels(ops.layer().backward);
  auto sum = [&](std::size_t from, std::size_t n) {
    Time t = 0;
    for (std::size_t i = from; i < from + n; ++i) t += k0.at(i);
    return t;
  };
  const Time f = sum(ef + lf, lf);                       // layer 1's forward (layers alike)
  const Time b = sum(ef + 4 * lf + hf + hb + lb, lb);   // layer 2's backward
  REQUIRE(c > 2 * f);  // the forward stalls
  const Time stall = (c - 2 * f) + std::max<Time>(0, c - 2 * b);
  CHECK(from_seconds(r1.report.step_time_s) - from_seconds(r0.report.step_time_s) == stall);
  // The screening tier replays the same copies and waits: the same step to the picosecond here.
  ScreeningCache cache(s1.cluster);
  CHECK(screening_step_time_s(s1, cache).value() == r1.report.step_time_s);
  // The copies are not kernels: the compute the report counts is unchanged, the wait is idle time.
  CHECK(r1.report.breakdown.compute_s == r0.report.breakdown.compute_s);
  CHECK(r1.report.breakdown.other_s > r0.report.breakdown.other_s);
}

TEST_CASE("offload: the key at 0 changes nothing, the layout shows it when set", "[sim]") {
  json with_zero = base(0);
  with_zero["training"]["cpu_offloading_num_layers"] = 0;
  const Report a = simulate(scenario(base(0))).report, b = simulate(scenario(with_zero)).report;
  CHECK(to_json(a).dump() == to_json(b).dump());
  CHECK(to_text(a) == to_text(b));
  CHECK(to_json(a)["layout"].count("cpu_offloading_num_layers") == 0);
  CHECK(to_text(a).find("offload") == std::string::npos);
  const Report c = simulate(scenario(base(2))).report;
  CHECK(to_json(c)["layout"]["cpu_offloading_num_layers"] == 2);
  CHECK(to_text(c).find("recompute none  offload 2 layers") != std::string::npos);
}

TEST_CASE("offload: every rank from the template falls back to the materialised graph, the same step", "[sim]") {
  json doc = base(1);
  doc["cluster"]["gpus_per_node"] = 2;
  doc["training"]["global_batch_size"] = 4;
  const Report mirrored = simulate(scenario(doc)).report;
  doc["simulation"]["symmetry"] = false;
  const Report every = simulate(scenario(doc)).report;
  CHECK(every.step_time_s == mirrored.step_time_s);
}

TEST_CASE("offload: the screening tier stays within a few percent of the simulation with data parallelism and ZeRO", "[sim][screening]") {
  // Overlapped data-parallel traffic slows kernels in the executor but is priced per unit in the screening
  // tier, so the two differ a little, as without offload (test_screening.cpp); the copies are the same.
  for (int zero : {1, 3})
    for (int n : {1, 2, 3}) {
      json doc = base(n);
      doc["cluster"]["gpus_per_node"] = 8;
      doc["training"]["global_batch_size"] = 16;
      doc["training"]["zero_stage"] = zero;
      const Scenario s = scenario(doc);
      ScreeningCache cache(s.cluster);
      const double estimate = screening_step_time_s(s, cache).value(), simulated = simulate(s).report.step_time_s;
      INFO("ZeRO-" << zero << " N " << n << ": " << estimate << " s against " << simulated << " s");
      CHECK(estimate == Approx(simulated).epsilon(0.03));
    }
}

TEST_CASE("offload: the task budget counts the copies the builder emits, a copy out and back per layer", "[sim]") {
  json doc0 = base(0), doc2 = base(2);
  for (json* d : {&doc0, &doc2}) (*d)["cluster"]["gpus_per_node"] = 8, (*d)["training"]["global_batch_size"] = 32;
  const Scenario s0 = scenario(doc0), s2 = scenario(doc2);
  const SimulationResult r0 = simulate_materialised(s0), r2 = simulate_materialised(s2);
  const double built = static_cast<double>(r2.plan.graph.tasks().size()) - static_cast<double>(r0.plan.graph.tasks().size());
  // 4 micro-batches a rank (32 / 8 DP): 2 layers x 2 copies each.
  CHECK(built == 16.0 * r0.plan.graph.num_ranks());
  CHECK(estimate_step(s2).tasks - estimate_step(s0).tasks == Approx(built));
}
