// tbb.cpp: the oneTBB task arena, modelled as work stealing (the simulated
// twin of real/tbb.cpp, which runs the real library). It is the runtime of
// sim/work_stealing.cpp with the parameters oneTBB uses by default; nothing
// of the worker loop is copied.
//
// What oneTBB does and where it says so (uxlfoundation/oneTBB, src/tbb/):
// - one arena of `threads` slots, all for workers (real/tbb.cpp reserves
//   none for the submitter); tasks enqueued from outside go to the arena's
//   FIFO task stream, tasks spawned by a worker (tg.run from a completion) to
//   its own task pool, popped LIFO by the owner and stolen FIFO by others
//   (arena_slot.h, task_dispatcher.h receive_or_steal_task: local pool, then
//   the FIFO stream, then steal_task) -- the chain of models/steal_policy.hpp;
// - a steal attempt picks one random victim slot per round (arena.cpp
//   steal_task: random % (limit - 1), skipping itself), not every worker;
// - an idle worker backs off in stealing_loop_backoff (scheduler_common.h):
//   2 * (slots + 1) prolonged pauses, then 100 yields, then out_of_work()
//   and sleep (its comment wishes the spinning took about as long as a
//   wake-up; it takes what the pauses and yields take: tbb_pause per round,
//   and each yield either yield_cost alone or the CPU handed to another
//   thread, an involuntary switch);
// - workers are started by RML's chain reaction: private_server::wake_some
//   wakes or launches at most two workers (wakee[2]) and each new worker
//   propagates it (private_worker::run -> propagate_chain_reaction), so the
//   submitter creates two threads and the workers create the rest.
// - new work in an empty arena wakes every worker: advertise_new_work (arena.h)
//   moves the pool state from EMPTY to FULL, asks the market for all
//   my_max_num_workers (adjust_demand) and notifies the sleepers; a submit
//   into a FULL arena wakes nobody; the worker that finds no work anywhere
//   (is_out_of_work) sets it EMPTY again and the workers leave. So every
//   arrival into an idle arena wakes all workers, all but one spin (pauses,
//   then 100 sched_yield calls, which hand the CPU to each other) and sleep
//   again: the real library's switch counts (docs/validation.md).
// - a worker's first task_group::run is its thread's first allocation from
//   oneTBB's allocator (cache_aligned_allocate for the slot's task pool,
//   arena_slot.h allocate_task_pool, served by tbbmalloc, which sets up the
//   thread's heap then): tbb_first_spawn more, once per worker (a probe in
//   fresh processes: 33-75 us for the first run, 0.1-0.4 us for the next;
//   with a cache_aligned_allocate before it, the first run 0.5-0.9 us).
// Left out: the 1 ms delayed leave of oneTBB 2021.13+ (PR #1352; this
// machine's library is 2021.8), mailboxes and affinity, critical tasks, arena
// priorities.
// Memory (as real/tbb.cpp's library allocates it, measured by calibrate):
// tbb_arena once (the market, the arena, the first worker's dispatcher and
// the touched part of its 4 MiB stack beyond stack_touch), tbb_worker per
// worker beyond its stack_touch, tbb_task per enqueued task not yet started
// (its task object in the arena's stream or a worker's pool).
#include <algorithm>

#include "sim/work_stealing.hpp"

namespace poolsim::sim {

std::unique_ptr<Runtime> make_tbb(const SimContext& ctx) {
  WorkStealingFlavor f;
  f.threads = std::max(1, ctx.scenario.backend.threads);
  // stealing_loop_backoff: my_pause_threshold = 2 * (num_workers + 1) pauses,
  // then my_yield_threshold = 100 yields (Linux), then sleep.
  f.spin_rounds = 2 * (f.threads + 1) + 100;
  f.yield_from = 2 * (f.threads + 1);
  f.wake_all_when_empty = true;
  f.spin_cost = ctx.kernel.machine().tbb_pause;  // prolonged_pause; a steal attempt is free
  f.all_victims_per_round = false;
  f.chain_start = true;
  f.role = "tbb worker";
  const MachineProfile& m = ctx.kernel.machine();
  f.runtime_bytes = m.tbb_arena;
  f.worker_bytes = m.tbb_worker;
  f.queued_task_bytes = m.tbb_task;
  f.push_cost = m.tbb_enqueue;             // arena.enqueue: a task object into the arena's stream
  f.spawn_cost = m.tbb_spawn;              // task_group::run: a task object into the worker's pool
  f.first_spawn_cost = m.tbb_first_spawn;  // once per worker: its tbbmalloc heap
  f.worker_start_cost = m.tbb_worker_start;  // before its first arena entry
  return make_work_stealing_runtime(ctx, f);
}

}  // namespace poolsim::sim
