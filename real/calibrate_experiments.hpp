// calibrate_experiments.hpp: the experiments behind `poolsim calibrate`, for
// real/calibrate*.cpp only (not a public interface).
//
// One file per family of experiments, each file's design comment says what
// each experiment measures and how:
//   calibrate_scheduler.cpp      tick, slice, switch_cost, cache_refill,
//                                migration_cost, cache_hot_time
//   calibrate_wakeups.cpp        wakeup_latency, idle_exit, timer_slack,
//                                wake_pack_util, wake_cost, wake_ipi
//   calibrate_threads.cpp        thread_create, thread_exit, stack_reserve,
//                                stack_touch, stack_cache, stack_map,
//                                stack_unmap, tlb_shootdown
//   calibrate_runtime_costs.cpp  queue_handover, fiber_create, fiber_switch,
//                                timer_arm
//   calibrate_exits.cpp          rcu_gp_length, rcu_gp_interval, kthread_run
//   calibrate_memory.cpp         malloc_arena, malloc_arenas_per_cpu,
//                                runtime_touch, fiber_touch, loop_task_touch,
//                                tbb_arena, tbb_worker, tbb_task,
//                                worker_stack, pool_stack, steal_stack,
//                                asio_stack, loop_stack, carrier_stack
//   calibrate.cpp                cores; the order of the experiments, the
//                                profile from their medians, its file
// Every experiment returns Measurements named by MachineFieldName, so a field
// name that is not in models/machine_fields.hpp does not compile. Each takes
// several samples; the profile gets the median and the report keeps the
// spread. Experiments pin the calling thread; calibrate() unpins it.
#pragma once

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "models/machine.hpp"
#include "models/machine_fields.hpp"
#include "models/result.hpp"
#include "real/calibrate.hpp"

namespace poolsim::real::calib {

// ---- shared helpers (calibrate_common.cpp) ---------------------------------
std::int64_t now_ns();                // CLOCK_MONOTONIC
void sleep_until_ns(std::int64_t t);  // CLOCK_MONOTONIC, absolute, through signals
std::int64_t thread_cpu_ns();         // CLOCK_THREAD_CPUTIME_ID
std::int64_t process_cpu_ns();        // CLOCK_PROCESS_CPUTIME_ID: every thread's, the dead ones'
void pin_self(int cpu);
void unpin_self(int cpus);  // allowed on CPUs 0..cpus-1
// Linear interpolation between order statistics; 0 for no samples.
double quantile(std::vector<double> v, double q);
// The index of the median of `keys` (the lower of the two middle ones for an
// even count; the first of equal keys): the block a calibration takes all of
// an experiment's fields from (noise_block_fields, timer_stall_fields).
std::size_t median_index(const std::vector<double>& keys);
// The measurement of `field`: median, mean, p10, p90 of the samples, the unit of
// the field's kind, and how it was measured.
Measurement summarize(MachineFieldName field, std::vector<double> samples, std::string method);
// The median of field `name` among measurements `ms` (0 if absent).
double field_value(const std::vector<Measurement>& ms, MachineFieldName name);
// The arithmetic mean; 0 for no samples.
double mean_of(const std::vector<double>& v);
// A run's hand-overs grouped by their release: the tasks one completion made
// ready share its instant as their intended arrival (those at 0, roots and
// first requests, left out; not_run ones too); per release the hand-over
// instants, seconds, ascending (first_spawn_extra, release_stamp).
std::map<Duration, std::vector<double>> handovers_by_release(
    const std::vector<TaskRecord>& records);
// Forks a child that writes its report to the pipe it is given and exits
// (`child` never returns), and returns all the child wrote once it is gone.
std::string forked_report(const std::function<void(int fd)>& child);

// A thread of this process spinning on `cpu` from construction (which
// returns once it spins there) to destruction, counting its turns, so that
// a measurement can check it ran throughout (spins() before and after).
// SCHED_IDLE keeps that CPU out of idle states without delaying a normal
// thread woken there; SCHED_OTHER keeps it busy as any thread would. A
// plain pthread that never mallocs: the malloc-arena probe counts arenas.
class Spinner {
 public:
  enum class Policy { normal, idle };
  explicit Spinner(int cpu, Policy policy = Policy::normal);
  ~Spinner();
  Spinner(const Spinner&) = delete;
  Spinner& operator=(const Spinner&) = delete;
  bool running() const { return running_; }  // false: it could not be started
  std::uint64_t spins() const { return spins_.load(std::memory_order_relaxed); }

