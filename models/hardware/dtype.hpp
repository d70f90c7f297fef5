#pragma once
#include <optional>
#include <string_view>

namespace cs::models {

// Numeric formats of tensor-core math. bf16 and fp16 have the same peak on every GPU we model.
enum class Dtype { fp32, tf32, bf16, fp16, fp8, fp4 };

std::string_view to_string(Dtype d);
// Bytes of one element (fp4 0.5, fp8 1, bf16 / fp16 2, fp32 / tf32 4).
double element_bytes(Dtype d);
std::optional<Dtype> parse_dtype(std::string_view s);

}  // namespace cs::models
