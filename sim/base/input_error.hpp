#pragma once
// Bad user input, for every layer that reads a file (scenarios, topology files, calibration profiles,
// measurement files): it carries where (file, JSON path or line) and what was expected, one complete line
// per problem ("file: json.path: what" or "file:line: what"). The CLI prints each message as one line on
// stderr and exits with code 2. A broken invariant is not input: that is CS_CHECK (sim/base/check.hpp).
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cs {

class InputError : public std::runtime_error {
 public:
  // `messages` are complete one-line errors; what() joins them with newlines.
  explicit InputError(std::vector<std::string> messages)
      : std::runtime_error(join_lines(messages)), messages_(std::move(messages)) {}
  explicit InputError(const std::string& message) : InputError(std::vector<std::string>{message}) {}
  const std::vector<std::string>& messages() const { return messages_; }

 private:
  static std::string join_lines(const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& l : lines) {
      if (!out.empty()) out += '\n';
      out += l;
    }
    return out;
  }
  std::vector<std::string> messages_;
};

}  // namespace cs
