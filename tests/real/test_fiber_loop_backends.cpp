// The four library backends (virtual-threads on Boost.Fiber, event-loop on
// Asio, tbb on oneTBB, asio-pool on asio::thread_pool): every task exactly
// once for batch, open, closed and graph workloads, their thread bounds and
// counters, and the shapes that make each one what it is: a wait frees a
// carrier but a wait inside a lock pins it, and a wait inside a lock blocks
// an event loop. Shapes only, with wide margins; no absolute wall-clock time.
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

struct LibraryBackend {
  const char* yaml;
  int threads;  // OS threads it may run tasks on (carriers, loops, workers)
};

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

const LibraryBackend kLibraryBackends[] = {
    {"{kind: virtual-threads, carriers: 2}", 2},
    {"{kind: event-loop, loops: 2}", 2},
    {"{kind: tbb, threads: 2}", 2},
    {"{kind: asio-pool, threads: 3}", 3},
};

const char* const kTask =
    "  task:\n"
    "    - cpu: 50us\n"
    "    - wait: {dist: uniform, min: 100us, max: 500us}\n"
    "    - lock: {name: stock, hold: 10us}\n"
    "    - lock: {name: rows, shards: 4, hold: 5us, wait_inside: 50us}\n";

Duration makespan(const RunResult& r) {
  Duration end{};
  for (const TaskRecord& rec : r.records)
    if (rec.outcome == TaskOutcome::completed) end = std::max(end, rec.end);
  return end;
}

double extra(const RunResult& r, const std::string& key) {
  const auto it = r.extra.find(key);
  INFO("extra counter " << key);
  REQUIRE(it != r.extra.end());
  return it->second;
}

std::size_t count_phases(const Workload& w, PhaseKind kind, bool with_wait_inside = false) {
  std::size_t n = 0;
  for (const Task& t : w.tasks)
    for (const Phase& p : w.phases_of(t))
      if (p.kind == kind && (!with_wait_inside || p.wait_inside.count() > 0)) ++n;
  return n;
}

// What every library backend must hold after a run of `w`: bounded OS
// threads (its own plus the submitter; none of them creates helpers that
// run tasks) and counters that account for every task.
void check_backend_counters(const LibraryBackend& b, const Workload& w, const RunResult& r) {
  const std::size_t done = count_outcome(r, TaskOutcome::completed);
  REQUIRE(r.counters.threads_peak >= 2);
  REQUIRE(r.counters.threads_peak <= b.threads + 1);
  const std::string kind = b.yaml;
  if (kind.find("virtual-threads") != std::string::npos) {
    REQUIRE(extra(r, "mounts") >= static_cast<double>(done));
    REQUIRE(extra(r, "unmounts") <= static_cast<double>(count_phases(w, PhaseKind::wait)));
    REQUIRE(extra(r, "pins") <= static_cast<double>(count_phases(w, PhaseKind::lock, true)));
    REQUIRE(extra(r, "virtual_threads_peak") >= 1);
  } else if (kind.find("event-loop") != std::string::npos) {
    REQUIRE(extra(r, "handlers") >= static_cast<double>(done));
    REQUIRE(extra(r, "timers") <= static_cast<double>(count_phases(w, PhaseKind::wait)));
  } else if (kind.find("tbb") != std::string::npos) {
    REQUIRE(extra(r, "enqueued") + extra(r, "spawned") == static_cast<double>(done));
    REQUIRE(extra(r, "worker_entries") >= 1);
    // A repetition is a fresh child process: nothing else holds TBB, so its
    // workers are joined before stop() returns.
    REQUIRE(extra(r, "workers_finalized") == 1);
    // Each new worker's CPU from its creation to its first entry (calibrate's
    // tbb_worker_start): its own start alone is a few microseconds.
    REQUIRE(extra(r, "worker_start_cpu") > 1e-6);
    REQUIRE(extra(r, "worker_start_cpu") < 1.0);
  } else {
    REQUIRE(extra(r, "posted") + extra(r, "posted_from_workers") == static_cast<double>(done));
  }
}

}  // namespace

TEST_CASE("libraries.batch: every task completes exactly once", "[real][libraries]") {
  for (const LibraryBackend& b : kLibraryBackends) {
    INFO(b.yaml);
    const Scenario s = scenario(std::string("workload:\n  arrival: {kind: batch, count: 200}\n") +
                                kTask + "backend: " + b.yaml + "\n");
    const Workload w = generate_workload(s);
    const RunResult r = run_once(s, w);
    REQUIRE(r.records.size() == 200);
    REQUIRE(count_outcome(r, TaskOutcome::completed) == 200);
    check_records_sane(r);
    check_backend_counters(b, w, r);
    // Every wait of the batch took its timer / unmount path.
    const auto waits = static_cast<double>(count_phases(w, PhaseKind::wait));
    if (std::string(b.yaml).find("virtual-threads") != std::string::npos) {
      REQUIRE(extra(r, "unmounts") == waits);
      REQUIRE(extra(r, "pins") == static_cast<double>(count_phases(w, PhaseKind::lock, true)));
    }
    if (std::string(b.yaml).find("event-loop") != std::string::npos)
      REQUIRE(extra(r, "timers") == waits);
  }
}

