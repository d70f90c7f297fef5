// User topologies from GraphML and DOT: the hand-written two-node fixture in tests/topologies/data loads,
// routes and answers group_link with figures read off the file; broken files get the exact messages.
//
// The fixture: 2 nodes x 2 GPUs; per node an NVSwitch (300 GB/s per direction, 0.3 us per edge) and one
// NIC per GPU on PCIe (50 GB/s, 0 us); all four NICs on one leaf (24 GB/s, 1 us per edge).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "sim/files/input_file.hpp"
#include "topologies/cluster.hpp"
#include "topologies/topology_file.hpp"

using namespace cs::topo;

namespace {

std::string data(const std::string& name) {
  return std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/topologies/data/" + name;
}

std::string error_of(const std::string& path) {
  try {
    (void)load_topology(path);
  } catch (const cs::InputError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string error_of_text(const std::string& text) {
  try {
    (void)load_topology_text(text, "t.dot");
  } catch (const cs::InputError& e) {
    return e.what();
  }
  return "(no error)";
}

std::vector<VertexKind> kinds_along(const Cluster& c, const std::vector<int>& route) {
  std::vector<VertexKind> kinds;
  for (const int id : route) {
    kinds.push_back(c.vertices()[static_cast<std::size_t>(c.edges()[static_cast<std::size_t>(id)].dst)].kind);
  }
  return kinds;
}

void check_two_nodes(const Cluster& c) {
  using K = VertexKind;
  CHECK(c.from_file());
  CHECK(c.num_gpus() == 4);
  CHECK(c.spec().nodes == 2);
  CHECK(c.spec().gpus_per_node == 2);
  CHECK(c.spec().nics_per_node == 2);
  CHECK(c.vertices().size() == 11);
  CHECK(c.edges().size() == 24);  // 12 cables, two directions each
  for (int g = 0; g < 4; ++g) {
    CHECK(c.vertices()[static_cast<std::size_t>(g)].kind == K::gpu);
    CHECK(c.node_of_gpu(g) == g / 2);
  }
  CHECK(c.num_leaves() == 1);
  CHECK(c.connected());

  // Same node: GPU -> NVSwitch -> GPU.
  const std::vector<int> intra = c.route(0, 1, 0);
  REQUIRE(intra.size() == 2);
  CHECK(kinds_along(c, intra) == std::vector<K>{K::nvswitch, K::gpu});
  for (const int id : intra) CHECK(c.edges()[static_cast<std::size_t>(id)].kind == EdgeKind::nvlink);

  // Across: GPU -> NIC -> leaf -> NIC -> GPU (never through the other GPU of the node).
  const std::vector<int> inter = c.route(1, 2, 0);
  REQUIRE(inter.size() == 4);
  CHECK(kinds_along(c, inter) == std::vector<K>{K::nic, K::leaf, K::nic, K::gpu});
  CHECK(c.edges()[static_cast<std::size_t>(inter[0])].src == 1);
  CHECK(c.edges()[static_cast<std::size_t>(inter[3])].dst == 2);
  CHECK(c.edges()[static_cast<std::size_t>(inter[1])].bandwidth_Bps == Approx(24e9));
  CHECK(c.edges()[static_cast<std::size_t>(inter[1])].latency_s == Approx(1e-6));
  CHECK(c.route(1, 2, 0) == c.route(1, 2, 0));

  // group_link: ring 0 -> 1 -> 0 inside node 0 is NVLink only: 300 GB/s, 2 x 0.3 us.
  const std::vector<int> node0 = {0, 1};
  const GroupLink n = c.group_link(node0);
  CHECK(n.span == Span::node);
  CHECK(n.bus_bandwidth_Bps == Approx(300e9));
  CHECK(n.step_latency_s == Approx(0.6e-6));
  CHECK(c.spec().intra.gpu_bandwidth_GBps == Approx(300.0));
  // Ring 0 -> 1 -> 2 -> 3 -> 0: pairs (1,2) and (3,0) cross the leaf, bottleneck 24 GB/s (NIC link);
  // their latency is 0 + 1 + 1 + 0 us = 2 us, above the NVLink pairs' 0.6 us.
  const std::vector<int> all = {3, 1, 0, 2};
  const GroupLink a = c.group_link(all);
  CHECK(a.level == 0);  // leaf
  CHECK(a.bus_bandwidth_Bps == Approx(24e9));
  CHECK(a.step_latency_s == Approx(2e-6));
}

}  // namespace

TEST_CASE("GraphML fixture loads, routes and gives group_link from the file's figures", "[topologies]") {
  const Cluster c = load_topology(data("two_nodes.graphml"));
  check_two_nodes(c);
}

TEST_CASE("the DOT equivalent loads to the same cluster", "[topologies]") {
  const Cluster dot = load_topology(data("two_nodes.dot"));
  check_two_nodes(dot);
  const Cluster xml = load_topology(data("two_nodes.graphml"));
  REQUIRE(dot.edges().size() == xml.edges().size());
  for (std::size_t i = 0; i < dot.edges().size(); ++i) {
    CHECK(dot.edges()[i].src == xml.edges()[i].src);
    CHECK(dot.edges()[i].dst == xml.edges()[i].dst);
    CHECK(dot.edges()[i].bandwidth_Bps == xml.edges()[i].bandwidth_Bps);
  }
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) CHECK(dot.route(a, b, 11) == xml.route(a, b, 11));
  }
}

