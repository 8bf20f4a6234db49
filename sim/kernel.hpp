// kernel.hpp: the simulated operating system: CPUs, run queues, OS threads,
// wait queues, mutexes, timers and CFS bandwidth control.
//
// Glossary. A Thread is a simulated OS thread whose body is a coroutine (Co)
// that co_awaits kernel operations; a Cpu runs at most one thread at a time
// and keeps a run queue; a WaitQueue is a futex/condition variable; a Mutex is
// a lock with a FIFO wait queue.
//
// Thread states and their transitions (named like the kernel's):
//   runnable  --pick--> running --slice end / throttle--> runnable|throttled
//   running --wait/sleep/lock contention--> blocked --wake/timeout--> runnable
//   running --body done + thread_exit cost--> exited
//   runnable on a throttled group's run queue = throttled.
//
// Mechanisms (Linux 6.6+ EEVDF, kernel/sched/fair.c, and
// docs/simulator.md, "Mechanisms and their sources"; each with the profile
// field it uses):
// - Fair share: every thread is nice 0 (weight 1024), so vruntime advances
//   1:1 with CPU time and the queue's virtual time V (avg_vruntime) is the
//   plain mean of the vruntimes of the queued threads and the current one.
//   Each CPU keeps that sum relative to its min_vruntime, like the kernel's
//   cfs_rq->avg_vruntime / avg_load (avg_vruntime_add/_sub, and
//   avg_vruntime_update when min_vruntime moves), so V costs O(1).
// - Pick (pick_eevdf): the eligible thread (vruntime <= V) with the earliest
//   virtual deadline. A thread's deadline is vruntime + slice
//   (update_deadline, and place_entity on a wake), except a new thread's
//   first one, vruntime + slice/2 (PLACE_DEADLINE_INITIAL). With only these
//   two offsets the deadline order within each kind is the vruntime order, so
//   a CPU keeps two heaps (threads that never ran, and the others) and the
//   eligible front with the earlier deadline is exactly pick_eevdf's choice.
// - New threads (wake_up_new_task -> place_entity with ENQUEUE_INITIAL; the
//   lag is 0 from __sched_fork, commit 86bfbb7ce4f6): a new thread starts at
//   the queue's V, not at its min_vruntime, with its first deadline half a
//   slice on: it runs after the threads owed service whose deadlines come
//   earlier, before the others, and its first run is half a slice.
// - Slice and tick: a running thread runs until its vruntime reaches its
//   deadline (a slice after it was picked; half a slice for a new thread's
//   first run); the deadline is only noticed at the next scheduler tick
//   (update_curr from task_tick_fair; HRTICK off), so runs round up to `tick`
//   (0 = tickless). At that tick the thread gets a new deadline a slice on
//   (update_deadline) and is preempted unless it is eligible and its deadline
//   is strictly the earliest (pick_eevdf). A thread alone on its CPU renews
//   its slice at ticks.
// - Wake-up preemption (check_preempt_wakeup_fair): RUN_TO_PARITY protects
//   the current thread from a woken one only until the vruntime it was
//   given when it was picked (set_protect_slice at set_next_entity, 6.17+:
//   se->vprot = its deadline then); a thread that keeps its CPU, running
//   alone or re-picked at a tick, renews its deadline (update_deadline) but
//   not its protection (put_prev_set_next_task skips set_next_task when
//   prev == next). Past that point, or when the woken thread's placement
//   left the current one ineligible (pick_eevdf drops an ineligible current
//   before it looks at the protection), a woken thread preempts when
//   pick_eevdf prefers it (eligible, earlier deadline). A wake whose current
//   thread has passed its deadline but not yet seen the tick also preempts
//   at once (update_curr in enqueue_task_fair). When the current thread is
//   the waker itself, resched_curr marks it and it is switched out on its
//   way back to user space (the end of its step), also when it then goes
//   to block: it
//   blocks when it next runs (Thread::block_pending), unless it was woken
//   meanwhile. A new thread's wake preempts only through update_curr in
//   enqueue_entity, which reschedules when other threads were queued and
//   the current one's deadline or protection has passed (what the creator
//   probes show; 6.18's check_preempt_wakeup_fair itself only keeps
//   NEXT_BUDDY off for WF_FORK). Left out: the process's task group,
//   reweighted at a new thread's enqueue while it has load on another CPU,
//   ends that protection now and then (docs/validation.md, "Thread churn
//   in a task group").
// - Wake placement (select_idle_sibling): the thread's previous CPU if idle,
//   else the CPU it used before that (recent_used_cpu) if idle, else the
//   first idle CPU scanning upwards from it among as many as SIS_UTIL leaves
//   (machine.sis_util: nr_idle_scan, rewritten at periodic balances from
//   the summed utilization, sim/sis_util.hpp), else the previous CPU's
//   queue (on a host that packs, wake_pack_util > 0, another CPU's if the
//   previous one holds two or more runnable threads and that one at most
//   one: busy_wake_cpu). A new thread (wake_up_new_task -> sched_balance_find_dst_cpu)
//   stays on its creator's CPU unless an idle CPU, or one better by
//   sched_balance_find_dst_group's group types and loads (PELT sums,
//   imbalance_pct 117), is found (fork_cpu; on a host that packs,
//   fork_pack_util keeps it there while that CPU is lightly used and nothing
//   is queued there). Starting on an idle CPU costs
//   `wakeup_latency + idle_exit` before the thread runs, or
//   `timer_idle_exit` when its timer fired on that CPU (its last: the timer
//   itself brings the CPU out of idle, timer_slack covers the rest of the
//   timer's path); a thread queued
//   behind a running one pays only the switch when it is picked (this covers
//   a wake onto the waker's own CPU). The searches (and the idle pull's
//   busiest queue, below) read CPU masks kept per load level
//   (sim/cpu_mask.hpp: find-first-set over 64-CPU words, wrapping from the
//   target like for_each_cpu_wrap), so an event costs the same on 2 or
//   1,024 CPUs; the choices are those of a scan in CPU order.
// - Wake-up packing (machine profile wake_pack_util, docs/simulator.md): a
//   thread woken by another thread goes to the waker's CPU instead, even
//   when another CPU is idle, while the waker's CPU utilization (its PELT
//   sum, below) is below
//   wake_pack_util and nothing is queued behind the waker there; a timer
//   wake counts the CPU whose timer fired (the sleeper's last CPU) as its
//   waker's. 0 = mainline placement.
// - The waker's cost: a thread that wakes another pays wake_cost of CPU
//   time, plus wake_ipi when the woken thread goes to another CPU (the
//   inter-processor interrupt); a creator placing its new thread on another
//   CPU that is idle pays wake_ipi + fork_activate (it enqueues the thread
//   there itself; a busy one finds it on its queue).
// - Sleepers: a thread that blocks records its lag V - vruntime
//   (update_entity_lag from dequeue_entity). One owed service (lag >= 0) is
//   dequeued and on its wake placed at V - lag * (n + 1) / n, its lag
//   clamped to a slice plus a tick (6.18's update_entity_lag:
//   cfs_rq_max_slice + TICK_NSEC) and inflated for its own effect on V
//   (place_entity, PLACE_LAG; n = threads on the queue, no lag on an empty
//   one). One that ran ahead (lag < 0) is, since 6.12, not dequeued
//   (DELAY_DEQUEUE): it stays on its CPU's queue, weighing in V (Cpu::delayed),
//   until a pick there, the CPU going idle, or the tick that ends the
//   protection of the thread that ran after it; then it leaves with lag 0
//   (DELAY_ZERO). Woken while delayed it is woken in place on that CPU
//   (ttwu_runnable, no select_task_rq) and requeue_delayed_entity takes its
//   lag against V before any update_curr, i.e. with the current thread at
//   the vruntime of its last update (a tick, a pick, an enqueue or dequeue
//   there): lag > 0 places it at that V, else it keeps its vruntime; the
//   wake-up check then brings the current thread up to date, and the time
//   it ran since becomes the woken thread's lead (kernel/sched/core.c
//   ttwu_runnable; fair.c requeue_delayed_entity). Its deadline a slice on
//   (vd_i = ve_i + r_i/w_i; the kernel keeps an old one).
// - A thread preempted by throttling restarts with a fresh slice
//   (simplified: the kernel keeps its deadline).
// - Idle balancing: a CPU that goes idle pulls one queued thread from the
//   CPU with the longest queue (newidle_balance), paying `migration_cost`;
//   with machine.newidle_random only as often as its recent newidle
//   balances succeeded (the proportional newidle balance, sim/newidle.hpp),
//   and never while the root domain's overloaded flag is clear.
//   The pulled thread takes its lag relative to V along (update_entity_lag
//   at the dequeue, clamped to a slice plus a tick; place_entity at the
//   enqueue, which drops it on the empty queue of the puller) and keeps its
//   deadline relative to its vruntime (PLACE_REL_DEADLINE). And at the
//   ticks (nohz_kick, on_nohz_balance): after a tick at which a busy CPU
//   has a thread queued while another CPU is idle, each idle CPU pulls the
//   same way, but not a thread that ran within cache_hot_time until more
//   than one such attempt of that CPU failed (task_hot, cache_nice_tries).
// - Busy balancing (busy_balance): a CPU running a thread balances at the
//   tick every get_sd_balance_interval(sd, busy) (CPU count ms x
//   busy_factor 16, in jiffies less one; doubled while balanced), pulling
//   from an overloaded CPU the queued threads least recently queued, not
//   cache-hot, until the load (or, with spare capacity here, utilization)
//   that evens the two is moved (sched_balance_rq, calculate_imbalance,
//   detach_tasks).
// - PELT (kernel/sched/pelt.c): every thread's utilization, runnable and
//   load averages (weights halving every 32 ms, continuous time), a CPU's
//   the sums over the threads attached to it: taken along by a thread that
//   moves, removed by one that exits; a new thread starts with
//   post_init_entity_util_avg's (the main thread with none).
// - Costs, charged as CPU time of the incoming thread before it proceeds:
//   `switch_cost` on every switch, `cache_refill` when it had been switched
//   out before, `migration_cost` when it resumes on another CPU than last.
//   `thread_create` is computed by the creator (spawn), plus stack_map for a
//   new stack and stack_map_remote while another CPU is busy
//   (stack_map_cost); a new thread's first run adds thread_start_idle when
//   the kernel put it on an idle CPU, and a new arena's arena_create_remote
//   while another CPU is busy; `thread_exit` by the exiting thread after
//   its body returned.
// - Timed waits wake `timer_slack` after their deadline (hrtimer slack: the
//   kernel may wake up to the slack late, never early; we take the bound).
// - Counters as the kernel counts them (__schedule): a switch away from a
//   thread that blocks is voluntary (nvcsw), from one that stays runnable
//   (slice end, wake-up preemption, throttling) involuntary (nivcsw). The
//   final switch of an exiting thread is not counted (its counts were folded
//   into the process in __exit_signal before).
// - CFS bandwidth (sim/bandwidth.hpp, as Linux 6.18 does it): one group
//   holds all the scenario's threads; a Bandwidth keeps the global pool
//   (quota per period, burst), each CPU's runtime taken from it in
//   `cfs_bandwidth_slice` slices and noticed at ticks, slack return and the
//   period and slack timers. It throttles one CPU at a time: that CPU's
//   running thread is preempted and its group threads wait on its queue (the
//   task-based throttle's limbo) until the timer unthrottles it; the CPU
//   looks idle to wake-up placement, a thread woken onto it waits there too,
//   and no other CPU pulls from it. Counted like cpu.stat (v1 and v2 alike):
//   nr_throttled per period whose timer found a throttled CPU, throttled
//   time per CPU from its first parked thread, nr_bursts and burst time.
// - A noisy neighbour (sim/group_share.hpp, limits.neighbour): a sibling
//   cgroup of CPU-bound threads with its own weight. On a CPU where its
//   threads sit, the root run queue splits the time between the two groups
//   by their weights (group entities under EEVDF); while the neighbour holds
//   the CPU (Cpu::foreign) the scenario's threads there wait as runnable, the
//   CPU is never idle to wake-up placement (its load counts the neighbour's
//   threads), an idle CPU may pull the waiting threads, and the scenario's
//   running thread is preempted when the neighbour's turn comes at a tick.
// - OS noise (sim/noise.hpp; profile noise_interval, noise_median,
//   noise_p99, noise_preempt): a CPU running a thread is interrupted at
//   seeded Poisson instants; until the stolen time has passed
//   (Cpu::stall_until) no thread on it progresses (account and arm skip the
//   stall), its slice end moves by as much, and an interruption that was a
//   switch to another task counts as the thread's involuntary switch.
// - Kernel work after thread exits (sim/exit_work.hpp; profile rcu_gp_length,
//   rcu_gp_interval, kthread_run): exits start RCU grace periods, whose
//   kthread's runs on a CPU running a thread stall it as noise does and
//   count as its involuntary switches.
// - limits.cpuset: only the listed CPUs exist for the scenario.
// - Memory (memory_peak, as the real runner measures it: anonymous memory
//   added after the main thread started): stack_touch per live thread other
//   than the main one (the submitter, in the real baseline), the runtime's
//   one-time memory from its first worker on (runtime_touch, or what the
//   runtime sets with set_runtime_memory: oneTBB's tbb_arena), glibc's
//   malloc arenas (malloc_arena for each arena the threads other than the
//   main one map: the most of them alive at once, up to
//   malloc_arenas_per_cpu x CPUs less the main arena; never released), the
//   stack the runtime's threads touch beyond stack_touch once they run
//   (set_worker_stack: the dynamic linker's lazy binding on the first ones,
//   Boost.Fiber's initialiser on every carrier; released at exit), and what
//   runtimes hold beyond threads (memory_add / memory_release: fibers, an
//   event loop's tasks, oneTBB's workers and task objects); the peak of the
//   sum over time.
//
// Left out (documented in docs/simulator.md): nice levels and weights,
// a delayed sleeper's weight in V and its own pick (DELAY_DEQUEUE, above),
// SMT/LLC topology (all CPUs share a cache, select_idle_sibling scans all),
// active balancing (pushing a running thread), and the memory of exited threads' stacks kept in
// glibc's stack cache.
//
// Invariants (POOLSIM_ASSERT, checked in Debug and sanitizer builds): a
// queue's avg_load counts its queued threads; each CPU sits in the load and
// pull indexes at its current load and queue length, and every indexed
// search gives the answer of a plain scan; thread states follow the
// transitions above; time never goes back (the engine's own check).
//
// Times inside the kernel are Duration (integer nanoseconds), virtual ones
// (vruntime, deadlines, lags) included; the M:N hook's wake instant stays
// in nanoseconds (UserScheduler::on_sleep), as do kNever's users outside.
//
// Thread rules: everything runs on the engine's single thread. A coroutine
// only runs inside Kernel::complete_op (called from a CPU event), while
// its CPU is marked executing; kernel operations it calls that touch that
// CPU defer their re-arming to the end of the resume.
#pragma once

