// The parameter table (sim/scenario/params.hpp) against everything that must agree with it: the
// loader accepts exactly the table's keys, every shipped scenario uses only table keys, the committed
// docs/scenario-reference.md is what the table generates, the enum name tables are the table's
// choices, and the layout search sets the table's axes in the table's order.
#include <catch2/catch.hpp>

#include <climits>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "models/workload/model_rules.hpp"
#include "sim/explore/sweep.hpp"
#include "sim/scenario/enum_names.hpp"
#include "sim/base/input_error.hpp"
#include "sim/scenario/params.hpp"
#include "sim/scenario/scenario.hpp"
#include "topologies/fabric.hpp"

using namespace cs::sim;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kScenarios = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios";

// The loader's messages for `doc` (empty: it loaded).
std::vector<std::string> messages(const json& doc) {
  try {
    parse_scenario(doc, "t.json");
  } catch (const cs::InputError& e) {
    return e.messages();
  }
  return {};
}

// A value of the key's type inside its range.
json valid_value(const params::Param& p) {
  switch (p.type) {
    case params::Type::integer:
    case params::Type::integer_or_list: return static_cast<std::int64_t>(p.min);
    case params::Type::number: return p.min_exclusive ? p.min + 0.5 * (p.max - p.min) : p.min;
    case params::Type::boolean: return true;
    case params::Type::choice:
    case params::Type::name_or_object: return p.choices.front();
    case params::Type::list: return json::array({"core_attn"});
    default: return "x";
  }
}

}  // namespace

TEST_CASE("params: every leaf key of the table is accepted by the loader (no unknown key)", "[sim][params]") {
  const json base = read_json_file(kScenarios + "/llama3-8b-h100x8.json");
  const json jobs = read_json_file(kScenarios + "/two-jobs-shared-spine.json");
  std::size_t tried = 0;
  for (const auto& p : params::table()) {
    if (p.type == params::Type::object || p.path == "jobs") continue;
    json doc = p.path.rfind("jobs[].", 0) == 0 ? jobs : base;
    std::string path = p.path;
    if (path.rfind("jobs[].", 0) == 0) path = "jobs.0." + path.substr(7);
    // Keys of a list's elements: one element to set them on.
    for (const auto& [list, element] : {std::pair<std::string, json>{"cluster.stragglers", {{"gpu", 0}, {"slowdown", 1.5}}},
                                        std::pair<std::string, json>{"cluster.node_groups", {{"gpu", "H100-SXM"}, {"nodes", 1}}}})
      if (path.rfind(list + "[].", 0) == 0) {
        doc["cluster"][list.substr(8)] = json::array({element});
        path = list + ".0." + path.substr(list.size() + 3);
      }
    // The keys of an object that may be a name need the object form.
    if (path.rfind("cluster.gpu.", 0) == 0) doc["cluster"]["gpu"] = {{"name", "g"}, {"peak_tflops_bf16", 100}, {"hbm_gib", 80}, {"hbm_tbps", 3}};
    if (path.rfind("cluster.intra_node.", 0) == 0) doc["cluster"]["intra_node"] = {{"name", "nvswitch"}};
    if (path.rfind("cluster.inter_node.", 0) == 0 && !doc["cluster"].contains("inter_node"))
      doc["cluster"]["inter_node"] = {{"fabric", "fat-tree"}, {"link", "ib-ndr400"}};
    if (path.rfind("cluster.inter_node.link.", 0) == 0) doc["cluster"]["inter_node"]["link"] = {{"name", "l"}, {"line_rate_gbps", 400}};
    if (path == "jobs.0.gpus") doc["jobs"][0].erase("nodes");
    if (path == "jobs.0.first_node") doc["jobs"][0]["nodes"] = 1;
    apply_override(doc, path + "=" + valid_value(p).dump(), "t.json");
    INFO(p.path << " = " << valid_value(p).dump());
    for (const auto& m : messages(doc)) {
      INFO(m);
      CHECK(m.find("unknown key") == std::string::npos);
    }
    ++tried;
  }
  CHECK(tried > 100);
}

