#pragma once
// Reading a user's file whole, for every layer that loads one (scenarios, topology files, calibration
// profiles, measurement files): a file that cannot be opened is bad input naming the file.
#include <fstream>
#include <sstream>
#include <string>

#include "sim/base/input_error.hpp"

namespace cs {

// The bytes of the file at `path`; InputError "<path>: cannot open <what>" when it cannot be opened.
inline std::string read_input_file(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open " + what);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace cs
