#include "sim/report/trace.hpp"

#include <cstdio>
#include <filesystem>
#include <ostream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "sim/base/input_error.hpp"

namespace cs::sim {

using nlohmann::json;

namespace {
// The trace is written as it is produced, one event at a time, instead of as one JSON document: a step of
// 10^4 micro-batches has tens of millions of events, whose document took gigabytes. The bytes are those
// nlohmann::json's dump() gives the whole document (keys in its sorted order, each event dumped by it),
// so the format is unchanged: {"displayTimeUnit":..,"otherData":{..},"traceEvents":[..]}.
class EventWriter {
 public:
  explicit EventWriter(std::ostream& out) : out_(out) {}
  void add(const json& event) {
    if (!first_) out_ << ',';
    first_ = false;
    out_ << event.dump();
  }

 private:
  std::ostream& out_;
  bool first_ = true;
};

void write_events(const Scenario& s, const TraceInput& run, EventWriter& events) {
  const TaskGraph& g = run.graph;
  const int per_node = s.cluster.gpus_per_node;
  // Metadata: process = node, thread = GPU stream; only the simulated ranks appear (each with the GPUs of
  // its class of equal ranks on unequal GPUs).
  // Several jobs: each node's process also names its job.
  std::map<int, std::string> job_of_node;
  for (const Job& j : s.jobs)
    for (int n : j.nodes) job_of_node[n] = j.name;
  std::set<int> nodes;
  // A stream's row: the seven classic streams of each GPU in turn (the rows traces have always had), then
  // DualPipeV's four after every GPU's, then the offload copies' after those.
  constexpr int classic = static_cast<int>(StreamKind::pp_send_fwd_up);
  constexpr int offload = static_cast<int>(StreamKind::offload), dualpipe = offload - classic;
  auto tid_of = [&](int gpu, int st) {
    if (st == offload) return per_node * offload + gpu % per_node;
    return st < classic ? (gpu % per_node) * classic + st : per_node * classic + (gpu % per_node) * dualpipe + st - classic;
  };
  for (std::size_t k = 0; k < run.global_rank.size(); ++k) {
    const int gpu = run.global_rank[k];
    const int node = gpu / per_node;
    const auto job = job_of_node.find(node);
    const std::string name = "node " + std::to_string(node) + (job == job_of_node.end() ? std::string{} : " (job " + job->second + ")");
    if (nodes.insert(node).second)
      events.add(json({{"ph", "M"}, {"name", "process_name"}, {"pid", node}, {"args", {{"name", name}}}}));
    for (int st = 0; st < kStreamsPerRank; ++st) {
      // DualPipeV's own streams and the offload stream get a row only where they carry something.
      if (st >= classic && g.stream_tasks(static_cast<int>(k), static_cast<StreamKind>(st)).empty()) continue;
      const int tid = tid_of(gpu, st);
      json args = {{"name", "GPU " + std::to_string(gpu) + " " + to_string(static_cast<StreamKind>(st))}};
      // A class of equal ranks (orbits): its members' GPUs, on the compute stream's row.
      if (run.class_gpus && k < run.class_gpus->size() && st == 0) args["stands_for"] = (*run.class_gpus)[k];
      events.add(json({{"ph", "M"}, {"name", "thread_name"}, {"pid", node}, {"tid", tid}, {"args", std::move(args)}}));
      events.add(json({{"ph", "M"}, {"name", "thread_sort_index"}, {"pid", node}, {"tid", tid}, {"args", {{"sort_index", tid}}}}));
    }
  }
  for (TaskId id = 0; id < g.tasks().size(); ++id) {
    const Task& t = g.tasks()[id];
    const TaskRecord& rec = run.execution.records[id];
    const int gpu = run.global_rank[t.rank];
    json ev = {{"ph", "X"},
               {"name", g.name(t.name)},
               {"cat", to_string(t.category)},
               {"pid", gpu / per_node},
               {"tid", tid_of(gpu, static_cast<int>(t.stream))},
               {"ts", to_microseconds(rec.start)},
               {"dur", to_microseconds(rec.end - rec.start)}};
    json args = {{"micro_batch", t.micro_batch}};
    if (t.collective != kNone) {
      const Collective& c = g.collectives()[t.collective];
      args["bytes"] = c.bytes;
      args["group_size"] = g.group(c.group).size();
      args["waited_us"] = to_microseconds(rec.start - rec.arrive);
    }
    ev["args"] = std::move(args);
    events.add(ev);
  }
}
}  // namespace


void write_trace(const Scenario& s, const TraceInput& run, const std::string& path) {
  write_file_atomically(path, [&](std::ostream& out) {
    const json other = {{"scenario", s.name}, {"step_time_s", run.step_time_s}};
    out << "{\"displayTimeUnit\":" << json("ms").dump() << ",\"otherData\":" << other.dump() << ",\"traceEvents\":[";
    EventWriter events(out);
    write_events(s, run, events);
    out << "]}";
  });
}

}  // namespace cs::sim
