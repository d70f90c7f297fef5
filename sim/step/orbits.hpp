#pragma once
// Orbits of equal ranks: which ranks the step builder may simulate once (simulation.symmetry).
//
// A rank has coordinates (tp, cp, dp, pp) (layout.hpp) and a per-rank input, its signature: the GPU type of
// its node (cluster.node_groups) and the factor its kernels are stretched by (cluster.stragglers,
// cluster.speed_variation; sim/scenario/heterogeneity.hpp). Nothing else the builder or the executor reads
// depends on the rank beyond its coordinates.
//
// Construction (a product partition): for each axis X in {tp, cp, dp}, indices i and j of X are of one
// type iff for every combination of the other coordinates (pp included) the rank with X = i and the rank
// with X = j have equal signatures. A class is a product of one type per axis with one stage: every rank
// (tp, cp, dp, pp) with tp of type a, cp of type b, dp of type c, at stage pp. Its representative, the rank
// simulated, takes the smallest index of each type; it stands for the class's size in real ranks. A
// homogeneous cluster has one type per axis: one class per stage (the mirroring of earlier versions).
// PP is never permuted: stage order is what the schedule is made of.
//
// Why every member of a class has the representative's timeline (exact, not assumed). Let sigma swap two
// indices i, j of one type on axis X, applied to every rank (tp, cp, dp, pp) -> the same with X's index
// swapped. (1) sigma preserves every signature: that is what "one type" means, for every other coordinate.
// (2) sigma maps every TP, CP, DP, DP x CP and PP group to a group of the same kind: a group fixes some
// coordinates and runs over the others, and swapping two values of one coordinate maps "X fixed at i" to
// "X fixed at j" and "X runs over all" to itself (the same group, its members reordered, hence the same
// collective instance). The expert groups (ep, etp, expert_dp) and FSDP's shard / replica blocks fold the
// flat index tp + TP (cp + CP dp) in another order, so (2) is checked for them, transposition by
// transposition (they generate every permutation of a type), and where it fails the builder simulates every
// rank (find_orbits says why). (3) The builder's task graph of a rank is a function of its coordinates'
// group structure and its signature only, and the executor's timings a function of the graph and of each
// collective's cost, which the network back-ends compute from the group's GPUs; so sigma maps the
// reference run (every rank simulated) onto itself, and ranks i and sigma(i) have equal timelines.
// Compositions of such swaps reach every member of a class from its representative.
// The network caveat in (3): a back-end's cost must be invariant under sigma, i.e. the translate of a
// group by a permutation of equal ranks must cost what the group costs. That is the assumption the
// one-rank-per-stage mirroring has always made (the analytical back-end prices a group by its span; the
// flow back-end routes each flow, and its least-loaded path choice sees flows in start order, which can
// differ: docs/symmetry.md).
//
// Collective matching: the representatives of the classes a representative's groups touch lie in its own
// groups (each group runs over whole axes, and representatives take the smallest index of each type), so
// the builder's matching of collectives by (category, channel, group id) among simulated ranks holds.
#include <array>
#include <string>
#include <vector>

#include "sim/scenario/scenario.hpp"

namespace cs::sim {

struct Orbits {
  // false: every rank is simulated on its own (simulation.symmetry false, or a fallback: `fallback` says why).
  bool batched = false;
  std::string fallback;
  // Per axis (0 tp, 1 cp, 2 dp): the type of each index, and per type its smallest index and its size.
  std::array<std::vector<int>, 3> type_of;
  std::array<std::vector<int>, 3> rep;
  std::array<std::vector<int>, 3> count;

  int types(int axis) const { return static_cast<int>(rep[static_cast<std::size_t>(axis)].size()); }
  int classes_per_stage() const { return types(0) * types(1) * types(2); }
};

// The orbits of a (single-job) scenario's ranks; rank r on GPU gpus[r] (empty: GPU r). A multi-job
// placement (gpus given) with unequal GPUs falls back to every rank, as before orbits.
Orbits find_orbits(const Scenario& s, const std::vector<int>& gpus = {});

}  // namespace cs::sim
