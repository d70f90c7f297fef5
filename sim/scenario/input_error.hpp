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

// The choice a misspelt `word` most likely meant, or "" when none is near: a choice that starts with what
// was typed ("H100" -> "H100-SXM") first, else the nearest by edit distance within max(2, |word|/3).
std::string nearest_name(const std::string& word, const std::vector<std::string>& choices);

// "unknown GPU "NAME" (did you mean "NEAR"?) (known: A, B, ...)", for a GPU name given on the command line
// or in a file.
std::string unknown_gpu(const std::string& name, const std::vector<std::string>& known);

}  // namespace cs::sim
