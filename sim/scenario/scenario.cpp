#include "sim/scenario/scenario.hpp"

#include <algorithm>
#include <numeric>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "models/compute/profile_json.hpp"
#include "models/parallelism/pipeline_schedule.hpp"
#include "models/workload/finetune.hpp"
#include "models/workload/model_rules.hpp"
#include "sim/base/check.hpp"
#include "sim/base/input_error.hpp"
#include "sim/base/suggest.hpp"
#include "sim/files/file_error.hpp"
#include "sim/files/input_file.hpp"
#include "sim/files/json_file.hpp"
#include "sim/scenario/enum_names.hpp"
#include "sim/scenario/framework.hpp"
#include "sim/scenario/params.hpp"
#include "topologies/fabric.hpp"
#include "topologies/topology_file.hpp"

namespace cs::sim {

using nlohmann::json;

namespace {

std::string type_name(const json& v) {
  if (v.is_boolean()) return "a boolean";
  if (v.is_number_integer() || v.is_number_unsigned()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  return "null";
}

std::string nearest(const std::string& word, const std::vector<std::string>& choices) {
  return nearest_name(word, choices);
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// Problems found so far; every message is one complete line.
struct Errors {
  std::string file;
  std::vector<std::string> lines;
  std::string prefix;  // "jobs[1]." while reading a job of a multi-job scenario
  void add(const std::string& path, const std::string& what) { lines.push_back(file + ": " + prefix + path + ": " + what); }
};

// Reads the members of one JSON object, remembering which keys were used, so that leftovers can be
// reported as unknown with a suggestion.
class ObjectReader {
 public:
  ObjectReader(const json& obj, std::string path, Errors& errors) : obj_(obj), path_(std::move(path)), errors_(errors) {}

  std::string path_of(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  bool has(const std::string& key) {
    param(key);
    known_.push_back(key);
    return obj_.contains(key);
  }
  const json* raw(const std::string& key) {
    param(key);
    known_.push_back(key);
    auto it = obj_.find(key);
    return it == obj_.end() || it->is_null() ? nullptr : &*it;  // null means "use the default"
  }

  // The value at `key` when it is there and `is` of the right JSON kind; otherwise nullptr, with the
  // problem recorded: "missing (expected WHAT)" when required, "expected WHAT, got KIND VALUE" when not.
  const json* typed(const std::string& key, bool required, bool (json::*is)() const noexcept, const std::string& what) {
    const json* v = raw(key);
    if (!v) {
      if (required) errors_.add(path_of(key), "missing (expected " + what + ")");
      return nullptr;
    }
    if (!(v->*is)()) {
      errors_.add(path_of(key), "expected " + what + ", got " + type_name(*v) + " " + v->dump());
      return nullptr;
    }
    return v;
  }

  // The table's entry of a key this reader reads: the loader reads no key the table does not declare.
  const params::Param& param(const std::string& key) const {
    const params::Param* p = params::find(path_of(key));
    CS_CHECK(p != nullptr);
    return *p;
  }

  // An integer key, read as a 64-bit value and checked against the table's range before anyone narrows it.
  std::optional<std::int64_t> integer(const std::string& key, bool required) {
    const params::Param& p = param(key);
    CS_CHECK(p.type == params::Type::integer || p.type == params::Type::integer_or_list);
    const auto min_value = static_cast<std::int64_t>(p.min);
    const auto max_value = static_cast<std::int64_t>(p.max);
    const json* v = raw(key);
    if (!v) {
      if (required) errors_.add(path_of(key), "missing (expected an integer >= " + std::to_string(min_value) + ")");
      return std::nullopt;
    }
    const auto too_large = [&] {
      errors_.add(path_of(key), v->dump() + " is out of range (expected an integer <= " + std::to_string(max_value) + ": " + p.max_reason + ")");
      return std::nullopt;
    };
    const auto too_small = [&] {
      errors_.add(path_of(key), v->dump() + " is out of range (expected an integer >= " + std::to_string(min_value) + ")");
      return std::nullopt;
    };
    std::int64_t n = 0;
    if (v->is_number_unsigned()) {
      const auto u = v->get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(max_value)) return too_large();
      n = static_cast<std::int64_t>(u);
    } else if (v->is_number_integer()) {
      n = v->get<std::int64_t>();
    } else if (v->is_number_float() && std::floor(v->get<double>()) == v->get<double>()) {
      const double d = v->get<double>();  // 8.0 is fine
      if (d > p.max) return too_large();
      if (d < p.min) return too_small();
      n = static_cast<std::int64_t>(d);
    } else {
      errors_.add(path_of(key), "expected an integer, got " + type_name(*v) + " " + v->dump());
      return std::nullopt;
    }
    if (n < min_value) return too_small();
    if (n > max_value) return too_large();
    return n;
  }

  // The same, narrowed to int: every integer key's maximum fits one (tests/sim/test_params.cpp).
  std::optional<int> small_integer(const std::string& key, bool required) {
    const auto n = integer(key, required);
    if (!n) return std::nullopt;
    CS_CHECK(*n >= INT_MIN && *n <= INT_MAX);
    return static_cast<int>(*n);
  }

  // A number key: finite and within the table's range.
  std::optional<double> number(const std::string& key, bool required) {
    const params::Param& p = param(key);
    CS_CHECK(p.type == params::Type::number);
    const json* v = typed(key, required, &json::is_number, "a number");
    if (!v) return std::nullopt;
    const double d = v->get<double>();
    if (!std::isfinite(d)) {
      errors_.add(path_of(key), v->dump() + " is not a finite number");
      return std::nullopt;
    }
    if (d < p.min || (p.min_exclusive && d == p.min)) {
      errors_.add(path_of(key), v->dump() + " is out of range (expected a number " + (p.min_exclusive ? "> " : ">= ") +
                                    params::bound_text(p, p.min) + ")");
      return std::nullopt;
    }
    if (d > p.max || (p.max_exclusive && d == p.max)) {
      std::string want = std::string("in ") + (p.min_exclusive ? "(" : "[") + params::bound_text(p, p.min) + ", " +
                         params::bound_text(p, p.max) + (p.max_exclusive ? ")" : "]");
      if (!p.max_reason.empty()) want += ": " + p.max_reason;
      errors_.add(path_of(key), v->dump() + " is out of range (expected a number " + want + ")");
      return std::nullopt;
    }
    return d;
  }

  // A probability or fraction: the table declares it [0, 1).
  std::optional<double> fraction(const std::string& key) { return number(key, false); }

  std::optional<bool> boolean(const std::string& key) {
    const json* v = typed(key, false, &json::is_boolean, "true or false");
    return v ? std::optional<bool>(v->get<bool>()) : std::nullopt;
  }

  std::optional<std::string> string(const std::string& key, bool required) {
    const json* v = typed(key, required, &json::is_string, "a string");
    return v ? std::optional<std::string>(v->get<std::string>()) : std::nullopt;
  }

  // A string that must be one of the table's choices for the key.
  std::optional<std::string> choice(const std::string& key) {
    const std::vector<std::string>& choices = param(key).choices;
    CS_CHECK(!choices.empty());
    auto s = string(key, false);
    if (!s) return std::nullopt;
    if (std::find(choices.begin(), choices.end(), *s) != choices.end()) return s;
    std::string msg = "unknown value \"" + *s + "\" (expected one of: " + join(choices) + ")";
    if (auto near = nearest(*s, choices); !near.empty()) msg = "unknown value \"" + *s + "\" (did you mean \"" + near + "\"? expected one of: " + join(choices) + ")";
    errors_.add(path_of(key), msg);
    return std::nullopt;
  }

  // A choice with an enum behind it: the value of its name in `names` (sim/scenario/enum_names.hpp).
  template <class E, std::size_t N>
  std::optional<E> named(const std::string& key, const std::array<Named<E>, N>& names) {
    const auto s = choice(key);
    if (!s) return std::nullopt;
    const auto v = parse_name(names, *s);
    CS_CHECK(v.has_value());  // the table's choices are the names
    return v;
  }

  // A key this reader did not read is unknown: the table declares what may be there (suggestions come
  // from it), the reader what is read in this context (e.g. no hyperparameters of a custom GPU under a
  // GPU name).
  void finish() {
    const std::vector<std::string> declared = params::children(path_);
    for (auto it = obj_.begin(); it != obj_.end(); ++it) {
      if (std::find(known_.begin(), known_.end(), it.key()) != known_.end()) continue;
      std::string msg = "unknown key";
      if (auto near = nearest(it.key(), declared); !near.empty()) msg += " (did you mean \"" + near + "\"?)";
      else msg += " (expected one of: " + join(declared) + ")";
      errors_.add(path_of(it.key()), msg);
    }
  }

 private:
  const json& obj_;
  std::string path_;
  Errors& errors_;
  std::vector<std::string> known_;
};

bool expect_object(const json* v, const std::string& path, Errors& errors) {
  if (v && !v->is_object()) {
    errors.add(path, "expected an object, got " + type_name(*v));
    return false;
  }
  return v != nullptr;
}

// A section the scenario must have: false, the problem recorded, when it is missing ("missing (expected
// WHAT)") or not an object.
bool expect_section(const json* v, const std::string& path, const std::string& what, Errors& errors) {
  if (expect_object(v, path, errors)) return true;
  if (!v) errors.add(path, "missing (expected " + what + ")");
  return false;
}

models::GpuSpec read_custom_gpu(const json& v, Errors& errors) {
  ObjectReader r(v, "cluster.gpu", errors);
  // An optional number of a custom GPU, or the value it takes when absent.
  auto number_or = [&](const char* key, double fallback) { return r.number(key, false).value_or(fallback); };
  models::GpuSpec g;
  g.name = r.string("name", true).value_or("custom");
  g.peak_tflops_bf16 = r.number("peak_tflops_bf16", true).value_or(1);
  g.peak_tflops_fp32 = number_or("peak_tflops_fp32", g.peak_tflops_bf16 / 16);
  g.peak_tflops_tf32 = number_or("peak_tflops_tf32", g.peak_tflops_bf16 / 2);
  g.peak_tflops_fp8 = number_or("peak_tflops_fp8", 0);
  g.hbm_gib = r.number("hbm_gib", true).value_or(1);
  g.hbm_tbps = r.number("hbm_tbps", true).value_or(1);
  g.tdp_w = number_or("tdp_w", 700);
  g.nvlink_gbps = number_or("nvlink_gbps", 0);
  g.sm_count = r.small_integer("sm_count", false).value_or(132);
  g.price_per_gpu_hour_usd = number_or("price_per_gpu_hour", 0);
  g.mma_sync_fraction = number_or("mma_sync_fraction", 1);
  g.matmul_ceiling_fraction = number_or("matmul_ceiling_fraction", 0);
  g.peak_tflops_fp4 = number_or("peak_tflops_fp4", 0);
  g.pcie_gen = r.small_integer("pcie_gen", false).value_or(5);
  g.scaleup_domain_gpus = r.small_integer("scaleup_domain_gpus", false).value_or(8);
  r.finish();
  return g;
}

std::string fmt_number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

// Why straggler `slow` cannot join `listed`: (its key "gpu", "node" or "slowdown", what), an empty key when it can:
// each GPU and each node is listed once (their factors would multiply past the cap unseen), and a GPU's
// own factor times its node's stays within the slowdown's cap (params.json: 100x, a card that slow is a
// failure, not a straggler).
std::pair<std::string, std::string> straggler_clash(const std::vector<Heterogeneity::Slow>& listed, const Heterogeneity::Slow& slow, int gpus_per_node) {
  const double cap = params::find("cluster.stragglers[].slowdown")->max;
  for (std::size_t j = 0; j < listed.size(); ++j) {
    const Heterogeneity::Slow& o = listed[j];
    const std::string other = "cluster.stragglers[" + std::to_string(j) + "]";
    if (slow.gpu >= 0 && o.gpu == slow.gpu)
      return {"gpu", "GPU " + std::to_string(slow.gpu) + " is already listed (" + other + "): give each GPU one slowdown"};
    if (slow.node >= 0 && o.node == slow.node)
      return {"node", "node " + std::to_string(slow.node) + " is already listed (" + other + "): give each node one slowdown"};
    const Heterogeneity::Slow& g = slow.gpu >= 0 ? slow : o;  // the GPU entry and the node entry, if both
    const Heterogeneity::Slow& n = slow.gpu >= 0 ? o : slow;
    if (g.gpu >= 0 && n.node >= 0 && gpus_per_node > 0 && g.gpu / gpus_per_node == n.node && g.slowdown * n.slowdown > cap)
      return {"slowdown", fmt_number(slow.slowdown) + " x " + fmt_number(o.slowdown) + " (" + other + ") slows GPU " +
             std::to_string(g.gpu) + " of node " + std::to_string(n.node) + " " + fmt_number(g.slowdown * n.slowdown) +
             "x (expected a product <= " + fmt_number(cap) + ": a card that slow is a failure, not a straggler)"};
  }
  return {};
}

// cluster.stragglers, cluster.speed_variation and cluster.node_groups (heterogeneity.hpp).
void read_heterogeneity(ObjectReader& r, Scenario& s, Errors& errors) {
  Heterogeneity& h = s.heterogeneity;
  const long long gpus = static_cast<long long>(s.cluster.nodes) * s.cluster.gpus_per_node;
  if (const json* list = r.raw("stragglers")) {
    if (!list->is_array()) errors.add("cluster.stragglers", "expected a list of {\"gpu\" or \"node\", \"slowdown\"}, got " + type_name(*list));
    for (std::size_t i = 0; list->is_array() && i < list->size(); ++i) {
      const std::string path = "cluster.stragglers[" + std::to_string(i) + "]";
      const json& item = (*list)[i];
      if (!item.is_object()) {
        errors.add(path, "expected an object {\"gpu\" or \"node\", \"slowdown\"}, got " + type_name(item));
        continue;
      }
      ObjectReader sr(item, path, errors);
      Heterogeneity::Slow slow;
      const auto gpu = sr.integer("gpu", false);
      const auto node = sr.integer("node", false);
      slow.slowdown = sr.number("slowdown", true).value_or(1);
      sr.finish();
      if (gpu.has_value() == node.has_value()) {
        errors.add(path, "give either gpu (a cluster GPU index) or node (a node index)");
      } else if (gpu && *gpu >= gpus) {
        errors.add(path + ".gpu", std::to_string(*gpu) + " is outside the cluster (" + std::to_string(gpus) + " GPUs: 0.." + std::to_string(gpus - 1) + ")");
      } else if (node && *node >= s.cluster.nodes) {
        errors.add(path + ".node", std::to_string(*node) + " is outside the cluster (cluster.nodes " + std::to_string(s.cluster.nodes) + ")");
      } else {
        slow.gpu = gpu ? static_cast<int>(*gpu) : -1;
        slow.node = node ? static_cast<int>(*node) : -1;
        if (const auto [key, what] = straggler_clash(h.stragglers, slow, s.cluster.gpus_per_node); !key.empty())
          errors.add(path + "." + key, what);
        else
          h.stragglers.push_back(slow);
      }
    }
  }
  if (const json* sv = r.raw("speed_variation"); sv && expect_object(sv, "cluster.speed_variation", errors)) {
    ObjectReader vr(*sv, "cluster.speed_variation", errors);
    h.cv = vr.number("cv", true).value_or(0);
    h.seed = static_cast<std::uint64_t>(vr.integer("seed", false).value_or(1));
    vr.finish();
  }
  if (const json* groups = r.raw("node_groups")) {
    if (!groups->is_array() || groups->empty()) {
      errors.add("cluster.node_groups", "expected a non-empty list of {\"gpu\", \"nodes\"}, got " + type_name(*groups));
      return;
    }
    int next = 0;
    bool ok = true;
    for (std::size_t i = 0; i < groups->size(); ++i) {
      const std::string path = "cluster.node_groups[" + std::to_string(i) + "]";
      const json& item = (*groups)[i];
      if (!item.is_object()) {
        errors.add(path, "expected an object {\"gpu\", \"nodes\"}, got " + type_name(item));
        ok = false;
        continue;
      }
      ObjectReader gr(item, path, errors);
      NodeGroup g;
      const auto name = gr.string("gpu", true);
      g.nodes = gr.small_integer("nodes", true).value_or(0);
      gr.finish();
      const models::GpuSpec* spec = name ? models::find_gpu(*name) : nullptr;
      if (name && !spec) {
        std::string msg = "unknown GPU \"" + *name + "\"";
        if (auto near = nearest(*name, models::gpu_names()); !near.empty()) msg += " (did you mean \"" + near + "\"?)";
        errors.add(path + ".gpu", msg + " (known: " + join(models::gpu_names()) + ")");
      }
      if (!spec || g.nodes <= 0) {
        ok = false;
        continue;
      }
      if (spec->hbm_gib < s.gpu.hbm_gib)
        errors.add(path + ".gpu", spec->name + " has less memory (" + fmt_number(spec->hbm_gib) + " GiB) than cluster.gpu " + s.gpu.name + " (" +
                                      fmt_number(s.gpu.hbm_gib) + " GiB): the memory check uses cluster.gpu, so make it the group GPU with the least memory");
      g.gpu = *spec;
      g.first_node = next;
      next += g.nodes;
      h.groups.push_back(g);
    }
    if (ok && next != s.cluster.nodes)
      errors.add("cluster.node_groups", "the groups hold " + std::to_string(next) + " nodes, cluster.nodes is " + std::to_string(s.cluster.nodes) +
                                            " (every node in exactly one group)");
  }
}

// cluster.price_per_gpu_hour as a table by GPU type: every key a catalog GPU (or this scenario's custom
// GPU), every value a price in the key's range. The price of the scenario's GPU, if the table has one.
std::optional<double> read_price_table(const json& table, const models::GpuSpec& gpu, Errors& errors) {
  const params::Param* p = params::find("cluster.price_per_gpu_hour");
  CS_CHECK(p != nullptr);
  std::vector<std::string> known = models::gpu_names();
  if (!gpu.name.empty() && std::find(known.begin(), known.end(), gpu.name) == known.end()) known.push_back(gpu.name);
  std::optional<double> mine;
  for (const auto& [type, value] : table.items()) {
    const std::string path = "cluster.price_per_gpu_hour." + type;
    if (std::find(known.begin(), known.end(), type) == known.end()) {
      std::string msg = "unknown GPU type \"" + type + "\"";
      if (auto near = nearest(type, known); !near.empty()) msg += " (did you mean \"" + near + "\"?)";
      errors.add(path, msg + " (a price table's keys are GPU types: " + join(known) + ")");
      continue;
    }
    if (!value.is_number() || !std::isfinite(value.get<double>())) {
      errors.add(path, "expected a number (USD per GPU-hour), got " + type_name(value) + " " + value.dump());
      continue;
    }
    const double usd = value.get<double>();
    if (usd < p->min || usd > p->max) {
      errors.add(path, value.dump() + " is out of range (expected a number in [" + params::bound_text(*p, p->min) + ", " +
                           params::bound_text(*p, p->max) + "]: " + p->max_reason + ")");
      continue;
    }
    if (type == gpu.name) mine = usd;
  }
  return mine;
}

// Node groups of other GPU types (cluster.node_groups) are priced by the same basis as a capacity plan
// prices GPU types: the table's price of the group's type, else the scenario's number where the type is
// cluster.gpu (a number is cluster.gpu's price), else the type's catalog list price. The cluster's price
// per GPU-hour is their mean over nodes (every node holds gpus_per_node GPUs), so that $ per step is the
// sum over the GPUs of what each costs. Each group's GPU keeps the price it is charged at, so that a job on
// some of the nodes (Scenario::job_scenario) is priced by its own nodes.
// A node group's GPU at the price the scenario charges for it (blend_node_group_prices sets it).
double group_price(const models::GpuSpec& gpu) { return gpu.price_per_gpu_hour_usd; }

void blend_node_group_prices(const json* price, Scenario& s) {
  const double number = s.price_per_gpu_hour_usd;  // cluster.gpu's price, however it was given
  for (NodeGroup& g : s.heterogeneity.groups) {
    double& usd = g.gpu.price_per_gpu_hour_usd;  // the type's catalog list price unless the scenario gives one
    const json* row = price && price->is_object() && price->contains(g.gpu.name) ? &(*price)[g.gpu.name] : nullptr;
    if (row && row->is_number()) usd = row->get<double>();
    else if (g.gpu.name == s.gpu.name) usd = number;
  }
  s.price_per_gpu_hour_usd = s.heterogeneity.node_mean(group_price, number);
}

// cluster.intra_node.sockets / gpus_per_pcie_switch / inter_socket_GBps: the host side of a PCIe node
// (topologies/cluster.hpp "PCIe nodes"). Only PCIe nodes route GPU traffic through it.
void read_pcie_host(ObjectReader& ir, Scenario& s, Errors& errors) {
  const auto sockets = ir.small_integer("sockets", false);
  const auto per_switch = ir.small_integer("gpus_per_pcie_switch", false);
  const auto socket_bw = ir.number("inter_socket_GBps", false);
  if (s.cluster.intra.switched) {
    for (const auto& [key, given] : {std::pair{"sockets", sockets.has_value()}, std::pair{"gpus_per_pcie_switch", per_switch.has_value()},
                                     std::pair{"inter_socket_GBps", socket_bw.has_value()}})
      if (given)
        errors.add(std::string("cluster.intra_node.") + key, "PCIe nodes only: on \"" + s.cluster.intra.name +
                                                                 "\" GPU traffic stays on NVLink and never crosses the sockets");
    return;
  }
  const int G = s.cluster.gpus_per_node;
  if (sockets) {
    s.cluster.intra.sockets = *sockets;
    if (G % *sockets != 0) {
      errors.add("cluster.intra_node.sockets", std::to_string(*sockets) + " sockets do not split the " + std::to_string(G) +
                                                   " GPUs of a node evenly");
      s.cluster.intra.sockets = 1;
      return;
    }
  }
  if (per_switch) {
    s.cluster.intra.gpus_per_pcie_switch = *per_switch;
    const int socks = topo::pcie_sockets(s.cluster.intra, G);
    if ((G / socks) % *per_switch != 0) {
      errors.add("cluster.intra_node.gpus_per_pcie_switch",
                 std::to_string(*per_switch) + " GPUs per switch do not divide the " + std::to_string(G / socks) +
                     " GPUs of a socket (" + std::to_string(G) + " GPUs per node over " + std::to_string(socks) + " sockets)");
      s.cluster.intra.gpus_per_pcie_switch = 0;
    }
  }
  if (socket_bw) s.cluster.intra.inter_socket_GBps = *socket_bw;
}

// cluster.intra_node.domain_gpus: the size of one multi-node scale-up domain (an NVL72 rack run as NVL36
// x 2, or a smaller NVLink domain of a rack). It holds whole nodes (compute trays).
void read_domain_size(int domain, Scenario& s, Errors& errors) {
  const int G = s.cluster.gpus_per_node;
  if (domain % G != 0) {
    errors.add("cluster.intra_node.domain_gpus", std::to_string(domain) + " is not a whole number of nodes (" + std::to_string(G) +
                                                     " GPUs each): a scale-up domain holds whole compute trays");
    return;
  }
  s.cluster.intra.domain_gpus = domain == G ? 0 : domain;
}

// Hardware that cannot be built: a scale-up domain larger than the GPU is ever built into (an A100 or
// H100 in an NVL72 rack: the NVL72 switch trays take only Grace-Blackwell compute trays). Checked on the
// GPU's capability (GpuSpec::scaleup_domain_gpus), not its name, so a custom GPU declares it.
void check_scaleup_domain(const Scenario& s, Errors& errors) {
  const int domain = std::max(s.cluster.intra.domain_gpus, s.cluster.gpus_per_node);
  if (s.gpu.name.empty() || !s.cluster.intra.switched) return;
  if (s.cluster.intra.domain_gpus == 0) return;  // one node: gpus_per_node has its own range
  if (s.cluster.intra.domain_gpus % s.cluster.gpus_per_node != 0) {
    errors.add("cluster.gpus_per_node", std::to_string(s.cluster.gpus_per_node) + " GPUs per node do not tile the " +
                                            std::to_string(s.cluster.intra.domain_gpus) + "-GPU \"" + s.cluster.intra.name +
                                            "\" domain (a domain holds whole compute trays: 4 GPUs each in an NVL72)");
    return;
  }
  if (domain <= s.gpu.scaleup_domain_gpus) return;
  errors.add("cluster.intra_node", "a " + std::to_string(domain) + "-GPU scale-up domain (\"" + s.cluster.intra.name + "\") cannot hold " +
                                       s.gpu.name + ": it is built into domains of at most " + std::to_string(s.gpu.scaleup_domain_gpus) +
                                       " GPUs (cluster.gpu.scaleup_domain_gpus; NVL72 racks take GB200 / GB300 compute trays)");
}

// With GPUDirect RDMA a NIC moves data to and from GPU memory through the GPU's PCIe x16 host link, so the
// NIC's payload rate is at most that link's (GpuSpec::host_path_GBps: an A100's PCIe Gen4 x16 caps an
// NDR400 NIC's 48 GB/s near 25.6). The link keeps its line rate; its achievable share drops, and the
// report says so.
void cap_nic_by_host_path(Scenario& s) {
  topo::NetLinkSpec& nic = s.cluster.nic;
  const double cap = s.gpu.host_path_GBps();
  if (!nic.rdma || s.gpu.name.empty() || nic.line_rate_gbps <= 0 || nic.payload_GBps() <= cap) return;
  const double was = nic.payload_GBps();
  nic.efficiency = cap * 8.0 / nic.line_rate_gbps;
  s.notes.push_back("the " + nic.name + " NIC moves " + fmt_number(cap) + " GB/s, not its " + fmt_number(was) + ": " + s.gpu.name +
                    "'s PCIe Gen" + std::to_string(s.gpu.pcie_gen) + " x16 host link caps GPUDirect RDMA (cluster.gpu.pcie_gen)");
}

// training.precision against the GPU: FP8 recipes need FP8 tensor cores, the block-scaled ones (mxfp8,
// nvfp4) block-scaled MMA (GpuSpec::has_block_scaled_mma: Blackwell, CDNA 4).
void check_precision(const models::TrainingConfig& t, const models::GpuSpec& gpu, Errors& errors) {
  const auto recipe = t.effective_recipe();
  const std::string name(name_of(kPrecisionNames, recipe));
  const bool block_scaled = recipe == models::PrecisionRecipe::mxfp8 || recipe == models::PrecisionRecipe::nvfp4;
  if (block_scaled && !gpu.has_block_scaled_mma())
    errors.add("training.precision", "\"" + name + "\" needs block-scaled tensor cores (Blackwell, MI355X; " + gpu.name +
                                         " has none: cluster.gpu.peak_tflops_fp4 is 0)");
  else if (t.precision == models::Dtype::fp8 && !gpu.has_fp8())
    errors.add("training.precision", "\"" + name + "\" needs a GPU with fp8 tensor cores (" + gpu.name + " has none)");
}

// The scale-up and scale-out links of a cluster built from the catalog (cluster.intra_node, .inter_node).
void read_links(ObjectReader& r, Scenario& s, Errors& errors) {
  const std::string intra_default = "nvswitch";
  bool nvls_given = false;
  if (const json* in = r.raw("intra_node"); in && in->is_object()) {
    ObjectReader ir(*in, "cluster.intra_node", errors);
    const auto base = ir.choice("name").value_or(intra_default);
    s.cluster.intra = *topo::find_intra_node(base);
    if (auto bw = ir.number("gpu_bandwidth_GBps", false)) s.cluster.intra.gpu_bandwidth_GBps = *bw;
    if (auto eff = ir.number("efficiency", false)) s.cluster.intra.efficiency = *eff;
    if (auto lat = ir.number("latency_us", false)) s.cluster.intra.latency_us = *lat;
    if (auto nvls = ir.boolean("nvls")) s.cluster.intra.nvls = *nvls, nvls_given = true;
    if (auto domain = ir.small_integer("domain_gpus", false)) read_domain_size(*domain, s, errors);
    read_pcie_host(ir, s, errors);
    if (nvls_given && s.cluster.intra.nvls && !s.cluster.intra.switched)
      errors.add("cluster.intra_node.nvls", "NVLS is in-switch reduction (NVLink SHARP) and needs an NVSwitch fabric; \"" +
                                                s.cluster.intra.name + "\" has none");
    ir.finish();
  } else {
    const auto name = r.choice("intra_node").value_or(intra_default);
    s.cluster.intra = *topo::find_intra_node(name);
  }
  if (s.cluster.intra.gpu_bandwidth_GBps <= 0) {
    if (s.gpu.nvlink_gbps <= 0 && s.cluster.intra.generation_from_gpu && !s.gpu.name.empty())  // empty: GPU already reported
      errors.add("cluster.intra_node", "\"" + s.cluster.intra.name + "\" needs a GPU with NVLink (" + s.gpu.name + " has none; use \"pcie\")");
    s.cluster.intra.gpu_bandwidth_GBps = s.gpu.scaleup_GBps_per_direction();
  }
  if (!nvls_given && s.cluster.intra.generation_from_gpu) s.cluster.intra.nvls = s.gpu.nvswitch_has_nvls();
  check_scaleup_domain(s, errors);

  const json* inter = r.raw("inter_node");
  if (inter && expect_object(inter, "cluster.inter_node", errors)) {
    ObjectReader nr(*inter, "cluster.inter_node", errors);
    // The fabric's name and its own keys come from its registration (topologies/fabric.hpp); an unknown
    // name is reported by choice() and the first registration (the default) reads the keys.
    const topo::Fabric* fabric = topo::find_fabric(nr.choice("fabric").value_or(std::string(topo::fabrics().front().name)));
    CS_CHECK(fabric != nullptr);
    s.cluster.fabric = std::string(fabric->name);
    if (const json* link = nr.raw("link"); link && link->is_object()) {
      ObjectReader lr(*link, "cluster.inter_node.link", errors);
      s.cluster.nic.name = lr.string("name", false).value_or("custom");
      s.cluster.nic.line_rate_gbps = lr.number("line_rate_gbps", true).value_or(100);
      s.cluster.nic.efficiency = lr.number("efficiency", false).value_or(0.9);
      const auto latency = lr.number("latency_us", false);
      s.cluster.nic.latency_us = latency.value_or(2);
      s.cluster.nic.latency_given = latency.has_value();
      s.cluster.nic.rdma = lr.boolean("rdma").value_or(true);
      lr.finish();
    } else if (auto name = nr.choice("link")) {
      s.cluster.nic = *topo::find_net_link(*name);
    } else if (!link) {
      errors.add("cluster.inter_node.link", "missing (expected one of: " + join(topo::net_link_names()) + ")");
    }
    s.cluster.nics_per_node = nr.small_integer("nics_per_node", false).value_or(s.cluster.gpus_per_node);
    for (const topo::FabricKey& key : fabric->keys) {
      if (key.integer) s.cluster.*key.integer = nr.small_integer(key.key, false).value_or(static_cast<int>(key.default_value));
      if (key.number) s.cluster.*key.number = nr.number(key.key, false).value_or(key.default_value);
    }
    s.cluster.pxn = nr.boolean("pxn").value_or(true);
    s.cluster.sharp = nr.boolean("sharp").value_or(false);
    // A catalog link says whether its switches reduce in the network; a custom link is trusted.
    if (const topo::NetLinkSpec* cataloged = topo::find_net_link(s.cluster.nic.name);
        s.cluster.sharp && cataloged != nullptr && !cataloged->in_network_reduction)
      errors.add("cluster.inter_node.sharp", "SHARP is the in-network reduction of InfiniBand switches; \"" +
                                                 s.cluster.nic.name + "\" is Ethernet");
    nr.finish();
  } else if (!inter && s.cluster.nodes > 1) {
    errors.add("cluster.inter_node", "missing: " + std::to_string(s.cluster.nodes) +
                                         " nodes need a network (expected {\"fabric\": ..., \"link\": ...})");
  }
  if (!inter) s.cluster.nic = *topo::find_net_link("ib-ndr400");  // unused on one node
  else cap_nic_by_host_path(s);
}

// cluster.topology_file: the cluster graph from a GraphML or DOT file (topologies/topology_file.hpp), its
// path relative to the scenario's folder. The file gives the GPUs' placement in nodes and every link, so
// the catalog's link keys would be ignored and are refused; cluster.nodes and gpus_per_node may be given
// (the report's and the tests' habit) and must then be the file's. The reader's problems come back one
// per line, each naming the file and the element or line: "S.json: cluster.topology_file: T.dot:12: ...".
void read_topology_file(ObjectReader& r, Scenario& s, Errors& errors) {
  const auto name = r.string("topology_file", true);
  const auto nodes = r.small_integer("nodes", false);
  const auto gpus_per_node = r.small_integer("gpus_per_node", false);
  for (const char* key : {"intra_node", "inter_node"})
    if (r.raw(key))
      errors.add(std::string("cluster.") + key, "not allowed with cluster.topology_file (the file gives every link of the cluster)");
  if (name && name->empty()) errors.add("cluster.topology_file", "empty (expected the path of a GraphML or DOT file)");
  if (name && !name->empty()) {
    std::filesystem::path p(*name);
    if (p.is_relative()) p = std::filesystem::path(errors.file).parent_path() / p;
    s.topology_file = p.lexically_normal().string();
    try {
      s.topology = std::make_shared<const topo::Cluster>(topo::load_topology(s.topology_file));
    } catch (const InputError& e) {
      for (const auto& m : e.messages()) errors.add("cluster.topology_file", m);
    }
  }
  if (!s.topology) {  // already reported; counts that keep the rest of the checks quiet
    s.cluster.nodes = nodes.value_or(1);
    s.cluster.gpus_per_node = gpus_per_node.value_or(8);
    return;
  }
  s.cluster = s.topology->spec();
  const auto& spec = s.cluster;
  if (nodes && *nodes != spec.nodes)
    errors.add("cluster.nodes", std::to_string(*nodes) + " does not match cluster.topology_file (" + std::to_string(spec.nodes) + " nodes in " +
                                    s.topology_file + ")");
  if (gpus_per_node && *gpus_per_node != spec.gpus_per_node)
    errors.add("cluster.gpus_per_node", std::to_string(*gpus_per_node) + " does not match cluster.topology_file (" +
                                            std::to_string(spec.gpus_per_node) + " GPUs per node in " + s.topology_file + ")");
}

// cluster.power_limit_w: every GPU of the cluster (node groups too) runs under one board power cap
// (GpuSpec::clock_fraction has the model). A cap above a GPU's board power would not lower it and one below
// a quarter of it is below what the boards accept (nvidia-smi's minimum power limit: 100 of 400 W on the
// A100 SXM, 200 of 700 W on the H100 SXM); both are refused. The report states the clock it implies.
void read_power_limit(ObjectReader& r, Scenario& s, Errors& errors) {
  const auto cap = r.number("power_limit_w", false);
  if (!cap) return;
  std::vector<models::GpuSpec*> gpus{&s.gpu};
  for (NodeGroup& g : s.heterogeneity.groups) gpus.push_back(&g.gpu);
  for (models::GpuSpec* gpu : gpus) {
    if (gpu->tdp_w <= 0) continue;
    if (*cap > gpu->tdp_w || *cap < gpu->tdp_w / 4) {
      errors.add("cluster.power_limit_w", fmt_number(*cap) + " W is outside " + gpu->name + "'s range (" + fmt_number(gpu->tdp_w / 4) +
                                               " to its board power, " + fmt_number(gpu->tdp_w) + " W: a cap only lowers the board power, and boards accept no less than about a quarter of it)");
      return;
    }
    gpu->power_limit_w = *cap;
  }
  if (*cap < s.gpu.tdp_w)
    s.notes.push_back(s.gpu.name + " capped at " + fmt_number(*cap) + " of " + fmt_number(s.gpu.tdp_w) + " W (cluster.power_limit_w): tensor math at " +
                      fmt_number(std::round(s.gpu.clock_fraction() * 1000) / 1000) + " of its clock, as (cap / board power)^(1/3); memory-bound kernels unchanged; energy at the cap");
}

void read_cluster(const json* v, Scenario& s, Errors& errors) {
  if (!expect_section(v, "cluster", "an object with gpu, nodes, gpus_per_node, ...", errors)) return;
  ObjectReader r(*v, "cluster", errors);
  if (const json* g = r.raw("gpu"); !g) {
    errors.add("cluster.gpu", "missing (expected a GPU name: " + join(models::gpu_names()) + ", or an object)");
  } else if (g->is_string()) {
    const auto name = g->get<std::string>();
    if (const auto* spec = models::find_gpu(name)) {
      s.gpu = *spec;
    } else {
      std::string msg = "unknown GPU \"" + name + "\"";
      if (auto near = nearest(name, models::gpu_names()); !near.empty()) msg += " (did you mean \"" + near + "\"?)";
      errors.add("cluster.gpu", msg + " (known: " + join(models::gpu_names()) + ")");
    }
  } else if (g->is_object()) {
    s.gpu = read_custom_gpu(*g, errors);
  } else {
    errors.add("cluster.gpu", "expected a GPU name or an object, got " + type_name(*g));
  }
  if (r.raw("topology_file")) {
    read_topology_file(r, s, errors);
    read_heterogeneity(r, s, errors);
  } else {
    s.cluster.nodes = r.small_integer("nodes", true).value_or(1);
    s.cluster.gpus_per_node = r.small_integer("gpus_per_node", false).value_or(8);
    read_heterogeneity(r, s, errors);
    read_links(r, s, errors);
  }
  if (const json* price = r.raw("price_per_gpu_hour"); price && price->is_object()) {
    s.price_per_gpu_hour_usd = read_price_table(*price, s.gpu, errors).value_or(s.gpu.price_per_gpu_hour_usd);
  } else {
    s.price_per_gpu_hour_usd = r.number("price_per_gpu_hour", false).value_or(s.gpu.price_per_gpu_hour_usd);
  }
  blend_node_group_prices(r.raw("price_per_gpu_hour"), s);
  read_power_limit(r, s, errors);
  s.node_idle_power_fraction = r.number("node_idle_power_fraction", false);
  // Host power per node: the GPU's reference server share (gpu_catalog.hpp) times the GPUs per node.
  s.node_overhead_w = r.number("node_overhead_w", false)
                          .value_or(s.gpu.host_power_w_per_gpu * static_cast<double>(s.cluster.gpus_per_node));
  s.pue = r.number("pue", false).value_or(1.2);
  s.usd_per_kwh_given = r.raw("usd_per_kwh") != nullptr;
  s.usd_per_kwh = r.number("usd_per_kwh", false).value_or(0);
  r.finish();
}

// An integer key into `field` when it is given (the preset's or the default value stays otherwise).
void set_integer(ObjectReader& r, const char* key, std::int64_t& field, bool required) {
  if (auto x = r.integer(key, required)) field = *x;
}

// The principal hyperparameters and the expert sizes.
void read_model_sizes(ObjectReader& r, models::ModelConfig& m, bool have_preset) {
  const bool req = !have_preset;  // without a preset the principal hyperparameters are required
  set_integer(r, "num_layers", m.num_layers, req);
  set_integer(r, "hidden_size", m.hidden_size, req);
  set_integer(r, "num_attention_heads", m.num_attention_heads, req);
  if (!have_preset) m.num_query_groups = m.num_attention_heads;
  set_integer(r, "num_query_groups", m.num_query_groups, false);
  if (!have_preset) m.ffn_hidden_size = 4 * m.hidden_size;
  set_integer(r, "ffn_hidden_size", m.ffn_hidden_size, false);
  set_integer(r, "vocab_size", m.vocab_size, req);
  set_integer(r, "num_moe_experts", m.num_moe_experts, false);
  set_integer(r, "moe_router_topk", m.moe_router_topk, false);
  set_integer(r, "moe_router_num_groups", m.moe_router_num_groups, false);
  set_integer(r, "moe_router_group_topk", m.moe_router_group_topk, false);
  set_integer(r, "moe_ffn_hidden_size", m.moe_ffn_hidden_size, false);  // absent: ffn_hidden_size (0 was read as that)
  set_integer(r, "kv_channels", m.kv_channels, false);
}

// Megatron's per-layer frequency knobs: an integer N >= 1, or a list of 0/1 (or booleans), one per layer.
bool read_layer_freq(const json& f, std::int64_t& freq, std::vector<bool>& pattern) {
  if (f.is_number_integer() && f.get<std::int64_t>() >= 1) {
    freq = f.get<std::int64_t>();
    return true;
  }
  const auto bit = [](const json& x) { return x.is_boolean() || (x.is_number_integer() && (x == 0 || x == 1)); };
  if (!f.is_array() || f.empty() || !std::all_of(f.begin(), f.end(), bit)) return false;
  for (const json& x : f) pattern.push_back(x.is_boolean() ? x.get<bool>() : x.get<int>() == 1);
  return true;
}

// The integer form within the table's range (a list is checked against num_layers in check_model).
bool freq_in_range(ObjectReader& r, const char* key, const json& f, Errors& errors) {
  const params::Param& p = r.param(key);
  if (!f.is_number_integer() || f.get<std::int64_t>() <= static_cast<std::int64_t>(p.max)) return true;
  errors.add(std::string("model.") + key, f.dump() + " is out of range (expected an integer <= " + params::bound_text(p, p.max) + ": " + p.max_reason + ")");
  return false;
}

// Sliding-window attention: its window and the layers it applies to.
void read_window(ObjectReader& r, models::ModelConfig& m, Errors& errors) {
  // Megatron's window_size is a pair (left, right); a causal decoder's is (w, 0). An integer is w.
  if (const json* w = r.raw("window_size")) {
    const bool pair = w->is_array() && w->size() == 2 && (*w)[0].is_number_integer() && (*w)[1].is_number_integer();
    if (w->is_number_integer() && w->get<std::int64_t>() >= 0) {
      m.window_size = w->get<std::int64_t>();
    } else if (pair && (*w)[0].get<std::int64_t>() >= 0 && (*w)[1].get<std::int64_t>() == 0) {
      m.window_size = (*w)[0].get<std::int64_t>();
    } else {
      errors.add("model.window_size", "expected an integer >= 0 or Megatron's pair [w, 0] (a causal window), got " + w->dump());
    }
    const params::Param& p = r.param("window_size");
    if (m.window_size > static_cast<std::int64_t>(p.max)) {
      errors.add("model.window_size", w->dump() + " is out of range (expected a window <= " + params::bound_text(p, p.max) + ": " + p.max_reason + ")");
      m.window_size = 0;
    }
  }
  if (const json* f = r.raw("window_attn_skip_freq"); f && freq_in_range(r, "window_attn_skip_freq", *f, errors)) {
    if (!read_layer_freq(*f, m.window_attn_skip_freq, m.window_attn_pattern)) {
      errors.add("model.window_attn_skip_freq",
                 "expected an integer >= 1 (every N-th layer full attention) or a list of 0/1, one per layer (1: windowed), got " + f->dump());
    }
    if (m.window_size == 0 && !r.raw("window_size"))
      errors.add("model.window_attn_skip_freq", "needs model.window_size (the sliding window it applies to)");
  }
}

// Multi-head latent attention: an object of Megatron-Core's MLATransformerConfig dims (names as the
// DeepSeek configs spell them); a preset's values stay where the object leaves a key out.
void read_mla(ObjectReader& r, models::ModelConfig& m, Errors& errors) {
  const json* mla = r.raw("mla");
  if (mla && expect_object(mla, "model.mla", errors)) {
    ObjectReader mr(*mla, "model.mla", errors);
    models::MlaConfig& a = m.mla;
    const bool base = a.enabled();  // a preset's MLA: every key optional
    set_integer(mr, "q_lora_rank", a.q_lora_rank, false);
    set_integer(mr, "kv_lora_rank", a.kv_lora_rank, !base);
    set_integer(mr, "qk_nope_head_dim", a.qk_nope_head_dim, !base);
    set_integer(mr, "qk_rope_head_dim", a.qk_rope_head_dim, !base);
    set_integer(mr, "v_head_dim", a.v_head_dim, !base);
    mr.finish();
  }
}

// The rules across the model's keys, once all are read (`r` says which were given): the workload model's
// (models/workload/model_rules.hpp), reported as they are. A preset's MoE layer pattern is fitted to another
// num_layers first; a bad hybrid pattern and bad group-limited routing are cleared after, so that nothing
// downstream sees them.
void check_model(ObjectReader& r, models::ModelConfig& m, Errors& errors) {
  if (!r.raw("moe_layer_freq") && !m.moe_layer_pattern.empty() && m.num_layers > 0) {
    // A preset's pattern (DeepSeek's leading dense layers) under another num_layers: the same leading
    // dense layers, the rest MoE.
    const auto dense = std::find(m.moe_layer_pattern.begin(), m.moe_layer_pattern.end(), true) - m.moe_layer_pattern.begin();
    m.moe_layer_pattern.assign(static_cast<std::size_t>(m.num_layers), true);
    for (std::int64_t l = 0; l < std::min<std::int64_t>(dense, m.num_layers); ++l) m.moe_layer_pattern[static_cast<std::size_t>(l)] = false;
  }
  for (const auto& p : models::model_key_problems(m, [&](std::string_view key) { return r.raw(std::string(key)) != nullptr; }))
    errors.add(p.path, p.message);
  if (!models::hybrid_problems(m).empty()) m.hybrid_override_pattern.clear();  // the layer functions never see a bad pattern
  if (models::group_limited_routing_problem(m)) m.moe_router_num_groups = m.moe_router_group_topk = 0;
}

void read_model(const json* v, Scenario& s, Errors& errors) {
  if (!expect_section(v, "model", "{\"preset\": ...} or hyperparameters", errors)) return;
  ObjectReader r(*v, "model", errors);
  models::ModelConfig& m = s.model;
  bool have_preset = false;
  if (auto preset = r.string("preset", false)) {
    if (auto p = models::find_preset(*preset)) {
      m = *p;
      have_preset = true;
    } else {
      std::string msg = "unknown preset \"" + *preset + "\"";
      if (auto near = nearest(*preset, models::preset_names()); !near.empty()) msg += " (did you mean \"" + near + "\"?)";
      errors.add("model.preset", msg + " (known: " + join(models::preset_names()) + ")");
      return;
    }
  }
  read_model_sizes(r, m, have_preset);
  read_window(r, m, errors);
  // The keys that are one field each (models/workload/model_rules.hpp).
  for (const models::ModelField& f : models::model_fields()) {
    const std::string key(f.key);
    if (f.integer) set_integer(r, key.c_str(), f.integer(m), false);
    else if (auto b = r.boolean(key)) f.boolean(m) = *b;
  }
  if (const json* f = r.raw("moe_layer_freq"); f && freq_in_range(r, "moe_layer_freq", *f, errors)) {
    m.moe_layer_pattern.clear();  // the scenario's knob replaces a preset's
    m.moe_layer_freq = 1;
    if (!read_layer_freq(*f, m.moe_layer_freq, m.moe_layer_pattern))
      errors.add("model.moe_layer_freq",
                 "expected an integer >= 1 (every N-th layer MoE) or a list of 0/1, one per layer (1: MoE), got " + f->dump());
  }
  read_mla(r, m, errors);
  // Hybrid Mamba-Transformer models: Megatron's hybrid_override_pattern (one letter per layer) and the
  // Mamba-2 mixer's sizes (Megatron's mamba_* knobs, in the field table above); a preset's values stay where a key is left out.
  if (auto pattern = r.string("hybrid_override_pattern", false)) m.hybrid_override_pattern = *pattern;
  if (auto a = r.named("activation", kActivationNames)) m.activation = *a;
  if (auto b = r.named("attention_backend", kAttentionBackendNames)) m.attention_impl = *b;
  // Megatron's dropout probabilities (a preset's values unless given).
  m.attention_dropout = r.fraction("attention_dropout").value_or(m.attention_dropout);
  m.hidden_dropout = r.fraction("hidden_dropout").value_or(m.hidden_dropout);
  // Megatron's position_embedding_type; unset: rope for SwiGLU models, learned_absolute otherwise.
  if (auto pe = r.named("position_embedding_type", kPositionEmbeddingNames)) m.position_embedding_type = *pe;
  if (auto n = r.string("name", false)) m.name = *n;
  else if (!have_preset) m.name = "custom";
  r.finish();

  check_model(r, m, errors);
}

// Megatron-Core's pipeline_model_parallel_layout string (PipelineParallelLayerLayout.parse_str_to_list,
// megatron/core/transformer/pipeline_parallel_layer_layout.py @ NVIDIA/Megatron-LM b1030e9): commas are
// cosmetic and dropped, "(group)*n" and then "x*n" are unrolled, '|' separates the virtual stages (in
// Megatron's order: every stage of model chunk 0, then of chunk 1, ...), and each character is a layer: E the
// embedding, t a transformer layer, m a multi-token-prediction layer, L the loss. Returns each virtual
// stage's characters, or nothing with `problem` set.
std::optional<std::vector<std::string>> unroll_pipeline_layout(std::string text, std::string& problem) {
  constexpr std::size_t kMaxChars = 1000000;  // 1e6 layers: the num_layers bound
  text.erase(std::remove(text.begin(), text.end(), ','), text.end());
  const auto count_at = [&](std::size_t at, std::size_t& end) -> long long {
    if (at + 1 >= text.size() || text[at] != '*' || !std::isdigit(static_cast<unsigned char>(text[at + 1]))) return -1;
    end = at + 1;
    long long n = 0;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end])) && n <= static_cast<long long>(kMaxChars))
      n = n * 10 + (text[end++] - '0');
    return n;
  };
  const auto unroll = [&](bool groups) {
    std::string out;
    for (std::size_t i = 0; i < text.size();) {
      std::size_t end = 0;
      if (groups && text[i] == '(') {
        const std::size_t close = text.find(')', i + 1);
        const long long n = close == std::string::npos || close == i + 1 ? -1 : count_at(close + 1, end);
        if (n >= 0) {
          for (long long k = 0; k < n && out.size() <= kMaxChars; ++k) out += text.substr(i + 1, close - i - 1);
          i = end;
          continue;
        }
      } else if (!groups) {
        const long long n = count_at(i + 1, end);
        if (n >= 0) {
          out.append(static_cast<std::size_t>(std::min<long long>(n, static_cast<long long>(kMaxChars) + 1)), text[i]);
          i = end;
          continue;
        }
      }
      out += text[i++];
      if (out.size() > kMaxChars) break;
    }
    text = std::move(out);
    return text.size() <= kMaxChars;
  };
  if (!unroll(true) || !unroll(false)) {
    problem = "expands to more than " + std::to_string(kMaxChars) + " layers";
    return std::nullopt;
  }
  std::vector<std::string> stages(1);
  for (char c : text) {
    if (c == '|') {
      stages.emplace_back();
    } else if (c == 'E' || c == 'L' || c == 't' || c == 'm') {
      stages.back() += c;
    } else {
      problem = std::string("invalid layer character '") + c + "' (known: E embedding, t transformer layer, m MTP layer, L loss, '|' between stages, (...)*n and x*n repeats)";
      return std::nullopt;
    }
  }
  return stages;
}

