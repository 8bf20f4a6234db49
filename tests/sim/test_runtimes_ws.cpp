// Runtimes of issue 4, thread-based: work stealing, oneTBB model, injecting
// pool, asio-pool, and the makespan bound of task graphs on every runtime.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "runtime_fixtures.hpp"

using namespace poolsim;
using namespace poolsim::test;
using namespace std::chrono_literals;

namespace {

// A root that releases n children (a star: each child's only predecessor is
// the root), every task `work` of CPU.
Workload star(int n, Duration root, Duration work) {
  Workload w = phased(n + 1, [&](int i) { return std::vector<Phase>{cpu(i == 0 ? root : work)}; });
  w.graph = true;
  for (int i = 1; i <= n; ++i) {
    w.successors.push_back(static_cast<std::uint32_t>(i));
    w.tasks[static_cast<std::size_t>(i)].pred_count = 1;
  }
  w.tasks[0].succ_count = static_cast<std::uint32_t>(n);
  return w;
}

// The first instant the live OS thread count reached `n`.
Duration first_reaching(const RunResult& r, int n) {
  for (const Sample& s : r.threads_series)
    if (s.value >= n) return s.t;
  return Duration::max();
}
}  // namespace

TEST_CASE("work_stealing.fork_join: near ideal speedup", "[runtime][ws]") {
  for (const MachineProfile& m : {zero_machine(4), costly_machine(4)}) {
    const Scenario one = backend_scenario(m, BackendKind::work_stealing, 1);
    const Scenario four = backend_scenario(m, BackendKind::work_stealing, 4);
    // 256 leaves of 2 ms, 1 us forks and joins: 512 ms of work.
    const Workload w = fork_join(four, 8, 2, 2ms, 1us);
    const RunResult r1 = sim::simulate(one, w);
    const RunResult r4 = sim::simulate(four, w);
    CHECK(count_outcome(r4, TaskOutcome::completed) == static_cast<int>(w.tasks.size()));
    const double speedup = makespan(r1) / makespan(r4);
    INFO(m.name << ": T1 " << makespan(r1) << " s, T4 " << makespan(r4) << " s");
    CHECK(speedup > 3.8);
    CHECK(speedup <= 4.0 + 1e-9);
    CHECK(extra(r4, "steals") > 0);
  }
}

TEST_CASE("work_stealing.spawned: run on spawner unless stolen", "[runtime][ws]") {
  // One worker: every child runs on the root's worker, newest first (LIFO).
  {
    const RunResult r = sim::simulate(
        backend_scenario(zero_machine(4), BackendKind::work_stealing, 1), star(8, 1ms, 1ms));
    for (std::size_t i = 1; i <= 8; ++i) CHECK(r.records[i].worker == r.records[0].worker);
    for (std::size_t i = 1; i < 8; ++i) CHECK(r.records[i].start > r.records[i + 1].start);
    CHECK(extra(r, "steals") == 0);
    CHECK(extra(r, "local_pops") == 8);
  }
  // Four workers: a child runs elsewhere exactly when it was stolen, and the
  // thieves take the oldest children (the far end of the deque).
  for (const MachineProfile& m : {zero_machine(4), costly_machine(4)}) {
    const RunResult r =
        sim::simulate(backend_scenario(m, BackendKind::work_stealing, 4), star(40, 1ms, 1ms));
    int elsewhere = 0;
    for (std::size_t i = 1; i <= 40; ++i) elsewhere += r.records[i].worker != r.records[0].worker;
    CHECK(elsewhere == extra(r, "steals"));
    CHECK(elsewhere > 0);
    CHECK(elsewhere < 40);
    CHECK(r.records[1].worker != r.records[0].worker);   // oldest: stolen
    CHECK(r.records[40].worker == r.records[0].worker);  // newest: the owner's
    CHECK(extra(r, "local_pops") + extra(r, "steals") + extra(r, "injection_pops") == 41);
  }
}

