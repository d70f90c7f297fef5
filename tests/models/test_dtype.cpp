#include <catch2/catch.hpp>

#include "models/hardware/dtype.hpp"

using namespace cs::models;

TEST_CASE("dtype: every format round-trips through its name", "[models]") {
  for (Dtype d : {Dtype::fp32, Dtype::tf32, Dtype::bf16, Dtype::fp16, Dtype::fp8, Dtype::fp4}) {
    auto parsed = parse_dtype(to_string(d));
    REQUIRE(parsed.has_value());
    CHECK(*parsed == d);
  }
  CHECK(to_string(Dtype::bf16) == "bf16");
  CHECK(to_string(Dtype::fp8) == "fp8");
}

TEST_CASE("dtype: unknown and differently spelt names are rejected", "[models]") {
  CHECK_FALSE(parse_dtype("bfloat16").has_value());
  CHECK_FALSE(parse_dtype("BF16").has_value());
  CHECK_FALSE(parse_dtype("").has_value());
  CHECK_FALSE(parse_dtype("fp6").has_value());
  CHECK(element_bytes(Dtype::fp4) == 0.5);
}
