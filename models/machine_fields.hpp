// machine_fields.hpp: the one table of machine-profile fields.
//
// Mechanism: kMachineFields lists every field of MachineProfile (but `name`
// and `source`) once, in the order profile files, JSON and reports show
// them, with
//   - its name in files, JSON and reports,
//   - the member it is stored in; the member's type is the field's kind:
//     int = a count, Duration = a duration (JSON: seconds), Bytes = a size
//     (JSON: bytes), double = a fraction (0.7 or 70% in files),
//   - the values it may take (FieldRange, enforced by the loader),
//   - when a profile file may leave it out: `required`, or `from_default`
//     (added after the first profiles were written: a file without it takes
//     the shipped `default` profile's value),
//   - its one-line meaning and how `poolsim calibrate` measures it.
// Everything that reads, writes or shows a profile iterates this table: the
// loader and the profile writer (models/scenario_loader.cpp), the JSON
// (validate/output.cpp), the HTML report (validate/html_report.cpp) and
// calibrate (real/calibrate*.cpp), which names the field of each measurement
// with MachineFieldName: a consteval lookup, so a misspelt name does not
// compile. A field added to MachineProfile is added here, once.
//
// Invariants: names are unique and each member appears once (tested in
// tests/models/test_machine_fields.cpp, with the shipped default profile's
// keys equal to the table's names in order).
// Source: the machine section of docs/scenarios.md; what each field models is
// in docs/simulator.md, how it is measured in docs/calibration.md.
#pragma once

#include <cstddef>
#include <iterator>
#include <string>
#include <string_view>
#include <variant>

#include "models/machine.hpp"

namespace poolsim {

enum class FieldKind { count, duration, size, fraction };
std::string_view to_string(FieldKind k);

// When a profile file may leave the field out.
enum class FieldPresence {
  required,      // every profile file gives it (or names a `base:` profile)
  from_default,  // missing: the shipped `default` profile's value
};

// The values a profile may give a field, in SI units (a count, seconds,
// bytes, a fraction), both ends included; `zero_off`: 0 is allowed too and
// turns the mechanism off. The loader refuses anything else (NaN, infinity,
// negative, huge) where it reads the value, before the profile is used.
struct FieldRange {
  double min = 0;
  double max = 0;
  bool zero_off = false;
};

// The ranges of the table (docs/scenarios.md shows them):
// - cores: 1 to 65536 (x86-64 Linux is built for at most 8192 CPUs,
//   CONFIG_NR_CPUS; limits.cpus has the same bound).
inline constexpr FieldRange kCoreRange{1, 65536};
// - a per-event cost or delay: 0 to 1 s (microseconds in practice; more is a
//   typo, and would let the simulated clock run past int64 nanoseconds).
inline constexpr FieldRange kCostRange{0, 1};
// - a period of a CPU (the slice, the tick, the bandwidth slice, the noise
//   interval): 100 us to 1 s. 100 us is the kernel's smallest per-task slice
//   (sched_attr.sched_runtime is clamped to 0.1-100 ms) and ten times its
//   largest HZ; below it the simulator would take an event per few
//   microseconds of busy CPU. 0 is "off" for the tick and the noise.
inline constexpr FieldRange kPeriodRange{100e-6, 1};
inline constexpr FieldRange kPeriodOrOffRange{100e-6, 1, true};
// - the thread stack: 16 KiB (glibc's PTHREAD_STACK_MIN) to 1 TiB (kMaxBytes);
//   other sizes 0 to 1 TiB.
inline constexpr FieldRange kStackRange{16384, static_cast<double>(kMaxBytes)};
inline constexpr FieldRange kSizeRange{0, static_cast<double>(kMaxBytes)};
// - a part of one 4 KiB page (arena_header): 0 to 4095 bytes.
inline constexpr FieldRange kPagePartRange{0, 4095};
// - a fraction: 0 to 1.
inline constexpr FieldRange kFractionRange{0, 1};
// - slots of a per-CPU cache (kstack_cache): 0 to 1024 (the kernel's is 2);
//   also malloc arenas per CPU (glibc's is 8 on 64-bit).
inline constexpr FieldRange kSlotRange{0, 1024};
// - a switch (newidle_random): 0 (off) or 1 (on).
inline constexpr FieldRange kSwitchRange{0, 1};

struct MachineField {
  using Member = std::variant<int MachineProfile::*, Duration MachineProfile::*,
                              Bytes MachineProfile::*, double MachineProfile::*>;
  std::string_view name;
  Member member;
  FieldPresence presence;
  FieldRange range;
  std::string_view meaning;   // one line
  std::string_view measured;  // how `poolsim calibrate` measures it, one line

