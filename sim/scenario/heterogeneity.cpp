#include "sim/scenario/heterogeneity.hpp"

#include <cmath>
#include <numbers>

namespace cs::sim {

namespace {

// SplitMix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014): a
// counter-based generator, so draw g is a pure function of (seed, g).
std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}
// A uniform in (0, 1): the top 53 bits, offset by half a step so that 0 never comes out.
double uniform(std::uint64_t bits) { return (static_cast<double>(bits >> 11) + 0.5) * 0x1.0p-53; }

}  // namespace

double Heterogeneity::slowdown(int gpu, int gpus_per_node) const {
  double f = 1;
  for (const Slow& s : stragglers)
    if (s.gpu == gpu || (s.node >= 0 && gpu / gpus_per_node == s.node)) f *= s.slowdown;
  if (cv > 0) {
    // Box-Muller on two draws of GPU g's stream (deterministic, platform-independent).
    const std::uint64_t base = splitmix(seed ^ splitmix(static_cast<std::uint64_t>(gpu)));
    const double u1 = uniform(splitmix(base)), u2 = uniform(splitmix(base + 1));
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
    f *= std::exp(cv * z);
  }
  return f;
}

const models::GpuSpec* Heterogeneity::node_gpu(int node) const {
  for (const NodeGroup& g : groups)
    if (node >= g.first_node && node < g.first_node + g.nodes) return &g.gpu;
  return nullptr;
}

std::vector<std::pair<std::string, int>> Heterogeneity::node_mix() const {
  std::vector<std::pair<std::string, int>> mix;
  const auto add = [&](const std::string& name, int nodes) {
    for (auto& [n, count] : mix)
      if (n == name) return void(count += nodes);
    mix.emplace_back(name, nodes);
  };
  if (!view_nodes.empty()) {
    for (const int node : view_nodes) add(node_gpu(node)->name, 1);
  } else {
    for (const NodeGroup& g : groups) add(g.gpu.name, g.nodes);
  }
  return mix;
}

}  // namespace cs::sim
