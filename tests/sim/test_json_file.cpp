// The JSON reader and the message helpers of sim/files (json_file.hpp, printable.hpp): the limits at their
// edges. The CLI-level messages are in tests/cli/test_input_files.cpp.
#include <catch2/catch.hpp>

#include <string>

#include "sim/files/file_error.hpp"
#include "sim/files/json_file.hpp"
#include "sim/files/printable.hpp"

using cs::files::FileError;
using cs::files::parse_json;

namespace {

std::string error_of(const std::string& text) {
  try {
    parse_json(text, "t.json");
  } catch (const FileError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("json reader: 256 levels are read, 257 are not", "[sim][files]") {
  const std::string ok = std::string(256, '[') + std::string(256, ']');
  CHECK(parse_json(ok, "t.json").is_array());
  // The 257th '[' is at offset 256, column 257.
  CHECK(error_of(std::string(257, '[') + std::string(257, ']')) ==
        "t.json:1:257: objects and arrays nested deeper than 256 levels");
}

TEST_CASE("json reader: one key in two objects is no duplicate, twice in one is", "[sim][files]") {
  const auto v = parse_json(R"({"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 3}, {"x": 4}]})", "t.json");
  CHECK(v["b"]["x"] == 2);
  CHECK(v["c"][1]["x"] == 4);
  // The inner object's second "x" closes at offset 17 (column 18).
  CHECK(error_of(R"({"a": {"x": 1, "x": 2}})") == "t.json:1:18: duplicate key \"x\" (first given at line 1; JSON keeps only one of them)");
}

TEST_CASE("json reader: the largest double is read, the next power of ten is not", "[sim][files]") {
  CHECK(parse_json("[1.7976931348623157e308, -1e308, 1e-400]", "t.json")[0] == 1.7976931348623157e308);
  CHECK(error_of("[1e309]") == "t.json:1:2: number out of range: 1e309 (a JSON number here must be finite and fit a "
                               "double, at most about 1.8e308)");
  // 2^64 - 1 is an unsigned integer; one more is read as a double, which is fine.
  CHECK(parse_json("18446744073709551615", "t.json").is_number_unsigned());
  CHECK(parse_json("18446744073709551616", "t.json").is_number_float());
}

TEST_CASE("json reader: a syntax error keeps each reader's style", "[sim][files]") {
  try {
    parse_json("{\n  \"a\": 1,,\n}", "s.json");
    FAIL("no error");
  } catch (const FileError& e) {
    CHECK(std::string(e.what()).rfind("s.json:2:10: invalid JSON: syntax error", 0) == 0);
  }
  try {
    parse_json("{\n  \"a\": 1,,\n}", "p.json", cs::files::SyntaxStyle::line);
    FAIL("no error");
  } catch (const FileError& e) {
    CHECK(std::string(e.what()).rfind("p.json:2: invalid JSON (syntax error", 0) == 0);
  }
}

TEST_CASE("printable: control bytes escaped, long values cut at a UTF-8 boundary", "[sim][files]") {
  using cs::files::printable;
  CHECK(printable(std::string("a\nb\tc\x1b[0m\x7f") + '\0') == "a\\nb\\tc\\x1b[0m\\x7f\\x00");
  CHECK(printable(std::string(100, 'x')) == std::string(80, 'x') + "... (100 bytes)");
  // 79 ASCII bytes then a two-byte "é": cutting at 80 would split it, so it is cut at 79.
  CHECK(printable(std::string(79, 'x') + "\xc3\xa9" + "yy") == std::string(79, 'x') + "... (83 bytes)");
  CHECK(cs::files::printable_line("f: \"" + std::string(200, 'v') + "\" tail") ==
        "f: \"" + std::string(80, 'v') + "... (200 bytes)\" tail");
}

TEST_CASE("capped problems: 20 lines, then the count naming the file", "[sim][files]") {
  std::vector<std::string> lines;
  for (int i = 0; i < 25; ++i) lines.push_back("f.json: k" + std::to_string(i) + ": unknown key");
  const auto out = cs::files::capped_problems(lines);
  REQUIRE(out.size() == 21);
  CHECK(out[19] == "f.json: k19: unknown key");
  CHECK(out[20] == "f.json: ... and 5 more problems (the first 20 are listed)");
  lines.resize(20);
  CHECK(cs::files::capped_problems(lines).size() == 20);
}