TEST_CASE("work_stealing.idle: spins then parks", "[runtime][ws]") {
  // Four workers, one task: three find nothing, spin (computed CPU), park.
  MachineProfile m = costly_machine(4);
  m.queue_handover = 1us;
  const RunResult r =
      sim::simulate(backend_scenario(m, BackendKind::work_stealing, 4), batch(1, 5ms));
  CHECK(extra(r, "parks") >= 3);
  CHECK(extra(r, "failed_steals") >= 3 * 3 * 4);  // 3 victims, 4 rounds, 3 idle workers
  CHECK(extra(r, "spin_rounds") >= 3 * 3);
  // A failed round looks into threads + 1 queues, queue_handover each: the
  // spinning is CPU time of the run, on top of the task's 5 ms.
  const double round = to_seconds(5 * m.queue_handover);
  CHECK(to_seconds(r.counters.cpu_time) > 0.005 + 3 * 3 * round * 0.99);
  // And no more than a few rounds each: the real twin's pause is tiny.
  CHECK(to_seconds(r.counters.cpu_time) < 0.005 + 0.0005);
}

TEST_CASE("work_stealing: deterministic", "[runtime][ws]") {
  const Scenario s = backend_scenario(costly_machine(4), BackendKind::work_stealing, 4);
  const Workload w = fork_join(s, 6, 3, 1ms, 10us);
  const RunResult a = sim::simulate(s, w), b = sim::simulate(s, w);
  CHECK(a.extra == b.extra);
  for (std::size_t i = 0; i < a.records.size(); ++i) {
    CHECK(a.records[i].end == b.records[i].end);
    CHECK(a.records[i].worker == b.records[i].worker);
  }
}

TEST_CASE("tbb.workers: chain reaction start", "[runtime][tbb]") {
  // thread_create = 1 ms, nothing else costs. Flat start (ours): the
  // submitter creates 8 workers one after another: 9 threads at 8 ms. oneTBB:
  // the submitter creates two, each new worker two more: 9 threads at 4 ms.
  MachineProfile m = zero_machine(16);
  m.thread_create = 1ms;
  const RunResult ws =
      sim::simulate(backend_scenario(m, BackendKind::work_stealing, 8), batch(16, 10ms));
  const RunResult tbb = sim::simulate(backend_scenario(m, BackendKind::tbb, 8), batch(16, 10ms));
  CHECK(first_reaching(ws, 9) == Duration(8ms));
  CHECK(first_reaching(tbb, 9) == Duration(4ms));
  CHECK(ws.counters.threads_peak == 9);
  CHECK(tbb.counters.threads_peak == 9);
  CHECK(count_outcome(tbb, TaskOutcome::completed) == 16);
}

TEST_CASE("tbb.steal: one random victim per round", "[runtime][tbb]") {
  // Spawned children are stolen by idle workers; a round tries one victim,
  // so failed steals per round are at most one.
  const Scenario s = backend_scenario(zero_machine(8), BackendKind::tbb, 8);
  const RunResult r = sim::simulate(s, star(64, 1ms, 1ms));
  CHECK(count_outcome(r, TaskOutcome::completed) == 65);
  CHECK(extra(r, "steals") > 0);
  CHECK(extra(r, "failed_steals") <= extra(r, "spin_rounds") + extra(r, "parks") + 8 * 65);
  CHECK(makespan(r) < 0.001 + 64 * 0.001 / 8 * 1.5);
}

namespace {
// Instants after t = 100 ms at which the live-thread count went up.
std::vector<Duration> growth_steps(const RunResult& r) {
  std::vector<Duration> steps;
  int last = 0;
  for (const Sample& p : r.threads_series) {
    if (p.value > last && p.t > Duration(100ms)) steps.push_back(p.t);
    last = p.value;
  }
  return steps;
}
}  // namespace

