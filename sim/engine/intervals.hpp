#pragma once
// Interval arithmetic on simulated time, for breakdowns of a step: merge a rank's busy intervals, and
// measure how much of one set is not covered by another (communication not hidden by compute).
#include <algorithm>
#include <vector>

#include "sim/engine/time.hpp"

namespace cs::sim {

struct Interval {
  Time begin, end;
};

// Sorted, disjoint union of `v` (empty intervals dropped).
// One stream's intervals arrive in start order already; only interleaved streams need the sort.
inline std::vector<Interval> merged(std::vector<Interval> v) {
  const auto by_begin = [](const Interval& a, const Interval& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; };
  if (!std::is_sorted(v.begin(), v.end(), by_begin)) std::sort(v.begin(), v.end(), by_begin);
  std::vector<Interval> out;
  for (const Interval& x : v) {
    if (x.end <= x.begin) continue;
    if (!out.empty() && x.begin <= out.back().end)
      out.back().end = std::max(out.back().end, x.end);
    else
      out.push_back(x);
  }
  return out;
}

// Total length of `a` (sorted, disjoint) not covered by `b` (sorted, disjoint).
inline Time uncovered(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  Time total = 0;
  std::size_t j = 0;
  for (const Interval& x : a) {
    Time cursor = x.begin;
    while (j < b.size() && b[j].end <= cursor) ++j;
    for (std::size_t k = j; k < b.size() && b[k].begin < x.end; ++k) {
      if (b[k].begin > cursor) total += b[k].begin - cursor;
      cursor = std::max(cursor, b[k].end);
      if (cursor >= x.end) break;
    }
    if (cursor < x.end) total += x.end - cursor;
  }
  return total;
}

}  // namespace cs::sim
