# Script mode: writes a C++ source whose function returns the text of a file, so that data the binary
# needs (calibrate/published/framework-defaults.json) is compiled in rather than looked up at run time.
#   cmake -DINPUT=<file> -DOUTPUT=<file.cpp> -DFUNCTION=<ns::name> -DHEADER=<include> -DLABEL=<repo path> -P EmbedText.cmake
# The function is `std::string_view FUNCTION()`; the text goes in a raw string literal, which it must not
# close itself.
file(READ "${INPUT}" text)
string(LENGTH "${text}" length)
if(length GREATER 65000)  # -Woverlength-strings (-Wpedantic) beyond 65536 characters
  message(FATAL_ERROR "${INPUT} is ${length} characters: past what one string literal may hold without a warning")
endif()
set(delimiter "clustersim_embed")
string(FIND "${text}" ")${delimiter}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw-string delimiter )${delimiter}\"")
endif()
string(REGEX REPLACE "::[^:]+$" "" ns "${FUNCTION}")
string(REGEX REPLACE "^.*::" "" fn "${FUNCTION}")
file(WRITE "${OUTPUT}"
  "// Generated from ${LABEL} by cmake/EmbedText.cmake; do not edit.\n"
  "#include \"${HEADER}\"\n\n"
  "namespace ${ns} {\n\n"
  "std::string_view ${fn}() {\n"
  "  return R\"${delimiter}(${text})${delimiter}\";\n"
  "}\n\n"
  "}  // namespace ${ns}\n")