// training.pipeline_model_parallel_layout into TrainingConfig::pipeline_layout (and the virtual stages it
// implies), with Megatron-Core's checks (validate_layer_layout): E once, at the start of the first virtual
// stage; L once, at the end of the last; as many t as model.num_layers. MTP layers ('m') place nothing: the
// modules of model.mtp_num_layers run with the LM head (a note says so where the counts differ).
void read_pipeline_layout(const std::string& text, Scenario& s, bool vp_given, Errors& errors) {
  const std::string at = "training.pipeline_model_parallel_layout";
  models::TrainingConfig& t = s.training;
  std::string problem;
  const auto stages = unroll_pipeline_layout(text, problem);
  if (!stages) {
    errors.add(at, "\"" + text + "\" " + problem);
    return;
  }
  const auto n = static_cast<std::int64_t>(stages->size());
  if (n % t.pp != 0) {
    errors.add(at, "\"" + text + "\" has " + std::to_string(n) + " virtual stages, not a multiple of pipeline_model_parallel_size (" +
                       std::to_string(t.pp) + ")");
    return;
  }
  if (vp_given && n / t.pp != t.vp) {
    errors.add(at, "\"" + text + "\" has " + std::to_string(n) + " virtual stages, " + std::to_string(n / t.pp) +
                       " per pipeline stage, but virtual_pipeline_model_parallel_size is " + std::to_string(t.vp));
    return;
  }
  std::string all;
  for (const auto& st : *stages) all += st;
  const auto count = [&](char c) { return std::count(all.begin(), all.end(), c); };
  if (count('E') != 1 || stages->front().empty() || stages->front().front() != 'E') {
    errors.add(at, "\"" + text + "\" must start with the embedding E, once, in the first virtual stage");
    return;
  }
  if (count('L') != 1 || stages->back().empty() || stages->back().back() != 'L') {
    errors.add(at, "\"" + text + "\" must end with the loss L, once, in the last virtual stage");
    return;
  }
  if (count('t') != s.model.num_layers) {
    errors.add(at, "\"" + text + "\" holds " + std::to_string(count('t')) + " transformer layers (t), expected model.num_layers (" +
                       std::to_string(s.model.num_layers) + ")");
    return;
  }
  t.vp = static_cast<int>(n / t.pp);
  t.pipeline_layout.clear();
  for (const auto& st : *stages) t.pipeline_layout.push_back(std::count(st.begin(), st.end(), 't'));
  if (count('m') != s.model.mtp_num_layers)
    s.notes.push_back("training.pipeline_model_parallel_layout places " + std::to_string(count('m')) + " multi-token-prediction layer(s) 'm'; " +
                      std::to_string(s.model.mtp_num_layers) + " (model.mtp_num_layers) run with the LM head on the last stage");
}

