// sim_scenarios.cpp: whole simulations, timed end to end (workload generated
// outside the timed loop).
//   Burst100k_Pool4      100k tasks of 50 us submitted at once to a 4-thread
//                        pool, shipped default machine profile (4 CPUs).
//   Burst100k_ThreadPerTask  the same burst, a thread per task.
//   Poisson1M_64Cpus     1M Poisson arrivals (exponential 1 ms, rho 0.7) on a
//                        64-thread pool, default profile widened to 64 CPUs.
//   MM4_rho09_1M         M/M/4 at rho 0.9, 1M jobs, every cost zero, 4-thread
//                        pool (5 CPUs: the submitter never delays an
//                        arrival); the case bench/peers/compare-simgrid runs
//                        against SimGrid.
#include <benchmark/benchmark.h>

#include "models/scenario_loader.hpp"
#include "models/workload.hpp"
#include "sim/simulate.hpp"

namespace {

using namespace poolsim;
using namespace std::chrono_literals;

MachineProfile default_profile() { return load_machine_profile("default"); }

Scenario scenario(const MachineProfile& m, BackendKind kind, int threads, Arrival arrival,
                  Distribution work) {
  Scenario s;
  s.name = "bench";
  s.seed = 42;
  s.machine = m;
  s.workload.arrival = arrival;
  s.workload.classes.push_back(TaskClass{1.0, {CpuPhase{work}}});
  s.backend.kind = kind;
  s.backend.threads = threads;
  s.backend.max_threads = threads;
  return s;
}

void run(benchmark::State& state, const Scenario& s) {
  const Workload w = generate_workload(s);
  double events = 0;
  for (auto _ : state) {
    RunResult r = sim::simulate(s, w);
    events += r.extra["sim_events"];
    benchmark::DoNotOptimize(r.records.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(w.tasks.size() * state.iterations()));
  state.counters["events_per_s"] = benchmark::Counter(events, benchmark::Counter::kIsRate);
}

Arrival batch(std::int64_t n) {
  Arrival a;
  a.kind = ArrivalKind::batch;
  a.count = n;
  return a;
}
Arrival poisson(double rate, std::int64_t n) {
  Arrival a;
  a.kind = ArrivalKind::poisson;
  a.rate = rate;
  a.count = n;
  return a;
}

void BM_Burst100k_Pool4(benchmark::State& state) {
  run(state,
      scenario(default_profile(), BackendKind::pool, 4, batch(100000), Distribution::fixed(50us)));
}
void BM_Burst100k_ThreadPerTask(benchmark::State& state) {
  run(state, scenario(default_profile(), BackendKind::thread_per_task, 0, batch(100000),
                      Distribution::fixed(50us)));
}
void BM_Poisson1M_64Cpus(benchmark::State& state) {
  MachineProfile m = default_profile();
  m.cores = 64;
  run(state, scenario(m, BackendKind::pool, 64, poisson(0.7 * 64 * 1000, 1000000),
                      Distribution::exponential(1ms)));
}
void BM_MM4_rho09_1M(benchmark::State& state) {
  MachineProfile m;
  m.name = "zero";
  m.cores = 5;
  m.slice = 1ms;
  run(state, scenario(m, BackendKind::pool, 4, poisson(0.9 * 4 * 1000, 1000000),
                      Distribution::exponential(1ms)));
}

}  // namespace

BENCHMARK(BM_Burst100k_Pool4)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Burst100k_ThreadPerTask)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Poisson1M_64Cpus)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_MM4_rho09_1M)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK_MAIN();
