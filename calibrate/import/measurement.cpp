#include "calibrate/import/measurement.hpp"

#include <algorithm>
#include <cctype>

namespace cs::calibrate {

namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

void MeasurementSet::append(const MeasurementSet& other) {
  if (gpu.empty()) {
    gpu = other.gpu;
    sm_count = other.sm_count;
  }
  compute.insert(compute.end(), other.compute.begin(), other.compute.end());
  comm.insert(comm.end(), other.comm.begin(), other.comm.end());
  notes.insert(notes.end(), other.notes.begin(), other.notes.end());
  sources.insert(sources.end(), other.sources.begin(), other.sources.end());
}

const models::GpuSpec* guess_gpu(std::string_view device_name) {
  if (const auto* exact = models::find_gpu(device_name)) return exact;
  const std::string s = upper(device_name);
  auto has = [&](const char* t) { return s.find(t) != std::string::npos; };
  const char* name = nullptr;
  if (has("H200")) name = "H200";
  else if (has("B200")) name = "B200";
  else if (has("H100") || has("H800")) name = has("PCIE") ? "H100-PCIe" : "H100-SXM";
  else if (has("A100") || has("A800")) name = has("80G") ? "A100-80GB" : "A100-40GB";
  else if (has("MI300X")) name = "MI300X";
  else if (has("L40S")) name = "L40S";
  return name ? models::find_gpu(name) : nullptr;
}

double work_of(const ComputeMeasurement& m) {
  switch (m.kind) {
    case ComputeKind::gemm:
      return 2.0 * double(m.gemm.m) * double(m.gemm.n) * double(m.gemm.k);
    case ComputeKind::attention_fwd:
    case ComputeKind::attention_fwdbwd: {
      const auto& a = m.attention;
      const double fwd = 2.0 * double(a.batch) * double(a.heads_q) * double(a.seq_q) * double(a.seq_kv) *
                         double(a.head_dim) * (a.causal ? 1.0 : 2.0);
      return m.kind == ComputeKind::attention_fwd ? fwd : 3.5 * fwd;
    }
    case ComputeKind::memory_bound: return m.bytes;
  }
  return 0;
}

}  // namespace cs::calibrate
