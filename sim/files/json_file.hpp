#pragma once
// The one JSON reader of every JSON input (scenarios, --set and --vary values, calibration profiles,
// measurement files, published-figure files). nlohmann's parser through its SAX interface, which does not
// recurse, with what the DOM parser does not check:
//   - a number that does not fit a double (1e999, a 400-digit integer) is an input error at its line and
//     column, not an out_of_range exception from deep inside;
//   - objects and arrays nested deeper than kMaxJsonDepth are refused as they are read, so nothing later
//     recurses 10^5 levels into the value (printing it, destroying it);
//   - a key given twice in one object is an error naming both lines (the DOM parser keeps the last one
//     silently);
//   - a syntax error says where, with nlohmann's reason cut to a printable length.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace cs::files {

inline constexpr int kMaxJsonDepth = 256;

// How a syntax error's position is written: "FILE:LINE:COL: invalid JSON: reason" (scenarios) or
// "FILE:LINE: invalid JSON (reason)" (calibration files), as each reader has always written it.
enum class SyntaxStyle { line_column, line };

// Parses `text` (read from `file`, which names it in messages). Throws FileError listing every problem found
// (at most a few duplicates are collected; a syntax error, an overflow or the depth limit stops the parse).
nlohmann::json parse_json(const std::string& text, const std::string& file, SyntaxStyle style = SyntaxStyle::line_column);

// The value of a short JSON text given on the command line (--set path=VALUE), or nothing when it is not
// acceptable JSON (a bare word is then taken as a string by the caller).
std::optional<nlohmann::json> parse_json_value(const std::string& text);

// Whether `text` is valid UTF-8. A JSON file is checked as it is parsed; a value typed on the command line
// (--set, --vary, Python's set=) becomes a JSON string without that check, and a string of invalid UTF-8
// would throw from every later dump() (an error message quoting it, a report), so those are refused first.
bool valid_utf8(const std::string& text);
// `text` as a JSON string literal with each invalid UTF-8 byte shown as U+FFFD, for a message that quotes it.
std::string quoted_for_message(const std::string& text);

}  // namespace cs::files
