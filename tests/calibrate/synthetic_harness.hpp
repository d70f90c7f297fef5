#pragma once
// Synthetic attention-harness measurements made by the compute model itself from a known profile, for
// tests that check a fit gives the profile back: a copy sweep whose zero-size intercept is the profile's
// launch overhead, then the forward and the forward+backward of each (b, hq = hkv, s) at d = 128, causal,
// through `kernel`.
#include <cstdint>
#include <string>
#include <vector>

#include "calibrate/import/measurement.hpp"
#include "calibrate/check/validate.hpp"
#include "models/compute/compute_model.hpp"

namespace cs::calibrate::testing {

struct HarnessShape {
  std::int64_t batch, heads, seq;
};

inline std::vector<ComputeMeasurement> synthetic_harness(const models::ComputeProfile& truth, const models::GpuSpec& gpu,
                                                         const std::vector<HarnessShape>& shapes,
                                                         models::AttentionImpl kernel, const std::string& backend) {
  const double L = truth.launch_overhead_us * 1e-6;
  std::vector<ComputeMeasurement> pts;
  for (double bytes : {1e8, 1e9}) {
    ComputeMeasurement m;
    m.kind = ComputeKind::memory_bound;
    m.mem_kind = models::MemOpKind::copy;
    m.bytes = bytes;
    m.time_s = L + bytes / 3e12;
    m.label = "copy";
    pts.push_back(m);
  }
  for (const auto& sh : shapes) {
    ComputeMeasurement f;
    f.kind = ComputeKind::attention_fwd;
    f.attention = {sh.batch, sh.heads, sh.heads, sh.seq, sh.seq, 128, true, kernel};
    f.attention_backend = backend;
    f.label = "attn";
    f.time_s = predict_compute_s(f, gpu, truth);
    ComputeMeasurement fb = f;
    fb.kind = ComputeKind::attention_fwdbwd;
    fb.time_s = predict_compute_s(fb, gpu, truth);
    pts.push_back(f);
    pts.push_back(fb);
  }
  return pts;
}

}  // namespace cs::calibrate::testing