 private:
  static void* body(void* self);
  int cpu_;
  Policy policy_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> spins_{0};
  pthread_t thread_{};
  bool running_ = false;
};

// ---- the experiments -------------------------------------------------------
Measurement measure_tick(int rounds);
Measurement measure_slice(double tick, double seconds, int cpus);
// The value of the first `.NAME : V` line of debugfs sched/debug's text
// (its `sysctl_sched` section comes first: sysctl_sched_base_slice in ms),
// or nullopt where `text` has no such line or V is not a number.
std::optional<double> sched_debug_sysctl(std::string_view text, std::string_view name);
Measurement measure_switch(int batches, int round_trips);
// yield_cost and tbb_pause (the spinning of work-stealing runtimes).
std::pair<Measurement, Measurement> measure_spin_costs(int batches);
std::pair<Measurement, Measurement> measure_cache(int samples, int cpus);
Measurement measure_cache_hot_time();
// newidle_random: NI_RANDOM from debugfs, else from the kernel's version.
Measurement measure_newidle_random();
// sis_util: SIS_UTIL from debugfs, else from the kernel's version.
Measurement measure_sis_util();
// cv_quiesce: whether pthread_cond_signal waits for a woken waiter to run.
Measurement measure_cv_quiesce();

// The idles (ms) before the wakes of measure_wake_latency's idle CPU (the
// waiter runs a few microseconds between signals this far apart), the
// first being idle_exit's and idle_exit_late's reference, and the wakes per
// round of each, times the calibration's scale (three rounds).
inline constexpr int kIdleWakeGapsMs[] = {1, 2, 5, 10, 20, 50};
inline constexpr int kIdleWakeSamples[] = {30, 20, 12, 8, 6, 4};
static_assert(kIdleWakeGapsMs[0] * std::int64_t{1'000'000} == kIdleRefillReference.count() &&
              std::size(kIdleWakeGapsMs) == std::size(kIdleWakeSamples));
// wakeup_latency and idle_exit, and the signal-to-running median per
// kIdleWakeGapsMs (seconds) for idle_exit_late_fields; `step` announces
// each phase.
struct WakeLatencies {
  Measurement wakeup_latency, idle_exit;
  std::vector<double> idle_median;
  std::string table;  // the medians and their sample counts, for the method text
};
WakeLatencies measure_wake_latency(int cpus, int scale, double switch_cost,
                                   const std::function<void(const char*)>& step);
// idle_exit_late and idle_exit_late_time: per idle the median less the
// 1 ms one, less idle_refill_cost under `refill`'s idle_refill fields,
// fitted by fit_idle_refill (models/machine.hpp idle_exit_late_cost).
std::pair<Measurement, Measurement> idle_exit_late_fields(const WakeLatencies& w,
                                                          const MachineProfile& refill, int cpus);
// The sleeper's CPU per sleep on the awake CPU, by where its timer fell
// against the CPU's next tick (the kernel's ticks are the multiples of the
// tick period in CLOCK_MONOTONIC): ahead of it, the kernel reprogrammed the
// timer device when the sleeper armed it; behind it, it did not. Sleeps
// within 20 us of the tick either way are left out.
struct SleepCpu {
  std::vector<double> ahead;
  std::vector<double> behind;
  std::vector<double> all() const {
    std::vector<double> v = ahead;
    v.insert(v.end(), behind.begin(), behind.end());
    return v;
  }
};
// timer_slack (the sleeper's CPU kept awake) and timer_idle_exit (idle).
// With `awake_cpu`, also the sleeper's CPU per sleep on the awake CPU,
// classified by `tick` (seconds; 0: every sleep counts as ahead).
// With `idle_cpu`, the sleeper's CPU per sleep with the CPU left idle, from
// one longer idle run once it has settled.
// timer_stall_share, timer_stall_mean and timer_stall_median: `n` 1 ms sleeps
// on an idle CPU; those more than 4x their median late are held back, and
// their lateness beyond the median sets the mean and the median.
std::vector<Measurement> measure_timer_stalls(int cpus, int n);
// The three timer_stall_* fields of the block (measure_timer_stalls' result)
// whose share is the median of the blocks'.
std::vector<Measurement> timer_stall_fields(const std::vector<std::vector<Measurement>>& blocks);
// Returns timer_slack, timer_idle_exit and hrtimer_slack (timer_slack's
// median less that of timerfd expiries read in turn on the awake CPU).
std::vector<Measurement> measure_timer_slack(int cpus, int samples, double tick = 0,
                                             SleepCpu* awake_cpu = nullptr,
                                             SleepCpu* idle_cpu = nullptr);
// timer_idle_run: the median of every idle sleep's CPU less the awake one's,
// never negative (0 without samples).
Measurement timer_idle_run_field(const SleepCpu& awake_cpu, const SleepCpu& idle_cpu);
// sleep_cost: the median of the sleeps behind the tick less the switch the
// model charges a woken thread (switch_cost, cache_refill), never negative;
// timer_program: the median ahead less the median behind, never negative.
// With fewer than 5 sleeps in either class, sleep_cost from all of them and
// timer_program 0.
std::pair<Measurement, Measurement> sleep_cost_fields(const SleepCpu& awake_cpu, double switch_cost,
                                                      double cache_refill);
// What the model charges a woken thread's CPU once it is switched in, after
// the wake-up delay (docs/simulator.md): switch_cost + cache_refill on any
// CPU, besides idle_refill_cost for the idle before it and timer_idle_run
// when its own timer brought the CPU out of idle.
struct WokenCharges {
  double dispatch = 0;        // switch_cost + cache_refill
  double timer_idle_run = 0;  // the timer_idle_run field
};
// The wake experiments read the clock in the woken thread, past the CPU it
// is charged when switched in; the model's delays end when it is switched
// in. Takes that CPU off timer_slack and idle_exit (dispatch; idle_exit's
// wakes come after kIdleRefillReference of idle, where idle_refill has no
// share) and timer_idle_exit (timer_idle_run), each never below 0, and says
// so in their method texts; hrtimer_slack and wakeup_latency (a
// difference; only ever added to idle_exit) stay.
void net_woken_charges(std::vector<Measurement>& ms, const WokenCharges& c);
// timer_irq: a spinner's work lost to a sleeper's timer firing on its CPU.
Measurement measure_timer_irq(int bursts);
// The gap between the creations of the thread_start_idle stream (the other
// CPU idles that long before each new thread starts there).
inline constexpr int kIdleStreamGapUs = 3000;
// idle_refill and idle_evict_time from a sleeper's extra CPU per sleep by
// idle length (seconds, each less that of a kIdleRefillReference sleep):
// the least-squares fit of the curve the simulator charges
// (idle_refill_cost: refill x (min(1, idle / evict_time) - min(1,
// reference / evict_time))) over evict_time from 1.05 reference to 1 s,
// refill never negative; both 0 when no point is above 0.
struct IdleRefillFit {
  double refill = 0;      // seconds
  double evict_time = 0;  // seconds
};
IdleRefillFit fit_idle_refill(const std::vector<std::pair<double, double>>& extra_by_idle);
// One block of the idle_refill experiment: a lone sleeper pinned to the
// last CPU, left idle, runs of sleeps of 1, 2, 5, 10, 20 and 50 ms
// (kIdleSleepsMs), the first of each run left out; per length the median of
// the sleeper's CPU per sleep (cpu) and of how late it ran beyond that CPU
// (late: the wall time past the sleep's end less the CPU), in seconds.
inline constexpr int kIdleSleepsMs[] = {1, 2, 5, 10, 20, 50};
struct IdleSleeps {
  std::vector<double> cpu, late;
};
IdleSleeps measure_idle_sleeps(int cpus, bool quick);
// idle_refill and idle_evict_time from blocks of measure_idle_sleeps: the
// median over the blocks per length of the CPU, less that of 1 ms, fitted
// (fit_idle_refill).
std::pair<Measurement, Measurement> idle_refill_fields(const std::vector<IdleSleeps>& blocks,
                                                       int cpus);
// timer_idle_late and timer_idle_late_time from the same blocks: the same
// fit of how late the sleeper ran (models/machine.hpp timer_idle_late_cost).
std::pair<Measurement, Measurement> timer_idle_late_fields(const std::vector<IdleSleeps>& blocks,
                                                           int cpus);
Measurement measure_wake_packing(int cpus, int wakes);
// fork_activate's samples, from the fork-packing experiment (below).
struct ForkCosts {
  std::vector<double> local, remote;  // creator CPU seconds per creation
};
// fork_pack_util from `ramps` utilization ramps of a lone creator; with
// `costs`, also 30 x `ramps` creations each while a load thread keeps CPU 0
// 0% and 90% busy: the creator's CPU time of those that stayed on CPU 0 at
// the unloaded level (`local`) and of those that started on CPU 1 at the
// 90% level (`remote`).
Measurement measure_fork_packing(int cpus, int ramps, ForkCosts* costs = nullptr);
// wake_pack_util from the packed fraction at each load level (ascending).
double wake_pack_threshold(std::span<const double> levels, std::span<const double> packed);
// One creation of the fork-packing ramps: the creator's CPU utilization
// (PELT, 0-1) when it created the thread, and whether that thread first ran
// on the creator's CPU.
struct PackSample {
  double util = 0;
  bool packed = false;
};
// fork_pack_util: the utilization t for which the rule "packed while the
// creator's CPU is below t" misplaces the fewest samples; among equally good
// t the middle of their range; 0 if no sample packed, 1 if every one did.
double fork_pack_threshold(std::vector<PackSample> samples);
// The PELT utilization (0-1) of a thread that was at `util` and then ran
// `run_ns` and slept `sleep_ns` (kernel/sched/pelt.c: contributions halve
// every 32 ms; continuous time).
double pelt_after(double util, std::int64_t run_ns, std::int64_t sleep_ns);
std::pair<Measurement, Measurement> measure_wake_costs(int cpus, int samples);
// fork_activate from the fork-packing step's creations (each after a 3 ms
// rest; create and join, a cached stack): the median creator CPU of those
// that started on the idle CPU 1 (CPU 0 90% loaded) less that of those that
// stayed on CPU 0 (unloaded), less `wake_ipi`: what
// wake_up_new_task's enqueue on the other CPU's run queue costs beyond the
// reschedule IPI a sleeper's wake also sends. 0 with fewer than 5 of either.
Measurement fork_activate_field(const ForkCosts& costs, double wake_ipi);
// futex_call: blocks of FUTEX_WAKE calls on a word nobody waits on, per call.
Measurement measure_futex_call(int blocks);
// futex_wait_check: the remaining hold of a std::mutex on the other CPU
// beyond which its waiter sleeps (0 on one CPU); `futex_call` is that
// field's measurement (seconds): the holds reach four of it.
Measurement measure_futex_wait_check(int cpus, int tries, double futex_call);

// calibrate_noise.cpp: OS noise (real/os_noise.hpp) as the noise_* fields;
// noise_preempt_idle only on one CPU (it is noise_preempt there).
std::vector<Measurement> measure_noise(Duration window);
// The fields of the noise block (measure_noise's result) whose lost share,
// noise_mean / noise_interval, is the median of the blocks (the lower one of
// an even count); its method says which block and every block's share.
std::vector<Measurement> noise_block_fields(const std::vector<std::vector<Measurement>>& blocks);
// One block of noise_preempt_idle: a lone spinner for `window`, the other
// CPUs idle (the calibration takes the median of three, spread out).
Measurement measure_noise_preempt_idle(Duration window);

// calibrate_exits.cpp: the kernel work thread exits leave behind
// (sim/exit_work.hpp): rcu_gp_length, rcu_gp_interval, kthread_run.
// Spinners on every CPU; about 2.2 s.
enum class KthreadClass { rcu_gp, kworker, other };
// rcu_preempt / rcu_sched, kworker/..., anything else.
KthreadClass kthread_class(std::string_view comm);
// One /proc/<pid>/stat line: true for a kernel thread (PF_KTHREAD), its
// name in `comm`.
bool parse_kthread_stat(std::string_view stat, std::string& comm);
// Runs and CPU nanoseconds (schedstat) summed over each class's threads.
struct KthreadRuns {
  double gp_runs = 0, gp_ns = 0, kw_runs = 0, kw_ns = 0;
  KthreadRuns operator-(const KthreadRuns& o) const {
    return {gp_runs - o.gp_runs, gp_ns - o.gp_ns, kw_runs - o.kw_runs, kw_ns - o.kw_ns};
  }
};
KthreadRuns read_kthread_runs();
// What the three phases counted (calibrate_exits.cpp's design comment).
struct ExitWorkPhases {
  KthreadRuns base, sparse, batch;
  double base_s = 0, sparse_s = 0, batch_s = 0;
  int sparse_exits = 0, batches = 0, batch_size = 0;
  double batch_vfrees = 0;  // the batches' kernel stacks beyond the CPU's cache (reported)
};
std::vector<Measurement> exit_work_fields(const ExitWorkPhases& p);
std::vector<Measurement> measure_exit_work(int cpus);

std::pair<Measurement, Measurement> measure_thread_costs(int samples, double switch_cost);
Measurement measure_exit_unaccounted(int batches, int threads);
std::pair<Measurement, Measurement> measure_stacks(int rounds);
std::vector<Measurement> measure_stack_mapping(int rounds, int cpus, double reserve);
std::pair<Measurement, Measurement> measure_kernel_stacks(int rounds);
// thread_start, stack_fault and thread_start_remote: in `rounds` forked
// children (calibrate_threads.cpp).
std::vector<Measurement> measure_thread_start(int rounds, int cpus);
// Creations no exit made room for, as a runtime's start makes them: in
// forked children (copy-on-write broken, as the runner's) pinned to CPU 0, threads
// with default attributes but a stack glibc's inherited cache cannot serve,
// made back to back and kept blocked, after one made first (the runner's
// sampler) and left 2 ms. Per creation: the creator's CPU seconds, its place in the child
// (2 = the first measured) and whether the thread started on another CPU.
struct FreshCreation {
  double cost = 0;
  int index = 0;
  bool remote = false;
};
std::vector<FreshCreation> measure_fresh_creations(int rounds, int cpus, double reserve);
// thread_create_fresh from those: each creation's cost less the model's
// other parts of it (thread_create, stack_map, kstack_alloc from the third
// creation of the child on, the creator's CPU caching two kernel stacks,
// wake_ipi (with fork_activate) for a start on the other, idle, CPU, which
// the children, pinned to CPU 0, no longer make), the mean over the
// creations after each child's first measured one (that one is the run's
// first, thread_create_first's); never negative.
Measurement fresh_creation_field(const std::vector<FreshCreation>& samples, double thread_create,
                                 double stack_map, double kstack_alloc, double wake_ipi);
// thread_create_first: the runner itself (run_scenario: forked children,
// their sampler, the origin) runs the real pool of 2 workers on CPU 0 alone
// (limits.cpuset), a batch of 3 empty tasks: the submitter's first two
// hand-overs each create a worker, which cannot run before the submitter
// is done, so the gaps between the hand-overs are the two creations. Per
// repetition the first gap less the second; the mean of `reps`. The
// workers' stacks are `reserve` (the default stack) plus 64 KiB, so that
// the stack cache a child inherits from calibrate cannot serve them.
Measurement measure_first_creation(int reps, double reserve);
// origin_util: the runner itself (run_scenario: forked children, their
// sampler, the origin) runs the real pool of 2 workers on every CPU, a
// batch of 3 tasks of 10 us, `reps` repetitions; each reads its
// submitter's PELT utilization (se.avg.util_avg) just before the origin
// (RunResult::extra "origin_util"). The median; 0 on a kernel that does
// not show it.
Measurement measure_origin_util(int reps);

std::vector<Measurement> measure_runtime_costs(int trials, int count, int cpus);
// queue_handover_remote: a locked deque taken in turns by CPUs 0 and 1.
Measurement measure_queue_handover_remote(int rounds, int cpus);
// queue_lock_hold: the same deque's push and pop under its mutex on CPU 0.
Measurement measure_queue_lock_hold(int rounds);
// task_remote: the real event loop's CPU per task with 2 loops less with 1,
// per task started on another CPU than its submitter's.
Measurement measure_task_remote(int trials, int count, int cpus);

// calibrate_memory.cpp. malloc_arena and malloc_arenas_per_cpu, `reps`
// forked children; must run before any thread of calibrate's process
// malloc'ed (else it throws std::logic_error).
std::vector<Measurement> measure_malloc_arenas(int reps);
// The real backends' memory_peak (forked runs of `reps` repetitions): run
// before any thread of calibrate's process exists (a child inherits exited
// threads' stacks and malloc arenas); the fields come later from them.
struct MemoryRun {
  double memory = 0;   // median memory_peak, bytes
  double threads = 0;  // median threads_peak (submitter included)
  // oneTBB: its workers' CPU seconds from their creation to their first
  // arena entry, mean per repetition, median over them (-1: none reported).
  double start_cpu = -1;
};
// The resident bytes of each thread stack a real backend's run left mapped
// (forked children, run in their process), one list per repetition.
struct StackRun {
  int threads = 0;  // the backend's threads
  std::vector<std::vector<double>> reps;
};
struct RuntimeMemoryRuns {
  int reps = 0;
  MemoryRun pool, vt1, vtn, el1, eln, tbb1, tbb2, tbbq, tbb_start;
  StackRun pool_stacks, steal_stacks, asio_stacks, loop_stacks, carrier_stacks;
  // oneTBB's first spawn of a worker in a fresh process: per repetition, the
  // gap between its first two hand-overs less the median of the later gaps,
  // seconds (tbb_first_spawn).
  std::vector<double> tbb_first_spawn;
};
RuntimeMemoryRuns run_runtime_memory(int reps);
// page_fault: a thread pinned to CPU 0 maps `pages` pages of anonymous
// memory and writes a byte to each, `rounds` times: wall time per page.
Measurement measure_page_fault(int rounds, int pages);
// runtime_touch, fiber_touch, loop_task_touch, tbb_arena, tbb_worker,
// tbb_task, carrier_touch, worker_stack, pool_stack, steal_stack, asio_stack, loop_stack,
// carrier_stack; stack_touch and malloc_arena in bytes, whole pages.
std::vector<Measurement> runtime_memory_fields(const RuntimeMemoryRuns& runs, double stack_touch,
                                               double malloc_arena);
// tbb_worker_start from the oneTBB runs of the memory step: the CPU its
// workers spent before their first arena entry less what the model charges
// every thread besides (`thread_costs`: thread_start, stack_fault,
// arena_create); and tbb_first_spawn from that step's fork runs.
std::vector<Measurement> tbb_start_fields(const RuntimeMemoryRuns& runs, double thread_costs);
// The extra of a run's first spawn: the records' tasks handed over by one
// completion (the same intended arrival, at least three), the gap between
// the first two hand-overs less the median of the later gaps, seconds; -1
// when the run has no such release.
double first_spawn_extra(const std::vector<TaskRecord>& records);

}  // namespace poolsim::real::calib