TEST_CASE("injecting_pool.starvation: grows step by step", "[runtime][inject]") {
  // The case: 100 tasks of a 1 s blocking wait on a 2-thread pool,
  // gate every 500 ms. The queue's head has always waited since t = 0, so
  // every gate check injects one worker until the queue is empty: a
  // staircase of one thread per period.
  Scenario s = backend_scenario(costly_machine(4), BackendKind::injecting_pool, 2);
  s.backend.injection_delay = 500ms;
  const Workload w = phased(100, [](int) { return std::vector<Phase>{wait(1s)}; });
  const RunResult r = sim::simulate(s, w);
  CHECK(count_outcome(r, TaskOutcome::completed) == 100);
  const std::vector<Duration> steps = growth_steps(r);
  const int injections = static_cast<int>(extra(r, "injections"));
  CHECK(static_cast<int>(steps.size()) == injections);
  CHECK(injections >= 12);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    // The k-th injection at the k-th gate check: k periods plus the gate's
    // accumulated timer slack and create costs (under 1 ms per period).
    const double t = to_seconds(steps[i]);
    CHECK(t == Approx(0.5 * static_cast<double>(i + 1)).margin(0.001 * static_cast<double>(i + 1)));
  }
  // The latency profile is a staircase: each new worker starts a batch of
  // completions one second after it was injected.
  std::vector<Duration> ends;
  for (const TaskRecord& t : r.records) ends.push_back(t.end);
  std::sort(ends.begin(), ends.end());
  CHECK(ends[1] < Duration(1010ms));   // the two initial workers' first tasks
  CHECK(ends[2] >= Duration(1500ms));  // then the first injected worker's
  // Without injection 2 threads need 50 s; the staircase ends far sooner.
  CHECK(makespan(r) < 15.0);
  CHECK(extra(r, "workers_peak") == 2 + injections);
  CHECK(r.counters.threads_peak == 4 + injections);  // + submitter and gate
}

TEST_CASE("injecting_pool.progress: no injection while work keeps up", "[runtime][inject]") {
  // Tasks that the pool serves as they come never wait a full period in the
  // queue: no injection, whatever the total work.
  Scenario s = backend_scenario(costly_machine(4), BackendKind::injecting_pool, 2);
  s.backend.injection_delay = 500ms;
  std::vector<Duration> arrivals, work;
  for (int i = 0; i < 200; ++i) {
    arrivals.push_back(Duration(20ms) * i);
    work.push_back(0ms);
  }
  Workload w = make_workload(ArrivalKind::periodic, arrivals, work);
  for (std::size_t i = 0; i < w.phases.size(); ++i) w.phases[i] = wait(30ms);
  const RunResult r = sim::simulate(s, w);
  CHECK(count_outcome(r, TaskOutcome::completed) == 200);
  CHECK(extra(r, "injections") == 0);
}

TEST_CASE("injecting_pool.idle: workers retire after timeout", "[runtime][inject]") {
  // A burst that makes the pool grow, then nothing for 60 s, then a task:
  // the injected workers retire 20 s after they went idle, down to the
  // minimum.
  Scenario s = backend_scenario(zero_machine(4), BackendKind::injecting_pool, 1);
  s.backend.injection_delay = 100ms;
  std::vector<Duration> arrivals(20, 0ms), work(20, 0ms);
  arrivals.push_back(60050ms);  // off the gate's 100 ms grid
  work.push_back(1ms);
  Workload w = make_workload(ArrivalKind::periodic, arrivals, work);
  for (std::size_t i = 0; i < 20; ++i) w.phases[i] = wait(1s);
  const RunResult r = sim::simulate(s, w);
  CHECK(count_outcome(r, TaskOutcome::completed) == 21);
  CHECK(extra(r, "injections") >= 2);
  CHECK(extra(r, "threads_retired") == extra(r, "injections"));
  CHECK(r.threads_series.back().value == 3);  // submitter, gate, one worker
}

TEST_CASE("asio_pool: fifo fixed pool", "[runtime][asio]") {
  const Scenario s = backend_scenario(zero_machine(4), BackendKind::asio_pool, 2);
  const RunResult r = sim::simulate(s, batch(10, 10ms));
  CHECK(count_outcome(r, TaskOutcome::completed) == 10);
  CHECK(r.counters.threads_peak == 3);
  CHECK(makespan(r) == Approx(0.05));
  for (std::size_t i = 2; i < 10; ++i) CHECK(r.records[i].start >= r.records[i - 2].end);
  for (std::size_t i = 1; i < 10; ++i) CHECK(r.records[i].start >= r.records[i - 1].start);
}

