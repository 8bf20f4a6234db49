// Latency from the intended arrival (TaskRecord::intended) and the
// submitter's own delay, submit_lag: zero when the submitter has a CPU of its
// own, positive when it competes.
#include <catch2/catch.hpp>
#include <string>

#include "models/metrics.hpp"
#include "sim_fixtures.hpp"

using namespace poolsim;
using namespace poolsim::test;
using namespace std::chrono_literals;

TEST_CASE("arrival: with a CPU of its own the submitter hands every task over on time",
          "[sim][arrival]") {
  // Zero costs, a spare CPU: each task is handed over at its generated arrival.
  const Workload w = poisson(5, 2000, 500, 1ms, true);
  const RunResult r = sim::simulate(pool_scenario(zero_machine(2), 1), w);
  for (std::size_t i = 0; i < w.tasks.size(); ++i) {
    REQUIRE(r.records[i].intended == w.tasks[i].arrival);
    REQUIRE(r.records[i].submit == w.tasks[i].arrival);
  }
  const Metrics m = compute_metrics(r);
  REQUIRE(m[Metric::submit_lag_mean] == 0);
  REQUIRE(m[Metric::submit_lag_p99] == 0);
}

TEST_CASE("arrival: a submitter that competes is late, and latency counts its lateness",
          "[sim][arrival]") {
  // One CPU, thread per task, creating a thread costs 10 us: the batch
  // arrives at 0, but the submitter hands task i over only after creating
  // the i threads before it (and sharing the CPU with them).
  MachineProfile m = zero_machine(1);
  m.thread_create = 10us;
  const RunResult r = sim::simulate(tpt_scenario(m), batch(10, 100us));
  const Metrics x = compute_metrics(r);
  REQUIRE(x[Metric::submit_lag_mean] > 0);
  REQUIRE(x[Metric::submit_lag_p99] >= 90e-6);  // the last one waited for 9 creations at least
  for (const TaskRecord& t : r.records) {
    REQUIRE(t.intended == Duration{0});
    REQUIRE(t.submit >= t.intended);
  }
  // Latency is measured from the intended arrival: at least the lag plus the work.
  REQUIRE(x[Metric::latency_max] >= x[Metric::submit_lag_p99] + 100e-6);
}

namespace {
// split -> (n successors): a graph of n + 1 tasks of one cpu phase of
// `work` each, the successors released together when split completes.
Workload split_graph(std::uint32_t n, Duration work) {
  Workload w;
  w.graph = true;
  w.arrival = ArrivalKind::batch;
  for (std::uint32_t i = 0; i <= n; ++i) {
    Task t;
    t.id = i;
    t.first_phase = i;
    t.phase_count = 1;
    w.phases.push_back({PhaseKind::cpu, 0, work, Duration{0}});
    w.tasks.push_back(t);
    if (i > 0) {
      w.tasks[i].pred_count = 1;
      w.successors.push_back(i);
    }
  }
  w.tasks[0].first_succ = 0;
  w.tasks[0].succ_count = n;
  w.node_ids = {"split"};
  for (std::uint32_t i = 1; i <= n; ++i) w.node_ids.push_back(std::string(1, char('a' + i - 1)));
  w.class_names = {"class0"};
  return w;
}
}  // namespace

TEST_CASE("arrival: a graph node's intended arrival is its release", "[sim][arrival]") {
  // split -> (a, b): a and b are released when split completes, at 1 ms.
  const Workload w = split_graph(2, 1ms);
  const RunResult r = sim::simulate(pool_scenario(zero_machine(3), 2), w);
  REQUIRE(r.records[0].intended == Duration{0});
  REQUIRE(r.records[1].intended == 1ms);
  REQUIRE(r.records[2].intended == 1ms);
  // Each node waits for nothing once released: latency = its own 1 ms of work.
  REQUIRE(compute_metrics(r)[Metric::latency_max] == Approx(0.001));
}

