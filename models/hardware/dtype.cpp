#include "models/hardware/dtype.hpp"

namespace cs::models {

std::string_view to_string(Dtype d) {
  switch (d) {
    case Dtype::fp32: return "fp32";
    case Dtype::tf32: return "tf32";
    case Dtype::bf16: return "bf16";
    case Dtype::fp16: return "fp16";
    case Dtype::fp8: return "fp8";
    case Dtype::fp4: return "fp4";
  }
  return "unknown";
}

double element_bytes(Dtype d) {
  switch (d) {
    case Dtype::fp8: return 1.0;
    case Dtype::fp4: return 0.5;
    case Dtype::bf16:
    case Dtype::fp16: return 2.0;
    case Dtype::fp32:
    case Dtype::tf32: return 4.0;
  }
  return 4.0;
}

std::optional<Dtype> parse_dtype(std::string_view s) {
  for (Dtype d : {Dtype::fp32, Dtype::tf32, Dtype::bf16, Dtype::fp16, Dtype::fp8, Dtype::fp4}) {
    if (s == to_string(d)) return d;
  }
  return std::nullopt;
}

}  // namespace cs::models