TEST_CASE("broken topology files get exact errors naming the file and the place", "[topologies]") {
  const std::string missing = data("missing_kind.graphml");
  CHECK(error_of(missing) == missing + ": vertex 'leaf0': missing attribute kind");

  // NIC 1 of node 1 has no cable to the leaf; GPUs do not forward, so GPU 3 is cut off from node 0.
  const std::string cut = data("disconnected.graphml");
  CHECK(error_of(cut) == cut + ": graph is not connected: GPUs 0 and 3 cannot reach each other");

  const std::string zero = data("zero_bandwidth.dot");
  CHECK(error_of(zero) == zero + ": edge 'nic10' -- 'leaf0': bandwidth_GBps must be positive, got 0");

  const std::string syntax = data("syntax_error.dot");
  // Boost's reader names the token, not its line; the loader finds the line (the 26th holds `leaf0 -- [`).
  CHECK_THAT(error_of(syntax), Catch::StartsWith(syntax + ":26: parse error: "));

  CHECK(error_of(data("nope.graphml")) == data("nope.graphml") + ": cannot open the file");
}

TEST_CASE("topology text: every problem is reported, each in one line", "[topologies]") {
  SECTION("XML syntax errors carry the line") {
    const std::string xml = "<?xml version=\"1.0\"?>\n<graphml>\n<graph edgedefault=\"undirected\">\n<node id=\"a\">\n</graph>\n";
    try {
      (void)load_topology_text(xml, "x.graphml");
      FAIL("no error");
    } catch (const cs::InputError& e) {
      CHECK_THAT(std::string(e.what()), Catch::StartsWith("x.graphml:6: parse error: "));
    }
  }
  SECTION("DOT syntax errors carry the line of the bad token") {
    // Line 4 has an edge with no target; the brace inside line 2's quoted label must not count as open.
    const std::string text = "graph g {\n  a [kind=gpu, label=\"{x\"];\n  b [kind=gpu];\n  a -- ;\n  c [kind=gpu];\n}\n";
    CHECK_THAT(error_of_text(text), Catch::StartsWith("t.dot:4: parse error: "));
    // Inside a subgraph, on line 3.
    CHECK_THAT(error_of_text("graph g {\n subgraph s {\n  a -- -- b;\n }\n}\n"), Catch::StartsWith("t.dot:3: parse error: "));
    // A file that ends inside the graph has no bad line to name: the message alone.
    CHECK_THAT(error_of_text("graph g {\n  a [kind=gpu];\n"), Catch::StartsWith("t.dot: parse error: "));
  }
  SECTION("no GPUs") {
    CHECK(error_of_text("graph g { a [kind=leaf]; }") == "t.dot: no GPUs (no vertex has kind gpu)");
  }
  SECTION("unknown kinds, a missing node, a typo and a negative latency, all together") {
    const std::string text =
        "graph g {\n"
        "  a [kind=gpu, \"node\"=0];\n"
        "  b [kind=gpu];\n"
        "  s [kind=router];\n"
        "  a -- s [kind=nvlink, bandwith_GBps=10, latency_us=1];\n"
        "  b -- s [kind=infiniband, bandwidth_GBps=10, latency_us=-1];\n"
        "}\n";
    CHECK(error_of_text(text) ==
          "t.dot: vertex 'b': missing attribute node\n"
          "t.dot: vertex 's': unknown kind 'router' (expected one of: gpu, nvswitch, pcie_switch, nic, leaf, "
          "spine, core)\n"
          "t.dot: edge 'a' -- 's': missing attribute bandwidth_GBps\n"
          "t.dot: edge 'a' -- 's': unknown attribute 'bandwith_GBps' (did you mean 'bandwidth_GBps'?)\n"
          "t.dot: edge 'b' -- 's': unknown kind 'infiniband' (expected one of: nvlink, pcie, network)\n"
          "t.dot: edge 'b' -- 's': latency_us must be a non-negative number, got -1");
  }
  SECTION("typos of known attributes, any case; a bad node number") {
    const std::string text =
        "graph g { a [Kind=gpu, \"node\"=0]; b [kind=gpu, \"node\"=1.5]; s [kind=leaf, link=x];\n"
        "  a -- s [kind=network, bandwidth_gbps=1, latency_us=0]; }";
    CHECK(error_of_text(text) ==
          "t.dot: vertex 'a': missing attribute kind\n"
          "t.dot: vertex 'a': unknown attribute 'Kind' (did you mean 'kind'?)\n"
          "t.dot: vertex 'b': node must be a non-negative integer, got '1.5'\n"
          "t.dot: edge 'a' -- 's': missing attribute bandwidth_GBps\n"
          "t.dot: edge 'a' -- 's': unknown attribute 'bandwidth_gbps' (did you mean 'bandwidth_GBps'?)");
  }
  SECTION("nodes must hold equal GPU counts") {
    const std::string text =
        "graph g { a [kind=gpu, \"node\"=0]; b [kind=gpu, \"node\"=1]; c [kind=gpu, \"node\"=1]; s [kind=leaf];\n"
        "  a -- s [kind=network, bandwidth_GBps=1, latency_us=0]; b -- s [kind=network, bandwidth_GBps=1, latency_us=0];\n"
        "  c -- s [kind=network, bandwidth_GBps=1, latency_us=0]; }";
    CHECK(error_of_text(text) ==
          "t.dot: node 1 has 2 GPUs, node 0 has 1 (every node needs the same number of GPUs)");
  }
  SECTION("directed graphs: one edge is one direction") {
    const std::string one_way =
        "digraph g { a [kind=gpu, \"node\"=0]; b [kind=gpu, \"node\"=0]; s [kind=nvswitch];\n"
        "  a -> s [kind=nvlink, bandwidth_GBps=100, latency_us=0.5]; s -> b [kind=nvlink, bandwidth_GBps=100, latency_us=0.5]; }";
    CHECK(error_of_text(one_way) == "t.dot: graph is not connected: GPUs 0 and 1 cannot reach each other");
    const std::string both_ways =
        "digraph g { a [kind=gpu, \"node\"=0]; b [kind=gpu, \"node\"=0]; s [kind=nvswitch];\n"
        "  a -> s [kind=nvlink, bandwidth_GBps=100, latency_us=0.5]; s -> b [kind=nvlink, bandwidth_GBps=100, latency_us=0.5];\n"
        "  b -> s [kind=nvlink, bandwidth_GBps=50, latency_us=0.5]; s -> a [kind=nvlink, bandwidth_GBps=50, latency_us=0.5]; }";
    const Cluster c = load_topology_text(both_ways, "t.dot");
    CHECK(c.edges().size() == 4);
    CHECK(c.route(0, 1, 0).size() == 2);
    const std::vector<int> pair = {0, 1};
    CHECK(c.group_link(pair).bus_bandwidth_Bps == Approx(50e9));  // the slower direction of the ring
  }
  SECTION("ECMP over parallel paths in a loaded graph spreads and is deterministic") {
    // Two GPUs on two nodes, each NIC cabled to two leaves: two equal paths.
    const std::string text =
        "graph g { a [kind=gpu, \"node\"=0]; b [kind=gpu, \"node\"=1]; na [kind=nic]; nb [kind=nic];\n"
        "  l0 [kind=leaf]; l1 [kind=leaf];\n"
        "  a -- na [kind=pcie, bandwidth_GBps=50, latency_us=0]; b -- nb [kind=pcie, bandwidth_GBps=50, latency_us=0];\n"
        "  na -- l0 [kind=network, bandwidth_GBps=10, latency_us=1]; na -- l1 [kind=network, bandwidth_GBps=10, latency_us=1];\n"
        "  nb -- l0 [kind=network, bandwidth_GBps=10, latency_us=1]; nb -- l1 [kind=network, bandwidth_GBps=10, latency_us=1]; }";
    const Cluster c = load_topology_text(text, "t.dot");
    int via_l0 = 0;
    for (std::uint64_t f = 0; f < 1000; ++f) {
      const std::vector<int> r = c.route(0, 1, f);
      REQUIRE(r.size() == 4);
      const int leaf = c.edges()[static_cast<std::size_t>(r[1])].dst;
      via_l0 += c.vertices()[static_cast<std::size_t>(leaf)].index == 0 ? 1 : 0;
      CHECK(c.route(0, 1, f) == r);
    }
    CHECK(via_l0 >= 350);
    CHECK(via_l0 <= 650);
  }
}

