#pragma once
// Import of the JSON measurement files.
//
// 1. The compute reference / harness format (calibrate/measurements/h200-reference.json; clustersim-bench
//    writes a superset of it, calibrate/bench/README.md):
//      "device", "sm_count",
//      "gemm":         [ {"m","n","k","dtype": "bfloat16"|"float16"|"float32"|"tf32"|"fp8", "ms"} ]
//      "fp8_gemm":     [ {"m","n","k","fp8_ms","bf16_ms"} ]
//      "attention":    [ {"b","hq","hkv","seq","d","fwd_ms","fwdbwd_ms"} ]   causal SDPA
//      "memory_bound": [ {"op": "rms_norm"|"swiglu"|"add"|"adamw_fused_fp32"|..., "bytes", "ms"} ]
//      "d2d_copy":     [ {"bytes","ms"} ]            bytes = read + write
//      "nccl":         [ {"collective","ranks","nodes","algorithm","bytes","time_us","in_place"} ]  (harness)
//    Other keys (pcie, overlap, note, machine identity) are kept out of the fit.
// 2. calibrate/published/nccl.json: an array of published collective measurements; the entries with a
//    full sweep ("busbw_GBps_by_bytes" or "busbw_GBps_by_bytes_out_of_place") become points with
//    t = S * factor(n) / busbw. Single-number entries (a peak quoted in an issue) carry no size and are
//    noted, not used.
// 3. nccl-tests' own JSON (-J file.json): "config", "devices", "results": [{size, out_of_place{time},
//    in_place{time}}].
// 4. The SDPA backends file of scripts/attention_backends.py ("format": "clustersim-attention-backends",
//    "version": 1): "device", "rows": [ {"backend", "b","hq","hkv","seq","d", "alibi_bias", "fwd_ms",
//    "fwdbwd_ms"} ] (causal), "errors": [...]. CUDNN_ATTENTION rows are the native fused kernel
//    (attention_backend "cudnn"), FLASH_ATTENTION rows FlashAttention-2 (AttentionImpl::flash2, "flash2").
//    EFFICIENT_ATTENTION, MATH and every alibi_bias row have no kernel in the compute model: one note per
//    reason lists them; so does each entry of "errors" (a shape the backend refused).
//
// Every problem names the file and the JSON path. Memory-bound op names map to the compute model's
// kinds: rms_norm/layer_norm -> norm, swiglu/gelu/silu -> activation, add/mul/scale -> elementwise,
// adamw* / adam* -> optimizer, softmax, cross_entropy, copy.
#include <string>

#include "calibrate/import/measurement.hpp"

namespace cs::calibrate {

// Dispatches on the document's shape. Throws InputError naming file and path.
MeasurementSet measurements_from_json_text(const std::string& text, const std::string& file);

}  // namespace cs::calibrate
