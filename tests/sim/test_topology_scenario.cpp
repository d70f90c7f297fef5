// cluster.topology_file (sim/scenario/scenario.hpp): a GraphML or DOT file (topologies/topology_file.hpp)
// is the cluster graph a scenario runs on, placement, routing and the flow network included, and a broken
// one is reported in one line naming the scenario, the key, the topology file and the line or element.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/base/input_error.hpp"
#include "sim/network/collective_run.hpp"
#include "sim/network/nccl_model.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/simulation.hpp"
#include "topologies/topology_file.hpp"

using namespace cs::sim;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kSource = CLUSTERSIM_SOURCE_DIR;
const std::string kScenario = kSource + "/scenarios/llama3-8b-mi300x32-topology-file.json";
const std::string kDot = kSource + "/scenarios/mi300x-two-racks.dot";
const std::string kData = kSource + "/tests/topologies/data";

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The loader's messages for `doc` read as if it were the file `file` (empty: it loaded).
std::vector<std::string> messages(const json& doc, const std::string& file) {
  try {
    parse_scenario(doc, file);
  } catch (const cs::InputError& e) {
    return e.messages();
  }
  return {};
}

// A scratch folder of this test's own, removed at the end.
struct Scratch {
  fs::path dir;
  explicit Scratch(const std::string& name) : dir(fs::temp_directory_path() / ("clustersim-" + name)) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() { fs::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name, std::ios::binary) << text;
    return (dir / name).string();
  }
};

}  // namespace

TEST_CASE("topology_file: the example scenario runs on the file's graph with the flow network", "[sim][topology_file]") {
  const Scenario s = load_scenario(kScenario);
  // The file gives the counts (4 nodes of 8 MI300X), the scenario's nodes / gpus_per_node agree with it.
  REQUIRE(s.topology != nullptr);
  CHECK(s.topology_file == fs::path(kDot).lexically_normal().string());
  CHECK(s.topology->from_file());
  CHECK(s.cluster.nodes == 4);
  CHECK(s.cluster.gpus_per_node == 8);
  CHECK(s.cluster.fabric == "custom");
  CHECK(s.num_gpus() == 32);
  CHECK(make_cluster(s).get() == s.topology.get());  // routes on the file's graph, not a built one
  CHECK(s.simulation.network == NetworkBackend::flow);

  const Report r = simulate(s).report;
  CHECK(r.network == "flow");
  CHECK(r.num_gpus == 32);
  CHECK(r.nodes == 4);
  CHECK(r.step_time_s > 0);
  CHECK(r.breakdown.compute_s > 0);
  // DP 16 spans the four nodes: its gradient reduce-scatter / parameter all-gather crosses the NICs.
  CHECK(r.busy_s[static_cast<std::size_t>(Category::dp_comm)] > 0);
  CHECK(r.busy_s[static_cast<std::size_t>(Category::tp_comm)] > 0);
}

TEST_CASE("topology_file: the file's bandwidths are the ones the flows see", "[sim][topology_file]") {
  // The same cluster with every network edge (NIC-leaf and the leaf-spine trunks) 8x slower: the DP
  // traffic, which crosses them, takes longer, and so does its exposed part; the TP traffic, which stays
  // on the Infinity Fabric mesh, is unchanged. A parsed-then-ignored file would give equal steps.
  Scratch scratch("topology-bandwidth");
  std::string slow = read_text(kDot);
  slow = std::regex_replace(slow, std::regex("kind=network, bandwidth_GBps=48,"), "kind=network, bandwidth_GBps=6,");
  slow = std::regex_replace(slow, std::regex("kind=network, bandwidth_GBps=384,"), "kind=network, bandwidth_GBps=48,");
  REQUIRE(slow != read_text(kDot));
  const std::string slow_file = scratch.write("slow.dot", slow);
  scratch.write("fast.dot", read_text(kDot));
  json doc = read_json_file(kScenario);
  const std::string scenario_name = (scratch.dir / "s.json").string();
  doc["cluster"]["topology_file"] = "fast.dot";
  const Report fast = simulate(parse_scenario(doc, scenario_name)).report;
  doc["cluster"]["topology_file"] = "slow.dot";
  const Scenario slow_scenario = parse_scenario(doc, scenario_name);
  CHECK(slow_scenario.topology_file == slow_file);
  const Report slower = simulate(slow_scenario).report;
  const auto dp = static_cast<std::size_t>(Category::dp_comm);
  const auto tp = static_cast<std::size_t>(Category::tp_comm);
  CHECK(slower.busy_s[dp] > 2 * fast.busy_s[dp]);
  CHECK(slower.step_time_s > fast.step_time_s);
  CHECK(slower.busy_s[tp] == Approx(fast.busy_s[tp]).epsilon(1e-9));
}

