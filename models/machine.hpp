// machine.hpp: a machine profile, every parameter the simulator's kernel model
// uses. Nothing in sim/ hard-codes a cost: it reads this struct, and
// `poolsim calibrate` measures each field on a real machine. The list of
// fields with their kinds, meanings, how each is measured and which a file
// may leave out is models/machine_fields.hpp; a field added here is added
// there. The user's view is docs/scenarios.md ("Machine profiles").
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "models/units.hpp"

namespace poolsim {

struct MachineProfile {
  std::string name = "default";
  std::string source;  // the file it was read from, or "inline"
  int cores = 4;
  Duration slice{};           // scheduler base slice of a CPU-bound thread sharing a CPU
  Duration tick{};            // 1/HZ; 0 = ideal tickless model
  Duration switch_cost{};     // direct cost of one context switch
  Duration cache_refill{};    // extra cost after being switched out
  Duration migration_cost{};  // extra cost when resuming on another CPU
  // A queued thread that ran within this is cache-hot to load balancing
  // (task_hot: the kernel's sysctl_sched_migration_cost, debugfs
  // sched/migration_cost_ns; 0.5 ms by default).
  Duration cache_hot_time = std::chrono::microseconds(500);
  Duration wakeup_latency{};  // wake to running on another awake CPU
  Duration idle_exit{};       // extra when that CPU was idle
  Duration timer_slack{};     // added to every timed sleep
  // The thread's hrtimer slack (prctl PR_SET_TIMERSLACK, 50 us by default):
  // the part of timer_slack that a timer started without slack does not
  // wait (a timerfd: Asio's timers), the rest being the interrupt's way to
  // the woken thread.
  Duration hrtimer_slack{};
  // What a timer adds when it fires on an idle CPU: the halted vCPU must be
  // brought back before the sleeper runs there (a wake by another thread onto
  // an idle CPU costs wakeup_latency + idle_exit instead).
  Duration timer_idle_exit{};
  // The sleeper's own CPU for a timed sleep beyond the switches the model
  // charges (switch_cost, cache_refill): arming the hrtimer (on a PVM guest
  // its clock-event reprogramming exits to the hypervisor) and cancelling
  // it. Charged to a thread that blocks with a deadline, as overhead it runs
  // when it runs next (Kernel::request_block).
  Duration sleep_cost{};
  // The sleeper's extra CPU when the timer it arms expires before every
  // timer pending on its CPU, that CPU's next tick included: the hrtimer
  // becomes the base's first and hrtimer_reprogram writes the timer device
  // (lapic_next_deadline: an MSR write, which leaves a guest). 0: off.
  Duration timer_program{};
  // The sleeper's extra CPU when its own timer brings its idle CPU back with
  // no other timer pending there before the next tick: the idle exit
  // restarts the stopped tick (reprogramming the device), and the
  // wake-up's skipped clock update (wakeup_preempt -> rq_clock_skip_update,
  // the idle task counting as queued) bills that path to the woken thread.
  // 0: off.
  Duration timer_idle_run{};
  // The CPU a thread computes more when it starts on a CPU that idled longer
  // than kIdleRefillReference: while a vCPU is halted the host runs other
  // work on its core, which evicts the caches the guest left there, at a
  // steady rate until none of them is left after idle_evict_time; the first
  // thread to run after the idle refills them (the kernel's wake and switch
  // paths, its own stack and data). It computes idle_refill times the
  // evicted share, min(1, idle / idle_evict_time), beyond the share evicted
  // by kIdleRefillReference of idling (what the fields measured with 1 ms
  // sleeps, timer_idle_run among them, already hold). 0: off.
  Duration idle_refill{};
  Duration idle_evict_time{};
  // How much later than timer_idle_exit (measured after 1 ms of idling) a
  // timer brings back a CPU that idled longer: the same shape,
  // timer_idle_late x (min(1, idle / timer_idle_late_time) - min(1, 1 ms /
  // timer_idle_late_time)), 0 up to 1 ms (timer_idle_late_cost). On this
  // project's VM the timer's interrupt reached a vCPU halted 12 ms 111 us
  // after the timer's expiry against 57 us after 1 ms, and the idle CPU's
  // path from the interrupt to the woken thread running took 42 against 13
  // us (perf, timer:hrtimer_expire_entry and sched_switch, 2026-12-06).
  // 0: off.
  Duration timer_idle_late{};
  Duration timer_idle_late_time{};
  // The same for a wake by another thread (the IPI path): idle_exit is what
  // a CPU idle for 1 ms adds; one idle longer adds idle_exit_late x
  // (min(1, idle / idle_exit_late_time) - min(1, 1 ms /
  // idle_exit_late_time)) besides (idle_exit_late_cost). On this project's
  // VM a futex wake reached a thread on the idle CPU 1 in 19-20 us after
  // 20-300 us of idle, 22 after 1 ms, 48 after 5 ms and 95 after 20 ms
  // (bench/probes/idle_wake.cpp, 2026-12-07 14:25). 0: off (idle_exit then
  // holds the exit at whatever idle it was measured with).
  Duration idle_exit_late{};
  Duration idle_exit_late_time{};
  // Now and then the host holds back a timer that must wake a halted vCPU
  // for a millisecond or more (its vCPU thread is not run at once): a share
  // timer_stall_share of those wake-ups comes later by a lognormal time of
  // mean timer_stall_mean and median timer_stall_median, beyond the rest.
  // On this project's VM 0.05-4% of idle sleeps of 0.3-10 ms were 0.5 ms or
  // more late, 1.2-1.7 ms on average, the share changing within minutes
  // (probes of 2026-12-07); a sleeper kept awake showed none. 0: off.
  double timer_stall_share = 0;
  Duration timer_stall_mean{};
  Duration timer_stall_median{};
  // What a timer's interrupt takes from the thread running on the CPU where
  // it fires (the interrupt, the expiry, the wake-up of the sleeper onto that
  // CPU's queue); timers whose soft expiry has passed come with it.
  Duration timer_irq{};
  Duration thread_create{};  // CPU cost charged to the creator
  Duration thread_exit{};    // CPU cost charged to the exiting thread
  // The end of thread_exit that the process's CPU clock never counts: what a
  // thread runs after release_task folded its runtime into the process's
  // (__exit_signal) and unhashed it. 0: all of the exit counts.
  Duration exit_unaccounted{};
  // A new thread's own CPU before its function runs (ret_from_fork, rseq and
  // robust-list registration, the signal mask, TLS), on a cached stack; and
  // what it adds on a freshly mapped stack (the first touch of its pages).
  Duration thread_start{};
  Duration stack_fault{};
  // What that start adds when the new thread starts on another CPU than its
  // creator's (its first run where nothing of it is cached).
  Duration thread_start_remote{};
  // And more when that CPU was idle (the first run on a vCPU that halted).
  Duration thread_start_idle{};
  Bytes stack_reserve = 0;  // virtual stack per thread
  Bytes stack_touch = 0;    // memory actually touched per thread
  // A runtime's own CPU work per task (docs/calibration.md, "Runtime costs").
  // Added after the fields above: a profile without them takes the shipped
  // `default` profile's values (FieldPresence::from_default).
  Duration queue_handover{};  // one side (push or pop) of a hand-over through a locked queue
  // A futex system call that neither sleeps nor wakes a sleeper (a
  // contended queue lock's FUTEX_WAIT that finds the word changed, its
  // FUTEX_WAKE with nobody asleep; sim/queue_lock.hpp).
  Duration futex_call{};
  // How long after a waiter finds a queue lock held FUTEX_WAIT still puts it
  // to sleep: a release later than this makes it leave its CPU, an earlier
  // one lets it go on (the call returns EAGAIN, or the FUTEX_WAKE reaches it
  // before schedule() takes it off). 0: futex_call (sim/queue_lock.hpp).
  Duration futex_wait_check{};
  // The extra of a push or pop whose queue (lock word, deque) another CPU
  // touched last: its cache lines move to this CPU.
  Duration queue_handover_remote{};
  // The part of queue_handover spent holding the queue's lock (lock, push or
  // pop, unlock, uncontended); the rest is the side's own work outside it
  // (the harness's time stamps and record, the worker's loop). 0: the whole
  // of queue_handover under the lock (sim/queue_lock.hpp).
  Duration queue_lock_hold{};
  // The submitting side's part of a hand-over (the push with the harness's
  // time stamp and record); the taking side's is the rest of two
  // queue_handover (take_cost). 0: each side queue_handover.
  Duration queue_push{};
  // The submitter's part of a post to an event loop (Asio's post: the
  // handler's allocation, the outstanding-work count, the push under the
  // scheduler's mutex, with the harness's time stamp and record). 0:
  // push_cost, as a pool's push (post_cost).
  Duration loop_post{};
  // A task started on another CPU than the one its submitter handed it over
  // on: the CPU the starting thread spends as the task's record and the
  // runtime's per-task state come over from the other CPU's cache (sim
  // Driver::execute; calibrate: the real event loop, 2 loops against 1).
  Duration task_remote{};
  Duration yield_cost{};    // a sched_yield call that finds nothing else to run
  Duration arena_create{};  // a thread's first malloc when it maps a new malloc arena
  // Extra for arena_create while another CPU is busy (as stack_map_remote).
  Duration arena_create_remote{};
  // Extra for the first arena a process maps (the run's first: the runner's
  // children are forked, and each repetition's first runtime thread maps
  // it), beyond arena_create. 0: none.
  Duration arena_create_first{};
  // glibc's madvise(MADV_DONTNEED) of a dying thread's unused stack, under
  // the mmap lock for reading (part of thread_exit).
  Duration stack_madvise{};
  Duration tbb_pause{};  // oneTBB's prolonged_pause (1,000 TSC ticks of pause loops)
  // A submit into our work-stealing runtime (the submitter's push into the
  // injection queue, a worker's into its own deque), with the harness's time
  // stamp and record; oneTBB's arena.enqueue from the submitter and its
  // task_group::run from a worker (sim/work_stealing.cpp). 0: free.
  Duration steal_push{};
  // From a completion's release of the tasks it made ready (a graph's
  // successors, a closed client's next request) to the first one's
  // hand-over: the harness's second time stamp (the release's is the
  // first) and the record's store, on the completing thread (real/
  // run_context.cpp, release_successors; sim/driver.cpp). 0: none.
  Duration release_stamp{};
  Duration tbb_enqueue{};
  Duration tbb_spawn{};
  // A oneTBB worker's first task_group::run beyond tbb_spawn, once per worker
  // thread of a process: the first allocation from oneTBB's allocator on that
  // thread (tbbmalloc maps and faults in the thread's heap) and its slot's
  // task pool. 0: free.
  Duration tbb_first_spawn{};
  // A oneTBB worker's CPU from its start to its first arena entry beyond
  // thread_start, stack_fault and arena_create (the library's set-up of the
  // worker: its thread data, dispatcher and task pool, their pages faulted
  // in). 0: free.
  Duration tbb_worker_start{};
  Duration fiber_create{};  // a user-level thread's creation, first mount and end
  Duration fiber_switch{};  // one user-level switch: an unmount or a remount
  Duration timer_arm{};     // an event loop's wait: arm a timer, dispatch its completion
  // Thread stacks outside glibc's stack cache (docs/calibration.md, "Thread
  // stacks"): freed stacks are kept up to stack_cache bytes and reused; a
  // creation that finds none maps a new one, an exit that finds it full
  // unmaps its stack.
  Bytes stack_cache = 0;     // glibc.pthread.stack_cache_size (40 MiB by default)
  Duration stack_map{};      // mmap + guard mprotect + first touch of a new stack (creator)
  Duration stack_unmap{};    // munmap of a stack, the process on one CPU (exiting thread)
  Duration tlb_shootdown{};  // extra for that munmap when the process runs on several CPUs
  // Extra for stack_map while another CPU is busy, with a thread of the
  // process or another process's (the first touch's fault costs more).
  Duration stack_map_remote{};
  // Wake-up packing (docs/simulator.md, "Wake-up packing"; some hosts' guest
  // kernels keep woken threads on lightly used vCPUs instead of waking idle
  // ones): a thread woken by a thread on CPU w is placed on w, even when
  // another CPU is idle, while w's utilization (PELT-style, 32 ms half-life)
  // is below this fraction and nothing is queued behind the waker there; a
  // timer wake counts the timer's CPU (the sleeper's last) as w. 0 =
  // mainline Linux (an idle CPU is preferred).
  double wake_pack_util = 0;
  // Proportional newidle balance (the scheduler feature NI_RANDOM, Linux
  // 6.18.5 and 6.19 on): a CPU going idle balances only with a probability
  // that follows the recent success of its newidle balances. 1 = on, 0 = off
  // (a newly idle CPU always tries to pull).
  int newidle_random = 0;
  // SIS_UTIL (Linux 6.0 on): a wake-up whose target CPU is busy looks for an
  // idle CPU only among as many CPUs as the summed utilization of the
  // last-level cache leaves (none once the CPUs are 60% busy on average on
  // 2 CPUs, 85% with many), as the last periodic balance computed it. 1 =
  // on, 0 = off (every CPU is searched).
  int sis_util = 0;
  // glibc's condition variable (std::condition_variable; nptl, 2.25-2.40):
  // a signal that finds every waiter of the group G1 signalled and a waiter
  // in G2 waits until the G1 waiters it woke have run
  // (__condvar_quiesce_and_switch_g1; Kernel::CondVar). 1 = it waits, 0 =
  // it never does (glibc 2.41 on).
  int cv_quiesce = 0;
  // The submitter's PELT utilization at the origin: what the process ran
  // before t = 0 (the real runner's child: its setup after the fork). The
  // kernel places a run's first threads by
  // its CPUs' utilization (fork_pack_util, fork balancing's group types,
  // wake packing, SIS_UTIL), and the submitter's CPU holds this much of it,
  // with the initial share of the thread the process made just before the
  // origin (the runner's sampler, post_init_entity_util_avg's). 0 = a main
  // thread with no past and no such thread (the idealised profile).
  double origin_util = 0;
  // The same for a new thread (wake_up_new_task): kept on its creator's CPU
  // while that CPU's utilization is below fork_pack_util and nothing is
  // queued there, even when another CPU is idle; else the mainline choice
  // (find_idlest_cpu). 0 = mainline.
  double fork_pack_util = 0;
  // The waker's CPU cost of waking a blocked thread (a futex wake: enqueue
  // the thread, maybe preempt): wake_cost when it goes to the waker's CPU,
  // plus wake_ipi when it goes to another CPU (the inter-processor
  // interrupt; on a VM an APIC write that exits to the hypervisor). Charged
  // to the waking thread; timer wakes have no waker. A new thread placed on
  // another CPU costs its creator wake_ipi (the local part is in
  // thread_create).
  Duration wake_cost{};
  Duration wake_ipi{};
  // A creator whose new thread starts on another, idle CPU pays
  // fork_activate more than wake_ipi: wake_up_new_task takes that CPU's run
  // queue lock and enqueues the thread there itself (activate_task, then
  // wakeup_preempt's IPI), where a sleeper's wake onto an idle CPU only
  // queues it on that CPU's wake list and sends the IPI (ttwu_queue_wakelist:
  // the woken CPU does the enqueue). Kernel::place_new.
  Duration fork_activate{};
  // OS noise (sim/noise.hpp, docs/simulator.md "OS noise"): a busy CPU is
  // interrupted on average every noise_interval of its busy time; each
  // interruption takes a lognormal stolen time (median, p99) from the thread
  // running there, and a share noise_preempt of them are switches to another
  // task (an involuntary switch of that thread). noise_interval 0 = no noise
  // (idealised machines). noise_mean, when measured (not 0), replaces the
  // median: the lognormal then has the measured mean and p99 (the stolen
  // times here are bimodal, and the mean is what a busy CPU loses).
  Duration noise_interval{};
  Duration noise_median{};
  Duration noise_p99{};
  Duration noise_mean{};
  double noise_preempt = 0;
  // The same share while another CPU of the machine is idle: the waking
  // kernel threads and other processes behind most of those switches go to
  // the idle CPU instead (one spinner alone here: 2-4 a second, against
  // 5-30 with every CPU busy). 0 in a profile calibrated before it existed.
  double noise_preempt_idle = 0;
  // The share of that stolen time the kernel charges to the interrupted
  // thread anyway: its CPU time (getrusage, cpu_utilization). A kernel
  // without IRQ and steal time accounting charges all of it (this VM: 1);
  // its group's quota is charged either way (the CPU stays busy).
  double noise_charged = 0;
  // Kernel work thread exits leave behind (sim/exit_work.hpp, docs/simulator.md
  // "Kernel work after thread exits"): each exit queues its task's and
  // stack's freeing behind an RCU grace period (delayed_put_task_struct,
  // call_rcu). Exits start a grace period when none runs, and exits during
  // one start the next at its end; the grace-period kthread (rcu_preempt)
  // runs every rcu_gp_interval of its rcu_gp_length (beyond its runs
  // without exits). Each run on a CPU that runs a thread preempts it for
  // kthread_run plus two switches. rcu_gp_length 0 = off (idealised
  // machines, profiles calibrated before these fields).
  Duration rcu_gp_length{};
  Duration rcu_gp_interval{};
  Duration kthread_run{};
  // The work loop that executes `cpu` phases on hardware (real/cpu_work.hpp):
  // thread CPU time of kWorkLoopUnits (2^20) iterations. The real runner
  // sizes phases with it and checks the machine's speed against it
  // (real/speed_check.hpp); 0 = calibrate the loop in each run instead.
  Duration work_loop{};
  // The kernel's page-table paths (real/speed_check.hpp, kernel_round_time):
  // wall time of one round of mapping an 8 MiB thread stack with its guard
  // page, touching its top two pages and unmapping it, median of 101 rounds.
  // On this project's VMs these paths change speed by up to 2x while the
  // work loop does not; the runner checks each repetition against it.
  // 0 = not checked (the simulator does not read it).
  Duration kernel_canary{};
  // CFS bandwidth: the runtime a CPU takes from its group's quota pool at a
  // time (/proc/sys/kernel/sched_cfs_bandwidth_slice_us, 5 ms by default;
  // sim/bandwidth.hpp).
  Duration cfs_bandwidth_slice = std::chrono::milliseconds(5);
  // Memory of the runtimes beyond their threads' stacks (docs/simulator.md,
  // "Memory"; calibrate runs the real backends and reads the runner's
  // memory_peak, docs/calibration.md "Runtime memory").
  Bytes runtime_touch = 0;    // one-time, with a runtime's first thread
  Bytes fiber_touch = 0;      // per live user-level thread (Boost.Fiber fiber)
  Bytes carrier_touch = 0;    // per virtual-thread carrier beyond its stack (its dispatcher fiber)
  Bytes loop_task_touch = 0;  // per task alive in an event loop
  Bytes tbb_arena = 0;        // one-time for oneTBB (instead of runtime_touch)
  Bytes tbb_worker = 0;       // per oneTBB worker beyond its stack_touch
  Bytes tbb_task = 0;         // per task enqueued in a oneTBB arena, not yet started
  // The first touch of a page of anonymous memory the process never touched
  // before (the page fault: a zeroed page from the allocator, its page-table
  // entry; on a VM the host may have to back it too): the CPU the touching
  // thread spends per page. A runtime's per-task objects (tbb_task) fault
  // this way while the heap grows past its high-water mark; freed objects'
  // pages are reused without faults (Kernel::heap_touch). 0: off.
  Duration page_fault{};
  // Kernel stacks of threads (kernel/fork.c, CONFIG_VMAP_STACK): each CPU
  // keeps up to kstack_cache (NR_CACHED_STACKS, 2) freed kernel stacks; a
  // thread that dies returns its stack to the cache of the CPU it died on
  // (finish_task_switch -> put_task_stack), a creation takes one from its own
  // CPU's cache, and one that finds it empty allocates a new stack (vmalloc,
  // page-table setup, memcg charge): kstack_alloc more of the creator's CPU.
  // So a creator whose threads die on other CPUs pays it on every creation.
  int kstack_cache = 2;
  Duration kstack_alloc{};
  // A creation no exit of the process made room for: its thread's task,
  // kernel stack and page-table pages come new from the page allocator
  // instead of from a thread that died before it (slab and per-CPU page
  // lists recycle a dead thread's memory for the next creation). A runtime's
  // start, whose threads all stay alive, takes new memory for each; on a PVM
  // guest with free page reporting those are pages the host reclaimed. The
  // creator computes thread_create_fresh more for each creation beyond the
  // exits so far (Kernel::creation_cost).
  Duration thread_create_fresh{};
  // The run's first creation (the runtime's first thread; the process made
  // one thread before t = 0, as the runner's sampler is) costs its creator
  // thread_create_first more than the later ones: a process's creations are
  // dearer while it has made few (probe of 2026-12-04 in forked children on
  // one CPU: 76, 18, 19.5, then 11-13 us), and the runner's first hand-over
  // of a 2-worker pool on one CPU waited 33-47 us for its creation against
  // 18-25 us for the second's. Kernel::creation_cost.
  Duration thread_create_first{};
  // glibc's per-thread malloc arenas (malloc/arena.c): a thread's first
  // malloc takes a free arena (one whose threads exited) or, while the
  // process has fewer than malloc_arenas_per_cpu x its CPUs (the affinity
  // mask; NARENAS_FROM_NCORES, 8 on 64-bit), maps a new one (new_heap), whose
  // malloc_state and tcache touch malloc_arena; beyond the limit threads
  // share arenas. An arena is never unmapped.
  Bytes malloc_arena = 0;
  int malloc_arenas_per_cpu = 8;
  // Of a new arena's first page, the bytes glibc's own structures take
  // before the thread's first object (heap_info, malloc_state, the tcache):
  // the offset of that object in its heap. An event loop's task objects
  // (loop_task_touch) fill the rest of that page first, then new pages,
  // which stay resident when the objects are freed (below the trim
  // threshold free chunks are not returned): each loop's heap holds
  // whole pages up to its high-water mark (Kernel::arena_touch).
  // 0: off (task objects count by the byte while they live).
  Bytes arena_header = 0;
  // Stack a runtime's running workers touch beyond a blocked thread's
  // stack_touch (docs/simulator.md "Memory"). With lazy binding, the first
  // call of a not-yet-bound library function runs the dynamic linker
  // (_dl_runtime_resolve_xsavec: the CPU's XSAVE area, then _dl_fixup and
  // the symbol lookup) on the calling worker's stack, from its loop's depth:
  // one page deeper here. Each function is bound once per process, so only
  // the first workers to call them pay: a runtime's workers touch at most
  // worker_stack each and *_stack in total. Boost.Fiber's per-thread
  // initialiser (a 5 KiB frame) deepens every carrier: carrier_stack each.
  Bytes worker_stack = 0;   // at most, per worker
  Bytes pool_stack = 0;     // in total: pool, injecting pool, thread per task
  Bytes steal_stack = 0;    // in total: our work-stealing pool
  Bytes asio_stack = 0;     // in total: asio::thread_pool
  Bytes loop_stack = 0;     // in total: the event loops' threads
  Bytes carrier_stack = 0;  // per virtual-thread carrier
};

// Iterations of the work loop that machine field work_loop times.
// The two sides of a hand-over through a locked queue (MachineProfile::
// queue_push): the submitter's push and the taker's pop, together two
// queue_handover.
inline Duration push_cost(const MachineProfile& m) {
  return m.queue_push > Duration{0} ? std::min(m.queue_push, 2 * m.queue_handover)
                                    : m.queue_handover;
}
inline Duration take_cost(const MachineProfile& m) { return 2 * m.queue_handover - push_cost(m); }
// The submitter's side of a post to an event loop (MachineProfile::loop_post).
inline Duration post_cost(const MachineProfile& m) {
  return m.loop_post > Duration{0} ? m.loop_post : push_cost(m);
}

inline constexpr std::int64_t kWorkLoopUnits = std::int64_t{1} << 20;

// The idle period the sleep fields are measured with (timer_idle_run,
// sleep_cost: 1 ms sleeps) and idle_refill counts from.
inline constexpr Duration kIdleRefillReference{1'000'000};

// What a thread computes more when it starts on a CPU idle for `idle`
// (MachineProfile::idle_refill): idle_refill times the share of the
// guest's caches evicted meanwhile, beyond the share kIdleRefillReference
// evicts; 0 when the field is off or the idle no longer than that.
// full x (min(1, idle / time) - min(1, kIdleRefillReference / time)), 0
// up to kIdleRefillReference (time 0: the whole of full past it).
inline Duration idle_growth(Duration full, Duration time, Duration idle) {
  if (full <= Duration{0} || idle <= kIdleRefillReference) return Duration{0};
  const auto share_at = [&](Duration d) {
    if (time <= Duration{0}) return 1.0;
    return std::min(1.0, static_cast<double>(d.count()) / static_cast<double>(time.count()));
  };
  const double share = share_at(idle) - share_at(kIdleRefillReference);
  return Duration{
      static_cast<std::int64_t>(std::llround(share * static_cast<double>(full.count())))};
}
inline Duration idle_refill_cost(const MachineProfile& m, Duration idle) {
  return idle_growth(m.idle_refill, m.idle_evict_time, idle);
}
// How much later than timer_idle_exit a timer brings back a CPU idle for
// `idle` (MachineProfile::timer_idle_late).
inline Duration timer_idle_late_cost(const MachineProfile& m, Duration idle) {
  return idle_growth(m.timer_idle_late, m.timer_idle_late_time, idle);
}
// How much more than idle_exit another thread's wake of a CPU idle for
// `idle` takes (MachineProfile::idle_exit_late).
inline Duration idle_exit_late_cost(const MachineProfile& m, Duration idle) {
  return idle_growth(m.idle_exit_late, m.idle_exit_late_time, idle);
}

}  // namespace poolsim