// The framework and its release (sim/scenario/framework.hpp): their rules and defaults apply to every key
// read after them.
struct FrameworkChoice {
  const Framework* framework;
  const FrameworkRelease* release;
};

FrameworkChoice read_framework(ObjectReader& r, models::TrainingConfig& t, Errors& errors) {
  const Framework* framework = &generic_framework();
  if (auto f = r.choice("framework")) framework = find_framework(*f);
  CS_CHECK(framework != nullptr);  // the table's choices are the file's frameworks
  const FrameworkRelease* release = find_release(*framework, "");
  if (auto name = r.string("framework_release", false)) {
    if (const FrameworkRelease* named = find_release(*framework, *name)) release = named;
    else
      errors.add("training.framework_release", "unknown release \"" + *name + "\" of framework \"" + framework->name +
                                                   "\" (expected one of: " + join(release_names(*framework)) + ")");
  }
  t.framework = framework->name;
  t.framework_release = release->name;
  return {framework, release};
}

// What the batch and parallel-size keys leave to the cross-key rules: the data-parallel size as given (the
// GPUs decide it) and whether FSDP shards inside a node.
struct ParallelKeys {
  std::optional<std::int64_t> dp;
  bool hybrid_shard = false;
};

ParallelKeys read_parallel_sizes(ObjectReader& r, Scenario& s, Errors& errors) {
  models::TrainingConfig& t = s.training;
  ParallelKeys keys;
  t.seq_length = r.integer("seq_length", true).value_or(1);
  t.global_batch_size = r.integer("global_batch_size", true).value_or(1);
  t.micro_batch_size = r.integer("micro_batch_size", false).value_or(1);
  if (auto p = r.named("precision", kPrecisionNames)) t.recipe = *p, t.precision = models::gemm_dtype_of(*p);
  t.tp = r.small_integer("tensor_model_parallel_size", false).value_or(1);
  t.pp = r.small_integer("pipeline_model_parallel_size", false).value_or(1);
  const auto vp = r.small_integer("virtual_pipeline_model_parallel_size", false);
  t.vp = vp.value_or(1);
  if (auto layout = r.string("pipeline_model_parallel_layout", false)) read_pipeline_layout(*layout, s, vp.has_value(), errors);
  t.cp = r.small_integer("context_parallel_size", false).value_or(1);
  t.ep = r.small_integer("expert_model_parallel_size", false).value_or(1);
  t.etp = r.small_integer("expert_tensor_parallel_size", false).value_or(0);
  keys.dp = r.integer("data_parallel_size", false);
  t.sequence_parallel = r.boolean("sequence_parallel").value_or(false);
  t.zero_stage = r.small_integer("zero_stage", false).value_or(0);
  if (auto f = r.named("fsdp_sharding_strategy", kFsdpShardingNames)) {
    keys.hybrid_shard = *f == FsdpSharding::hybrid_shard;
    t.zero_stage = zero_stage_of(*f);
  }
  return keys;
}

