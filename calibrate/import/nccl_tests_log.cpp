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

#include "models/compute/comm_profile.hpp"

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

struct Layout {
  int leading = 0;  // 0: detect per row
  int block = 4;    // columns per out-of-place / in-place block
  bool wrong = false;  // the header names the 4th column of a block "#wrong" (the old format's "error" is a max error)
};

class Parser {
 public:
  explicit Parser(const std::string& file) {
    log_.file = file;
    runs_.emplace_back();
    runs_.back().first_line = 1;
  }

  // One line of the log (without its '\n'), numbered from 1.
  void line(std::string_view line, int line_no) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    handle(line, line_no);
  }
  void problem(int line, const std::string& what) {
    log_.problems.push_back(log_.file + ":" + std::to_string(line) + ": " + what);
  }

  NcclTestsLog finish() {
    finish_run();
    if (too_many_line_ > 0)
      log_.too_many_rows = log_.file + ":" + std::to_string(too_many_line_) + ": more than " +
                           std::to_string(kMaxNcclTestsRows) + " data rows (" + std::to_string(rows_seen_) +
                           " in all; an nccl-tests sweep prints tens per run): split the file or keep the runs to fit";
    for (auto& r : runs_)
      if (!r.rows.empty() || !r.collective_name.empty() || r.ranks > 0) log_.runs.push_back(std::move(r));
    if (!wrong_lines_.empty()) {
      // One warning for all of them: nccl-tests counted wrong results in these rows (its #wrong column).
      std::string lines;
      const std::size_t shown = std::min<std::size_t>(wrong_lines_.size(), kWrongLinesShown);
      for (std::size_t i = 0; i < shown; ++i) lines += (i ? ", " : "") + std::to_string(wrong_lines_[i]);
      if (wrong_lines_.size() > shown) lines += " and " + std::to_string(wrong_lines_.size() - shown) + " more";
      log_.problems.push_back(log_.file + ": " + std::to_string(wrong_lines_.size()) + " row" +
                              (wrong_lines_.size() == 1 ? "" : "s") +
                              " with a nonzero #wrong (nccl-tests found wrong results) skipped: line" +
                              (wrong_lines_.size() == 1 ? " " : "s ") + lines);
    }
    return std::move(log_);
  }

 private:
  NcclTestsRun& cur() { return runs_.back(); }

  // A header line of a new run: start one if the current run already has rows.
  void maybe_new_run(int line) {
    if (cur().rows.empty()) return;
    finish_run();
    runs_.emplace_back();
    cur().first_line = line;
    layout_ = {};
    rank_hosts_.clear();
    max_rank_ = -1;
    fallback_ranks_ = 0;
  }

  void finish_run() {
    NcclTestsRun& r = cur();
    if (max_rank_ >= 0) r.ranks = max_rank_ + 1;
    else if (r.ranks == 0) r.ranks = fallback_ranks_;
    if (!rank_hosts_.empty()) r.nodes = static_cast<int>(rank_hosts_.size());
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

    if (body.find("NCCL INFO") != std::string_view::npos) {
      // e.g. "host:1:2 [0] NCCL INFO NCCL_ALGO set by environment to Ring"
      const auto at = body.find("NCCL_ALGO set by environment to");
      if (at != std::string_view::npos) {
        const auto rest = tokens_of(body.substr(at + 31));
        if (!rest.empty()) cur().algorithm = lower(rest[0]);
      }
      return;
    }
    if (t.size() >= 4 && t[0] == "Collective" && t[1] == "test" && t[2] == "starting:") {
      maybe_new_run(line);
      cur().collective_name = std::string(t[3]);
      return;
    }
    if (t[0] == "nThread") {
      if (!cur().collective_name.empty() && cur().rows.empty()) {
        // same run as its "Collective test starting" line
      } else {
        maybe_new_run(line);
      }
      std::int64_t threads = 1, gpus = 1;
      for (std::size_t i = 0; i + 1 < t.size(); ++i) {
        if (t[i] == "nThread") threads = parse_int(t[i + 1]).value_or(1);
        if (t[i] == "nGpus") gpus = parse_int(t[i + 1]).value_or(1);
      }
      fallback_ranks_ = static_cast<int>(threads * gpus);
      return;
    }
    if (t[0] == "Rank" && t.size() >= 2) {
      if (auto r = parse_int(t[1])) {
        max_rank_ = std::max<int>(max_rank_, static_cast<int>(*r));
        for (std::size_t i = 2; i + 1 < t.size(); ++i)
          if (t[i] == "on") rank_hosts_.insert(std::string(t[i + 1]));
        if (*r == 0 || cur().gpu.empty()) {
          const auto close = body.find(']');
          if (close != std::string_view::npos) {
            std::string_view name = body.substr(close + 1);
            while (!name.empty() && std::isspace(static_cast<unsigned char>(name.front()))) name.remove_prefix(1);
            while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.remove_suffix(1);
            cur().gpu = std::string(name);
          }
        }
      }
      return;
    }
    // A command line such as "all_gather_perf -g 8 -b 4G -e 4G" or "./build/all_reduce_perf ...".
    if (t[0].find("_perf") != std::string_view::npos) {
      maybe_new_run(line);
      cur().collective_name = std::filesystem::path(std::string(t[0])).filename().string();
      std::int64_t threads = 1, gpus = 1;
      for (std::size_t i = 0; i + 1 < t.size(); ++i) {
        if (t[i] == "-g") gpus = parse_int(t[i + 1]).value_or(1);
        if (t[i] == "-t") threads = parse_int(t[i + 1]).value_or(1);
      }
      fallback_ranks_ = static_cast<int>(threads * gpus);
      return;
    }
    // Column header: "size count type [redop root] time algbw busbw #wrong time ..."
    if (t[0] == "size" && std::find(t.begin(), t.end(), "algbw") != t.end()) {
      std::vector<int> starts;
      for (std::size_t i = 0; i < t.size(); ++i)
        if (t[i] == "time" || t[i] == "cputime") starts.push_back(static_cast<int>(i));
      if (!starts.empty()) {
        layout_.leading = starts[0];
        if (starts.size() >= 2) layout_.block = starts[1] - starts[0];
        const std::size_t fourth = static_cast<std::size_t>(layout_.leading + 3);
        layout_.wrong = layout_.block >= 4 && fourth < t.size() && t[fourth] == "#wrong";
      }
      return;
    }
    if (commented || !starts_with_digit(t[0])) return;  // prose, summaries, "NCCL version ..."
    data_row(t, line);
  }

  void data_row(const std::vector<std::string_view>& t, int line) {
    const auto size = parse_int(t[0]);
    if (!size) {
      problem(line, "unreadable data row (size \"" + std::string(t[0]) + "\" is not an integer); skipped");
      return;
    }
    int leading = layout_.leading;
    if (leading == 0) leading = (t.size() > 3 && parse_double(t[3])) ? 3 : 5;  // old format lacks redop, root
    const int block = layout_.block;
    // Each block is read as time, algbw, busbw (and #wrong): a header that gave a shorter block (a garbled
    // one) must not let the reads below run past the row.
    const int read_per_block = layout_.wrong ? 4 : 3;
    const std::size_t need = static_cast<std::size_t>(leading + block + std::max(block, read_per_block));
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
    for (int b = 0; b < 2; ++b) {
      const std::size_t at = static_cast<std::size_t>(leading + b * block);
      const auto time = parse_double(t[at]);
      const auto busbw = parse_double(t[at + 2]);
      if (!time || !busbw || !parse_double(t[at + 1]) || *time <= 0 || *busbw < 0) {
        problem(line, std::string("unreadable ") + (b == 0 ? "out-of-place" : "in-place") + " block (\"" +
                          std::string(t[at]) + " " + std::string(t[at + 1]) + " " + std::string(t[at + 2]) +
                          "\"); skipped");
        return;
      }
      // nccl-tests' #wrong: the count of wrong elements it found in this placement ("N/A": not checked).
      if (layout_.wrong) {
        if (const auto wrong = parse_double(t[at + 3]); wrong && *wrong > 0) continue;
      }
      row.present[b] = true;
      row.time_us[b] = *time;
      row.busbw_GBps[b] = *busbw;
    }
    if (*size <= 0) {
      problem(line, "size " + std::to_string(*size) + " is not positive; skipped");
      return;
    }
    if (!row.present[0] || !row.present[1]) wrong_lines_.push_back(line);
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

  static constexpr std::size_t kWrongLinesShown = 20;
  std::size_t rows_seen_ = 0;
  int too_many_line_ = 0;
  NcclTestsLog log_;
  std::vector<int> wrong_lines_;
  std::vector<NcclTestsRun> runs_;
  Layout layout_;
  std::set<std::string> rank_hosts_;
  int max_rank_ = -1;
  int fallback_ranks_ = 0;
};

}  // namespace

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
void resolve_collectives(NcclTestsLog& log, const std::string& file) {
  for (auto& r : log.runs) {
    if (!r.collective_name.empty()) r.collective = collective_from_name(r.collective_name);
    if (!r.collective) r.collective = collective_from_name(file);
  }
}
}  // namespace

