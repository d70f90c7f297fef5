#include "sim/files/json_file.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <vector>

#include "sim/files/file_error.hpp"
#include "sim/files/printable.hpp"

namespace cs::files {
namespace {

using json = nlohmann::json;

// A character iterator that records how far the parser has read, so that a SAX event (which carries no
// position) can be placed: when key() is called, the lexer has just read the key's closing quote.
class TrackingIterator {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  TrackingIterator() = default;
  TrackingIterator(const char* p, const char** furthest) : p_(p), furthest_(furthest) {}
  reference operator*() const { return *p_; }
  TrackingIterator& operator++() {
    ++p_;
    if (furthest_ && p_ > *furthest_) *furthest_ = p_;
    return *this;
  }
  TrackingIterator operator++(int) {
    TrackingIterator old = *this;
    ++*this;
    return old;
  }
  bool operator==(const TrackingIterator& o) const { return p_ == o.p_; }
  bool operator!=(const TrackingIterator& o) const { return p_ != o.p_; }

 private:
  const char* p_ = nullptr;
  const char** furthest_ = nullptr;
};

struct Position {
  std::size_t line = 1, column = 1;
};

Position position_of(const std::string& text, std::size_t offset) {
  offset = std::min(offset, text.size());
  Position p;
  const auto end = text.begin() + static_cast<std::ptrdiff_t>(offset);
  p.line = 1 + static_cast<std::size_t>(std::count(text.begin(), end, '\n'));
  const auto nl = offset == 0 ? std::string::npos : text.rfind('\n', offset - 1);
  p.column = offset - (nl == std::string::npos ? 0 : nl + 1) + 1;
  return p;
}

// Builds the value like nlohmann's own DOM parser (a stack of open containers), checking depth and
// duplicate keys on the way.
class Builder {
 public:
  Builder(const std::string& text, const std::string& file, SyntaxStyle style, const char** furthest)
      : text_(text), file_(file), style_(style), furthest_(furthest) {}

  bool null() { return put(json(nullptr)); }
  bool boolean(bool b) { return put(json(b)); }
  bool number_integer(json::number_integer_t v) { return put(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return put(json(v)); }
  bool number_float(json::number_float_t v, const json::string_t&) { return put(json(v)); }
  bool string(json::string_t& s) { return put(json(std::move(s))); }
  bool binary(json::binary_t& b) { return put(json::binary(std::move(b))); }
  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(json::string_t& k) {
    const std::size_t at = here() == 0 ? 0 : here() - 1;  // the key's closing quote
    auto& seen = keys_.back();
    if (auto it = seen.find(k); it != seen.end()) {
      const Position first = position_of(text_, it->second);
      if (++duplicates_ <= kMaxProblems)
        problem(at, "duplicate key \"" + printable(k) + "\" (first given at line " + std::to_string(first.line) +
                        "; JSON keeps only one of them)");
    } else {
      seen.emplace(k, at);
    }
    key_ = std::move(k);
    return true;
  }

  bool parse_error(std::size_t position, const std::string& last_token, const nlohmann::detail::exception& ex) {
    if (ex.id == 406) {  // out_of_range.406: number overflow
      const std::size_t start = position >= last_token.size() ? position - last_token.size() : 0;
      problem(start, "number out of range: " + printable(last_token) +
                         " (a JSON number here must be finite and fit a double, at most about 1.8e308)");
      return false;
    }
    std::string what = ex.what();
    if (auto p = what.find("syntax error"); p != std::string::npos) what = what.substr(p);
    what = printable(what, 300);
    const std::size_t at = position == 0 ? 0 : position - 1;
    const Position pos = position_of(text_, at);
    if (style_ == SyntaxStyle::line_column)
      problems_.push_back(file_ + ":" + std::to_string(pos.line) + ":" + std::to_string(pos.column) +
                          ": invalid JSON: " + what);
    else
      problems_.push_back(file_ + ":" + std::to_string(pos.line) + ": invalid JSON (" + what + ")");
    return false;
  }

  json& result() { return root_; }
  std::vector<std::string>& problems() { return problems_; }

 private:
  std::size_t here() const { return static_cast<std::size_t>(*furthest_ - text_.data()); }

  void problem(std::size_t offset, const std::string& what) {
    const Position p = position_of(text_, offset);
    problems_.push_back(file_ + ":" + std::to_string(p.line) + ":" + std::to_string(p.column) + ": " + what);
  }

  // Puts `v` where the parser is: the root, the next array element or the value of the last key. Returns a
  // pointer to the stored value.
  json* place(json&& v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    json& top = *stack_.back();
    if (top.is_array()) {
      top.push_back(std::move(v));
      return &top.back();
    }
    json& slot = top[key_];
    slot = std::move(v);
    return &slot;
  }

  bool put(json&& v) {
    place(std::move(v));
    return true;
  }

  bool open(json&& container) {
    if (static_cast<int>(stack_.size()) >= kMaxJsonDepth) {
      const std::size_t at = here() == 0 ? 0 : here() - 1;
      problem(at, "objects and arrays nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
      return false;
    }
    const bool object = container.is_object();
    stack_.push_back(place(std::move(container)));
    keys_.emplace_back();
    if (!object) keys_.back().clear();
    return true;
  }

  bool close() {
    stack_.pop_back();
    keys_.pop_back();
    return true;
  }

  const std::string& text_;
  const std::string& file_;
  SyntaxStyle style_;
  const char** furthest_;
  json root_;
  std::vector<json*> stack_;
  std::vector<std::map<std::string, std::size_t>> keys_;  // per open container: key -> offset of its first use
  std::string key_;
  std::size_t duplicates_ = 0;
  std::vector<std::string> problems_;
};

}  // namespace

json parse_json(const std::string& text, const std::string& file, SyntaxStyle style) {
  const char* furthest = text.data();
  Builder b(text, file, style, &furthest);
  TrackingIterator first(text.data(), &furthest), last(text.data() + text.size(), nullptr);
  const bool ok = json::sax_parse(first, last, &b);
  if (!ok || !b.problems().empty()) {
    auto& p = b.problems();
    if (p.empty()) p.push_back(file + ": invalid JSON");
    throw FileError(std::move(p));
  }
  return std::move(b.result());
}

std::optional<json> parse_json_value(const std::string& text) {
  try {
    return parse_json(text, "");
  } catch (const FileError&) {
    return std::nullopt;
  }
}

bool valid_utf8(const std::string& text) {
  try {
    (void)json(text).dump();  // nlohmann's serializer validates UTF-8 (type_error 316 on a bad byte)
    return true;
  } catch (const json::type_error&) {
    return false;
  }
}

std::string quoted_for_message(const std::string& text) {
  return json(text).dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace cs::files