// Full and selective recompute: the granularity, selective's modules, full's method and layers.
void read_recompute(ObjectReader& r, Scenario& s, Errors& errors) {
  models::TrainingConfig& t = s.training;
  if (auto rc = r.named("recompute_granularity", kRecomputeNames)) t.recompute = *rc;
  // Megatron-Core's recompute_modules: which submodules selective recompute re-runs. As there, the list
  // only matters under recompute_granularity "selective" (a layout search varies the granularity).
  if (const json* mods = r.raw("recompute_modules")) {
    const std::string at = "training.recompute_modules";
    if (!mods->is_array() || mods->empty()) {
      errors.add(at, "expected a non-empty list of module names (core_attn, layernorm, mlp, moe_act), got " + mods->dump());
    } else {
      models::RecomputeModules rm;
      rm.core_attn = false;
      for (std::size_t i = 0; i < mods->size(); ++i) {
        const json& item = (*mods)[i];
        const std::string name = item.is_string() ? item.get<std::string>() : item.dump();
        if (name == "core_attn") rm.core_attn = true;
        else if (name == "layernorm") rm.layernorm = true;
        else if (name == "mlp") rm.mlp = true;
        else if (name == "moe_act") rm.moe_act = true;
        else if (name == "mla_up_proj" && s.model.mla.enabled()) rm.mla_up_proj = true;
        else if (name == "mla_up_proj")
          errors.add(at + "[" + std::to_string(i) + "]", "\"mla_up_proj\" recomputes multi-head latent attention's up-projections and needs model.mla");
        else if (name == "moe" || name == "shared_experts")
          errors.add(at + "[" + std::to_string(i) + "]", "\"" + name + "\" is a Megatron-Core module this simulator does not recompute yet (modelled: core_attn, layernorm, mlp, moe_act, mla_up_proj)");
        else
          errors.add(at + "[" + std::to_string(i) + "]", "unknown module " + item.dump() + " (expected core_attn, layernorm, mlp, moe_act or mla_up_proj)");
      }
      t.recompute_modules = rm;
    }
  }
  // Megatron-Core's recompute_method and recompute_num_layers: how "full" checkpoints a chunk's layers. As
  // recompute_modules under selective, they only matter under full (a layout search varies the granularity).
  if (auto method = r.named("recompute_method", kRecomputeMethodNames)) t.recompute_method = *method;
  t.recompute_num_layers = r.integer("recompute_num_layers", false).value_or(1);
  t.cpu_offloading_num_layers = r.integer("cpu_offloading_num_layers", false).value_or(0);
}

