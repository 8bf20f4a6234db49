// tbb.cpp: the real oneTBB (2021.8) task scheduler, the real twin of
// sim/tbb.cpp (modelled as work stealing) and the closest real library to
// Java's ForkJoinPool.
//
// Mechanism. One tbb::task_arena with max_concurrency = `threads` and
// reserved_for_masters = 0: every slot is for TBB's own worker threads, and
// the submitter never joins the arena (it only enqueues; it never calls
// execute() or a blocking wait inside the arena while tasks run), so
// exactly `threads` workers execute tasks, like a ForkJoinPool of
// parallelism `threads` that the submitting thread does not help. A
// process-wide tbb::global_control(max_allowed_parallelism, threads + 1) lifts
// TBB's default worker limit (hardware threads - 1) to `threads` workers for
// the run (the +1 is the external thread TBB counts in that limit).
// Every task belongs to one tbb::task_group:
//   - from the submitter (arrivals), arena.enqueue(tg.defer(f)): the arena's
//     FIFO of externally submitted work (ForkJoinPool's submission queue);
//   - from a worker of the arena (a completion releasing graph successors or
//     a closed client's next task), tg.run(f): spawned into that worker's
//     own deque, popped LIFO by its owner and stolen FIFO by the others
//     (ForkJoinPool fork()).
// Waits block the worker (oneTBB has no way to unmount a task); locks are
// the context's std::mutex. Tasks run through RunContext::execute with the
// default thread ops.
//
// Threads. TBB creates its workers itself, lazily, in its global pool. A
// tbb::task_scheduler_observer bound to the arena registers a worker with the
// context when it enters the arena (on_scheduler_entry) and unregisters it
// when it leaves (on_scheduler_exit), so live and peak threads count workers
// while they serve this arena; a worker that leaves and comes back gets a new
// slot (a new trace track). threads_peak is therefore <= threads + 1 (the
// submitter).
//
// stop(): waits for the task group (every task body returned), terminates
// the arena, waits until every registered worker has left it (so no TBB
// thread keeps a pointer into this run's context), disables the observer,
// and finally calls tbb::finalize on a task_scheduler_handle taken in
// start(), which blocks until TBB's worker threads have exited. finalize
// fails (returns false) when another part of the process still holds TBB
// (another handle, arena or active global_control); then the workers stay
// asleep in TBB's pool, executing nothing and no longer counted, until the
// process ends (a repetition is its own child process, which then exits).
// extra["workers_finalized"] says which happened.
//
// Counters (RunResult::extra): enqueued, spawned, worker_entries (a worker
// joined the arena), workers_finalized (1 when finalize succeeded),
// worker_start_cpu (a new worker's CPU seconds up to its first entry, mean).
//
// Left out: TBB's thread stack size (its default, 4 MiB on 64-bit, not the
// scenario's `stack`); arena priorities and NUMA constraints; the submitter
// helping (ForkJoinPool.commonPool's caller participation).
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#include <oneapi/tbb/task_scheduler_observer.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <utility>
#include <vector>

#include "real/backend.hpp"
#include "real/cpu_work.hpp"

// ThreadSanitizer and oneTBB. Debian's libtbb is not built with TSan, so the
// happens-before that its queues give (a task object written by the
// submitting thread, then executed and destroyed by a worker; an observer's
// callbacks, then its destruction once observe(false) returned) is invisible
// to TSan, which reports the task object's fields and vptr as races. The
// hand-overs are announced with TSan's annotations (sanitizer/
// tsan_interface.h): a release by the submitting thread after the task
// object is built, an acquire as the first instruction of the task body, and
// the same around the observer's callbacks and destruction. One sync address
// serves every task: each body then also acquires earlier, unrelated
// submissions, a slight over-approximation of what TBB's own fences give.
// In other builds these compile to nothing.
#if defined(__SANITIZE_THREAD__)
extern "C" {
void __tsan_acquire(void* addr);
void __tsan_release(void* addr);
}
#define POOLSIM_TSAN_ACQUIRE(addr) __tsan_acquire(const_cast<void*>(static_cast<const void*>(addr)))
#define POOLSIM_TSAN_RELEASE(addr) __tsan_release(const_cast<void*>(static_cast<const void*>(addr)))
#else
#define POOLSIM_TSAN_ACQUIRE(addr) static_cast<void>(0)
#define POOLSIM_TSAN_RELEASE(addr) static_cast<void>(0)
#endif