TEST_CASE("topology_file: a broken file is one line naming the file and the line or element", "[sim][topology_file]") {
  json doc = read_json_file(kScenario);
  const std::string file = kSource + "/scenarios/t.json";
  const std::string data = fs::path(kData).lexically_normal().string();

  // A DOT syntax error: the topology file and the token Boost's DOT reader stopped at (it reports no
  // line).
  doc["cluster"]["topology_file"] = "../tests/topologies/data/syntax_error.dot";
  auto lines = messages(doc, file);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].rfind(file + ": cluster.topology_file: " + data + "/syntax_error.dot:26: parse error: ", 0) == 0);
  CHECK(lines[0].find("(token is ") != std::string::npos);

  // A GraphML (XML) syntax error: the topology file and its line.
  {
    Scratch scratch("topology-xml");
    scratch.write("bad.graphml", "<?xml version=\"1.0\"?>\n<graphml>\n  <graph edgedefault=\"undirected\">\n    <node id=\"a\">\n  </graph>\n</graphml>\n");
    json d = doc;
    d["cluster"]["topology_file"] = "bad.graphml";
    const std::string here = (scratch.dir / "s.json").string();
    lines = messages(d, here);
    REQUIRE(lines.size() == 1);
    CHECK(std::regex_search(lines[0], std::regex("^[^ ]+/s\\.json: cluster\\.topology_file: [^ ]+/bad\\.graphml:[0-9]+: ")));
  }

  // A vertex without its kind: the element.
  doc["cluster"]["topology_file"] = "../tests/topologies/data/missing_kind.graphml";
  lines = messages(doc, file);
  REQUIRE(lines.size() == 1);
  CHECK(std::regex_match(lines[0], std::regex(std::regex_replace(file + ": cluster.topology_file: " + data, std::regex("[.]"), "\\.") +
                                              "/missing_kind\\.graphml: vertex '[^']+': missing attribute kind")));

  // A file that is not there.
  doc["cluster"]["topology_file"] = "no-such.dot";
  lines = messages(doc, file);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].rfind(file + ": cluster.topology_file: " + kSource + "/scenarios/no-such.dot", 0) == 0);
  CHECK(lines[0].find("cannot open") != std::string::npos);

  // An empty name.
  doc["cluster"]["topology_file"] = "";
  lines = messages(doc, file);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == file + ": cluster.topology_file: empty (expected the path of a GraphML or DOT file)");

  // Not a string.
  doc["cluster"]["topology_file"] = 3;
  lines = messages(doc, file);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == file + ": cluster.topology_file: expected a string, got an integer 3");
}

TEST_CASE("topology_file: counts that contradict the file and link keys beside it are refused", "[sim][topology_file]") {
  const json base = read_json_file(kScenario);
  const std::string file = kSource + "/scenarios/t.json";
  const std::string dot = fs::path(kDot).lexically_normal().string();

  json doc = base;
  doc["cluster"]["nodes"] = 8;
  auto lines = messages(doc, file);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == file + ": cluster.nodes: 8 does not match cluster.topology_file (4 nodes in " + dot + ")");

  doc = base;
  doc["cluster"]["gpus_per_node"] = 4;
  lines = messages(doc, file);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == file + ": cluster.gpus_per_node: 4 does not match cluster.topology_file (8 GPUs per node in " + dot + ")");

  doc = base;
  doc["cluster"]["inter_node"] = {{"fabric", "fat-tree"}, {"link", "ib-ndr400"}};
  lines = messages(doc, file);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == file + ": cluster.inter_node: not allowed with cluster.topology_file (the file gives every link of the cluster)");

  doc = base;
  doc["cluster"]["intra_node"] = "nvswitch";
  lines = messages(doc, file);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == file + ": cluster.intra_node: not allowed with cluster.topology_file (the file gives every link of the cluster)");

  // Without nodes and gpus_per_node the file's are taken.
  doc = base;
  doc["cluster"].erase("nodes");
  doc["cluster"].erase("gpus_per_node");
  const Scenario s = parse_scenario(doc, kScenario);
  CHECK(s.cluster.nodes == 4);
  CHECK(s.cluster.gpus_per_node == 8);
}

