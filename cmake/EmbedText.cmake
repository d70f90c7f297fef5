# Script mode: writes a C++ source whose function returns the text of a file, so that data the binary
# needs (calibrate/published/framework-defaults.json) is compiled in rather than looked up at run time.
#   cmake -DINPUT=<file> -DOUTPUT=<file.cpp> -DFUNCTION=<ns::name> -DHEADER=<include> -DLABEL=<repo path> -P EmbedText.cmake
# The function is `std::string_view FUNCTION()`; the text goes in raw string literals, which it must not
# close itself. One literal may hold 65,536 characters without -Woverlength-strings (-Wpedantic), and
# adjacent literals count as one: a longer text is cut at line ends into literals of at most 60,000
# characters, joined into one static std::string on the first call.
file(READ "${INPUT}" text)
set(delimiter "clustersim_embed")
string(FIND "${text}" ")${delimiter}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw-string delimiter )${delimiter}\"")
endif()
set(limit 60000)
set(count 0)  # pieces in piece_0 .. piece_<count-1> (not a list: the text may hold semicolons)
string(LENGTH "${text}" length)
while(length GREATER limit)
  string(SUBSTRING "${text}" 0 ${limit} head)
  string(FIND "${head}" "\n" cut REVERSE)
  if(cut LESS 1)
    message(FATAL_ERROR "${INPUT} has a line longer than ${limit} characters")
  endif()
  math(EXPR cut "${cut} + 1")
  string(SUBSTRING "${text}" 0 ${cut} head)
  string(SUBSTRING "${text}" ${cut} -1 text)
  set(piece_${count} "${head}")
  math(EXPR count "${count} + 1")
  string(LENGTH "${text}" length)
endwhile()
string(REGEX REPLACE "::[^:]+$" "" ns "${FUNCTION}")
string(REGEX REPLACE "^.*::" "" fn "${FUNCTION}")
set(body "")
if(count GREATER 0)
  # Each piece in its own literal, appended at run time (once).
  set(body "  static const std::string text = [] {\n    std::string s;\n")
  math(EXPR last "${count} - 1")
  foreach(i RANGE ${last})
    string(APPEND body "    s += R\"${delimiter}(${piece_${i}})${delimiter}\";\n")
  endforeach()
  string(APPEND body "    s += R\"${delimiter}(${text})${delimiter}\";\n    return s;\n  }();\n  return text;\n")
else()
  set(body "  return R\"${delimiter}(${text})${delimiter}\";\n")
endif()
file(WRITE "${OUTPUT}"
  "// Generated from ${LABEL} by cmake/EmbedText.cmake; do not edit.\n"
  "#include <string>\n\n"
  "#include \"${HEADER}\"\n\n"
  "namespace ${ns} {\n\n"
  "std::string_view ${fn}() {\n"
  "${body}"
  "}\n\n"
  "}  // namespace ${ns}\n")
