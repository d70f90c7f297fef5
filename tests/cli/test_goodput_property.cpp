// Issue 32, property: no exit-0 report holds null, NaN or inf. Random small scenarios (a seeded generator)
// with every whole-run block (resilience, checkpoint, data pipeline, stragglers, speed variation,
// tokens_to_train, jitter) at values spanning their legal ranges, edges included, go through the front
// door (`clustersim run --json`, the executable itself: a crash or a hang fails the case). Each ends either
// in exit code 2 with one line per problem, each naming the file or the option, or in exit code 0 with a
// JSON report whose every number is finite and which holds no null.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cli_helpers.hpp"

using namespace clitest;
using nlohmann::json;

namespace {

// Draws from raw std::mt19937_64 bits (the engine is specified bit for bit; the standard distributions
// are not), so a seed gives the same scenarios everywhere.
class Draw {
 public:
  explicit Draw(std::uint64_t seed) : e_(seed) {}
  std::size_t index(std::size_t n) { return static_cast<std::size_t>(e_() % n); }
  bool coin() { return (e_() & 1) != 0; }
  template <class T>
  T pick(const std::vector<T>& v) { return v[index(v.size())]; }

 private:
  std::mt19937_64 e_;
};

// The legal range's edges and points between, per key (docs/goodput.md, "Bounds"; params.json).
const std::vector<double> kMtbf = {1, 3, 100, 79230, 1e9};
const std::vector<double> kGBps = {0.001, 0.5, 25, 100, 1e7};
const std::vector<double> kSeconds = {0, 1, 60, 3600, 1e8};

json resilience(Draw& d) {
  json r = json::object();
  if (d.coin()) {
    json m = json::object();
    for (const char* k : {"gpu", "host", "nic", "network", "software"})
      if (d.coin()) m[k] = d.pick(kMtbf);
    r["mtbf_hours"] = m;
  }
  json c = json::object();
  switch (d.index(4)) {
    case 0: c["interval"] = "optimal"; break;
    case 1: c["interval_steps"] = d.pick(std::vector<double>{1, 7, 1000, 1e9}); break;
    case 2: c["interval_s"] = d.pick(std::vector<double>{1e-300, 1, 3600, 1e8}); break;
    default: break;
  }
  if (d.coin()) c["size_bytes"] = d.pick(std::vector<double>{1, 1e9, 1e12, 1e18});
  if (d.coin()) c["target"] = d.pick(std::vector<std::string>{"shared_fs", "local_nvme"});
  for (const char* k : {"shared_fs_GBps", "shared_fs_per_client_GBps", "local_nvme_write_GBps_per_node", "snapshot_GBps_per_gpu"})
    if (d.coin()) c[k] = d.pick(kGBps);
  if (d.coin()) c["async"] = d.coin();
  r["checkpoint"] = c;
  if (d.coin()) {
    json s = json::object();
    for (const char* k : {"detection_s", "scheduling_s", "process_start_s", "nccl_init_base_s"})
      if (d.coin()) s[k] = d.pick(kSeconds);
    if (d.coin()) s["nccl_init_s_per_rank"] = d.pick(std::vector<double>{0, 0.003, 1e3});
    r["restart"] = s;
  }
  return r;
}

json data_pipeline(Draw& d) {
  json p = {{"bytes_per_sample", d.pick(std::vector<double>{1, 32768, 2e7, 1e15})}};
  if (d.coin()) p["source"] = d.pick(std::vector<std::string>{"shared_fs", "local_nvme"});
  for (const char* k : {"shared_fs_GBps", "shared_fs_per_client_GBps", "local_nvme_read_GBps_per_node"})
    if (d.coin()) p[k] = d.pick(kGBps);
  if (d.coin()) p["workers_per_gpu"] = d.pick(std::vector<int>{1, 2, 1024});
  if (d.coin()) p["cpu_s_per_sample"] = d.pick(std::vector<double>{0, 0.01, 1e4});
  if (d.coin()) p["prefetch_depth"] = d.pick(std::vector<int>{0, 2, 1024});
  return p;
}

// A small mirrored job: one or two nodes of 8 GPUs, a 4-layer model.
json scenario(Draw& d) {
  const int nodes = d.coin() ? 1 : 2;
  json cluster = {{"gpu", "H100-SXM"}, {"nodes", nodes}, {"gpus_per_node", 8}};
  if (nodes > 1) cluster["inter_node"] = {{"fabric", "fat-tree"}, {"link", "ib-ndr400"}, {"nics_per_node", 8}};
  if (d.coin()) {
    json list = json::array();
    const double slow = d.pick(std::vector<double>{1, 1.25, 10, 100});
    list.push_back(d.coin() ? json{{"gpu", d.index(8 * nodes)}, {"slowdown", slow}} : json{{"node", d.index(nodes)}, {"slowdown", slow}});
    if (d.coin()) list.push_back({{"gpu", d.index(8 * nodes)}, {"slowdown", d.pick(std::vector<double>{1, 2, 100})}});
    cluster["stragglers"] = list;
  }
  if (d.coin()) cluster["speed_variation"] = {{"cv", d.pick(std::vector<double>{0, 0.02, 1})}, {"seed", d.index(100)}};
  const int gbs = d.pick(std::vector<int>{16, 64});
  json doc = {{"cluster", cluster},
              {"model", {{"num_layers", 4}, {"hidden_size", 1024}, {"num_attention_heads", 8}, {"ffn_hidden_size", 4096}, {"vocab_size", 32000}}},
              {"training", {{"seq_length", 2048}, {"global_batch_size", gbs}, {"micro_batch_size", 1},
                            {"tensor_model_parallel_size", d.coin() ? 1 : 2}}}};
  // One step's tokens (the smallest run), up to the table's maximum.
  doc["training"]["tokens_to_train"] = d.pick(std::vector<double>{2048.0 * gbs, 1e9, 1e12, 1e15, 1e18});
  if (d.index(4) != 0) doc["resilience"] = resilience(d);
  if (d.coin()) doc["data_pipeline"] = data_pipeline(d);
  if (d.coin()) doc["variability"] = {{"compute_jitter_cv", d.pick(std::vector<double>{0, 0.05, 0.5})}};
  return doc;
}

// Where `v` holds a null or a number that is not finite ("" when nowhere).
std::string first_bad(const json& v, const std::string& path) {
  if (v.is_null()) return path + " is null";
  if (v.is_number_float() && !std::isfinite(v.get<double>())) return path + " is not finite";
  for (auto it = v.begin(); (v.is_object() || v.is_array()) && it != v.end(); ++it) {
    std::string child = path;
    if (v.is_object()) child.append(".").append(it.key());
    else child.append("[]");
    const std::string inner = first_bad(*it, child);
    if (!inner.empty()) return inner;
  }
  return "";
}

}  // namespace

