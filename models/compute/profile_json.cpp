#include "models/compute/profile_json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/files/atomic_write.hpp"
#include "sim/files/file_error.hpp"
#include "sim/files/input_file.hpp"
#include "sim/files/json_file.hpp"

namespace cs::models {

namespace {

// A kernel shape dimension (GEMM m, n, k; attention batch, heads, seq, head dim) of a measurement.
constexpr std::int64_t kMaxShape = std::int64_t{1} << 40;
constexpr const char* kMaxShapeWhy = "2^40: beyond any kernel shape a training step runs";
// A per-kernel or per-collective constant (launch overhead, attention host floor, alpha, extra hop latency):
// at most 10 ms, a thousand times a CUDA launch or an NCCL hop. At 1 s a kernel (the old limit) the 10^8
// tasks a step may hold ran past the engine's 106 days of integer picoseconds (issue 32).
constexpr const char* kMicrosecondsExpected = "a number of microseconds in [0, 10000]";


using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;

constexpr const char* kFormat = "clustersim-profile";
constexpr int kVersion = 1;

std::string type_name(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

// Collects "FILE: PATH: message" lines.
struct Problems {
  std::string file;
  std::vector<std::string> lines;
  void add(const std::string& path, const std::string& what) {
    lines.push_back(file + ": " + (path.empty() ? "(top level)" : path) + ": " + what);
  }
};

// Reads the fields of one JSON object, remembering which keys were used so that finish() can name the
// unknown ones.
class Fields {
 public:
  Fields(const json& obj, std::string path, Problems& problems)
      : obj_(obj), path_(std::move(path)), problems_(problems) {}

  std::string at(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

  const json* raw(const std::string& key, bool required) {
    used_.insert(key);
    auto it = obj_.find(key);
    if (it == obj_.end()) {
      if (required) problems_.add(at(key), "missing");
      return nullptr;
    }
    return &*it;
  }

  std::optional<double> number(const std::string& key, bool required, double lo, double hi,
                               bool lo_open, const char* expected) {
    const json* v = raw(key, required);
    if (!v) return std::nullopt;
    if (!v->is_number() || !std::isfinite(v->get<double>())) {
      problems_.add(at(key), std::string("expected ") + expected + ", got " + type_name(*v));
      return std::nullopt;
    }
    const double x = v->get<double>();
    if (x > hi || x < lo || (lo_open && x == lo)) {
      std::ostringstream s;
      s << x << " is out of range (expected " << expected << ")";
      problems_.add(at(key), s.str());
      return std::nullopt;
    }
    return x;
  }

  // An integer in [lo, hi], checked as a 64-bit value before the caller narrows it to int (`hi` fits
  // one; `why` says where the maximum comes from).
  std::optional<std::int64_t> integer(const std::string& key, bool required, std::int64_t lo, std::int64_t hi, const char* why) {
    const json* v = raw(key, required);
    if (!v) return std::nullopt;
    if (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(hi)) {
      problems_.add(at(key), v->dump() + " is out of range (expected an integer <= " + std::to_string(hi) + ": " + why + ")");
      return std::nullopt;
    }
    if (!v->is_number_integer() || v->get<std::int64_t>() < lo) {
      problems_.add(at(key), "expected an integer >= " + std::to_string(lo) + ", got " +
                                 (v->is_number() ? v->dump() : type_name(*v)));
      return std::nullopt;
    }
    if (v->get<std::int64_t>() > hi) {
      problems_.add(at(key), v->dump() + " is out of range (expected an integer <= " + std::to_string(hi) + ": " + why + ")");
      return std::nullopt;
    }
    return v->get<std::int64_t>();
  }

  // An optional number whose 0 means "unknown", otherwise in [lo, hi] (lo > 0): a denormal is no figure.
  double zero_or(const std::string& key, double lo, double hi, const char* expected) {
    const double x = number(key, false, 0, hi, false, expected).value_or(0);
    if (x == 0 || x >= lo) return x;
    std::ostringstream s;
    s << x << " is out of range (expected " << expected << ")";
    problems_.add(at(key), s.str());
    return 0;
  }

  std::optional<std::string> string(const std::string& key, bool required) {
    const json* v = raw(key, required);
    if (!v) return std::nullopt;
    if (!v->is_string()) {
      problems_.add(at(key), "expected a string, got " + type_name(*v));
      return std::nullopt;
    }
    return v->get<std::string>();
  }

  void finish() const {
    for (auto it = obj_.begin(); it != obj_.end(); ++it)
      if (!used_.count(it.key())) problems_.add(at(it.key()), "unknown key");
  }

 private:
  const json& obj_;
  std::string path_;
  Problems& problems_;
  std::set<std::string> used_;
};

const json* array_at(Fields& f, const std::string& key, bool required, Problems& problems) {
  const json* v = f.raw(key, required);
  if (v && !v->is_array()) {
    problems.add(f.at(key), "expected an array, got " + type_name(*v));
    return nullptr;
  }
  return v;
}

bool expect_object(const json& v, const std::string& path, Problems& problems) {
  if (v.is_object()) return true;
  problems.add(path, "expected an object, got " + type_name(v));
  return false;
}

constexpr double kEffMax = 1.0;  // an efficiency is a fraction of peak
// ... and at least a millionth of it: below that no measured kernel (a 256-cube GEMM taking 5 us on an H100
// is 7e-3 of its tensor peak, a 1 KiB copy taking 5 us 6e-5 of its HBM bandwidth). The model floors
// efficiencies at 1e-4 (compute_model.cpp kMinEfficiency); a denormal efficiency made a GEMM of 10^12 FLOPs
// last 10^300 s before that floor held for every table (issue 32).
constexpr double kEffMin = kMinProfileEfficiency;
constexpr const char* kEffExpected = "a number in [1e-06, 1]";

// read(g) with the fields of each object of the array at f[key] (absent: none), then g's unknown keys;
// an element that is not an object is a problem.
template <class Read>
void for_each_object(Fields& f, const std::string& key, Problems& problems, Read&& read) {
  const json* a = array_at(f, key, false, problems);
  if (!a) return;
  for (std::size_t i = 0; i < a->size(); ++i) {
    const std::string at = f.at(key) + "[" + std::to_string(i) + "]";
    if (!expect_object((*a)[i], at, problems)) continue;
    Fields g((*a)[i], at, problems);
    read(g);
    g.finish();
  }
}

// "attention"-style measured points at f[key] (absent: none).
std::vector<AttentionPoint> read_attention_points(Fields& f, const std::string& key, Problems& problems) {
  std::vector<AttentionPoint> out;
  for_each_object(f, key, problems, [&](Fields& g) {
    AttentionPoint pt{};
    pt.batch = g.integer("batch", true, 1, kMaxShape, kMaxShapeWhy).value_or(1);
    pt.heads_q = g.integer("heads_q", true, 1, kMaxShape, kMaxShapeWhy).value_or(1);
    pt.heads_kv = g.integer("heads_kv", true, 1, kMaxShape, kMaxShapeWhy).value_or(1);
    pt.seq = g.integer("seq", true, 1, kMaxShape, kMaxShapeWhy).value_or(1);
    pt.head_dim = g.integer("head_dim", true, 1, kMaxShape, kMaxShapeWhy).value_or(1);
    pt.fwd_efficiency = g.number("fwd_efficiency", true, kEffMin, kEffMax, false, kEffExpected).value_or(0);
    pt.fwdbwd_efficiency = g.number("fwdbwd_efficiency", true, kEffMin, kEffMax, false, kEffExpected).value_or(0);
    out.push_back(pt);
  });
  return out;
}

// The "fwd" and "bwd" pass models of an attention model object.
void read_passes(Fields& g, AttentionPassModel& fwd, AttentionPassModel& bwd, Problems& problems) {
  for (auto [name, pass] : {std::pair{"fwd", &fwd}, std::pair{"bwd", &bwd}}) {
    const json* obj = g.raw(name, true);
    if (!obj || !expect_object(*obj, g.at(name), problems)) continue;
    Fields h(*obj, g.at(name), problems);
    pass->peak_efficiency = h.number("peak_efficiency", true, kEffMin, kEffMax, false, kEffExpected).value_or(0);
    pass->half_kv = h.number("half_kv", true, 0, 1e9, false, "a number of tokens >= 0").value_or(0);
    pass->ctas_per_sm = static_cast<int>(h.integer("ctas_per_sm", true, 1, 2048, "an SM holds at most 2048 threads").value_or(1));
    if (const json* hf = h.raw("heavy_first", true)) {
      if (hf->is_boolean()) pass->heavy_first = hf->get<bool>();
      else problems.add(h.at("heavy_first"), "expected true or false, got " + type_name(*hf));
    }
    h.finish();
  }
}

ComputeProfile read_compute(const json& v, const std::string& path, Problems& problems) {
  ComputeProfile p;
  Fields f(v, path, problems);
  p.source = f.string("source", false).value_or("");
  p.sm_count = static_cast<int>(f.integer("sm_count", true, 1, 100000, "1e5 SMs: 600x a B200 (148)").value_or(1));
  p.launch_overhead_us = f.number("launch_overhead_us", true, 0, kMaxProfileMicroseconds, false, kMicrosecondsExpected).value_or(0);
  p.expert_host_issue_us = f.number("expert_host_issue_us", false, 0, kMaxProfileMicroseconds, false, kMicrosecondsExpected)
                               .value_or(kDefaultExpertHostIssueUs);
  // 0: unknown; else a fraction (of a speed-up, of peak) of at least 1%, a rate of at least 1 TFLOP/s (any GPU).
  p.fp8_gemm_speedup_efficiency = f.zero_or("fp8_gemm_speedup_efficiency", 0.01, 2, "0 or a number in [0.01, 2]");
  p.matmul_ceiling_fraction = f.zero_or("matmul_ceiling_fraction", 0.01, 1, "0 (unknown) or a number in [0.01, 1]");
  p.peak_tflops_bf16 = f.zero_or("peak_tflops_bf16", 1, 1e6, "0 (unknown) or a number of TFLOP/s in [1, 1e6]");
  for_each_object(f, "gemm", problems, [&](Fields& g) {
    GemmPoint pt{};
    pt.m = g.integer("m", true, 1, kMaxShape, kMaxShapeWhy).value_or(1);
    pt.n = g.integer("n", true, 1, kMaxShape, kMaxShapeWhy).value_or(1);
    pt.k = g.integer("k", true, 1, kMaxShape, kMaxShapeWhy).value_or(1);
    pt.efficiency = g.number("efficiency", true, kEffMin, kEffMax, false, kEffExpected).value_or(0);
    p.gemm.push_back(pt);
  });
  p.attention = read_attention_points(f, "attention", problems);
  if (const json* m = f.raw("attention_model", false)) {
    const std::string at = f.at("attention_model");
    if (expect_object(*m, at, problems)) {
      Fields g(*m, at, problems);
      p.attention_block_q = g.integer("block_q", true, 1, kMaxShape, kMaxShapeWhy).value_or(128);
      p.attention_host_floor_us =
          g.number("host_floor_us", false, 0, kMaxProfileMicroseconds, false, kMicrosecondsExpected).value_or(0);
      read_passes(g, p.attention_fwd, p.attention_bwd, problems);
      g.finish();
    }
  }
  if (const json* m = f.raw("attention_flash2_model", false)) {
    const std::string at = f.at("attention_flash2_model");
    if (expect_object(*m, at, problems)) {
      Fields g(*m, at, problems);
      Flash2AttentionModel fa2;
      fa2.mma_sync_fraction =
          g.number("mma_sync_fraction", true, kEffMin, 1, false, "a share of the tensor peak in [1e-06, 1]").value_or(1);
      read_passes(g, fa2.fwd, fa2.bwd, problems);
      g.finish();
      fa2.points = read_attention_points(f, "attention_flash2", problems);
      p.attention_flash2 = std::move(fa2);
    }
  } else if (f.raw("attention_flash2", false)) {
    problems.add(f.at("attention_flash2"), "measured FlashAttention-2 points without attention_flash2_model");
  }
  for_each_object(f, "memory_bound", problems, [&](Fields& g) {
    MemBoundPoint pt{};
    if (auto k = g.string("kind", true)) {
      if (auto kind = parse_mem_op_kind(*k)) {
        pt.kind = *kind;
      } else {
        problems.add(g.at("kind"), "unknown kind \"" + *k +
                                       "\" (expected norm, elementwise, activation, softmax, cross_entropy, "
                                       "embedding, copy or optimizer)");
      }
    }
    pt.bytes = g.number("bytes", true, 1, 1e18, false, "a number of bytes in [1, 1e18]").value_or(1);
    pt.efficiency = g.number("efficiency", true, kEffMin, kEffMax, false, kEffExpected).value_or(0);
    p.memory_bound.push_back(pt);
  });
  f.finish();
  return p;
}

CommFit read_comm_fit(const json& v, const std::string& at, Problems& problems) {
  CommFit c;
  Fields g(v, at, problems);
  if (auto name = g.string("collective", true)) {
    if (auto kind = parse_collective(*name)) c.collective = *kind;
    else
      problems.add(g.at("collective"), "unknown collective \"" + *name +
                                           "\" (expected all_reduce, all_gather, reduce_scatter, all_to_all, "
                                           "broadcast or send_recv)");
  }
  c.algorithm = g.string("algorithm", false).value_or("default");
  c.ranks = static_cast<int>(g.integer("ranks", true, 1, 1 << 30, "2^30 ranks: more than a scenario's cluster can hold").value_or(1));
  if (auto lvl = g.string("level", true)) {
    if (auto level = parse_comm_level(*lvl)) c.level = *level;
    else problems.add(g.at("level"), "unknown level \"" + *lvl + "\" (expected \"nvlink\" or \"network\")");
  }
  c.alpha_us = g.number("alpha_us", true, 0, kMaxProfileMicroseconds, false, kMicrosecondsExpected).value_or(0);
  c.beta_GBps = g.number("beta_GBps", true, kMinProfileBandwidthGBps, kMaxProfileBandwidthGBps, false,
                           "a bandwidth in GB/s in [0.001, 100000]").value_or(1);
  c.r2 = g.number("r2", false, -1e9, 1, false, "a number <= 1").value_or(0);
  c.points = static_cast<int>(g.integer("points", false, 0, 1 << 30, "2^30 points: more than any measurement file holds").value_or(0));
  c.gpu = g.string("gpu", false).value_or("");
  if (const json* n = g.raw("nccl", false)) {
    const std::string nat = at + ".nccl";
    if (expect_object(*n, nat, problems)) {
      Fields k(*n, nat, problems);
      c.nccl.fitted = true;
      c.nccl.nodes = static_cast<int>(k.integer("nodes", true, 1, 1 << 20, "2^20 nodes: more than a scenario's cluster can hold").value_or(1));
      c.nccl.nic = k.string("nic", false).value_or("");
      auto scale = [&](const char* key) {
        return k.number(key, true, 1e-3, 1e3, false, "a bandwidth scale in [0.001, 1000]").value_or(1);
      };
      c.nccl.bandwidth_scale_ll = scale("bandwidth_scale_LL");
      c.nccl.bandwidth_scale_ll128 = scale("bandwidth_scale_LL128");
      c.nccl.bandwidth_scale_simple = scale("bandwidth_scale_Simple");
      c.nccl.hop_latency_extra_us =
          k.number("hop_latency_extra_us", true, -1e3, kMaxProfileMicroseconds, false, "microseconds in [-1000, 10000]").value_or(0);
      c.nccl.ring_chunk_bytes =
          k.number("ring_chunk_bytes", true, 0, 1e12, true, "a number of bytes in (0, 1e12]").value_or(3.5e6);
      c.nccl.ring_chunk_bytes_ll = k.number("ring_chunk_bytes_LL", false, 0, 1e12, true, "a number of bytes in (0, 1e12]")
                                       .value_or(c.nccl.ring_chunk_bytes);
      k.finish();
    }
  }
  g.finish();
  return c;
}

FitQuality read_fit_quality(const json& v, const std::string& at, Problems& problems) {
  FitQuality q;
  Fields g(v, at, problems);
  q.group = g.string("group", true).value_or("");
  q.points = static_cast<int>(g.integer("points", true, 0, 1 << 30, "2^30 points: more than any measurement file holds").value_or(0));
  q.mape = g.number("mape", true, 0, 1e9, false, "a fraction >= 0").value_or(0);
  q.worst = g.string("worst", false).value_or("");
  q.worst_error = g.number("worst_error", false, -1e9, 1e9, false, "a signed fraction").value_or(0);
  g.finish();
  return q;
}

}  // namespace

CalibrationProfile parse_profile(const std::string& json_text, const std::string& file) {
  json doc = files::as_input_error([&] { return files::parse_json(json_text, file, files::SyntaxStyle::line); });
  Problems problems{file, {}};
  CalibrationProfile p;
  if (!expect_object(doc, "", problems)) throw InputError(problems.lines);
  Fields top(doc, "", problems);
  if (auto fmt = top.string("format", false); fmt && *fmt != kFormat)
    problems.add("format", "\"" + *fmt + "\" is not a calibration profile (expected \"" + kFormat + "\")");
  if (auto ver = top.integer("version", false, 1, 1 << 20, "a format version"); ver && *ver != kVersion)
    problems.add("version", std::to_string(*ver) + " is not supported (expected " + std::to_string(kVersion) + ")");
  p.gpu = top.string("gpu", false).value_or("");
  if (const json* c = top.raw("compute", false)) {
    if (expect_object(*c, "compute", problems)) p.compute = read_compute(*c, "compute", problems);
  }
  if (const json* a = array_at(top, "comm", false, problems)) {
    for (std::size_t i = 0; i < a->size(); ++i) {
      const std::string at = "comm[" + std::to_string(i) + "]";
      if (expect_object((*a)[i], at, problems)) p.comm.fits.push_back(read_comm_fit((*a)[i], at, problems));
    }
  }
  if (const json* a = array_at(top, "fit_quality", false, problems)) {
    for (std::size_t i = 0; i < a->size(); ++i) {
      const std::string at = "fit_quality[" + std::to_string(i) + "]";
      if (expect_object((*a)[i], at, problems)) p.fit_quality.push_back(read_fit_quality((*a)[i], at, problems));
    }
  }
  if (auto src = top.string("comm_source", false)) p.comm.source = *src;
  top.finish();
  if (p.compute && p.compute->gemm.empty() && p.compute->attention.empty() && !p.compute->attention_flash2 &&
      p.compute->memory_bound.empty())
    problems.add("compute", "has no gemm, attention or memory_bound points (leave \"compute\" out to use the defaults)");
  if (!problems.lines.empty()) throw InputError(problems.lines);
  p.comm.source = p.comm.source.empty() ? file : p.comm.source;
  if (p.compute && p.compute->source.empty()) p.compute->source = file;
  return p;
}

CalibrationProfile read_profile(const std::string& path) {
  return parse_profile(files::as_input_error([&] {
                         return files::read_input_file(path, files::kMaxProfileBytes, "calibration profile",
                                                       "cannot open calibration profile");
                       }),
                       path);
}

namespace {

ordered_json attention_points_json(const std::vector<AttentionPoint>& points) {
  ordered_json out = ordered_json::array();
  for (const auto& a : points)
    out.push_back({{"batch", a.batch}, {"heads_q", a.heads_q}, {"heads_kv", a.heads_kv}, {"seq", a.seq},
                   {"head_dim", a.head_dim}, {"fwd_efficiency", a.fwd_efficiency},
                   {"fwdbwd_efficiency", a.fwdbwd_efficiency}});
  return out;
}

}  // namespace

std::string profile_to_json(const CalibrationProfile& p) {
  ordered_json doc;
  doc["format"] = kFormat;
  doc["version"] = kVersion;
  doc["gpu"] = p.gpu;
  if (p.compute) {
    const ComputeProfile& c = *p.compute;
    ordered_json cj = {{"source", c.source},
                       {"sm_count", c.sm_count},
                       {"launch_overhead_us", c.launch_overhead_us},
                       {"expert_host_issue_us", c.expert_host_issue_us},
                       {"fp8_gemm_speedup_efficiency", c.fp8_gemm_speedup_efficiency},
                       {"matmul_ceiling_fraction", c.matmul_ceiling_fraction},
                       {"peak_tflops_bf16", c.peak_tflops_bf16}};
    cj["gemm"] = ordered_json::array();
    for (const auto& g : c.gemm) cj["gemm"].push_back({{"m", g.m}, {"n", g.n}, {"k", g.k}, {"efficiency", g.efficiency}});
    cj["attention"] = attention_points_json(c.attention);
    auto pass = [](const AttentionPassModel& m) {
      return ordered_json{{"peak_efficiency", m.peak_efficiency}, {"half_kv", m.half_kv},
                          {"ctas_per_sm", m.ctas_per_sm}, {"heavy_first", m.heavy_first}};
    };
    if (c.attention_fwd.peak_efficiency > 0 && c.attention_bwd.peak_efficiency > 0) {
      cj["attention_model"] = {{"block_q", c.attention_block_q}, {"fwd", pass(c.attention_fwd)},
                               {"bwd", pass(c.attention_bwd)}, {"host_floor_us", c.attention_host_floor_us}};
    }
    if (c.attention_flash2) {
      const Flash2AttentionModel& fa2 = *c.attention_flash2;
      cj["attention_flash2_model"] = {{"mma_sync_fraction", fa2.mma_sync_fraction}, {"fwd", pass(fa2.fwd)},
                                      {"bwd", pass(fa2.bwd)}};
      cj["attention_flash2"] = attention_points_json(fa2.points);
    }
    cj["memory_bound"] = ordered_json::array();
    for (const auto& m : c.memory_bound)
      cj["memory_bound"].push_back({{"kind", std::string(to_string(m.kind))}, {"bytes", m.bytes}, {"efficiency", m.efficiency}});
    doc["compute"] = std::move(cj);
  }
  doc["comm_source"] = p.comm.source;
  doc["comm"] = ordered_json::array();
  for (const auto& f : p.comm.fits) {
    ordered_json e = {{"collective", std::string(to_string(f.collective))}, {"algorithm", f.algorithm},
                      {"ranks", f.ranks}, {"level", std::string(to_string(f.level))}, {"alpha_us", f.alpha_us},
                      {"beta_GBps", f.beta_GBps}, {"r2", f.r2}, {"points", f.points}, {"gpu", f.gpu}};
    if (f.nccl.fitted)
      e["nccl"] = {{"nodes", f.nccl.nodes}, {"nic", f.nccl.nic}, {"bandwidth_scale_LL", f.nccl.bandwidth_scale_ll},
                   {"bandwidth_scale_LL128", f.nccl.bandwidth_scale_ll128},
                   {"bandwidth_scale_Simple", f.nccl.bandwidth_scale_simple},
                   {"hop_latency_extra_us", f.nccl.hop_latency_extra_us}, {"ring_chunk_bytes", f.nccl.ring_chunk_bytes},
                   {"ring_chunk_bytes_LL", f.nccl.ring_chunk_bytes_ll}};
    doc["comm"].push_back(std::move(e));
  }
  doc["fit_quality"] = ordered_json::array();
  for (const auto& q : p.fit_quality)
    doc["fit_quality"].push_back({{"group", q.group}, {"points", q.points}, {"mape", q.mape}, {"worst", q.worst},
                                  {"worst_error", q.worst_error}});
  return doc.dump(2) + "\n";
}

void write_profile(const CalibrationProfile& profile, const std::string& path) {
  const std::string text = profile_to_json(profile);
  files::write_file_atomically(path, text);
}

}  // namespace cs::models

