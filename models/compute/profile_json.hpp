#pragma once
// Calibration profile file: what `clustersim calibrate fit` writes and a scenario's "calibration" key
// reads. One JSON object:
//
//   { "format": "clustersim-profile", "version": 1,
//     "gpu": "H200",                                   measured GPU (catalog name or device string)
//     "compute": { "source", "sm_count", "launch_overhead_us", "fp8_gemm_speedup_efficiency",
//                  "expert_host_issue_us",                 (optional: absent, kDefaultExpertHostIssueUs)
//                  "gemm":         [ {"m", "n", "k", "efficiency"} ],
//                  "attention":    [ {"batch", "heads_q", "heads_kv", "seq", "head_dim",
//                                     "fwd_efficiency", "fwdbwd_efficiency"} ],   (measured points)
//                  "attention_model": { "block_q",                                  (optional: absent,
//                      "fwd": {"peak_efficiency", "half_kv", "ctas_per_sm", "heavy_first"},  the default
//                      "bwd": { same } },                                            profile's model)
//                  "attention_flash2_model": { "mma_sync_fraction",     (optional: FlashAttention-2's own
//                      "fwd": { as above }, "bwd": { as above } },       curve; mma_sync_fraction of the
//                  "attention_flash2": [ as "attention" ],               GPU it was measured on)
//                  "memory_bound": [ {"kind", "bytes", "efficiency"} ] },      (optional)
//     "comm": [ {"collective", "algorithm", "ranks", "level", "alpha_us", "beta_GBps", "r2", "points", "gpu"} ],
//     "fit_quality": [ {"group", "points", "mape", "worst", "worst_error"} ]   (informational) }
//
// The compute fields are exactly models::ComputeProfile (compute_model.hpp explains what each means);
// the comm entries are models::CommFit (comm_profile.hpp). Efficiencies are fractions of the datasheet
// peak of the GPU named in "gpu". A profile may hold only one side: a missing "compute" means the
// built-in default tables, an empty "comm" the catalog link parameters.
//
// Reading is strict: unknown keys, wrong types, non-finite or out-of-range numbers are errors, and every
// message names the file and the JSON path ("h200.json: compute.gemm[3].efficiency: expected a number
// in (0, 1]"). All problems of a file are collected and thrown together as one InputError.
// Writing goes to a temporary file that is renamed into place, so a profile is never half-written.
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/compute/comm_profile.hpp"
#include "models/compute/compute_model.hpp"
#include "sim/base/input_error.hpp"

namespace cs::models {

// Bounds of a profile's numbers (the reader refuses anything outside them, naming the JSON path); a writer
// (calibrate fit) checks its results against the same figures. Why each: profile_json.cpp.
inline constexpr double kMinProfileEfficiency = 1e-6;     // efficiencies: [1e-6, 1]
inline constexpr double kMaxProfileMicroseconds = 1e4;    // launch overhead, host floor, alpha, hop extra
inline constexpr double kMinProfileBandwidthGBps = 1e-3;  // a fitted beta: [1 MB/s, 100 TB/s], as a
inline constexpr double kMaxProfileBandwidthGBps = 1e5;   // topology file's links (topology_file.cpp)

// How well one group of measurements is reproduced (written by the fitter, for people reading the file).
struct FitQuality {
  std::string group;       // "gemm bf16", "all_reduce default 8 ranks nvlink", ...
  int points = 0;
  double mape = 0;         // mean |predicted - measured| / measured
  std::string worst;       // label of the worst point
  double worst_error = 0;  // its signed relative error
};

struct CalibrationProfile {
  std::string gpu;                       // the measured GPU
  std::optional<ComputeProfile> compute; // absent: use default_compute_profile()
  CommProfile comm;
  std::vector<FitQuality> fit_quality;
};

// Parses a profile document; `file` names it in messages. Throws InputError.
CalibrationProfile parse_profile(const std::string& json_text, const std::string& file);
// Reads and parses a profile file. Throws InputError (also for a file that cannot be opened).
CalibrationProfile read_profile(const std::string& path);
// The JSON text of a profile (2-space indented, keys in a fixed order, numbers round-trip exactly).
std::string profile_to_json(const CalibrationProfile& profile);
// Writes the profile to `path` through a temporary file; throws std::runtime_error on I/O failure.
void write_profile(const CalibrationProfile& profile, const std::string& path);

}  // namespace cs::models
