#pragma once
// Suggestions for a misspelt name in bad input: the choice the user most likely meant.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace cs {
namespace suggest_detail {

inline std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace suggest_detail

// The choice a misspelt `word` most likely meant, or "" when none is near: a choice that starts with what
// was typed ("H100" -> "H100-SXM") first, else the nearest by edit distance within max(2, |word|/3).
inline std::string nearest_name(const std::string& word, const std::vector<std::string>& choices) {
  for (const auto& c : choices)
    if (c.size() > word.size() && c.compare(0, word.size(), word) == 0) return c;
  std::string best;
  std::size_t best_d = SIZE_MAX;
  for (const auto& c : choices) {
    const std::size_t d = suggest_detail::edit_distance(word, c);
    if (d < best_d) best_d = d, best = c;
  }
  return best_d <= std::max<std::size_t>(2, word.size() / 3) ? best : std::string{};
}

// "unknown GPU \"NAME\" (did you mean \"NEAR\"?) (known: A, B, ...)", for a GPU name given on the command
// line or in a file.
inline std::string unknown_gpu(const std::string& name, const std::vector<std::string>& known) {
  std::string msg = "unknown GPU \"" + name + "\"";
  if (auto near = nearest_name(name, known); !near.empty()) msg += " (did you mean \"" + near + "\"?)";
  std::string list;
  for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
  return msg + " (known: " + list + ")";
}

}  // namespace cs
