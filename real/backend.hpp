// backend.hpp: the seam between the real runner and a real runtime (backend).
//
// Mechanism. The runner (real/runner.cpp) forks one child per repetition. In
// the child it builds a RunContext over the generated Workload, asks the
// registry for the Backend of the scenario's kind, calls start(), fixes the
// run origin (t = 0), then drives the arrivals from the child's main thread,
// the *submitter* (real/submitter.cpp): batch tasks all at 0, poisson and
// periodic tasks at their generated times (clock_nanosleep to each), closed
// clients' next task `think` after the previous completion, graph nodes when
// their last predecessor finishes. Every hand-over goes through
// Backend::submit(). When every task is finalized (completed, rejected, or
// never issued), the runner calls stop(), then report(), and ships the
// RunResult to the parent.
//
// A backend executes a task by calling RunContext::execute(task, ops) on one
// of its threads (or, for a runtime that cannot run a task to completion in
// one call, such as an event loop, by the step functions task_started,
// run_cpu, lock_mutex, unlock_mutex, sleep_blocking, task_finished in order).
// The context does the recording (preallocated TaskRecords, no lock, no
// allocation on that path) and the completion logic (successors, closed
// clients), so a backend only decides WHERE and WHEN a task runs.
//
// Phases (same meaning as in the simulator, models/wait_policy.hpp):
//   cpu   run_cpu(work): the calibrated busy loop of real/cpu_work.hpp, an
//         amount of work that preemption and throttling stretch;
//   wait  execute() asks wait_effect(kind, inside_lock = false): block_thread
//         -> PhaseOps::wait_blocking (clock_nanosleep), release_thread ->
//         PhaseOps::wait_releasing (a fiber backend parks the fiber and
//         frees its carrier);
//   lock  PhaseOps::lock/unlock around run_cpu(hold) and, if wait_inside > 0,
//         the wait of wait_effect(kind, inside_lock = true), block_thread for
//         every runtime (a virtual thread is pinned).
// A phase with `holding:` runs holding a permit of a bounded resource:
// execute() asks models/resource_pool.hpp's holding_step() where to take it
// (PhaseOps::acquire: a thread blocks in FIFO order, a fiber suspends) and
// where to give it back (RunContext::release_resource); the event loop's step
// code asks the same rule and parks a continuation (real/resources.hpp).
//
// Threads. Every OS thread a backend starts goes through spawn() (or, for a
// library that creates its own threads, register_current_thread() on the
// thread itself), so the run knows live and peak OS threads (the submitter
// is thread 0 and counts), gives each thread one trace track, and reports a
// failed pthread_create as a MachineRefused naming the limit that was hit.
//
// Thread rules: submit() may be called from the submitter thread or from any
// thread that is executing a task (a completion releases successors and
// closed clients' next tasks inline when they are due now); start(), stop()
// and report() only from the submitter thread. A backend must execute every
// submitted task exactly once or reject it (task_rejected) exactly once.
#pragma once

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/completion.hpp"
#include "models/result.hpp"
#include "models/scenario.hpp"
#include "models/units.hpp"
#include "models/workload.hpp"
#include "real/resources.hpp"