// Input limits of the readers (issue 13, class 10): numbers in scientific notation, nesting, size.
TEST_CASE("DOT: unquoted numbers in scientific notation are read whole", "[topologies]") {
  // DOT's numerals have no exponent, and Boost's reader cut "3e2" at the 'e' (bandwidth 3 GB/s). The file's
  // 3e2 GB/s must be 300 GB/s, 5E-1 us 0.5 us and 1.5e+1 GB/s 15 GB/s, in attribute values and quoted or not.
  const std::string text =
      "graph g { a [kind=gpu, \"node\"=0]; b [kind=gpu, \"node\"=0]; s [kind=nvswitch];\n"
      "  a -- s [kind=nvlink, bandwidth_GBps=3e2, latency_us=5E-1];\n"
      "  b -- s [kind=nvlink, bandwidth_GBps=1.5e+1, latency_us=\"2e0\"]; }";
  const Cluster c = load_topology_text(text, "t.dot");
  REQUIRE(c.edges().size() == 4);
  CHECK(c.edges()[0].bandwidth_Bps == Approx(300e9));
  CHECK(c.edges()[0].latency_s == Approx(0.5e-6));
  CHECK(c.edges()[2].bandwidth_Bps == Approx(15e9));
  CHECK(c.edges()[2].latency_s == Approx(2e-6));
  // A number too large for a double is an error naming the edge, not 1.
  const std::string huge =
      "graph g { a [kind=gpu, \"node\"=0]; b [kind=gpu, \"node\"=0];\n"
      "  a -- b [kind=nvlink, bandwidth_GBps=1e999, latency_us=0]; }";
  CHECK(error_of_text(huge) == "t.dot: edge 'a' -- 'b': bandwidth_GBps must be positive, got 1e999");
}

