#include "sim/scenario/goodput_spec.hpp"

#include <cmath>
#include <cstdio>
#include <functional>

#include <nlohmann/json.hpp>

namespace cs::sim {

using nlohmann::json;

// Llama 3 Table 5, 54-day snapshot, 16,384 H100 GPUs on 2,048 Grand Teton nodes of 8 GPUs and 8 NICs.
// Each cause counted once, in the class whose units it is a failure of:
//   GPU (268): faulty GPU 148, GPU HBM3 memory 72, GPU SRAM memory 19, GPU system processor 17,
//              silent data corruption 6, GPU thermal interface + sensor 6;
//   host (46): host maintenance 32, SSD 3, power supply 3, server chassis 2, IO expansion board 2, CPU 2,
//              system memory 2;
//   NIC (7);   network switch/cable (35), counted per node attached (the switch count depends on the fabric);
//   software (63): software bug 54, NCCL watchdog timeouts 7, dependency 2 — counted per rank.
// 268 + 46 + 7 + 35 + 63 = 419, the table's total of unexpected interruptions.
// MTBF of a unit = the class's unit-hours over the snapshot / its count.
MtbfHours default_mtbf_hours() {
  constexpr double kHours = 54.0 * 24.0;
  constexpr double kGpuHours = 16384.0 * kHours;
  constexpr double kNodeHours = 2048.0 * kHours;
  MtbfHours m;
  m.gpu = kGpuHours / 268.0;       // 79,230 h
  m.host = kNodeHours / 46.0;      // 57,700 h
  m.nic = kGpuHours / 7.0;         // 3,033,381 h (one NIC per GPU)
  m.network = kNodeHours / 35.0;   // 75,835 h
  m.software = kGpuHours / 63.0;   // 337,042 h
  return m;
}

namespace {

std::string shown(const json& v) { return v.dump(); }

// One JSON object of a section: its fields are declared, each with how to read it; then every key of
// the object is looked up among them (an unknown key is a problem naming the known ones).
class Section {
 public:
  Section(const json& obj, std::string path, std::vector<SectionProblem>& problems)
      : obj_(obj), path_(std::move(path)), problems_(problems) {}

  // A number in [lo, hi] (lo excluded when `open_low`).
  Section& number(const std::string& key, double& out, double lo, double hi, bool open_low) {
    fields_.push_back({key, [=, &out, this](const json& v, const std::string& at) {
      char range[96];
      std::snprintf(range, sizeof range, "a number %s %g and <= %g", open_low ? ">" : ">=", lo, hi);
      if (!v.is_number()) return bad(at, "expected " + std::string(range) + ", got " + shown(v));
      const double d = v.get<double>();
      if (!std::isfinite(d) || d < lo || (open_low && d == lo) || d > hi)
        return bad(at, shown(v) + " is out of range (expected " + range + ")");
      out = d;
    }});
    return *this;
  }
  Section& integer(const std::string& key, long long& out, long long lo, long long hi) {
    fields_.push_back({key, [=, &out, this](const json& v, const std::string& at) {
      const std::string range = "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
      if (!v.is_number() || std::floor(v.get<double>()) != v.get<double>()) return bad(at, "expected " + range + ", got " + shown(v));
      const double d = v.get<double>();
      if (d < static_cast<double>(lo) || d > static_cast<double>(hi)) return bad(at, shown(v) + " is out of range (expected " + range + ")");
      out = static_cast<long long>(d);
    }});
    return *this;
  }
  Section& flag(const std::string& key, bool& out) {
    fields_.push_back({key, [&out, this](const json& v, const std::string& at) {
      if (!v.is_boolean()) return bad(at, "expected true or false, got " + shown(v));
      out = v.get<bool>();
    }});
    return *this;
  }
  Section& one_of(const std::string& key, std::string& out, std::vector<std::string> choices) {
    fields_.push_back({key, [choices, &out, this](const json& v, const std::string& at) {
      std::string list;
      for (const auto& c : choices) list += (list.empty() ? "\"" : ", \"") + c + "\"";
      if (v.is_string())
        for (const auto& c : choices)
          if (v.get<std::string>() == c) {
            out = c;
            return;
          }
      bad(at, "expected one of " + list + ", got " + shown(v));
    }});
    return *this;
  }
  // A nested object, read by `inner` with its own fields.
  Section& object(const std::string& key, std::function<void(Section&)> inner) {
    fields_.push_back({key, [inner, this](const json& v, const std::string& at) {
      if (!v.is_object()) return bad(at, "expected an object, got " + shown(v));
      Section s(v, at, problems_);
      inner(s);
      s.read();
    }});
    return *this;
  }

