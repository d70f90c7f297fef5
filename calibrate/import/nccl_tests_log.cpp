#include "calibrate/import/nccl_tests_log.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <istream>
#include <limits>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include "models/compute/comm_profile.hpp"
#include "sim/base/bounds.hpp"

namespace cs::calibrate {

namespace {

// Relative tolerance between the printed busbw and size / time x factor: the printed numbers carry two
// decimals (fewer for large values, getFloatStr), so a few percent is rounding; more is a garbled row.
constexpr double kBusbwTolerance = 0.05;
// Below this printed busbw the rounding to 0.01 GB/s dominates; no check.
constexpr double kBusbwCheckFloor_GBps = 1.0;
// A streamed log is read a line at a time through a buffer of this size (nccl-tests' lines are ~150 bytes).
constexpr std::size_t kMaxLineBytes = 65536;

std::vector<std::string_view> tokens_of(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    const std::size_t start = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

std::optional<std::int64_t> parse_int(std::string_view t) {
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || p != t.data() + t.size()) return std::nullopt;
  return v;
}

std::optional<double> parse_double(std::string_view t) {
  // from_chars for double is not in every libstdc++ we meet; strtod on a bounded copy.
  if (t.empty() || t.size() > 64) return std::nullopt;
  const std::string s(t);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

bool starts_with_digit(std::string_view t) { return !t.empty() && std::isdigit(static_cast<unsigned char>(t[0])); }

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_number(std::string_view t) { return parse_double(t).has_value(); }
bool is_int(std::string_view t) { return parse_int(t).has_value(); }

// A data row's first three fields: size and count (integers) and a type name ("float", "bfloat16").
bool row_shaped(const std::vector<std::string_view>& t) {
  return t.size() >= 3 && is_int(t[0]) && is_int(t[1]) && !is_number(t[2]);
}

// The rest of a row cut by a NCCL message: it starts with a number of a block (or "N/A" of #wrong).
bool continuation_shaped(const std::vector<std::string_view>& t) {
  return !t.empty() && (is_number(t[0]) || t[0] == "N/A") && !row_shaped(t);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Launcher prefixes, removed from a line before anything else. Returns the launcher's name when one was
// at the start of `s` (and removes it, setting `task` to the task or rank it names), nullptr otherwise.
//   srun -l / --label:            "%*d: "  task id right-aligned to the widest id ("0: ", " 12: ")
//   Open MPI --tag-output:        "[jobid,rank]<stdout>:" (4.x), "[jobid,rank]<stdout>: " (5.x, --output tag)
//   MPICH / Intel MPI -l:         "[rank] " (hydra's -prepend-rank)
const char* strip_launcher_prefix(std::string_view& s, int& task) {
  std::size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  std::size_t d = i;
  while (d < s.size() && std::isdigit(static_cast<unsigned char>(s[d]))) ++d;
  if (d > i && d - i <= 7 && d < s.size() && s[d] == ':' && (d + 1 == s.size() || s[d + 1] == ' ')) {
    task = static_cast<int>(parse_int(s.substr(i, d - i)).value_or(-1));
    s.remove_prefix(std::min(s.size(), d + 2));
    return "srun --label";
  }
  if (i < s.size() && s[i] == '[') {
    const std::size_t close = s.find(']', i);
    if (close == std::string_view::npos || close - i > 128) return nullptr;
    const std::string_view inside = s.substr(i + 1, close - i - 1);
    const std::string_view after = s.substr(close + 1);
    for (std::string_view tag : {std::string_view("<stdout>:"), std::string_view("<stderr>:")}) {
      if (after.substr(0, tag.size()) == tag && inside.find(',') != std::string_view::npos) {
        const auto rank = parse_int(inside.substr(inside.rfind(',') + 1));
        task = rank && *rank >= 0 && *rank < (1 << 24) ? static_cast<int>(*rank) : -1;
        s.remove_prefix(close + 1 + tag.size());
        if (!s.empty() && s.front() == ' ') s.remove_prefix(1);
        return "Open MPI --tag-output";
      }
    }
    // "[0] " of MPICH; NCCL's own "[dev]" never starts a line (the host comes first).
    if (!inside.empty() && inside.size() <= 7 &&
        std::all_of(inside.begin(), inside.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) &&
        close + 1 < s.size() && s[close + 1] == ' ') {
      task = static_cast<int>(parse_int(inside).value_or(-1));
      s.remove_prefix(close + 2);
      return "MPI -prepend-rank";
    }
  }
  return nullptr;
}

// Open MPI forwards a partial line with its tag, so the rest of a row can carry a second tag mid-line.
std::string remove_inner_mpi_tags(std::string_view s) {
  std::string out;
  std::size_t pos = 0;
  for (;;) {
    std::size_t tag = s.find("]<std", pos);
    if (tag == std::string_view::npos) break;
    // The tag's '[' is at most 128 characters back (a bounded look, whatever the line holds).
    const std::size_t lo = std::max(pos, tag >= 128 ? tag - 128 : std::size_t{0});
    const std::size_t back = s.substr(lo, tag - lo).rfind('[');
    const std::size_t open = back == std::string_view::npos ? std::string_view::npos : lo + back;
    const std::string_view rest = s.substr(tag + 1);
    const bool is_tag = open != std::string_view::npos &&
                        (rest.substr(0, 9) == "<stdout>:" || rest.substr(0, 9) == "<stderr>:");
    if (!is_tag) {
      out.append(s.substr(pos, tag + 1 - pos));
      pos = tag + 1;
      continue;
    }
    out.append(s.substr(pos, open - pos));
    pos = tag + 10;
    if (pos < s.size() && s[pos] == ' ') ++pos;
  }
  out.append(s.substr(std::min(pos, s.size())));
  return out;
}

// Where a NCCL debug message starts in `s` (npos: none). The levels as NCCL prints them (src/debug.cc):
// "host:pid:tid [dev] NCCL INFO", "host:pid:tid [dev] file:line NCCL WARN", "... NCCL TRACE".
std::size_t nccl_marker(std::string_view s) {
  std::size_t best = std::string_view::npos;
  for (std::string_view m : {std::string_view("NCCL INFO"), std::string_view("NCCL WARN"), std::string_view("NCCL TRACE"),
                             std::string_view("NCCL CALL")}) {
    const std::size_t at = s.find(m);
    if (at < best) best = at;
  }
  return best;
}

struct Layout {
  bool header = false;                  // a column header was read
  std::vector<std::string> lead_names;  // the header's columns before the first block ("size", ..., "root")
  int block = 4;                        // columns per out-of-place / in-place block
  int blocks = 2;                       // blocks in a row (1: one placement only)
  bool first_is_in_place = false;       // blocks == 1 and the label line names only in-place
  bool wrong = true;  // the 4th column of a block is "#wrong" (the old format's "error" is a max error)
};

class Parser {
 public:
  Parser(const std::string& file, const NcclTestsHints& hints) : hints_(hints) {
    log_.file = file;
    runs_.emplace_back();
    runs_.back().first_line = 1;
  }

  // One line of the log (without its '\n'), numbered from 1.
  void line(std::string_view line, int line_no) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    line_task_ = -1;
    for (int i = 0; i < 3; ++i) {  // srun --label around an MPI tag, at most a few deep
      int task = -1;
      const char* launcher = strip_launcher_prefix(line, task);
      if (!launcher) break;
      if (line_task_ < 0) line_task_ = task;
      if (std::find(log_.launchers.begin(), log_.launchers.end(), launcher) == log_.launchers.end())
        log_.launchers.emplace_back(launcher);
    }
    if (line.find("]<std") != std::string_view::npos) {
      const std::string cleaned = remove_inner_mpi_tags(line);
      split_nccl_message(cleaned, line_no);
    } else {
      split_nccl_message(line, line_no);
    }
  }
  void problem(int line, const std::string& what) {
    log_.problems.push_back(log_.file + ":" + std::to_string(line) + ": " + what);
  }

  NcclTestsLog finish() {
    flush_pending();
    finish_run();
    if (too_many_line_ > 0)
      log_.too_many_rows = log_.file + ":" + std::to_string(too_many_line_) + ": more than " +
                           std::to_string(kMaxNcclTestsRows) + " data rows (" + std::to_string(rows_seen_) +
                           " in all; an nccl-tests sweep prints tens per run): split the file or keep the runs to fit";
    for (auto& r : runs_)
      if (!r.rows.empty() || !r.collective_name.empty() || r.ranks > 0) log_.runs.push_back(std::move(r));
    if (!wrong_lines_.empty()) {
      // One warning for all of them: nccl-tests counted wrong results in these rows (its #wrong column).
      log_.problems.push_back(log_.file + ": " + std::to_string(wrong_lines_.size()) + " row" +
                              (wrong_lines_.size() == 1 ? "" : "s") +
                              " with a nonzero #wrong (nccl-tests found wrong results) skipped: line" +
                              (wrong_lines_.size() == 1 ? " " : "s ") + line_list(wrong_lines_));
    }
    if (other_task_count_ > 0) {
      std::string lines = line_list(other_task_lines_);
      if (other_task_count_ > other_task_lines_.size())
        lines += " and " + std::to_string(other_task_count_ - other_task_lines_.size()) + " more";
      log_.problems.push_back(log_.file + ": " + std::to_string(other_task_count_) + " line" +
                              (other_task_count_ == 1 ? "" : "s") + " from launcher tasks other than task " +
                              std::to_string(table_task_) + " skipped (each task printed its own run: nccl-tests "
                              "built without MPI runs a separate test in every task): line" +
                              (other_task_count_ == 1 ? " " : "s ") + lines);
    }
    if (warn_count_ > 0)
      log_.problems.push_back(log_.file + ":" + std::to_string(first_warn_line_) + ": " + std::to_string(warn_count_) +
                              " NCCL WARN line" + (warn_count_ == 1 ? "" : "s") + " (first: \"" + first_warn_ +
                              "\"); the rows were imported, check the run was healthy");
    return std::move(log_);
  }

 private:
  NcclTestsRun& cur() { return runs_.back(); }

  static std::string line_list(const std::vector<int>& lines) {
    std::string out;
    const std::size_t shown = std::min<std::size_t>(lines.size(), kLinesShown);
    for (std::size_t i = 0; i < shown; ++i) out += (i ? ", " : "") + std::to_string(lines[i]);
    if (lines.size() > shown) out += " and " + std::to_string(lines.size() - shown) + " more";
    return out;
  }

  // A line may hold a NCCL debug message, alone or cut into a data row: the message is read for what it
  // says about the run, the text before it handled as a line of its own.
  void split_nccl_message(std::string_view s, int line) {
    const std::size_t marker = nccl_marker(s);
    if (marker == std::string_view::npos) {
      handle(s, line);
      return;
    }
    std::size_t start = 0;
    std::string host;
    const std::size_t lb = s.rfind('[', marker);
    if (lb != std::string_view::npos) {
      std::size_t e = lb;
      while (e > 0 && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
      std::size_t b = e;
      while (b > 0 && !std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
      const std::string_view tok = s.substr(b, e - b);  // "host:pid:tid", maybe glued to a row's number
      start = b;
      const std::size_t c2 = tok.rfind(':');
      const std::size_t c1 = c2 == std::string_view::npos || c2 == 0 ? std::string_view::npos : tok.rfind(':', c2 - 1);
      if (c1 != std::string_view::npos && c1 > 0 && is_int(tok.substr(c1 + 1, c2 - c1 - 1)) && is_int(tok.substr(c2 + 1))) {
        std::string_view h = tok.substr(0, c1);
        const std::string head_text = std::string(s.substr(0, b)) + std::string(h);
        const auto head = tokens_of(head_text);
        const bool row_before = !head.empty() && (row_shaped(head) || continuation_shaped(head) || pending_.active);
        std::size_t glue = 0;  // characters of `h` that belong to the row
        if (row_before && known_hosts_.count(std::string(h)) == 0) {
          std::size_t longest = 0;  // the longest known host the token ends with
          for (const auto& k : known_hosts_)
            if (h.size() > k.size() && k.size() > longest && h.substr(h.size() - k.size()) == k) longest = k.size();
          if (longest > 0) glue = h.size() - longest;
          if (glue == 0) {
            // The host is not known: the row's part is the longest number (or "N/A") at the front.
            if (h.substr(0, 3) == "N/A") glue = 3;
            for (std::size_t n = std::min<std::size_t>(h.size() - 1, 24); n > 0 && glue == 0; --n)
              if (is_number(h.substr(0, n))) glue = n;
          }
        }
        start = b + glue;
        host = std::string(h.substr(glue));
      }
    }
    const std::string_view message = s.substr(start);
    nccl_message(message, line, host);
    std::string_view head = trim(s.substr(0, start));
    if (head.size() >= 2 && head.front() == '[' && head.back() == ']') head = {};  // NCCL's "[%F %T] " timestamp
    if (!head.empty()) handle(s.substr(0, start), line);
  }

  void nccl_message(std::string_view msg, int line, const std::string& host) {
    if (!host.empty() && host.size() < 256 && known_hosts_.size() < kMaxKnownHosts) known_hosts_.insert(host);
    // e.g. "host:1:2 [0] NCCL INFO NCCL_ALGO set by environment to Ring"
    const auto at = msg.find("NCCL_ALGO set by environment to");
    if (at != std::string_view::npos) {
      const auto rest = tokens_of(msg.substr(at + 31));
      if (!rest.empty()) cur().algorithm = lower(rest[0]);
    }
    // init.cc: "comm %p rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL %d"
    if (msg.find("nRanks") != std::string_view::npos) {
      const auto t = tokens_of(msg);
      for (std::size_t i = 0; i + 1 < t.size(); ++i) {
        if (t[i] == "nRanks")
          if (auto v = parse_int(t[i + 1]); v && *v > 0 && *v < (1 << 24)) info_ranks_ = std::max<int>(info_ranks_, int(*v));
        if (t[i] == "nNodes")
          if (auto v = parse_int(t[i + 1]); v && *v > 0 && *v < (1 << 24)) info_nodes_ = std::max<int>(info_nodes_, int(*v));
      }
    }
    if (msg.find("NCCL WARN") != std::string_view::npos) {
      if (warn_count_++ == 0) {
        first_warn_line_ = line;
        first_warn_ = std::string(trim(msg.substr(msg.find("NCCL WARN") + 9)).substr(0, 160));
      }
    }
  }

  // A header line of a new run: start one if the current run already has rows.
  // The flags of a header line ("nThread 1 nGpus 8 ... graph: 0") or a command line ("-t 1 -g 8 -G 0"):
  // threads x GPUs per process is the rank count to fall back on (`from` says which line gave it), the
  // graph flag the run's CUDA-graph launches. Each value is clamped to what a run could have.
  void take_rank_flags(const std::vector<std::string_view>& t, std::string_view threads_flag, std::string_view gpus_flag,
                       std::string_view graph_flag, const char* from) {
    std::int64_t threads = 1, gpus = 1;
    for (std::size_t i = 0; i + 1 < t.size(); ++i) {
      if (t[i] == threads_flag) threads = std::clamp<std::int64_t>(parse_int(t[i + 1]).value_or(1), 0, 1 << 20);
      if (t[i] == gpus_flag) gpus = std::clamp<std::int64_t>(parse_int(t[i + 1]).value_or(1), 0, 1 << 20);
      if (t[i] == graph_flag) cur().cuda_graph_launches = static_cast<int>(std::clamp<std::int64_t>(parse_int(t[i + 1]).value_or(0), 0, 1 << 20));
    }
    fallback_ranks_ = static_cast<int>(std::min<std::int64_t>(threads * gpus, 1 << 24));
    fallback_from_ = from;
  }

  void maybe_new_run(int line) {
    if (cur().rows.empty()) return;
    finish_run();
    runs_.emplace_back();
    cur().first_line = line;
    layout_ = {};
    label_in_place_only_ = false;
    rank_hosts_.clear();
    max_rank_ = -1;
    fallback_ranks_ = 0;
    fallback_from_.clear();
    info_ranks_ = info_nodes_ = 0;
  }

  void note_hint_ignored(const NcclTestsRun& r, const std::string& what) {
    log_.problems.push_back(log_.file + ":" + std::to_string(r.first_line) + ": " + what);
  }

  // The first source that knows a count (value > 0), with its name; {0, ""} when none does.
  static std::pair<int, std::string> first_known(std::initializer_list<std::pair<int, std::string>> sources) {
    for (const auto& s : sources)
      if (s.first > 0) return s;
    return {0, ""};
  }

  // A hint the log's own lines contradict is ignored, and said so.
  void note_if_ignored(const NcclTestsRun& r, const char* option, int hint, int value, const std::string& from,
                       const char* unit) {
    if (hint > 0 && value != hint && (from == "device lines" || from == "NCCL INFO"))
      note_hint_ignored(r, std::string(option) + " " + std::to_string(hint) + " ignored: the log's " + from + " name " +
                               std::to_string(value) + " " + unit);
  }

  void finish_run() {
    NcclTestsRun& r = cur();
    // Collective: the log's own name, else --op, else the file name (resolved in resolve_collectives).
    if (!r.collective_name.empty()) {
      r.collective = collective_from_name(r.collective_name);
      if (hints_.collective && r.collective && *hints_.collective != *r.collective)
        note_hint_ignored(r, "--op " + std::string(models::to_string(*hints_.collective)) + " ignored: the log names " +
                                 r.collective_name);
    } else if (hints_.collective) {
      r.collective = hints_.collective;
      r.collective_from = "--op";
    }
    std::tie(r.ranks, r.ranks_from) = first_known({{max_rank_ + 1, "device lines"},
                                                   {info_ranks_, "NCCL INFO"},
                                                   {hints_.ranks, "--ranks"},
                                                   {fallback_ranks_, fallback_from_}});
    note_if_ignored(r, "--ranks", hints_.ranks, r.ranks, r.ranks_from, "ranks");
    std::tie(r.nodes, r.nodes_from) = first_known({{static_cast<int>(rank_hosts_.size()), "device lines"},
                                                   {info_nodes_, "NCCL INFO"},
                                                   {hints_.nodes, "--nodes"}});
    note_if_ignored(r, "--nodes", hints_.nodes, r.nodes, r.nodes_from, "nodes");
    if (!r.gpu.empty()) {
      r.gpu_from = "device lines";
      const models::GpuSpec* named = guess_gpu(r.gpu);
      const models::GpuSpec* hinted = hints_.gpu.empty() ? nullptr : guess_gpu(hints_.gpu);
      if (hinted && named != hinted)
        note_hint_ignored(r, "--gpu " + hints_.gpu + " ignored: the log's device lines name " + r.gpu);
    } else if (!hints_.gpu.empty()) {
      r.gpu = hints_.gpu;
      r.gpu_from = "--gpu";
    }
  }

  // A row held because it was short: the continuation may follow a NCCL message.
  struct Pending {
    bool active = false;
    std::string text;
    int line = 0;
    int parts = 1;
  };

  void flush_pending() {
    if (!pending_.active) return;
    pending_.active = false;
    const auto t = tokens_of(pending_.text);
    const std::size_t need = fields_needed(t);
    problem(pending_.line, "truncated data row (expected at least " + std::to_string(need) + " fields, got " +
                               std::to_string(t.size()) + "); skipped");
  }

  void handle(std::string_view raw, int line) {
    std::string_view body = raw;
    while (!body.empty() && std::isspace(static_cast<unsigned char>(body.front()))) body.remove_prefix(1);
    bool commented = false;
    if (!body.empty() && body.front() == '#') {
      commented = true;
      body.remove_prefix(1);
    }
    const auto t = tokens_of(body);
    if (t.empty()) return;
    // Under a launcher, the tables come from one task (rank 0 prints them with MPI); another task's own
    // header or rows mean every task ran its own test (nccl-tests built without MPI): one is kept.
    if (line_task_ >= 0) {
      if (table_task_ < 0) {
        table_task_ = line_task_;
      } else if (line_task_ != table_task_) {
        if (other_task_lines_.size() < kLinesShown) other_task_lines_.push_back(line);
        ++other_task_count_;
        return;
      }
    }

    if (pending_.active && !commented && continuation_shaped(t)) {
      std::string merged = pending_.text + std::string(raw);
      const auto m = tokens_of(merged);
      if (m.size() >= fields_needed(m)) {
        pending_.active = false;
        data_row(m, pending_.line);
      } else if (merged.size() <= kMaxLineBytes && pending_.parts < kMaxRowParts) {
        pending_.text = std::move(merged);  // cut again: wait for the next part
        ++pending_.parts;
      } else {
        flush_pending();
      }
      return;
    }
    flush_pending();

    if (t.size() >= 4 && t[0] == "Collective" && t[1] == "test" && t[2] == "starting:") {
      maybe_new_run(line);
      cur().collective_name = std::string(t[3]);
      cur().collective_from = "Collective test starting";
      return;
    }
    if (t[0] == "nThread") {
      if (!cur().collective_name.empty() && cur().rows.empty()) {
        // same run as its "Collective test starting" line
      } else {
        maybe_new_run(line);
      }
      take_rank_flags(t, "nThread", "nGpus", "graph:", "nThread x nGpus");
      return;
    }
    if (t[0] == "Rank" && t.size() >= 2) {
      if (auto r = parse_int(t[1]); r && *r >= 0 && *r < (1 << 24)) {
        max_rank_ = std::max<int>(max_rank_, static_cast<int>(*r));
        for (std::size_t i = 2; i + 1 < t.size(); ++i)
          if (t[i] == "on" && rank_hosts_.size() < 65536) {
            rank_hosts_.insert(std::string(t[i + 1]));
            if (known_hosts_.size() < kMaxKnownHosts) known_hosts_.insert(std::string(t[i + 1]));
          }
        if (*r == 0 || cur().gpu.empty()) {
          const auto close = body.find(']');
          if (close != std::string_view::npos) cur().gpu = std::string(trim(body.substr(close + 1)));
        }
      }
      return;
    }
    // A command line such as "all_gather_perf -g 8 -b 4G -e 4G" or "./build/all_reduce_perf ...".
    if (t[0].find("_perf") != std::string_view::npos) {
      maybe_new_run(line);
      cur().collective_name = std::filesystem::path(std::string(t[0])).filename().string();
      cur().collective_from = "command line";
      take_rank_flags(t, "-t", "-g", "-G", "-g x -t");
      return;
    }
    // The label line above a column header: "out-of-place   in-place" (one of them where a block is gone).
    if (t[0] == "out-of-place" || t[0] == "in-place") {
      label_in_place_only_ = t[0] == "in-place" && t.size() == 1;
      return;
    }
    // Column header: "size count type [redop] [root] time algbw busbw #wrong time ..."
    if (t[0] == "size" && std::find(t.begin(), t.end(), "algbw") != t.end()) {
      if (!cur().rows.empty()) {
        // A second table without a run header of its own: same program, same ranks and GPU.
        NcclTestsRun keep;
        keep.collective_name = cur().collective_name;
        keep.collective_from = cur().collective_from;
        keep.gpu = cur().gpu;
        keep.algorithm = cur().algorithm;
        keep.cuda_graph_launches = cur().cuda_graph_launches;
        const auto hosts = rank_hosts_;
        const int max_rank = max_rank_, fallback = fallback_ranks_, info_r = info_ranks_, info_n = info_nodes_;
        const std::string fallback_from = fallback_from_;
        const bool in_place_only = label_in_place_only_;
        maybe_new_run(line);
        keep.first_line = line;
        cur() = std::move(keep);
        rank_hosts_ = hosts;
        max_rank_ = max_rank;
        fallback_ranks_ = fallback;
        fallback_from_ = fallback_from;
        info_ranks_ = info_r;
        info_nodes_ = info_n;
        label_in_place_only_ = in_place_only;
      }
      std::vector<int> starts;
      for (std::size_t i = 0; i < t.size(); ++i)
        if (t[i] == "time" || t[i] == "cputime") starts.push_back(static_cast<int>(i));
      if (!starts.empty()) {
        layout_ = {};
        layout_.header = true;
        for (int i = 0; i < starts[0] && i < 8; ++i) layout_.lead_names.push_back(lower(t[static_cast<std::size_t>(i)]));
        layout_.blocks = starts.size() >= 2 ? 2 : 1;
        if (starts.size() >= 2) layout_.block = std::clamp(starts[1] - starts[0], 1, 64);
        layout_.first_is_in_place = layout_.blocks == 1 && label_in_place_only_;
        const std::size_t fourth = static_cast<std::size_t>(starts[0] + 3);
        layout_.wrong = layout_.block >= 4 && fourth < t.size() && t[fourth] == "#wrong";
      }
      label_in_place_only_ = false;
      return;
    }
    if (commented || !starts_with_digit(t[0])) return;  // prose, summaries, "NCCL version ..."
    if (!is_int(t[0]) && !continuation_shaped(t)) {
      problem(line, "unreadable data row (size \"" + std::string(t[0]) + "\" is not an integer); skipped");
      return;
    }
    if (!row_shaped(t)) {
      problem(line, "numbers outside a data row (\"" + std::string(trim(body).substr(0, 40)) +
                        "\": no row before it for them to continue); skipped");
      return;
    }
    if (t.size() < fields_needed(t)) {
      // Short: the rest may come after a NCCL message cut into it, or never (a truncated paste).
      pending_ = {true, std::string(raw), line, 1};
      return;
    }
    data_row(t, line);
  }

  // The leading columns of a row (size, count, type and whichever of redop and root it has).
  int leading_of(const std::vector<std::string_view>& t) const {
    std::size_t i = 3;
    if (layout_.header && layout_.lead_names.size() >= 3) {
      // Walk the header's names; a redop printed blank (the old alltoall's "") is simply absent.
      for (std::size_t c = 3; c < layout_.lead_names.size(); ++c) {
        const std::string& name = layout_.lead_names[c];
        if (name == "redop") {
          if (i < t.size() && !is_number(t[i]) && t[i] != "N/A") ++i;
        } else {
          ++i;  // root (always printed, "%6i"), or a column we do not know
        }
      }
      return static_cast<int>(i);
    }
    // No header: redop is the one name among numbers; root then is there when the row is long enough for
    // it and two blocks (13 fields today, 12 for the old all_reduce without root, 11 for all_gather).
    if (i < t.size() && !is_number(t[i]) && t[i] != "N/A") ++i;
    if (t.size() >= i + 9 && is_int(t[i])) ++i;
    return static_cast<int>(i);
  }

  std::size_t fields_needed(const std::vector<std::string_view>& t) const {
    const int leading = leading_of(t);
    // Each block is read as time, algbw, busbw (and #wrong): a header that gave a shorter block (a garbled
    // one) must not let the reads run past the row.
    const int read_per_block = layout_.wrong ? 4 : 3;
    return static_cast<std::size_t>(leading + (layout_.blocks - 1) * layout_.block + std::max(layout_.block, read_per_block));
  }

  // Whether a block's 4th column counts wrong elements: the header says; without one, nccl-tests' "%6g"
  // count has no exponent where the old max error ("%5.0le", "1e+00", "0e+00") always does.
  bool counts_wrong(std::string_view v) const {
    if (layout_.header) return layout_.wrong;
    return v.find('e') == std::string_view::npos && v.find('E') == std::string_view::npos;
  }

  void data_row(const std::vector<std::string_view>& t, int line) {
    const auto size = parse_int(t[0]);
    const int leading = leading_of(t);
    const int block = layout_.block;
    const std::size_t need = fields_needed(t);
    if (t.size() < need) {
      problem(line, "truncated data row (expected at least " + std::to_string(need) + " fields, got " +
                        std::to_string(t.size()) + "); skipped");
      return;
    }
    NcclTestsRow row;
    row.line = line;
    row.size_bytes = static_cast<double>(*size);
    row.count = parse_int(t[1]).value_or(0);
    row.type = std::string(t[2]);
    bool any_wrong = false;
    for (int b = 0; b < layout_.blocks; ++b) {
      const int placement = layout_.blocks == 1 ? (layout_.first_is_in_place ? 1 : 0) : b;
      const std::size_t at = static_cast<std::size_t>(leading + b * block);
      const auto time = parse_double(t[at]);
      const auto busbw = parse_double(t[at + 2]);
      if (!time || !busbw || !parse_double(t[at + 1]) || *time <= 0 || *busbw < 0) {
        problem(line, std::string("unreadable ") + (placement == 0 ? "out-of-place" : "in-place") + " block (\"" +
                          std::string(t[at]) + " " + std::string(t[at + 1]) + " " + std::string(t[at + 2]) +
                          "\"); skipped");
        return;
      }
      // nccl-tests' #wrong: the count of wrong elements it found in this placement ("N/A": not checked).
      if (block >= 4 && at + 3 < t.size() && counts_wrong(t[at + 3])) {
        if (const auto wrong = parse_double(t[at + 3]); wrong && *wrong > 0) {
          any_wrong = true;
          continue;
        }
      }
      row.present[placement] = true;
      row.time_us[placement] = *time;
      row.busbw_GBps[placement] = *busbw;
    }
    if (*size <= 0) {
      problem(line, "size " + std::to_string(*size) + " is not positive; skipped");
      return;
    }
    if (row.size_bytes > bounds::kMaxBufferBytes) {  // sim/base/bounds.hpp; 2^62 bytes predicted a negative time
      problem(line, "size " + std::to_string(*size) + " bytes is more than any GPU's memory holds (at most 2^40); skipped");
      return;
    }
    for (int b = 0; b < 2; ++b)
      if (row.present[b] && !(row.time_us[b] * 1e-6 >= bounds::kMinMeasuredSeconds && row.time_us[b] * 1e-6 <= bounds::kMaxMeasuredSeconds)) {
        std::ostringstream time;
        time << row.time_us[b];
        problem(line, std::string(b == 0 ? "out-of-place" : "in-place") + " time " + time.str() +
                          " us is outside 0.1 us to 1000 s, what one collective can take; skipped");
        return;
      }
    if (any_wrong) wrong_lines_.push_back(line);
    if (!row.present[0] && !row.present[1]) return;
    if (++rows_seen_ > kMaxNcclTestsRows) {
      if (rows_seen_ == kMaxNcclTestsRows + 1) {
        too_many_line_ = line;
        for (auto& r : runs_) std::vector<NcclTestsRow>().swap(r.rows);  // nothing is fitted; free them now
      }
      return;
    }
    cur().rows.push_back(std::move(row));
  }

  static constexpr std::size_t kLinesShown = 20;
  static constexpr std::size_t kMaxKnownHosts = 256;
  // A row is cut by a message or two; more parts than this is not a row being completed.
  static constexpr int kMaxRowParts = 4;
  NcclTestsHints hints_;
  std::size_t rows_seen_ = 0;
  int too_many_line_ = 0;
  NcclTestsLog log_;
  std::vector<int> wrong_lines_;
  std::vector<NcclTestsRun> runs_;
  Layout layout_;
  bool label_in_place_only_ = false;
  Pending pending_;
  std::set<std::string> rank_hosts_;
  std::set<std::string> known_hosts_;  // from rank lines and NCCL messages: where a glued message starts
  int max_rank_ = -1;
  int fallback_ranks_ = 0;
  std::string fallback_from_;
  int info_ranks_ = 0, info_nodes_ = 0;
  int warn_count_ = 0, first_warn_line_ = 0;
  int line_task_ = -1;   // the launcher task of the line being read (-1: no prefix)
  int table_task_ = -1;  // the task whose tables are read
  std::vector<int> other_task_lines_;  // the first kLinesShown of them
  std::size_t other_task_count_ = 0;
  std::string first_warn_;
};

}  // namespace

bool starts_with_launcher_tag(std::string_view start) {
  if (start.empty() || start.front() != '[') return false;
  std::string_view s = start.substr(0, start.find('\n'));
  int task = -1;
  return strip_launcher_prefix(s, task) != nullptr;
}

std::size_t NcclTestsLog::row_count() const {
  std::size_t n = 0;
  for (const auto& r : runs) n += r.rows.size();
  return n;
}

std::optional<models::CollectiveKind> collective_from_name(std::string_view name) {
  std::string s;
  for (char c : std::filesystem::path(std::string(name)).filename().string())
    if (std::isalnum(static_cast<unsigned char>(c))) s.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  // Longest names first: "reducescatter" contains "reduce", "allreduce" must not match "reduce" alone.
  static constexpr std::pair<const char*, models::CollectiveKind> kNames[] = {
      {"reducescatter", models::CollectiveKind::reduce_scatter}, {"allreduce", models::CollectiveKind::all_reduce},
      {"allgather", models::CollectiveKind::all_gather},         {"alltoall", models::CollectiveKind::all_to_all},
      {"broadcast", models::CollectiveKind::broadcast},          {"sendrecv", models::CollectiveKind::send_recv},
  };
  for (const auto& [key, kind] : kNames)
    if (s.find(key) != std::string::npos) return kind;
  return std::nullopt;
}

namespace {
// The last resort for a run that names no collective and got no --op: the file name
// ("h100-8gpu-allreduce-nvls.log").
void resolve_collectives(NcclTestsLog& log, const std::string& file) {
  for (auto& r : log.runs) {
    if (r.collective || !r.collective_name.empty()) continue;
    r.collective = collective_from_name(file);
    if (r.collective) r.collective_from = "file name";
  }
}

std::string row_lines(const NcclTestsRun& run) {
  if (run.rows.size() == 1) return "line " + std::to_string(run.rows.front().line);
  return "lines " + std::to_string(run.rows.front().line) + "-" + std::to_string(run.rows.back().line);
}
}  // namespace

NcclTestsLog parse_nccl_tests_log(std::string_view text, const std::string& file, const NcclTestsHints& hints) {
  Parser parser(file, hints);
  int line_no = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t nl = text.find('\n', pos);
    parser.line(text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos), ++line_no);
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  NcclTestsLog log = parser.finish();
  resolve_collectives(log, file);
  return log;
}

NcclTestsLog parse_nccl_tests_log(std::istream& in, const std::string& file, const NcclTestsHints& hints) {
  Parser parser(file, hints);
  std::vector<char> buf(kMaxLineBytes + 1);
  int line_no = 0;
  for (;;) {
    in.getline(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (in.bad() || (in.fail() && got == 0)) break;  // end of file (or unreadable)
    ++line_no;
    if (in.fail()) {  // the buffer filled before a '\n': no nccl-tests line is that long
      in.clear();
      in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
      parser.problem(line_no, "line longer than " + std::to_string(kMaxLineBytes) + " bytes; skipped");
      continue;
    }
    // gcount counts the '\n' getline consumed but did not store; the last line may have none.
    parser.line(std::string_view(buf.data(), in.eof() ? got : got - 1), line_no);
    if (in.eof()) break;
  }
  NcclTestsLog log = parser.finish();
  resolve_collectives(log, file);
  return log;
}

MeasurementSet nccl_tests_measurements(const NcclTestsLog& log) {
  if (!log.too_many_rows.empty()) throw InputError(std::vector<std::string>{log.too_many_rows});
  MeasurementSet set;
  set.sources.push_back(log.file);
  set.notes = log.problems;
  for (const auto& run : log.runs) {
    const std::string at = log.file + ":" + std::to_string(run.first_line) + ": ";
    if (run.rows.empty()) continue;
    if (!run.collective) {
      if (!run.collective_name.empty())
        set.notes.push_back(at + "\"" + run.collective_name + "\" is not a collective clustersim models (all_reduce, "
                                 "all_gather, reduce_scatter, all_to_all, broadcast, send_recv); " +
                            std::to_string(run.rows.size()) + " rows (" + row_lines(run) + ") skipped");
      else
        set.notes.push_back(at + "the run names no collective (no 'Collective test starting' line, *_perf command "
                                 "line or collective in the file name): pass --op NAME (all_reduce, all_gather, "
                                 "reduce_scatter, all_to_all, broadcast, send_recv)" +
                            (run.ranks < 2 ? std::string(" and --ranks N (the rank count is unknown too)") : std::string()) +
                            "; " + std::to_string(run.rows.size()) + " rows (" + row_lines(run) + ") skipped");
      continue;
    }
    if (run.ranks < 2) {
      set.notes.push_back(at + "rank count " + (run.ranks == 0 ? std::string("unknown") : std::to_string(run.ranks)) +
                          (run.ranks_from.empty() ? std::string() : " (from " + run.ranks_from + ")") +
                          " (no '#  Rank' lines, NCCL INFO nRanks, nThread/nGpus or -g): pass --ranks N, a "
                          "collective needs 2 or more; " +
                          std::to_string(run.rows.size()) + " rows (" + row_lines(run) + ") skipped");
      continue;
    }
    const double factor = models::bus_bandwidth_factor(*run.collective, run.ranks);
    for (const auto& row : run.rows) {
      // One note per row, naming the placements whose busbw contradicts size / time x factor.
      std::ostringstream bad_printed, bad_implied;
      int bad = 0;
      const char* bad_name = "";
      for (int b = 0; b < 2; ++b) {
        if (!row.present[b]) continue;
        const double printed = row.busbw_GBps[b];
        const double implied = row.size_bytes / (row.time_us[b] * 1e3) * factor;
        if (printed >= kBusbwCheckFloor_GBps && std::abs(implied - printed) > kBusbwTolerance * printed) {
          bad_printed << (bad ? " and " : "") << printed;
          bad_implied << (bad ? ", " : "") << implied;
          bad_name = b == 0 ? "out-of-place" : "in-place";
          ++bad;
          continue;
        }
        CommMeasurement m;
        m.collective = *run.collective;
        m.algorithm = run.algorithm;
        m.ranks = run.ranks;
        m.nodes = std::max(1, run.nodes);
        m.size_bytes = row.size_bytes;
        m.time_s = row.time_us[b] * 1e-6;
        m.in_place = b == 1;
        m.gpu = run.gpu;
        m.where = log.file + ":" + std::to_string(row.line);
        set.comm.push_back(std::move(m));
      }
      if (bad > 0)
        set.notes.push_back(log.file + ":" + std::to_string(row.line) + ": " +
                            (bad == 2 ? std::string("out-of-place and in-place") : std::string(bad_name)) + " busbw " +
                            bad_printed.str() + " GB/s contradict" + (bad == 2 ? "" : "s") + " size / time at " +
                            std::to_string(run.ranks) + " ranks (" + bad_implied.str() + " GB/s); skipped");
    }
  }
  if (set.comm.empty()) {
    auto lines = set.notes;
    lines.push_back(log.file + ": no usable nccl-tests measurement (expected data rows \"size count type redop root "
                               "time algbw busbw #wrong time algbw busbw #wrong\")");
    throw InputError(std::move(lines));
  }
  return set;
}

}  // namespace cs::calibrate
