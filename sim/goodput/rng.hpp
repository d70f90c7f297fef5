#pragma once
// Random draws that are the same on every standard library: the engine (std::mt19937_64) is specified
// bit for bit by the C++ standard, the distributions (std::uniform_real_distribution, std::normal_...)
// are not, so the draws below are made from the engine's raw 64-bit outputs here.
//   uniform:      the top 53 bits / 2^53, in [0, 1);
//   exponential:  -log(1 - u) / rate (inversion; 1 - u is in (0, 1], so the log is finite);
//   normal:       Box-Muller, both values of a pair used in turn.
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace cs::sim::goodput {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  double exponential(double rate) { return -std::log1p(-uniform()) / rate; }
  double normal() {
    if (have_spare_) {
      have_spare_ = false;
      return spare_;
    }
    const double r = std::sqrt(-2.0 * std::log1p(-uniform()));  // 1 - u in (0, 1]
    const double theta = 2.0 * 3.14159265358979323846 * uniform();
    spare_ = r * std::sin(theta);
    have_spare_ = true;
    return r * std::cos(theta);
  }

 private:
  std::mt19937_64 engine_;
  double spare_ = 0;
  bool have_spare_ = false;
};

// The index of the q-quantile of n > 0 sorted samples by the nearest-rank rule: the ceil(q n)-th smallest.
inline std::size_t nearest_rank_index(std::size_t n, double q) {
  auto k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(n)));
  if (k < 1) k = 1;
  if (k > n) k = n;
  return k - 1;
}
// The q-quantile of sorted samples by the nearest-rank rule.
inline double nearest_rank(const std::vector<double>& sorted, double q) {
  return sorted.empty() ? 0 : sorted[nearest_rank_index(sorted.size(), q)];
}

}  // namespace cs::sim::goodput
