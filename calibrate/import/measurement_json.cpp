#include "calibrate/import/measurement_json.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "calibrate/import/nccl_tests_log.hpp"
#include "models/compute/comm_profile.hpp"
#include "sim/base/bounds.hpp"
#include "sim/files/file_error.hpp"
#include "sim/files/json_file.hpp"

namespace cs::calibrate {

namespace {

using json = nlohmann::json;

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  void fail(const std::string& path, const std::string& what) { errors_.push_back(file_ + ": " + path + ": " + what); }
  void note(const std::string& path, const std::string& what) { notes_.push_back(file_ + ": " + path + ": " + what); }

  // A positive finite number at obj[key]; records an error and returns nullopt otherwise.
  std::optional<double> positive(const json& obj, const std::string& path, const char* key) {
    return typed<double>(obj, path, key, "a positive number", [](const json& v) {
      return v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() > 0;
    });
  }
  // A positive number at obj[key] within [lo, hi] (in `unit`, the key's own), refused with `why` outside.
  std::optional<double> within(const json& obj, const std::string& path, const char* key, double lo, double hi, const char* unit,
                               const char* why) {
    auto v = positive(obj, path, key);
    if (v && !(*v >= lo && *v <= hi)) {
      std::ostringstream range;
      range << obj.at(key).dump() << " is out of range (expected " << lo << " to " << hi << " " << unit << ": " << why << ")";
      fail(path + "." + key, range.str());
      return std::nullopt;
    }
    return v;
  }
  // A measured time in milliseconds or microseconds, a buffer in bytes (sim/base/bounds.hpp).
  std::optional<double> ms(const json& obj, const std::string& path, const char* key) {
    return within(obj, path, key, bounds::kMinMeasuredSeconds * 1e3, bounds::kMaxMeasuredSeconds * 1e3, "ms", kTimeWhy);
  }
  std::optional<double> us(const json& obj, const std::string& path, const char* key) {
    return within(obj, path, key, bounds::kMinMeasuredSeconds * 1e6, bounds::kMaxMeasuredSeconds * 1e6, "us", kTimeWhy);
  }
  std::optional<double> bytes(const json& obj, const std::string& path, const char* key) {
    return within(obj, path, key, 1, bounds::kMaxBufferBytes, "bytes", kBytesWhy);
  }
  static constexpr const char* kTimeWhy = "100 ns to 1000 s, what one timed kernel or collective can take";
  static constexpr const char* kBytesWhy = "at most 2^40, more than any GPU's memory holds";

  std::optional<std::int64_t> count(const json& obj, const std::string& path, const char* key) {
    return typed<std::int64_t>(obj, path, key, "a positive integer",
                               [](const json& v) { return v.is_number_integer() && v.get<std::int64_t>() > 0; });
  }
  std::optional<bool> boolean(const json& obj, const std::string& path, const char* key) {
    return typed<bool>(obj, path, key, "true or false", [](const json& v) { return v.is_boolean(); });
  }
  std::optional<std::string> text(const json& obj, const std::string& path, const char* key, const char* expected) {
    auto it = obj.find(key);
    if (it == obj.end() || !it->is_string()) {
      fail(path + "." + key, it == obj.end() ? std::string("missing (expected ") + expected + ")"
                                             : std::string("expected ") + expected + ", got " + it->dump());
      return std::nullopt;
    }
    return it->get<std::string>();
  }
  const json* array(const json& doc, const char* key) {
    auto it = doc.find(key);
    if (it == doc.end()) return nullptr;
    if (!it->is_array()) {
      fail(key, "expected an array");
      return nullptr;
    }
    return &*it;
  }

  // each(g, "name[i]") for every element g of `array` that is an object ("name" is the array's path);
  // any other element fails.
  template <class Each>
  void objects(const json& array, const std::string& name, Each&& each) {
    for (std::size_t i = 0; i < array.size(); ++i) {
      const std::string at = name + "[" + std::to_string(i) + "]";
      if (array[i].is_object()) each(array[i], at);
      else fail(at, "expected an object");
    }
  }

  const std::string& file() const { return file_; }
  std::vector<std::string>& errors() { return errors_; }
  std::vector<std::string>& notes() { return notes_; }

