// Runtimes: ThreadPoolExecutor semantics of the pool, thread-per-task,
// closed clients and graphs through the driver.
#include <algorithm>
#include <catch2/catch.hpp>

#include "models/scenario_loader.hpp"
#include "models/workload.hpp"
#include "sim_fixtures.hpp"

using namespace poolsim;
using namespace poolsim::test;
using namespace std::chrono_literals;

namespace {
int count(const RunResult& r, TaskOutcome o) {
  return static_cast<int>(std::count_if(r.records.begin(), r.records.end(),
                                        [o](const TaskRecord& t) { return t.outcome == o; }));
}
}  // namespace

TEST_CASE("pool.reject: abort with bounded queue", "[runtime]") {
  Scenario s = pool_scenario(zero_machine(2), 1);
  s.backend.queue = 2;
  const RunResult r = sim::simulate(s, batch(10, 10ms));
  CHECK(count(r, TaskOutcome::completed) == 3);  // one running, two queued
  CHECK(count(r, TaskOutcome::rejected) == 7);
  CHECK(makespan(r) == Approx(0.03));
}

TEST_CASE("pool.graph: rejected successors end the run", "[runtime]") {
  // docs/runtimes.md's example: the pool refuses two tasks; the join, which
  // depends on them, is not_run and the run ends with the last completion,
  // not when the idle extra thread's 1 s keep-alive would retire it.
  const Scenario s = load_scenario_text(
      "name: reject-graph\nseed: 1\nmachine: default\n"
      "workload:\n  graph:\n    nodes:\n"
      "      - {id: a, task: [{wait: 10ms}]}\n      - {id: b, task: [{wait: 10ms}]}\n"
      "      - {id: c, task: [{wait: 10ms}]}\n      - {id: x, task: [{wait: 10ms}]}\n"
      "      - {id: y, task: [{cpu: 1ms}], after: [x]}\n"
      "      - {id: join, task: [{cpu: 1ms}], after: [a, b, c, y]}\n"
      "backend: {kind: pool, threads: 1, max_threads: 2, queue: 1, reject: abort, keep_alive: "
      "1s}\n",
      "<test>");
  const RunResult r = sim::simulate(s, generate_workload(s));
  CHECK(count(r, TaskOutcome::completed) == 3);
  CHECK(count(r, TaskOutcome::rejected) == 2);
  CHECK(count(r, TaskOutcome::not_run) == 1);
  Duration last_end{0};
  for (const TaskRecord& t : r.records) last_end = std::max(last_end, t.end);
  // + the new worker's arena_create (35 us), the mapping of its stack
  // (stack_map, 12 us: the stack cache of a new process is empty) and its
  // start on it (thread_start 5 us + stack_fault 4 us), and the submitter's
  // cache_refill (2 us) at t = 0
  CHECK(last_end == Duration(20338140));
  REQUIRE_FALSE(r.threads_series.empty());
  CHECK(r.threads_series.back().t <= last_end);  // no retirement after the end
  CHECK(r.extra.at("threads_retired") == 0);
}

TEST_CASE("pool.grow: to max when queue full", "[runtime]") {
  Scenario s = pool_scenario(zero_machine(4), 1);
  s.backend.max_threads = 3;
  s.backend.queue = 2;
  const RunResult r = sim::simulate(s, batch(10, 10ms));
  CHECK(count(r, TaskOutcome::completed) == 5);  // core 1 + queue 2 + extra 2
  CHECK(count(r, TaskOutcome::rejected) == 5);
  CHECK(r.counters.threads_peak == 4);  // three workers + the submitter
}

TEST_CASE("pool.reject: caller runs on submitter", "[runtime]") {
  Scenario s = pool_scenario(zero_machine(2), 1);
  s.backend.queue = 1;
  s.backend.reject = RejectPolicy::caller_runs;
  const RunResult r = sim::simulate(s, batch(4, 10ms));
  CHECK(count(r, TaskOutcome::completed) == 4);
  CHECK(r.records[2].worker == 0);  // the submitter ran it
  CHECK(r.records[2].start == Duration(0));
  // Task 3 is submitted after the caller-run task, at 10 ms; the worker
  // finishes task 0 at the same instant and the submitter comes first, so
  // the queue still holds task 1 and task 3 runs on the caller too.
  CHECK(r.records[3].submit == Duration(10ms));
  CHECK(r.extra.at("caller_runs") == 2);
  CHECK(r.records[3].worker == 0);
}

