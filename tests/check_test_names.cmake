# Fails when a TEST_CASE name holds '[' or ']'. catch_discover_tests reads `--list-test-names-only`, and
# Catch's own test-spec syntax treats brackets as tags: such a name, and every test after it in that
# executable, collapses into one CTest entry that runs nothing and passes. (It happened: 40 CLI tests
# went unrun.) A ';' does the same another way: CMake cuts the name there, Catch is asked for a test of the
# first part, matches none and exits 0 (found in session 14: 10 tests never ran).
# usage: cmake -DTEST_DIR=tests -P check_test_names.cmake
file(GLOB_RECURSE sources "${TEST_DIR}/*.cpp")
set(bad "")
foreach(src ${sources})
  file(STRINGS "${src}" lines REGEX "TEST_CASE\\(\"[^\"]*[][;][^\"]*\"")
  foreach(line ${lines})
    string(APPEND bad "\n  ${src}: ${line}")
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "TEST_CASE names with '[', ']' or ';' break CTest discovery:${bad}")
endif()