#include <algorithm>
#include <chrono>
#include <coroutine>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "models/distribution.hpp"
#include "models/machine.hpp"
#include "models/result.hpp"
#include "models/rng.hpp"
#include "models/scenario.hpp"
#include "sim/bandwidth.hpp"
#include "sim/co.hpp"
#include "sim/cpu_mask.hpp"
#include "sim/engine.hpp"
#include "sim/exit_work.hpp"
#include "sim/group_share.hpp"
#include "sim/newidle.hpp"
#include "sim/noise.hpp"
#include "sim/run_queue.hpp"
#include "sim/step_series.hpp"
#include "sim/tick_grid.hpp"

namespace poolsim::sim {

using ThreadId = std::uint32_t;
inline constexpr ThreadId kNoThread = 0xffffffffu;

// record_wakee's state of a task (kernel/sched/fair.c: p->last_wakee,
// wakee_flips, wakee_flip_decay_ts): whom it woke last, how often it woke
// another than the last, halved at most once a second.
struct WakeeFlips {
  ThreadId last = kNoThread;
  std::uint32_t flips = 0;
  Duration decay_at{0};
};

// select_task_rq_fair's record_wakee(p) by `waker` at `now`, then
// wake_wide(p) for a wakee holding `wakee_flips`, in an LLC of `llc_size`
// CPUs: true when the wake is wide (no wake_affine). record_wakee halves
// the waker's flips when a second has passed since it last did ("only
// decay a single time"), and counts one flip when the wakee is not the one
// it woke last; wake_wide wants the smaller count to reach llc_size and the
// larger to be llc_size times the smaller.
inline bool wake_wide(WakeeFlips& waker, ThreadId wakee, std::uint32_t wakee_flips, Duration now,
                      std::uint32_t llc_size) {
  if (now > waker.decay_at + std::chrono::seconds(1)) {
    waker.flips >>= 1;
    waker.decay_at = now;
  }
  if (waker.last != wakee) {
    waker.last = wakee;
    ++waker.flips;
  }
  std::uint32_t master = waker.flips, slave = wakee_flips;
  if (master < slave) std::swap(master, slave);
  return slave >= llc_size && master >= slave * llc_size;
}
inline constexpr std::uint32_t kNoTask = TraceSpan::kNoTask;

enum class ThreadState : std::uint8_t { runnable, running, blocked, throttled, exited };

// The M:N hook. A runtime that multiplexes user-level threads on an OS thread
// (virtual threads on a carrier, tasks on an event loop) installs one with
// Kernel::set_user_scheduler. Every plain timed sleep (sleep_for /
// sleep_until) of that OS thread then goes to on_sleep first, with the
// sleeping coroutine, the instant the kernel's timer would fire (deadline +
// timer_slack) and whether the thread holds a mutex (`pinned`). on_sleep
// returns the coroutine the OS thread continues with (symmetric transfer:
// the user-level thread unmounts and the OS thread does not block), or a
// null handle: the sleep blocks the OS thread as usual (a pinned carrier, a
// blocked loop). Waits on a WaitQueue and lock contention never consult it.
// A park (Kernel::park, a wait for a permit of a bounded resource) goes to
// on_park the same way, with no deadline: the user thread unmounts until
// Kernel::unpark, which calls on_unpark with the task the parker named.
class UserScheduler {
 public:
  virtual std::coroutine_handle<> on_sleep(std::coroutine_handle<> h, std::int64_t wake_at,
                                           bool pinned) = 0;
  virtual std::coroutine_handle<> on_park(std::coroutine_handle<> h, bool pinned) = 0;
  virtual void on_unpark(std::uint32_t task) = 0;