TEST_CASE("pool.reject: discard oldest drops head", "[runtime]") {
  Scenario s = pool_scenario(zero_machine(2), 1);
  s.backend.queue = 1;
  s.backend.reject = RejectPolicy::discard_oldest;
  const RunResult r = sim::simulate(s, batch(4, 10ms));
  CHECK(r.records[1].outcome == TaskOutcome::rejected);
  CHECK(r.records[2].outcome == TaskOutcome::rejected);
  CHECK(r.records[3].outcome == TaskOutcome::completed);
}

TEST_CASE("pool.keep_alive: extra thread retires", "[runtime]") {
  Scenario s = pool_scenario(zero_machine(4), 1);
  s.backend.max_threads = 2;
  s.backend.queue = 1;
  s.backend.keep_alive = 50ms;
  const Workload w =
      make_workload(ArrivalKind::periodic, {0ms, 0ms, 0ms, 300ms}, {10ms, 10ms, 10ms, 10ms});
  const RunResult r = sim::simulate(s, w);
  CHECK(count(r, TaskOutcome::completed) == 4);
  // 3 threads live (submitter, core, extra) until the extra worker retires
  // keep_alive after it went idle at 10 ms.
  bool retired = false;
  for (const Sample& p : r.threads_series)
    if (p.t == Duration(60ms) && p.value == 2) retired = true;
  CHECK(retired);
}

TEST_CASE("pool: idle workers woken by submit", "[runtime]") {
  // Periodic arrivals slower than the service: the single worker blocks on
  // the queue between tasks and each submit wakes it (a voluntary switch per
  // task), and no task waits in the queue.
  const Workload w =
      make_workload(ArrivalKind::periodic, {0ms, 5ms, 10ms, 15ms}, {1ms, 1ms, 1ms, 1ms});
  const RunResult r = sim::simulate(pool_scenario(zero_machine(2), 1), w);
  CHECK(mean_wait(r) == 0);
  CHECK(r.counters.switches_voluntary >= 4 + 3);
}

TEST_CASE("thread_per_task: one thread per task", "[runtime]") {
  const RunResult r = sim::simulate(tpt_scenario(zero_machine(4)), batch(20, 1ms));
  std::vector<std::uint32_t> workers;
  for (const TaskRecord& t : r.records) workers.push_back(t.worker);
  std::sort(workers.begin(), workers.end());
  CHECK(std::unique(workers.begin(), workers.end()) == workers.end());
  CHECK(makespan(r) == Approx(0.005));
}

TEST_CASE("driver.closed: clients issue after completion and think", "[runtime]") {
  // Two clients, think 1 ms, service 2 ms, duration 20 ms, one CPU per
  // client: each cycle is 3 ms, issues at 1, 4, 7, ..., 19 ms: 7 per client.
  const Workload w = closed_clients(2, 20, 20ms, 1ms, 2ms);
  const RunResult r = sim::simulate(pool_scenario(zero_machine(3), 2), w);
  CHECK(count(r, TaskOutcome::completed) == 14);
  CHECK(count(r, TaskOutcome::not_run) == 26);
  // Client 0 owns tasks 0, 2, 4, ... (closed_task_id): its second is task
  // 2, its seventh task 12.
  CHECK(r.records[2].submit == Duration(4ms));
  CHECK(r.records[12].submit == Duration(19ms));
}

TEST_CASE("driver.graph: releases successors", "[runtime]") {
  // split (1 ms) -> a, b (20 ms each, in parallel on 2 CPUs) -> merge (1 ms).
  Workload w;
  w.arrival = ArrivalKind::batch;
  w.graph = true;
  const Duration work[] = {1ms, 20ms, 20ms, 1ms};
  const std::uint32_t preds[] = {0, 1, 1, 2};
  w.successors = {1, 2, 3, 3};
  const std::uint32_t first_succ[] = {0, 2, 3, 4}, succ_count[] = {2, 1, 1, 0};
  for (std::uint32_t i = 0; i < 4; ++i) {
    Task t;
    t.id = i;
    t.first_phase = i;
    t.phase_count = 1;
    t.pred_count = preds[i];
    t.first_succ = first_succ[i];
    t.succ_count = succ_count[i];
    w.tasks.push_back(t);
    w.phases.push_back({PhaseKind::cpu, 0, work[i], 0ns});
  }
  const RunResult r = sim::simulate(pool_scenario(zero_machine(3), 2), w);
  CHECK(count(r, TaskOutcome::completed) == 4);
  CHECK(makespan(r) == Approx(0.022));
  CHECK(r.records[3].start == Duration(21ms));
}
