// Topology file reader (format in topology_file.hpp).
//
// Both Boost readers fill a dynamic_properties. Rather than registering one typed property map per
// expected attribute (which makes the GraphML reader throw bad_any_cast when a key is declared with
// another attr.type, and the DOT reader throw on any attribute not registered), the dynamic_properties
// gets a generator: every attribute the file mentions becomes a string in the vertex's or edge's bundle,
// and this file validates them with messages that name the vertex or edge. The GraphML reader does not
// report vertex ids, so they are read again from the XML (property_tree, the reader's own parser) in the
// reader's order: <node> elements of the first graph, then ids first seen in <edge> elements.
#include "topologies/topology_file.hpp"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/graphml.hpp>
#include <boost/graph/graphviz.hpp>
#include <boost/property_map/dynamic_property_map.hpp>
#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <type_traits>
#include <utility>

#include "sim/files/file_error.hpp"
#include "sim/files/input_file.hpp"

namespace cs::topo {
namespace {

struct RawItem {
  std::map<std::string, std::string> attrs;
};

template <class Directed>
using RawGraph = boost::adjacency_list<boost::vecS, boost::vecS, Directed, RawItem, RawItem>;

std::string any_to_text(const boost::any& value) {
  if (value.type() == typeid(std::string)) return boost::any_cast<std::string>(value);
  std::ostringstream os;
  os << std::setprecision(17);
  if (value.type() == typeid(double)) {
    os << boost::any_cast<double>(value);
  } else if (value.type() == typeid(float)) {
    os << boost::any_cast<float>(value);
  } else if (value.type() == typeid(int)) {
    os << boost::any_cast<int>(value);
  } else if (value.type() == typeid(long)) {
    os << boost::any_cast<long>(value);
  } else if (value.type() == typeid(bool)) {
    os << (boost::any_cast<bool>(value) ? "true" : "false");
  } else {
    return "?";
  }
  return os.str();
}

// Stores attribute `name` as text in the bundle of the vertex or edge `Key` names.
template <class G, class Key>
class AttrMap : public boost::dynamic_property_map {
 public:
  AttrMap(G* g, std::string name) : g_(g), name_(std::move(name)) {}
  boost::any get(const boost::any& key) override { return get_string(key); }
  std::string get_string(const boost::any& key) override {
    const auto& attrs = (*g_)[boost::any_cast<Key>(key)].attrs;
    const auto it = attrs.find(name_);
    return it == attrs.end() ? std::string() : it->second;
  }
  void put(const boost::any& key, const boost::any& value) override {
    (*g_)[boost::any_cast<Key>(key)].attrs[name_] = any_to_text(value);
  }
  const std::type_info& key() const override { return typeid(Key); }
  const std::type_info& value() const override { return typeid(std::string); }

 private:
  G* g_;
  std::string name_;
};

// Graph-level attributes (a DOT `rankdir`, a GraphML graph key) mean nothing here.
class IgnoreMap : public boost::dynamic_property_map {
 public:
  explicit IgnoreMap(const std::type_info& key_type) : key_(key_type) {}
  boost::any get(const boost::any&) override { return std::string(); }
  std::string get_string(const boost::any&) override { return {}; }
  void put(const boost::any&, const boost::any&) override {}
  const std::type_info& key() const override { return key_; }
  const std::type_info& value() const override { return typeid(std::string); }