TEST_CASE("DOT: subgraphs nested 10^4 deep are an input error at 256 levels", "[topologies]") {
  std::string text = "graph g {\n";
  for (int i = 0; i < 10000; ++i) {
    text += "subgraph s";  // appended piecewise: GCC 12 -O3 warns (-Wrestrict) falsely on "s" + to_string
    text += std::to_string(i);
    text += " {\n";
  }
  text += "a [kind=gpu, \"node\"=0];\n";
  for (int i = 0; i < 10000; ++i) text += "}\n";
  text += "}\n";
  // Line 1 opens the graph (level 1); line 257 opens the 257th level.
  CHECK(error_of_text(text) == "t.dot:257: nesting deeper than 256 levels (subgraphs or attribute lists)");
}

TEST_CASE("GraphML: elements nested 10^5 deep are an input error at 256 levels", "[topologies]") {
  std::string text = "<?xml version=\"1.0\"?>\n<graphml>\n<graph edgedefault=\"undirected\">\n";
  for (int i = 0; i < 100000; ++i) {
    text += "<node id=\"n";
    text += std::to_string(i);
    text += "\">\n";
  }
  for (int i = 0; i < 100000; ++i) text += "</node>\n";
  text += "</graph>\n</graphml>\n";
  std::string error;
  try {
    (void)load_topology_text(text, "x.graphml");
  } catch (const cs::InputError& e) {
    error = e.what();
  }
  // graphml (line 2) is level 1, graph level 2, the 254th <node> (line 257) level 256, the next one 257.
  CHECK(error == "x.graphml:258: nesting deeper than 256 levels of XML elements");
}

