#pragma once
// Stragglers and mixed GPUs: the GPUs of a real cluster do not all run at one speed.
//
//   cluster.stragglers:      [{"gpu": 17, "slowdown": 1.25}, {"node": 3, "slowdown": 1.1}, ...]
//                            a GPU (or every GPU of a node) whose kernels take `slowdown` times as long:
//                            thermal or power capping, a degraded card. Factors of one GPU multiply.
//   cluster.speed_variation: {"cv": 0.02, "seed": 7}: every GPU's kernels take exp(cv Z) times as long, Z
//                            standard normal drawn per GPU from the seed (a fleet's card-to-card spread;
//                            median 1). Counter-based: GPU g's draw depends only on (seed, g), so a subset of
//                            the cluster (a job) sees the same cards as the whole.
//   cluster.node_groups:     [{"gpu": "A100-80GB", "nodes": 4}, {"gpu": "H100-SXM", "nodes": 4}]: the GPU type
//                            of consecutive node ranges (counts sum to cluster.nodes). Each node's kernels run
//                            at its own GPU's speed (the same compute model, that GPU's catalog entry). The
//                            node fabric, the memory check and the MFU peak stay those of cluster.gpu, which must
//                            be the group GPU with the least memory (the loader says so otherwise).
// What the frameworks do with them: equal shards (Megatron-Core, DeepSpeed, FSDP split layers and
// micro-batches evenly), so the step waits where the schedule synchronises: a slow GPU stretches its TP
// group's kernels (each TP collective waits for it), hence its pipeline stage, and every DP collective of
// that stage waits for the slow replica. Under symmetry the step builder simulates one rank per class of
// ranks that a permutation of equal TP / CP / DP indices maps onto one another (sim/step/orbits.hpp).
#include <cstdint>
#include <utility>
#include <vector>

#include "models/hardware/gpu_catalog.hpp"

namespace cs::sim {

struct NodeGroup {
  models::GpuSpec gpu;
  int first_node = 0;
  int nodes = 0;
};

struct Heterogeneity {
  struct Slow {
    int gpu = -1;     // a cluster GPU, or -1 with node set
    int node = -1;
    double slowdown = 1;
  };
  std::vector<Slow> stragglers;
  double cv = 0;                 // speed_variation.cv; 0: none
  std::uint64_t seed = 0;
  std::vector<NodeGroup> groups;  // empty: every node has cluster.gpu
  // A job's view of the cluster (Scenario::job_scenario): the nodes its means are over; empty: every node.
  std::vector<int> view_nodes;

  bool any() const { return !stragglers.empty() || cv > 0 || groups.size() > 1; }
  // The factor by which cluster GPU `gpu` (on node gpu / gpus_per_node) stretches its kernels.
  double slowdown(int gpu, int gpus_per_node) const;
  // The GPU type of a node; nullptr: cluster.gpu.
  const models::GpuSpec* node_gpu(int node) const;
  // The mean over nodes of f(the node's GPU type) (every node holds the same number of GPUs): a per-GPU
  // price or power of the whole cluster, or of a job's nodes (view_nodes). `fallback` without node groups.
  // The GPU types of the cluster's nodes (or a job's, view_nodes) with their node counts, in the order the
  // groups give them; empty without node groups.
  std::vector<std::pair<std::string, int>> node_mix() const;
  template <class F>
  double node_mean(F&& f, double fallback) const {
    if (groups.empty()) return fallback;
    double sum = 0;
    if (!view_nodes.empty()) {
      for (const int node : view_nodes) sum += f(*node_gpu(node));  // the groups cover every node
      return sum / static_cast<double>(view_nodes.size());
    }
    int nodes = 0;
    for (const NodeGroup& g : groups) sum += f(g.gpu) * g.nodes, nodes += g.nodes;
    return nodes > 0 ? sum / nodes : fallback;
  }
};

}  // namespace cs::sim