 private:
  const std::type_info& key_;
};

template <class G>
boost::dynamic_properties collecting_properties(G& g) {
  using VD = typename boost::graph_traits<G>::vertex_descriptor;
  using ED = typename boost::graph_traits<G>::edge_descriptor;
  return boost::dynamic_properties(
      [&g](const std::string& name, const boost::any& key,
           const boost::any&) -> boost::shared_ptr<boost::dynamic_property_map> {
        if (key.type() == typeid(VD)) return boost::shared_ptr<boost::dynamic_property_map>(new AttrMap<G, VD>(&g, name));
        if (key.type() == typeid(ED)) return boost::shared_ptr<boost::dynamic_property_map>(new AttrMap<G, ED>(&g, name));
        return boost::shared_ptr<boost::dynamic_property_map>(new IgnoreMap(key.type()));
      });
}


// Nesting deeper than this (DOT braces, XML elements) is refused before Boost's recursive-descent readers
// see it: 10^4 nested DOT subgraphs or 10^5 nested GraphML elements overflowed the stack. A real topology
// nests a few levels (graphml > graph > node > data; a subgraph per node and rack).
constexpr int kMaxNesting = 256;
// The router keeps a hop distance per (GPU, vertex) pair (routing.cpp, Cluster::from_graph): 4 bytes each.
// Past this table size the file is refused instead of asking for tens of GB (5 x 10^4 GPUs: 15 GB).
constexpr double kMaxRouteTableBytes = 2.0 * 1073741824.0;
// What a link may carry, per direction, GB/s: from 1 MB/s (10 Mb/s Ethernet moves 1.25 MB/s; anything slower
// is no training interconnect) to 100 TB/s (a GB200 NVL72 domain's whole NVLink fabric is 130 TB/s over 72
// GPUs, one GPU's NVLink 5 0.9 TB/s; a trunk of a thousand 400G cables written as one edge is 48 TB/s).
// Outside it the engine's integer picoseconds overflow or lose the transfer (1e-30 GB/s made a gradient
// all-reduce last 10^30 s; 1e308 GB/s is infinite bytes per second once in B/s).
constexpr double kMinBandwidthGBps = 1e-3;
constexpr double kMaxBandwidthGBps = 1e5;
// A link's latency, us: 0 up to 1 s (10^6 us), a thousand times a cross-continent fibre's.
constexpr double kMaxLatencyUs = 1e6;

int line_at(const std::string& text, std::size_t pos) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(std::min(pos, text.size())), '\n'));
}

bool id_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || static_cast<unsigned char>(c) >= 128; }