// training.finetune: LoRA / QLoRA (models/workload/finetune.hpp), Megatron-Bridge's names (LoRA(
// target_modules, dim, alpha), megatron/bridge/peft/lora.py).
void read_finetune(ObjectReader& r, Scenario& s, Errors& errors) {
  models::TrainingConfig& t = s.training;
  if (const json* ft = r.raw("finetune"); ft && expect_object(ft, "training.finetune", errors)) {
    ObjectReader fr(*ft, "training.finetune", errors);
    if (!ft->contains("method")) errors.add("training.finetune.method", "missing (expected \"lora\" or \"qlora\")");
    if (const auto method = fr.named("method", kFinetuneMethodNames)) t.finetune.method = *method;
    t.finetune.dim = fr.small_integer("dim", false).value_or(16);
    t.finetune.alpha = fr.number("alpha", false).value_or(32);
    if (const json* targets = fr.raw("target_modules")) {
      const std::string at = "training.finetune.target_modules";
      const std::vector<std::string> known = {"linear_qkv", "linear_proj", "linear_fc1", "linear_fc2"};
      if (!targets->is_array() || targets->empty()) {
        errors.add(at, "expected a non-empty list of module names (" + join(known) + "), got " + targets->dump());
      } else {
        t.finetune.qkv = t.finetune.proj = t.finetune.fc1 = t.finetune.fc2 = false;
        for (std::size_t i = 0; i < targets->size(); ++i) {
          const json& item = (*targets)[i];
          const std::string name = item.is_string() ? item.get<std::string>() : item.dump();
          if (name == known[0]) t.finetune.qkv = true;
          else if (name == known[1]) t.finetune.proj = true;
          else if (name == known[2]) t.finetune.fc1 = true;
          else if (name == known[3]) t.finetune.fc2 = true;
          else {
            std::string msg = "unknown module " + item.dump();
            if (const auto near = nearest(name, known); !near.empty()) msg += " (did you mean \"" + near + "\"?)";
            errors.add(at + "[" + std::to_string(i) + "]", msg + " (expected " + join(known) + ")");
          }
        }
      }
    }
    fr.finish();
    if (t.finetune.active()) {
      std::string targets;
      for (const auto& [on, name] : {std::pair{t.finetune.qkv, "linear_qkv"}, std::pair{t.finetune.proj, "linear_proj"},
                                     std::pair{t.finetune.fc1, "linear_fc1"}, std::pair{t.finetune.fc2, "linear_fc2"}})
        if (on) targets += std::string(targets.empty() ? "" : ", ") + name;
      // The adapters of the whole model (TP 1: every adapter once).
      models::TrainingConfig whole = t;
      whole.tp = 1, whole.ep = 1, whole.etp = 0;
      double adapters = 0;
      for (std::int64_t l = 0; l < s.model.num_layers; ++l)
        adapters += models::adapter_parameters_per_layer(s.model, whole, s.model.num_moe_experts > 0 && models::is_moe_layer(s.model, l));
      char trained[64];
      std::snprintf(trained, sizeof trained, " (%.1fM parameters trained, %.2f%% of the model)", adapters / 1e6,
                    100.0 * adapters / models::parameter_count(s.model));
      s.notes.push_back(std::string(t.finetune.method == models::FinetuneMethod::qlora ? "QLoRA" : "LoRA") +
                        " fine-tuning (training.finetune): rank-" + std::to_string(t.finetune.dim) + " adapters on " + targets + trained +
                        "; the base weights frozen" + (t.finetune.method == models::FinetuneMethod::qlora ? " in 4-bit NF4" : " in bf16") +
                        ", no weight-gradient GEMMs for them");
    }
  }
}

void read_pipeline_schedule(ObjectReader& r, models::TrainingConfig& t) {
  const auto schedule = r.named("pipeline_schedule", kPipelineScheduleNames);
  if (schedule) t.pipeline_schedule = *schedule;
  // Megatron: virtual pipeline stages imply the interleaved schedule.
  if (t.vp > 1 && t.pipeline_schedule == PipelineSchedule::one_f_one_b && schedule.value_or(PipelineSchedule::one_f_one_b) != PipelineSchedule::gpipe)
    t.pipeline_schedule = PipelineSchedule::interleaved;
}

// The data-parallel mechanisms (gradient reduction and parameter gather overlaps, gradient dtypes and
// accumulation) and the pipeline's transfers.
void read_data_parallel_mechanisms(ObjectReader& r, Scenario& s, const FrameworkRelease* release) {
  models::TrainingConfig& t = s.training;
  // Keys the framework's release gives defaults for, resolved in its order (the defaults' conditions
  // name layout keys only, read above).
  const auto overlap_grad_reduce = r.boolean("overlap_grad_reduce");
  const auto overlap_param_gather = r.boolean("overlap_param_gather");
  const auto tp_comm_overlap = r.boolean("tp_comm_overlap");
  t.overlap_moe_expert_parallel_comm = r.boolean("overlap_moe_expert_parallel_comm").value_or(false);
  t.moe_token_dispatcher = r.named("moe_token_dispatcher", kMoeDispatcherNames).value_or(models::MoeDispatcher::alltoall);
  t.cuda_graph_impl = r.named("cuda_graph_impl", kCudaGraphImplNames).value_or(models::CudaGraphImpl::none);
  const auto main_grads_dtype = r.named("main_grads_dtype", kGradDtypeNames);
  const auto grad_reduce_dtype = r.named("grad_reduce_dtype", kGradDtypeNames);
  const auto zero3_collectives = r.named("zero3_collectives", kZero3CollectivesNames);
  t.grad_accumulation = r.named("gradient_accumulation", kGradAccumulationNames).value_or(models::GradAccumulation::fused);
  t.pipeline_tensor_split = r.named("pipeline_tensor_split", kPipelineTensorSplitNames).value_or(models::PipelineTensorSplit::none);
  t.pipeline_p2p_blocking = r.boolean("pipeline_p2p_blocking").value_or(false);
  const auto framework_default = [&](const char* key) {
    const auto value = default_value(*release, key, training_facts(t, s.gpu.name));
    CS_CHECK(value.has_value());  // every release gives every default (framework.cpp)
    return *value;
  };
  const auto dtype_default = [&](const char* key) {
    const auto d = parse_name(kGradDtypeNames, framework_default(key).get<std::string>());
    CS_CHECK(d.has_value());
    return *d;
  };
  t.overlap_grad_reduce = overlap_grad_reduce.value_or(framework_default("training.overlap_grad_reduce").get<bool>());
  t.overlap_param_gather = overlap_param_gather.value_or(framework_default("training.overlap_param_gather").get<bool>());
  t.tp_comm_overlap = tp_comm_overlap.value_or(framework_default("training.tp_comm_overlap").get<bool>());
  t.main_grads_dtype = main_grads_dtype.value_or(dtype_default("training.main_grads_dtype"));
  t.grad_reduce_dtype = grad_reduce_dtype.value_or(dtype_default("training.grad_reduce_dtype"));
  t.zero3_collectives = zero3_collectives ? *zero3_collectives
                                          : parse_name(kZero3CollectivesNames, framework_default("training.zero3_collectives").get<std::string>())
                                                .value_or(models::Zero3Collectives::per_unit);
  // ZeRO-1's parameter all-gather behind the next forward: as the framework places it.
  switch (release->param_gather) {
    case ParamGatherPlacement::after_optimizer: t.param_gather_overlaps_forward = false; break;
    case ParamGatherPlacement::with_flag: t.param_gather_overlaps_forward = t.overlap_param_gather; break;
    case ParamGatherPlacement::when_given: t.param_gather_overlaps_forward = overlap_param_gather.value_or(false); break;
  }
}

// What the run stores narrower than the defaults: Adam's moments, the SwiGLU's saved input, the MoE
// combine's kept expert outputs (models/memory/memory_model.cpp).
void read_memory_savings(ObjectReader& r, Scenario& s, const FrameworkRelease* release, Errors& errors) {
  models::TrainingConfig& t = s.training;
  t.exp_avg_dtype = r.named("exp_avg_dtype", kOptimizerStateDtypeNames).value_or(t.exp_avg_dtype);
  t.exp_avg_sq_dtype = r.named("exp_avg_sq_dtype", kOptimizerStateDtypeNames).value_or(t.exp_avg_sq_dtype);
  // Where the probabilities apply is the framework release's (frameworks.json): Megatron-Core from core_r0.12
  // weighs in the experts' activation, older code and other frameworks in the combine.
  if (const auto probs = r.named("moe_apply_probs", kMoeApplyProbsNames)) {
    t.moe_apply_probs = *probs;
  } else if (const auto value = default_value(*release, "training.moe_apply_probs", training_facts(t, s.gpu.name))) {
    t.moe_apply_probs = parse_name(kMoeApplyProbsNames, value->get<std::string>()).value_or(t.moe_apply_probs);
  }
  t.activation_func_fp8_input_store = r.boolean("activation_func_fp8_input_store").value_or(false);
  // Megatron-Core's TransformerConfig refuses it for anything but SwiGLU ("Storing activation input in FP8
  // is supported only for SwiGLU.", core_v0.14.0 transformer_config.py).
  if (t.activation_func_fp8_input_store && s.model.activation != models::Activation::swiglu)
    errors.add("training.activation_func_fp8_input_store", "stores the input of a SwiGLU activation in FP8 (Megatron-Core supports "
                                                           "it only for SwiGLU); model.activation is not swiglu");
}

// How the layers split over the pipeline stages where they do not split evenly.
void read_pipeline_split(ObjectReader& r, models::TrainingConfig& t) {
  t.account_for_embedding_in_pipeline_split = r.boolean("account_for_embedding_in_pipeline_split").value_or(false);
  t.account_for_loss_in_pipeline_split = r.boolean("account_for_loss_in_pipeline_split").value_or(false);
  t.decoder_first_pipeline_num_layers = r.integer("decoder_first_pipeline_num_layers", false).value_or(-1);
  t.decoder_last_pipeline_num_layers = r.integer("decoder_last_pipeline_num_layers", false).value_or(-1);
}

  // Products the models count in 64-bit integers: each factor is within its declared range, but their
  // product must be too (a micro-batch's routed token copies: tokens x top-k x expert TP x EP).
// false: reported, and the checks after it need sane products.
bool check_token_counts(const models::TrainingConfig& t, const models::ModelConfig& m, Errors& errors) {
  std::int64_t tokens = 0, copies = 0;
  const bool overflow = __builtin_mul_overflow(t.global_batch_size, t.seq_length, &tokens) ||
                        __builtin_mul_overflow(t.micro_batch_size, t.seq_length, &copies) ||
                        __builtin_mul_overflow(copies, std::max<std::int64_t>(1, m.moe_router_topk), &copies) ||
                        __builtin_mul_overflow(copies, static_cast<std::int64_t>(std::max(t.ep, 1)) * std::max(t.etp, 1), &copies) ||
                        copies > (std::int64_t{1} << 62);
  if (overflow) {
    errors.add("training.micro_batch_size", "micro_batch_size (" + std::to_string(t.micro_batch_size) + ") x seq_length (" +
                                                std::to_string(t.seq_length) + ") x model.moe_router_topk (" + std::to_string(m.moe_router_topk) +
                                                ") x expert_model_parallel_size x expert_tensor_parallel_size overflows the "
                                                "simulator's 64-bit token counts (expected a product below 2^62)");
    return false;
  }
  // A run shorter than one step is no run: its step count would round to nothing (a denormal gives 0 steps
  // and an infinite price per token).
  if (t.tokens_to_train > 0 && t.tokens_to_train < static_cast<double>(tokens)) {
    errors.add("training.tokens_to_train", json(t.tokens_to_train).dump() + " is less than one step's tokens (global_batch_size " +
                                               std::to_string(t.global_batch_size) + " x seq_length " + std::to_string(t.seq_length) +
                                               " = " + std::to_string(tokens) + "): give 0 (no run) or at least one step");
    return false;
  }
  return true;
}

// The data-parallel size: the GPUs over tensor x pipeline x context. false: reported, nothing to check further.
bool derive_data_parallel(Scenario& s, std::optional<std::int64_t> dp, Errors& errors) {
  models::TrainingConfig& t = s.training;
  const int gpus = s.num_gpus();
  const std::int64_t model_par = static_cast<std::int64_t>(t.tp) * t.pp * t.cp;
  const std::string gpus_str = std::to_string(gpus) + " GPUs (" + (errors.prefix.empty() ? "cluster." : errors.prefix) + "nodes " +
                               std::to_string(s.cluster.nodes) + " x cluster.gpus_per_node " + std::to_string(s.cluster.gpus_per_node) + ")";
  if (gpus % model_par != 0) {
    errors.add("training", "tensor (" + std::to_string(t.tp) + ") x pipeline (" + std::to_string(t.pp) + ") x context (" +
                               std::to_string(t.cp) + ") = " + std::to_string(model_par) + " does not divide the " + gpus_str);
    return false;
  }
  t.dp = static_cast<int>(gpus / model_par);
  if (dp && *dp != t.dp) {
    errors.add("training.data_parallel_size", std::to_string(*dp) + " x tensor " + std::to_string(t.tp) + " x pipeline " +
                                                  std::to_string(t.pp) + " x context " + std::to_string(t.cp) + " = " +
                                                  std::to_string(*dp * model_par) + ", not the " + gpus_str);
    return false;
  }
  return true;
}

// Tensor parallelism over the heads, the pipeline split and schedule, sliding windows, fine-tuning and
// partial full recompute.
void check_layout(const models::TrainingConfig& t, const models::ModelConfig& m, Errors& errors) {
  if (m.num_attention_heads % t.tp != 0)
    errors.add("training.tensor_model_parallel_size", std::to_string(t.tp) + " does not divide model.num_attention_heads (" +
                                                          std::to_string(m.num_attention_heads) + ")");
  else if (m.num_query_groups % t.tp != 0)
    errors.add("training.tensor_model_parallel_size", std::to_string(t.tp) + " does not divide model.num_query_groups (" +
                                                          std::to_string(m.num_query_groups) + ")");
  // The pipeline split (models::pipeline_split_problems, Megatron's assertions), named by the knob that
  // chose it.
  if (const auto split = models::pipeline_split_problems(m, t); !split.empty()) {
    const bool uneven = t.decoder_first_pipeline_num_layers >= 0 || t.decoder_last_pipeline_num_layers >= 0;
    const bool accounted = t.account_for_embedding_in_pipeline_split || t.account_for_loss_in_pipeline_split;
    const std::string layout = std::to_string(t.pp) + (t.vp > 1 ? " x virtual " + std::to_string(t.vp) : std::string{});
    if (!t.pipeline_layout.empty())
      errors.add("training.pipeline_model_parallel_layout", split.front());
    else if (uneven)
      errors.add(t.decoder_first_pipeline_num_layers >= 0 ? "training.decoder_first_pipeline_num_layers" : "training.decoder_last_pipeline_num_layers",
                 split.front() + " (model.num_layers " + std::to_string(m.num_layers) + ", pipeline " + layout + ")");
    else if (accounted)
      errors.add(t.account_for_embedding_in_pipeline_split ? "training.account_for_embedding_in_pipeline_split" : "training.account_for_loss_in_pipeline_split",
                 split.front() + " (model.num_layers " + std::to_string(m.num_layers) + ", pipeline " + layout + ")");
    else
      errors.add("training.pipeline_model_parallel_size",
                 layout + " does not divide model.num_layers (" + std::to_string(m.num_layers) +
                     ") (account_for_embedding/loss_in_pipeline_split or decoder_first/last_pipeline_num_layers split unevenly)");
  }
  for (const auto& p : models::feature_layout_problems(m, t)) errors.add(p.path, p.message);  // the model's features (model_rules.hpp)
  if (t.vp > 1 && t.pipeline_schedule == PipelineSchedule::gpipe)
    errors.add("training.virtual_pipeline_model_parallel_size", "needs pipeline_schedule \"interleaved\"");
  if (t.pipeline_schedule == PipelineSchedule::interleaved && t.vp == 1)
    errors.add("training.pipeline_schedule", "\"interleaved\" needs training.virtual_pipeline_model_parallel_size > 1");
  if (t.finetune.active() && t.zero_stage >= 3)
    errors.add("training.finetune", "is modelled with training.zero_stage 0 to 2 (the frozen base is not sharded; got 3)");
  if (t.finetune.method == models::FinetuneMethod::qlora && (t.precision == models::Dtype::fp8 || t.precision == models::Dtype::fp4))
    errors.add("training.finetune.method", "\"qlora\" runs its GEMMs in bf16 on dequantized NF4 weights (training.precision must be bf16)");
  // Full recompute other than every layer on its own (recompute_method block, or groups of
  // recompute_num_layers): modelled for the transformer block of 1F1B, GPipe and the interleaved schedule,
  // the block Megatron-Core's TransformerBlock._checkpointed_forward checkpoints.
  if (t.partial_full_recompute()) {
    const std::string what = "recompute_method \"" + std::string(name_of(kRecomputeMethodNames, t.recompute_method)) +
                             "\" with recompute_num_layers " + std::to_string(t.recompute_num_layers);
    if (sim::splits_backward(t.pipeline_schedule))
      errors.add("training.recompute_method", what + " is modelled with the 1f1b, gpipe and interleaved schedules (got \"" +
                                                  std::string(name_of(kPipelineScheduleNames, t.pipeline_schedule)) + "\")");
    if (m.hybrid())
      errors.add("training.recompute_method", what + " is modelled for transformer layers (model.hybrid_override_pattern is set)");
    // More layers than a chunk has checkpoints all of them, as in Megatron-Core (no range is checked there).
  }
}