TEST_CASE("a topology of 5x10^4 GPUs is refused by the route table's size, not allocated", "[topologies]") {
  // 50000 GPUs around one NVSwitch: 50001 vertices; the router's table holds a 4-byte hop count per GPU and
  // vertex, 50000 x 50001 x 4 B = 9.3 GiB, over the 2 GiB limit.
  std::string text = "graph g { s [kind=nvswitch];\n";
  for (int i = 0; i < 50000; ++i) {
    std::string g = "g";
    g += std::to_string(i);
    text += g + " [kind=gpu, \"node\"=0]; " + g + " -- s [kind=nvlink, bandwidth_GBps=100, latency_us=0.5];\n";
  }
  text += "}\n";
  CHECK(error_of_text(text) ==
        "t.dot: 50000 GPUs and 50001 vertices: the route table (a hop count per GPU and vertex) would take 9.3 GiB, "
        "over the 2 GiB limit");
}

// Issue 32: every number of a topology file that reaches the engine is bounded, and every legal shape gives
// positive, finite figures. The reproducers live in tests/fuzz/regressions.
namespace {

std::string regression(const std::string& name) {
  return std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/fuzz/regressions/" + name;
}

std::string read_file(const std::string& path) {
  return cs::files::read_input_file(path, cs::files::kMaxTopologyBytes, "topology file", "cannot open the file");
}

}  // namespace

TEST_CASE("topology file: a bandwidth outside 1 MB/s to 100 TB/s is refused naming the edge", "[topologies]") {
  // 1e-30 GB/s made a gradient all-reduce last 10^30 s and 1e308 GB/s is infinite in B/s: both aborted the
  // analytical network at event_queue.cpp:31.
  const std::string tiny = regression("topology-bandwidth-1e-30.dot");
  CHECK(error_of(tiny) == tiny + ": edge 'nic00' -- 'leaf0': bandwidth_GBps must be between 0.001 (1 MB/s) and 100000 (100 TB/s), got 1e-30");
  const std::string huge = regression("topology-bandwidth-1e308.dot");
  CHECK(error_of(huge) == huge + ": edge 'nic00' -- 'leaf0': bandwidth_GBps must be between 0.001 (1 MB/s) and 100000 (100 TB/s), got 1e308");
  // The bounds themselves are legal.
  const std::string edge_cases =
      "graph g { a [kind=gpu, \"node\"=0]; b [kind=gpu, \"node\"=0];\n"
      "  a -- b [kind=nvlink, bandwidth_GBps=0.001, latency_us=1e6]; a -- b [kind=nvlink, bandwidth_GBps=1e5, latency_us=0]; }";
  CHECK_NOTHROW(load_topology_text(edge_cases, "t.dot"));
}

TEST_CASE("topology file: a latency over 1 s is refused naming the edge", "[topologies]") {
  const std::string slow = regression("topology-latency-1e300.dot");
  CHECK(error_of(slow) == slow + ": edge 'nic00' -- 'leaf0': latency_us must be at most 1000000 (1 s), got 1e300");
}

TEST_CASE("topology file: parallel cables are one link of their summed bandwidth and smallest latency", "[topologies]") {
  // As NCCL aggregates parallel links (src/graph/topo.cc, ncclTopoConnectNodes): 100 + 1 GB/s, the faster
  // cable's kind, the smaller latency; each direction merged on its own, edge ids as if one cable.
  const std::string text =
      "graph g { a [kind=gpu, \"node\"=0]; b [kind=gpu, \"node\"=0];\n"
      "  a -- b [kind=pcie, bandwidth_GBps=1, latency_us=0.5];\n"
      "  a -- b [kind=nvlink, bandwidth_GBps=100, latency_us=2]; }";
  const Cluster c = load_topology_text(text, "t.dot");
  REQUIRE(c.edges().size() == 2);
  for (const Edge& e : c.edges()) {
    CHECK(e.bandwidth_Bps == Approx(101e9));
    CHECK(e.latency_s == Approx(0.5e-6));
    CHECK(e.kind == EdgeKind::nvlink);
  }
  CHECK(c.edges()[0].src == 0);
  CHECK(c.edges()[1].src == 1);
  const std::vector<int> pair = {0, 1};
  CHECK(c.group_link(pair).bus_bandwidth_Bps == Approx(101e9));
  // The slow cables beside the fixture's NIC cables: the same graph, every NIC link 24.24 GB/s.
  const Cluster slow = load_topology(regression("topology-parallel-slow-cable.dot"));
  const Cluster plain = load_topology(data("two_nodes.dot"));
  REQUIRE(slow.edges().size() == plain.edges().size());
  for (std::size_t i = 0; i < slow.edges().size(); ++i) {
    const double extra = plain.edges()[i].kind == EdgeKind::network ? 0.24e9 : 0.0;
    CHECK(slow.edges()[i].bandwidth_Bps == Approx(plain.edges()[i].bandwidth_Bps + extra));
  }
}