 protected:
  ~UserScheduler() = default;
};

// A futex-like wait queue (FIFO); threads are linked through their Thread
// entries, so a queue is two words and waiting allocates nothing.
class WaitQueue {
 public:
  bool empty() const { return size_ == 0; }
  std::uint32_t size() const { return size_; }

 private:
  friend class Kernel;
  ThreadId head_ = kNoThread, tail_ = kNoThread;
  std::uint32_t size_ = 0;
};

// A mutex with direct hand-off: unlock gives ownership to the first waiter
// (FIFO) and wakes it.
class Mutex {
 public:
  bool locked() const { return owner_ != kNoThread; }
  ThreadId owner() const { return owner_; }

 private:
  friend class Kernel;
  ThreadId owner_ = kNoThread;
  WaitQueue waiters_;
};

// glibc 2.36's condition variable (std::condition_variable on this host;
// nptl/pthread_cond_common.c, pthread_cond_signal.c, pthread_cond_wait.c):
// waiters join group G2; a signal goes to a waiter of G1 that has none yet,
// and when every G1 waiter has had one it makes G2 the new G1
// (__condvar_quiesce_and_switch_g1), which first waits until no waiter of
// the old G1 holds a reference to it. A waiter holds its group's reference
// from before it blocks until it runs again after its wake-up (its
// __condvar_dec_grefs after futex_wait), so a signaller can block until a
// worker it woke earlier gets a CPU (perf on the quota scenario's real pool,
// 2026-12-07: the submitter blocked 198 times in a 3 s run, 0.9 ms each,
// in futex_wait under pthread_cond_signal). glibc 2.41 removed the wait.
// Kernel::cv_wait and Kernel::cv_try_signal drive it; a broadcast is left
// out (the runtimes broadcast only to stop).
class CondVar {
 public:
  // Waiters not back from their wait yet: blocked, or woken and not yet
  // run (what a pool's idle count holds until the worker runs again).
  std::uint32_t waiters() const { return refs_[0] + refs_[1]; }
  std::int64_t quiesce_waits() const { return quiesce_waits_; }

 private:
  friend class Kernel;
  WaitQueue group_[2];  // each group's blocked waiters without a signal
  std::uint32_t refs_[2] = {0, 0};
  std::uint8_t g1_ = 1;   // G1's index (a new condvar's G1 is 1, empty)
  WaitQueue signallers_;  // signallers waiting for G1 to quiesce
  std::int64_t quiesce_waits_ = 0;
};

// A thread (or a user thread) waiting to be handed something, such as a
// permit (models/resource_pool.hpp): Kernel::park waits, Kernel::unpark ends
// the wait. Lives where the parker keeps it (its coroutine frame) until
// unparked. `task` names the user thread for the M:N hook.
struct Parking {
  std::uint32_t task = 0xffffffffu;
  WaitQueue q;                    // the OS thread blocks here (no hook, or pinned)
  UserScheduler* user = nullptr;  // set when the hook unmounted the user thread instead
};

struct KernelOptions {
  bool trace = false;
  std::uint64_t seed = 1;  // the scenario's seed: OS noise draws from streams derived from it
  // The CFS period grid's phase against the run's start, as a fraction of
  // the period in [0, 1) (BandwidthParams::phase).
  double period_phase = 0;
  // The scheduler tick's phase against the run's start, as a fraction of
  // the tick in [0, 1): the ticks fall at phase x tick + k x tick. On a
  // machine the run starts at an arbitrary point between two ticks.
  double tick_phase = 0;
  // Where the run starts in the busy CPUs' balance intervals, as a fraction
  // of the shortest in [0, 1) (Kernel::busy_balance): CPU i last balanced
  // frac(phase + i x 0.618) of an interval before the start.
  double balance_phase = 0;
};

class Kernel {
 public:
  Kernel(Engine& engine, const MachineProfile& machine, const Limits& limits,
         KernelOptions opt = {});
  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  Engine& engine() { return engine_; }
  Duration now() const { return engine_.now(); }
  const MachineProfile& machine() const { return m_; }
  // The first tick after t = 0 (the ticks fall at tick_offset() + k x tick).
  Duration tick_offset() const { return tick_offset_; }
  int cpu_count() const { return static_cast<int>(cpus_.size()); }
  // What mapping a new stack costs the current thread now: stack_map, plus
  // stack_map_remote while another CPU is busy (a thread of the process or
  // the neighbour).
  Duration stack_map_cost() const;

