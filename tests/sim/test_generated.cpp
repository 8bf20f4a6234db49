// End to end through the scenario loader and the workload generator: every
// arrival kind and phase kind, on both runtimes, with the shipped default
// machine profile. Checks how every task ended (completed, rejected or not
// run) against what the arrival allows, and that the counters are coherent.
#include <catch2/catch.hpp>
#include <string>

#include "models/scenario_loader.hpp"
#include "models/workload.hpp"
#include "sim/simulate.hpp"

using namespace poolsim;

namespace {

RunResult run_yaml(const std::string& workload, const std::string& backend) {
  const std::string yaml =
      "name: gen\nseed: 3\nmachine: default\nworkload:\n" + workload + "backend: " + backend + "\n";
  const Scenario s = load_scenario_text(yaml, "generated.yaml");
  const Workload w = generate_workload(s);
  return sim::simulate(s, w, sim::SimOptions{true});
}

struct Outcomes {
  int completed = 0, rejected = 0, not_run = 0;
};

// Every record is coherent (a completed task started after its submit and
// ended after its start) and the run did work; returns how the tasks ended,
// for the test to check against what its arrival allows.
Outcomes check_final(const RunResult& r) {
  Outcomes o;
  for (const TaskRecord& t : r.records) {
    switch (t.outcome) {
      case TaskOutcome::completed:
        ++o.completed;
        CHECK(t.submit <= t.start);
        CHECK(t.start <= t.end);
        break;
      case TaskOutcome::rejected:
        ++o.rejected;
        break;
      case TaskOutcome::not_run:
        ++o.not_run;
        break;
    }
  }
  CHECK(o.completed > 0);
  CHECK(r.counters.threads_peak >= 2);
  CHECK(r.counters.cpu_time.count() > 0);
  CHECK(r.mode == "simulated");
  return o;
}

}  // namespace

TEST_CASE(
    "generated: a batch with waits and locks completes every task on a pool and on thread-per-task",
    "[generated]") {
  const std::string wl =
      "  arrival: {kind: batch, count: 2000}\n"
      "  task:\n"
      "    - cpu: {dist: exponential, mean: 200us}\n"
      "    - wait: 1ms\n"
      "    - lock: {name: stock, hold: 20us}\n"
      "    - lock: {name: rows, shards: 16, hold: 10us, wait_inside: 100us}\n";
  for (const char* backend : {"{kind: pool, threads: 8}", "{kind: thread-per-task}"}) {
    const Outcomes o = check_final(run_yaml(wl, backend));
    CHECK(o.completed == 2000);
    CHECK(o.rejected == 0);
    CHECK(o.not_run == 0);
  }
}

TEST_CASE("generated: Poisson and periodic arrivals complete every task", "[generated]") {
  // Caller-runs: a task the full queue refuses runs on the submitter, so
  // every task still completes.
  const Outcomes poisson = check_final(
      run_yaml("  arrival: {kind: poisson, rate: 2000/s, count: 3000}\n  task: [{cpu: 300us}]\n",
               "{kind: pool, threads: 4, queue: 50, reject: caller-runs}"));
  CHECK(poisson.completed == 3000);
  CHECK(poisson.rejected == 0);
  CHECK(poisson.not_run == 0);
  const Outcomes periodic =
      check_final(run_yaml("  arrival: {kind: periodic, interval: 1ms, count: 500}\n  task: [{cpu: "
                           "200us}, {wait: 2ms}]\n",
                           "{kind: thread-per-task}"));
  CHECK(periodic.completed == 500);
  CHECK(periodic.not_run == 0);
}

TEST_CASE("generated: closed clients submit only within the duration and leave the rest not run",
          "[generated]") {
  const RunResult r = run_yaml(
      "  arrival: {kind: closed, clients: 50, think: 1ms, duration: 200ms}\n  task: [{cpu: 100us}, "
      "{wait: 2ms}]\n",
      "{kind: pool, threads: 8}");
  const Outcomes o = check_final(r);
  // Closed clients stop at `duration`: the generated requests past it are not
  // run, every other one completes, none is rejected (an unbounded queue).
  CHECK(o.rejected == 0);
  CHECK(o.not_run > 0);
  CHECK(o.completed + o.not_run == static_cast<int>(r.records.size()));
  for (const TaskRecord& t : r.records)
    if (t.outcome == TaskOutcome::completed)
      CHECK(t.submit < Duration(std::chrono::milliseconds(200)));
}

TEST_CASE("generated: a fork-join graph completes every node", "[generated]") {
  const RunResult r =
      run_yaml("  graph: {fork_join: {depth: 4, fanout: 2, leaf: [{cpu: 500us}]}}\n",
               "{kind: pool, threads: 4}");
  const Outcomes o = check_final(r);
  CHECK(o.completed == static_cast<int>(r.records.size()));
  CHECK(o.not_run == 0);
}
