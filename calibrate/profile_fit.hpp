#pragma once
// The whole fit behind `clustersim calibrate fit`: measurements in, calibration profile out.
//
// Compute side: calibrate/fit/compute_fit.hpp on the compute measurements, against the datasheet peaks of the
// measured GPU (named by the measurement file, or given). Communication side: calibrate/fit/comm_fit.hpp on
// the collective measurements, one alpha-beta line per (collective, algorithm, ranks, level). Fit quality
// per group goes into the profile: for the comm groups the fit's own residuals, for the compute groups
// leave-one-out errors (in-sample errors are zero by construction, see compute_fit.hpp).
#include <string>
#include <vector>

#include "calibrate/fit/comm_fit.hpp"
#include "calibrate/import/measurement.hpp"
#include "models/compute/profile_json.hpp"

namespace cs::calibrate {

struct ProfileFit {
  models::CalibrationProfile profile;
  std::vector<std::string> notes;  // import notes and fit notes, one line each
  // The collective groups behind profile.comm.fits, in the same order (their members index set.comm), for
  // the NCCL-constant fit that needs the cluster (sim/network/nccl_model_fit.hpp, run by the CLI).
  std::vector<CommGroupFit> comm_groups;
};

// `gpu` overrides the GPU the measurements name (nullptr: guess from the device string). Throws
// InputError when compute points exist and no GPU is known, or when nothing at all can be fitted.
ProfileFit fit_profile(const MeasurementSet& set, const models::GpuSpec* gpu);

}  // namespace cs::calibrate