namespace {
// split -> (a, b, c, d) on oneTBB with one worker on one CPU, machine `m`
// with tbb_spawn 70 ns: the worker that ran split spawns its four
// successors one after another, each task_group::run costing tbb_spawn
// before the task is in its pool. All four were released at split's end
// (100 us); the k-th is handed over `first` + k spawns later. Returns the
// run's mean submit lag.
double split_spawn_lags(MachineProfile m, Duration first) {
  m.tbb_spawn = 70ns;
  Scenario s = pool_scenario(m, 1);
  s.backend.kind = BackendKind::tbb;
  const RunResult r = sim::simulate(s, split_graph(4, 100us));
  const Duration released = r.records[0].end;
  REQUIRE(released == 100us);
  for (std::uint32_t k = 0; k < 4; ++k) {
    INFO("successor " << k);
    REQUIRE(r.records[1 + k].intended == released);
    REQUIRE(r.records[1 + k].submit - r.records[1 + k].intended == first + k * 70ns);
  }
  return compute_metrics(r)[Metric::submit_lag_mean];
}
}  // namespace

TEST_CASE(
    "arrival: successors released together share the release, and the spawns before one are its "
    "submit lag",
    "[sim][arrival]") {
  MachineProfile m = zero_machine(1);
  m.queue_handover_remote = 1us;  // never paid on one CPU
  // The root, handed over by the submitter at 0, is on time: mean (0 + 70 +
  // 140 + 210) / 5 ns.
  REQUIRE(split_spawn_lags(m, 0ns) == Approx(84e-9));
}

TEST_CASE(
    "arrival: a release's hand-overs come release_stamp after it (the harness's second time "
    "stamp), on the completing thread",
    "[sim][arrival]") {
  // The completing worker computes release_stamp once, before the first
  // successor's hand-over, so every successor is that much later than
  // without it, and split's own end and the release instant do not move:
  // (25 + 95 + 165 + 235) / 5 ns, against 84 ns without it.
  MachineProfile m = zero_machine(1);
  m.release_stamp = 25ns;
  REQUIRE(split_spawn_lags(m, 25ns) == Approx(104e-9));
  // A closed client's next request (think 0) is released at its previous
  // one's end and handed over release_stamp later.
  const RunResult rc = sim::simulate(pool_scenario(m, 1), closed_clients(1, 3, 1s, 0ms, 10us));
  for (std::size_t i = 1; i < rc.records.size(); ++i) {
    INFO("request " << i);
    REQUIRE(rc.records[i].intended == rc.records[i - 1].end);
    REQUIRE(rc.records[i].submit - rc.records[i].intended == 25ns);
  }
}

TEST_CASE(
    "arrival: a oneTBB worker's first spawn costs tbb_first_spawn more, once (its thread's first "
    "tbbmalloc heap)",
    "[sim][arrival]") {
  // split -> (a, b, c, d), and d -> (e, f), on oneTBB with one worker on one
  // CPU. The worker's first task_group::run (a's) costs tbb_first_spawn more,
  // so b, c and d are handed over that much later; it then runs d first
  // (LIFO), whose spawns of e and f cost tbb_spawn alone.
  Workload w = split_graph(4, 100us);
  w.tasks[4].first_succ = static_cast<std::uint32_t>(w.successors.size());
  w.tasks[4].succ_count = 2;
  for (std::uint32_t i = 5; i <= 6; ++i) {
    Task t;
    t.id = i;
    t.first_phase = i;
    t.phase_count = 1;
    t.pred_count = 1;
    w.phases.push_back({PhaseKind::cpu, 0, 100us, Duration{0}});
    w.tasks.push_back(t);
    w.successors.push_back(i);
    w.node_ids.push_back(std::string(1, char('a' + i - 1)));
  }
  MachineProfile m = zero_machine(1);
  m.tbb_spawn = 70ns;
  m.tbb_first_spawn = 40us;
  Scenario s = pool_scenario(m, 1);
  s.backend.kind = BackendKind::tbb;
  const RunResult r = sim::simulate(s, w);
  const auto lag = [&](std::uint32_t i) { return r.records[i].submit - r.records[i].intended; };
  CHECK(lag(1) == Duration{0});
  for (std::uint32_t k = 1; k < 4; ++k) CHECK(lag(1 + k) == k * 70ns + 40us);
  REQUIRE(r.records[5].intended == r.records[4].end);
  CHECK(lag(5) == Duration{0});
  CHECK(lag(6) == 70ns);
  // Our own work stealing has no such cost.
  s.backend.kind = BackendKind::work_stealing;
  const RunResult ours = sim::simulate(s, w);
  for (std::uint32_t i = 1; i <= 6; ++i) CHECK(ours.records[i].submit == ours.records[i].intended);
}