  bool has(const std::string& key) const { return obj_.contains(key) && !obj_.at(key).is_null(); }

  // Reads every present key (null = the default) and reports the unknown ones.
  void read() {
    for (auto it = obj_.begin(); it != obj_.end(); ++it) {
      const std::string at = path_ + "." + it.key();
      const Field* f = nullptr;
      for (const auto& field : fields_)
        if (field.key == it.key()) f = &field;
      if (!f) {
        std::string known;
        for (const auto& field : fields_) known += (known.empty() ? "" : ", ") + field.key;
        bad(at, "unknown key (expected one of: " + known + ")");
      } else if (!it->is_null()) {
        f->read(*it, at);
      }
    }
  }
  void bad(const std::string& at, const std::string& what) { problems_.emplace_back(at, what); }
  const std::string& path() const { return path_; }

 private:
  struct Field {
    std::string key;
    std::function<void(const json&, const std::string&)> read;
  };
  const json& obj_;
  std::string path_;
  std::vector<SectionProblem>& problems_;
  std::vector<Field> fields_;
};

constexpr double kMaxHours = 1e9;
constexpr double kMaxSeconds = 1e8;
constexpr double kMaxGBps = 1e7;
// The low ends, so that every time the run model derives stays finite (a denormal bandwidth made a write
// time of inf; an MTBF of 0.001 h an infinite expected run). A unit (one GPU, host, NIC, switch port, rank)
// failing more often than once an hour is broken, not in service: Llama 3's worst class fails once in
// 57,700 h per unit (default_mtbf_hours above). 1 MB/s is below any storage tier or host copy a training
// job writes to (one HDD streams ~200 MB/s). A checkpoint or a sample holds at least one byte.
constexpr double kMinHours = 1;
constexpr double kMinGBps = 1e-3;
constexpr double kMinBytes = 1;

ResilienceSpec read_resilience(const json& v, std::vector<SectionProblem>& problems) {
  ResilienceSpec r;
  CheckpointSpec& c = r.checkpoint;
  RestartSpec& rs = r.restart;
  std::string interval_word;
  Section top(v, "resilience", problems);
  top.object("mtbf_hours", [&](Section& s) {
       s.number("gpu", r.mtbf_hours.gpu, kMinHours, kMaxHours, false)
           .number("host", r.mtbf_hours.host, kMinHours, kMaxHours, false)
           .number("nic", r.mtbf_hours.nic, kMinHours, kMaxHours, false)
           .number("network", r.mtbf_hours.network, kMinHours, kMaxHours, false)
           .number("software", r.mtbf_hours.software, kMinHours, kMaxHours, false);
     })
      .object("checkpoint", [&](Section& s) {
        s.one_of("interval", interval_word, {"optimal"})
            .integer("interval_steps", c.interval_steps, 1, 1000000000LL)
            .number("interval_s", c.interval_s, 0, kMaxSeconds, true)
            .number("size_bytes", c.size_bytes, kMinBytes, 1e18, false)
            .one_of("target", c.target, {"shared_fs", "local_nvme"})
            .number("local_nvme_write_GBps_per_node", c.local_nvme_write_GBps_per_node, kMinGBps, kMaxGBps, false)
            .number("shared_fs_GBps", c.shared_fs_GBps, kMinGBps, kMaxGBps, false)
            .number("shared_fs_per_client_GBps", c.shared_fs_per_client_GBps, kMinGBps, kMaxGBps, false)
            .flag("async", c.async)
            .number("snapshot_GBps_per_gpu", c.snapshot_GBps_per_gpu, kMinGBps, kMaxGBps, false);
        int given = s.has("interval") + s.has("interval_steps") + s.has("interval_s");
        if (given > 1) s.bad(s.path(), "give one of interval (\"optimal\"), interval_steps or interval_s, not " + std::to_string(given));
      })
      .object("restart", [&](Section& s) {
        s.number("detection_s", rs.detection_s, 0, kMaxSeconds, false)
            .number("scheduling_s", rs.scheduling_s, 0, kMaxSeconds, false)
            .number("process_start_s", rs.process_start_s, 0, kMaxSeconds, false)
            .number("nccl_init_s", rs.nccl_init_s, 0, kMaxSeconds, false)
            .number("nccl_init_base_s", rs.nccl_init_base_s, 0, kMaxSeconds, false)
            .number("nccl_init_s_per_rank", rs.nccl_init_s_per_rank, 0, 1e3, false);
      });
  if (!v.is_object()) {
    problems.emplace_back("resilience", "expected an object, got " + shown(v));
    return r;
  }
  top.read();
  c.optimal = c.interval_steps == 0 && c.interval_s == 0;
  return r;
}

DataPipelineSpec read_data_pipeline(const json& v, std::vector<SectionProblem>& problems) {
  DataPipelineSpec d;
  long long workers = d.workers_per_gpu, prefetch = d.prefetch_depth;
  if (!v.is_object()) {
    problems.emplace_back("data_pipeline", "expected an object, got " + shown(v));
    return d;
  }
  Section s(v, "data_pipeline", problems);
  s.one_of("source", d.source, {"shared_fs", "local_nvme"})
      .number("shared_fs_GBps", d.shared_fs_GBps, kMinGBps, kMaxGBps, false)
      .number("shared_fs_per_client_GBps", d.shared_fs_per_client_GBps, kMinGBps, kMaxGBps, false)
      .number("local_nvme_read_GBps_per_node", d.local_nvme_read_GBps_per_node, kMinGBps, kMaxGBps, false)
      .number("bytes_per_sample", d.bytes_per_sample, kMinBytes, 1e15, false)
      .integer("workers_per_gpu", workers, 1, 1024)
      .number("cpu_s_per_sample", d.cpu_s_per_sample, 0, 1e4, false)
      .integer("prefetch_depth", prefetch, 0, 1024);
  s.read();
  if (!s.has("bytes_per_sample")) problems.emplace_back("data_pipeline.bytes_per_sample", "missing (expected a number >= 1: the bytes read per sample)");
  d.workers_per_gpu = static_cast<int>(workers);
  d.prefetch_depth = static_cast<int>(prefetch);
  return d;
}

VariabilitySpec read_variability(const json& v, std::vector<SectionProblem>& problems) {
  VariabilitySpec out;
  if (!v.is_object()) {
    problems.emplace_back("variability", "expected an object, got " + shown(v));
    return out;
  }
  Section s(v, "variability", problems);
  s.number("compute_jitter_cv", out.compute_jitter_cv, 0, 0.5, false);
  s.read();
  return out;
}

}  // namespace

const std::vector<std::string>& run_section_keys() {
  static const std::vector<std::string> keys{"resilience", "data_pipeline", "variability"};
  return keys;
}

RunSections read_run_sections(const json& doc, std::vector<SectionProblem>& problems) {
  RunSections out;
  if (!doc.is_object()) return out;
  if (auto it = doc.find("resilience"); it != doc.end() && !it->is_null()) out.resilience = read_resilience(*it, problems);
  if (auto it = doc.find("data_pipeline"); it != doc.end() && !it->is_null()) out.data_pipeline = read_data_pipeline(*it, problems);
  if (auto it = doc.find("variability"); it != doc.end() && !it->is_null()) out.variability = read_variability(*it, problems);
  return out;
}

}  // namespace cs::sim