TEST_CASE("params: a key that is not in the table is refused, with the table's near key", "[sim][params]") {
  const json base = read_json_file(kScenarios + "/llama3-8b-h100x8.json");
  REQUIRE(params::find("training.not_a_knob") == nullptr);
  json doc = base;
  doc["training"]["not_a_knob"] = 1;
  auto lines = messages(doc);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].rfind("t.json: training.not_a_knob: unknown key (expected one of: seq_length, global_batch_size,", 0) == 0);
  doc = base;
  doc["cluster"]["gpus_per_nod"] = 8;
  lines = messages(doc);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == "t.json: cluster.gpus_per_nod: unknown key (did you mean \"gpus_per_node\"?)");
}

TEST_CASE("params: every key of every shipped scenario is in the table", "[sim][params]") {
  std::size_t files = 0, keys = 0;
  std::function<void(const json&, const std::string&)> walk = [&](const json& v, const std::string& path) {
    if (v.is_object()) {
      for (auto it = v.begin(); it != v.end(); ++it) {
        const std::string child = path.empty() ? it.key() : path + "." + it.key();
        // A job's model and training take the keys of model.* and training.*.
        std::string declared = child;
        for (const char* section : {"model", "training"})
          if (declared.rfind(std::string("jobs[].") + section, 0) == 0) declared = declared.substr(7);
        INFO(child);
        CHECK(params::find(declared) != nullptr);
        ++keys;
        walk(it.value(), declared);
      }
    } else if (v.is_array() && path == "jobs") {
      for (const auto& item : v) walk(item, "jobs[]");
    }
  };
  for (const auto& entry : fs::directory_iterator(kScenarios)) {
    if (entry.path().extension() != ".json") continue;
    const json doc = read_json_file(entry.path().string());
    if (!doc.is_object() || !doc.contains("cluster")) continue;  // the schema, not a scenario
    walk(doc, "");
    ++files;
  }
  CHECK(files >= 8);
  CHECK(keys > 100);
}

TEST_CASE("params: ranges are well formed and every integer maximum fits an int", "[sim][params]") {
  for (const auto& p : params::table()) {
    INFO(p.path);
    CHECK(!p.help.empty());
    CHECK(!p.default_text.empty());
    CHECK(params::find(p.path) == &p);  // declared once
    if (!p.has_range() && p.type != params::Type::integer_or_list) continue;
    CHECK(std::isfinite(p.min));
    CHECK(std::isfinite(p.max));
    CHECK(p.min < p.max);
    if (p.type != params::Type::number) CHECK(p.max <= INT_MAX);
    if (p.max > 1) CHECK(!p.max_reason.empty());  // a maximum beyond a share has its reason
  }
  CHECK(params::normalize("jobs[12].training.seq_length") == "jobs[].training.seq_length");
  CHECK(params::find("jobs[3].nodes") == params::find("jobs[].nodes"));
}

TEST_CASE("params: docs/scenario-reference.md is what the table generates", "[sim][params]") {
  std::ifstream in(std::string(CLUSTERSIM_SOURCE_DIR) + "/docs/scenario-reference.md", std::ios::binary);
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  // On a difference: build/clustersim params --markdown > docs/scenario-reference.md
  CHECK(text.str() == params::to_markdown());
}

TEST_CASE("params: the enum name tables are the table's choices", "[sim][params]") {
  const auto choices = [](const char* path) { return params::find(path)->choices; };
  CHECK(choices("model.activation") == names_of(kActivationNames));
  CHECK(choices("model.attention_backend") == names_of(kAttentionBackendNames));
  CHECK(choices("model.position_embedding_type") == names_of(kPositionEmbeddingNames));
  CHECK(choices("training.precision") == names_of(kPrecisionNames));
  CHECK(choices("training.recompute_granularity") == names_of(kRecomputeNames));
  CHECK(choices("training.recompute_method") == names_of(kRecomputeMethodNames));
  CHECK(choices("training.pipeline_schedule") == names_of(kPipelineScheduleNames));
  CHECK(choices("training.fsdp_sharding_strategy") == names_of(kFsdpShardingNames));
  CHECK(choices("cluster.inter_node.fabric") == cs::topo::fabric_names());
  CHECK(choices("simulation.network") == names_of(kNetworkBackendNames));
  CHECK(choices("simulation.nccl_algorithm") == names_of(kNcclAlgorithmNames));
  // Every choice round-trips through its name table; a value prints as its first name.
  for (const auto& n : kRecomputeNames) CHECK(name_of(kRecomputeNames, *parse_name(kRecomputeNames, n.name)) == n.name);
  CHECK(name_of(kAttentionBackendNames, cs::models::AttentionImpl::native) == "auto");
  CHECK(!parse_name(kNetworkBackendNames, "packet"));
}

