#pragma once
// Fitting the NCCL model's own constants to measured collectives, and turning a profile's fits into the
// constants both network back-ends apply (nccl_model.hpp, NcclCalibration).
//
// What is fitted. For one group of measurements -- one collective over n ranks on N nodes of a known
// cluster (the scenario the measurement ran on) -- each size S_i is priced by the model with the
// algorithm and protocol NCCL's tuner picks for it (choose_algorithm; the tuner's view does not depend
// on the calibration, so the choice is fixed before the fit). The constants of the group's scope (the
// network tier when the group spans nodes, else the scale-up tier) are
//   s_p  per protocol p, multiplying the tier's bandwidth (B_net or B_up / the NVLS line rate),
//   d    one extra latency per hop of that tier (h_net + d, or h_nv + d), for every protocol, and
//   C    the ring's pipeline chunk on the tier (its fill term, kRingPipelineChunkBytes by default), one
//        for LL128 and Simple and one for LL (ScopeConstants::ring_chunk_bytes_ll),
// so the model's time is t_i = L_p + hops_i (h + d) + X_i(C) / (s_p B e_p) (the max over tiers and the
// fill as in nccl_model.hpp). Coordinate descent lowers the least absolute log error sum |ln t_i - ln m_i|
// (a few broken rows pull it far less than squares would): over every size alike for d and C, and over
// the sizes that ran p, each weighted by its measured time m_i, for s_p (a protocol's bandwidth is read
// where it moves the data: on the published 2-node A100 PCIe log LL's time per byte doubles from 8 KiB to
// 1 MiB, which no linear transfer term follows, and an unweighted s_LL left 1 MiB 15 % off). kRounds
// rounds; each step a scan over 241 values and golden-section refinement around the best. d is kept
// above -h (a hop never takes negative time). Then sizes more than 3 robust sigmas (and 25 %) off are
// left out as outliers and the constants refitted once. A protocol with no size left takes the
// nearest measured one's scale (Simple, LL128, LL). A size is "bandwidth-bound" when the fitted model's
// transfer is at least half its time, "latency-bound" otherwise (it then pins d, hardly s_p). d is fitted
// only when two sizes or more spend a quarter of their default time in latency; else it stays 0.
//
// Why these and not a size table: a ring over n ranks still pays 2(n-1) hops and moves 2(n-1)/n S over
// the tier, a tree log2(N) network hops and W S / 2k per node, so the same s_p and d predict 64 or 256
// ranks by the algorithm's structure (tests/sim/test_nccl_model_fit.cpp checks the ring's
// (n-1)/n S / (s B) + (n-1)(h + d) at 64 and 256 ranks). The launch latency L_p stays the table's: one
// rank count cannot tell launch from hops apart, and putting the difference on the hops is what grows
// with the group.
#include <array>
#include <span>
#include <string>
#include <vector>

#include "models/compute/comm_profile.hpp"
#include "sim/network/nccl_model.hpp"
#include "topologies/cluster.hpp"

namespace cs::sim {

struct NcclFitSample {
  double size_bytes = 0;
  double time_s = 0;
  std::string where;  // "file:line"
};

struct NcclFitPoint {
  double size_bytes = 0;
  double measured_s = 0;
  double default_s = 0;  // the model with the default constants
  double fitted_s = 0;   // with the fitted ones
  NcclAlgorithm algorithm = NcclAlgorithm::ring;
  NcclProtocol protocol = NcclProtocol::simple;
  bool bandwidth_bound = false;  // the fitted model's transfer is at least half its time
  bool kept = true;              // false: left out as an outlier (NcclFit::ignored says why)
  std::string where;
  double error() const { return fitted_s / measured_s - 1; }
  double default_error() const { return default_s / measured_s - 1; }
};

struct NcclFit {
  CommScope scope = CommScope::intra_node;
  ScopeConstants constants;
  std::array<bool, 3> protocol_measured{};  // by NcclProtocol: had kept points
  bool latency_fitted = false;              // d fitted (two sizes or more latency-bound); else 0
  std::vector<NcclFitPoint> points;         // in sample order
  std::vector<std::string> ignored;         // samples not used, each "where: size: why"
  double mape = 0;                          // fitted, over the points
  double default_mape = 0;
};

// Fits the scope's constants of `kind` over the group `g` (see above). `forced` as choose_algorithm's.
// Throws InputError when no sample has a positive size and time.
NcclFit fit_nccl_constants(models::CollectiveKind kind, std::span<const NcclFitSample> samples, const GroupGeometry& g,
                           const std::string& forced = {});

// The profile entry's `nccl` block from a fit.
models::NcclConstants to_profile(const NcclFit& fit, int nodes, const std::string& nic);

// The constants a scenario runs with: per (collective, level) the fitted entry of the profile (the one
// over the most ranks, then the most points, when several are). `source`: the profile's file.
NcclCalibration nccl_calibration(const models::CommProfile& profile, const std::string& source);

// Per collective kind and scope, whether calibrated or default constants apply (for reports).
struct CalibrationUse {
  models::CollectiveKind kind = models::CollectiveKind::all_reduce;
  CommScope scope = CommScope::intra_node;
  bool calibrated = false;
};
std::vector<CalibrationUse> calibration_uses(const NcclCalibration& calibration);

// One line when the profile's fitted entries were measured on another GPU, NIC or rank count than the
// scenario's cluster (`gpu` its catalog name, `ranks` its GPUs); empty when they match or none is fitted.
std::string calibration_mismatch(const models::CommProfile& profile, const std::string& source, const std::string& gpu,
                                 const topo::ClusterSpec& cluster, int ranks);

}  // namespace cs::sim
