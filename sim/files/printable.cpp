#include "sim/files/printable.hpp"

namespace cs::files {
namespace {

constexpr std::size_t kMaxLineBytes = 1000;

void append_escaped(std::string& out, unsigned char c) {
  static const char* const hex = "0123456789abcdef";
  switch (c) {
    case '\n': out += "\\n"; return;
    case '\t': out += "\\t"; return;
    case '\r': out += "\\r"; return;
    default: break;
  }
  if (c < 0x20 || c == 0x7f) {
    out += "\\x";
    out += hex[c >> 4];
    out += hex[c & 0xf];
  } else {
    out += static_cast<char>(c);
  }
}

// `text` cut at `max` bytes, backed off so that a UTF-8 sequence is not split.
std::string_view cut(std::string_view text, std::size_t max) {
  if (text.size() <= max) return text;
  std::size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xc0) == 0x80) --n;
  return text.substr(0, n);
}

}  // namespace

std::string printable(std::string_view text, std::size_t max_chars) {
  const std::string_view kept = cut(text, max_chars);
  std::string out;
  out.reserve(kept.size() + 16);
  for (char c : kept) append_escaped(out, static_cast<unsigned char>(c));
  if (kept.size() < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

std::string printable_line(std::string_view line) {
  std::string out;
  std::size_t i = 0;
  while (i < line.size() && out.size() < kMaxLineBytes) {
    if (line[i] == '"') {
      // A quoted value: up to the next quote (or the end of the line), cut as one value.
      const std::size_t close = line.find('"', i + 1);
      const std::size_t end = close == std::string_view::npos ? line.size() : close;
      out += '"';
      out += printable(line.substr(i + 1, end - i - 1));
      if (close != std::string_view::npos) out += '"';
      i = close == std::string_view::npos ? line.size() : close + 1;
    } else {
      append_escaped(out, static_cast<unsigned char>(line[i]));
      ++i;
    }
  }
  if (i < line.size()) {
    out = std::string(cut(out, kMaxLineBytes));
    out += "... (line cut)";
  }
  return out;
}

std::vector<std::string> capped_problems(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < lines.size() && i < kMaxProblems; ++i) out.push_back(printable_line(lines[i]));
  if (lines.size() > kMaxProblems) {
    const std::string& next = lines[kMaxProblems];
    const std::size_t colon = next.find(": ");
    const std::string prefix = colon == std::string::npos ? std::string() : printable(next.substr(0, colon), 400) + ": ";
    const std::size_t more = lines.size() - kMaxProblems;
    out.push_back(prefix + "... and " + std::to_string(more) + " more problem" + (more == 1 ? "" : "s") +
                  " (the first " + std::to_string(kMaxProblems) + " are listed)");
  }
  return out;
}

}  // namespace cs::files