// DOT: the nesting depth of braces and brackets is checked, and unquoted numerals in scientific notation
// (3e2, 1.5E-3), which the DOT grammar does not have and Boost's reader cut at the 'e' (3e2 read as 3), are
// quoted so that they reach the attribute checks whole. Strings, comments and HTML labels are copied as
// they are. Throws InputError naming the line of a too-deep nesting.
std::string prepare_dot(const std::string& text, const std::string& file) {
  std::string out;
  out.reserve(text.size() + 16);
  int depth = 0;
  const std::size_t n = text.size();
  std::size_t i = 0;
  auto copy_until = [&](std::size_t end) {
    out.append(text, i, end - i);
    i = end;
  };
  while (i < n) {
    const char c = text[i];
    if (c == '"') {  // quoted string, with \" escapes
      std::size_t j = i + 1;
      while (j < n && text[j] != '"') j += text[j] == '\\' ? 2 : 1;
      copy_until(std::min(n, j + 1));
    } else if (c == '/' && i + 1 < n && text[i + 1] == '/') {
      copy_until(std::min(n, text.find('\n', i) == std::string::npos ? n : text.find('\n', i)));
    } else if (c == '#' && (i == 0 || text[i - 1] == '\n')) {
      copy_until(text.find('\n', i) == std::string::npos ? n : text.find('\n', i));
    } else if (c == '/' && i + 1 < n && text[i + 1] == '*') {
      const std::size_t end = text.find("*/", i + 2);
      copy_until(end == std::string::npos ? n : end + 2);
    } else if (c == '<') {  // HTML label: balanced angle brackets
      std::size_t j = i, level = 0;
      do {
        if (text[j] == '<') ++level;
        else if (text[j] == '>') --level;
        ++j;
      } while (j < n && level > 0);
      copy_until(j);
    } else if (c == '{' || c == '[') {
      if (++depth > kMaxNesting)
        throw InputError({file + ":" + std::to_string(line_at(text, i)) + ": nesting deeper than " +
                             std::to_string(kMaxNesting) + " levels (subgraphs or attribute lists)"});
      out += c;
      ++i;
    } else if (c == '}' || c == ']') {
      --depth;
      out += c;
      ++i;
    } else if (id_char(c) || c == '-') {
      // One token: an identifier, a numeral, or an edge operator's '-'.
      std::size_t j = i;
      if (c == '-') {
        if (i + 1 < n && (text[i + 1] == '-' || text[i + 1] == '>')) {
          copy_until(i + 2);
          continue;
        }
        ++j;
      }
      while (j < n && id_char(text[j])) ++j;
      const std::string_view token(text.data() + i, j - i);
      // Numeral with an exponent: digits (with a '.'), 'e' or 'E', maybe a sign, digits.
      bool sci = false;
      std::size_t k = c == '-' ? 1 : 0;
      std::size_t digits = 0;
      while (k < token.size() && (std::isdigit(static_cast<unsigned char>(token[k])) || token[k] == '.')) digits += token[k++] != '.';
      if (digits > 0 && k < token.size() && (token[k] == 'e' || token[k] == 'E')) {
        std::size_t m = k + 1;
        // The sign sits outside the token (id_char has no '+'/'-'): take it and the digits after it.
        if (m == token.size() && j < n && (text[j] == '+' || text[j] == '-') && j + 1 < n && std::isdigit(static_cast<unsigned char>(text[j + 1]))) {
          ++j;
          while (j < n && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
          sci = j >= n || !id_char(text[j]);
        } else {
          std::size_t exp_digits = 0;
          while (m < token.size() && std::isdigit(static_cast<unsigned char>(token[m]))) ++m, ++exp_digits;
          sci = exp_digits > 0 && m == token.size();
        }
      }
      if (sci) {
        out += '"';
        out.append(text, i, j - i);
        out += '"';
        i = j;
      } else {
        copy_until(i + token.size());
      }
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

// GraphML: the element nesting depth, before the XML readers (both recursive) see the text.
void check_xml_depth(const std::string& text, const std::string& file) {
  int depth = 0;
  const std::size_t n = text.size();
  std::size_t i = text.find('<');
  while (i != std::string::npos && i < n) {
    std::size_t end;
    if (text.compare(i, 4, "<!--") == 0) {
      end = text.find("-->", i + 4);
      end = end == std::string::npos ? n : end + 3;
    } else if (text.compare(i, 9, "<![CDATA[") == 0) {
      end = text.find("]]>", i + 9);
      end = end == std::string::npos ? n : end + 3;
    } else if (text.compare(i, 2, "<?") == 0 || text.compare(i, 2, "<!") == 0) {
      end = text.find('>', i);
      end = end == std::string::npos ? n : end + 1;
    } else if (text.compare(i, 2, "</") == 0) {
      --depth;
      end = text.find('>', i);
      end = end == std::string::npos ? n : end + 1;
    } else {  // an opening tag, attribute values quoted with ' or "
      std::size_t j = i + 1;
      char quote = 0;
      while (j < n && (quote || text[j] != '>')) {
        if (quote ? text[j] == quote : (text[j] == '"' || text[j] == '\'')) quote = quote ? 0 : text[j];
        ++j;
      }
      const bool self_closing = j < n && text[j - 1] == '/';
      if (!self_closing && ++depth > kMaxNesting)
        throw InputError({file + ":" + std::to_string(line_at(text, i)) + ": nesting deeper than " +
                             std::to_string(kMaxNesting) + " levels of XML elements"});
      end = j < n ? j + 1 : n;
    }
    i = text.find('<', end);
  }
}

enum class Syntax { graphml, dot };

// Reads `text` into g; false when the file's directedness is the other one.
template <class G>
bool try_read(const std::string& text, Syntax syntax, G& g) {
  std::istringstream in(text);
  boost::dynamic_properties dp = collecting_properties(g);
  try {
    if (syntax == Syntax::graphml) {
      boost::read_graphml(in, g, dp);
    } else {
      boost::read_graphviz(in, g, dp, "node_id");
    }
  } catch (const boost::directed_graph_error&) {
    return false;
  } catch (const boost::undirected_graph_error&) {
    return false;
  }
  return true;
}

// Vertex ids of a GraphML file in the order boost::read_graphml creates the vertices.
std::vector<std::string> graphml_vertex_ids(const std::string& text) {
  namespace pt = boost::property_tree;
  std::istringstream in(text);
  pt::ptree tree;
  pt::read_xml(in, tree, pt::xml_parser::no_comments | pt::xml_parser::trim_whitespace);
  std::vector<std::string> ids;
  std::set<std::string> seen;
  for (const auto& child : tree.get_child("graphml")) {
    if (child.first != "graph") continue;
    for (const auto& n : child.second) {
      if (n.first != "node") continue;
      const auto id = n.second.get<std::string>("<xmlattr>.id");
      if (seen.insert(id).second) ids.push_back(id);
    }
    for (const auto& e : child.second) {
      if (e.first != "edge") continue;
      for (const char* end : {"<xmlattr>.source", "<xmlattr>.target"}) {
        const auto id = e.second.get<std::string>(end);
        if (seen.insert(id).second) ids.push_back(id);
      }
    }
    break;
  }
  return ids;
}

int edit_distance(std::string_view a, std::string_view b) {
  std::vector<int> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = static_cast<int>(j);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    int diag = row[0];
    row[0] = static_cast<int>(i);
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const int up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// "gpu2" < "gpu10": digit runs compare as numbers, the rest character by character.
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0;
  std::size_t j = 0;
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      std::size_t i2 = i;
      std::size_t j2 = j;
      while (i2 < a.size() && is_digit(a[i2])) ++i2;
      while (j2 < b.size() && is_digit(b[j2])) ++j2;
      std::string_view x(a.data() + i, i2 - i);
      std::string_view y(b.data() + j, j2 - j);
      while (x.size() > 1 && x.front() == '0') x.remove_prefix(1);
      while (y.size() > 1 && y.front() == '0') y.remove_prefix(1);
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = i2;
      j = j2;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  if ((a.size() - i) != (b.size() - j)) return a.size() - i < b.size() - j;
  return a < b;
}

std::optional<double> parse_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(text.c_str(), &end);
  if (errno != 0 || end == text.c_str()) return std::nullopt;
  while (*end == ' ' || *end == '\t') ++end;
  if (*end != '\0' || !std::isfinite(x)) return std::nullopt;
  return x;
}

const std::vector<std::pair<std::string, VertexKind>>& vertex_kinds() {
  static const std::vector<std::pair<std::string, VertexKind>> kinds = {
      {"gpu", VertexKind::gpu},   {"nvswitch", VertexKind::nvswitch}, {"pcie_switch", VertexKind::pcie_switch},
      {"nic", VertexKind::nic},   {"leaf", VertexKind::leaf},         {"spine", VertexKind::spine},
      {"core", VertexKind::core}};
  return kinds;
}

const std::vector<std::pair<std::string, EdgeKind>>& edge_kinds() {
  static const std::vector<std::pair<std::string, EdgeKind>> kinds = {
      {"nvlink", EdgeKind::nvlink}, {"pcie", EdgeKind::pcie}, {"network", EdgeKind::network}};
  return kinds;
}

template <class Pairs>
std::string names_of(const Pairs& pairs) {
  std::string out;
  for (const auto& [name, kind] : pairs) out += (out.empty() ? "" : ", ") + name;
  return out;
}

void check_unknown_attributes(const std::map<std::string, std::string>& attrs,
                              const std::vector<std::string>& known, const std::string& where,
                              std::vector<std::string>& problems) {
  for (const auto& [name, value] : attrs) {
    if (std::find(known.begin(), known.end(), name) != known.end() || name == "node_id") continue;
    // A typo: within one edit of a short name, two of a long one, ignoring case (bandwidth_gbps).
    std::string lower = name;
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    for (const auto& k : known) {
      std::string known_lower = k;
      for (char& ch : known_lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (edit_distance(lower, known_lower) <= (k.size() >= 8 ? 2 : 1)) {
        problems.push_back(where + ": unknown attribute '" + name + "' (did you mean '" + k + "'?)");
        break;
      }
    }
  }
}

// Adds directed edge e, or merges it into the edge already between its two vertices in its direction:
// parallel cables are one link of their summed bandwidth, at the smallest latency among them, of the kind of
// the widest. NCCL does the same with parallel links of a type (NVIDIA/nccl src/graph/topo.cc at 069a3d4,
// ncclTopoConnectNodes: "Aggregate links into higher bw", a second link to the same peer adds its bw to the
// first), and bonded or multi-rail NIC ports stripe a transfer over their ports. Routed apart, ECMP put half
// the flows on a 1 GB/s cable beside a 100 GB/s one and the collective waited for them (issue 32).
void add_link(std::vector<Edge>& edges, std::map<std::pair<int, int>, std::size_t>& link_of, const Edge& e) {
  const auto [it, fresh] = link_of.try_emplace(std::pair{e.src, e.dst}, edges.size());
  if (fresh) {
    edges.push_back(e);
    return;
  }
  Edge& link = edges[it->second];
  if (e.bandwidth_Bps > link.bandwidth_Bps) link.kind = e.kind;
  link.bandwidth_Bps += e.bandwidth_Bps;
  link.latency_s = std::min(link.latency_s, e.latency_s);
}

struct Parsed {
  bool directed = false;
  std::vector<std::string> names;
  std::vector<std::map<std::string, std::string>> vertex_attrs;
  struct RawEdge {
    int src, dst;
    std::map<std::string, std::string> attrs;
  };
  std::vector<RawEdge> edges;
};

template <class G>
void collect(const G& g, Parsed& p) {
  for (auto v : boost::make_iterator_range(boost::vertices(g))) p.vertex_attrs.push_back(g[v].attrs);
  for (auto e : boost::make_iterator_range(boost::edges(g))) {
    p.edges.push_back({static_cast<int>(boost::source(e, g)), static_cast<int>(boost::target(e, g)), g[e].attrs});
  }
}

// The line of a DOT syntax error. Boost's reader reports the token it did not want but not where it
// stands, so the line is found by reading prefixes: the first k lines, with the braces still open closed,
// fail with the file's own message exactly when they hold the bad token. A binary search over k takes
// log2(lines) reads; the k it finds is checked (the smallest failing prefix, its predecessor passing or
// failing otherwise). 0 when no prefix reproduces the message (e.g. the file ends inside a statement).
int dot_error_line(const std::string& text, const std::string& message) {
  std::vector<std::size_t> ends;  // end of each line (position of its '\n', or the text's size)
  for (std::size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') ends.push_back(i);
  if (ends.empty() || ends.back() != text.size()) ends.push_back(text.size());
  auto same_error = [&](std::size_t lines) {
    std::string prefix = text.substr(0, ends[lines - 1]);
    int open = 0;
    for (std::size_t i = 0; i < prefix.size(); ++i) {  // braces outside quoted strings
      if (prefix[i] == '"') {
        for (++i; i < prefix.size() && prefix[i] != '"'; i += prefix[i] == '\\' ? 2 : 1) {}
      } else if (prefix[i] == '{') {
        ++open;
      } else if (prefix[i] == '}') {
        --open;
      }
    }
    prefix += '\n';
    prefix.append(static_cast<std::size_t>(std::max(open, 0)), '}');
    RawGraph<boost::undirectedS> ug;
    RawGraph<boost::directedS> dg;
    for (int directed = 0; directed < 2; ++directed) {
      std::istringstream in(prefix);
      try {
        if (directed) {
          boost::dynamic_properties dp = collecting_properties(dg);
          boost::read_graphviz(in, dg, dp, "node_id");
        } else {
          boost::dynamic_properties dp = collecting_properties(ug);
          boost::read_graphviz(in, ug, dp, "node_id");
        }
        return false;
      } catch (const boost::bad_graphviz_syntax& e) {
        return message == e.what();
      } catch (const boost::graph_exception&) {  // the other directedness: try it
      } catch (const std::exception&) {
        return false;
      }
    }
    return false;
  };
  std::size_t lo = 1, hi = ends.size();  // smallest k in [lo, hi] with same_error(k)
  if (!same_error(hi)) return 0;
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (same_error(mid)) hi = mid;
    else lo = mid + 1;
  }
  return static_cast<int>(lo);
}

Parsed parse(const std::string& original, const std::string& file) {
  const auto first = original.find_first_not_of(" \t\r\n");
  const Syntax syntax = first != std::string::npos && original[first] == '<' ? Syntax::graphml : Syntax::dot;
  if (syntax == Syntax::graphml) check_xml_depth(original, file);
  const std::string dot = syntax == Syntax::dot ? prepare_dot(original, file) : std::string();
  const std::string& text = syntax == Syntax::dot ? dot : original;
  Parsed p;
  try {
    RawGraph<boost::directedS> dg;
    if (try_read(text, syntax, dg)) {
      p.directed = true;
      collect(dg, p);
    } else {
      RawGraph<boost::undirectedS> ug;
      if (!try_read(text, syntax, ug)) {
        throw InputError({file + ": parse error: the graph mixes directed and undirected edges"});
      }
      collect(ug, p);
    }
    if (syntax == Syntax::graphml) {
      p.names = graphml_vertex_ids(text);
    } else {
      for (const auto& attrs : p.vertex_attrs) {
        const auto it = attrs.find("node_id");
        p.names.push_back(it == attrs.end() ? std::string() : it->second);
      }
    }
  } catch (const boost::property_tree::xml_parser_error& e) {
    throw InputError({file + ":" + std::to_string(e.line()) + ": parse error: " + e.message()});
  } catch (const boost::property_tree::ptree_error& e) {
    throw InputError({file + ": parse error: " + e.what()});
  } catch (const boost::parse_error& e) {
    throw InputError({file + ": parse error: " + e.error});
  } catch (const boost::bad_graphviz_syntax& e) {
    std::string what = e.what();
    // `node` is a DOT keyword: the attribute has to be quoted.
    if (what.find("'node'") != std::string::npos) what += " (in DOT write the attribute as \"node\"=N)";
    const int line = dot_error_line(text, e.what());
    throw InputError({file + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": parse error: " + what});
  } catch (const boost::graph_exception& e) {
    throw InputError({file + ": parse error: " + std::string(e.what())});
  }
  if (p.names.size() != p.vertex_attrs.size()) {  // nested graphs: fall back to positions
    p.names.clear();
    for (std::size_t i = 0; i < p.vertex_attrs.size(); ++i) {
      std::string name(1, '#');  // built in two steps: GCC 12 -O3 warns (-Wrestrict) falsely on "#" + to_string
      name += std::to_string(i);
      p.names.push_back(std::move(name));
    }
  }
  return p;
}

// A vertex's kind and node as read; problems name the file and the vertex.
struct Checked {
  VertexKind kind = VertexKind::gpu;
  bool kind_ok = false;
  int node = -1;
};

std::vector<Checked> check_vertices(const Parsed& p, const std::string& file, std::vector<std::string>& problems) {
  const int n = static_cast<int>(p.vertex_attrs.size());
  std::vector<Checked> checked(static_cast<std::size_t>(n));
  for (int v = 0; v < n; ++v) {
    const auto& attrs = p.vertex_attrs[static_cast<std::size_t>(v)];
    const std::string where = file + ": vertex '" + p.names[static_cast<std::size_t>(v)] + "'";
    Checked& c = checked[static_cast<std::size_t>(v)];
    if (const auto it = attrs.find("kind"); it == attrs.end()) {
      problems.push_back(where + ": missing attribute kind");
    } else {
      const auto& kinds = vertex_kinds();
      const auto k = std::find_if(kinds.begin(), kinds.end(), [&](const auto& x) { return x.first == it->second; });
      if (k == kinds.end()) {
        problems.push_back(where + ": unknown kind '" + it->second + "' (expected one of: " + names_of(kinds) + ")");
      } else {
        c.kind = k->second;
        c.kind_ok = true;
      }
    }
    if (const auto it = attrs.find("node"); it != attrs.end()) {
      const auto x = parse_number(it->second);
      if (!x || *x < 0 || *x != std::floor(*x) || *x > 1e6) {
        problems.push_back(where + ": node must be a non-negative integer, got '" + it->second + "'");
      } else {
        c.node = static_cast<int>(*x);
      }
    } else if (c.kind_ok && c.kind == VertexKind::gpu) {
      problems.push_back(where + ": missing attribute node");
    }
    check_unknown_attributes(attrs, {"kind", "node"}, where, problems);
  }
  return checked;
}

// The edges that are well formed; problems name the file and the edge.
std::vector<Edge> check_edges(const Parsed& p, const std::string& file, std::vector<std::string>& problems) {
  std::vector<Edge> edges;
  for (const auto& raw : p.edges) {
    const std::string where = file + ": edge '" + p.names[static_cast<std::size_t>(raw.src)] + "' " +
                              (p.directed ? "->" : "--") + " '" + p.names[static_cast<std::size_t>(raw.dst)] + "'";
    Edge e{raw.src, raw.dst, EdgeKind::network, 0.0, 0.0};
    bool ok = true;
    if (raw.src == raw.dst) {
      problems.push_back(where + ": an edge from a vertex to itself");
      ok = false;
    }
    if (const auto it = raw.attrs.find("kind"); it == raw.attrs.end()) {
      problems.push_back(where + ": missing attribute kind");
      ok = false;
    } else {
      const auto& kinds = edge_kinds();
      const auto k = std::find_if(kinds.begin(), kinds.end(), [&](const auto& x) { return x.first == it->second; });
      if (k == kinds.end()) {
        problems.push_back(where + ": unknown kind '" + it->second + "' (expected one of: " + names_of(kinds) + ")");
        ok = false;
      } else {
        e.kind = k->second;
      }
    }
    if (const auto it = raw.attrs.find("bandwidth_GBps"); it == raw.attrs.end()) {
      problems.push_back(where + ": missing attribute bandwidth_GBps");
      ok = false;
    } else if (const auto x = parse_number(it->second); !x || *x <= 0) {
      problems.push_back(where + ": bandwidth_GBps must be positive, got " + (it->second.empty() ? "''" : it->second));
      ok = false;
    } else if (*x < kMinBandwidthGBps || *x > kMaxBandwidthGBps) {
      problems.push_back(where + ": bandwidth_GBps must be between 0.001 (1 MB/s) and 100000 (100 TB/s), got " + it->second);
      ok = false;
    } else {
      e.bandwidth_Bps = *x * 1e9;
    }
    if (const auto it = raw.attrs.find("latency_us"); it == raw.attrs.end()) {
      problems.push_back(where + ": missing attribute latency_us");
      ok = false;
    } else if (const auto x = parse_number(it->second); !x || *x < 0) {
      problems.push_back(where + ": latency_us must be a non-negative number, got " + (it->second.empty() ? "''" : it->second));
      ok = false;
    } else if (*x > kMaxLatencyUs) {
      problems.push_back(where + ": latency_us must be at most 1000000 (1 s), got " + it->second);
      ok = false;
    } else {
      e.latency_s = *x * 1e-6;
    }
    check_unknown_attributes(raw.attrs, {"kind", "bandwidth_GBps", "latency_us"}, where, problems);
    if (ok) edges.push_back(e);
  }
  return edges;
}

}  // namespace

Cluster load_topology(const std::string& path) {
  return load_topology_text(files::as_input_error([&] {
                              return files::read_input_file(path, files::kMaxTopologyBytes, "topology file", "cannot open the file");
                            }),
                            path);
}

Cluster load_topology_text(const std::string& text, const std::string& file) {
  const Parsed p = parse(text, file);
  std::vector<std::string> problems;
  const int n = static_cast<int>(p.vertex_attrs.size());

  // Vertices, then edges.
  const std::vector<Checked> checked = check_vertices(p, file, problems);
  std::vector<Edge> edges = check_edges(p, file, problems);

  // GPUs and nodes.
  std::map<int, int> gpus_per_node;
  int gpus = 0;
  for (const Checked& c : checked) {
    if (c.kind_ok && c.kind == VertexKind::gpu) {
      ++gpus;
      if (c.node >= 0) ++gpus_per_node[c.node];
    }
  }
  if (gpus == 0) problems.push_back(file + ": no GPUs (no vertex has kind gpu)");
  if (const double table = 4.0 * gpus * n; table > kMaxRouteTableBytes) {
    char buf[200];
    std::snprintf(buf, sizeof buf, ": %d GPUs and %d vertices: the route table (a hop count per GPU and vertex) would take %.1f GiB, over the %.0f GiB limit",
                  gpus, n, table / 1073741824.0, kMaxRouteTableBytes / 1073741824.0);
    throw InputError({file + buf});
  }
  if (!gpus_per_node.empty()) {
    const int nodes = gpus_per_node.rbegin()->first + 1;
    for (int node = 0; node < nodes; ++node) {
      if (gpus_per_node.find(node) == gpus_per_node.end()) {
        problems.push_back(file + ": node " + std::to_string(node) + " has no GPUs (node numbers run 0.." +
                           std::to_string(nodes - 1) + ")");
      }
    }
    const auto [node0, count0] = *gpus_per_node.begin();
    for (const auto& [node, count] : gpus_per_node) {
      if (count != count0) {
        problems.push_back(file + ": node " + std::to_string(node) + " has " + std::to_string(count) +
                           " GPUs, node " + std::to_string(node0) + " has " + std::to_string(count0) +
                           " (every node needs the same number of GPUs)");
      }
    }
  }
  if (!problems.empty()) throw InputError(problems);

  // Renumber: GPUs first (by node, then by name), then the rest by name. Names compare naturally (digit
  // runs as numbers: gpu2 < gpu10). The readers deliver vertices in different orders (GraphML: file
  // order; DOT: Boost's reader sorts by name), so the rule is by name, the same for both syntaxes.
  std::vector<int> order(static_cast<std::size_t>(n));
  for (int v = 0; v < n; ++v) order[static_cast<std::size_t>(v)] = v;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const Checked& x = checked[static_cast<std::size_t>(a)];
    const Checked& y = checked[static_cast<std::size_t>(b)];
    const bool gx = x.kind == VertexKind::gpu;
    const bool gy = y.kind == VertexKind::gpu;
    if (gx != gy) return gx;
    if (gx && x.node != y.node) return x.node < y.node;
    return natural_less(p.names[static_cast<std::size_t>(a)], p.names[static_cast<std::size_t>(b)]);
  });
  std::vector<int> new_id(static_cast<std::size_t>(n));
  GraphDescription desc;
  std::map<VertexKind, int> ordinal;
  for (int i = 0; i < n; ++i) {
    const int v = order[static_cast<std::size_t>(i)];
    new_id[static_cast<std::size_t>(v)] = i;
    const Checked& c = checked[static_cast<std::size_t>(v)];
    desc.vertices.push_back(Vertex{c.kind, c.node, ordinal[c.kind]++});
    desc.vertex_names.push_back(p.names[static_cast<std::size_t>(v)]);
  }
  // Edges (cables) ordered by their new endpoints as written, parallel ones in reader order; a cable's
  // reverse direction follows it.
  for (Edge& e : edges) {
    e.src = new_id[static_cast<std::size_t>(e.src)];
    e.dst = new_id[static_cast<std::size_t>(e.dst)];
  }
  std::stable_sort(edges.begin(), edges.end(),
                   [](const Edge& a, const Edge& b) { return std::pair{a.src, a.dst} < std::pair{b.src, b.dst}; });
  std::map<std::pair<int, int>, std::size_t> link_of;  // (src, dst) -> its edge in desc.edges
  for (const Edge& e : edges) {
    add_link(desc.edges, link_of, e);
    if (!p.directed) add_link(desc.edges, link_of, Edge{e.dst, e.src, e.kind, e.bandwidth_Bps, e.latency_s});
  }
  Cluster cluster = Cluster::from_graph(std::move(desc));
  if (const auto pair = cluster.unreachable_gpu_pair()) {
    throw InputError({file + ": graph is not connected: GPUs " + std::to_string(pair->first) + " and " +
                         std::to_string(pair->second) + " cannot reach each other"});
  }
  return cluster;
}

}  // namespace cs::topo