namespace poolsim::real {

// The machine refused (thread limit, pthread_create failure with the limit
// that was hit, no cgroup permission, timeout). The CLI maps it to exit 3.
struct MachineRefused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class RunContext;

// Thread index of the submitter (the child's main thread): TaskRecord::worker
// of a task that ran on it (caller-runs) and trace track 0.
inline constexpr std::uint32_t kSubmitterThread = 0;

// One OS thread known to the run. Owned by the context (stable address);
// written only by its own thread while the run is live.
struct ThreadSlot {
  std::uint32_t index = 0;                          // trace track and TaskRecord::worker
  std::string name;                                 // "submitter", "worker 3", "thread 17"
  std::vector<TraceSpan> spans;                     // filled only when tracing
  Duration task_cpu_start{};                        // CLOCK_THREAD_CPUTIME_ID at task_started
  std::uint32_t current_task = TraceSpan::kNoTask;  // task in progress (trace spans)
  std::int64_t remote_starts = 0;  // tasks it started on another CPU than their submitter's
};

// How a runtime performs the steps whose meaning depends on the runtime.
// The defaults are a thread runtime's: block the OS thread, hold a real
// std::mutex from the context's lock table. Which wait a phase gets is
// models/wait_policy.hpp's wait_effect(), decided in RunContext::execute.
class PhaseOps {
 public:
  virtual ~PhaseOps() = default;
  // A wait that blocks the OS thread (inside_lock: the `wait_inside` of a
  // lock phase, while the lock is held).
  virtual void wait_blocking(RunContext& ctx, Duration d, bool inside_lock);
  // A wait that frees the OS thread (wait_effect == release_thread): the
  // runtime parks the task. The default blocks, as a thread runtime would.
  virtual void wait_releasing(RunContext& ctx, Duration d);
  virtual void lock(RunContext& ctx, std::uint32_t lock);
  virtual void unlock(RunContext& ctx, std::uint32_t lock);
  // Takes one permit of resource r, waiting in FIFO order when none is free
  // (default: the OS thread blocks, RunContext::acquire_blocking).
  virtual void acquire(RunContext& ctx, std::uint16_t r);
};

class Backend {
 public:
  virtual ~Backend() = default;
  // Library set-up that makes no thread (oneTBB's arena and global
  // control): called on the submitter thread before the origin, so the
  // measurement starts with the library loaded, as a running service has it.
  virtual void prepare(RunContext& ctx) { (void)ctx; }
  // The harness's own per-task bookkeeping (arrays sized by the workload's
  // task count): made on the submitter thread before the memory baselines,
  // so memory_peak counts the runtime's memory, not the harness's.
  virtual void reserve(RunContext& ctx) { (void)ctx; }
  // Create the runtime (its initial threads). Called on the submitter thread
  // at the first hand-over, as the simulator's runtimes start theirs
  // (RunContext::submit_now), or before stop() if no task was handed over.
  virtual void start(RunContext& ctx) = 0;
  // Hand task `task` to the runtime; its submit time is already recorded.
  virtual void submit(std::uint32_t task) = 0;
  // Every task is finalized: stop the runtime and join every thread it made.
  virtual void stop() = 0;
  // Runtime-specific counters (steals, injections, retirements...).
  virtual void report(std::map<std::string, double>& extra) const { (void)extra; }
  // True when a task runs on one OS thread from start to end without that
  // thread running anything else meanwhile, so the thread's CPU clock between
  // task_started and task_finished is the task's CPU time. Fiber and
  // event-loop backends return false (TaskRecord::cpu stays 0).
  virtual bool per_task_cpu() const { return true; }
};

// The registry (real/registry.cpp): one factory per BackendKind, each defined
// in the backend's own file (real/<kind>.cpp).
std::unique_ptr<Backend> make_backend(const BackendSpec& spec);
std::unique_ptr<Backend> make_thread_per_task_backend(const BackendSpec& spec);
std::unique_ptr<Backend> make_pool_backend(const BackendSpec& spec);
std::unique_ptr<Backend> make_work_stealing_backend(const BackendSpec& spec);
std::unique_ptr<Backend> make_injecting_pool_backend(const BackendSpec& spec);
std::unique_ptr<Backend> make_virtual_threads_backend(const BackendSpec& spec);
std::unique_ptr<Backend> make_event_loop_backend(const BackendSpec& spec);
std::unique_ptr<Backend> make_tbb_backend(const BackendSpec& spec);
std::unique_ptr<Backend> make_asio_pool_backend(const BackendSpec& spec);

struct ContextOptions {
  bool trace = false;
  bool per_task_cpu = false;  // TaskRecord::cpu from the thread's CPU clock (RealOptions::task_cpu)
  int max_threads = 0;        // 0 = unlimited; spawn() refuses beyond it
  int fail_fd = -1;           // child: where refuse()/fail() report before _exit
};

// Everything a backend gets from the runner. Implemented in
// real/run_context.cpp (recording, threads, completion) and
// real/submitter.cpp (arrivals).
class RunContext {
 public:
  RunContext(const Scenario& s, const Workload& w, ContextOptions opt);
  ~RunContext();
  RunContext(const RunContext&) = delete;
  RunContext& operator=(const RunContext&) = delete;

  const Scenario& scenario() const { return scenario_; }
  const Workload& workload() const { return workload_; }
  const BackendSpec& backend_spec() const { return scenario_.backend; }
  bool tracing() const { return opt_.trace; }

  // ---- clock: CLOCK_MONOTONIC relative to the origin --------------------
  Duration now() const;
  static Duration monotonic_now();  // absolute CLOCK_MONOTONIC
  Duration origin() const { return origin_; }

