// docs/architecture.md stays true to the tree: every repository path it names in backticks exists, every
// `file:function` pair names something that appears in that file, and every room the build declares
// (clustersim_room(NAME PATH P ...) in a CMakeLists.txt) is named on the page.
//
// What counts, in a backtick span without spaces:
//   a path      `sim/step/step_builder.cpp`, `sim/engine/` : [A-Za-z0-9_.-] segments joined by '/', at
//               least one '/', optionally ending in '/' (a folder). It must exist below CLUSTERSIM_SOURCE_DIR.
//   a pair      `sim/simulation.cpp:simulate_built`, `sim/step/step_units.cpp:UnitOps::of` : a path, ':',
//               a C++ name. The file must exist, and the last part of the name must appear as an identifier
//               followed by '(', '{', '[' or '=' (a function, a constructor, a table) or after struct / class
//               / enum (a type); every qualifier before it (UnitOps in UnitOps::of) must appear as a word.
//               In a .json file the name must appear as a quoted string. A plain substring check in spirit:
//               it guards against renames and typos, not against a name moving to a neighbouring function.
// Spans with a space (commands, code) and spans without '/' (JSON keys, C++ names) are not checked.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every `...` span of a markdown text, code blocks (``` fences) left out.
std::vector<std::string> backtick_spans(const std::string& md) {
  std::vector<std::string> out;
  std::istringstream lines(md);
  std::string line;
  bool fenced = false;
  while (std::getline(lines, line)) {
    if (line.rfind("```", 0) == 0) {
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    for (std::size_t a = line.find('`'); a != std::string::npos;) {
      const std::size_t b = line.find('`', a + 1);
      if (b == std::string::npos) break;
      out.push_back(line.substr(a + 1, b - a - 1));
      a = line.find('`', b + 1);
    }
  }
  return out;
}

const std::regex kPath(R"(([A-Za-z0-9_.\-]+/)+[A-Za-z0-9_.\-]*)");
const std::regex kPair(R"((([A-Za-z0-9_.\-]+/)*[A-Za-z0-9_\-]+\.[A-Za-z0-9]+):([A-Za-z_~][A-Za-z0-9_:~]*))");

bool word_in(const std::string& text, const std::string& word) {
  return std::regex_search(text, std::regex("\\b" + word + "\\b"));
}

// Whether `name` (possibly qualified, A::B::f) is something `text` defines or declares (see the header).
bool names_in(const std::string& text, const std::string& name, bool json) {
  if (json) return text.find('"' + name + '"') != std::string::npos;
  std::vector<std::string> parts;
  for (std::size_t a = 0;;) {
    const std::size_t b = name.find("::", a);
    parts.push_back(name.substr(a, b == std::string::npos ? std::string::npos : b - a));
    if (b == std::string::npos) break;
    a = b + 2;
  }
  for (std::size_t i = 0; i + 1 < parts.size(); ++i)
    if (parts[i].empty() || !word_in(text, parts[i])) return false;
  const std::string& last = parts.back();
  if (last.empty()) return false;
  return std::regex_search(text, std::regex("\\b" + last + R"(\s*[({\[=])")) ||
         std::regex_search(text, std::regex(R"((struct|class|enum)\s+)" + last + "\\b"));
}

struct Problems {
  std::vector<std::string> lines;
  int paths = 0, pairs = 0;
};

// Checks every span of `md` against the tree at `root`.
Problems check_spans(const std::string& md, const fs::path& root) {
  Problems p;
  for (const std::string& span : backtick_spans(md)) {
    std::smatch m;
    if (std::regex_match(span, m, kPair)) {
      ++p.pairs;
      const fs::path file = root / m[1].str();
      if (!fs::is_regular_file(file)) {
        p.lines.push_back("`" + span + "`: no file " + m[1].str());
        continue;
      }
      if (!names_in(read_text(file), m[3].str(), file.extension() == ".json"))
        p.lines.push_back("`" + span + "`: " + m[3].str() + " does not appear in " + m[1].str());
    } else if (std::regex_match(span, kPath)) {
      ++p.paths;
      if (!fs::exists(root / span)) p.lines.push_back("`" + span + "`: no such path");
    }
  }
  return p;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& l : v) s += l + "\n";
  return s;
}

