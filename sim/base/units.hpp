#pragma once
// Byte, rate, time and energy units, one definition for every layer. Memory sizes are binary (HBM capacities, buffers:
// GiB = 2^30 bytes, as nvidia-smi and PyTorch's allocator report them); bandwidths and collective sizes in
// GB/s are decimal (1 GB = 1e9 bytes, as datasheets and nccl-tests print them). Keep the two apart: reading
// an H200's "141 GB" as 141 GiB would be off by 7%.
namespace cs {

inline constexpr double kKiB = 1024.0;
inline constexpr double kMiB = 1024.0 * kKiB;
inline constexpr double kGiB = 1024.0 * kMiB;

inline constexpr double kGB = 1e9;     // decimal gigabyte
inline constexpr double kGBps = kGB;   // bytes per second in one GB/s
inline constexpr double kSecondsPerHour = 3600.0;
inline constexpr double kSecondsPerDay = 86400.0;
inline constexpr double kJoulesPerKwh = 3.6e6;

}  // namespace cs
