#pragma once
// A user topology from a GraphML or Graphviz DOT file, read with Boost.Graph's readers.
//
// Format (both syntaxes; an undirected graph's edge is a cable, two directed edges of the same figures;
// a directed graph's edge is one direction only):
//   vertex attributes: kind  = gpu | nvswitch | pcie_switch | nic | leaf | spine | core   (required)
//                      node  = non-negative integer, the node a GPU sits in (required on GPUs, optional
//                              elsewhere); nodes are numbered 0..N-1 and hold the same number of GPUs.
//                              `node` is a DOT keyword, so DOT files quote it: n0g0 [kind=gpu, "node"=0]
//   edge attributes:   kind           = nvlink | pcie | network                          (required)
//                      bandwidth_GBps = payload bandwidth per direction, GB/s, in [0.001, 1e5]  (required)
//                      latency_us     = latency of this edge, microseconds, in [0, 1e6]       (required)
// Parallel edges (same two vertices, same direction) are one link: bandwidths summed, the smallest latency,
// the widest one's kind (topology_file.cpp, add_link). Why the bounds: topology_file.cpp.
// bandwidth_GBps is what a flow gets on an idle link: give line rate x achievable efficiency (the link
// catalog's figures, link_catalog.hpp, are a guide). GraphML keys may be declared with any attr.type
// (string, double, int...); values are checked here. Other attributes are ignored (labels, colours),
// except one that looks like a typo of a known name (one edit from kind/node, two from the longer
// names, case ignored), which is reported with the name it resembles.
//
// GPUs are numbered node by node (node 0's GPUs first), by vertex id within a node in natural order
// (gpu2 before gpu10); the cluster's vertices are the GPUs first (vertex id == GPU number), then the
// other vertices by id; edges follow their endpoints' new numbers, each cable's reverse right after it.
// The same graph in GraphML and in DOT gives the same cluster, edge ids included.
// Routing: fewest hops, GPUs never transit, ECMP by flow id (cluster.hpp).
// Numbers: DOT numerals may be written in scientific notation unquoted (bandwidth_GBps=3e2 is 300), which
// the DOT grammar lacks and Boost's reader would cut at the 'e'. Limits (input errors, not crashes):
// nesting deeper than 256 levels (DOT braces and brackets, GraphML elements), and a graph whose route table
// (a 4-byte hop count per GPU and vertex) would pass 2 GiB (about 2 x 10^4 GPUs).
//
// Every problem is collected and reported together; each message is "FILE: where: what", e.g.
//   two_nodes.graphml: vertex 'leaf0': missing attribute kind
//   two_nodes.dot: edge 'nic0' -- 'leaf0': bandwidth_GBps must be positive, got 0
//   two_nodes.graphml: graph is not connected: GPUs 0 and 3 cannot reach each other
//   two_nodes.graphml:12: parse error: expected element name       (XML syntax errors carry the line)
#include <stdexcept>
#include <string>
#include <vector>

#include "topologies/cluster.hpp"
#include "sim/base/input_error.hpp"

namespace cs::topo {

// Reads the file at `path`: GraphML when its first non-blank character is '<', else DOT. Throws
// InputError naming `path`.
Cluster load_topology(const std::string& path);

// The same from text already in memory; `source_name` stands for the file name in messages.
Cluster load_topology_text(const std::string& text, const std::string& source_name);

}  // namespace cs::topo
