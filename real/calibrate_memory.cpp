// calibrate_memory.cpp: what each runtime allocates, measured by `poolsim
// calibrate` (docs/calibration.md, "Runtime memory").
// Each experiment runs a real backend (real/pool.cpp, real/virtual_threads.cpp,
// real/event_loop.cpp, real/tbb.cpp) through run_scenario, so every
// repetition is a fresh forked child measured exactly as `poolsim run`
// measures memory_peak (real/runner.cpp: anonymous memory added after the
// baseline): no stack from glibc's cache and no malloc arena of an earlier
// experiment in this process is reused. A figure is the median over the
// repetitions; a difference of two experiments subtracts their medians.
// Pages are 4 KiB, so every field is known to about a page per run (less
// per object where many objects share the difference).
//   runtime_touch    pool, 1 worker, 16 `cpu: 50us` tasks: memory_peak less
//                    stack_touch (the worker's stack).
//   fiber_touch      virtual threads, 1 carrier, a batch of 1,000 `wait:
//                    50ms` tasks (1,000 fibers asleep at once) less the same
//                    with 1 task, per fiber.
//   loop_task_touch  event loop, 1 loop, 2,000 such tasks less 1, per task.
//   tbb_arena        oneTBB, 1 thread, 16 `cpu: 50us` tasks: memory_peak
//                    less stack_touch.
//   tbb_worker       oneTBB, 2 threads less 1 thread, per extra worker the
//                    library started (threads_peak), less stack_touch; 0
//                    when it starts no second worker (one CPU).
//   tbb_task         oneTBB, 1 thread, a batch of 4,000 `cpu: 100us` tasks
//                    less 16 such tasks, per task: the batch is enqueued in
//                    a few ms, while the worker has run a few dozen.
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "models/scenario_loader.hpp"
#include "models/workload.hpp"
#include "real/calibrate_experiments.hpp"
#include "real/runner.hpp"

namespace poolsim::real::calib {

namespace {
struct MemoryRun {
  double memory = 0;   // median memory_peak, bytes
  double threads = 0;  // median threads_peak (submitter included)
};

// The real backend `backend` (a YAML flow map) on a batch of `count` tasks
// made of the single phase `phase`, `reps` forked repetitions after a warm-up.
MemoryRun backend_memory(const std::string& backend, int count, const std::string& phase,
                         int reps) {
  const std::string yaml = fmt::format(
      "name: calibrate-runtime-memory\nseed: 1\nmachine: default\n"
      "workload:\n  arrival: {{kind: batch, count: {}}}\n  task:\n    - {}\n"
      "backend: {}\nrun: {{reps: {}, warmup: 1, timeout: 60s}}\n",
      count, phase, backend, reps);
  const Scenario s = load_scenario_text(yaml, "<calibrate>");
  const Workload w = generate_workload(s);
  const std::vector<RunResult> runs = run_scenario(s, w, RealOptions{});
  std::vector<double> mem, threads;
  for (const RunResult& r : runs) {
    std::int64_t done = 0;
    for (const TaskRecord& rec : r.records) done += rec.outcome == TaskOutcome::completed;
    if (done < count)
      throw std::runtime_error("calibrate: a runtime-memory run completed too few tasks");
    mem.push_back(static_cast<double>(r.counters.memory_peak));
    threads.push_back(static_cast<double>(r.counters.threads_peak));
  }
  return {quantile(mem, 0.5), quantile(threads, 0.5)};
}

double kib(double b) { return b / 1024; }
}  // namespace

std::vector<Measurement> measure_runtime_memory(int reps, double stack_touch) {
  const std::string short_task = "cpu: 50us", sleep = "wait: 50ms";
  const MemoryRun pool = backend_memory("{kind: pool, threads: 1}", 16, short_task, reps);
  const MemoryRun vt1 = backend_memory("{kind: virtual-threads, carriers: 1}", 1, sleep, reps);
  const MemoryRun vtn = backend_memory("{kind: virtual-threads, carriers: 1}", 1000, sleep, reps);
  const MemoryRun el1 = backend_memory("{kind: event-loop, loops: 1}", 1, sleep, reps);
  const MemoryRun eln = backend_memory("{kind: event-loop, loops: 1}", 2000, sleep, reps);
  const MemoryRun tbb1 = backend_memory("{kind: tbb, threads: 1}", 16, short_task, reps);
  const MemoryRun tbb2 = backend_memory("{kind: tbb, threads: 2}", 16, short_task, reps);
  const MemoryRun tbbq = backend_memory("{kind: tbb, threads: 1}", 4000, "cpu: 100us", reps);
  const double extra_workers = tbb2.threads - tbb1.threads;
  const double tbb_worker =
      extra_workers > 0 ? std::max(0.0, (tbb2.memory - tbb1.memory) / extra_workers - stack_touch)
                        : 0.0;
  return {
      summarize("runtime_touch", {std::max(0.0, pool.memory - stack_touch)},
                fmt::format("real pool, 1 worker: memory_peak {:.0f} KiB less stack_touch "
                            "{:.0f} KiB (median of {} runs)",
                            kib(pool.memory), kib(stack_touch), reps)),
      summarize("fiber_touch", {std::max(0.0, (vtn.memory - vt1.memory) / 999)},
                fmt::format("real virtual threads, 1 carrier: 1,000 sleeping fibers {:.0f} KiB "
                            "less 1 fiber {:.0f} KiB, per fiber",
                            kib(vtn.memory), kib(vt1.memory))),
      summarize("loop_task_touch", {std::max(0.0, (eln.memory - el1.memory) / 1999)},
                fmt::format("real event loop, 1 loop: 2,000 tasks on timers {:.0f} KiB less 1 "
                            "task {:.0f} KiB, per task",
                            kib(eln.memory), kib(el1.memory))),
      summarize("tbb_arena", {std::max(0.0, tbb1.memory - stack_touch)},
                fmt::format("real oneTBB, 1 thread: memory_peak {:.0f} KiB less stack_touch",
                            kib(tbb1.memory))),
      summarize("tbb_worker", {tbb_worker},
                extra_workers > 0
                    ? fmt::format("real oneTBB, 2 threads {:.0f} KiB less 1 thread {:.0f} KiB, "
                                  "per extra worker ({:.0f}) less stack_touch",
                                  kib(tbb2.memory), kib(tbb1.memory), extra_workers)
                    : std::string("oneTBB started no second worker here (one CPU): 0")),
      summarize("tbb_task", {std::max(0.0, (tbbq.memory - tbb1.memory) / (4000 - 16))},
                fmt::format("real oneTBB, 1 thread: a batch of 4,000 tasks {:.0f} KiB less 16 "
                            "tasks {:.0f} KiB, per task",
                            kib(tbbq.memory), kib(tbb1.memory))),
  };
}

}  // namespace poolsim::real::calib