namespace poolsim::real {
namespace {

class ArenaObserver;

// The observer a TBB worker registered through, while it is inside the
// arena; nullptr elsewhere (the submitter, a worker serving another arena).
thread_local const ArenaObserver* tl_observer = nullptr;

// The sync address of the task hand-over annotations (see above).
[[maybe_unused]] char tsan_task_handoff = 0;

class ArenaObserver final : public tbb::task_scheduler_observer {
 public:
  ArenaObserver(tbb::task_arena& arena, RunContext& ctx)
      : tbb::task_scheduler_observer(arena), ctx_(ctx) {
    slots_.reserve(64);  // made before the run: no allocation per new worker up to 64
  }

  // New workers' mean CPU seconds at their first entry; -1 with none.
  double mean_start_cpu() const {
    std::lock_guard lk(mu_);
    return new_workers_ > 0 ? static_cast<double>(start_cpu_sum_) / new_workers_ * 1e-9 : -1;
  }

  void on_scheduler_entry(bool is_worker) override {
    // Only TBB's workers: an external thread is already known to the run.
    if (!is_worker || RunContext::current_slot() != nullptr) return;
    // Registering and counting it inside are one step under mu_, and a
    // worker that arrives once stop() has closed the observer is not
    // registered: else a late worker registered between wait_until_empty()
    // and observe(false) was never unregistered (its exit callback no longer
    // came), and the run waited for it forever (calibrate's runtime-memory
    // step hung in 4 of 5 runs: 16 short tasks on 2 threads).
    std::lock_guard lk(mu_);
    if (closed_) return;
    entries_.fetch_add(1, std::memory_order_relaxed);
    // One slot per OS thread, kept across its entries: a slot (and its name)
    // per entry was the harness's memory growing with the run (every
    // arrival into an empty arena brings all workers in), ~280 bytes per
    // task in memory_peak.
    const pid_t tid = ::gettid();
    // The CPU a new worker spent from its creation to here: its start and
    // oneTBB's own set-up of the worker (calibrate's tbb_worker_start;
    // report: worker_start_cpu).
    const std::int64_t start_cpu = thread_cpu_clock_ns();
    const auto seen =
        std::find_if(slots_.begin(), slots_.end(), [tid](const auto& s) { return s.first == tid; });
    if (seen != slots_.end()) {
      ctx_.reenter_current_thread(*seen->second);
    } else {
      start_cpu_sum_ += start_cpu;
      ++new_workers_;
      slots_.emplace_back(
          tid, &ctx_.register_current_thread("tbb worker " + std::to_string(slots_.size() + 1)));
    }
    tl_observer = this;
    ++inside_;
    POOLSIM_TSAN_RELEASE(this);
  }

  void on_scheduler_exit(bool is_worker) override {
    (void)is_worker;
    if (tl_observer != this) return;
    tl_observer = nullptr;
    ctx_.unregister_current_thread();
    {
      std::lock_guard lk(mu_);
      --inside_;
    }
    left_.notify_all();
    POOLSIM_TSAN_RELEASE(this);
  }

  // Blocks until every worker that registered here has left the arena.
  void wait_until_empty() {
    std::unique_lock lk(mu_);
    closed_ = true;
    left_.wait(lk, [this] { return inside_ == 0; });
  }

  int entries() const { return entries_.load(std::memory_order_relaxed); }

 private:
  RunContext& ctx_;
  std::atomic<int> entries_{0};
  mutable std::mutex mu_;
  std::vector<std::pair<pid_t, ThreadSlot*>> slots_;  // each OS thread's slot, under mu_
  std::int64_t start_cpu_sum_ = 0;  // new workers' CPU ns at their first entry, under mu_
  int new_workers_ = 0;             // under mu_
  std::condition_variable left_;
  int inside_ = 0;       // registered workers inside the arena, under mu_
  bool closed_ = false;  // stop() began waiting: later entries are not registered, under mu_
};

class Tbb final : public Backend {
 public:
  explicit Tbb(const BackendSpec& spec) : threads_(std::max(1, spec.threads)) {}