 private:
  // obj[key] as a T when `ok` accepts it; otherwise nullopt, "missing" or "expected WHAT, got VALUE"
  // recorded.
  template <class T>
  std::optional<T> typed(const json& obj, const std::string& path, const char* key, const char* expected,
                         bool (*ok)(const json&)) {
    auto it = obj.find(key);
    if (it == obj.end()) {
      fail(path + "." + key, "missing");
      return std::nullopt;
    }
    if (!ok(*it)) {
      fail(path + "." + key, std::string("expected ") + expected + ", got " + it->dump());
      return std::nullopt;
    }
    return it->get<T>();
  }

  std::string file_;
  std::vector<std::string> errors_;
  std::vector<std::string> notes_;
};

std::optional<models::Dtype> dtype_of(const std::string& s) {
  const std::string d = lower(s);
  if (d == "bfloat16" || d == "bf16") return models::Dtype::bf16;
  if (d == "float16" || d == "fp16" || d == "half") return models::Dtype::fp16;
  if (d == "float32" || d == "fp32" || d == "float") return models::Dtype::fp32;
  if (d == "tf32" || d == "tensorfloat32") return models::Dtype::tf32;
  if (d.rfind("fp8", 0) == 0 || d.rfind("float8", 0) == 0 || d == "e4m3") return models::Dtype::fp8;
  return std::nullopt;
}

std::optional<models::MemOpKind> mem_kind_of(const std::string& op) {
  const std::string s = lower(op);
  auto has = [&](const char* t) { return s.find(t) != std::string::npos; };
  if (has("adam")) return models::MemOpKind::optimizer;
  if (has("norm")) return models::MemOpKind::norm;
  if (has("swiglu") || has("gelu") || has("silu") || has("relu")) return models::MemOpKind::activation;
  if (has("softmax")) return models::MemOpKind::softmax;
  if (has("cross_entropy") || has("crossentropy")) return models::MemOpKind::cross_entropy;
  if (has("embedding")) return models::MemOpKind::embedding;
  if (has("copy")) return models::MemOpKind::copy;
  if (s == "add" || s == "mul" || s == "scale" || has("elementwise") || has("axpy")) return models::MemOpKind::elementwise;
  return std::nullopt;
}

std::string fmt_bytes(double b) {
  std::ostringstream s;
  if (b >= 1 << 30) s << b / double(1 << 30) << " GiB";
  else if (b >= 1 << 20) s << b / double(1 << 20) << " MiB";
  else s << b << " B";
  return s.str();
}

std::string shape_label(std::int64_t m, std::int64_t n, std::int64_t k) {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

// Causal attention of one (b, hq, hkv, seq, d) row; nullopt (errors recorded) when a field is bad.
std::optional<models::AttentionShape> attention_shape(const json& g, const std::string& at, Reader& r) {
  auto b = r.count(g, at, "b"), hq = r.count(g, at, "hq"), hkv = r.count(g, at, "hkv");
  auto s = r.count(g, at, "seq"), d = r.count(g, at, "d");
  if (!b || !hq || !hkv || !s || !d) return std::nullopt;
  return models::AttentionShape{*b, *hq, *hkv, *s, *s, *d, true};
}

// One attention point: `key` is "fwd_ms" or "fwdbwd_ms"; `backend` the forced SDPA backend ("" = default).
ComputeMeasurement attention_measurement(const models::AttentionShape& a, const std::string& backend, const char* key,
                                         double ms, const std::string& at, const Reader& r) {
  ComputeMeasurement c;
  c.kind = std::string(key) == "fwd_ms" ? ComputeKind::attention_fwd : ComputeKind::attention_fwdbwd;
  c.attention = a;
  c.attention_backend = backend;
  c.time_s = ms * 1e-3;
  c.label = std::string(c.kind == ComputeKind::attention_fwd ? "attn fwd " : "attn fwd+bwd ") +
            (backend.empty() ? "" : backend + " ") + "b" + std::to_string(a.batch) + " hq" + std::to_string(a.heads_q) +
            " hkv" + std::to_string(a.heads_kv) + " s" + std::to_string(a.seq_q) + " d" + std::to_string(a.head_dim);
  c.where = r.file() + ": " + at + "." + key;
  return c;
}

// Format 1: the compute reference / harness file.
MeasurementSet read_compute_file(const json& doc, Reader& r) {
  MeasurementSet set;
  if (auto it = doc.find("device"); it != doc.end() && it->is_string()) set.gpu = it->get<std::string>();
  if (auto it = doc.find("sm_count"); it != doc.end() && it->is_number_integer()) set.sm_count = it->get<int>();

  if (const json* a = r.array(doc, "gemm")) {
    r.objects(*a, "gemm", [&](const json& g, const std::string& at) {
      if (auto err = g.find("error"); err != g.end()) {
        r.note(at, "not measured: " + err->dump());
        return;
      }
      auto m = r.count(g, at, "m"), n = r.count(g, at, "n"), k = r.count(g, at, "k");
      auto ms = r.ms(g, at, "ms");
      std::optional<models::Dtype> dt = models::Dtype::bf16;
      if (auto d = g.find("dtype"); d != g.end()) {
        dt = d->is_string() ? dtype_of(d->get<std::string>()) : std::nullopt;
        if (!dt) r.fail(at + ".dtype", "unknown dtype " + d->dump() + " (expected bfloat16, float16, float32, tf32 or fp8)");
      }
      if (!m || !n || !k || !ms || !dt) return;
      ComputeMeasurement c;
      c.kind = ComputeKind::gemm;
      c.dtype = *dt;
      c.gemm = {*m, *n, *k};
      c.time_s = *ms * 1e-3;
      c.label = "gemm " + std::string(models::to_string(*dt)) + " " + shape_label(*m, *n, *k);
      c.where = r.file() + ": " + at;
      set.compute.push_back(std::move(c));
    });
  }
  if (const json* a = r.array(doc, "fp8_gemm")) {
    r.objects(*a, "fp8_gemm", [&](const json& g, const std::string& at) {
      auto m = r.count(g, at, "m"), n = r.count(g, at, "n"), k = r.count(g, at, "k");
      auto f8 = r.ms(g, at, "fp8_ms");
      if (!m || !n || !k || !f8) return;
      ComputeMeasurement c;
      c.kind = ComputeKind::gemm;
      c.dtype = models::Dtype::fp8;
      c.gemm = {*m, *n, *k};
      c.time_s = *f8 * 1e-3;
      if (g.contains("bf16_ms"))
        if (auto b = r.ms(g, at, "bf16_ms")) c.bf16_reference_s = *b * 1e-3;
      c.label = "gemm fp8 " + shape_label(*m, *n, *k);
      c.where = r.file() + ": " + at;
      set.compute.push_back(std::move(c));
    });
  }
  if (const json* a = r.array(doc, "attention")) {
    r.objects(*a, "attention", [&](const json& g, const std::string& at) {
      auto shape = attention_shape(g, at, r);
      if (!shape) return;
      for (const char* key : {"fwd_ms", "fwdbwd_ms"}) {
        if (!g.contains(key)) continue;
        if (auto ms = r.ms(g, at, key)) set.compute.push_back(attention_measurement(*shape, "", key, *ms, at, r));
      }
    });
  }
  auto read_mem = [&](const char* array_key, bool is_copy) {
    const json* a = r.array(doc, array_key);
    if (!a) return;
    r.objects(*a, std::string(array_key), [&](const json& g, const std::string& at) {
      std::string op = "copy";
      std::optional<models::MemOpKind> kind = models::MemOpKind::copy;
      if (!is_copy) {
        auto o = g.find("op");
        if (o == g.end() || !o->is_string()) {
          r.fail(at + ".op", "missing (expected a kernel name such as rms_norm, swiglu, add, adamw_fused_fp32)");
          return;
        }
        op = o->get<std::string>();
        kind = mem_kind_of(op);
        if (!kind) {
          r.note(at + ".op", "kernel \"" + op + "\" has no memory-bound kind in the compute model; skipped");
          return;
        }
      }
      auto bytes = r.bytes(g, at, "bytes");
      auto ms = r.ms(g, at, "ms");
      if (!bytes || !ms) return;
      ComputeMeasurement c;
      c.kind = ComputeKind::memory_bound;
      c.mem_kind = *kind;
      c.bytes = *bytes;
      c.time_s = *ms * 1e-3;
      c.label = op + " " + fmt_bytes(*bytes);
      c.where = r.file() + ": " + at;
      set.compute.push_back(std::move(c));
    });
  };
  read_mem("memory_bound", false);
  read_mem("d2d_copy", true);

  if (const json* a = r.array(doc, "nccl")) {
    r.objects(*a, "nccl", [&](const json& g, const std::string& at) {
      auto c = g.find("collective");
      std::optional<models::CollectiveKind> kind;
      if (c != g.end() && c->is_string()) kind = models::parse_collective(c->get<std::string>());
      if (!kind) {
        r.fail(at + ".collective", "expected a collective name (all_reduce, all_gather, ...)");
        return;
      }
      auto ranks = r.count(g, at, "ranks");
      auto bytes = r.bytes(g, at, "bytes");
      auto us = r.us(g, at, "time_us");
      if (!ranks || !bytes || !us) return;
      CommMeasurement m;
      m.collective = *kind;
      m.ranks = static_cast<int>(*ranks);
      m.nodes = g.value("nodes", 1);
      m.algorithm = g.value("algorithm", std::string("default"));
      m.size_bytes = *bytes;
      m.time_s = *us * 1e-6;
      m.in_place = g.value("in_place", false);
      m.gpu = set.gpu;
      m.where = r.file() + ": " + at;
      set.comm.push_back(std::move(m));
    });
  }
  return set;
}

std::string algorithm_of(const std::string& text) {
  const std::string s = lower(text);
  if (s.rfind("default", 0) == 0) return "default";  // "default (no NVLS on A100)", "default (Ring)"
  if (s.find("nvls") != std::string::npos && s.find(" vs ") == std::string::npos) return "nvls";
  if (s.find("tree") != std::string::npos) return "tree";
  if (s.find("ring") != std::string::npos && s.find(" vs ") == std::string::npos) return "ring";
  return "default";
}

// Format 2: calibrate/published/nccl.json.
MeasurementSet read_published_nccl(const json& doc, Reader& r) {
  MeasurementSet set;
  r.objects(doc, "", [&](const json& e, const std::string& at) {
    const std::string id = e.value("id", at);
    const json* sweep = nullptr;
    std::string sweep_key;
    bool in_place = true;
    if (auto m = e.find("measured"); m != e.end() && m->is_object()) {
      for (const char* key : {"busbw_GBps_by_bytes", "busbw_GBps_by_bytes_out_of_place"}) {
        if (auto s = m->find(key); s != m->end() && s->is_object()) {
          sweep = &*s;
          sweep_key = key;
          in_place = std::string(key) == "busbw_GBps_by_bytes";
          break;
        }
      }
    }
    if (!sweep) {
      r.note(at, "entry " + id + " has no busbw-by-size sweep (a single quoted figure); not used");
      return;
    }
    const json& coll = e.value("collective", json::object());
    const json& cluster = e.value("cluster", json::object());
    std::optional<models::CollectiveKind> kind;
    if (auto n = coll.find("name"); n != coll.end() && n->is_string()) kind = models::parse_collective(n->get<std::string>());
    const int ranks = cluster.contains("count") && cluster["count"].is_number_integer() ? cluster["count"].get<int>() : 0;
    if (!kind || ranks < 2) {
      r.note(at, "entry " + id + ": collective or rank count not stated; not used");
      return;
    }
    const int nodes = cluster.contains("nodes") && cluster["nodes"].is_number_integer() ? cluster["nodes"].get<int>() : 1;
    const std::string algo = coll.contains("algo") && coll["algo"].is_string() ? algorithm_of(coll["algo"].get<std::string>())
                                                                              : "default";
    if (coll.contains("placement") && coll["placement"].is_string())
      in_place = coll["placement"].get<std::string>() == "in-place";
    const std::string gpu = cluster.value("gpu", std::string());
    const double factor = models::bus_bandwidth_factor(*kind, ranks);
    for (auto it = sweep->begin(); it != sweep->end(); ++it) {
      const std::string path = at + ".measured." + sweep_key + "." + it.key();
      char* end = nullptr;
      const double bytes = std::strtod(it.key().c_str(), &end);
      if (end == it.key().c_str() || *end != '\0' || bytes <= 0) {
        r.fail(path, "the key is not a size in bytes");
        continue;
      }
      if (!(bytes <= bounds::kMaxBufferBytes)) {
        r.fail(path, "the key's size is out of range (expected at most 2^40 bytes, more than any GPU's memory holds)");
        continue;
      }
      if (!it->is_number() || it->get<double>() <= 0) {
        r.fail(path, "expected a positive busbw in GB/s, got " + it->dump());
        continue;
      }
      if (!(it->get<double>() >= bounds::kMinMeasuredGBps && it->get<double>() <= bounds::kMaxMeasuredGBps)) {
        r.fail(path, it->dump() + " is out of range (expected a busbw of 0.001 to 100000 GB/s: 1 MB/s to 100x NVLink 5)");
        continue;
      }
      CommMeasurement m;
      m.collective = *kind;
      m.algorithm = algo;
      m.ranks = ranks;
      m.nodes = std::max(1, nodes);
      m.size_bytes = bytes;
      m.time_s = bytes * factor / (it->get<double>() * 1e9);
      m.in_place = in_place;
      m.gpu = gpu;
      m.where = r.file() + ": " + path + " (" + id + ")";
      set.comm.push_back(std::move(m));
    }
  });
  return set;
}

// Format 3: nccl-tests -J output.
MeasurementSet read_nccl_tests_json(const json& doc, Reader& r) {
  MeasurementSet set;
  int ranks = 0;
  std::string gpu;
  int nodes = 1;
  if (auto d = doc.find("devices"); d != doc.end() && d->is_array()) {
    ranks = static_cast<int>(d->size());
    std::vector<std::string> hosts;
    for (const auto& dev : *d) {
      if (!dev.is_object()) continue;
      if (gpu.empty()) gpu = dev.value("name", std::string());
      const std::string h = dev.value("hostname", dev.value("host", std::string()));
      if (!h.empty() && std::find(hosts.begin(), hosts.end(), h) == hosts.end()) hosts.push_back(h);
    }
    nodes = std::max<int>(1, static_cast<int>(hosts.size()));
  }
  const json& config = doc.value("config", json::object());
  if (ranks == 0 && config.is_object()) ranks = config.value("ngpus", 0);
  std::string name = config.is_object() ? config.value("test", config.value("name", std::string())) : "";
  auto kind = collective_from_name(name.empty() ? r.file() : name);
  if (!kind) {
    r.fail("config", "cannot tell the collective (no config.test name, and the file name names none)");
    return set;
  }
  if (ranks < 2) {
    r.fail("devices", "rank count unknown or below 2");
    return set;
  }
  const json& results = doc["results"];
  r.objects(results, "results", [&](const json& row, const std::string& at) {
    auto size = r.bytes(row, at, "size");
    if (!size) return;
    for (const char* place : {"out_of_place", "in_place"}) {
      auto b = row.find(place);
      if (b == row.end() || !b->is_object()) continue;
      auto t = r.us(*b, at + "." + place, "time");
      if (!t) continue;
      CommMeasurement m;
      m.collective = *kind;
      m.ranks = ranks;
      m.nodes = nodes;
      m.size_bytes = *size;
      m.time_s = *t * 1e-6;
      m.in_place = std::string(place) == "in_place";
      m.gpu = gpu;
      m.where = r.file() + ": " + at + "." + place;
      set.comm.push_back(std::move(m));
    }
  });
  return set;
}


// Format 4: scripts/attention_backends.py, PyTorch SDPA with one backend forced per row. The compute
// model has two attention kernels (op.hpp, AttentionImpl): the native fused one, which cuDNN's Hopper
// kernel is, and FlashAttention-2, which SDPA's FLASH_ATTENTION backend is. The memory-efficient and math
// kernels, and any row that reads an additive bias (ALiBi), have none: they are listed in one note per
// reason and not predicted by a stand-in.
MeasurementSet read_attention_backends(const json& doc, Reader& r) {
  MeasurementSet set;
  if (auto v = doc.find("version"); v == doc.end() || !v->is_number_integer() || v->get<std::int64_t>() != 1) {
    r.fail("version", "expected 1 (the version scripts/attention_backends.py writes), got " +
                          (v == doc.end() ? std::string("nothing") : v->dump()));
    return set;
  }
  if (auto it = doc.find("device"); it != doc.end() && it->is_string()) set.gpu = it->get<std::string>();
  const json* rows = r.array(doc, "rows");
  if (!rows) {
    if (!doc.contains("rows")) r.fail("rows", "missing (expected the array of timed kernels)");
    return set;
  }
  struct Kernel {
    models::AttentionImpl impl;
    const char* name;
  };
  const std::map<std::string, Kernel> kernels = {{"CUDNN_ATTENTION", {models::AttentionImpl::native, "cudnn"}},
                                                 {"FLASH_ATTENTION", {models::AttentionImpl::flash2, "flash2"}}};
  std::map<std::string, std::vector<std::string>> skipped;  // reason -> rows
  r.objects(*rows, "rows", [&](const json& g, const std::string& at) {
    auto backend = r.text(g, at, "backend", "an SDPBackend name such as CUDNN_ATTENTION or FLASH_ATTENTION");
    auto bias = r.boolean(g, at, "alibi_bias");
    auto shape = attention_shape(g, at, r);
    auto fwd = r.ms(g, at, "fwd_ms"), fwdbwd = r.ms(g, at, "fwdbwd_ms");
    if (!backend || !bias || !shape || !fwd || !fwdbwd) return;
    const auto k = kernels.find(*backend);
    if (*bias) {
      skipped["additive-bias (ALiBi) attention: the compute model has no kernel that reads a bias; skipped"].push_back(at);
      return;
    }
    if (k == kernels.end()) {
      skipped[*backend + ": the compute model has no kernel for this backend (it models cuDNN's fused kernel and "
                         "FlashAttention-2); skipped"].push_back(at);
      return;
    }
    shape->kernel = k->second.impl;
    set.compute.push_back(attention_measurement(*shape, k->second.name, "fwd_ms", *fwd, at, r));
    set.compute.push_back(attention_measurement(*shape, k->second.name, "fwdbwd_ms", *fwdbwd, at, r));
  });
  for (const auto& [reason, where] : skipped) {
    std::string list;
    for (const auto& w : where) list += (list.empty() ? "" : ", ") + w;
    r.note(list, reason);
  }
  if (auto e = doc.find("errors"); e != doc.end() && e->is_array())
    for (std::size_t i = 0; i < e->size(); ++i)
      r.note("errors[" + std::to_string(i) + "]", "not measured: " + (*e)[i].dump());
  return set;
}
}  // namespace

MeasurementSet measurements_from_json_text(const std::string& text, const std::string& file) {
  json doc = files::as_input_error([&] { return files::parse_json(text, file, files::SyntaxStyle::line); });
  Reader r(file);
  MeasurementSet set;
  if (doc.is_array()) {
    set = read_published_nccl(doc, r);
  } else if (doc.is_object() && doc.value("format", json()) == "clustersim-attention-backends") {
    set = read_attention_backends(doc, r);
  } else if (doc.is_object() && doc.contains("results") && doc["results"].is_array()) {
    set = read_nccl_tests_json(doc, r);
  } else if (doc.is_object() && (doc.contains("gemm") || doc.contains("memory_bound") || doc.contains("attention") ||
                                 doc.contains("nccl") || doc.contains("d2d_copy"))) {
    set = read_compute_file(doc, r);
  } else {
    throw InputError(file + ": (top level): not a measurement file (expected the harness / reference format "
                                  "with gemm, attention, memory_bound, d2d_copy or nccl arrays; the SDPA backends file of "
                                  "scripts/attention_backends.py; nccl-tests -J output; or a published nccl.json array)");
  }
  if (!r.errors().empty()) throw InputError(r.errors());
  set.sources.push_back(file);
  set.notes.insert(set.notes.end(), r.notes().begin(), r.notes().end());
  if (set.compute.empty() && set.comm.empty()) {
    auto lines = r.notes();
    lines.push_back(file + ": no usable measurement");
    throw InputError(lines);
  }
  return set;
}

}  // namespace cs::calibrate