TEST_CASE(
    "arrival: glibc's condition variable (cv_quiesce) makes the submitter wait for a worker it "
    "woke to run, and only then",
    "[sim][arrival][mechanism]") {
  // Four workers on two CPUs (the quota scenario's shape on a zero-cost
  // machine with 3 ms slices and a 4 ms tick): woken workers often wait for
  // a CPU, and a worker that goes idle meanwhile joins the next group, so a
  // signal must first wait for the woken one (Kernel::CondVar). The
  // submitter waits there only with cv_quiesce, and is then later.
  const Workload w = poisson(11, 3000, 1000, 1ms, true);
  MachineProfile m = zero_machine(2, 3ms, 4ms);
  const RunResult off = sim::simulate(pool_scenario(m, 4), w);
  m.cv_quiesce = 1;
  const RunResult on = sim::simulate(pool_scenario(m, 4), w);
  CHECK(off.extra.at("cv_quiesce_waits") == 0);
  CHECK(on.extra.at("cv_quiesce_waits") > 20);
  // Each such wait is a voluntary switch of the submitter's.
  CHECK(on.counters.switches_voluntary > off.counters.switches_voluntary);
  const Metrics x = compute_metrics(off), y = compute_metrics(on);
  CHECK(y[Metric::submit_lag_mean] > x[Metric::submit_lag_mean]);
  CHECK(y[Metric::queue_wait_mean] > x[Metric::queue_wait_mean]);
  for (std::size_t i = 0; i < w.tasks.size(); ++i)
    REQUIRE(on.records[i].submit >= w.tasks[i].arrival);
}

TEST_CASE(
    "arrival: the host holds back a share of the timers that wake an idle CPU "
    "(timer_stall_share), seeded",
    "[sim][arrival][mechanism]") {
  // One worker, 2,000 arrivals 5 ms apart of 10 us tasks on two CPUs: the
  // submitter's CPU is idle whenever its timer fires. With a tenth of those
  // timers held back by 1 ms on average (median 0.7 ms), about 200 are, and the
  // mean lag grows by about their share times their mean.
  std::vector<Duration> arrivals;
  for (int i = 0; i < 2000; ++i) arrivals.push_back(i * 5ms);
  const Workload w =
      make_workload(ArrivalKind::poisson, arrivals, std::vector<Duration>(2000, 10us));
  MachineProfile m = zero_machine(2);
  const RunResult off = sim::simulate(pool_scenario(m, 1), w);
  m.timer_stall_share = 0.1;
  m.timer_stall_mean = 1ms;
  m.timer_stall_median = 700us;
  const RunResult on = sim::simulate(pool_scenario(m, 1), w);
  const RunResult again = sim::simulate(pool_scenario(m, 1), w);
  CHECK(off.extra.count("timer_stalls") == 0);
  const double stalls = on.extra.at("timer_stalls");
  CHECK(stalls > 150);
  CHECK(stalls < 250);
  const Metrics x = compute_metrics(off), y = compute_metrics(on);
  CHECK(x[Metric::submit_lag_mean] == 0);
  const double expected = stalls / 2000 * 1e-3;  // each held back by 1 ms on average
  CHECK(y[Metric::submit_lag_mean] == Approx(expected).epsilon(0.3));
  CHECK(y[Metric::submit_lag_p99] > 1e-3);
  // The same seed, the same stalls.
  for (std::size_t i = 0; i < w.tasks.size(); ++i)
    REQUIRE(again.records[i].submit == on.records[i].submit);
}
