// Pool semantics on real threads: limits are never exceeded, each rejection
// policy does what it says, a bounded queue grows the pool to its maximum,
// keep-alive retires extra threads, the injecting pool grows when starved,
// work stealing accounts for every task it took.
#include <algorithm>
#include <string>

#include "real_test_util.hpp"

using namespace poolsim;
using namespace poolsim::real;
using poolsim::real::test::check_records_sane;
using poolsim::real::test::count_outcome;
using poolsim::real::test::run_once;
using poolsim::real::test::scenario;

namespace {

// 10 blocking tasks at once on a pool of one thread with a queue of one.
RunResult run_rejecting(const std::string& policy) {
  const Scenario s = scenario(
      "workload:\n  arrival: {kind: batch, count: 10}\n  task: [{wait: 20ms}]\n"
      "backend: {kind: pool, threads: 1, max_threads: 1, queue: 1, reject: " +
      policy + "}\n");
  return run_once(s, generate_workload(s));
}

}  // namespace

TEST_CASE("pool.reject_abort: tasks beyond core + queue are rejected", "[real][pool]") {
  const RunResult r = run_rejecting("abort");
  REQUIRE(count_outcome(r, TaskOutcome::completed) == 2);
  REQUIRE(count_outcome(r, TaskOutcome::rejected) == 8);
  // The first task started the core thread, the second was queued.
  REQUIRE(r.records[0].outcome == TaskOutcome::completed);
  REQUIRE(r.records[1].outcome == TaskOutcome::completed);
  REQUIRE(r.counters.threads_peak == 2);
}

TEST_CASE("pool.reject_discard: dropped tasks are recorded as rejected", "[real][pool]") {
  const RunResult r = run_rejecting("discard");
  REQUIRE(count_outcome(r, TaskOutcome::completed) == 2);
  REQUIRE(count_outcome(r, TaskOutcome::rejected) == 8);
}

TEST_CASE("pool.reject_discard_oldest: the newest task survives", "[real][pool]") {
  const RunResult r = run_rejecting("discard-oldest");
  REQUIRE(count_outcome(r, TaskOutcome::completed) == 2);
  REQUIRE(count_outcome(r, TaskOutcome::rejected) == 8);
  REQUIRE(r.records[0].outcome == TaskOutcome::completed);  // running, never queued
  REQUIRE(r.records[9].outcome == TaskOutcome::completed);  // last offered, never dropped
}

TEST_CASE("pool.reject_caller_runs: the submitter runs what the pool refuses", "[real][pool]") {
  const RunResult r = run_rejecting("caller-runs");
  REQUIRE(count_outcome(r, TaskOutcome::completed) == 10);
  std::size_t on_submitter = 0;
  for (const auto& rec : r.records) on_submitter += rec.worker == kSubmitterThread ? 1 : 0;
  REQUIRE(on_submitter >= 1);
  REQUIRE(r.records[0].worker != kSubmitterThread);
  REQUIRE(r.counters.threads_peak == 2);
}

TEST_CASE("pool.growth: a full bounded queue grows the pool to max, never beyond", "[real][pool]") {
  const Scenario s = scenario(
      "workload:\n  arrival: {kind: batch, count: 30}\n  task: [{wait: 15ms}]\n"
      "backend: {kind: pool, threads: 1, max_threads: 4, queue: 2, reject: caller-runs}\n");
  const RunResult r = run_once(s, generate_workload(s), /*trace=*/true);
  REQUIRE(count_outcome(r, TaskOutcome::completed) == 30);
  REQUIRE(r.extra.at("threads_started") == 4);
  REQUIRE(r.counters.threads_peak == 5);  // 4 workers + the submitter
  REQUIRE_FALSE(r.threads_series.empty());
  int series_max = 0;
  for (const Sample& x : r.threads_series) series_max = std::max(series_max, x.value);
  REQUIRE(series_max <= 5);
}

TEST_CASE("pool.unbounded: an unbounded queue never grows past core", "[real][pool]") {
  const Scenario s = scenario(
      "workload:\n  arrival: {kind: batch, count: 60}\n  task: [{wait: 1ms}]\n"
      "backend: {kind: pool, threads: 2, max_threads: 8}\n");
  const RunResult r = run_once(s, generate_workload(s));
  REQUIRE(count_outcome(r, TaskOutcome::completed) == 60);
  REQUIRE(r.counters.threads_peak == 3);
}

