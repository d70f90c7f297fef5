#pragma once
// Physical ranges of measured numbers, shared by every reader of them (measurement files and nccl-tests
// logs in calibrate/import, the fit's outlier check), so that a value no instrument can print is refused
// where it is read, with its file and line or JSON path, instead of reaching a fit or a prediction (a
// 5e-324 ms GEMM, a 2^62 ms copy, a 2^62-byte collective).
namespace cs::bounds {

// One timed kernel or collective (CUDA events, nccl-tests' per-iteration average). 100 ns is below any
// kernel launch (an empty kernel costs 2-5 us end to end on Hopper) and any collective; 1000 s is above a
// 16 GiB all-reduce over 1 Gb/s Ethernet (about 260 s), the slowest thing a sweep times.
inline constexpr double kMinMeasuredSeconds = 1e-7;
inline constexpr double kMaxMeasuredSeconds = 1e3;

// Bytes one kernel moves or one collective's buffer holds (nccl-tests' size S): at most 2^40 (1 TiB),
// beyond any GPU's memory (192 GB on B200) and so beyond any buffer a benchmark can allocate.
inline constexpr double kMaxBufferBytes = 1099511627776.0;

// A measured bandwidth in GB/s (nccl-tests' busbw, published sweeps): 1 MB/s to 100 TB/s (100x NVLink 5's
// 1.8 TB/s per GPU).
inline constexpr double kMinMeasuredGBps = 1e-3;
inline constexpr double kMaxMeasuredGBps = 1e5;

}  // namespace cs::bounds