  // The thread whose coroutine is executing (kNoThread outside a resume).
  ThreadId self() const { return current_; }
  // The CPU whose thread's coroutine is executing (-1 outside a resume).
  int current_cpu() const { return exec_cpu_; }

  // ---- awaitable operations (only inside a thread's coroutine) -----------
  struct ComputeAwait {
    Kernel& k;
    Duration d;
    bool await_ready() const noexcept { return d <= Duration{0}; }
    void await_suspend(std::coroutine_handle<> h) { k.request_compute(h, d); }
    void await_resume() const noexcept {}
  };
  struct WaitAwait {
    Kernel& k;
    WaitQueue* q;
    Duration deadline;  // absolute, or Duration{kNever}
    bool await_ready() const noexcept { return false; }
    std::coroutine_handle<> await_suspend(std::coroutine_handle<> h) {
      if (q == nullptr) {
        if (std::coroutine_handle<> next = k.user_sleep(h, deadline)) return next;
      }
      k.request_block(h, q, deadline);
      return std::noop_coroutine();
    }
    bool await_resume() const noexcept { return !k.timed_out_of_current(); }
  };
  // A wait on a CondVar: joins G2; on its return (the thread runs again)
  // it drops its group's reference, waking a signaller that waits for it.
  struct CvWaitAwait {
    Kernel& k;
    CondVar& cv;
    Duration deadline;  // absolute, or Duration{kNever}
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) { k.cv_block(h, cv, deadline); }
    bool await_resume() { return k.cv_resumed(); }
  };
  struct LockAwait {
    Kernel& k;
    Mutex& m;
    bool await_ready() { return k.try_lock(m); }
    void await_suspend(std::coroutine_handle<> h) {
      k.request_block(h, &m.waiters_, Duration{kNever});
    }
    void await_resume() const noexcept {}
  };
  struct ParkAwait {
    Kernel& k;
    Parking& p;
    bool await_ready() const noexcept { return false; }
    std::coroutine_handle<> await_suspend(std::coroutine_handle<> h) {
      if (std::coroutine_handle<> next = k.user_park(h, p)) return next;
      k.request_block(h, &p.q, Duration{kNever});
      return std::noop_coroutine();
    }
    void await_resume() const noexcept {}
  };
  // Where a new thread's stack comes from: the kernel's stack cache decides
  // (cache), or the caller already took a cached one (cached) or mapped one
  // (mapped), as thread per task does under the mmap lock.
  enum class StackSource : std::uint8_t { cache, cached, mapped };
  // A creation in flight: what the kernel makes when the creator's clone
  // ends (complete_op), and the thread it made.
  struct PendingSpawn {
    Co body;
    const char* role;
    bool fresh;
    ThreadId id = kNoThread;
  };
  // The creator computes the creation's cost; the new thread is made at its
  // end, in the kernel, so that a reschedule its enqueue asks for (the
  // creator's slice has passed) switches the creator out on its return from
  // clone, before its next instruction: it does not first run on in zero
  // time (take a lock, map the next stack). With no cost (idealised
  // profiles) the thread is made at once and the creator runs on.
  struct SpawnAwait {
    Kernel& k;
    Co body;
    const char* role;
    StackSource src = StackSource::cache;
    bool fresh = src == StackSource::mapped;  // creation_cost sets it for `cache`
    Duration cost = k.creation_cost(src, fresh);
    PendingSpawn pending{};
    bool await_ready() const noexcept { return cost.count() <= 0; }
    void await_suspend(std::coroutine_handle<> h) {
      pending = {std::move(body), role, fresh};
      k.request_spawn(h, cost, &pending);
    }
    ThreadId await_resume() {
      if (pending.id != kNoThread) return pending.id;
      return k.create_thread(std::move(body), role, fresh);
    }
  };

  // "No deadline", in nanoseconds (Duration{kNever} inside the kernel).
  static constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

