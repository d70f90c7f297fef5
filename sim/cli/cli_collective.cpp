// clustersim collective --scenario S.json --op OP [--ranks N] [--bytes MIN..MAX] [--network flow|analytical]
//                       [--algo ring|tree|nvls|hierarchical] [--dtype float] [--json] [--set path=value ...]
// A simulated nccl-tests run (sim/network/collective_run.hpp) over the first N GPUs of the scenario's cluster,
// sizes doubling from MIN to MAX, printed in nccl-tests' own table layout (shared/ECOSYSTEM.md 1.1) so a
// user can lay it beside a real all_reduce_perf log (and `clustersim calibrate` can import it). The
// out-of-place and in-place blocks are the same simulated number (#wrong N/A, as with nccl-tests -c 0);
// two extra columns name the algorithm and protocol the simulated NCCL chose.
#include <cctype>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "models/compute/comm_profile.hpp"
#include "sim/cli/cli.hpp"
#include "sim/cli/cli_options.hpp"
#include "sim/cli/comm_calibration.hpp"
#include "sim/network/collective_run.hpp"
#include "sim/base/input_error.hpp"
#include "sim/scenario/enum_names.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/base/units.hpp"

namespace po = boost::program_options;
using nlohmann::json;

namespace cs::sim::cli {
namespace {

using models::CollectiveKind;

const char* const kUsage =
    "usage: clustersim collective --scenario S.json --op OP [--ranks N] [--bytes MIN..MAX] [--network flow|analytical]\n"
    "                             [--algo ring|tree|nvls|hierarchical] [--dtype float] [--profile P.json] [--json]\n"
    "                             [--set path=value ...]\n\n"
    "Simulates one NCCL collective over the first N GPUs of the scenario's cluster (node-major, as nccl-tests\n"
    "places its ranks) for sizes doubling from MIN to MAX, and prints an nccl-tests-style table: size (B), count,\n"
    "type, redop, root, time (us), algbw and busbw (GB/s = 1e9 B/s; busbw with nccl-tests' factors), plus the\n"
    "algorithm and protocol chosen. OP: all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, send_recv.\n"
    "Sizes take binary suffixes as nccl-tests -b/-e (K, M, G: 128M = 134217728); for all_gather, reduce_scatter and\n"
    "all_to_all the size is the whole buffer (per-rank count x ranks), as nccl-tests prints it. A calibration profile\n"
    "(the scenario's \"calibration\", or --profile) replaces the NCCL model's constants for the collectives it fitted.\n\noptions";

// Parses "8", "128K", "1M", "8G" (binary multiples, as nccl-tests' -b/-e); nullopt if malformed.
std::optional<double> parse_size(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == 0 || i > 15) return std::nullopt;
  double v = std::stod(text.substr(0, i));
  const std::string suffix = text.substr(i);
  if (suffix.empty() || suffix == "B" || suffix == "b") return v;
  const char c = static_cast<char>(std::toupper(static_cast<unsigned char>(suffix[0])));
  if (suffix.size() > 2 || (suffix.size() == 2 && std::toupper(static_cast<unsigned char>(suffix[1])) != 'B'))
    return std::nullopt;
  if (c == 'K') return v * kKiB;
  if (c == 'M') return v * kMiB;
  if (c == 'G') return v * kGiB;
  return std::nullopt;
}

int dtype_size(const std::string& t) {
  if (t == "int8" || t == "uint8" || t == "char" || t == "fp8" || t == "f8e4m3" || t == "f8e5m2") return 1;
  if (t == "half" || t == "float16" || t == "bfloat16" || t == "bf16" || t == "fp16") return 2;
  if (t == "float" || t == "float32" || t == "int32" || t == "int" || t == "uint32") return 4;
  if (t == "double" || t == "float64" || t == "int64" || t == "uint64") return 8;
  return 0;
}

// nccl-tests' getFloatStr: %.2f, then %.1f, %.0f, %.1e, whichever first fits the column.
std::string float_str(double v, int width) {
  char buf[64];
  for (const char* f : {"%.2f", "%.1f", "%.0f"}) {
    std::snprintf(buf, sizeof buf, f, v);
    if (static_cast<int>(std::string(buf).size()) <= width) return buf;
  }
  std::snprintf(buf, sizeof buf, "%.1e", v);
  return buf;
}

std::string pad(const std::string& s, int width) {
  return std::string(static_cast<std::size_t>(std::max(0, width - static_cast<int>(s.size()))), ' ') + s;
}

}  // namespace