TEST_CASE("topology_file: --set names a file relative to the scenario and is validated like the file", "[sim][topology_file]") {
  // A scenario built from the catalog switched onto the file from the command line: the file replaces
  // the scenario's wiring (intra_node, inter_node) and counts, which the file itself would refuse beside it.
  const std::string file = kSource + "/scenarios/llama3-8b-h100x8.json";
  const Scenario s = load_scenario(file, {"cluster.topology_file=mi300x-two-racks.dot"});
  REQUIRE(s.topology != nullptr);
  CHECK(s.num_gpus() == 32);
  CHECK(s.cluster.nodes == 4);
  // Counts the command line gives are still checked against the file.
  try {
    load_scenario(file, {"cluster.topology_file=mi300x-two-racks.dot", "cluster.nodes=2"});
    FAIL("a node count that contradicts the file was accepted");
  } catch (const cs::InputError& e) {
    REQUIRE(e.messages().size() == 1);
    CHECK(e.messages()[0] == file + ": cluster.nodes: 2 does not match cluster.topology_file (4 nodes in " +
                                 fs::path(kDot).lexically_normal().string() + ") (the value given by --set cluster.nodes=2)");
  }
  try {
    load_scenario(file, {"cluster.topology_file=../tests/topologies/data/zero_bandwidth.dot"});
    FAIL("a zero bandwidth was accepted");
  } catch (const cs::InputError& e) {
    REQUIRE(e.messages().size() == 1);
    const std::string& m = e.messages()[0];
    CHECK(m.rfind(file + ": cluster.topology_file: " + fs::path(kData).lexically_normal().string() + "/zero_bandwidth.dot: edge ", 0) == 0);
    CHECK(m.find("bandwidth_GBps must be positive, got 0") != std::string::npos);
    CHECK(m.find("(the value given by --set cluster.topology_file=../tests/topologies/data/zero_bandwidth.dot)") != std::string::npos);
  }
}

// Issue 32: every legal topology shape simulates with finite, non-negative times; a slow cable beside a fast
// one never slows a collective; the file's latency_us reaches both network models.
namespace {

const std::string kRegressions = kSource + "/tests/fuzz/regressions";

// A two-layer Llama step on the file `topology` (tests/fuzz/regressions), on `network`.
Scenario on_file(const std::string& topology, const std::string& network) {
  const json doc = {{"name", "t"},
                    {"cluster", {{"gpu", "H100-SXM"}, {"topology_file", topology}}},
                    {"model", {{"preset", "llama3-8b"}, {"num_layers", 2}}},
                    {"training", {{"seq_length", 2048}, {"global_batch_size", 4}, {"micro_batch_size", 1}}},
                    {"simulation", {{"network", network}}}};
  return parse_scenario(doc, kRegressions + "/s.json");
}

// The fixture two_nodes.dot with `extra` statements added before its closing brace.
cs::topo::Cluster fixture_with(const std::string& extra) {
  std::string text = read_text(kData + "/two_nodes.dot");
  text.insert(text.rfind('}'), extra);
  return cs::topo::load_topology_text(text, "t.dot");
}

const std::vector<int> kAllFour = {0, 1, 2, 3};

}  // namespace

TEST_CASE("topology_file: one GPU per node and GPUs cabled to the leaf simulate with finite times", "[sim][topology_file]") {
  // Both aborted the analytical network at event_queue.cpp:31 (a scale-up bandwidth of 0, 0 NICs per node).
  for (const char* file : {"topology-one-gpu-per-node.dot", "topology-gpus-without-nic.dot"}) {
    for (const char* network : {"analytical", "flow"}) {
      INFO(file << " " << network);
      const Report r = simulate(on_file(file, network)).report;
      CHECK(std::isfinite(r.step_time_s));
      CHECK(r.step_time_s > 0);
      CHECK(r.step_time_s < 60);
    }
  }
}

