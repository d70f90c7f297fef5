#pragma once
// How clustersim writes numbers in text: the run report, the sweep tables, the validation tables and the
// GUI all use these, so "1,234,568 tokens/s" reads the same everywhere.
#include <string>

namespace cs::sim {

std::string fmt(const char* printf_format, double v);  // one number through a printf format: fmt("%.1f GiB", x)
std::string grouped(double v);                         // rounded, thousands grouped: 1234567.8 -> "1,234,568"
std::string seconds_text(double s);                    // "19.662 s", "93.80 ms", "12.5 us"
std::string money(double usd);                         // "$12.69M", "$464.4k", "$2.50"

}  // namespace cs::sim
