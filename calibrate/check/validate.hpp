#pragma once
// Predicted against measured, point by point: the numbers behind `clustersim validate`.
//
// Compute points are predicted by the simulator's own compute model, models::op_time_s, with the Op a
// workload would carry for that kernel (GEMM: 2mnk FLOPs and its operand bytes; attention: the causal
// FLOP convention of compute_model.hpp, the forward+backward as a forward op plus a backward op of 2.5x
// the FLOPs; memory-bound: its bytes and kind). Nothing is re-implemented here, so a validation error
// is the simulator's error.
//
// Attention timed with one SDPA backend forced (scripts/attention_backends.py) groups apart: "attention
// fwd cudnn" against the native kernel, "attention fwd+bwd flash2" against FlashAttention-2
// (AttentionImpl::flash2: its own fitted curve where the profile has one, else native x mma_sync_fraction).
//
// Leave-one-out: each point is predicted from a profile re-fitted (calibrate/fit/compute_fit.hpp) from all
// the other measurements. The unit left out is one measurement, except for attention, where the forward
// and the forward+backward of one shape (of one kernel and backend) are left out together (they make one table row, and the
// attention model's (e_max, c) are refitted without them). This measures how well the interpolation
// (GEMM, memory-bound) or the fitted model (attention) carries to a shape that was never measured,
// which is what a transformer layer's kernels mostly are.
//
// Summary per group and overall: points, MAPE = mean |p - m| / m, median |p - m| / m, the worst point.
// Communication points are predicted in sim/ (they need a cluster); they enter the same rows.
#include <string>
#include <vector>

#include "calibrate/import/measurement.hpp"
#include "models/compute/compute_model.hpp"

namespace cs::calibrate {

struct ValidationRow {
  std::string group;   // "gemm bf16", "attention fwd", "memory-bound norm", "all_reduce 8 ranks nvlink", ...
  std::string label;   // the point ("gemm bf16 8192x8192x8192")
  std::string where;   // its source ("file: gemm[12]", "file:57")
  double measured_s = 0;
  double predicted_s = 0;
  double error() const { return (predicted_s - measured_s) / measured_s; }  // signed, relative
};

struct GroupSummary {
  std::string group;
  std::size_t points = 0;
  double mape = 0;
  double median_ape = 0;
  std::size_t worst = 0;  // index into the rows
};

struct ValidationSummary {
  std::vector<GroupSummary> groups;  // in order of first appearance
  GroupSummary overall;
};

ValidationSummary summarize(const std::vector<ValidationRow>& rows);

// The Op the simulator would run for a measured kernel (fwd+bwd attention: the forward op).
models::Op op_for(const ComputeMeasurement& m);
// Predicted time of a measured kernel under `profile` on `gpu`, seconds.
double predict_compute_s(const ComputeMeasurement& m, const models::GpuSpec& gpu, const models::ComputeProfile& profile);
std::string compute_group(const ComputeMeasurement& m);

std::vector<ValidationRow> validate_compute(const std::vector<ComputeMeasurement>& points, const models::GpuSpec& gpu,
                                            const models::ComputeProfile& profile);
// Leave-one-out with a refit per point; `sm_count` of the measured GPU (0: the catalog's).
std::vector<ValidationRow> validate_compute_leave_one_out(const std::vector<ComputeMeasurement>& points,
                                                          const models::GpuSpec& gpu, int sm_count);

// A table of the rows (worst first within `max_rows`, 0 = all) and the summary, for people.
std::string validation_text(const std::vector<ValidationRow>& rows, const ValidationSummary& summary,
                            std::size_t max_rows);

}  // namespace cs::calibrate