TEST_CASE("libraries.poisson: open arrivals, every task once", "[real][libraries]") {
  for (const LibraryBackend& b : kLibraryBackends) {
    INFO(b.yaml);
    const Scenario s =
        scenario(std::string("workload:\n  arrival: {kind: poisson, rate: 4000/s, count: 150}\n") +
                 kTask + "backend: " + b.yaml + "\n");
    const Workload w = generate_workload(s);
    const RunResult r = run_once(s, w);
    REQUIRE(count_outcome(r, TaskOutcome::completed) == 150);
    check_records_sane(r);
    check_backend_counters(b, w, r);
    for (std::size_t i = 0; i < w.tasks.size(); ++i)
      REQUIRE(r.records[i].submit >= w.tasks[i].arrival);
  }
}

TEST_CASE("libraries.closed: clients resubmit from the runtime's threads", "[real][libraries]") {
  for (const LibraryBackend& b : kLibraryBackends) {
    INFO(b.yaml);
    // think 0: the next task is submitted inline by the completing thread
    // (a carrier fiber, a loop, a TBB or Asio worker).
    const Scenario s = scenario(
        std::string(
            "workload:\n  arrival: {kind: closed, clients: 6, think: 0ms, duration: 40ms}\n") +
        kTask + "backend: " + b.yaml + "\n");
    const Workload w = generate_workload(s);
    const RunResult r = run_once(s, w);
    const std::size_t done = count_outcome(r, TaskOutcome::completed);
    REQUIRE(done >= 6);
    REQUIRE(count_outcome(r, TaskOutcome::rejected) == 0);
    check_records_sane(r);
    check_backend_counters(b, w, r);
    for (std::uint32_t c = 0; c < w.clients; ++c) {
      for (std::uint32_t k = 1; k < w.per_client; ++k) {
        const auto id = closed_task_id(w, c, k);
        const auto prev = closed_task_id(w, c, k - 1);
        if (r.records[id].outcome == TaskOutcome::not_run) continue;
        INFO("client " << c << " task " << k);
        REQUIRE(r.records[prev].outcome == TaskOutcome::completed);
        REQUIRE(r.records[id].submit >= r.records[prev].end);
      }
    }
  }
}

TEST_CASE("libraries.graph: every node once, after its predecessors", "[real][libraries]") {
  for (const LibraryBackend& b : kLibraryBackends) {
    INFO(b.yaml);
    const Scenario s = scenario(std::string("workload:\n  graph:\n    fork_join: {depth: 3, "
                                            "fanout: 3, leaf: [{cpu: 100us}, {wait: 200us}],"
                                            " fork: [{cpu: 20us}], join: [{cpu: 20us}]}\n"
                                            "backend: ") +
                                b.yaml + "\n");
    const Workload w = generate_workload(s);
    const RunResult r = run_once(s, w);
    REQUIRE(count_outcome(r, TaskOutcome::completed) == w.tasks.size());
    check_records_sane(r);
    check_backend_counters(b, w, r);
    for (std::size_t i = 0; i < w.tasks.size(); ++i)
      for (std::uint32_t succ : w.successors_of(w.tasks[i]))
        REQUIRE(r.records[succ].start >= r.records[i].end);
  }
}