TEST_CASE("topology file: one GPU per node and GPUs cabled to the leaf give positive summary figures", "[topologies]") {
  // Both made a 0 the NCCL model divides by (a 1-GPU node's scale-up bandwidth, 0 NICs per node).
  const Cluster one = load_topology(regression("topology-one-gpu-per-node.dot"));
  CHECK(one.spec().gpus_per_node == 1);
  CHECK(one.spec().intra.gpu_bandwidth_GBps == Approx(50.0));  // GPU 0's widest link, its PCIe
  CHECK(one.spec().nics_per_node == 1);
  CHECK(one.spec().nic.payload_GBps() == Approx(24.0));
  const Cluster bare = load_topology(regression("topology-gpus-without-nic.dot"));
  CHECK(bare.spec().nics_per_node == 2);  // each GPU is its own network port
  CHECK(bare.spec().nic.payload_GBps() == Approx(24.0));
  CHECK(bare.spec().intra.gpu_bandwidth_GBps > 0);
  // Nodes joined by NVLink only (no network edge): the slowest edge out of a node stands for the NIC.
  const std::string nvlink_only =
      "graph g { a [kind=gpu, \"node\"=0]; b [kind=gpu, \"node\"=1]; s [kind=nvswitch];\n"
      "  a -- s [kind=nvlink, bandwidth_GBps=400, latency_us=0.3]; b -- s [kind=nvlink, bandwidth_GBps=300, latency_us=0.3]; }";
  const Cluster nv = load_topology_text(nvlink_only, "t.dot");
  CHECK(nv.spec().nics_per_node == 1);
  CHECK(nv.spec().nic.payload_GBps() == Approx(300.0));
}

TEST_CASE("topology file: latencies over the catalog's reference hops become the NCCL model's hop extras", "[topologies]") {
  // The fixture is at the reference (0.3 + 0.3 us from GPU to GPU in a node, 1 us a network edge, 0 on
  // PCIe): no extra. Network edges at 2 us: a step across the leaf crosses two, 2 us more.
  const Cluster ref = load_topology(data("two_nodes.dot"));
  const std::vector<int> all = {0, 1, 2, 3};
  CHECK(ref.group_link(all).network_hop_extra_s == 0.0);
  CHECK(ref.group_link(all).scaleup_hop_extra_s == 0.0);
  std::string text = read_file(data("two_nodes.dot"));
  for (std::size_t at = text.find("latency_us=1.0"); at != std::string::npos; at = text.find("latency_us=1.0", at))
    text.replace(at, 14, "latency_us=2.0");
  for (std::size_t at = text.find("latency_us=0.3"); at != std::string::npos; at = text.find("latency_us=0.3", at))
    text.replace(at, 14, "latency_us=0.8");
  const Cluster slow = load_topology_text(text, "t.dot");
  CHECK(slow.group_link(all).network_hop_extra_s == Approx(2e-6));
  CHECK(slow.group_link(all).scaleup_hop_extra_s == Approx(1e-6));  // 0.8 + 0.8 - 0.6 us
  const std::vector<int> node0 = {0, 1};
  CHECK(slow.group_link(node0).network_hop_extra_s == 0.0);  // no pair crosses the network
  // Zero latencies: at most one reference step faster (-0.6 us in a node, -1 us across).
  text = read_file(data("two_nodes.dot"));
  for (const char* l : {"latency_us=1.0", "latency_us=0.3"})
    for (std::size_t at = text.find(l); at != std::string::npos; at = text.find(l, at)) text.replace(at, 14, "latency_us=000");
  const Cluster fast = load_topology_text(text, "t.dot");
  CHECK(fast.group_link(all).network_hop_extra_s == Approx(-1e-6));
  CHECK(fast.group_link(all).scaleup_hop_extra_s == Approx(-0.6e-6));
}
