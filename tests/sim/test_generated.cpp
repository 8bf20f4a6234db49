// End to end through the scenario loader and the workload generator: every
// arrival kind and phase kind, on both runtimes, with the shipped default
// machine profile. Checks that every task ends final and the counters are
// coherent.
#include <catch2/catch.hpp>

#include <string>

#include "models/scenario_loader.hpp"
#include "models/workload.hpp"
#include "sim/simulate.hpp"

using namespace poolsim;

namespace {

RunResult run_yaml(const std::string& workload, const std::string& backend) {
  const std::string yaml = "name: gen\nseed: 3\nmachine: default\nworkload:\n" + workload +
                           "backend: " + backend + "\n";
  const Scenario s = load_scenario_text(yaml, "generated.yaml");
  const Workload w = generate_workload(s);
  return sim::simulate(s, w, sim::SimOptions{true});
}

void check_final(const RunResult& r) {
  int completed = 0, not_run = 0;
  for (const TaskRecord& t : r.records) {
    if (t.outcome == TaskOutcome::completed) {
      ++completed;
      CHECK(t.submit <= t.start);
      CHECK(t.start <= t.end);
    } else if (t.outcome == TaskOutcome::not_run) {
      ++not_run;
    }
  }
  CHECK(completed > 0);
  CHECK(r.counters.threads_peak >= 2);
  CHECK(r.counters.cpu_time.count() > 0);
  CHECK(r.mode == "simulated");
}

}  // namespace

TEST_CASE("Generated.BatchWithLocksAndWaits", "[generated]") {
  const std::string wl =
      "  arrival: {kind: batch, count: 2000}\n"
      "  task:\n"
      "    - cpu: {dist: exponential, mean: 200us}\n"
      "    - wait: 1ms\n"
      "    - lock: {name: stock, hold: 20us}\n"
      "    - lock: {name: rows, shards: 16, hold: 10us, wait_inside: 100us}\n";
  for (const char* backend : {"{kind: pool, threads: 8}", "{kind: thread-per-task}"}) {
    const RunResult r = run_yaml(wl, backend);
    check_final(r);
    for (const TaskRecord& t : r.records) CHECK(t.outcome == TaskOutcome::completed);
  }
}

TEST_CASE("Generated.PoissonAndPeriodic", "[generated]") {
  check_final(run_yaml("  arrival: {kind: poisson, rate: 2000/s, count: 3000}\n  task: [{cpu: 300us}]\n",
                       "{kind: pool, threads: 4, queue: 50, reject: caller-runs}"));
  check_final(run_yaml("  arrival: {kind: periodic, interval: 1ms, count: 500}\n  task: [{cpu: 200us}, {wait: 2ms}]\n",
                       "{kind: thread-per-task}"));
}

TEST_CASE("Generated.ClosedClients", "[generated]") {
  const RunResult r = run_yaml(
      "  arrival: {kind: closed, clients: 50, think: 1ms, duration: 200ms}\n  task: [{cpu: 100us}, {wait: 2ms}]\n",
      "{kind: pool, threads: 8}");
  check_final(r);
  for (const TaskRecord& t : r.records)
    if (t.outcome == TaskOutcome::completed) CHECK(t.submit < Duration(std::chrono::milliseconds(200)));
}

TEST_CASE("Generated.ForkJoinGraph", "[generated]") {
  const RunResult r = run_yaml(
      "  graph: {fork_join: {depth: 4, fanout: 2, leaf: [{cpu: 500us}]}}\n", "{kind: pool, threads: 4}");
  check_final(r);
  for (const TaskRecord& t : r.records) CHECK(t.outcome == TaskOutcome::completed);
}