TEST_CASE("params: the layout search sets the table's axes in the table's order", "[sim][params]") {
  const std::vector<std::string> axes = params::search_axes();
  REQUIRE(axes.size() == 13);
  CHECK(axes.front() == "training.tensor_model_parallel_size");
  CHECK(axes.back() == "training.recompute_granularity");
  for (const char* file : {"/llama3-8b-h100x8.json", "/deepseek-moe-16b-h100x32.json"}) {
    const json doc = read_json_file(kScenarios + file);
    const bool moe = doc["model"].value("preset", "").find("moe") != std::string::npos;
    std::vector<std::string> expected;
    for (const auto& a : axes)
      if (moe || a != "training.expert_tensor_parallel_size") expected.push_back(a);
    const auto layouts = enumerate_layouts(doc, file, SearchOptions{});
    REQUIRE(!layouts.empty());
    std::set<std::string> recompute;
    for (const auto& a : layouts) {
      std::vector<std::string> paths;
      for (const auto& [path, v] : a) {
        paths.push_back(path);
        const params::Param* p = params::find(path);
        REQUIRE(p != nullptr);
        CHECK(p->search_order > 0);
        if (path == "training.recompute_granularity") recompute.insert(v.get<std::string>());
        if (path == "training.zero_stage") CHECK((v.get<double>() >= p->min && v.get<double>() <= p->max));
      }
      REQUIRE(paths == expected);
    }
    CHECK(recompute == std::set<std::string>{"none", "selective", "full"});
  }
}

TEST_CASE("params: every fabric key is a row of the table with the registration default", "[sim][params]") {
  for (const cs::topo::Fabric& f : cs::topo::fabrics()) {
    for (const cs::topo::FabricKey& k : f.keys) {
      INFO(std::string(f.name) + ": " + k.key);
      const params::Param* p = params::find(std::string("cluster.inter_node.") + k.key);
      REQUIRE(p != nullptr);
      CHECK(p->type == (k.integer ? params::Type::integer : params::Type::number));
      CHECK((k.integer == nullptr) != (k.number == nullptr));
      CHECK(p->default_text == std::to_string(static_cast<long long>(k.default_value)));
    }
  }
}

TEST_CASE("params: every model key bound to a ModelConfig field has its row, of its type, and sets that field", "[sim][params]") {
  // models/workload/model_rules.hpp's table is how the loader reads a one-field model key: each must be a
  // table key of the same type, and a scenario giving it must change exactly that field (here: to a value
  // in range that differs from the default, then read back through the binding).
  const Scenario base = parse_scenario(json::parse(R"({"name": "f", "cluster": {"gpu": "H100-SXM", "nodes": 1, "gpus_per_node": 8},
    "model": {"preset": "llama3-8b"}, "training": {"seq_length": 4096, "global_batch_size": 8, "micro_batch_size": 1}})"), "f.json");
  for (const cs::models::ModelField& f : cs::models::model_fields()) {
    const std::string path = "model." + std::string(f.key);
    INFO(path);
    const params::Param* p = params::find(path);
    REQUIRE(p != nullptr);
    CHECK(p->type == (f.integer ? params::Type::integer : params::Type::boolean));
    CHECK((f.integer == nullptr) != (f.boolean == nullptr));
    cs::models::ModelConfig m = base.model;
    if (f.integer) {
      const std::int64_t before = f.integer(m);
      f.integer(m) = before + 1;
      CHECK(f.integer(m) == before + 1);
    } else {
      const bool before = f.boolean(m);
      f.boolean(m) = !before;
      CHECK(f.boolean(m) == !before);
    }
  }
  // Read through the loader: a boolean flipped by the scenario lands in the field the table names.
  json doc = json::parse(R"({"name": "f", "cluster": {"gpu": "H100-SXM", "nodes": 1, "gpus_per_node": 8},
    "model": {"preset": "llama3-8b", "add_bias_linear": true, "mtp_num_layers": 2},
    "training": {"seq_length": 4096, "global_batch_size": 8, "micro_batch_size": 1}})");
  const Scenario s = parse_scenario(doc, "f.json");
  CHECK(s.model.add_bias_linear);
  CHECK(s.model.mtp_num_layers == 2);
}