TEST_CASE("pool.keep_alive: idle threads above core retire", "[real][pool]") {
  // Five roots fill 1 core thread + 1 queue slot + 3 extra threads (their
  // wait outlasts the five hand-overs, even under ThreadSanitizer); the tail
  // node keeps the run alive long after the keep-alive of the idle extras.
  const Scenario s = scenario(
      "workload:\n  graph:\n    nodes:\n"
      "      - {id: a, task: [{wait: 100ms}]}\n      - {id: b, task: [{wait: 100ms}]}\n"
      "      - {id: c, task: [{wait: 100ms}]}\n      - {id: d, task: [{wait: 100ms}]}\n"
      "      - {id: e, task: [{wait: 100ms}]}\n"
      "      - {id: tail, task: [{wait: 200ms}], after: [a, b, c, d, e]}\n"
      "backend: {kind: pool, threads: 1, max_threads: 4, queue: 1, keep_alive: 20ms}\n");
  // Traced: the thread series come from the traced repetition.
  const RunResult r = run_once(s, generate_workload(s), /*trace=*/true);
  REQUIRE(count_outcome(r, TaskOutcome::completed) == 6);
  REQUIRE(r.extra.at("threads_started") == 4);
  REQUIRE(r.extra.at("threads_retired") >= 2);
  REQUIRE(r.counters.threads_peak == 5);
  REQUIRE(r.threads_series.back().value < 5);
}

TEST_CASE("injecting_pool.starved: the gate injects threads while work waits",
          "[real][injecting]") {
  const Scenario s = scenario(
      "workload:\n  arrival: {kind: batch, count: 12}\n  task: [{wait: 60ms}]\n"
      "backend: {kind: injecting-pool, min_threads: 1, max_threads: 6, injection_delay: 20ms}\n");
  const RunResult r = run_once(s, generate_workload(s));
  REQUIRE(count_outcome(r, TaskOutcome::completed) == 12);
  REQUIRE(r.extra.at("injections") >= 2);
  REQUIRE(r.extra.at("workers_peak") > 1);
  REQUIRE(r.extra.at("workers_peak") <= 6);
  REQUIRE(r.counters.threads_peak <= 6 + 2);  // workers + gate + submitter
}

TEST_CASE("injecting_pool.busy: no injection while work makes progress", "[real][injecting]") {
  const Scenario s = scenario(
      "workload:\n  arrival: {kind: batch, count: 100}\n  task: [{cpu: 50us}]\n"
      "backend: {kind: injecting-pool, min_threads: 2, max_threads: 6, injection_delay: 500ms}\n");
  const RunResult r = run_once(s, generate_workload(s));
  REQUIRE(count_outcome(r, TaskOutcome::completed) == 100);
  REQUIRE(r.extra.at("injections") == 0);
  REQUIRE(r.counters.threads_peak == 4);  // 2 workers + gate + submitter
}

TEST_CASE("work_stealing.accounting: every task came from one of the three sources",
          "[real][work-stealing]") {
  const Scenario s = scenario(
      "workload:\n  graph:\n    fork_join: {depth: 4, fanout: 2, leaf: [{cpu: 100us}]}\n"
      "backend: {kind: work-stealing, threads: 3}\n");
  const Workload w = generate_workload(s);
  const RunResult r = run_once(s, w);
  REQUIRE(count_outcome(r, TaskOutcome::completed) == w.tasks.size());
  const double taken =
      r.extra.at("local_pops") + r.extra.at("injection_pops") + r.extra.at("steals");
  REQUIRE(taken == static_cast<double>(w.tasks.size()));
  REQUIRE(r.extra.at("injection_pops") >= 1);  // the root came from the submitter
  REQUIRE(r.extra.count("failed_steals") == 1);
  REQUIRE(r.counters.threads_peak == 4);
}

TEST_CASE("thread_per_task.threads: one thread per task, created by the submitter",
          "[real][thread-per-task]") {
  const Scenario s = scenario(
      "workload:\n  arrival: {kind: batch, count: 20}\n  task: [{wait: 400ms}]\n"
      "backend: {kind: thread-per-task, stack: 128KiB}\n");
  const RunResult r = run_once(s, generate_workload(s));
  REQUIRE(count_outcome(r, TaskOutcome::completed) == 20);
  // All twenty block together (creating twenty threads takes far less than
  // the wait, even under ThreadSanitizer): the peak is every task thread
  // plus the submitter.
  REQUIRE(r.counters.threads_peak == 21);
  std::vector<std::uint32_t> workers;
  for (const auto& rec : r.records) workers.push_back(rec.worker);
  std::sort(workers.begin(), workers.end());
  REQUIRE(std::unique(workers.begin(), workers.end()) == workers.end());  // distinct threads
}
