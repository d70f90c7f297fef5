// The executor on hand-built task graphs whose schedules can be worked out on paper.
#include <catch2/catch.hpp>

#include "sim/engine/executor.hpp"
#include "models/parallelism/pipeline_schedule.hpp"
#include "tests/sim/fixed_network.hpp"

using namespace cs::sim;
using cs::sim::testing::FixedNetwork;

namespace {

TaskId compute(TaskGraph& g, std::uint32_t rank, Time d, StreamKind s = StreamKind::compute, int mb = -1) {
  Task t;
  t.rank = rank;
  t.stream = s;
  t.duration = d;
  t.name = g.intern(s == StreamKind::compute ? "kernel" : "side");
  t.micro_batch = mb;
  return g.add_task(t);
}

// A collective over the given (rank, stream) members; returns the member task ids.
std::vector<TaskId> collective(TaskGraph& g, std::vector<std::pair<std::uint32_t, StreamKind>> members, int mb = -1) {
  Collective c;
  c.group = g.add_group({0, 1});
  const auto cid = g.add_collective(c);
  std::vector<TaskId> ids;
  for (auto [rank, stream] : members) {
    Task t;
    t.rank = rank;
    t.stream = stream;
    t.category = Category::pp_comm;
    t.collective = cid;
    t.name = g.intern("coll");
    t.micro_batch = mb;
    ids.push_back(g.add_task(t));
    g.add_member(cid, ids.back());
  }
  return ids;
}

}  // namespace

TEST_CASE("executor: a stream runs its tasks one after another, streams overlap", "[sim]") {
  TaskGraph g(1);
  compute(g, 0, 10);
  compute(g, 0, 20);
  compute(g, 0, 5, StreamKind::comm_dp);  // another stream: overlaps the compute stream
  g.freeze();
  FixedNetwork net({});
  const auto r = execute(g, net, {});
  // Compute stream: 10 then 20 -> ends at 30; the side stream's task runs 0..5 alongside.
  REQUIRE(r.makespan == 30);
  REQUIRE(r.records[1].start == 10);
  REQUIRE(r.records[2].start == 0);
  REQUIRE(r.records[2].end == 5);
}

TEST_CASE("executor: a dependency across streams delays the dependent task", "[sim]") {
  TaskGraph g(1);
  const TaskId a = compute(g, 0, 10, StreamKind::comm_dp);
  const TaskId b = compute(g, 0, 7);
  g.add_dependency(a, b);
  g.freeze();
  FixedNetwork net({});
  const auto r = execute(g, net, {});
  REQUIRE(r.records[b].start == 10);
  REQUIRE(r.makespan == 17);
}

TEST_CASE("executor: a collective starts when its last member arrives, all members end together", "[sim]") {
  TaskGraph g(2);
  const TaskId pre0 = compute(g, 0, 10);
  const TaskId pre1 = compute(g, 1, 30);
  auto m = collective(g, {{0, StreamKind::comm_tp}, {1, StreamKind::comm_tp}});
  g.add_dependency(pre0, m[0]);
  g.add_dependency(pre1, m[1]);
  g.freeze();
  FixedNetwork net({5});
  const auto r = execute(g, net, {});
  // Rank 0 arrives at 10 and waits; rank 1 arrives at 30; the transfer runs 30..35 for both.
  REQUIRE(r.records[m[0]].arrive == 10);
  REQUIRE(r.records[m[0]].start == 30);
  REQUIRE(r.records[m[0]].end == 35);
  REQUIRE(r.records[m[1]].end == 35);
  REQUIRE(net.started() == std::vector<Time>{30});
}

TEST_CASE("executor: communication slows a running kernel by the contention factor", "[sim]") {
  // Kernel of 100 on rank 0 starting at 0; a collective moves data 0..50 on the same rank. With c = 0.25 the
  // kernel runs at 1/1.25 = 0.8 speed while it overlaps: by t = 50 it has done 40, the remaining 60 run at
  // full speed, so it ends at 110 instead of 100.
  TaskGraph g(1);
  const TaskId k = compute(g, 0, 100);
  Collective c;
  c.group = g.add_group({0});
  const auto cid = g.add_collective(c);
  Task t;
  t.stream = StreamKind::comm_dp;
  t.collective = cid;
  t.category = Category::dp_comm;
  const TaskId m = g.add_task(t);
  g.add_member(cid, m);
  g.freeze();
  FixedNetwork net({50});
  ExecutorOptions o;
  o.comm_compute_contention = 0.25;
  const auto r = execute(g, net, o);
  REQUIRE(r.records[m].end == 50);
  REQUIRE(r.records[k].end == 110);
  // Without contention the two simply overlap.
  FixedNetwork net2({50});
  REQUIRE(execute(g, net2, {}).records[k].end == 100);
}