  constexpr FieldKind kind() const { return static_cast<FieldKind>(member.index()); }
};

inline constexpr MachineField kMachineFields[] = {
    // clang-format off
    {"cores", &MachineProfile::cores, FieldPresence::required, kCoreRange,
     "logical CPUs", "online CPUs (sysconf)"},
    {"slice", &MachineProfile::slice, FieldPresence::required, kPeriodRange,
     "scheduler base slice of a CPU-bound thread sharing a CPU",
     "the kernel's base slice as it scaled it (x (1 + ilog2 CPUs)), checked against two CPU-bound "
     "threads on one CPU"},
    {"tick", &MachineProfile::tick, FieldPresence::required, kPeriodOrOffRange,
     "scheduler tick period 1/HZ (0 = ideal tickless model)",
     "jiffies per second, else timer interrupts of a busy CPU, else CONFIG_HZ"},
    {"switch_cost", &MachineProfile::switch_cost, FieldPresence::required, kCostRange,
     "direct cost of one context switch",
     "pipe ping-pong between two threads pinned to one CPU, half a round trip"},
    {"cache_refill", &MachineProfile::cache_refill, FieldPresence::required, kCostRange,
     "extra cost a thread pays after it was switched out (cold cache)",
     "a 256 KiB working set re-read after a 16 MiB buffer evicted it, minus a warm pass"},
    {"migration_cost", &MachineProfile::migration_cost, FieldPresence::required, kCostRange,
     "extra cost when a thread resumes on another CPU",
     "the same working set re-read right after moving to another CPU, minus a warm pass"},
    {"cache_hot_time", &MachineProfile::cache_hot_time, FieldPresence::from_default, kCostRange,
     "a queued thread that ran within this is cache-hot to load balancing: an idle CPU's "
     "periodic balance leaves it until more than one attempt failed",
     "the kernel's sysctl_sched_migration_cost (debugfs sched/migration_cost_ns), else its "
     "default 0.5 ms"},
    {"wakeup_latency", &MachineProfile::wakeup_latency, FieldPresence::required, kCostRange,
     "from a wake to the woken thread running on another, awake CPU",
     "condition-variable signal to running, on another CPU kept awake"},
    {"idle_exit", &MachineProfile::idle_exit, FieldPresence::required, kCostRange,
     "extra delay when that CPU was idle (for up to 1 ms; idle_exit_late adds what a longer idle does)",
     "the same wake onto a CPU idle for 1 ms, minus wakeup_latency, less the woken thread's "
     "switch-in charges (switch_cost, cache_refill)"},
    {"timer_slack", &MachineProfile::timer_slack, FieldPresence::required, kCostRange,
     "extra delay added to every timed sleep",
     "overshoot of a 1 ms clock_nanosleep on a CPU kept awake, less switch_cost and cache_refill "
     "(charged after the delay)"},
    {"hrtimer_slack", &MachineProfile::hrtimer_slack, FieldPresence::from_default, kCostRange,
     "the part of timer_slack a timer without slack does not wait (a timerfd, Asio's timers): "
     "the thread's hrtimer slack",
     "the timer_slack sleeps' median less that of 1 ms timerfd expiries read in turn with them"},
    {"timer_idle_exit", &MachineProfile::timer_idle_exit, FieldPresence::from_default, kCostRange,
     "extra delay of a timed sleep whose timer fires on an idle CPU",
     "the same sleeps on that CPU left idle, minus the awake ones, less timer_idle_run"},
    {"sleep_cost", &MachineProfile::sleep_cost, FieldPresence::from_default, kCostRange,
     "the sleeper's own CPU for a timed sleep beyond the switch the model charges (arming and cancelling the hrtimer)",
     "1 ms clock_nanosleep on a CPU kept awake by a SCHED_IDLE spinner: the sleeper's CPU per sleep, median of those whose timer came after the CPU's next tick, less switch_cost and cache_refill"},
    {"timer_program", &MachineProfile::timer_program, FieldPresence::from_default, kCostRange,
     "the sleeper's extra CPU when its timer is the earliest on its CPU, the next tick included (reprogramming the timer device)",
     "1 ms clock_nanosleep on a CPU kept awake: the sleeper's CPU per sleep, median of those whose timer came before the CPU's next tick less the median of those after it"},
    {"timer_idle_run", &MachineProfile::timer_idle_run, FieldPresence::from_default, kCostRange,
     "the sleeper's extra CPU when its own timer brings its idle CPU back (the idle exit billed to it)",
     "1 ms clock_nanosleep, the sleeper's CPU per sleep: 60 with its CPU left idle (after 40 to settle), median, less the median of the timer_slack sleeps with it kept awake"},
    {"idle_refill", &MachineProfile::idle_refill, FieldPresence::from_default, kCostRange,
     "CPU a thread computes to refill the caches of a CPU that idled, all of them evicted (beyond what 1 ms of idling evicts)",
     "a lone sleeper on CPU 1 left idle, sleeps of 1 to 50 ms: the sleeper's CPU per sleep, median per length, less that of 1 ms sleeps, fitted to idle_refill x (min(1, sleep / idle_evict_time) - min(1, 1 ms / idle_evict_time))"},
    {"idle_evict_time", &MachineProfile::idle_evict_time, FieldPresence::from_default, kCostRange,
     "idle time after which none of a CPU's cached lines is left (the host evicts them at a steady rate while the vCPU halts)",
     "the same fit's other parameter"},
    {"timer_idle_late", &MachineProfile::timer_idle_late, FieldPresence::from_default, kCostRange,
     "how much later than after 1 ms of idling a timer brings back a CPU idle for long (its interrupt reaches a vCPU halted longer later, and the wake-up path runs cold)",
     "the idle_refill sleeps: how late the sleeper ran past each sleep's end beyond its own CPU, less that of 1 ms sleeps, fitted to timer_idle_late x (min(1, idle / timer_idle_late_time) - min(1, 1 ms / timer_idle_late_time))"},
    {"timer_idle_late_time", &MachineProfile::timer_idle_late_time, FieldPresence::from_default, kCostRange,
     "idle time after which a timer's wake of an idle CPU is as late as it gets",
     "the same fit's other parameter"},
    {"idle_exit_late", &MachineProfile::idle_exit_late, FieldPresence::from_default, kCostRange,
     "how much more than after 1 ms of idling another thread's wake of a CPU idle for long takes (the IPI reaches a vCPU halted longer later)",
     "wakes onto CPU 1 left idle 1, 2, 5, 10, 20 and 50 ms: the signal-to-running median per idle, less that of 1 ms and idle_refill's share, fitted to idle_exit_late x (min(1, idle / idle_exit_late_time) - min(1, 1 ms / idle_exit_late_time))"},
    {"idle_exit_late_time", &MachineProfile::idle_exit_late_time, FieldPresence::from_default, kCostRange,
     "idle time after which another thread's wake of an idle CPU is as slow as it gets",
     "the same fit's other parameter"},
    {"timer_stall_share", &MachineProfile::timer_stall_share, FieldPresence::from_default,
     kFractionRange, "share of the timers that wake a halted vCPU which the host holds back",
     "the idle timer_slack-style sleeps (3,000 of 1 ms): those more than 4x their median late"},
    {"timer_stall_mean", &MachineProfile::timer_stall_mean, FieldPresence::from_default,
     kCostRange, "how much later such a held-back timer comes, on average",
     "the same sleeps: their lateness beyond the median, mean"},
    {"timer_stall_median", &MachineProfile::timer_stall_median, FieldPresence::from_default,
     kCostRange, "its median (with the mean, a lognormal)",
     "the same sleeps: their lateness beyond the median, median"},
    {"timer_irq", &MachineProfile::timer_irq, FieldPresence::from_default, kCostRange,
     "CPU a timer's interrupt takes from the thread running where it fires",
     "a spinner's lost work in the 300 us after a SCHED_IDLE sleeper's timer fires on its CPU, "
     "less the same before it, mean of the bursts"},
    {"thread_create", &MachineProfile::thread_create, FieldPresence::required, kCostRange,
     "CPU cost of creating a thread, charged to the creator",
     "the creator's CPU time inside pthread_create"},
    {"thread_start", &MachineProfile::thread_start, FieldPresence::from_default, kCostRange,
     "CPU a new thread spends before its function runs, on a stack from glibc's cache",
     "forked child on one CPU: the new thread's CPU clock at its function's first "
     "instruction, threads made one at a time on a cached stack, median"},
    {"stack_fault", &MachineProfile::stack_fault, FieldPresence::from_default, kCostRange,
     "what a new thread's start adds on a freshly mapped stack (first touch of its pages)",
     "the same with threads kept alive (each maps a stack), median, less thread_start"},
    {"thread_start_remote", &MachineProfile::thread_start_remote, FieldPresence::from_default,
     kCostRange, "what a new thread's start adds when it starts on another CPU than its creator's",
     "the thread_start probe's child, unpinned, makes 64 threads back to back: those the kernel "
     "put on another CPU, median, less thread_start"},
    {"thread_start_idle", &MachineProfile::thread_start_idle, FieldPresence::from_default,
     kCostRange, "what that start adds more when the other CPU was idle",
     "threads made 3 ms apart, kept blocked: those put on the idle CPU, median, less "
     "thread_start, thread_start_remote and stack_fault"},
    {"thread_exit", &MachineProfile::thread_exit, FieldPresence::required, kCostRange,
     "CPU cost of ending a thread, charged to the exiting thread",
     "create-to-join wall time on one CPU, minus the creation, the thread's start and two "
     "switches"},
    {"exit_unaccounted", &MachineProfile::exit_unaccounted, FieldPresence::from_default,
     kCostRange,
     "the end of thread_exit that the process's CPU time does not count (the dying thread's run "
     "after release_task) (0: none)",
     "a batch of detached threads that return at once, creator and threads on one CPU: wall time "
     "less the process's CPU time, per thread, median of batches"},
    {"stack_reserve", &MachineProfile::stack_reserve, FieldPresence::required, kStackRange,
     "virtual stack reserved per thread",
     "glibc's default thread stack (pthread_attr_getstacksize)"},
    {"stack_touch", &MachineProfile::stack_touch, FieldPresence::required, kSizeRange,
     "memory a thread actually touches",
     "VmRSS added per blocked thread over 64 threads, rounded to 4 KiB pages"},
    {"queue_handover", &MachineProfile::queue_handover, FieldPresence::from_default, kCostRange,
     "one side (push or pop) of a hand-over through a locked queue",
     "the real pool, 1 worker, a batch of empty tasks, on one CPU: CPU per task / 2"},
    {"futex_call", &MachineProfile::futex_call, FieldPresence::from_default, kCostRange,
     "a futex system call that neither sleeps nor wakes anybody (a contended queue lock)",
     "thread CPU time of FUTEX_WAKE calls on a word nobody waits on, per call"},
    {"futex_wait_check", &MachineProfile::futex_wait_check, FieldPresence::from_default,
     kCostRange,
     "how late after a waiter finds a queue lock held a release still lets it stay on its CPU "
     "(0: futex_call)",
     "a std::mutex held on CPU 1 for a random time, a waiter on CPU 0: the remaining hold at "
     "which the waiter's voluntary switches begin"},
    {"queue_handover_remote", &MachineProfile::queue_handover_remote, FieldPresence::from_default,
     kCostRange, "the extra of a push or pop whose queue another CPU used last",
     "threads on CPUs 0 and 1 take turns at a locked deque: time per turn less turns with no "
     "push or pop, less the push or pop on one CPU"},
    {"queue_lock_hold", &MachineProfile::queue_lock_hold, FieldPresence::from_default,
     kCostRange,
     "the part of queue_handover spent holding the queue's lock (0: all of it)",
     "a std::mutex-guarded std::deque on one thread: lock, push, unlock, lock, pop, unlock; "
     "the time per push-and-pop / 2, median of rounds of 100,000"},
    {"queue_push", &MachineProfile::queue_push, FieldPresence::from_default, kCostRange,
     "the submitting side's part of a hand-over through a locked queue, of two queue_handover "
     "(0: half)",
     "the same pool run as queue_handover: the mean gap between the submitter's consecutive "
     "hand-overs, while the worker waits on the same CPU (gaps of 2 us or more left out)"},
    {"loop_post", &MachineProfile::loop_post, FieldPresence::from_default, kCostRange,
     "the submitter's part of a post to an event loop (0: as a pool's push)",
     "the real event loop, 1 loop, 1,000 closed clients: the mean gap between the submitter's "
     "consecutive posts of the first wave (gaps of 2 us or more left out)"},
    {"task_remote", &MachineProfile::task_remote, FieldPresence::from_default, kCostRange,
     "the extra CPU of starting a task on another CPU than the one it was submitted on (its "
     "record's and the runtime's per-task state's cache lines come over)",
     "the real event loop, 1,000 closed clients, 1 us requests and a 1 ms wait: CPU per task "
     "with 2 loops less with 1, per task started on another CPU than its submitter's"},
    {"stack_madvise", &MachineProfile::stack_madvise, FieldPresence::from_default, kCostRange,
     "the part of thread_exit that holds the mmap lock for reading: glibc's madvise of the "
     "dying thread's unused stack",
     "madvise(MADV_DONTNEED) of a mapped stack below its 2 touched pages, before its munmap"},
    {"arena_create", &MachineProfile::arena_create, FieldPresence::from_default, kCostRange,
     "CPU time of a thread's first malloc when it maps a new malloc arena",
     "forked child: a new thread's first malloc less its second, median"},
    {"arena_create_remote", &MachineProfile::arena_create_remote, FieldPresence::from_default,
     kCostRange, "extra for that first malloc while another CPU is busy",
     "the same while a thread of the child spins on CPU 1, less arena_create"},
    {"arena_create_first", &MachineProfile::arena_create_first, FieldPresence::from_default,
     kCostRange, "extra for the first malloc arena a process maps, beyond arena_create (0: none)",
     "forked child: the first new arena's first malloc less the median of the later ones'"},
    {"yield_cost", &MachineProfile::yield_cost, FieldPresence::from_default, kCostRange,
     "CPU time of a sched_yield call when nothing else is runnable on the CPU",
     "a thread alone on its CPU: CPU time per sched_yield, median of batches"},
    {"tbb_pause", &MachineProfile::tbb_pause, FieldPresence::from_default, kCostRange,
     "one oneTBB prolonged_pause: pause loops until 1,000 TSC ticks have passed",
     "the same loop timed against the clock, median of batches"},
    {"steal_push", &MachineProfile::steal_push, FieldPresence::from_default, kCostRange,
     "a submit into the work-stealing runtime (the submitter's push into the injection queue, a "
     "worker's into its own deque), with the harness's time stamp and record (0: free)",
     "the real work stealing, 1 worker, a batch of empty tasks, on one CPU: the mean gap between "
     "the submitter's consecutive hand-overs (gaps of 2 us or more left out)"},
    {"release_stamp", &MachineProfile::release_stamp, FieldPresence::from_default, kCostRange,
     "from a completion's release of the tasks it made ready (a graph's successors, a closed "
     "client's next request) to the first one's hand-over: the harness's time stamp and record, "
     "on the completing thread (0: none)",
     "the real work stealing, 1 worker, a fork-join of empty tasks, on one CPU: the mean lag of "
     "each release's first hand-over"},
    {"tbb_enqueue", &MachineProfile::tbb_enqueue, FieldPresence::from_default, kCostRange,
     "oneTBB: the submitter's arena.enqueue of a task, with the harness's time stamp and record "
     "(0: free)",
     "the real oneTBB, 1 worker, a batch of empty tasks, on one CPU: the mean gap between the "
     "submitter's consecutive hand-overs (gaps of 2 us or more left out)"},
    {"tbb_spawn", &MachineProfile::tbb_spawn, FieldPresence::from_default, kCostRange,
     "oneTBB: a worker's task_group::run of a task its completion released, with the harness's "
     "time stamp and record (0: free)",
     "the real oneTBB, 1 worker, a fork of 1,000 empty tasks, on one CPU: the mean gap between "
     "consecutive hand-overs of the fork's tasks (gaps of 2 us or more left out)"},
    {"tbb_first_spawn", &MachineProfile::tbb_first_spawn, FieldPresence::from_default,
     kCostRange,
     "oneTBB: what a worker's first task_group::run adds to tbb_spawn, once per worker thread "
     "(its first allocation from oneTBB's allocator, tbbmalloc's heap for the thread) (0: free)",
     "forked children of a process that never ran oneTBB, the real oneTBB, 1 worker, a fork of "
     "64 empty tasks: the gap between the first two hand-overs less the median of the others, "
     "median"},
    {"tbb_worker_start", &MachineProfile::tbb_worker_start, FieldPresence::from_default,
     kCostRange,
     "oneTBB: a worker's CPU from its start to its first arena entry beyond thread_start, "
     "stack_fault and arena_create (the library's set-up of the worker) (0: free)",
     "the real oneTBB, 2 threads, a batch of 200 tasks of 200 us: the workers' thread CPU time at "
     "their first arena entry (a task_scheduler_observer), mean per run, median of 9 runs, less "
     "thread_start, stack_fault and arena_create"},
    {"fiber_create", &MachineProfile::fiber_create, FieldPresence::from_default, kCostRange,
     "a user-level thread's creation, first mount and end",
     "real virtual threads on 1 carrier, 1,000 closed clients, empty requests: CPU per request "
     "less two queue_handover"},
    {"fiber_switch", &MachineProfile::fiber_switch, FieldPresence::from_default, kCostRange,
     "one user-level switch: an unmount or a remount",
     "the same with `wait: 1ms` requests: half the extra CPU per request"},
    {"timer_arm", &MachineProfile::timer_arm, FieldPresence::from_default, kCostRange,
     "an event loop's wait: arm a timer and dispatch its completion",
     "the real event loop, 1 loop, 1,000 closed clients: CPU per request with `wait: 1ms` less "
     "without"},
    {"stack_cache", &MachineProfile::stack_cache, FieldPresence::from_default, kSizeRange,
     "bytes of ended threads' stacks glibc keeps for reuse",
     "glibc.pthread.stack_cache_size (ld.so --list-tunables), else glibc's default 40 MiB"},
    {"stack_map", &MachineProfile::stack_map, FieldPresence::from_default, kCostRange,
     "mapping a new stack the cache cannot give (charged to the creator)",
     "creator CPU in pthread_create for a new stack less for one on a touched stack, one CPU"},
    {"stack_unmap", &MachineProfile::stack_unmap, FieldPresence::from_default, kCostRange,
     "unmapping a stack the cache cannot keep, the process on one CPU (exiting thread)",
     "munmap of that stack, no other thread of the process running"},
    {"tlb_shootdown", &MachineProfile::tlb_shootdown, FieldPresence::from_default, kCostRange,
     "extra for that munmap when the process runs on several CPUs",
     "the same munmap while a thread of the process spins on CPU 1, minus stack_unmap"},
    {"stack_map_remote", &MachineProfile::stack_map_remote, FieldPresence::from_default, kCostRange,
     "extra for mapping a new stack while another CPU is busy (creator)",
     "the stack_map pairs while a thread of the process spins on CPU 1, minus stack_map"},
    {"wake_pack_util", &MachineProfile::wake_pack_util, FieldPresence::from_default, kFractionRange,
     "the waker's CPU utilization below which a woken thread that would wake an idle CPU is "
     "kept on the waker's CPU, when nothing is queued there (a timer wake: the timer's CPU; 0 = "
     "mainline)",
     "where most wakes stop running on the waker's CPU as a load thread keeps it 0-90% busy"},
    {"fork_pack_util", &MachineProfile::fork_pack_util, FieldPresence::from_default, kFractionRange,
     "the creator's CPU utilization below which a new thread starts on the creator's CPU, "
     "when nothing is queued there (0 = mainline: an idle CPU first)",
     "the utilization below which a lone creator's new threads start on its CPU, as its "
     "own utilization climbs from 0 (the fewest misplaced)"},
    {"origin_util", &MachineProfile::origin_util, FieldPresence::from_default, kFractionRange,
     "the submitter's PELT utilization at the origin (what the process ran before t = 0), "
     "beside the initial share of the one thread it made just before (0 = neither)",
     "the real runner's children (a pool of 2, 3 tasks): the submitter's se.avg.util_avg read "
     "just before the origin, median"},
    {"newidle_random", &MachineProfile::newidle_random, FieldPresence::from_default, kSwitchRange,
     "1: a CPU going idle pulls a queued thread only as often as its recent newidle balances "
     "succeeded (NI_RANDOM, Linux 6.18.5 and 6.19 on); 0: it always tries",
     "the scheduler feature from debugfs (sched/features), else the kernel's version"},
    {"sis_util", &MachineProfile::sis_util, FieldPresence::from_default, kSwitchRange,
     "1: a woken thread whose CPU is busy looks for an idle CPU only while the CPUs' summed "
     "utilization is low (SIS_UTIL, Linux 6.0 on); 0: it always searches every CPU",
     "the scheduler feature from debugfs (sched/features), else the kernel's version"},
    {"cv_quiesce", &MachineProfile::cv_quiesce, FieldPresence::from_default, kSwitchRange,
     "1: a condition variable's signal waits until the waiters it woke before have run, when "
     "it must open the next group (glibc 2.25-2.40); 0: it never waits (glibc 2.41 on)",
     "a signal timed with a woken waiter kept stopped (SIGSTOP) and another waiting"},
    {"wake_cost", &MachineProfile::wake_cost, FieldPresence::from_default, kCostRange,
     "the waker's CPU for waking a thread onto its own CPU",
     "the waker's thread CPU time across one FUTEX_WAKE of a thread on its own CPU"},
    {"wake_ipi", &MachineProfile::wake_ipi, FieldPresence::from_default, kCostRange,
     "the extra when the woken thread goes to another CPU (the inter-processor interrupt)",
     "the same with the waiting thread on the idle CPU 1, minus wake_cost"},
    {"fork_activate", &MachineProfile::fork_activate, FieldPresence::from_default, kCostRange,
     "what a creation whose thread starts on another, idle CPU costs its creator beyond wake_ipi (the enqueue on that CPU's run queue)",
     "creator on CPU 0, CPU 1 idle: creations whose thread started on CPU 1 less those that stayed on CPU 0, medians, less wake_ipi"},
    {"noise_interval", &MachineProfile::noise_interval, FieldPresence::from_default, kPeriodOrOffRange,
     "mean busy time of a CPU between two interruptions by the OS (0 = no noise)",
     "fixed-work-quantum spinners on every CPU at once: busy time / interrupted quanta"},
    {"noise_median", &MachineProfile::noise_median, FieldPresence::from_default, kCostRange,
     "time an OS interruption takes from the running thread: median",
     "the same benchmark: median excess of an interrupted quantum over its CPU's 10th percentile quantum"},
    {"noise_p99", &MachineProfile::noise_p99, FieldPresence::from_default, kCostRange,
     "time an OS interruption takes from the running thread: 99th percentile",
     "the same benchmark: 99th percentile of those excesses"},
    {"noise_mean", &MachineProfile::noise_mean, FieldPresence::from_default, kCostRange,
     "time an OS interruption takes from the running thread: mean (0 = not measured: the "
     "median and p99 set the distribution)",
     "the same benchmark: every quantum's excess over its CPU's 10th percentile quantum, per interruption"},
    {"noise_preempt", &MachineProfile::noise_preempt, FieldPresence::from_default, kFractionRange,
     "share of OS interruptions that switch to another task (an involuntary switch)",
     "the spinners' involuntary switches (getrusage) over their interrupted quanta"},
    {"noise_preempt_idle", &MachineProfile::noise_preempt_idle, FieldPresence::from_default,
     kFractionRange, "that share while another CPU of the machine is idle",
     "the same benchmark with one spinner, the other CPUs idle"},
    {"noise_charged", &MachineProfile::noise_charged, FieldPresence::from_default, kFractionRange,
     "share of the time OS noise steals that the kernel still charges to the interrupted thread's CPU time",
     "the spinners' thread CPU clocks against the wall over the same benchmark: 1 - (wall - CPU) / stolen"},
    {"rcu_gp_length", &MachineProfile::rcu_gp_length, FieldPresence::from_default, kCostRange,
     "how long an RCU grace period that thread exits start takes; exits during one start the next at its end (0 = off)",
     "spinners on every CPU, a thread created and joined every 150 ms: the grace-period kthread's runs (schedstat) per exit, less its rate without exits, times rcu_gp_interval"},
    {"rcu_gp_interval", &MachineProfile::rcu_gp_interval, FieldPresence::from_default, kCostRange,
     "time between two runs of the grace-period kernel thread during a grace period",
     "spinners on every CPU, batches of 4 threads kept alive then joined every 5 ms (grace periods back to back): 1 / the kthread's extra runs a second"},
    {"kthread_run", &MachineProfile::kthread_run, FieldPresence::from_default, kCostRange,
     "CPU time one run of the grace-period kernel thread takes from the thread it preempts (two switches besides)",
     "the batches: the kthread's extra CPU time (schedstat) over its extra runs"},
    {"work_loop", &MachineProfile::work_loop, FieldPresence::from_default, kCostRange,
     "thread CPU time of 2^20 iterations of the loop that runs cpu phases (0 = calibrate each run)",
     "the 90th percentile speed of 1001 trials of ~55 us of the loop on the monotonic clock (its "
     "undisturbed "
     "speed), scaled to 2^20 iterations"},
    {"kernel_canary", &MachineProfile::kernel_canary, FieldPresence::from_default, kCostRange,
     "wall time of one round of the kernel's page-table paths: map an 8 MiB stack with its guard, "
     "touch its top two pages, unmap it (0 = not checked)",
     "median of the rounds taken before each calibration step (101 rounds each), read as the "
     "runner reads it"},
    {"cfs_bandwidth_slice", &MachineProfile::cfs_bandwidth_slice, FieldPresence::from_default, kPeriodRange,
     "runtime a CPU takes from its group's quota pool at a time (CFS bandwidth slice)",
     "read from /proc/sys/kernel/sched_cfs_bandwidth_slice_us"},
    {"runtime_touch", &MachineProfile::runtime_touch, FieldPresence::from_default, kSizeRange,
     "one-time memory a runtime adds with its first thread, beyond that thread's stack_touch and malloc arena",
     "the real pool, 1 worker, 16 tasks: memory_peak less stack_touch and malloc_arena, median of runs"},
    {"fiber_touch", &MachineProfile::fiber_touch, FieldPresence::from_default, kSizeRange,
     "memory of a live user-level thread (a Boost.Fiber fiber: its stack's touched pages)",
     "real virtual threads, 1 carrier, 1,000 sleeping fibers less 1: memory_peak per fiber"},
    {"carrier_touch", &MachineProfile::carrier_touch, FieldPresence::from_default, kSizeRange,
     "memory a virtual-thread carrier holds outside its thread stack (Boost.Fiber's dispatcher fiber: "
     "its malloc'ed stack's touched pages and its context)",
     "real virtual threads, 1 carrier, 1 sleeping fiber: memory_peak less what the simulator charges "
     "that carrier and fiber (stack_touch, malloc_arena, runtime_touch, carrier_stack, fiber_touch)"},
    {"loop_task_touch", &MachineProfile::loop_task_touch, FieldPresence::from_default, kSizeRange,
     "memory of a task alive in an event loop (its posted handler, its timer)",
     "the real event loop, 1 loop, 2,000 tasks asleep on timers less 1: memory_peak per task"},
    {"tbb_arena", &MachineProfile::tbb_arena, FieldPresence::from_default, kSizeRange,
     "one-time memory of oneTBB with its first worker, beyond that worker's stack_touch and malloc arena",
     "real oneTBB, 1 thread, 16 tasks: memory_peak less stack_touch and malloc_arena"},
    {"tbb_worker", &MachineProfile::tbb_worker, FieldPresence::from_default, kSizeRange,
     "memory each further oneTBB worker adds beyond its stack_touch and malloc arena",
     "real oneTBB, 2 threads less 1 thread: memory_peak per extra worker less stack_touch and malloc_arena"},
    {"tbb_task", &MachineProfile::tbb_task, FieldPresence::from_default, kSizeRange,
     "memory of a task enqueued in a oneTBB arena and not yet started",
     "real oneTBB, 1 thread, a batch of 4,000 100 us tasks less a batch of 16: per task"},
    {"page_fault", &MachineProfile::page_fault, FieldPresence::from_default, kCostRange,
     "CPU the thread that first touches a page of fresh anonymous memory spends on its fault "
     "(a runtime's task objects as its heap grows)",
     "a thread on CPU 0 maps 256 pages and writes a byte to each: wall time per page, median of "
     "15 rounds"},
    {"kstack_cache", &MachineProfile::kstack_cache, FieldPresence::from_default, kSlotRange,
     "freed kernel thread stacks each CPU keeps for reuse (NR_CACHED_STACKS)",
     "the kernel's constant (kernel/fork.c NR_CACHED_STACKS = 2), not measured"},
    {"kstack_alloc", &MachineProfile::kstack_alloc, FieldPresence::from_default, kCostRange,
     "the creator's extra CPU time when its CPU has no cached kernel stack (vmalloc of a new one)",
     "creations of blocked threads on one CPU: beyond the cache, minus the first creation's cost"},
    {"thread_create_fresh", &MachineProfile::thread_create_fresh, FieldPresence::from_default, kCostRange,
     "the creator's extra CPU time for a creation no earlier exit of the process made room for (new task, kernel stack and page-table pages)",
     "forked children, as the runner's, pinned to CPU 0: threads made back to back and kept blocked, the creator's CPU less the model's other parts of each creation, mean; the median of 3 blocks"},
    {"thread_create_first", &MachineProfile::thread_create_first, FieldPresence::from_default, kCostRange,
     "the creator's extra CPU time for the run's first creation (the process's second thread) beyond a later one",
     "the runner's children, a 2-worker pool on one CPU, 3 tasks at once: the first hand-over's creation less the second's, mean"},
    {"malloc_arena", &MachineProfile::malloc_arena, FieldPresence::from_default, kSizeRange,
     "memory a thread's own glibc malloc arena adds (its malloc_state and tcache), once per arena",
     "a forked child: 8 blocked threads that malloc once less 8 that do not, per thread"},
    {"malloc_arenas_per_cpu", &MachineProfile::malloc_arenas_per_cpu, FieldPresence::from_default, kSlotRange,
     "glibc malloc arenas a process creates per CPU it may run on, the main arena included",
     "a forked child: arenas (malloc_info) after 8 per CPU + 8 threads each malloc once, per CPU"},
    {"arena_header", &MachineProfile::arena_header, FieldPresence::from_default, kPagePartRange,
     "bytes of a new malloc arena's first page that glibc's own structures take before the thread's first object",
     "the same child: the offset in its heap of the first block each new arena's thread malloc'ed, median"},
    {"worker_stack", &MachineProfile::worker_stack, FieldPresence::from_default, kSizeRange,
     "the most stack one running worker touches beyond stack_touch (the dynamic linker's lazy binding from its loop)",
     "forked children run the real pool, work stealing, asio pool and event loop (4 threads each): the deepest thread stack's resident pages (mincore) less stack_touch, median of the runs where it is more than 0"},
    {"pool_stack", &MachineProfile::pool_stack, FieldPresence::from_default, kSizeRange,
     "stack a pool's workers touch beyond stack_touch in total, at most worker_stack each (pool, injecting pool, thread per task)",
     "a forked child runs the real pool, 4 workers, 200 tasks: its thread stacks' resident pages (mincore) beyond stack_touch, summed, median of runs"},
    {"steal_stack", &MachineProfile::steal_stack, FieldPresence::from_default, kSizeRange,
     "the same for our work-stealing pool's workers",
     "the same with the real work-stealing pool, 4 workers"},
    {"asio_stack", &MachineProfile::asio_stack, FieldPresence::from_default, kSizeRange,
     "the same for asio::thread_pool's threads",
     "the same with the real asio pool, 4 threads"},
    {"loop_stack", &MachineProfile::loop_stack, FieldPresence::from_default, kSizeRange,
     "the same for the event loops' threads",
     "the same with the real event loop, 4 loops"},
    {"carrier_stack", &MachineProfile::carrier_stack, FieldPresence::from_default, kSizeRange,
     "stack every virtual-thread carrier touches beyond stack_touch (Boost.Fiber's per-thread initialiser)",
     "the same with the real virtual threads, 4 carriers, per carrier"},
    // clang-format on
};
inline constexpr std::size_t kMachineFieldCount = std::size(kMachineFields);

// The index of the field called `name`; used only in constant evaluation, where
// the throw for an unknown name is a compile error.
consteval std::size_t machine_field_index(std::string_view name) {
  for (std::size_t i = 0; i < kMachineFieldCount; ++i)
    if (kMachineFields[i].name == name) return i;
  throw "no machine-profile field of this name (models/machine_fields.hpp)";
}

// A field named by a string literal, checked at compile time:
// `MachineFieldName f = "switch_cost";` compiles, `"swich_cost"` does not.
struct MachineFieldName {
  consteval MachineFieldName(const char* n) : index(machine_field_index(n)) {}
  const MachineField& field() const { return kMachineFields[index]; }
  std::size_t index;
};

// The field called `name` at run time (a file's key), or nullptr.
const MachineField* find_machine_field(std::string_view name);

// The value in SI base units as a double: a count, seconds, bytes or a fraction.
double machine_field_si(const MachineField& f, const MachineProfile& m);
// Stores an SI value (as machine_field_si gives it): durations rounded to the
// nanosecond, counts and sizes truncated.
void set_machine_field_si(const MachineField& f, MachineProfile& m, double v);
// Copies the field from `from` to `to`.
void copy_machine_field(const MachineField& f, MachineProfile& to, const MachineProfile& from);
// Field-by-field equality over the table.
bool same_machine_fields(const MachineProfile& a, const MachineProfile& b);
// The field's range as docs and messages write it: "1 to 65536",
// "0 (off) or 100us to 1s", "16KiB to 1024GiB" (the units a file may use).
std::string machine_field_range(const MachineField& f);
// Empty when the field's value in `m` is inside its range, else the message
// "tick must be 0 (off) or 100us to 1s, got 20us" (NaN is never inside).
std::string machine_field_range_error(const MachineField& f, const MachineProfile& m);
// The field table of docs/scenarios.md ("Machine profiles"), Markdown with a
// trailing newline (a test compares the two).
std::string machine_fields_markdown();
// The value as a profile file writes it, exactly: "2100us", "8MiB", "4",
// "0.7" (reads back to the same value).
std::string machine_field_yaml(const MachineField& f, const MachineProfile& m);

}  // namespace poolsim