TEST_CASE("topology_file: a slow cable beside any cable never makes a collective slower", "[sim][topology_file]") {
  // Parallel cables merge (their bandwidths add); before, ECMP put half the flows on a 0.24 GB/s cable beside
  // a 24 GB/s one and the step took 53 s instead of 1.8. Property: beside each of the fixture's 12 cables in
  // turn, a 0.5 GB/s cable of the same kind; every collective over the four GPUs, small to large, on both
  // networks, takes no longer than without it.
  const cs::topo::Cluster plain = fixture_with("");
  const std::vector<std::string> cables = {"n0g0 -- sw0", "n0g1 -- sw0", "n1g0 -- sw1", "n1g1 -- sw1", "n0g0 -- nic00", "n0g1 -- nic01",
                                           "n1g0 -- nic10", "n1g1 -- nic11", "nic00 -- leaf0", "nic01 -- leaf0", "nic10 -- leaf0", "nic11 -- leaf0"};
  for (const std::string& cable : cables) {
    const std::string kind = cable.find("sw") != std::string::npos ? "nvlink" : cable.find("leaf") != std::string::npos ? "network" : "pcie";
    const cs::topo::Cluster slow = fixture_with("  " + cable + " [kind=" + kind + ", bandwidth_GBps=0.5, latency_us=1.0];\n");
    for (const auto network : {NetworkBackend::analytical, NetworkBackend::flow}) {
      for (const auto kind_of : {cs::models::CollectiveKind::all_reduce, cs::models::CollectiveKind::all_gather,
                                 cs::models::CollectiveKind::reduce_scatter, cs::models::CollectiveKind::all_to_all}) {
        for (const double bytes : {8.0, 1e6, 1e9}) {
          CollectiveRunOptions o;
          o.network = network;
          const Time with = run_collective(slow, kind_of, bytes, kAllFour, o).time;
          const Time without = run_collective(plain, kind_of, bytes, kAllFour, o).time;
          INFO(cable << ", " << static_cast<int>(kind_of) << ", " << bytes << " B: " << with << " ps vs " << without);
          CHECK(with <= without);
        }
      }
    }
  }
}

TEST_CASE("topology_file: doubling the network cables' latency adds the closed-form time to a small collective", "[sim][topology_file]") {
  // The fixture's NIC cables at 1 us are the reference (one InfiniBand hop, nccl_model.hpp); at 2 us each
  // step across the leaf crosses two cables, 2 us more a network hop (topologies/cluster.hpp, GroupLink).
  // 4 GPUs on N = 2 nodes, k = 2 a node:
  //   LL tree all-reduce: 7 + 2 (D h_net + (k - 1) h_nv) us, D = 2: 8 us more;
  //   8-byte ring all-reduce: s = 2 (n - 1) = 6 steps, N / n = 1/2 of them across the network: 6 us more,
  //   on both networks (the transfer is the same).
  const cs::topo::Cluster ref = fixture_with("");
  std::string text = read_text(kData + "/two_nodes.dot");
  for (std::size_t at = text.find("latency_us=1.0"); at != std::string::npos; at = text.find("latency_us=1.0", at))
    text.replace(at, 14, "latency_us=2.0");
  const cs::topo::Cluster doubled = cs::topo::load_topology_text(text, "t.dot");
  auto tree_ll = [](const cs::topo::Cluster& c) {
    bool ok = false;
    const AlgorithmChoice a = estimate(cs::models::CollectiveKind::all_reduce, 8, group_geometry(c, kAllFour), NcclAlgorithm::tree, NcclProtocol::ll, &ok);
    REQUIRE(ok);
    return to_seconds(a.latency);
  };
  CHECK(tree_ll(ref) == Approx(7e-6 + 2 * (2 * 2.7e-6 + 1.4e-6)));  // the table as it is
  CHECK(tree_ll(doubled) - tree_ll(ref) == Approx(8e-6));
  for (const auto network : {NetworkBackend::analytical, NetworkBackend::flow}) {
    CollectiveRunOptions o;
    o.network = network;
    o.forced_algorithm = "ring";
    const double before = to_seconds(run_collective(ref, cs::models::CollectiveKind::all_reduce, 8, kAllFour, o).time);
    const double after = to_seconds(run_collective(doubled, cs::models::CollectiveKind::all_reduce, 8, kAllFour, o).time);
    INFO(static_cast<int>(network) << ": " << before << " s -> " << after << " s");
    CHECK(after - before == Approx(6e-6).epsilon(1e-6));
  }
}