  // ---- threads -----------------------------------------------------------
  // Starts an OS thread with `stack` bytes of stack that registers itself as
  // `name`, runs `body`, and unregisters. A failure (EAGAIN, ENOMEM, or
  // run.max_threads reached) refuses the run with the limit that was hit.
  // A detached thread is not joined; pass detached = false and join() it.
  pthread_t spawn(std::string name, Bytes stack, std::function<void()> body, bool detached = false);
  void join(pthread_t t);
  // For threads the runtime did not create through spawn() (library pools):
  // call on the thread itself, once, before it runs a task; and
  // unregister_current_thread() before it exits.
  ThreadSlot& register_current_thread(std::string name);
  // A library thread that left (unregister_current_thread) and comes back,
  // as a oneTBB worker re-enters its arena: counted live again under the
  // slot it had, so the harness's bookkeeping does not grow per entry.
  void reenter_current_thread(ThreadSlot& slot);
  void unregister_current_thread();
  // The calling thread's slot, or nullptr if it is not registered.
  static ThreadSlot* current_slot();
  int live_threads() const { return live_threads_.load(std::memory_order_relaxed); }
  int peak_threads() const { return peak_threads_.load(std::memory_order_relaxed); }
  int running_threads() const { return running_.load(std::memory_order_relaxed); }

  // ---- executing a task ----------------------------------------------------
  // Runs every phase of `task` on the calling (registered) thread, with
  // `ops` for waits and locks; records start/end/cpu/worker; then finalizes
  // it (successors, closed client), which may call Backend::submit inline.
  void execute(std::uint32_t task, PhaseOps& ops);
  void execute(std::uint32_t task);  // thread ops (block, std::mutex)
  // The same, step by step, for runtimes that suspend a task between phases.
  void task_started(std::uint32_t task);
  void task_finished(std::uint32_t task);
  // Refused by the runtime's rejection policy (abort, discard, discard-oldest
  // victim). Graph successors of a rejected task are finalized as not_run.
  void task_rejected(std::uint32_t task);
  void run_cpu(Duration work);          // busy loop, counted as running
  void sleep_blocking(Duration d);      // clock_nanosleep, a `blocked` span
  void lock_mutex(std::uint32_t lock);  // blocks; contention is a `blocked` span
  void unlock_mutex(std::uint32_t lock);
  std::mutex& mutex(std::uint32_t lock) { return locks_[lock]; }
  // Bounded resources (real/resources.hpp): the table, a thread runtime's
  // blocking acquire (a `blocked` span while it waits), and the release.
  ResourceTable& resources() { return resources_; }
  void acquire_blocking(std::uint16_t r);
  void release_resource(std::uint16_t r) { resources_.release(r); }

  // ---- trace: a span on the calling thread's track ------------------------
  void span(SpanKind kind, Duration begin, Duration end, std::uint32_t task = TraceSpan::kNoTask);

  // ---- failure (never returns: in a child, reports to the parent and exits)
  [[noreturn]] void refuse(const std::string& why);
  [[noreturn]] void fail(const std::string& why);

  // ---- runner side (not for backends) -------------------------------------
  void attach(Backend* backend);
  // Starts the attached backend if no hand-over did (a run that submits
  // nothing); call on the submitter thread before Backend::stop().
  void ensure_started();
  void set_origin_now();
  // The anonymous memory (bytes) at the moments the count of started
  // threads (their stacks and arenas touched; not those about to be
  // created) first reached a new high, read from on (memory_probe_start); 0
  // if never read. A thread-per-task run's peak lies mid-run, while threads
  // live, and VmHWM, the only other record of it, follows approximate
  // per-CPU RSS counters (off by up to a batch of pages per CPU); so the
  // thread that makes each new high reads the exact anonymous count
  // (/proc/self/statm, summed counters since Linux 6.16). At most one read per new high, and above
  // 256 threads one per 1/64 of growth, so a run of N threads reads it at most 256 + 64 ln(N / 256)
  // times.
  void memory_probe_start() { probe_on_.store(true, std::memory_order_release); }
  Bytes memory_probe_peak() const { return probe_peak_.load(std::memory_order_acquire); }
  // Records the submit time (and `intended`, the task's intended arrival)
  // and hands the task to the backend.
  void submit_now(std::uint32_t task, Duration intended);
  // Closed clients with a think time: the submitter hands it over at `due`.
  void schedule_submit(std::uint32_t task, Duration due);
  // Drives the arrivals until every task is finalized (real/submitter.cpp).
  void drive_arrivals();
  // Before the origin: brings into the cache the runner's own state of the
  // tasks handed over at t = 0 (real/submitter.cpp).
  void warm_first_wave();
  // Before the usage baseline: makes once the calls the runner makes on
  // every thread it starts (naming it, the memory probe's read of
  // /proc/self/statm), so that their first-time cost in a new process is
  // not the run's first thread's (real/run_context.cpp).
  void warm_thread_start();
  // The process's anonymous bytes (/proc/self/statm, the file kept open
  // from warm_thread_start on); 0 if it cannot be read.
  Bytes statm_anon_bytes();
  bool all_done() const;
  std::vector<TaskRecord>& records() { return records_; }
  // Snapshot of the slots' spans and names into a Trace (after stop()).
  Trace collect_trace();
  std::uint64_t finalized() const { return finalized_.load(std::memory_order_acquire); }
  // Final outcomes so far (never-issued closed-client tasks as not_run).
  OutcomeCounts outcomes() const;
  // Threads that ever registered (trace tracks), the submitter included.
  std::size_t thread_count_registered();
  // Tasks started on another CPU than the one their submitter ran on when
  // it handed them over (after stop()).
  std::int64_t remote_starts();