const fs::path kRoot = CLUSTERSIM_SOURCE_DIR;

}  // namespace

TEST_CASE("docs: architecture.md names only paths and functions that exist", "[sim][docs]") {
  const std::string md = read_text(kRoot / "docs" / "architecture.md");
  REQUIRE_FALSE(md.empty());
  const Problems p = check_spans(md, kRoot);
  INFO(joined(p.lines));
  CHECK(p.lines.empty());
  // The page is a map: it names many files and many functions (so a parse that found none fails here).
  CHECK(p.paths >= 40);
  CHECK(p.pairs >= 80);
}

TEST_CASE("docs: architecture.md names every room the build declares", "[sim][docs]") {
  const std::string md = read_text(kRoot / "docs" / "architecture.md");
  std::set<std::string> spans;
  for (const auto& s : backtick_spans(md)) spans.insert(s);
  const std::regex room(R"(clustersim_room\(\s*(\w+)\s+PATH\s+([^\s)]+))");
  int rooms = 0;
  std::vector<std::string> missing;
  // The top-level CMakeLists.txt and every one below the folders that hold code.
  std::vector<fs::path> lists = {kRoot / "CMakeLists.txt"};
  for (const char* dir : {"sim", "models", "topologies", "calibrate", "gui", "bench"})
    for (const auto& e : fs::recursive_directory_iterator(kRoot / dir))
      if (e.is_regular_file() && e.path().filename() == "CMakeLists.txt") lists.push_back(e.path());
  std::sort(lists.begin(), lists.end());
  for (const fs::path& list : lists) {
    const std::string text = read_text(list);
    REQUIRE_FALSE(text.empty());
    for (std::sregex_iterator it(text.begin(), text.end(), room), end; it != end; ++it) {
      ++rooms;
      // PATH is from the repository's root in every CMakeLists.txt (cmake/ClustersimRooms.cmake).
      const std::string path = (*it)[2].str();
      const bool folder = fs::is_directory(kRoot / path);
      if (!spans.count(path) && !(folder && spans.count(path + "/"))) missing.push_back((*it)[1].str() + " (" + path + ")");
    }
  }
  INFO("rooms not named on the page:\n" << joined(missing));
  CHECK(missing.empty());
  CHECK(rooms >= 25);  // base, files, six models rooms, topologies, four calibrate rooms, ten sim rooms, python, gui
}

TEST_CASE("docs: the architecture check finds a missing path, a missing function and a renamed type", "[sim][docs]") {
  // Worked example of the checker on a page of five spans: two good (a folder, a function of a real file),
  // three bad (a file that is not there, a function that is not in its file, a qualifier that is not).
  const std::string md =
      "The rooms live in `sim/engine/`; the front door is `sim/simulation.cpp:simulate_built`.\n"
      "Wrong: `sim/engine/no_such_file.cpp`, `sim/simulation.cpp:no_such_function`,\n"
      "`sim/step/step_units.cpp:NoSuchClass::of`. Not checked: `clustersim run x.json`, `model.mla`.\n"
      "```\nsim/not/checked/in/a/fence.cpp\n```\n";
  const Problems p = check_spans(md, kRoot);
  CHECK(p.paths == 2);
  CHECK(p.pairs == 3);
  REQUIRE(p.lines.size() == 3);
  CHECK(p.lines[0] == "`sim/engine/no_such_file.cpp`: no such path");
  CHECK(p.lines[1] == "`sim/simulation.cpp:no_such_function`: no_such_function does not appear in sim/simulation.cpp");
  CHECK(p.lines[2] == "`sim/step/step_units.cpp:NoSuchClass::of`: NoSuchClass::of does not appear in sim/step/step_units.cpp");
}
