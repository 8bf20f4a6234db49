// test_conformance.cpp: the runtime rules that both halves implement,
// checked on both with one body each (conformance.hpp): reject policies,
// pinning, the injection staircase, retirement after keep-alive, completion
// after a rejection, and max_threads.
#include <algorithm>
#include <chrono>

#include "conformance.hpp"

namespace poolsim::conformance {
namespace {

using namespace std::chrono_literals;

// ---- reject policies ---------------------------------------------------------
// Six tasks at t = 0 on {threads: 1, max_threads: 2, queue: 1}: task 0 starts
// the core thread, task 1 is queued, task 2 starts the extra thread, tasks
// 3-5 meet a full pool. Tasks 0-2 wait 150 ms, 3-5 wait 5 ms, so every
// refusal happens while the first three are still waiting.
Workload reject_workload() {
  return phased(6, [](int i) { return std::vector<Phase>{wait(i < 3 ? 150ms : 5ms)}; });
}

Scenario reject_scenario(const char* policy) {
  return scenario(
      std::string("backend: {kind: pool, threads: 1, max_threads: 2, queue: 1, reject: ") + policy +
      "}\n");
}

void reject_drop(const Twin& twin, const char* policy) {
  const RunResult r = twin.run(reject_scenario(policy), reject_workload());
  twin.expect("completed", count(r, TaskOutcome::completed), 3);
  twin.expect("rejected", count(r, TaskOutcome::rejected), 3);
  twin.expect("rejections", extra(r, "rejections"), 3);
  twin.expect("caller_runs", extra(r, "caller_runs"), 0);
  for (int i = 3; i < 6; ++i)
    CHECK(r.records[static_cast<std::size_t>(i)].outcome == TaskOutcome::rejected);
  twin.expect("threads_started", extra(r, "threads_started"), 2);
}

void reject_abort(const Twin& twin) { reject_drop(twin, "abort"); }
void reject_discard(const Twin& twin) { reject_drop(twin, "discard"); }

void reject_caller_runs(const Twin& twin) {
  const RunResult r = twin.run(reject_scenario("caller-runs"), reject_workload());
  twin.expect("completed", count(r, TaskOutcome::completed), 6);
  twin.expect("rejected", count(r, TaskOutcome::rejected), 0);
  twin.expect("rejections", extra(r, "rejections"), 3);
  twin.expect("caller_runs", extra(r, "caller_runs"), 3);
  // The submitter (thread 0 in both halves) ran the refused tasks.
  for (int i = 3; i < 6; ++i) CHECK(r.records[static_cast<std::size_t>(i)].worker == 0);
}

void reject_discard_oldest(const Twin& twin) {
  const RunResult r = twin.run(reject_scenario("discard-oldest"), reject_workload());
  // Each refusal drops the queue's head (task 1, then 3, then 4) and queues
  // the newcomer: 0, 2 and 5 complete.
  twin.expect("completed", count(r, TaskOutcome::completed), 3);
  twin.expect("rejections", extra(r, "rejections"), 3);
  for (int i : {1, 3, 4})
    CHECK(r.records[static_cast<std::size_t>(i)].outcome == TaskOutcome::rejected);
  CHECK(r.records[5].outcome == TaskOutcome::completed);
}

CONFORMANCE_CASE("pool.reject_abort", "refused tasks are rejected, counted once each", "[pool]",
                 reject_abort)
CONFORMANCE_CASE("pool.reject_discard", "refused tasks are dropped as rejected", "[pool]",
                 reject_discard)
CONFORMANCE_CASE("pool.reject_caller_runs", "the submitter runs what the pool refuses", "[pool]",
                 reject_caller_runs)
CONFORMANCE_CASE("pool.reject_discard_oldest", "the queue's head makes room for the newcomer",
                 "[pool]", reject_discard_oldest)

// ---- pinning -----------------------------------------------------------------
// Two tasks on one carrier (or loop). A plain wait frees it: the two waits
// overlap. A wait inside a lock blocks it (the virtual thread is pinned):
// the tasks run one after the other.
bool overlap(const RunResult& r) {
  const TaskRecord& a = r.records[0];
  const TaskRecord& b = r.records[1];
  return a.start < b.end && b.start < a.end;
}

void pinning(const Twin& twin, const char* backend, const char* blocked_counter,
             const char* released_counter) {
  const Scenario s = scenario(std::string("backend: {kind: ") + backend + "}\n");
  Scenario one = s;
  one.backend.carriers = 1;
  one.backend.loops = 1;
  const RunResult released =
      twin.run(one, phased(2, [](int) { return std::vector<Phase>{wait(60ms)}; }));
  const RunResult pinned = twin.run(
      one, phased(
               2,
               [](int i) {
                 return std::vector<Phase>{locked(static_cast<std::uint32_t>(i), 1ms, 60ms)};
               },
               2));
  twin.expect("completed (released)", count(released, TaskOutcome::completed), 2);
  twin.expect("completed (pinned)", count(pinned, TaskOutcome::completed), 2);
  twin.expect(released_counter, extra(released, released_counter), 2);
  twin.expect(blocked_counter, extra(pinned, blocked_counter), 2);
  CHECK(overlap(released));
  CHECK_FALSE(overlap(pinned));
  // The makespan's shape: two waits one after the other.
  const auto end = [](const RunResult& r) { return std::max(r.records[0].end, r.records[1].end); };
  CHECK(end(pinned) >= 120ms);
  CHECK(end(pinned) > end(released));
}

void pinning_virtual_threads(const Twin& twin) {
  pinning(twin, "virtual-threads", "pins", "unmounts");
}
void pinning_event_loop(const Twin& twin) {
  pinning(twin, "event-loop", "blocking_waits", "timers");
}

CONFORMANCE_CASE("virtual_threads.pinning", "a wait inside a lock pins the carrier",
                 "[virtual-threads]", pinning_virtual_threads)
CONFORMANCE_CASE("event_loop.pinning", "a wait inside a lock blocks the loop", "[event-loop]",
                 pinning_event_loop)

// ---- injection staircase -------------------------------------------------------
// Four 200 ms waits on {min_threads: 1, max_threads: 4, injection_delay:
// 20 ms}: the queue's head makes no progress, so the gate adds one worker
// per period until the queue is empty: three injections, the starts a
// staircase at least a period apart.
void injection_staircase(const Twin& twin) {
  const Scenario s = scenario(
      "backend: {kind: injecting-pool, min_threads: 1, max_threads: 4, injection_delay: 20ms}\n");
  const RunResult r = twin.run(s, phased(4, [](int) { return std::vector<Phase>{wait(200ms)}; }));
  twin.expect("completed", count(r, TaskOutcome::completed), 4);
  twin.expect("injections", extra(r, "injections"), 3);
  twin.expect("workers_peak", extra(r, "workers_peak"), 4);
  twin.expect("threads_peak", static_cast<double>(r.counters.threads_peak),
              6);  // + gate, submitter
  std::vector<Duration> starts;
  for (const TaskRecord& rec : r.records) starts.push_back(rec.start);
  std::sort(starts.begin(), starts.end());
  // One worker per gate period: consecutive starts a period apart. On the
  // real twin, the first worker (started before the run) can itself be late
  // on a loaded machine and start next to the first injected one, so one gap
  // may be short, and the others need only half a period.
  int stairs = 0;
  for (std::size_t i = 1; i < starts.size(); ++i)
    stairs += starts[i] - starts[i - 1] >= (twin.simulated() ? 20ms : 10ms) ? 1 : 0;
  twin.expect("gaps of a period between starts", stairs, 3, 1, 0);
}

CONFORMANCE_CASE("injecting_pool.staircase", "one thread per injection_delay while work waits",
                 "[injecting]", injection_staircase)

// ---- retire after keep-alive ------------------------------------------------------
// {threads: 1, max_threads: 3, queue: 1, keep_alive: 20ms}: task 0 starts
// the core thread, task 1 (150 ms) is queued, tasks 2 and 3 start two extra
// threads. At 30 ms one worker takes task 1; the other two idle past the
// keep-alive and retire while it runs.
void retire_after_keep_alive(const Twin& twin) {
  const Scenario s =
      scenario("backend: {kind: pool, threads: 1, max_threads: 3, queue: 1, keep_alive: 20ms}\n");
  const RunResult r =
      twin.run(s, phased(4, [](int i) { return std::vector<Phase>{wait(i == 1 ? 150ms : 30ms)}; }));
  twin.expect("completed", count(r, TaskOutcome::completed), 4);
  twin.expect("threads_started", extra(r, "threads_started"), 3);
  twin.expect("threads_retired", extra(r, "threads_retired"), 2);
}

CONFORMANCE_CASE("pool.keep_alive", "threads above core retire after keep_alive idle", "[pool]",
                 retire_after_keep_alive)

// ---- completion after rejection ------------------------------------------------------
// Three roots R, each with one successor S, and a join after the three S,
// on {threads: 1, max_threads: 1, queue: 1, reject: abort}. At t = 0 the
// first root runs, the second is queued, the third is rejected (its S and
// the join are doomed). The first root's S meets a full queue: rejected.
// The second root's S runs. Final: 3 completed, 2 rejected, 2 not_run (the
// third root's S and the join), in both halves, and the run ends.
void completion_after_rejection(const Twin& twin) {
  const Scenario s = scenario(
      "workload:\n  graph:\n    nodes:\n"
      "      - {id: r1, task: [{wait: 30ms}]}\n      - {id: r2, task: [{wait: 30ms}]}\n"
      "      - {id: r3, task: [{wait: 30ms}]}\n"
      "      - {id: s1, task: [{wait: 10ms}], after: [r1]}\n"
      "      - {id: s2, task: [{wait: 10ms}], after: [r2]}\n"
      "      - {id: s3, task: [{wait: 10ms}], after: [r3]}\n"
      "      - {id: join, task: [{wait: 10ms}], after: [s1, s2, s3]}\n"
      "backend: {kind: pool, threads: 1, max_threads: 1, queue: 1, reject: abort}\n");
  const Workload w = generate_workload(s);
  const RunResult r = twin.run(s, w);
  twin.expect("completed", count(r, TaskOutcome::completed), 3);
  twin.expect("rejected", count(r, TaskOutcome::rejected), 2);
  twin.expect("not_run", count(r, TaskOutcome::not_run), 2);
  for (std::size_t i = 0; i < w.tasks.size(); ++i) {
    if (w.tasks[i].pred_count != 3) continue;
    INFO("the join");
    CHECK(r.records[i].outcome == TaskOutcome::not_run);
  }
}

CONFORMANCE_CASE("graph.completion_after_rejection",
                 "successors of a rejected node are not_run and the run ends", "[graph]",
                 completion_after_rejection)

// ---- max_threads ----------------------------------------------------------------------
// Twelve 40 ms waits on {threads: 2, max_threads: 4, queue: 2,
// reject: caller-runs}: the pool grows to four workers and never further;
// the overflow runs on the submitter.
void pool_max_threads(const Twin& twin) {
  const Scenario s = scenario(
      "backend: {kind: pool, threads: 2, max_threads: 4, queue: 2, reject: caller-runs}\n");
  const RunResult r = twin.run(s, phased(12, [](int) { return std::vector<Phase>{wait(40ms)}; }));
  twin.expect("completed", count(r, TaskOutcome::completed), 12);
  twin.expect("threads_started", extra(r, "threads_started"), 4);
  twin.expect("threads_peak", static_cast<double>(r.counters.threads_peak), 5);  // + submitter
  CHECK(extra(r, "caller_runs") >= 1);
}

// Ten 60 ms waits on {min_threads: 1, max_threads: 3, injection_delay: 5ms}:
// the gate injects up to the maximum and stops there.
void injecting_max_threads(const Twin& twin) {
  const Scenario s = scenario(
      "backend: {kind: injecting-pool, min_threads: 1, max_threads: 3, injection_delay: 5ms}\n");
  const RunResult r = twin.run(s, phased(10, [](int) { return std::vector<Phase>{wait(60ms)}; }));
  twin.expect("completed", count(r, TaskOutcome::completed), 10);
  twin.expect("injections", extra(r, "injections"), 2);
  twin.expect("workers_peak", extra(r, "workers_peak"), 3);
  twin.expect("threads_peak", static_cast<double>(r.counters.threads_peak),
              5);  // + gate, submitter
}

CONFORMANCE_CASE("pool.max_threads", "a pool never exceeds max_threads", "[pool]", pool_max_threads)
CONFORMANCE_CASE("injecting_pool.max_threads", "the gate never injects past max_threads",
                 "[injecting]", injecting_max_threads)

}  // namespace
}  // namespace poolsim::conformance
