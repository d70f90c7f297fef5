#pragma once
// Simulated time: integer picoseconds. Integer time never drifts and makes ties exact, so two events at
// "the same time" really are at the same time and are ordered by insertion (see event_queue.hpp).
// int64 picoseconds cover 106 days, far beyond any training step.
#include <cmath>
#include <cstdint>

namespace cs::sim {

using Time = std::int64_t;

inline constexpr Time kPicosecond = 1;
inline constexpr Time kNanosecond = 1'000;
inline constexpr Time kMicrosecond = 1'000'000;
inline constexpr Time kMillisecond = 1'000'000'000;
inline constexpr Time kSecond = 1'000'000'000'000;
inline constexpr Time kNever = INT64_MAX;

inline Time from_seconds(double s) { return static_cast<Time>(std::llround(s * 1e12)); }
inline double to_seconds(Time t) { return static_cast<double>(t) * 1e-12; }
inline double to_microseconds(Time t) { return static_cast<double>(t) * 1e-6; }

}  // namespace cs::sim
