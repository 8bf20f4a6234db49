// work_stealing.hpp: the work-stealing runtime's variants, shared by
// sim/work_stealing.cpp (our ForkJoinPool-style runtime, twin of
// real/work_stealing.cpp) and sim/tbb.cpp (the oneTBB arena model), so the
// two differ only in the parameters below, never in a second copy of the
// worker loop.
#pragma once

#include <memory>
#include <optional>

#include "sim/runtime.hpp"

namespace poolsim::sim {

struct WorkStealingFlavor {
  int threads = 1;
  // Failed search rounds before a worker parks (models/steal_policy.hpp
  // spin_rounds for ours; stealing_loop_backoff's thresholds for oneTBB).
  int spin_rounds = 4;
  // CPU time of one failed round before the next search.
  Duration spin_cost{0};
  // From this many failed rounds on, each further failed round also calls
  // sched_yield (oneTBB's stealing_loop_backoff); -1: never.
  int yield_from = -1;
  // false: each submit wakes one parked worker; true: only the submit that
  // finds the arena empty wakes, and it wakes every parked worker (oneTBB's
  // advertise_new_work, adjust_demand(my_max_num_workers)).
  bool wake_all_when_empty = false;
  // true: a round tries every other worker once (StealPolicy::victim order);
  // false: one random victim per round (oneTBB arena::steal_task).
  bool all_victims_per_round = true;
  // true: workers are started in oneTBB's RML chain reaction (the first
  // submit starts two, each new worker starts up to two more); false: the
  // first submit starts all of them.
  bool chain_start = false;
  // CPU the submitting thread computes for a submit, before the task is in
  // a queue: from a thread outside the runtime (the submitter: the
  // injection queue; oneTBB's arena.enqueue) and from a worker (its own
  // deque; oneTBB's task_group::run), each with the harness's time stamp
  // and record. Plus machine.queue_handover_remote when a thread on another
  // CPU pushed or took a task last, anywhere in the runtime (the shared
  // state every push and take writes moves over). 0: a free submit, and no
  // remote extra either (the `default` profile).
  Duration push_cost{0};
  Duration spawn_cost{0};
  // What each worker's first submit from inside the runtime adds to
  // spawn_cost, once per worker (oneTBB: tbb_first_spawn, the thread's first
  // allocation from tbbmalloc); 0 for ours.
  Duration first_spawn_cost{0};
  // A worker's own CPU when it starts, before it looks for work (oneTBB:
  // tbb_worker_start).
  Duration worker_start_cost{0};
  const char* role = "worker";
  // Memory (memory_peak) beyond each thread's stack_touch: the runtime's
  // one-time memory with its first worker (nullopt: the kernel's
  // runtime_touch), each further worker's extra, and each task in a queue
  // that has not started.
  std::optional<Bytes> runtime_bytes;
  Bytes worker_bytes = 0;
  Bytes queued_task_bytes = 0;
  // Stack its workers touch beyond stack_touch once they run, in total (at
  // most machine.worker_stack each; Kernel::set_worker_stack): steal_stack
  // for ours, 0 for oneTBB (tbb_arena and tbb_worker were measured with it).
  Bytes worker_stack_total = 0;
};

std::unique_ptr<Runtime> make_work_stealing_runtime(const SimContext& ctx,
                                                    const WorkStealingFlavor& flavor);

}  // namespace poolsim::sim