TEST_CASE("goodput property: no exit-0 report holds null, NaN or inf, every refusal is exit 2 naming the file", "[cli][goodput][slow]") {
  TempDir dir;
  Draw d(32);
  int reports = 0, refusals = 0;
  for (int i = 0; i < 200; ++i) {
    const json doc = scenario(d);
    std::string name = std::to_string(i);
    name.append(".json");  // not "s" + ...: GCC 12's -Wrestrict misfires on it at -O3
    const std::string file = dir.write_json(name, doc).string();
    std::vector<std::string> args = {"run", file, "--json"};
    if (doc.contains("resilience") && d.coin()) args.insert(args.end(), {"--runs", d.pick(std::vector<std::string>{"1", "10"})});
    if (d.coin()) args.insert(args.end(), {"--steps", d.pick(std::vector<std::string>{"1", "100"}), "--seed", std::to_string(i)});
    const CliResult r = run_cli(args);
    INFO("case " << i << ": " << doc.dump() << "\n" << r.describe());
    REQUIRE((r.exit_code == 0 || r.exit_code == 2));
    if (r.exit_code == 2) {
      ++refusals;
      REQUIRE(!r.err_lines().empty());
      for (const auto& line : r.err_lines()) CHECK((line.rfind(file + ": ", 0) == 0 || line.rfind("clustersim run: ", 0) == 0));
      continue;
    }
    ++reports;
    const json out = json::parse(r.out);
    CHECK(first_bad(out, "report") == "");
  }
  INFO(reports << " reports, " << refusals << " refusals");
  CHECK(reports >= 100);  // the generator mostly makes runnable scenarios, so the property is tested on reports
}
