// clustersim-flow-bench [--gpus N,...] [--bytes B] [--algo ring|tree]
//
// Flow-level network speed: one all-reduce of 1 GiB (ring by default) over 1,024 and 16,384 H100 GPUs
// (8 per node, 8 NDR400 NICs per node, non-blocking two-tier fat-tree), run through the engine with the
// flow network (sim/network/collective_run.hpp). Prints, per size: flows put on the fabric, wall time, flows per
// second and the simulated time / busbw. A number, not a test.
#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "sim/base/huge_pages.hpp"
#include "sim/network/collective_run.hpp"
#include "topologies/cluster.hpp"
#include "topologies/link_catalog.hpp"

using namespace cs::sim;

int main(int argc, char** argv) {
  cs::restart_with_huge_page_malloc(argv);  // as the CLI does (sim/base/huge_pages.hpp)
  std::vector<int> sizes = {1024, 16384};
  double bytes = 1073741824.0;
  std::string algo = "ring";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--gpus") {
      sizes.clear();
      std::istringstream in(v);
      std::string x;
      while (std::getline(in, x, ',')) sizes.push_back(std::stoi(x));
    } else if (a == "--bytes") {
      bytes = std::stod(v);
    } else if (a == "--algo") {
      algo = v;
    } else {
      std::fprintf(stderr, "usage: clustersim-flow-bench [--gpus N,...] [--bytes B] [--algo ring|tree]\n");
      return 2;
    }
  }
  std::printf("%8s  %6s  %10s  %10s  %12s  %14s  %10s\n", "gpus", "algo", "flows", "wall_s", "flows_per_s", "simulated_us", "busbw_GBps");
  for (int gpus : sizes) {
    cs::topo::ClusterSpec s;
    s.gpus_per_node = 8;
    s.nodes = gpus / 8;
    s.intra = *cs::topo::find_intra_node("nvswitch");
    s.intra.gpu_bandwidth_GBps = 450;
    s.intra.nvls = true;
    s.nic = *cs::topo::find_net_link("ib-ndr400");
    s.nics_per_node = 8;
    const auto t0 = std::chrono::steady_clock::now();
    const cs::topo::Cluster cluster(s);
    const auto t1 = std::chrono::steady_clock::now();
    const auto r = run_collective(cluster, cs::models::CollectiveKind::all_reduce, bytes, first_gpus(gpus), {cs::sim::NetworkBackend::flow, algo});
    const auto t2 = std::chrono::steady_clock::now();
    const double wall = std::chrono::duration<double>(t2 - t1).count();
    std::printf("%8d  %6s  %10llu  %10.3f  %12.0f  %14.1f  %10.2f   (cluster build %.3f s)\n", gpus, to_string(r.choice.algorithm),
                static_cast<unsigned long long>(r.flows), wall, static_cast<double>(r.flows) / wall, to_microseconds(r.time),
                r.busbw_GBps, std::chrono::duration<double>(t1 - t0).count());
  }
  return 0;
}