TEST_CASE("executor: a graph that cannot finish is reported with the blocked ranks", "[sim]") {
  // Two collectives issued in opposite orders on the two ranks' single stream: each rank waits in the
  // first one for a peer that is stuck in the other. NCCL would hang; we name the streams instead.
  TaskGraph g(2);
  Collective a, b;
  a.group = b.group = g.add_group({0, 1});
  const auto ca = g.add_collective(a), cb = g.add_collective(b);
  auto add = [&](std::uint32_t rank, std::uint32_t cid) {
    Task t;
    t.rank = rank;
    t.stream = StreamKind::comm_tp;
    t.collective = cid;
    t.name = g.intern(cid == ca ? "first" : "second");
    g.add_member(cid, g.add_task(t));
  };
  add(0, ca);
  add(0, cb);
  add(1, cb);
  add(1, ca);
  g.freeze();
  FixedNetwork net({1, 1});
  REQUIRE_THROWS_WITH(execute(g, net, {}), Catch::Contains("deadlock") && Catch::Contains("rank 0 stream comm-tp at 'first'") &&
                                               Catch::Contains("rank 1 stream comm-tp at 'second'") &&
                                               Catch::Contains("1/2 members arrived"));
}

TEST_CASE("executor: 1F1B with p = 4, m = 8 and equal stage times, worked by hand", "[sim]") {
  // Each stage's forward takes f = 1 unit, backward b = 2, sends and receives take no time. Classic
  // result (Narayanan et al. 2021): the step takes (m + p - 1)(f + b) = 11 * 3 = 33 units; every stage
  // is busy m (f + b) = 24 of them, so the bubble is (p - 1)(f + b) = 9 units, 9/33 = 3/11 of the step.
  const int p = 4, m = 8;
  const Time f = 1'000'000, b = 2'000'000;  // 1 and 2 us in picoseconds
  TaskGraph g(p);
  std::vector<Time> durations;
  // recv[s][j] / send[s][j]: p2p member tasks, matched into one collective per (stage boundary, mb, dir).
  std::vector<std::vector<TaskId>> fwd_last(p, std::vector<TaskId>(m)), bwd_last(p, std::vector<TaskId>(m));
  std::vector<std::vector<std::uint32_t>> act(p, std::vector<std::uint32_t>(m)), grad(p, std::vector<std::uint32_t>(m));
  for (int s = 0; s + 1 < p; ++s)
    for (int j = 0; j < m; ++j) {
      Collective c;
      c.group = g.add_group({s, s + 1});
      act[s][j] = g.add_collective(c);
      grad[s][j] = g.add_collective(c);
    }
  durations.assign(g.collectives().size(), 0);
  auto member = [&](std::uint32_t cid, int rank, StreamKind stream, int mb) {
    Task t;
    t.rank = static_cast<std::uint32_t>(rank);
    t.stream = stream;
    t.category = Category::pp_comm;
    t.collective = cid;
    t.micro_batch = mb;
    const TaskId id = g.add_task(t);
    g.add_member(cid, id);
    return id;
  };
  for (int s = 0; s < p; ++s) {
    for (const PipelineAction& a : pipeline_order(PipelineSchedule::one_f_one_b, p, m, s)) {
      const int j = a.micro_batch;
      if (a.forward) {
        TaskId recv = kNone;
        if (s > 0) recv = member(act[s - 1][j], s, StreamKind::pp_recv_fwd, j);
        const TaskId k = compute(g, static_cast<std::uint32_t>(s), f, StreamKind::compute, j);
        if (recv != kNone) g.add_dependency(recv, k);
        if (s + 1 < p) g.add_dependency(k, member(act[s][j], s, StreamKind::pp_send_fwd, j));
      } else {
        TaskId recv = kNone;
        if (s + 1 < p) recv = member(grad[s][j], s, StreamKind::pp_recv_bwd, j);
        const TaskId k = compute(g, static_cast<std::uint32_t>(s), b, StreamKind::compute, j);
        if (recv != kNone) g.add_dependency(recv, k);
        if (s > 0) g.add_dependency(k, member(grad[s - 1][j], s, StreamKind::pp_send_bwd, j));
      }
    }
  }
  g.freeze();
  FixedNetwork net(durations);
  const auto r = execute(g, net, {});
  REQUIRE(r.makespan == (m + p - 1) * (f + b));
  for (int s = 0; s < p; ++s) {
    Time busy = 0;
    for (TaskId id : g.stream_tasks(s, StreamKind::compute)) busy += r.records[id].end - r.records[id].start;
    REQUIRE(busy == m * (f + b));
    const double bubble = static_cast<double>(r.makespan - busy) / static_cast<double>(r.makespan);
    REQUIRE(bubble == Approx(3.0 / 11.0).epsilon(1e-12));
  }
}