// The zero-bubble schedules (models/parallelism/pipeline_schedule.hpp): ZB-H1 one model chunk per rank,
// ZBV exactly two in a V (torch's ScheduleZBVZeroBubble refuses other counts). Their B / W split is
// modelled on the asynchronous sends of Megatron-Core and PyTorch, with gradients reduced by DDP or the
// distributed optimizer (ZeRO-3 would gather the weights again for W).
// DualPipeV (pipeline_schedule.hpp) is ZBV's V with DualPipe's order: two chunks, and at least 2p
// micro-batches (DualPipeV.step asserts num_chunks >= num_ranks * 2, deepseek-ai/DualPipe @ 3da1bbe).
void check_split_backward_schedule(const models::TrainingConfig& t, Errors& errors) {
  if (models::PipelineSchedule sc = t.pipeline_schedule; sim::splits_backward(sc)) {
    const std::string name = "\"" + std::string(name_of(kPipelineScheduleNames, sc)) + "\"";
    if (sim::v_shape(sc) && t.vp != 2)
      errors.add("training.pipeline_schedule", name + " needs training.virtual_pipeline_model_parallel_size 2 (two model chunks per rank in a V; got " +
                                                   std::to_string(t.vp) + ")");
    if (sc == PipelineSchedule::zb_h1 && t.vp != 1)
      errors.add("training.pipeline_schedule", name + " runs one model chunk per rank (training.virtual_pipeline_model_parallel_size is " +
                                                   std::to_string(t.vp) + "; \"zbv\" runs two)");
    if (t.pipeline_p2p_blocking)
      errors.add("training.pipeline_schedule", name + " cannot run with training.pipeline_p2p_blocking (its runtime sends asynchronously)");
    if (t.zero_stage >= 3)
      errors.add("training.pipeline_schedule", name + " is modelled with training.zero_stage 0 to 2 (got 3)");
    if (sc == PipelineSchedule::dualpipev && t.pp >= 2 && t.micro_batch_size * t.dp > 0 && t.global_batch_size % (t.micro_batch_size * t.dp) == 0 &&
        t.num_micro_batches() < 2 * t.pp)
      errors.add("training.global_batch_size", name + " needs at least 2 x pipeline_model_parallel_size = " + std::to_string(2 * t.pp) +
                                                   " micro-batches per step (got " + std::to_string(t.num_micro_batches()) + ")");
    // Its overlapped pairs run as the combined 1F1B's do (step_builder.cpp run_pair), under the same limits.
    if (sc == PipelineSchedule::dualpipev) {
      if (t.zero_stage == 2)
        errors.add("training.zero_stage", name + " is modelled with training.zero_stage 0 or 1 (got 2)");
      if (t.recompute == models::Recompute::full)
        errors.add("training.recompute_granularity", name + " is modelled without \"full\" recompute (its overlapped pairs split each layer's passes)");
      if (t.pipeline_tensor_split != models::PipelineTensorSplit::none)
        errors.add("training.pipeline_tensor_split", name + " sends whole pipeline tensors (got \"" +
                                                         std::string(name_of(kPipelineTensorSplitNames, t.pipeline_tensor_split)) + "\")");
    }
  }
}

// Micro-batches, sequence chunks and the interleaved schedule's micro-batch count.
void check_batch_split(const models::TrainingConfig& t, const models::ModelConfig& m, Errors& errors) {
  if (t.vp > 1 && t.pp < 2)
    errors.add("training.virtual_pipeline_model_parallel_size", std::to_string(t.vp) + " needs pipeline_model_parallel_size >= 2 (got " +
                                                                     std::to_string(t.pp) + ")");
  const std::int64_t per_step = t.micro_batch_size * t.dp;
  if (t.global_batch_size % per_step != 0)
    errors.add("training.global_batch_size", std::to_string(t.global_batch_size) + " is not divisible by micro_batch_size (" +
                                                 std::to_string(t.micro_batch_size) + ") x data-parallel size (" +
                                                 std::to_string(t.dp) + ") = " + std::to_string(per_step));
  if (t.seq_length % t.cp != 0)
    errors.add("training.context_parallel_size", std::to_string(t.cp) + " does not divide training.seq_length (" +
                                                     std::to_string(t.seq_length) + ")");
  if (t.pipeline_schedule == PipelineSchedule::interleaved && t.vp > 1 && t.pp >= 2 && t.global_batch_size % per_step == 0 &&
      t.num_micro_batches() % t.pp != 0)
    errors.add("training.global_batch_size", "the interleaved schedule needs the number of micro-batches (" +
                                                 std::to_string(t.num_micro_batches()) + " = global_batch_size / (micro_batch_size x data-parallel " +
                                                 std::to_string(t.dp) + ")) to be a multiple of pipeline_model_parallel_size (" +
                                                 std::to_string(t.pp) + ")");
  // Load-balanced causal ring attention (Transformer Engine) splits each sequence into 2 x CP chunks.
  if (t.cp > 1 && m.causal && t.seq_length % (2 * t.cp) != 0)
    errors.add("training.context_parallel_size", std::to_string(t.cp) + " needs training.seq_length (" + std::to_string(t.seq_length) +
                                                     ") divisible by 2 x context_parallel_size (load-balanced ring attention)");
}

void resolve_hybrid_shard(Scenario& s, Errors& errors) {
  models::TrainingConfig& t = s.training;
  // HYBRID_SHARD shards inside a node: the DP x CP ranks of one node (TP is innermost, so a node holds
  // gpus_per_node / tp of them) form a shard block; blocks replicate across nodes.
  const int gpn = s.cluster.gpus_per_node;
  const int dp_cp = t.dp * t.cp;
  if (gpn % t.tp != 0) {
    errors.add("training.fsdp_sharding_strategy", "\"HYBRID_SHARD\" needs tensor_model_parallel_size (" + std::to_string(t.tp) +
                                                      ") to divide cluster.gpus_per_node (" + std::to_string(gpn) + ")");
  } else if (t.ep > 1) {
    errors.add("training.fsdp_sharding_strategy", "\"HYBRID_SHARD\" with expert_model_parallel_size > 1 is not simulated (use FULL_SHARD)");
  } else {
    const int block = std::min(dp_cp, gpn / t.tp);
    if (dp_cp % block != 0)
      errors.add("training.fsdp_sharding_strategy", "\"HYBRID_SHARD\" needs the data-parallel x context-parallel size (" +
                                                        std::to_string(dp_cp) + ") to be a multiple of its ranks per node (" +
                                                        std::to_string(block) + ")");
    else
      t.fsdp_shard_size = block < dp_cp ? block : 0;
  }
}

// Communication overlaps and gradient accumulation against the layout.
void check_overlaps(const models::TrainingConfig& t, Errors& errors) {
  // Megatron-LM refuses it too (megatron/training/arguments.py, validate_args: "Tensor parallel
  // communication/GEMM overlap can happen only when sequence parallelism is enabled"): the overlap splits the
  // sequence-parallel all-gathers and reduce-scatters, which a plain TP all-reduce does not have. With TP 1
  // there is no TP communication and the flag changes nothing (Megatron turns SP off there and would
  // refuse too; a search over layouts keeps a base scenario's flag at TP 1, so we do not).
  if (t.tp_comm_overlap && !t.sequence_parallel && t.tp > 1)
    errors.add("training.tp_comm_overlap", "needs training.sequence_parallel (the overlap pipelines sequence parallelism's "
                                           "all-gathers and reduce-scatters with their GEMMs, as in Megatron-LM)");
  // Megatron-Core refuses these (megatron/core/transformer/transformer_config.py __post_init__ @ d98e8a6:
  // "virtual_pipeline_model_parallel_size must be specified when pipeline_model_parallel_size > 1", "disable
  // full recomputation when enabling overlap_moe_expert_parallel_comm"). ZeRO-2/3 (Megatron-FSDP) with it are
  // not modelled: the step builder pairs passes under DDP and the distributed optimizer only. With EP 1 there
  // is no all-to-all and the flag changes nothing (Megatron would refuse it: "only supported with expert model
  // parallelism"; a search over layouts keeps a base scenario's flag at EP 1, so we do not, as with
  // tp_comm_overlap at TP 1).
  if (t.overlap_moe_expert_parallel_comm && t.ep > 1) {
    const std::string key = "training.overlap_moe_expert_parallel_comm";
    if (t.pp > 1 && t.pipeline_schedule != PipelineSchedule::interleaved)
      errors.add(key, "needs the interleaved schedule (training.virtual_pipeline_model_parallel_size > 1) with pipeline_model_parallel_size > 1, as Megatron-Core does");
    if (t.recompute == models::Recompute::full)
      errors.add(key, "cannot run with training.recompute_granularity \"full\" (Megatron-Core refuses it)");
    if (t.zero_stage > 1)
      errors.add(key, "is modelled with training.zero_stage 0 or 1 only (Megatron-Core's DDP and distributed optimizer)");
    // The 2021-2022 codes these two describe had no combined 1F1B; its paired passes send as Megatron-Core does.
    if (t.pipeline_tensor_split != models::PipelineTensorSplit::none)
      errors.add(key, "cannot run with training.pipeline_tensor_split \"" +
                          std::string(name_of(kPipelineTensorSplitNames, t.pipeline_tensor_split)) + "\" (Megatron-Core sends whole pipeline tensors)");
    if (t.pipeline_p2p_blocking)
      errors.add(key, "cannot run with training.pipeline_p2p_blocking (Megatron-Core's combined 1F1B sends asynchronously)");
  }
  // The separate accumulation kernels add the whole gradient of the rank (DDP, ZeRO-1); under ZeRO-2/3 the
  // reduced shards accumulate instead, which is not modelled.
  if (t.grad_accumulation != models::GradAccumulation::fused && t.zero_stage > 1)
    errors.add("training.gradient_accumulation", "\"" + std::string(name_of(kGradAccumulationNames, t.grad_accumulation)) +
                                                     "\" is modelled with training.zero_stage 0 or 1 only (the whole gradient accumulated on each rank)");
}

// DeepSpeed 0.3's per-tensor ZeRO-3 collectives (models::Zero3Collectives) against the sharding and the model:
// they exist only under ZeRO-3 over the whole data-parallel group, and need the layer's tensors
// (models::layer_parameter_tensors describes dense layers of standard attention).
void check_zero3_collectives(const models::TrainingConfig& t, const models::ModelConfig& m, Errors& errors) {
  if (t.zero3_collectives != models::Zero3Collectives::per_tensor_synchronous) return;
  const std::string key = "training.zero3_collectives";
  if (t.zero_stage < 3)
    errors.add(key, "\"per_tensor_synchronous\" is how ZeRO-3 gathers parameters; it needs training.zero_stage 3 (got " +
                        std::to_string(t.zero_stage) + ")");
  else if (t.fsdp_shard_size > 0)
    errors.add(key, "\"per_tensor_synchronous\" (DeepSpeed 0.3's ZeRO-3) shards over the whole data-parallel group, not HYBRID_SHARD's blocks");
  else if (t.overlap_param_gather)
    errors.add(key, "\"per_tensor_synchronous\" gathers each tensor after a device-wide synchronize, so nothing is prefetched behind "
                    "compute: set training.overlap_param_gather false (DeepSpeed 0.3's prefetch of the next submodule is not modelled)");
  else if (models::layer_parameter_tensors(m, t.tp).empty() || m.mtp_num_layers > 0)
    errors.add(key, "\"per_tensor_synchronous\" needs each layer's parameter tensors, which are described for dense layers of standard "
                    "attention only (not MoE, MLA, hybrid Mamba layers or multi-token prediction)");
}

// Sequence and expert parallelism against the model.
void check_sequence_and_expert_parallel(const models::TrainingConfig& t, const models::ModelConfig& m, Errors& errors) {
  if (t.sequence_parallel && t.seq_length % t.tp != 0)
    errors.add("training.sequence_parallel", "needs training.seq_length (" + std::to_string(t.seq_length) +
                                                 ") divisible by tensor_model_parallel_size (" + std::to_string(t.tp) + ")");
  if (t.ep > 1 && m.num_moe_experts == 0)
    errors.add("training.expert_model_parallel_size", std::to_string(t.ep) + " needs a mixture-of-experts model (model.num_moe_experts > 0)");
  else if (t.ep > 1 && m.num_moe_experts % t.ep != 0)
    errors.add("training.expert_model_parallel_size", std::to_string(t.ep) + " must divide model.num_moe_experts (" +
                                                          std::to_string(m.num_moe_experts) + ")");
  else if (m.num_moe_experts > 0 && (static_cast<std::int64_t>(t.tp) * t.cp * t.dp) % (static_cast<std::int64_t>(t.ep) * t.expert_tp()) != 0)
    errors.add(t.etp > 0 ? "training.expert_tensor_parallel_size" : "training.expert_model_parallel_size",
               "expert_model_parallel_size x expert_tensor_parallel_size (" + std::to_string(t.ep) + " x " +
                   std::to_string(t.expert_tp()) + ") must divide the ranks the experts fold over, tensor x context x data " +
                   "parallel (" + std::to_string(t.tp) + " x " + std::to_string(t.cp) + " x " + std::to_string(t.dp) + ")");
  if (t.etp > 0 && m.num_moe_experts == 0 && t.etp != t.tp)
    errors.add("training.expert_tensor_parallel_size", std::to_string(t.etp) + " needs a mixture-of-experts model (model.num_moe_experts > 0)");
}