int collective(const std::vector<std::string>& args) {
  po::options_description opts(kUsage);
  with_help(opts)("scenario", po::value<std::string>()->value_name("FILE"), "scenario JSON whose cluster to use (required)")
      ("op", po::value<std::string>()->value_name("OP"), "collective (required)")
      ("ranks", po::value<std::string>()->value_name("N"), "number of GPUs (default: every GPU of the cluster)")
      ("bytes", po::value<std::string>()->value_name("MIN..MAX")->default_value("8..8G"), "sizes, doubling")
      ("network", po::value<std::string>()->value_name("MODEL"), "flow or analytical (default: the scenario's)")
      ("algo", po::value<std::string>()->value_name("ALGO"), "force ring, tree, nvls or hierarchical (default: NCCL-like choice)")
      ("dtype", po::value<std::string>()->value_name("TYPE")->default_value("float"), "element type, for the count column")
      ("profile", po::value<std::string>()->value_name("P.json"),
       "calibration profile whose fitted NCCL constants to use (default: the scenario's \"calibration\")")
      ("json", "print one JSON object instead of the table")
      ("set", po::value<std::vector<std::string>>()->composing()->value_name("PATH=VALUE"), "override a scenario value (repeatable)");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts << "\n";
    return kExitOk;
  }
  const std::string me = "clustersim collective: ";
  if (!vm.count("scenario")) throw InputError(with_usage(me + "missing --scenario S.json", opts, "collective"));
  if (!vm.count("op")) throw InputError(with_usage(me + "missing --op (all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, send_recv)", opts, "collective"));
  const std::string op = vm["op"].as<std::string>();
  const auto kind = models::parse_collective(op);
  if (!kind)
    throw InputError(me + "--op: unknown collective '" + op +
                     "' (expected all_reduce, all_gather, reduce_scatter, all_to_all, broadcast or send_recv)");
  const std::string dtype = vm["dtype"].as<std::string>();
  const int type_size = dtype_size(dtype);
  if (type_size == 0)
    throw InputError(me + "--dtype: unknown type '" + dtype + "' (expected int8, half, bfloat16, float, double, int32, int64...)");

  const std::string range = vm["bytes"].as<std::string>();
  const auto dots = range.find("..");
  const std::string lo_text = dots == std::string::npos ? range : range.substr(0, dots);
  const std::string hi_text = dots == std::string::npos ? range : range.substr(dots + 2);
  const auto lo = parse_size(lo_text), hi = parse_size(hi_text);
  if (!lo || !hi || *lo < 1 || *hi < *lo || *hi > 1099511627776.0)
    throw InputError(me + "--bytes: '" + range + "' is not MIN..MAX with 1 <= MIN <= MAX <= 1T (sizes like 8, 128K, 1M, 8G)");

  const auto overrides = vm.count("set") ? vm["set"].as<std::vector<std::string>>() : std::vector<std::string>{};
  const Scenario scenario = load_scenario(vm["scenario"].as<std::string>(), overrides);
  const int total = scenario.num_gpus();
  int ranks = total;
  if (vm.count("ranks")) {
    const std::string r = vm["ranks"].as<std::string>();
    const std::optional<long> v = whole_integer(r);
    if (!v || *v < 2 || *v > total)
      throw InputError(me + "--ranks: '" + r + "' must be an integer from 2 to the cluster's " + std::to_string(total) + " GPUs");
    ranks = static_cast<int>(*v);
  }
  if (ranks < 2) throw InputError(me + "the scenario's cluster has one GPU; a collective needs at least 2");
  CollectiveRunOptions ro;
  ro.network = scenario.simulation.network;
  if (vm.count("network")) {
    const std::string name = vm["network"].as<std::string>();
    const auto backend = parse_name(kNetworkBackendNames, name);
    if (!backend) throw InputError(me + "--network: '" + name + "' (expected flow or analytical)");
    ro.network = *backend;
  }
  ro.forced_algorithm = vm.count("algo") ? vm["algo"].as<std::string>() : scenario.simulation.nccl_algorithm;
  if (!ro.forced_algorithm.empty() && !parse_name(kNcclAlgorithmNames, ro.forced_algorithm))
    throw InputError(me + "--algo: '" + ro.forced_algorithm + "' (expected ring, tree, nvls or hierarchical)");

  std::optional<models::CalibrationProfile> profile;
  if (vm.count("profile")) profile = models::read_profile(vm["profile"].as<std::string>());
  const CommCalibration calibration =
      comm_calibration(scenario, profile ? &*profile : nullptr, vm.count("profile") ? vm["profile"].as<std::string>() : "");
  warn(calibration);
  ro.calibration = calibration.constants;

  const std::shared_ptr<const topo::Cluster> graph = make_cluster(scenario);  // cluster.topology_file's, or built
  const topo::Cluster& cluster = *graph;
  const std::vector<int> gpus = first_gpus(ranks);
  // nccl-tests: all-gather, reduce-scatter and all-to-all split the buffer over the ranks.
  const bool split = *kind == CollectiveKind::all_gather || *kind == CollectiveKind::reduce_scatter ||
                     *kind == CollectiveKind::all_to_all;
  const double unit = static_cast<double>(type_size) * (split ? ranks : 1);
  const bool reducing = *kind == CollectiveKind::all_reduce || *kind == CollectiveKind::reduce_scatter;
  const char* redop = reducing ? "sum" : "none";
  const int root = *kind == CollectiveKind::broadcast ? 0 : -1;
  const std::string perf = std::string(models::to_string(*kind)) + "_perf";

  json rows = json::array();
  std::ostringstream table;
  double busbw_sum = 0;
  int rows_n = 0;
  for (double size = *lo; size <= *hi; size *= 2) {
    const double count = std::floor(size / unit);
    const double bytes = count * unit;
    const CollectiveRunResult r = run_collective(cluster, *kind, bytes, gpus, ro);
    const double t_us = to_microseconds(r.time);
    const char* algo = to_string(r.choice.algorithm);
    const char* proto = to_string(r.choice.protocol);
    busbw_sum += 2 * r.busbw_GBps;  // out-of-place and in-place, as nccl-tests averages
    rows_n += 2;
    char pre[128];
    std::snprintf(pre, sizeof pre, "%12.0f  %12.0f  %8s  %6s  %6i", bytes, count, dtype.c_str(), redop, root);
    std::string body;
    for (int b = 0; b < 2; ++b)
      body += "  " + pad(float_str(t_us, 7), 7) + "  " + pad(float_str(r.algbw_GBps, 6), 6) + "  " +
              pad(float_str(r.busbw_GBps, 6), 6) + "  " + pad("N/A", 6);
    table << pre << body << "  " << pad(algo, 12) << "  " << pad(proto, 6) << "\n";
    rows.push_back({{"size", bytes}, {"count", count}, {"type", dtype}, {"redop", redop}, {"root", root},
                    {"time_us", t_us}, {"algbw_GBps", r.algbw_GBps}, {"busbw_GBps", r.busbw_GBps},
                    {"algorithm", algo}, {"protocol", proto}});
  }
  const double avg = rows_n ? busbw_sum / rows_n : 0;
  if (vm.count("json")) {
    json out = {{"collective", models::to_string(*kind)}, {"ranks", ranks}, {"nodes", group_geometry(cluster, gpus).nodes},
                {"network", std::string(to_string(ro.network))}, {"algorithm", ro.forced_algorithm.empty() ? "default" : ro.forced_algorithm},
                {"scenario", scenario.name}, {"results", rows}, {"average_busbw_GBps", avg}};
    if (calibration.constants.any()) out["comm_calibration"] = comm_calibration_json(calibration);
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << "# clustersim collective (simulated, " << to_string(ro.network) << " network): " << scenario.name << "\n";
  std::cout << "# Collective test starting: " << perf << "\n";
  std::cout << "# nThread 1 nGpus " << ranks << " minBytes " << static_cast<long long>(*lo) << " maxBytes "
            << static_cast<long long>(*hi) << " step: 2(factor) warmup iters: 0 iters: 1 agg iters: 1 validation: 0 graph: 0\n#\n";
  if (ranks <= 1024) {
    std::cout << "# Using devices\n";
    for (int g : gpus) {
      char line[160];
      const int node = cluster.node_of_gpu(g);
      std::snprintf(line, sizeof line, "#  Rank %2d Group  0 Pid %6d on %10s device %2d [sim] %s\n", g, 0,
                    ("node" + std::to_string(node)).c_str(), g % scenario.cluster.gpus_per_node, scenario.gpu.name.c_str());
      std::cout << line;
    }
  }
  if (!ro.forced_algorithm.empty()) std::cout << "# NCCL INFO NCCL_ALGO set by environment to " << ro.forced_algorithm << "\n";
  if (calibration.constants.any()) std::cout << "# " << comm_calibration_text(calibration);
  std::cout << "#\n"
               "#                                                              out-of-place                       in-place\n"
               "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong     algorithm   proto\n"
               "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)\n";
  std::cout << table.str();
  std::cout << "# Out of bounds values : 0 OK\n";
  char avg_line[64];
  std::snprintf(avg_line, sizeof avg_line, "# Avg bus bandwidth    : %g \n", avg);
  std::cout << avg_line << "#\n# Collective test concluded: " << perf << "\n";
  return kExitOk;
}

}  // namespace cs::sim::cli
