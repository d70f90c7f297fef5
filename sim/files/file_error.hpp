#pragma once
// The error of the file layer (sim/files): a file that cannot be read or written, or a JSON text that is
// not acceptable input. Each message is a complete line naming the file ("path:line:col: what"). The
// callers (the scenario loader, the calibration readers, the topology reader, the output writers) turn it
// into their own input error, so it reaches the user as one line per problem and exit code 2.
#include <stdexcept>
#include <string>
#include <vector>

namespace cs::files {

class FileError : public std::runtime_error {
 public:
  explicit FileError(std::vector<std::string> messages);
  explicit FileError(const std::string& message) : FileError(std::vector<std::string>{message}) {}
  const std::vector<std::string>& messages() const { return messages_; }

 private:
  std::vector<std::string> messages_;
};

}  // namespace cs::files