// A hybrid Mamba-Transformer model against the layout.
void check_hybrid_model(const models::TrainingConfig& t, const models::ModelConfig& m, Errors& errors) {
  const bool mamba = m.hybrid_override_pattern.find('M') != std::string::npos;
  if (mamba && (m.mamba_heads() % t.tp != 0 || m.mamba.num_groups % t.tp != 0))
    errors.add("training.tensor_model_parallel_size", std::to_string(t.tp) + " must divide the Mamba heads (" + std::to_string(m.mamba_heads()) +
                                                          ") and groups (" + std::to_string(m.mamba.num_groups) + ") of model.hybrid_override_pattern's Mamba layers");
  if (t.cp > 1) errors.add("training.context_parallel_size", "a hybrid model (model.hybrid_override_pattern) with context parallelism is not simulated");
  if (t.finetune.active()) errors.add("training.finetune", "LoRA of a hybrid model (model.hybrid_override_pattern) is not simulated");
  // DualPipeV splits the backward into input and weight gradients as the zero-bubble schedules do.
  if (t.pipeline_schedule == models::PipelineSchedule::zb_h1 || t.pipeline_schedule == models::PipelineSchedule::zbv ||
      t.pipeline_schedule == models::PipelineSchedule::dualpipev)
    errors.add("training.pipeline_schedule", "a zero-bubble schedule with a hybrid model (model.hybrid_override_pattern) is not simulated");
}

// The rules across training keys (and against the model and the cluster), once all are read; they set what
// the layout decides (the data-parallel size, FSDP's shard size, the gradient bucket).
// A flex token dispatcher against the model and the layout.
void check_dispatcher(const Scenario& s, Errors& errors) {
  // A flex dispatcher: Megatron-Core's MoEFlexTokenDispatcher dispatches over one group of the expert TP x EP
  // ranks (token_dispatcher.py @ d98e8a64); with expert TP > 1 that is not modelled. With EP 1 (and expert
  // TP 1) nothing is dispatched and the setting changes nothing, as tp_comm_overlap at TP 1.
  const models::TrainingConfig& t = s.training;
  if (t.moe_token_dispatcher != models::MoeDispatcher::alltoall) {
    const std::string key = "training.moe_token_dispatcher";
    const std::string what = "\"" + std::string(name_of(kMoeDispatcherNames, t.moe_token_dispatcher)) + "\"";
    if (s.model.num_moe_experts == 0)
      errors.add(key, what + " dispatches the tokens of mixture-of-experts layers (model.num_moe_experts is 0)");
    else if (t.expert_tp() > 1 && t.ep > 1)
      errors.add(key, what + " is modelled with training.expert_tensor_parallel_size 1 (the flex dispatcher's one TP x EP group is not)");
  }
}

// CPU activation offload (training.cpu_offloading_num_layers): what Megatron-Core's TransformerConfig.
// __post_init__ refuses (megatron/core/transformer/transformer_config.py L1884-1899, NVIDIA/Megatron-LM @
// d98e8a64, the same in 2024 at 2e2bdf62 L418-433), then what this simulator does not model: the TE offload
// context spans one model chunk run forward then backward, one micro-batch at a time (transformer_block.py
// get_cpu_offload_context), so the combined 1F1B's interleaved passes and hybrid Mamba layers are refused.
void check_cpu_offload(const models::TrainingConfig& t, const models::ModelConfig& m, Errors& errors) {
  const std::int64_t n = t.cpu_offloading_num_layers;
  if (n == 0) return;
  const std::string key = "training.cpu_offloading_num_layers";
  if (n >= m.num_layers)
    errors.add(key, "CPU offloading can be done only for layers less than model.num_layers " + std::to_string(m.num_layers) + " (got " +
                        std::to_string(n) + "; Megatron-Core's TransformerConfig refuses it)");
  if (t.pp > 1)
    errors.add(key, "has no support for pipeline parallelism (got pipeline_model_parallel_size " + std::to_string(t.pp) +
                        "; Megatron-Core's TransformerConfig refuses it)");
  if (t.recompute != models::Recompute::none)
    errors.add(key, "does not work when activation recomputation is enabled (got recompute_granularity \"" +
                        std::string(name_of(kRecomputeNames, t.recompute)) + "\"; Megatron-Core's TransformerConfig refuses it)");
  if (m.hybrid()) errors.add(key, "is modelled for transformer layers, not this simulator's hybrid Mamba models (model.hybrid_override_pattern is set)");
  if (t.overlap_moe_expert_parallel_comm && t.ep > 1)
    errors.add(key, "is not modelled with overlap_moe_expert_parallel_comm (two micro-batches' passes interleaved layer by layer)");
}

// CUDA graphs (training.cuda_graph_impl): what Megatron-Core's TransformerConfig.__post_init__ refuses of a
// per-layer implementation (megatron/core/transformer/transformer_config.py @ NVIDIA/Megatron-LM d98e8a64:
// "CUDA graphs not supported with CPU offloading.", "full recompute is only supported with full iteration
// CUDA graph.").
void check_cuda_graphs(const models::TrainingConfig& t, Errors& errors) {
  if (t.cuda_graph_impl == models::CudaGraphImpl::none || t.cuda_graph_impl == models::CudaGraphImpl::full_iteration) return;
  const std::string key = "training.cuda_graph_impl";
  const std::string what = "\"" + std::string(name_of(kCudaGraphImplNames, t.cuda_graph_impl)) + "\"";
  if (t.cpu_offloading_num_layers > 0)
    errors.add(key, what + " cannot run with training.cpu_offloading_num_layers (Megatron-Core refuses CUDA graphs with CPU offloading)");
  if (t.recompute == models::Recompute::full)
    errors.add(key, what + " cannot run with training.recompute_granularity \"full\" (Megatron-Core supports full recompute only with full_iteration)");
}

void check_training(Scenario& s, const ParallelKeys& keys, const FrameworkChoice& chosen, Errors& errors) {
  models::TrainingConfig& t = s.training;
  const models::ModelConfig& m = s.model;
  if (!check_token_counts(t, m, errors) || !derive_data_parallel(s, keys.dp, errors)) return;
  check_layout(t, m, errors);
  check_split_backward_schedule(t, errors);
  check_cpu_offload(t, m, errors);
  check_cuda_graphs(t, errors);
  check_batch_split(t, m, errors);
  if (keys.hybrid_shard) resolve_hybrid_shard(s, errors);
  check_overlaps(t, errors);
  check_zero3_collectives(t, m, errors);
  check_dispatcher(s, errors);
  check_sequence_and_expert_parallel(t, m, errors);
  if (m.hybrid()) check_hybrid_model(t, m, errors);
  check_precision(t, s.gpu, errors);
  t.fp8_transposed_copy = s.gpu.fp8_needs_transposed_copy;  // the cast's second copy (models/workload/transformer.cpp)
  // Backstop: whatever else the workload model cannot build (each check above has a precise path; this
  // catches the rest, e.g. ffn_hidden_size not divisible by TP).
  if (errors.lines.empty())
    for (const auto& p : models::layout_problems(m, t)) errors.add("training", p);
  // What the framework cannot run, and its gradient bucket for this data-parallel size (a scenario's
  // simulation.grad_bucket_params replaces it: parse_scenario).
  const nlohmann::json facts = training_facts(t, s.gpu.name);
  if (const FrameworkRule* rule = first_refusal(*chosen.framework, facts)) errors.add(rule->path, refusal_message(*chosen.framework, *rule, facts));
  t.grad_bucket_params = chosen.release->grad_bucket.params(t.dp, models::element_bytes(t.grad_reduce_dtype), t.overlap_grad_reduce);
}

void read_training(const json* v, Scenario& s, Errors& errors) {
  if (!expect_section(v, "training", "seq_length, global_batch_size, ...", errors)) return;
  ObjectReader r(*v, "training", errors);
  models::TrainingConfig& t = s.training;
  // The framework first: its rules and defaults apply to everything below (sim/scenario/framework.hpp).
  const FrameworkChoice chosen = read_framework(r, t, errors);
  const ParallelKeys keys = read_parallel_sizes(r, s, errors);
  read_recompute(r, s, errors);
  read_finetune(r, s, errors);
  read_pipeline_schedule(r, t);
  read_data_parallel_mechanisms(r, s, chosen.release);
  t.tokens_to_train = r.number("tokens_to_train", false).value_or(0);
  t.memory_reserve_gib = r.number("memory_reserve_gib", false).value_or(t.memory_reserve_gib);
  t.allocator_fragmentation = r.fraction("allocator_fragmentation").value_or(t.allocator_fragmentation);
  read_memory_savings(r, s, chosen.release, errors);
  read_pipeline_split(r, t);
  r.finish();

  if (!errors.lines.empty()) return;  // the checks below need sane values
  check_training(s, keys, chosen, errors);
}

void read_simulation(const json* v, Scenario& s, Errors& errors) {
  if (!v || !expect_object(v, "simulation", errors)) return;
  ObjectReader r(*v, "simulation", errors);
  if (auto n = r.named("network", kNetworkBackendNames)) s.simulation.network = *n;
  if (auto a = r.choice("nccl_algorithm")) {
    s.simulation.nccl_algorithm = *a;
    if ((*a == "collnet_direct" || *a == "collnet_chain") && !s.cluster.sharp)
      errors.add("simulation.nccl_algorithm", "\"" + *a + "\" is NCCL's CollNet (SHARP in-network reduction) and needs a "
                                              "fabric that has it (cluster.inter_node.sharp: true)");
    if (*a == "collnet_direct" && s.cluster.sharp && !s.cluster.intra.switched)
      errors.add("simulation.nccl_algorithm", "\"collnet_direct\" needs NVSwitch nodes (NCCL runs it only there); "
                                              "cluster.intra_node \"" + s.cluster.intra.name + "\" has none (use \"collnet_chain\")");
    if ((*a == "nvls" || *a == "nvls_tree") && !(s.cluster.intra.nvls && s.cluster.intra.switched))
      errors.add("simulation.nccl_algorithm", "\"" + *a + "\" needs NVSwitch with in-switch reduction (NVLink SHARP: H100 / H200 / "
                                              "B200 nodes, NVL72); cluster.intra_node \"" + s.cluster.intra.name + "\" has none");
  }
  if (auto sym = r.boolean("symmetry")) s.simulation.symmetry = *sym;
  if (auto c = r.number("comm_compute_contention", false)) s.simulation.comm_compute_contention = *c;
  if (auto b = r.number("grad_bucket_params", false)) s.simulation.grad_bucket_params = *b;
  if (auto t = r.number("max_tasks", false)) s.simulation.max_tasks = *t;
  if (auto g = r.number("max_memory_gib", false)) s.simulation.max_memory_gib = *g;
  r.finish();
}

// "jobs": each job read like a single-job scenario on its own nodes (see the header).
void read_jobs(const json& v, Scenario& s, Errors& errors) {
  if (!v.is_array() || v.empty()) {
    errors.add("jobs", "expected a non-empty array of jobs ({\"name\", \"nodes\", \"model\", \"training\"}), got " +
                           (v.is_array() ? std::string("an empty array") : type_name(v)));
    return;
  }
  const bool cluster_ok = errors.lines.empty();  // node checks and training checks need a sane cluster
  const int gpn = s.cluster.gpus_per_node;
  std::map<int, std::size_t> owner;  // node -> job
  int next_node = 0;                 // where a job placed by count starts by default
  for (std::size_t j = 0; j < v.size(); ++j) {
    const std::string path = "jobs[" + std::to_string(j) + "]";
    const json& item = v[j];
    if (!item.is_object()) {
      errors.add(path, "expected an object ({\"name\", \"nodes\", \"model\", \"training\"}), got " + type_name(item));
      continue;
    }
    ObjectReader r(item, path, errors);
    Job job;
    job.name = r.string("name", false).value_or("job" + std::to_string(j));
    for (std::size_t k = 0; k < s.jobs.size(); ++k)
      if (s.jobs[k].name == job.name)
        errors.add(path + ".name", "\"" + job.name + "\" is already the name of jobs[" + std::to_string(k) + "] (names must differ)");

    // Placement: a node count (from first_node), a GPU count of whole nodes, or a list of nodes.
    const std::size_t errors_before = errors.lines.size();
    const json* nodes = r.raw("nodes");
    const json* gpus = r.raw("gpus");
    const auto first_node = r.integer("first_node", false);
    std::optional<std::int64_t> count;
    bool placed = false;
    if (nodes && gpus) {
      errors.add(path, "give either nodes or gpus, not both");
    } else if (nodes && !nodes->is_array() && !nodes->is_number()) {
      errors.add(path + ".nodes", "expected a node count or a list of node indices, got " + type_name(*nodes) + " " + nodes->dump());
    } else if (nodes && nodes->is_array()) {
      if (first_node) errors.add(path + ".first_node", "only with a node count (nodes is a list here)");
      if (nodes->empty()) errors.add(path + ".nodes", "expected at least one node index");
      std::set<int> seen;
      for (std::size_t k = 0; k < nodes->size(); ++k) {
        const json& n = (*nodes)[k];
        const std::string np = path + ".nodes[" + std::to_string(k) + "]";
        if (!(n.is_number_integer() || n.is_number_unsigned()) || n.get<double>() < 0) {
          errors.add(np, "expected a node index (an integer >= 0), got " + type_name(n) + " " + n.dump());
          continue;
        }
        const double d = n.get<double>();
        // Below the table's largest cluster whatever cluster.nodes says (it may itself be invalid here).
        const double max_index = params::find("cluster.nodes")->max - 1;
        if (d > max_index) {
          errors.add(np, "node " + n.dump() + " is out of range (expected a node index <= " + std::to_string(static_cast<long long>(max_index)) + ")");
          continue;
        }
        if (cluster_ok && d >= s.cluster.nodes) {
          errors.add(np, "node " + n.dump() + " is outside the cluster (cluster.nodes " + std::to_string(s.cluster.nodes) + ": 0.." +
                             std::to_string(s.cluster.nodes - 1) + ")");
          continue;
        }
        const int node = static_cast<int>(d);
        if (!seen.insert(node).second) errors.add(np, "node " + std::to_string(node) + " is listed twice");
        job.nodes.push_back(node);
      }
      placed = true;
    } else if (nodes || gpus) {
      if (nodes) {
        count = r.integer("nodes", true);
      } else if (auto g = r.integer("gpus", true)) {
        if (*g % gpn != 0)
          errors.add(path + ".gpus", std::to_string(*g) + " is not a whole number of nodes (cluster.gpus_per_node " + std::to_string(gpn) +
                                         "); jobs run on whole nodes");
        else
          count = *g / gpn;
      }
      const std::int64_t first = first_node.value_or(next_node);
      if (count && cluster_ok) {
        if (first + *count > s.cluster.nodes) {
          errors.add(path + (nodes ? ".nodes" : ".gpus"),
                     "nodes " + std::to_string(first) + ".." + std::to_string(first + *count - 1) + " reach outside the cluster (cluster.nodes " +
                         std::to_string(s.cluster.nodes) + (first_node ? ")" : "; jobs placed by count follow each other: give first_node or fewer nodes)"));
        } else {
          for (std::int64_t n = first; n < first + *count; ++n) job.nodes.push_back(static_cast<int>(n));
          placed = true;
        }
      }
    } else {
      errors.add(path, "missing nodes (a node count, or a list of node indices) or gpus (expected where the job runs)");
    }
    placed = placed && cluster_ok && errors.lines.size() == errors_before;
    if (placed) {
      for (int n : job.nodes) {
        auto [it, fresh] = owner.emplace(n, j);
        if (!fresh) {
          errors.add(path + ".nodes", "node " + std::to_string(n) + " is already used by jobs[" + std::to_string(it->second) + "] (\"" +
                                          s.jobs[it->second].name + "\"); jobs need disjoint nodes");
          break;
        }
      }
      if (!job.nodes.empty()) next_node = *std::max_element(job.nodes.begin(), job.nodes.end()) + 1;
    }

    // The job's model and training, validated as a scenario of the job's GPUs.
    Errors job_errors{errors.file, {}, path + "."};
    Scenario view = s;
    view.cluster.nodes = std::max<int>(1, static_cast<int>(job.nodes.size()));
    read_model(r.raw("model"), view, job_errors);
    if (placed && errors.lines.size() == errors_before && job_errors.lines.empty())
      read_training(r.raw("training"), view, job_errors);
    else if (!r.raw("training"))
      job_errors.add("training", "missing (expected seq_length, global_batch_size, ...)");
    errors.lines.insert(errors.lines.end(), job_errors.lines.begin(), job_errors.lines.end());
    r.finish();
    job.model = view.model;
    job.training = view.training;
    s.jobs.push_back(std::move(job));
  }
}