 private:
  friend struct ThreadTrampoline;
  void wait_phase(PhaseOps& ops, Duration d, bool inside_lock);
  void finalize(std::uint32_t task, TaskOutcome outcome);
  void mark_final(std::uint32_t task);
  void count_finalized(std::uint64_t n);
  void release_successors(std::uint32_t task, bool completed);
  void prefetch_successor_records(std::uint32_t task) const;
  void on_client_task_done(std::uint32_t task);
  void notify_submitter();
  ThreadSlot& new_slot(std::string name);
  void thread_entered();
  void thread_left();

  const Scenario& scenario_;
  const Workload& workload_;
  ContextOptions opt_;
  Backend* backend_ = nullptr;
  // Set by the submitter thread when it starts the backend (its first
  // hand-over); every other thread that submits was made after that.
  std::atomic<bool> started_{false};
  Duration origin_{};

  std::vector<TaskRecord> records_;
  std::unique_ptr<std::mutex[]> locks_;
  ResourceTable resources_;
  std::unique_ptr<std::atomic<std::uint8_t>[]> final_flag_;  // finalized once
  std::mutex graph_mu_;
  std::optional<GraphRelease> graph_;  // graph workloads, under graph_mu_
  std::atomic<std::uint64_t> finalized_{0};
  std::atomic<std::uint64_t> completed_{0}, rejected_{0}, not_run_{0};
  std::uint64_t expected_final_ = 0;             // tasks that must be finalized
  std::atomic<std::int64_t> active_clients_{0};  // closed

  std::atomic<int> live_threads_{0};
  std::atomic<int> peak_threads_{0};
  // Once per thread start (a runtime's thread, a registered or re-entering
  // library thread): counts it in threads_started_ (thread_left uncounts it) and
  // reads the memory at a new high of started threads (memory_probe_peak).
  void probe_memory_at_new_high();
  std::atomic<int> threads_started_{0};
  std::atomic<bool> probe_on_{false};
  std::atomic<int> probe_started_{0};  // the started threads at the last read
  std::atomic<Bytes> probe_peak_{0};
  std::atomic<int> statm_fd_{-1};  // /proc/self/statm, open from warm_thread_start on
  std::atomic<int> running_{0};

  // The threads' bookkeeping. Made before the memory baseline for as many
  // threads as the run is expected to create (slot_pool_, never resized, so
  // references stay valid; slots_ pre-sized), so that a thread-per-task run
  // does not count the harness's ~100 bytes per thread as the workload's
  // memory (5,000 tasks: ~500 KiB, spread over the threads' malloc arenas).
  // Threads beyond it get a slot from the heap (overflow_).
  std::mutex slots_mu_;
  std::vector<ThreadSlot> slot_pool_;
  std::vector<std::unique_ptr<ThreadSlot>> overflow_;
  std::vector<ThreadSlot*> slots_;  // the first n_slots_ are in use
  std::size_t n_slots_ = 0;

  // Submitter's timer queue (closed clients with think) and done signal.
  struct Due {
    Duration at;
    std::uint32_t task;
    bool operator>(const Due& o) const { return at > o.at || (at == o.at && task > o.task); }
  };
  std::mutex sub_mu_;
  std::condition_variable sub_cv_;
  std::vector<Due> due_;  // min-heap on `at`
  bool done_ = false;

  std::atomic<bool> failing_{false};
};

}  // namespace poolsim::real
