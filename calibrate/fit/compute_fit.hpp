#pragma once
// Fitting compute measurements into the compute model's efficiency tables (models::ComputeProfile).
//
// The compute model (models/compute/compute_model.hpp) predicts a kernel as
//   t = L + work / (e * peak)
// with L the per-kernel launch overhead, peak the datasheet figure of the measured GPU (bf16 tensor
// FLOP/s for GEMM and attention, HBM bytes/s for memory-bound kernels) and e an achieved fraction it
// interpolates from a table of measured points. Fitting is therefore the inversion at each point,
//   e = work / ((t - L) * peak),
// so that the model reproduces every measured time exactly at its own shape, and the interpolation
// (log-space nearest neighbours for GEMM, ln(bytes) for memory-bound) carries it between shapes.
// Attention is the exception: a fitted physical model (below), which does not reproduce each point. This is the same derivation as scripts/derive_compute_defaults.py, which
// produced the built-in defaults; on the H200 reference file both give the same table.
//
//  - L: for each memory-bound kind measured at two or more sizes (and the device copy), the line
//    t = a + bytes / bw through its two smallest sizes has intercept a; L is the smallest intercept
//    (every kernel pays at least it; a larger value would make the smallest copy beat the HBM peak).
//    Without any size sweep L is the default profile's, noted.
//  - GEMM: bf16 rows form the table (fp16 runs at the same peak with the same kernels; fp32 and tf32
//    have their own peaks and are predicted from the bf16 table, see compute_model.hpp).
//  - Attention (causal, F = 2 b hq s^2 d): the measured points are kept as a table, e_fwd = F / ((t_fwd
//    - L) peak) and, forward+backward being two kernels doing 3.5 F, e_fb = 3.5 F / ((t_fb - 2L) peak)
//    (a shape measured only one way takes the same efficiency for the other, noted). The model itself
//    is e = e_max * balance * kv / (kv + c) (compute_model.hpp); per pass (e_max, c) minimise
//        sum_i (ln(W_i / (e_max kv_i / (kv_i + c))) - ln t_i)^2,   W_i = work_i / (peak * balance_i)
//    with t the forward time t_fwd - L, or the backward's t_fb - t_fwd - L (work 2.5 F), over the shapes
//    measured both ways; balance at the measured GPU's sm_count, with the block, CTAs per SM and launch
//    orders of the default profile. For fixed c the optimal ln e_max is the mean residual, so the fit
//    is a search over c in [0, 16384] (grid step 16, then 100 golden-section steps within a step),
//    step for step what scripts/derive_compute_defaults.py does. Fewer than two such shapes: the
//    default profile's attention model is used (noted). The model has no head_dim term: a kernel's fit
//    takes the rows at its most measured head_dim and notes the others (validated, not fitted).
//  - FlashAttention-2 (rows with AttentionImpl::flash2: SDPA's FLASH_ATTENTION backend, scripts/
//    attention_backends.py) gets the same table and the same (e_max, c) fit per pass, apart from the
//    native rows, into ComputeProfile::attention_flash2 with the measured GPU's mma_sync_fraction. Why a
//    curve of its own: FA2 issues mma.sync, and Hopper's full tensor rate needs wgmma (compute_model.hpp);
//    the H200 measured FA2 at 0.52-0.58 of cuDNN's rate at d = 128, not the 2/3 of the mma.sync limit.
//    Its backward is fitted under the native fit's host floor T (the default's without a native fit),
//    not a T of its own: T is the PyTorch harness's dispatch, whatever kernel it launches, and the FA2
//    rows (forward >= 0.59 ms on the H200) all start their backward after it, so they cannot measure it.
//  - Forced-cuDNN rows (attention_backend "cudnn") are validated against the native model but not fitted
//    into it. They are the same kernel family as the default SDPA of the reference file, but on the H200
//    the model fitted on the reference predicted them (2026-11-30, 4 shapes at d = 128, MHA) +8..+17%
//    slow forward and -4..+7% forward+backward, and -29% / -25% at d = 64 (no head_dim term): past the
//    15% agreement asked before merging two sources into one fit, so they stay a check.
//  - Memory-bound: e = bytes / ((t - L) * HBM peak) per kind, sorted by (kind, bytes).
//  - fp8: the mean over fp8 GEMMs of (achieved fp8 / fp8 peak) / (achieved bf16 / bf16 peak) at the
//    same shape (the bf16 time measured beside it, else a bf16 row of the same shape).
// A point whose efficiency falls outside [1e-4, 0.95] (time below L, faster than 95% of peak, or slower than
// 1e-4 of it: a timing or peak error) is left out with a note naming it.
#include <optional>
#include <string>
#include <vector>

#include "calibrate/import/measurement.hpp"
#include "models/compute/compute_model.hpp"

namespace cs::calibrate {

// nullopt when `points` holds no compute measurement. `sm_count` 0 takes the GPU's.
std::optional<models::ComputeProfile> fit_compute_profile(const std::vector<ComputeMeasurement>& points,
                                                          const models::GpuSpec& gpu, int sm_count,
                                                          const std::string& source, std::vector<std::string>& notes);

// The launch overhead the fit would use for these points, seconds (see above).
double fitted_launch_overhead_s(const std::vector<ComputeMeasurement>& points, std::vector<std::string>& notes);

}  // namespace cs::calibrate