  // The arena is set up before the origin (its workers are made by oneTBB
  // when work first arrives, inside the run, as the simulator's are).
  void prepare(RunContext& ctx) override {
    ctx_ = &ctx;
    handle_.emplace(tbb::attach{});
    group_ = std::make_unique<tbb::task_group>();
    parallelism_.emplace(tbb::global_control::max_allowed_parallelism,
                         static_cast<std::size_t>(threads_) + 1);
    arena_.emplace(threads_, 0);
    arena_->initialize();
    observer_.emplace(*arena_, ctx);
    observer_->observe(true);
  }

  void start(RunContext& ctx) override { (void)ctx; }

  void submit(std::uint32_t task) override {
    in_flight_.fetch_add(1, std::memory_order_relaxed);
    auto handle = group_->defer([this, task] {
      POOLSIM_TSAN_ACQUIRE(&tsan_task_handoff);
      ctx_->execute(task);
      in_flight_.fetch_sub(1, std::memory_order_release);
    });
    POOLSIM_TSAN_RELEASE(&tsan_task_handoff);
    if (tl_observer == &*observer_) {
      spawned_.fetch_add(1, std::memory_order_relaxed);
      group_->run(std::move(handle));
    } else {
      enqueued_.fetch_add(1, std::memory_order_relaxed);
      arena_->enqueue(std::move(handle));
    }
  }

  void stop() override {
    // Every task is finalized; wait for the group's bookkeeping to end too.
    group_->wait();
    group_.reset();
    if (in_flight_.load(std::memory_order_acquire) != 0)
      ctx_->fail("tbb: task group finished with tasks still in flight");
    arena_->terminate();
    observer_->wait_until_empty();
    observer_->observe(false);
    entries_at_stop_ = observer_->entries();
    start_cpu_at_stop_ = observer_->mean_start_cpu();
    POOLSIM_TSAN_ACQUIRE(&*observer_);
    observer_.reset();
    arena_.reset();
    parallelism_.reset();
    finalized_ = tbb::finalize(*handle_, std::nothrow);
    handle_.reset();
  }

  void report(std::map<std::string, double>& extra) const override {
    extra["threads"] = threads_;
    extra["enqueued"] = static_cast<double>(enqueued_.load(std::memory_order_relaxed));
    extra["spawned"] = static_cast<double>(spawned_.load(std::memory_order_relaxed));
    extra["worker_entries"] = observer_ ? observer_->entries() : entries_at_stop_;
    extra["workers_finalized"] = finalized_ ? 1.0 : 0.0;
    // Its workers' CPU seconds from their creation to their first entry,
    // mean (calibrate's tbb_worker_start).
    const double start_cpu = observer_ ? observer_->mean_start_cpu() : start_cpu_at_stop_;
    if (start_cpu >= 0) extra["worker_start_cpu"] = start_cpu;
  }

 private:
  const int threads_;
  RunContext* ctx_ = nullptr;
  // Declaration order is teardown order in reverse: the handle outlives the
  // global control, the arena and the observer.
  std::optional<tbb::task_scheduler_handle> handle_;
  std::optional<tbb::global_control> parallelism_;
  std::optional<tbb::task_arena> arena_;
  std::optional<ArenaObserver> observer_;
  // tbb::task_group's destructor may throw (missing_wait), which a member of
  // a Backend (noexcept destructor) cannot; stop() waits for it and frees it.
  std::unique_ptr<tbb::task_group> group_;
  std::atomic<std::int64_t> in_flight_{0};
  std::atomic<std::int64_t> enqueued_{0};
  std::atomic<std::int64_t> spawned_{0};
  double entries_at_stop_ = 0;
  double start_cpu_at_stop_ = -1;
  bool finalized_ = false;
};

}  // namespace

std::unique_ptr<Backend> make_tbb_backend(const BackendSpec& spec) {
  return std::make_unique<Tbb>(spec);
}

}  // namespace poolsim::real