TEST_CASE(
    "asio_pool: the first submit makes every thread and waits at their rendezvous before its "
    "hand-over",
    "[runtime][asio]") {
  // The real twin constructs asio::thread_pool at the first hand-over and
  // waits until each thread has registered (real/asio_pool.cpp); the
  // ThreadPoolExecutor pool makes one thread, with the task as its first.
  MachineProfile m = zero_machine(4);
  m.thread_create = 100us;
  m.thread_start = 40us;
  const RunResult asio =
      sim::simulate(backend_scenario(m, BackendKind::asio_pool, 3), batch(1, 1ms));
  const RunResult pool = sim::simulate(backend_scenario(m, BackendKind::pool, 3), batch(1, 1ms));
  REQUIRE(asio.records.size() == 1);
  // Three creations on the submitter, then the last thread's start before
  // anyone leaves the rendezvous; the task waits for all of it.
  CHECK(asio.records[0].start >= 3 * 100us + 40us);
  CHECK(asio.counters.threads_peak == 4);
  CHECK(pool.records[0].start == 100us + 40us);
  CHECK(pool.counters.threads_peak == 2);
  // The submitter slept at the rendezvous, and so did the threads that
  // arrived before the last: voluntary switches the pool's start does not
  // have.
  CHECK(asio.counters.switches_voluntary > pool.counters.switches_voluntary);
}

TEST_CASE("graph.makespan: never below bound and reaches it when wide", "[runtime][graph]") {
  // Wide: 3 x 243 leaves; narrow: a binary tree of depth 3 (path-bound).
  const Scenario base = pool_scenario(zero_machine(4), 4);
  const Workload wide = fork_join(base, 5, 3, 1ms, 0ns);
  const Workload narrow = fork_join(base, 3, 2, 5ms, 2ms);
  for (BackendKind kind : kAllBackends) {
    for (const MachineProfile& m : {zero_machine(4), costly_machine(4)}) {
      const Scenario s = backend_scenario(m, kind, 4);
      for (const Workload* w : {&wide, &narrow}) {
        const RunResult r = sim::simulate(s, *w);
        INFO(to_string(kind) << " on " << m.name);
        CHECK(count_outcome(r, TaskOutcome::completed) == static_cast<int>(w->tasks.size()));
        const double bound = extra(r, "bound_makespan");
        CHECK(bound ==
              Approx(std::max(to_seconds(w->total_work) / 4, to_seconds(w->critical_path))));
        CHECK(makespan(r) >= bound * (1 - 1e-9));
      }
    }
  }
  for (BackendKind kind : {BackendKind::pool, BackendKind::work_stealing, BackendKind::tbb}) {
    const RunResult r = sim::simulate(backend_scenario(zero_machine(4), kind, 4), wide);
    INFO(to_string(kind));
    CHECK(makespan(r) <= 1.05 * extra(r, "bound_makespan"));
  }
}

TEST_CASE("tbb.memory: tbb_arena once, tbb_worker per further worker, tbb_task per queued task",
          "[runtime][ws]") {
  MachineProfile m = zero_machine(1);
  m.stack_touch = 8 * 1024;
  m.runtime_touch = 12 * 1024;  // not oneTBB's: tbb_arena replaces it
  m.tbb_arena = 296 * 1024;
  m.tbb_worker = 24 * 1024;
  m.tbb_task = 272;
  // On one CPU the submitter enqueues the whole batch before a worker runs.
  const RunResult r = sim::simulate(backend_scenario(m, BackendKind::tbb, 2), batch(100, 1ms));
  const Bytes base = 2 * 8 * 1024 + 296 * 1024 + 24 * 1024;
  CHECK(r.counters.memory_peak >= base + 95 * 272);
  CHECK(r.counters.memory_peak <= base + 100 * 272);
  // Our work-stealing pool holds no task objects: runtime_touch and stacks.
  const RunResult ws =
      sim::simulate(backend_scenario(m, BackendKind::work_stealing, 2), batch(100, 1ms));
  CHECK(ws.counters.memory_peak == 2 * 8 * 1024 + 12 * 1024);
}