// The whole-run sections (goodput_spec.hpp), read by their own reader; a run model needs a run length.
void read_run_sections_into(const json& doc, ObjectReader& top, Scenario& s, Errors& errors) {
  for (const auto& key : run_section_keys()) top.raw(key);
  std::vector<SectionProblem> problems;
  s.run = read_run_sections(doc, problems);
  for (const auto& [path, what] : problems) errors.add(path, what);
  if ((s.run.resilience || s.run.data_pipeline) && s.multi_job())
    errors.add(s.run.resilience ? "resilience" : "data_pipeline", "not supported with jobs (a single-job scenario only)");
  else if (s.run.resilience && errors.lines.empty() && s.training.tokens_to_train <= 0)
    errors.add("resilience", "needs training.tokens_to_train > 0 (the length of the run whose goodput is asked)");
}

}  // namespace

Scenario Scenario::job_scenario(std::size_t j) const {
  CS_CHECK(j < jobs.size());
  Scenario v = *this;
  v.jobs.clear();
  v.jobs.shrink_to_fit();  // a view kept its copy's buffer for every job: 2,048 jobs' views took 2.4 GB (issue 32)
  v.model = jobs[j].model;
  v.training = jobs[j].training;
  v.cluster.nodes = static_cast<int>(jobs[j].nodes.size());
  if (!heterogeneity.groups.empty()) {  // node groups: the job's price and power are its own nodes'
    v.heterogeneity.view_nodes = jobs[j].nodes;
    v.price_per_gpu_hour_usd = v.heterogeneity.node_mean(group_price, price_per_gpu_hour_usd);
  }
  return v;
}

std::vector<int> Scenario::job_gpus(std::size_t j) const {
  CS_CHECK(j < jobs.size());
  std::vector<int> gpus;
  const int gpn = cluster.gpus_per_node;
  for (int node : jobs[j].nodes)
    for (int g = 0; g < gpn; ++g) gpus.push_back(node * gpn + g);
  return gpus;
}

double Scenario::contention() const {
  if (simulation.comm_compute_contention >= 0) return simulation.comm_compute_contention;
  return gpu.sm_count > 0 ? simulation.nccl_channels / gpu.sm_count : 0.1;
}

json read_json_file(const std::string& path) {
  return files::as_input_error(
      [&] { return files::parse_json(files::read_input_file(path, files::kMaxScenarioBytes, "scenario", "cannot open file"), path); });
}

namespace {

// A name-or-object key whose object form adjusts a catalog entry it names (its "name" is one of the
// catalog's choices, as cluster.intra_node.name), rather than defining a custom one from scratch
// (cluster.gpu, cluster.inter_node.link: their object form needs every field).
bool adjusts_a_catalog_entry(const std::string& dotted_path) {
  const params::Param* p = params::find(dotted_path);
  const params::Param* name = params::find(dotted_path + ".name");
  return p && p->type == params::Type::name_or_object && name && name->type == params::Type::choice;
}

}  // namespace

void apply_override(json& doc, const std::string& assignment, const std::string& file) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError(file + ": --set " + assignment + ": expected path=value (e.g. training.tensor_model_parallel_size=4)");
  if (!files::valid_utf8(assignment))
    throw InputError(file + ": --set " + files::quoted_for_message(assignment) +
                     ": not valid UTF-8 (a path or value must be text)");
  const std::string path = assignment.substr(0, eq);
  const std::string text = assignment.substr(eq + 1);
  json value = files::parse_json_value(text).value_or(json(text));  // a bare word is a string
  // A topology file moves the scenario onto the file's cluster: the file replaces the wiring and the
  // counts the scenario gave (which would be refused beside it, or contradict it).
  if (path == "cluster.topology_file" && doc.is_object() && doc.contains("cluster") && doc["cluster"].is_object())
    for (const char* key : {"intra_node", "inter_node", "nodes", "gpus_per_node"}) doc["cluster"].erase(key);
  // Components: split at dots, and "key[3]" is "key" then "3".
  std::vector<std::string> keys;
  std::size_t start = 0;
  while (true) {
    const auto dot = path.find('.', start);
    std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    while (!key.empty() && key.back() == ']' && key.find('[') != std::string::npos && key.find('[') > 0) {
      const auto open = key.rfind('[');
      keys.push_back(key.substr(0, open));
      key = key.substr(open + 1, key.size() - open - 2);
    }
    if (key.empty()) throw InputError(file + ": --set " + assignment + ": empty component in path \"" + path + "\"");
    keys.push_back(key);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  json* node = &doc;
  std::string walked;  // the components so far, for messages
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::string& key = keys[i];
    const bool last = i + 1 == keys.size();
    if (node->is_array()) {
      // An element of an array (jobs.1.training...): an existing index only.
      const bool digits = key.find_first_not_of("0123456789") == std::string::npos && key.size() <= 9;
      if (!digits || std::stoul(key) >= node->size())
        throw InputError(file + ": --set " + path + ": \"" + walked + "\" is an array of " + std::to_string(node->size()) +
                         " (expected an index 0.." + std::to_string(node->size() - 1) + ", got \"" + key + "\")");
      node = &(*node)[std::stoul(key)];
    } else if (node->is_object()) {
      if (last) {
        (*node)[key] = value;
        return;
      }
      node = &(*node)[key];
      if (node->is_null()) *node = json::object();
    } else if (adjusts_a_catalog_entry(walked) && node->is_string()) {
      // --set cluster.intra_node.sockets=2 on "intra_node": "pcie": the object form names the same catalog
      // entry and adjusts one key, so the name becomes {"name": ...} and the walk goes on.
      *node = json{{"name", *node}};
      --i;
      continue;
    } else {
      // e.g. --set cluster.gpu.hbm_gib=80 on a named GPU: replace by an object only if the user meant it.
      throw InputError(file + ": --set " + path + ": \"" + walked + "\" is not an object");
    }
    if (last) {
      *node = value;
      return;
    }
    walked += (walked.empty() ? "" : ".") + key;
  }
}

void pin_price_to_gpu(json& doc) {
  if (!doc.is_object() || !doc.contains("cluster") || !doc["cluster"].is_object()) return;
  json& cluster = doc["cluster"];
  const auto price = cluster.find("price_per_gpu_hour");
  const auto gpu = cluster.find("gpu");
  if (price == cluster.end() || !price->is_number() || gpu == cluster.end()) return;
  std::string name;
  if (gpu->is_string()) name = gpu->get<std::string>();
  if (gpu->is_object() && gpu->contains("name") && (*gpu)["name"].is_string()) name = (*gpu)["name"].get<std::string>();
  if (name.empty()) return;
  *price = json{{name, *price}};
}

std::string price_basis_note(const json& doc, const std::vector<std::string>& gpu_types) {
  json pinned = doc;
  pin_price_to_gpu(pinned);
  const json* table = nullptr;
  if (pinned.is_object() && pinned.contains("cluster") && pinned["cluster"].is_object() &&
      pinned["cluster"].contains("price_per_gpu_hour") && pinned["cluster"]["price_per_gpu_hour"].is_object())
    table = &pinned["cluster"]["price_per_gpu_hour"];
  std::string types, prices;
  for (const auto& type : gpu_types) {
    if (table && table->contains(type)) continue;
    const models::GpuSpec* spec = models::find_gpu(type);
    if (!spec) continue;  // a custom GPU (its own price), or a name the loader refuses with its own message
    std::ostringstream o;
    o << "$" << spec->price_per_gpu_hour_usd;
    types += (types.empty() ? "" : ", ") + type;
    prices += (prices.empty() ? "" : ", ") + o.str();
  }
  if (types.empty()) return "";
  return "cluster.price_per_gpu_hour has no price for " + types + ": using the catalog list price per GPU-hour (" + prices + ")";
}

Scenario parse_scenario(const json& doc, const std::string& file) {
  Errors errors{file, {}, {}};
  Scenario s;
  s.file = file;
  if (!doc.is_object()) throw InputError(file + ": (top level): expected an object, got " + type_name(doc));
  ObjectReader top(doc, "", errors);
  s.name = top.string("name", false).value_or(std::filesystem::path(file).stem().string());
  if (auto desc = top.raw("description"); desc && !desc->is_string()) errors.add("description", "expected a string");
  read_cluster(top.raw("cluster"), s, errors);
  if (doc.contains("jobs")) {
    // Several jobs, each with its own model and training: no top-level ones.
    for (const char* key : {"model", "training"})
      if (top.has(key)) errors.add(key, "not allowed with jobs (each job has its own model and training)");
    read_jobs(doc.at("jobs"), s, errors);
    if (!s.jobs.empty()) s.model = s.jobs.front().model, s.training = s.jobs.front().training;
  } else {
    read_model(top.raw("model"), s, errors);
    if (errors.lines.empty()) read_training(top.raw("training"), s, errors);
    else top.raw("training");
  }
  if (auto cal = top.string("calibration", false)) {
    std::filesystem::path p(*cal);
    if (p.is_relative()) p = std::filesystem::path(file).parent_path() / p;
    s.calibration = p.lexically_normal().string();
    try {
      models::CalibrationProfile profile = models::read_profile(s.calibration);
      s.compute_profile = std::move(profile.compute);
      if (!profile.comm.fits.empty()) s.comm_profile = std::move(profile.comm);
    } catch (const InputError& e) {
      for (const auto& m : e.messages()) errors.add("calibration", m);
    }
  }
  read_simulation(top.raw("simulation"), s, errors);
  // A bucket size the scenario gives is every job's (the framework's rule sized it per job otherwise).
  if (const auto sim = doc.find("simulation"); sim != doc.end() && sim->is_object() && sim->contains("grad_bucket_params")) {
    s.training.grad_bucket_params = 0;
    for (Job& j : s.jobs) j.training.grad_bucket_params = 0;
  }
  read_run_sections_into(doc, top, s, errors);
  top.raw("jobs");  // read above; known here so that a misspelt top-level key may be told "jobs"
  top.finish();
  if (!errors.lines.empty()) throw InputError(std::move(errors.lines));
  return s;
}

int placed_domain_gpus(const Scenario& s) {
  const int domain = s.cluster.intra.domain_gpus;
  const int G = s.cluster.gpus_per_node;
  if (s.topology || s.multi_job() || domain <= G || G <= 0) return 0;
  const auto& t = s.training;
  const int span = std::max(t.tp * t.cp, t.expert_tp() * t.ep);
  const int block = std::lcm(span, G);  // whole nodes (compute trays)
  if (span <= 0 || block > domain || domain % block == 0) return 0;
  return domain / block * block;
}

std::string placement_note(const Scenario& s) {
  const int used = placed_domain_gpus(s);
  if (used == 0) return {};
  const auto& t = s.training;
  return "placement: the job uses " + std::to_string(used) + " GPUs of each " + std::to_string(s.cluster.intra.domain_gpus) +
         "-GPU scale-up domain, so that its TP x CP groups (" + std::to_string(t.tp * t.cp) + " GPUs) and expert ETP x EP groups (" +
         std::to_string(t.expert_tp() * t.ep) + ") stay inside one (Slurm topology/block segments)";
}

std::shared_ptr<const topo::Cluster> make_cluster(const Scenario& s) {
  if (s.topology) return s.topology;
  if (const int used = placed_domain_gpus(s); used > 0) {
    topo::ClusterSpec placed = s.cluster;
    placed.intra.domain_gpus = used;
    return std::make_shared<const topo::Cluster>(placed);
  }
  return std::make_shared<const topo::Cluster>(s.cluster);
}

void apply_override_pinned(json& doc, const std::string& assignment, const std::string& file) {
  if (assignment.rfind("cluster.gpu=", 0) == 0) pin_price_to_gpu(doc);  // the file's price stays with the file's GPU
  apply_override(doc, assignment, file);
}

void apply_overrides(json& doc, const std::vector<std::string>& overrides, const std::string& file) {
  // A topology file first: it clears the cluster's wiring and counts (apply_override), which the other
  // overrides may then set again, whatever their order on the command line.
  std::vector<std::string> ordered = overrides;
  std::stable_partition(ordered.begin(), ordered.end(), [](const std::string& o) { return o.rfind("cluster.topology_file=", 0) == 0; });
  for (const auto& o : ordered) apply_override_pinned(doc, o, file);
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  json doc = read_json_file(path);
  apply_overrides(doc, overrides, path);
  try {
    return parse_scenario(doc, path);
  } catch (const InputError& e) {
    // An error at a path a --set wrote says so: the value is not in the file the line names.
    std::vector<std::string> lines;
    for (std::string line : e.messages()) {
      for (const auto& o : overrides) {
        const std::string set_path = o.substr(0, o.find('='));
        if (line.rfind(path + ": " + set_path + ":", 0) == 0) {
          line += " (the value given by --set " + o + ")";
          break;
        }
      }
      lines.push_back(std::move(line));
    }
    throw InputError(std::move(lines));
  }
}

}  // namespace cs::sim
