// Streaming: a workload drawn as the simulation consumes it (TaskStream)
// and records folded into a summary give the same run as the task list and
// kept records, for every open arrival kind and a mix of phases and locks.
#include <catch2/catch.hpp>

#include "models/metrics.hpp"
#include "sim_fixtures.hpp"

using namespace poolsim;
using namespace poolsim::test;

namespace {
Scenario mixed(ArrivalKind kind, BackendKind backend) {
  MachineProfile m = zero_machine(6, 2ms, 4ms);
  m.switch_cost = 1us;
  m.wakeup_latency = 5us;
  m.idle_exit = 20us;
  m.thread_create = 8us;
  Scenario s = pool_scenario(m, 5);
  s.backend.kind = backend;
  if (backend == BackendKind::thread_per_task) s.backend.threads = s.backend.max_threads = 0;
  s.seed = 11;
  Arrival a;
  a.kind = kind;
  a.count = 3000;
  a.rate = 2500;
  a.interval = 400us;
  a.think = Distribution::fixed(0ns);
  s.workload.arrival = a;
  s.workload.classes.push_back({0.6, {CpuPhase{Distribution::exponential(1ms), std::nullopt}}});
  s.workload.classes.push_back(
      {0.4,
       {CpuPhase{Distribution::fixed(200us), std::nullopt},
        WaitPhase{Distribution::exponential(2ms), std::nullopt},
        LockPhase{"rows", 4, Distribution::fixed(50us), std::nullopt, std::nullopt}}});
  return s;
}
}  // namespace

TEST_CASE("streaming: a task stream is the task list, drawn one at a time", "[streaming]") {
  for (ArrivalKind kind : {ArrivalKind::batch, ArrivalKind::poisson, ArrivalKind::periodic}) {
    const Scenario s = mixed(kind, BackendKind::pool);
    const Workload list = generate_workload(s, s.seed);
    Workload streamed = generate_workload(s, s.seed, GenerateOptions{true});
    REQUIRE(streamed.streamed());
    REQUIRE(streamed.tasks.empty());
    Task t;
    std::vector<Phase> phases;
    std::size_t n = 0;
    while (streamed.stream->next(t, phases)) {
      const Task& want = list.tasks[n];
      REQUIRE(t.id == want.id);
      REQUIRE(t.cls == want.cls);
      REQUIRE(t.arrival == want.arrival);
      const auto wp = list.phases_of(want);
      REQUIRE(phases.size() == wp.size());
      for (std::size_t i = 0; i < wp.size(); ++i) {
        REQUIRE(phases[i].kind == wp[i].kind);
        REQUIRE(phases[i].lock == wp[i].lock);
        REQUIRE(phases[i].duration == wp[i].duration);
        REQUIRE(phases[i].wait_inside == wp[i].wait_inside);
      }
      ++n;
    }
    REQUIRE(n == list.tasks.size());
    streamed.sync_stream();
    CHECK(streamed.task_count() == list.tasks.size());
    CHECK(streamed.total_work == list.total_work);
    CHECK(streamed.critical_path == list.critical_path);
  }
}

TEST_CASE("streaming: streamed tasks and folded records give the same metrics", "[streaming]") {
  for (BackendKind backend :
       {BackendKind::pool, BackendKind::thread_per_task, BackendKind::work_stealing}) {
    for (ArrivalKind kind : {ArrivalKind::batch, ArrivalKind::poisson, ArrivalKind::periodic}) {
      const Scenario s = mixed(kind, backend);
      REQUIRE(sim::can_stream(s));
      const RunResult kept = sim::simulate(s, generate_workload(s, s.seed));
      sim::SimOptions opt;
      opt.records = false;
      const Workload w = generate_workload(s, s.seed, GenerateOptions{true});
      int calls = 0;
      opt.progress = [&calls](const sim::SimProgress&) { ++calls; };
      opt.progress_every = 1000;
      const RunResult streamed = sim::simulate(s, w, opt);
      CHECK(calls > 1);
      REQUIRE(streamed.records.empty());
      REQUIRE(streamed.summary.has_value());
      const Metrics a = compute_metrics(kept), b = compute_metrics(streamed);
      CHECK(b.quantiles_exact);
      for (std::size_t i = 0; i < kMetricCount; ++i) CHECK(a.values[i] == b.values[i]);
      CHECK(kept.extra == streamed.extra);
      // Records kept from a stream: the same records as from the list.
      sim::SimOptions keep;
      const RunResult kept_stream =
          sim::simulate(s, generate_workload(s, s.seed, GenerateOptions{true}), keep);
      REQUIRE(kept_stream.records.size() == kept.records.size());
      for (std::size_t i = 0; i < kept.records.size(); ++i) {
        CHECK(kept_stream.records[i].end == kept.records[i].end);
        CHECK(kept_stream.records[i].outcome == kept.records[i].outcome);
      }
    }
  }
}

TEST_CASE("streaming: backends with a slot per task refuse a stream", "[streaming]") {
  Scenario s = mixed(ArrivalKind::poisson, BackendKind::pool);
  s.backend.kind = BackendKind::virtual_threads;
  CHECK_FALSE(sim::can_stream(s));
  CHECK_THROWS_AS(sim::simulate(s, generate_workload(s, s.seed, GenerateOptions{true})),
                  std::logic_error);
}
