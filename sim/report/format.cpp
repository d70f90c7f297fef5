#include "sim/report/format.hpp"

#include <cmath>
#include <cstdio>

namespace cs::sim {

std::string fmt(const char* printf_format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, printf_format, v);
  return buf;
}

std::string money(double usd) {
  // One format with the "$" in it (GCC 12's -Wrestrict misreads "$" + std::string at -O3).
  if (usd >= 1e6) return fmt("$%.2fM", usd / 1e6);
  if (usd >= 1e3) return fmt("$%.1fk", usd / 1e3);
  return fmt("$%.2f", usd);
}

std::string grouped(double v) {
  const long long n = std::llround(v);
  const std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (n < 0 ? "-" : "") + out;
}

std::string seconds_text(double s) {
  if (s >= 1) return fmt("%.3f s", s);
  if (s >= 1e-3) return fmt("%.2f ms", s * 1e3);
  return fmt("%.1f us", s * 1e6);
}

}  // namespace cs::sim