  // CPU work of duration d (stretched by preemption and throttling).
  ComputeAwait compute(Duration d) { return {*this, d}; }
  // Zero simulated time, but the thread resumes from the engine's event loop
  // on a fresh native stack. Hosts of user-level threads (virtual threads,
  // event loops) chain symmetric transfers that compilers do not always turn
  // into tail calls (GCC 12 under AddressSanitizer does not), so the native
  // stack would grow with every task they run; they unwind it now and then.
  struct UnwindAwait {
    Kernel& k;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) { k.request_compute(h, Duration{0}); }
    void await_resume() const noexcept {}
  };
  UnwindAwait unwind_stack() { return {*this}; }
  // sched_yield: yield_cost of CPU, then yield_task_fair (the deadline one
  // slice further) and a pick: another eligible thread with an earlier
  // deadline takes the CPU (an involuntary switch of the yielder, as
  // __schedule counts it); alone, the yielder goes on.
  struct YieldAwait {
    Kernel& k;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) { k.request_yield(h); }
    void await_resume() const noexcept {}
  };
  YieldAwait yield_cpu() { return {*this}; }
  // The calling thread's body has computed `d` of its thread_exit itself
  // (a runtime that models a part of the exit, e.g. under a lock): the exit
  // computes only the rest.
  void prepay_exit(Duration d) { threads_[current_].exit_paid += d; }
  // A system call's kernel part. This guest runs PREEMPT_NONE (as do
  // PREEMPT_VOLUNTARY kernels wherever the code has no cond_resched): a
  // thread in the kernel is switched out only on its way back to user
  // space; it may still sleep inside (on a kernel lock). Thread per task
  // holds the mmap lock only inside one, so the lock's holder is never
  // switched out holding it (which would make every thread that runs
  // meanwhile sleep on it). `co_await leave_syscall()` is that way back
  // (exit_to_user_mode_loop): a reschedule asked for meanwhile (a tick
  // found its slice ended, a wake would preempt it) switches the thread
  // out there, whatever user-space lock it holds (glibc's stack cache
  // lock around its munmaps). Until 2026-12-05 it waited for the thread's
  // first computation after the call, which the stack cache's holder made
  // only after its unlock: the holder was never switched out holding it.
  struct LeaveSyscallAwait {
    Kernel& k;
    bool await_ready() { return !k.leave_syscall_resched(); }
    void await_suspend(std::coroutine_handle<> h) { k.request_compute(h, Duration{0}); }
    void await_resume() const noexcept {}
  };
  void enter_syscall() { threads_[current_].in_syscall = true; }
  [[nodiscard]] LeaveSyscallAwait leave_syscall() { return {*this}; }
  // Timed sleep: wakes d + timer_slack later.
  WaitAwait sleep_for(Duration d) { return {*this, nullptr, now() + d}; }
  WaitAwait sleep_until(Duration t) { return {*this, nullptr, t}; }
  // Blocks on q until notified (result true) or, with a timeout, until the
  // timeout plus timer_slack passed (false).
  WaitAwait wait(WaitQueue& q, std::optional<Duration> timeout = std::nullopt) {
    return {*this, &q, timeout ? now() + *timeout : Duration{kNever}};
  }
  WaitAwait wait_until(WaitQueue& q, Duration deadline) { return {*this, &q, deadline}; }
  LockAwait lock(Mutex& m) { return {*this, m}; }
  // pthread_cond_wait / pthread_cond_timedwait on a CondVar; true unless
  // the deadline passed.
  CvWaitAwait cv_wait(CondVar& cv) { return {*this, cv, Duration{kNever}}; }
  CvWaitAwait cv_wait_until(CondVar& cv, Duration deadline) { return {*this, cv, deadline}; }
  // While a signal must first wait for G1 to quiesce (cv_try_signal false):
  // blocks until the last reference to G1 is dropped.
  WaitAwait cv_quiesce(CondVar& cv) { return {*this, &cv.signallers_, Duration{kNever}}; }
  // Waits until unpark(p): a user thread on a host with an M:N hook
  // unmounts (UserScheduler::on_park), any other thread blocks (a voluntary
  // switch; the unparker pays the wake-up as for notify_one).
  ParkAwait park(Parking& p) { return {*this, p}; }
  // The current thread computes thread_create (plus kstack_alloc when its
  // CPU has no cached kernel stack, plus stack_map when the process's stack
  // cache has no stack for it), then a new thread running `body` exists and
  // is placed on a CPU; returns its id. The new thread's first CPU work is
  // thread_start, plus stack_fault on a freshly mapped stack. `src`: who
  // provides the stack (StackSource).
  SpawnAwait spawn(Co body, const char* role, StackSource src = StackSource::cache) {
    return {*this, std::move(body), role, src};
  }

  // ---- glibc's stack cache (nptl/nptl-stack.c) ------------------------------
  // The process's: a thread's stack goes back to it at the thread's exit
  // (queue_stack), and a creation takes a cached stack if one is free, else
  // maps a new one. A cached stack is free once its thread has exited: the
  // kernel clears the thread's tid at its exit (CLONE_CHILD_CLEARTID), and
  // get_cached_stack and __nptl_free_stacks skip a stack whose tid is set.
  // The cache holds machine.stack_cache bytes of blocks (a block: the
  // runtime's stack size and its guard page, set_thread_stack); a queueing
  // that takes it over unmaps free blocks, oldest first, until it is under
  // again or none is free (the cache then stays over its size). It starts
  // empty, as in a new process, so every runtime's first threads map
  // theirs (the creator computes stack_map, in spawn). Thread per task,
  // whose creations and exits contend for the mmap lock, drives it itself.
  void set_thread_stack(Bytes size);
  // True: a free cached stack was taken. False: the caller maps one (counted).
  bool take_cached_stack();
  // The current thread's stack into the cache at its exit path
  // (__nptl_deallocate_stack), not free until the thread exits. Returns how
  // many free stacks the caller unmaps to bring the cache under its size
  // (counted; 0 when it has room or no stack is free). Once per thread.
  int release_stack();
  // The current thread's body has ended as its real twin counts it: it
  // leaves the live-thread count (threads_peak, the threads series) now,
  // before the exit path its runtime models after it (the real runner
  // counts a thread from just before pthread_create to the end of its body;
  // glibc's exit path runs after). Once per thread; do_exit does not count
  // it out again.
  void body_ended();
  std::int64_t stacks_mapped() const { return stacks_mapped_; }
  std::int64_t stacks_unmapped() const { return stacks_unmapped_; }
  std::int64_t stacks_cached() const { return stacks_cached_; }

  // ---- instantaneous operations (from a coroutine) -----------------------
  bool notify_one(WaitQueue& q);
  // notify_one by the waiter's own timer (no waker; the timed-sleep wake
  // path: timer_idle_exit on an idle CPU, the interrupt on a busy one).
  bool timer_notify_one(WaitQueue& q);
  int notify_all(WaitQueue& q);
  // pthread_cond_signal: wakes a G1 waiter, or, with every G1 waiter
  // signalled, makes G2 the new G1 and wakes one of it; true when done (a
  // waiter woken, or none to wake). False while the old G1 still holds a
  // reference: the caller waits in cv_quiesce and calls again. As
  //   while (!k.cv_try_signal(cv)) co_await k.cv_quiesce(cv);
  bool cv_try_signal(CondVar& cv);
  void unlock(Mutex& m);
  // Ends the wait of a thread (or user thread) parked on p.
  void unpark(Parking& p);
  // Creates a thread at no cost to its creator: the process's main thread,
  // or a spawn's thread once its creator paid. The first one starts at once
  // on the first CPU, later ones are placed like a new thread and start with
  // thread_start (plus stack_fault with `fresh_stack`) of their own.
  ThreadId create_thread(Co body, const char* role, bool fresh_stack = false);
  // Tags the current thread's running spans with a task (trace only).
  void set_task(std::uint32_t task);
  // Installs (or, with nullptr, removes) the M:N hook of OS thread t.
  void set_user_scheduler(ThreadId t, UserScheduler* s) { threads_[t].user = s; }

  // ---- memory (memory_peak) -----------------------------------------------
  // Bytes a runtime holds beyond its threads' stacks, from now on / no longer.
  void memory_add(Bytes b);
  void memory_release(Bytes b);
  // Heap objects of a runtime (its task objects): memory_add, and the CPU
  // the calling thread must compute for the first touch of the pages the
  // heap grows into past its high-water mark (machine.page_fault per page;
  // pages freed objects leave behind are reused without faults, as malloc's
  // free lists and oneTBB's object pools reuse them). heap_release is their
  // memory_release.
  [[nodiscard]] Duration heap_touch(Bytes b);
  void heap_release(Bytes b);
  // One thread's own malloc arena (an event loop's: the loop thread
  // allocates its tasks' objects). With machine.arena_header set, its
  // objects fill the rest of the arena's first page (malloc_arena counts that
  // page), then whole pages, each counted and faulted in (page_fault) when
  // the objects first reach it and kept to the end of the run: glibc keeps
  // freed chunks below the trim threshold resident. With arena_header 0,
  // heap_touch and heap_release.
  struct ArenaHeap {
    Bytes used = 0, high = 0;  // the objects' bytes now, at most
  };
  [[nodiscard]] Duration arena_touch(ArenaHeap& h, Bytes b);
  void arena_release(ArenaHeap& h, Bytes b);
  // The runtime's one-time memory, counted when its first thread (the first
  // after the main one) is created; machine.runtime_touch unless set here
  // before that.
  void set_runtime_memory(Bytes once) { runtime_memory_ = once; }
  // The stack the runtime's threads touch beyond stack_touch when they run:
  // each thread other than the main one, at its first run, adds at most
  // `each` until `total` is spent over the run (machine.worker_stack and the
  // runtime's *_stack; nothing unless a runtime sets it).
  void set_worker_stack(Bytes each, Bytes total) {
    worker_stack_each_ = each;
    worker_stack_left_ = total;
  }

  // ---- observation -------------------------------------------------------
  Duration thread_cpu_time(ThreadId t) const { return threads_[t].cpu_time; }
  ThreadState state_of(ThreadId t) const { return threads_[t].state; }
  std::int64_t voluntary_of(ThreadId t) const { return threads_[t].nvcsw; }
  std::int64_t involuntary_of(ThreadId t) const { return threads_[t].nivcsw; }
  int live_threads() const { return live_; }
  std::size_t threads_created() const { return threads_.size(); }

  // Closes open spans and intervals at now() and writes counters, series and
  // trace into r (records are the driver's).
  void finish(RunResult& r);

 private:
  enum class CpuState : std::uint8_t { idle, waking, running };
  enum class Req : std::uint8_t { none, compute, block };
  enum class Op : std::uint8_t { resume, exit };
  // A CPU's pending timers: expiry -> the thread that armed it.
  using PendingTimers = std::multimap<Duration, ThreadId>;

  struct Thread {
    std::coroutine_handle<> top;   // the body's frame (owned)
    std::coroutine_handle<> cont;  // where to resume after the current op
    const char* role = "";
    ThreadState state = ThreadState::runnable;
    Req req = Req::none;
    Op op = Op::resume;
    bool ran = false;
    bool timed_out = false;
    bool throttled_mark = false;
    int cpu = -1;       // CPU it runs or is queued on
    int last_cpu = -1;  // CPU it last ran on
    // p->recent_used_cpu: its previous CPU as of its last wake that got as
    // far as select_idle_sibling's look at it (Kernel::select_idle_sibling).
    int recent_cpu = -1;
    // As a waker (wake_wide); a new thread starts with its creator's
    // (dup_task_struct copies the task, and nothing in the fork resets it).
    WakeeFlips wakees;
    Duration vruntime{0};  // absolute (when blocked: when it blocked)
    Duration lag{0};       // V - vruntime when it last blocked (vlag)
    // DELAY_DEQUEUE: it blocked behind V (lag < 0) while another thread took
    // its CPU, so it stays queued there, delayed (in Cpu::delayed), until the
    // CPU's next pick (delay_pick), the CPU going idle, or the tick that ends
    // the protection of the thread that ran after it (delay_end).
    bool delayed = false;
    // Preempted between asking to block and blocking (by a thread it woke):
    // it blocks when it next runs, unless woken before.
    bool block_pending = false;
    // In a sched_yield: at the end of its yield_cost the CPU picks anew.
    bool yield_pending = false;
    // In pthread_create: at the end of its cost the kernel makes the thread.
    PendingSpawn* spawn = nullptr;
    // Between enter_syscall and leave_syscall: not switched out.
    bool in_syscall = false;
    Duration exit_paid{0};  // part of thread_exit its body computed already (prepay_exit)
    std::uint64_t delay_pick = 0;
    Duration delay_end{0};
    Duration deadline{0};  // virtual deadline, absolute when queued/running
    Duration overhead{0};  // switch costs still to run before it proceeds
    Duration work{0};      // compute still to run
    Duration cpu_time{0};
    std::int64_t nvcsw = 0, nivcsw = 0;
    // PELT of this thread (pelt_thread_update): utilization, runnable and
    // load averages in CPUs as of pelt_t, held in the sums of CPU pelt_cpu
    // (-1: not attached yet, or exited); pelt_born once post_init gave it
    // its initial averages.
    Duration pelt_t{0};
    double pelt_util = 0, pelt_runnable = 0, pelt_load = 0;
    int pelt_cpu = -1;
    bool pelt_born = false;
    EventId timer;
    // Its pending timer in the armed CPU's Cpu::timers (kept only with
    // timer_program, timer_idle_run or hrtimer_slack > 0): the CPU, -1 if
    // none, and its entry there (valid while timer_cpu >= 0).
    int timer_cpu = -1;
    PendingTimers::iterator timer_entry;
    UserScheduler* user = nullptr;  // M:N hook (set_user_scheduler)
    std::uint32_t locks_held = 0;   // mutexes it owns (a sleep then pins)
    Bytes stack_extra = 0;          // stack beyond stack_touch (set_worker_stack)
    bool stack_released = false;    // its stack went back already (release_stack)
    bool stack_queued = false;      // in the cache, reusable once its exit clears the tid
    bool counted_out = false;       // left the live count before its exit (body_ended)
    bool new_arena = false;         // its first malloc maps an arena (arena_on_thread_start)
    WaitQueue* wq = nullptr;
    ThreadId wq_next = kNoThread, wq_prev = kNoThread;
    CondVar* cv = nullptr;  // holds a reference to group cv_group of it (CondVar)
    std::uint8_t cv_group = 0;
    // trace
    Duration since{0};
    // When it last stopped running: a queued thread's exec_start, which
    // load balancing's task_hot compares with cache_hot_time.
    Duration ran_until{0};
    std::uint32_t task = kNoTask;
  };
  // What of thread_exit the exit path itself runs: the rest of what its body
  // prepaid (prepay_exit).
  Duration exit_run(const Thread& t) const {
    return std::max(Duration{0}, m_.thread_exit - t.exit_paid);
  }

  struct Cpu {
    int hw = 0;
    CpuState state = CpuState::idle;
    bool throttled = false;  // the Bandwidth throttled this CPU: its queue waits
    bool foreign = false;    // the neighbour's group holds this CPU: its queue waits
    int neighbours = 0;      // neighbour threads on this CPU (GroupShare)
    bool need_resched = false;
    bool wake_resched = false;  // a thread it woke preempts the current one (the waker)
    ThreadId curr = kNoThread;
    // Queued threads (not the current one, not the delayed ones): the pick
    // is EEVDF's (sim/run_queue.hpp).
    RunQueue rq;
    Duration min_vruntime{0};
    // avg_vruntime bookkeeping over both heaps (not the current thread):
    // sum of (vruntime - min_vruntime) and count, like avg_vruntime/avg_load.
    Duration avg_sum{0};
    std::int64_t avg_n = 0;
    Duration seg_start{0};    // start of the unaccounted run
    Duration stall_until{0};  // OS noise: no thread progresses here before this
    // When it last stopped running a thread (machine.idle_refill): what the
    // next thread to start here refills depends on how long it idled.
    Duration idle_since{0};
    // Expiries of the threads' timers armed here and pending, and whose
    // they are (kept only when machine.timer_program, timer_idle_run or
    // hrtimer_slack > 0: note_timer_armed).
    PendingTimers timers;
    // Its last timer interrupt (Kernel::timer_interrupt): long ago at first.
    Duration last_timer_irq{std::numeric_limits<std::int64_t>::min() / 2};
    EventId noise_ev;         // the CPU's next OS interruption (while it runs a thread)
    Duration slice_end{0};    // wall time the current thread reaches its deadline
    Duration protect_end{0};  // wall time its wake-up protection ends (RUN_TO_PARITY, vprot)
    std::uint64_t picks = 0;  // threads started here, each after a pick
    // Delayed entities (DELAY_DEQUEUE): blocked threads still queued here,
    // not runnable, counted in avg_sum/avg_n (they weigh in V).
    std::vector<ThreadId> delayed;
    // The kernel's last update_curr of the current thread (a pick, an
    // enqueue or dequeue here; ticks are implied): when, and its vruntime.
    Duration upd_at{0};
    Duration upd_v{0};
    EventId ev;
    // sd->nr_balance_failed of this CPU's domain: its periodic balances
    // (idle or busy) that found only cache-hot threads to pull.
    int lb_failed = 0;
    // Its periodic balance while busy (Kernel::busy_balance): the domain's
    // balance_interval in ms (sd->balance_interval: from the CPU count,
    // doubled up to twice that while balanced), the tick of its last
    // balance, and the pending balance (armed while it runs a thread).
    int balance_ms = 0;
    Duration last_balance{0};
    EventId balance_ev;
    // The success statistics of this CPU's newidle balances (the
    // proportional newidle balance, machine.newidle_random; sim/newidle.hpp).
    NewidleStats newidle;
    Duration span_start{0};  // trace: current running span on this CPU
    int load_level = -1;     // its level in load_idx_ (reindex)
    int pull_level = -1;     // its level in pull_idx_, -1: absent
    // PELT sums over the threads attached here (Thread::pelt_cpu), in CPUs
    // (1 = 1024 in the kernel), as of pelt_t; how many of those threads run
    // and are runnable since (pelt_cpu_update).
    double util = 0, runnable = 0, load = 0;
    // The neighbour's group entity's share of this CPU's sums (the kernel's
    // root cfs_rq holds both groups): its utilization, the PELT average of
    // the time it held the CPU (`foreign`, as of pelt_t); always runnable,
    // it adds its thread count to the runnable sum and its group weight
    // here (GroupShare::neighbour_weight / 1024) to the load.
    double nb_util = 0, nb_load = 0;
    Duration pelt_t{0};
    int pelt_running = 0, pelt_runnable = 0;
    int kstacks = 0;  // freed kernel stacks cached here (machine.kstack_cache)
  };

  // coroutine requests
  void request_compute(std::coroutine_handle<> h, Duration d);
  void request_yield(std::coroutine_handle<> h);
  void request_spawn(std::coroutine_handle<> h, Duration cost, PendingSpawn* p);
  bool finish_spawn(Cpu& c);
  bool act_on_resched(Cpu& c);
  bool leave_syscall_resched();
  // The creator's CPU cost of a thread creation it starts now: the memory an
  // exit freed, or thread_create_fresh more; a kernel stack from its CPU's
  // cache, or kstack_alloc (copy_process -> dup_task_struct ->
  // alloc_thread_stack_node).
  // And a stack from the process's stack cache, or stack_map (src = cache;
  // `fresh` says which).
  Duration creation_cost(StackSource src, bool& fresh);
  // An exiting thread's stack back to glibc's cache, free at once (the exit
  // clears the tid); free blocks over the cache's size unmapped (counted).
  // The exit of a thread whose runtime did not release its stack itself.
  void return_stack();
  // Its stack, queued by release_stack, becomes free: its exit cleared the tid.
  void free_queued_stack(Thread& t);
  // __nptl_free_stacks: free cached stacks unmapped while the cache is over
  // its size (counted); returns how many.
  int trim_stack_cache();
  void request_block(std::coroutine_handle<> h, WaitQueue* q, Duration deadline);
  void cv_block(std::coroutine_handle<> h, CondVar& cv, Duration deadline);
  bool cv_resumed();
  bool try_lock(Mutex& m);
  bool timed_out_of_current() const { return threads_[current_].timed_out; }
  std::coroutine_handle<> user_sleep(std::coroutine_handle<> h, Duration deadline);
  bool notify_first(WaitQueue& q, bool by_timer);
  std::coroutine_handle<> user_park(std::coroutine_handle<> h, Parking& p);

  // events
  static void on_cpu_event(void* self, std::uint64_t cpu);
  static void on_timer(void* self, std::uint64_t thread);
  static void on_bandwidth(void* self, int cpu, bool throttle);
  static void on_noise(void* self, std::uint64_t cpu);
  // Kernel work after exits (sim/exit_work.hpp; exit_work.cpp): an exit
  // queues its task's freeing behind a grace period; the grace period's
  // kthread runs and its end; a kernel thread's run taking CPU `cpu` from
  // the thread running there, if any.
  void exit_work_note();
  void exit_work_start_gp();
  static void on_gp_run(void* self, std::uint64_t);
  static void on_gp_end(void* self, std::uint64_t);
  void kthread_takes(int cpu);
  // OS noise and kernel threads: CPU `c`'s running thread stalls for
  // `stolen`, an involuntary switch when `preempts` (call after account()).
  void stall(Cpu& c, Duration stolen, bool preempts);
  void timer_interrupt(Cpu& tc, int dest);
  static void on_group_share(void* self, int cpu, bool run);
  static int group_runnable_on(const void* self, int cpu);
  static double group_load_on(void* self, int cpu);

  // CPU state machine
  void account(Cpu& c);
  void update_min_vruntime(Cpu& c);
  void arm(Cpu& c);
  void refresh_slice(Cpu& c);
  // The first tick at or after `t`; the last at or before it (tick_offset_
  // + k x tick; `t` itself without a tick).
  Duration round_to_tick(Duration t) const;
  Duration last_tick_at(Duration t) const;
  // The id of a thread of threads_ (its index).
  ThreadId id_of(const Thread& t) const { return static_cast<ThreadId>(&t - threads_.data()); }
  void note_timer_armed(Thread& t, Duration at);
  void note_timer_gone(Thread& t);
  void expire_timer(ThreadId id);
  // A timer interrupt in progress (on_timer): its CPU and what the wakes it
  // made there asked of the current thread.
  struct Irq {
    int cpu = -1;
    bool deadline_passed = false;
    bool preempts = false;
  };
  Irq irq_;
  void expire_due_with(int cpu);
  void act_on_wake(Cpu& c, bool deadline_passed, bool preempts);
  Duration next_tick_at() const;
  Duration first_timer_on(int cpu) const;
  bool yield_switches(Cpu& c);
  void complete_op(Cpu& c);
  void switch_out(Cpu& c, bool voluntary);
  void block_now(Cpu& c, ThreadId id);
  void preempt(Cpu& c);
  void resched(Cpu& c);
  void pick_next(Cpu& c);
  void start_on(Cpu& c, ThreadId t);
  // Pulls the thread queued longest ago on the busiest queue onto `c`; a
  // cache-hot one (it ran within cache_hot_time) only after more than
  // kCacheNiceTries periodic attempts failed (`periodic`: counts them).
  bool pull(Cpu& c, bool periodic = false);
  bool newidle_balance(Cpu& c);
  // Moves queued entry `e` of CPU `s` onto the queue of `c` (detach_task +
  // attach_task): its lag and relative deadline go along.
  void migrate_queued(Cpu& s, const RqEntry& e, Cpu& c);
  // The periodic balance of a busy CPU (sched_balance_domains from the tick,
  // CPU_NOT_IDLE): arm_busy_balance when the CPU starts running threads,
  // on_busy_balance at the tick it is due, busy_balance the balance itself
  // (true if it moved threads), detach_tasks its moves (how many);
  // busy_balance_ticks its interval in ticks.
  void arm_busy_balance(Cpu& c);
  static void on_busy_balance(void* self, std::uint64_t cpu);
  bool busy_balance(Cpu& c);
  int detach_tasks(Cpu& s, Cpu& l, double imbalance, bool by_util);
  std::int64_t busy_balance_ticks(const Cpu& c) const;
  // The nohz idle balance (balance_idle): armed when a busy CPU has a
  // queued thread while another CPU is idle.
  void nohz_kick();
  static void on_nohz_balance(void* self, std::uint64_t);
  void do_exit(Cpu& c);

  // run queues
  static bool rq_empty(const Cpu& c) { return c.rq.empty(); }
  static std::size_t rq_size(const Cpu& c) { return c.rq.size(); }
  bool has_curr(const Cpu& c) const { return c.state != CpuState::idle && c.curr != kNoThread; }
  Duration avg_vruntime(const Cpu& c) const;
  Duration avg_vruntime_with(const Cpu& c, Duration curr_v) const;
  bool eligible(const Cpu& c, Duration v) const;
  Duration place(const Cpu& c, Duration lag) const;
  const RqEntry* rq_best(const Cpu& c) const;
  bool keep_current(Cpu& c);
  void rq_push(Cpu& c, ThreadId t);
  ThreadId rq_pop_min(Cpu& c);
  RqEntry rq_take(Cpu& c, const RqEntry& e);
  Duration current_deadline(Cpu& c);
  // `timer_cpu`: the CPU whose timer woke the thread (-1: another thread
  // or the creator woke it).
  void enqueue_woken(Cpu& c, ThreadId t, bool is_new, int timer_cpu = -1);
  void place_woken(Cpu& c, ThreadId t, bool is_new);
  void check_wakeup_preempt(Cpu& c, ThreadId woken, bool is_new, bool others_queued);
  bool wakeup_preempts(Cpu& c, ThreadId woken = kNoThread);
  void note_update(Cpu& c);
  Duration stale_avg_vruntime(const Cpu& c) const;
  bool still_delayed(const Thread& t) const;
  void mark_delayed(Cpu& c, ThreadId id);
  void undelay(Cpu& c, ThreadId id);
  void expire_delayed(Cpu& c);

  // wake-ups and waits
  // waker_cpu < 0 with by_timer: the thread's own timer woke it.
  void wake(ThreadId t, int waker_cpu, bool by_timer = false);
  void charge_waker(Duration cost);
  void place_new(ThreadId t, int creator_cpu);
  int fork_cpu(int creator_cpu);
  int least_loaded_other(int cpu);
  int select_idle_sibling(Thread& t, int target);
  void update_idle_cpu_scan();
  void set_cpu_state(Cpu& c, CpuState s);  // every change of c.state goes through it
  // Every change of c.foreign after the start goes through it: the
  // neighbour's PELT average (nb_util) is brought up to now first.
  void set_foreign(Cpu& c, bool foreign);
  // PELT (kernel/sched/pelt.c): a CPU's sums and a thread's averages brought
  // up to now; a thread's averages moved to the sums of `cpu` (a placement
  // or a pull; the first one gives a new thread post_init_entity_util_avg's
  // initial averages); its state change counted in its CPU's sums.
  void pelt_cpu_update(Cpu& c);
  void pelt_thread_update(Thread& t);
  void pelt_attach(ThreadId id, int cpu);
  // The main thread's averages at t = 0 (machine.origin_util), attached to
  // `cpu`; then, once it is placed, the initial share of the thread the
  // process made before (seed_origin_helper, placed by fork_cpu).
  void seed_origin_pelt(ThreadId id, int cpu);
  void seed_origin_helper();
  void pelt_state(Thread& t, ThreadState to);
  static void pelt_detach(Cpu& c, const Thread& t);
  double cpu_util(int cpu);
  // Wake-up packing holds a wake on `cpu` (wake_pack_util; kernel.cpp).
  bool packs_wakes_onto(int cpu);
  int busy_wake_cpu(int prev);
  void reindex(Cpu& c);
  // A thread other than the main one starts: its malloc arena (memory).
  bool arena_on_thread_start();
  // Another CPU than `self` runs a thread of the process or the neighbour's.
  bool other_cpu_busy(int self) const;
  // Another CPU of the machine than `self` is idle (one outside the
  // scenario's cpuset counts as idle).
  bool machine_cpu_idle(int self) const;
  void worker_stack_on_first_run(Thread& t);
  // Queued threads plus the running one, plus the neighbour's threads; a
  // throttled, idle CPU's parked threads wait for the unthrottle and count
  // as none (placement sees it idle, as cpu_idle does, unless a neighbour
  // thread is there).
  static std::size_t cpu_load(const Cpu& c) {
    const auto nb = static_cast<std::size_t>(c.neighbours);
    if (c.throttled && c.state == CpuState::idle) return nb;
    return nb + rq_size(c) + (c.state != CpuState::idle ? 1 : 0);
  }
  bool cpu_idle(const Cpu& c) const {
    return c.neighbours == 0 && c.state == CpuState::idle && (rq_empty(c) || c.throttled);
  }
  void wq_push(WaitQueue& q, ThreadId t);
  ThreadId wq_pop(WaitQueue& q);
  void wq_remove(WaitQueue& q, ThreadId t);

  // bandwidth
  void park_throttled(Cpu& c);
  // neighbour: the scenario's group has no runnable thread on c any more /
  // got its first one there (GroupShare dequeue / enqueue)
  void group_idle(Cpu& c);
  void group_runnable(Cpu& c);
  void bw_stop(Cpu& c, bool empty);

  // bookkeeping
  void set_state(ThreadId t, ThreadState s);
  void open_cpu_span(Cpu& c);
  void close_cpu_span(Cpu& c, SpanKind kind, std::uint32_t thread, std::uint32_t task);

  Engine& engine_;
  EventId nohz_ev_;                // the next nohz idle balance (nohz_kick)
  std::uint32_t lane0_ = 0;        // the engine's lane of CPU 0 (CPU i's event: lane0_ + i)
  Duration tick_offset_{0};        // the first tick after t = 0 (KernelOptions::tick_phase), < tick
  std::uint32_t noise_lane0_ = 0;  // the same for the CPUs' noise_ev (with noise on)
  int running_cpus_ = 0;           // CPUs in CpuState::running (set_cpu_state)
  MachineProfile m_;
  NoiseSource noise_;
  ExitWork xw_;  // kernel work after exits (sim/exit_work.hpp)
  std::vector<Cpu> cpus_;
  // CPUs by load (queued + current): level 0 is the idle mask.
  LevelIndex load_idx_;
  // Non-idle CPUs with queued threads, by queue length (idle pulls).
  LevelIndex pull_idx_;
  // The root domain's overloaded flag (rd->overloaded): set when a CPU gets
  // a second runnable thread, rewritten by each balance that runs. A newly
  // idle CPU does not balance while it is clear.
  bool rd_overloaded_ = false;
  // SIS_UTIL (sd_llc_shared->nr_idle_scan): how many CPUs a wake-up's search
  // for an idle CPU looks at, rewritten by each periodic balance from the
  // CPUs' summed utilization (update_idle_cpu_scan). Every CPU at the start:
  // the machine was idle before the run.
  int nr_idle_scan_ = 0;
  Rng newidle_rng_;  // sched_rng(): the proportional newidle balance's dice
  // Timers the host holds back (timer_stall_share): their dice and extra.
  Rng timer_stall_rng_;
  Distribution timer_stall_;
  std::int64_t timer_stalls_ = 0;
  std::vector<Thread> threads_;
  ThreadId current_ = kNoThread;
  int exec_cpu_ = -1;
  std::uint64_t rq_seq_ = 0;

  int live_ = 0, live_peak_ = 0;
  Bytes memory_ = 0, memory_peak_ = 0;  // what memory_peak counts: now, at most
  Bytes heap_ = 0, heap_peak_ = 0;      // heap_touch's objects: now, high-water mark
  Bytes runtime_memory_ = 0;            // set_runtime_memory (runtime_touch by default)
  Bytes worker_stack_each_ = 0, worker_stack_left_ = 0;  // set_worker_stack
  std::int64_t stack_slots_ = 0;  // stacks the cache holds (set_thread_stack)
  // stacks_cached_: free cached stacks; stacks_dying_: cached stacks whose
  // threads have not exited yet (release_stack), not reusable.
  std::int64_t stacks_cached_ = 0, stacks_dying_ = 0, stacks_mapped_ = 0, stacks_unmapped_ = 0;
  std::int64_t exits_unreused_ = 0;  // exits whose memory no creation took yet
  bool created_ = false;             // the run made a thread (thread_create_first paid)
  int arena_threads_ = 0;  // live threads but the main one, each attached to a malloc arena
  int arenas_ = 0;         // malloc arenas mapped besides the main one (never unmapped)
  int active_ = 0;         // runnable + running + throttled threads
  bool yielding_ = false;  // switch_out of a thread in sched_yield
  StepSeries threads_series_, runnable_series_;

  std::unique_ptr<Bandwidth> bw_;   // CFS bandwidth control, with limits.cpus
  std::unique_ptr<GroupShare> gs_;  // the root against a neighbour, with limits.neighbour

  bool trace_ = false;
  Trace tr_;
};

}  // namespace poolsim::sim