TEST_CASE(
    "work_stealing.memory: its workers touch steal_stack in total, worker_stack at most each, "
    "oneTBB's none (tbb_arena and tbb_worker hold it)",
    "[runtime][ws]") {
  MachineProfile m = zero_machine(2);
  m.stack_touch = 8 * 1024;
  m.runtime_touch = 4 * 1024;
  m.worker_stack = 4 * 1024;
  m.steal_stack = 8 * 1024;
  m.pool_stack = m.asio_stack = m.loop_stack = 64 * 1024;
  m.tbb_arena = 296 * 1024;
  const RunResult ws =
      sim::simulate(backend_scenario(m, BackendKind::work_stealing, 3), batch(30, 1ms));
  CHECK(ws.counters.memory_peak == 3 * 8 * 1024 + 4 * 1024 + 8 * 1024);
  const RunResult tbb = sim::simulate(backend_scenario(m, BackendKind::tbb, 1), batch(30, 1ms));
  CHECK(tbb.counters.memory_peak == 8 * 1024 + 296 * 1024);
  // asio::thread_pool: its own total, not the pool's.
  m.asio_stack = 4 * 1024;
  const RunResult asio =
      sim::simulate(backend_scenario(m, BackendKind::asio_pool, 3), batch(30, 1ms));
  CHECK(asio.counters.memory_peak == 3 * 8 * 1024 + 4 * 1024 + 4 * 1024);
}

TEST_CASE("tbb.idle: spinning workers that share a CPU yield it to each other", "[runtime][tbb]") {
  // stealing_loop_backoff: 2 (slots + 1) pauses, then a sched_yield with
  // every pause. Three idle workers on one CPU hand it round (involuntary
  // switches); on three CPUs each yield finds nobody and costs yield_cost.
  auto run = [](int cpus) {
    MachineProfile m = zero_machine(cpus);
    m.yield_cost = 1us;
    m.tbb_pause = 1us;
    // A second task 5 ms later: the run (which ends with the last task)
    // covers the idle spell after the first.
    return sim::simulate(
        backend_scenario(m, BackendKind::tbb, 3),
        make_workload(ArrivalKind::periodic, {Duration{0}, Duration{5ms}}, {10us, 10us}));
  };
  const RunResult shared = run(1), apart = run(3);
  CHECK(shared.counters.switches_involuntary >= 100);
  CHECK(apart.counters.switches_involuntary <= 5);
  // About (2 * 4 + 100) rounds of pause + yield per idle worker, on the
  // CPU's clock: ~2 x 100 us each when alone.
  CHECK(to_seconds(apart.counters.cpu_time) > 2 * 100 * 2e-6);
  CHECK(count_outcome(shared, TaskOutcome::completed) == 2);
}

TEST_CASE("tbb.wake: work arriving in an empty arena wakes every worker, in a full one nobody",
          "[runtime][tbb]") {
  // Tasks 10 ms apart: the arena is empty at each arrival, so oneTBB wakes
  // all four workers (advertise_new_work) and three go back to sleep; our
  // work-stealing pool wakes one.
  MachineProfile m = zero_machine(4);
  m.yield_cost = 1us;
  m.tbb_pause = 1us;
  std::vector<Duration> at;
  for (int i = 0; i < 20; ++i) at.push_back(Duration{10ms * i});
  const Workload w = make_workload(ArrivalKind::periodic, at, std::vector<Duration>(20, 100us));
  const RunResult tbb = sim::simulate(backend_scenario(m, BackendKind::tbb, 4), w);
  const RunResult ws = sim::simulate(backend_scenario(m, BackendKind::work_stealing, 4), w);
  CHECK(extra(tbb, "parks") >= 3.5 * 20);
  CHECK(extra(ws, "parks") <= 1.5 * 20 + 4);
  // Back to back (a batch), the arena stays full: the first submit wakes
  // the workers, the other 19 wake nobody.
  const RunResult full = sim::simulate(backend_scenario(m, BackendKind::tbb, 4), batch(20, 100us));
  CHECK(extra(full, "parks") <= 8);
  CHECK(count_outcome(full, TaskOutcome::completed) == 20);
}
