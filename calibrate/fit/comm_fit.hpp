#pragma once
// Fitting collective measurements to an alpha-beta line: the size summary of a profile's comm entries.
// No network model reads it (it does not carry to another rank count); the constants the simulator
// applies are the NCCL model's own, fitted by sim/network/nccl_model_fit.hpp on the measured cluster.
//
// Model (models/compute/comm_profile.hpp). For one group -- same collective, algorithm,
// rank count n and level -- each measurement is (S_i, t_i) and
//
//   t_i = alpha + x_i / beta,   x_i = factor(n) * S_i   (the "bus bytes", nccl-tests' busbw convention)
//
// which is linear in (alpha, g = 1/beta). Sizes run over nine or ten decades (8 B .. 8 GiB) and the
// times over four, so an ordinary least-squares fit would be decided by the largest messages alone. We
// minimise *relative* residuals instead, i.e. weighted least squares with w_i = 1 / t_i^2:
//
//   minimise  sum_i  h_i * ((t_i - alpha - g x_i) / t_i)^2
//
// solved with Eigen (column-pivoted QR on the weighted 2-column design matrix, x scaled to O(1)).
// Robustness: iteratively reweighted least squares with Huber weights on the relative residuals r_i,
//   h_i = 1 if |r_i| <= c s, else c s / |r_i|,   c = 1.345,  s = 1.4826 * median |r_i|  (MAD scale),
// repeated until alpha and g stop moving. Protocol switches (LL -> LL128 -> Simple), a misconfigured
// run's collapsed mid-size bandwidth or a single noisy row then pull the line far less than they would a
// plain fit. alpha must be >= 0: if the unconstrained optimum has alpha < 0 the fit is redone with
// alpha = 0 (g alone, closed form). Two distinct sizes at least; g must come out positive.
//
// Quality, per group: R^2 in log time, 1 - sum (ln t_i - ln p_i)^2 / sum (ln t_i - mean ln t)^2, so
// that each size counts alike; MAPE = mean |p_i - t_i| / t_i; the worst point (largest |error|, signed
// error reported). Level: "network" when the measurement's ranks sit on more than one node, else
// "nvlink". Deliberately ignored: the size dependence NCCL's protocol and algorithm choices add on top
// of alpha-beta (the flow model's business); the fit reports how far that leaves it.
#include <span>
#include <string>
#include <vector>

#include "calibrate/import/measurement.hpp"
#include "models/compute/comm_profile.hpp"
#include "models/compute/profile_json.hpp"

namespace cs::calibrate {

struct AlphaBetaFit {
  double alpha_s = 0;
  double beta_Bps = 0;
  double r2 = 0;                          // in log time
  double mape = 0;
  std::size_t worst = 0;                  // index of the worst point
  double worst_error = 0;                 // its (predicted - measured) / measured
  int downweighted = 0;                   // points with Huber weight < 1 at the end
  std::vector<double> relative_error;     // (predicted - measured) / measured, per point
};

// Throws InputError when fewer than two distinct sizes or no positive bandwidth results.
AlphaBetaFit fit_alpha_beta(std::span<const double> bus_bytes, std::span<const double> time_s);

struct CommGroupFit {
  models::CommFit fit;
  models::FitQuality quality;
  std::vector<std::size_t> members;  // indices into MeasurementSet::comm
};

// Groups set.comm by (GPU, collective, algorithm, ranks, level) and fits each. A group that cannot be
// fitted (one size only, ...) becomes a line in `notes` ("FILE:LINE: ...").
std::vector<CommGroupFit> fit_comm(const MeasurementSet& set, std::vector<std::string>& notes);

models::CommLevel level_of(const CommMeasurement& m);
// Catalog name of the measurement's GPU (guess_gpu), else its device string as printed.
std::string gpu_of(const CommMeasurement& m);
std::string group_name(const models::CommFit& f);  // "H100-SXM all_reduce default 8 ranks nvlink"

}  // namespace cs::calibrate
