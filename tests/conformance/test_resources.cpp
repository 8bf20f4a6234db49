// test_resources.cpp: bounded resources (`resources:`, `holding:`), the rule
// of models/resource_pool.hpp, on the simulated and the real twin of a thread
// pool, virtual threads and an event loop: permits are granted in FIFO
// order and never exceeded, consecutive holding phases keep one permit, and
// a rejected task never holds one.
#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "conformance.hpp"

namespace poolsim::conformance {
namespace {

using namespace std::chrono_literals;
using test::cpu;

Phase holding(Phase p, std::uint16_t r = 0) {
  p.resource = r;
  return p;
}

// The backends under test, each with one OS thread where that shows a
// suspension: one carrier, one loop (a blocked carrier or loop would
// deadlock, since the permit holders sleep on it).
const char* const kBackends[] = {"{kind: pool, threads: 6}", "{kind: virtual-threads, carriers: 1}",
                                 "{kind: event-loop, loops: 1}"};

Scenario with_db(const char* backend, int permits) {
  return scenario("resources: {db: {permits: " + std::to_string(permits) +
                  "}}\nbackend: " + backend + "\n");
}

// ---- FIFO and the bound --------------------------------------------------------
// Six tasks; task i first waits i * 20 ms (no permit), then holds one of two
// permits for 80 ms. Requests come 20 ms apart, so FIFO grants them in task
// order: tasks 0 and 1 at once, 2 and 3 when 0 and 1 release, 4 and 5 after
// them. Ends come in task order (exactly on the simulated twin; within 10 ms
// on the real one, where a loaded machine may run a holder late), in three
// waves a hold apart.
void fifo_and_bound(const Twin& twin) {
  const Duration margin = twin.simulated() ? 0ms : 10ms;
  for (const char* backend : kBackends) {
    INFO("backend " << backend);
    const RunResult r = twin.run(with_db(backend, 2), phased(6, [](int i) {
                                   return std::vector<Phase>{wait(i * 20ms), holding(wait(80ms))};
                                 }));
    twin.expect("completed", count(r, TaskOutcome::completed), 6);
    twin.expect("acquisitions", extra(r, "resource.db.acquisitions"), 6);
    // On a loaded machine a late start can change who finds a free permit.
    twin.expect("waits", extra(r, "resource.db.waits"), 4, 1, 1);
    twin.expect("in_use_peak", extra(r, "resource.db.in_use_peak"), 2);
    for (std::size_t i = 1; i < 6; ++i) {
      INFO("task " << i);
      CHECK(r.records[i].end + margin > r.records[i - 1].end);  // FIFO: granted in request order
    }
    // Never more than two holders: each wave ends a hold after the one before.
    CHECK(r.records[2].end >= 160ms);
    CHECK(r.records[4].end >= 240ms);
    CHECK(r.records[5].end >= 260ms);
  }
}

CONFORMANCE_CASE("resources.fifo", "permits go in request order and never exceed the pool",
                 "[resources]", fifo_and_bound)

// ---- one permit across consecutive holding phases --------------------------------
// Three tasks of three phases, all holding the one permit: each task takes
// it once (3 acquisitions, not 9) and keeps it across its phases, so the
// tasks run one after the other, each ending 61 ms or more after another.
void kept_across_phases(const Twin& twin) {
  for (const char* backend : kBackends) {
    INFO("backend " << backend);
    const RunResult r = twin.run(
        with_db(backend, 1), phased(3, [](int) {
          return std::vector<Phase>{holding(wait(30ms)), holding(cpu(1ms)), holding(wait(30ms))};
        }));
    twin.expect("completed", count(r, TaskOutcome::completed), 3);
    twin.expect("acquisitions", extra(r, "resource.db.acquisitions"), 3);
    twin.expect("waits", extra(r, "resource.db.waits"), 2);
    // The three request at once (their order is the threads' on hardware):
    // the ends, in order, are a whole task apart.
    std::vector<Duration> ends;
    for (const TaskRecord& t : r.records) ends.push_back(t.end);
    std::sort(ends.begin(), ends.end());
    for (std::size_t i = 1; i < 3; ++i) CHECK(ends[i] - ends[i - 1] >= 61ms);
  }
}

CONFORMANCE_CASE("resources.kept", "consecutive phases holding a resource keep one permit",
                 "[resources]", kept_across_phases)

// ---- rejection ---------------------------------------------------------------------
// {threads: 1, queue: 1, reject: abort} and one permit: task 0 runs, task 1
// waits in the queue, tasks 2 and 3 are refused before they start. Only the
// two that ran took the permit, and both gave it back (the run ends with
// every permit free: asserted by both halves).
void rejected_hold_nothing(const Twin& twin) {
  const Scenario s = scenario(
      "resources: {db: {permits: 1}}\n"
      "backend: {kind: pool, threads: 1, max_threads: 1, queue: 1, reject: abort}\n");
  const RunResult r =
      twin.run(s, phased(4, [](int) { return std::vector<Phase>{holding(wait(40ms))}; }));
  twin.expect("completed", count(r, TaskOutcome::completed), 2);
  twin.expect("rejected", count(r, TaskOutcome::rejected), 2);
  twin.expect("acquisitions", extra(r, "resource.db.acquisitions"), 2);
  twin.expect("waits", extra(r, "resource.db.waits"), 0);
}

// A task whose last phase holds releases at its end; the next task (on the
// same single thread) then takes the permit without waiting, and caller-runs
// on the submitter takes it like any thread.
void caller_runs_takes_permit(const Twin& twin) {
  const Scenario s = scenario(
      "resources: {db: {permits: 1}}\n"
      "backend: {kind: pool, threads: 1, max_threads: 1, queue: 1, reject: caller-runs}\n");
  const RunResult r =
      twin.run(s, phased(3, [](int) { return std::vector<Phase>{holding(wait(40ms))}; }));
  twin.expect("completed", count(r, TaskOutcome::completed), 3);
  twin.expect("caller_runs", extra(r, "caller_runs"), 1);
  twin.expect("acquisitions", extra(r, "resource.db.acquisitions"), 3);
  twin.expect("in_use_peak", extra(r, "resource.db.in_use_peak"), 1);
}

CONFORMANCE_CASE("resources.rejected", "a refused task never holds a permit", "[resources]",
                 rejected_hold_nothing)
CONFORMANCE_CASE("resources.caller_runs", "the submitter waits for a permit like any thread",
                 "[resources]", caller_runs_takes_permit)

}  // namespace
}  // namespace poolsim::conformance
