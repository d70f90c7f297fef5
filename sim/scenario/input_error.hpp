#pragma once
// Bad user input: carries where (file, JSON path or line) and what was expected. The CLI prints each
// message as one line on stderr and exits with code 2.
#include <stdexcept>
#include <string>
#include <vector>

namespace cs::sim {

class InputError : public std::runtime_error {
 public:
  // `messages` are complete one-line errors ("file: path: what"); what() joins them with newlines.
  explicit InputError(std::vector<std::string> messages);
  explicit InputError(const std::string& message) : InputError(std::vector<std::string>{message}) {}
  const std::vector<std::string>& messages() const { return messages_; }

 private:
  std::vector<std::string> messages_;
};

}  // namespace cs::sim
