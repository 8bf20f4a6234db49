// real_recording.cpp: the cost of the real runner's own measurement.
//
// Each benchmark executes empty tasks (no phases) through RunContext on the
// calling thread, so what is timed is only what the runner adds to every
// task: the start/end clock reads (CLOCK_MONOTONIC, vDSO), the per-task CPU
// clock (CLOCK_THREAD_CPUTIME_ID, a system call), the record writes, the
// exactly-once flag and the completion counter, and with --trace the span
// pushes. BM_PoolHandOff adds the cost of a real hand-over through our pool
// (queue, condition variable, worker wake-up) per task, for comparison.
// Results are reported per task in docs/real-backends.md.
#include <benchmark/benchmark.h>

#include <atomic>

#include "models/scenario.hpp"
#include "models/workload.hpp"
#include "real/backend.hpp"
#include "real/runner.hpp"

namespace poolsim::real {
namespace {

Workload empty_tasks(std::size_t n) {
  Workload w;
  w.arrival = ArrivalKind::batch;
  w.tasks.resize(n);
  for (std::size_t i = 0; i < n; ++i) w.tasks[i].id = static_cast<std::uint32_t>(i);
  return w;
}

// Executes on the submitter itself: no hand-over, only the recording.
class InlineBackend final : public Backend {
 public:
  void start(RunContext& ctx) override { ctx_ = &ctx; }
  void submit(std::uint32_t task) override { ctx_->execute(task); }
  void stop() override {}

 private:
  RunContext* ctx_ = nullptr;
};

void record_empty_tasks(benchmark::State& state, bool per_task_cpu, bool trace) {
  constexpr std::size_t kTasks = 100000;
  const Workload w = empty_tasks(kTasks);
  Scenario s;
  s.backend.kind = BackendKind::pool;
  for (auto _ : state) {
    state.PauseTiming();
    ContextOptions co;
    co.per_task_cpu = per_task_cpu;
    co.trace = trace;
    RunContext ctx(s, w, co);
    InlineBackend b;
    ctx.register_current_thread("submitter");
    ctx.attach(&b);
    b.start(ctx);
    ctx.set_origin_now();
    state.ResumeTiming();
    for (std::uint32_t i = 0; i < kTasks; ++i)
      ctx.submit_now(i, Duration{0});  // a batch: due at the origin
    state.PauseTiming();
    if (!ctx.all_done()) state.SkipWithError("not every task finalized");
    ctx.unregister_current_thread();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kTasks));
}

void BM_RecordOnly(benchmark::State& st) { record_empty_tasks(st, false, false); }
void BM_RecordWithTaskCpu(benchmark::State& st) { record_empty_tasks(st, true, false); }
void BM_RecordWithTrace(benchmark::State& st) { record_empty_tasks(st, false, true); }

// Empty tasks through the real pool, the whole repetition (without fork):
// hand-over + recording per task.
void BM_PoolHandOff(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const Workload w = empty_tasks(n);
  Scenario s;
  s.backend.kind = BackendKind::pool;
  s.backend.threads = 1;
  s.backend.max_threads = 1;
  s.run.max_threads = 0;
  RealOptions opt;
  opt.sample_period = Duration{0};
  for (auto _ : state) {
    RunResult r = run_repetition(s, w, opt);
    benchmark::DoNotOptimize(r.records.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(n));
}

BENCHMARK(BM_RecordOnly)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RecordWithTaskCpu)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RecordWithTrace)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PoolHandOff)->Arg(20000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace poolsim::real

BENCHMARK_MAIN();
