#pragma once
// The error of the file layer (sim/files): a file that cannot be read or written, or a JSON text that is
// not acceptable input. Each message is a complete line naming the file ("path:line:col: what"). The
// callers (the scenario loader, the calibration readers, the topology reader, the output writers) turn it
// into the input error (as_input_error below), so it reaches the user as one line per problem and exit
// code 2.
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/base/input_error.hpp"

namespace cs::files {

// `lines` joined with newlines: the what() of an error that carries several one-line messages.
std::string join_lines(const std::vector<std::string>& lines);

// "a directory", "a FIFO (named pipe)", "a character device", ... for a stat(2) st_mode that is not a
// regular file.
std::string file_type_name(unsigned mode);

class FileError : public std::runtime_error {
 public:
  explicit FileError(std::vector<std::string> messages);
  explicit FileError(const std::string& message) : FileError(std::vector<std::string>{message}) {}
  const std::vector<std::string>& messages() const { return messages_; }

 private:
  std::vector<std::string> messages_;
};

// What `call` (a call into this layer) returns, its FileError thrown on as the InputError users see.
template <class F>
decltype(auto) as_input_error(F&& call) {
  try {
    return call();
  } catch (const FileError& e) {
    throw InputError(e.messages());
  }
}

}  // namespace cs::files