TEST_CASE("libraries.virtual_threads: a wait unmounts, a wait inside a lock pins",
          "[real][libraries][virtual-threads]") {
  constexpr int kTasks = 200;
  constexpr auto kWait = std::chrono::milliseconds(10);
  SECTION("waits free the carriers: 200 x 10 ms on 2 carriers end far below 200 x 10 ms / 2") {
    const Scenario s = scenario(
        "workload:\n  arrival: {kind: batch, count: 200}\n  task:\n    - wait: 10ms\n"
        "backend: {kind: virtual-threads, carriers: 2}\n");
    const Workload w = generate_workload(s);
    const RunResult r = run_once(s, w);
    REQUIRE(count_outcome(r, TaskOutcome::completed) == kTasks);
    // Carriers held through the waits would need kTasks * kWait / 2 = 1 s.
    // A sanitizer build creates and switches fibers 10-30 times slower, and
    // its time follows the VM's state (ThreadSanitizer: 274 ms one day, 670-
    // 710 ms on a quiet machine the next, when this VM's IPIs cost 2.5x), so
    // there the proof is structural only: every wait unmounted, and more
    // virtual threads waited at once than there are carriers (below).
    if (!kSanitized) REQUIRE(makespan(r) < 10 * kWait);
    REQUIRE(extra(r, "unmounts") == kTasks);
    REQUIRE(extra(r, "pins") == 0);
    REQUIRE(extra(r, "virtual_threads_peak") >
            2);  // more virtual threads than carriers waited at once
  }
  SECTION("the same wait inside one shared lock is serialised: at least ~N x W") {
    const Scenario s = scenario(
        "workload:\n  arrival: {kind: batch, count: 20}\n  task:\n"
        "    - lock: {name: db, hold: 10us, wait_inside: 10ms}\n"
        "backend: {kind: virtual-threads, carriers: 2}\n");
    const Workload w = generate_workload(s);
    const RunResult r = run_once(s, w);
    REQUIRE(count_outcome(r, TaskOutcome::completed) == 20);
    REQUIRE(makespan(r) >= 20 * kWait * 9 / 10);
    REQUIRE(extra(r, "pins") == 20);
    REQUIRE(extra(r, "pinned_time") >= to_seconds(20 * kWait * 9 / 10));
  }
  SECTION("a wait inside private locks pins: throughput falls to carriers / W") {
    // 40 tasks, each pinning its carrier 5 ms under its own lock shard: the
    // 2 carriers pass at most 2 tasks per 5 ms, so >= 40 / 2 x 5 ms = 100 ms
    // (shard collisions only serialise more); without pinning it would be
    // about one wait.
    const Scenario s = scenario(
        "workload:\n  arrival: {kind: batch, count: 40}\n  task:\n"
        "    - lock: {name: rows, shards: 100000, hold: 10us, wait_inside: 5ms}\n"
        "backend: {kind: virtual-threads, carriers: 2}\n");
    const Workload w = generate_workload(s);
    const RunResult r = run_once(s, w);
    REQUIRE(count_outcome(r, TaskOutcome::completed) == 40);
    REQUIRE(makespan(r) >= std::chrono::milliseconds(100) * 9 / 10);
    REQUIRE(extra(r, "pins") == 40);
  }
}

TEST_CASE("libraries.event_loop: a wait inside a lock blocks the loop, a timer does not",
          "[real][libraries][event-loop]") {
  // One loop. The roots `blocker` and `go` are handed over at t = 0; `go`
  // burns 1 ms, then its completion hands over ten short tasks, so on the
  // loop's FIFO they queue behind `blocker` whichever root runs first. The
  // blocker's 50 ms wait is either a timer (the loop runs the others
  // meanwhile) or a wait inside a lock (the loop thread sleeps).
  const auto graph = [](const std::string& blocker_task) {
    std::string nodes = "    nodes:\n      - {id: blocker, task: [" + blocker_task + "]}\n" +
                        "      - {id: go, task: [{cpu: 1ms}]}\n";
    for (int i = 0; i < 10; ++i)
      nodes += "      - {id: t" + std::to_string(i) + ", task: [{cpu: 20us}], after: [go]}\n";
    return scenario("workload:\n  graph:\n" + nodes + "backend: {kind: event-loop, loops: 1}\n");
  };
  struct Observed {
    Duration blocker_start{};
    Duration others_first_start = Duration::max();
    Duration others_first_end = Duration::max();
    Duration others_last_end{};
  };
  const auto run = [](const Scenario& s) {
    const Workload w = generate_workload(s);
    const RunResult r = run_once(s, w);
    REQUIRE(count_outcome(r, TaskOutcome::completed) == w.tasks.size());
    Observed o;
    for (std::size_t i = 0; i < w.tasks.size(); ++i) {
      if (w.node_ids[i] == "blocker") o.blocker_start = r.records[i].start;
      if (w.node_ids[i] == "blocker" || w.node_ids[i] == "go") continue;
      o.others_first_start = std::min(o.others_first_start, r.records[i].start);
      o.others_first_end = std::min(o.others_first_end, r.records[i].end);
      o.others_last_end = std::max(o.others_last_end, r.records[i].end);
    }
    return o;
  };
  // The claim needs the blocker to start before the ten others: on a loaded
  // machine the submitter can be descheduled between the two roots for longer
  // than `go` runs (seen under ThreadSanitizer: the blocker handed over 45 ms
  // late, after the others had finished), and then the run says nothing
  // about blocking. Such runs are repeated, up to five times.
  const auto run_ordered = [&](const Scenario& s) {
    for (int attempt = 1; attempt <= 5; ++attempt) {
      const Observed o = run(s);
      if (o.blocker_start < o.others_first_start) return o;
      WARN("attempt " << attempt << ": the blocker started after the other tasks; repeated");
    }
    FAIL("the blocker never started before the other tasks in 5 runs");
    return Observed{};
  };
  const auto kBlock = std::chrono::milliseconds(50);
  SECTION("blocked inside a lock: every other task of the loop waits for it") {
    const Observed o = run_ordered(graph("{lock: {name: m, hold: 10us, wait_inside: 50ms}}"));
    REQUIRE(o.others_first_end >= o.blocker_start + kBlock * 9 / 10);
  }
  SECTION("a timer: the loop runs the other tasks during the wait") {
    const Observed o = run_ordered(graph("{wait: 50ms}"));
    REQUIRE(o.others_last_end < o.blocker_start + kBlock / 2);
  }
}