NcclTestsLog parse_nccl_tests_log(std::string_view text, const std::string& file) {
  Parser parser(file);
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

NcclTestsLog parse_nccl_tests_log(std::istream& in, const std::string& file) {
  Parser parser(file);
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
      set.notes.push_back(at + "run names no collective we model (\"" + run.collective_name +
                          "\"; no 'Collective test starting' line, *_perf command or file name); " +
                          std::to_string(run.rows.size()) + " rows skipped");
      continue;
    }
    if (run.ranks < 2) {
      set.notes.push_back(at + "rank count " + (run.ranks == 0 ? std::string("unknown") : std::to_string(run.ranks)) +
                          " (no '#  Rank' lines, nThread/nGpus or -g); a collective needs 2 or more ranks; " +
                          std::to_string(run.rows.size()) + " rows skipped");
      continue;
    }
    const double factor = models::bus_bandwidth_factor(*run.collective, run.ranks);
    for (const auto& row : run.rows) {
      for (int b = 0; b < 2; ++b) {
        if (!row.present[b]) continue;
        const double printed = row.busbw_GBps[b];
        const double implied = row.size_bytes / (row.time_us[b] * 1e3) * factor;
        if (printed >= kBusbwCheckFloor_GBps && std::abs(implied - printed) > kBusbwTolerance * printed) {
          std::ostringstream msg;
          msg << log.file << ":" << row.line << ": " << (b == 0 ? "out-of-place" : "in-place") << " busbw "
              << printed << " GB/s contradicts size / time at " << run.ranks << " ranks (" << implied
              << " GB/s); skipped";
          set.notes.push_back(msg.str());
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
