#pragma once
// Text from a user's file on the user's terminal: a value echoed in a message is cut to a readable length
// and every byte that is not printable is written as an escape, so a 10 MB string, a NUL byte or an ANSI
// escape sequence in an input never reaches the terminal as such; and a list of problems is cut to the
// first few, then a count, so 10^6 misspelt keys give 21 lines and not 10^6.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cs::files {

// The most characters of one echoed value (cut ones end in "..." and say how long they were).
inline constexpr std::size_t kMaxEchoChars = 80;
// The most problems listed before "... and N more problems".
inline constexpr std::size_t kMaxProblems = 20;

// `text` with control bytes (0x00-0x1f, 0x7f) as \n, \t, \r or \xNN and a backslash as itself, cut to
// `max_chars` bytes (plus "... (N bytes)" when cut). UTF-8 above ASCII is kept.
std::string printable(std::string_view text, std::size_t max_chars = kMaxEchoChars);

// One message line made safe for a terminal: every double-quoted value in it longer than kMaxEchoChars is
// cut (printable()), control bytes are escaped, and the whole line is cut at 1,000 bytes.
std::string printable_line(std::string_view line);

// The first kMaxProblems lines of `lines` (each through printable_line), then one line "PREFIX: ... and N
// more problems" when there were more, PREFIX being the text before the first ": " of the first line left
// out (the file name).
std::vector<std::string> capped_problems(const std::vector<std::string>& lines);

}  // namespace cs::files
