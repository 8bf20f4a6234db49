// pool.cpp: the ThreadPoolExecutor-style pool runtime.
//
// Mechanism (java.util.concurrent.ThreadPoolExecutor, decisions in
// models/pool_policy.hpp, shared with real/pool.cpp):
// - submit() asks decide_submit(live threads, queued tasks): start a core
//   thread with the task as its first task; or enqueue it on the FIFO queue
//   and notify one idle worker (LinkedBlockingQueue.offer signals notEmpty);
//   or, with the queue full, start an extra thread up to max_threads; or
//   reject. Starting a thread costs the submitting thread thread_create.
// - Rejection: decide_reject() (models/pool_policy.hpp): abort and discard
//   drop the task (recorded as rejected); discard-oldest drops the queue's
//   head and submits again; caller-runs runs the task on the submitting
//   thread.
// - A worker runs its first task, then takes tasks from the queue; with the
//   queue empty it is idle (models/idle_policy.hpp): it blocks on the idle
//   condition variable (glibc's, Kernel::CondVar), forever for a core
//   worker, until a deadline keep_alive (idle_wait_limit) after the idle
//   period began above the core size, and exits when should_retire says so
//   after that deadline passed with no work (getTask()).
// Counters (RunResult::extra, PoolCounts, the real twin's names):
// threads_started, threads_retired, rejections, caller_runs.
// The worker count is incremented when a start is decided, before the new
// thread runs (addWorker's compareAndIncrementWorkerCount).
// Invariants (asserted): counts_.live = workers started and not retired, at
// most max_threads; the queue never holds more than its capacity; idle_
// waiters are workers.
// Hand-over cost: push_cost (models/machine.hpp: queue_push, else
// queue_handover) of CPU on the submitting thread per enqueue (the push,
// before an idle worker is woken: the real twin pushes under its lock and
// signals after the unlock) and take_cost on the worker per dequeue (before
// it runs the task), plus queue_handover_remote when another CPU held
// the queue last, each under the queue's lock (sim/queue_lock.hpp: glibc's
// mutex, whose contention costs futex system calls). A task handed to
// a new thread as its first task never passes through the queue and pays
// neither.
// Memory: the first workers to run touch pool_stack more stack in all, at
// most worker_stack each (lazy binding; Kernel::set_worker_stack).
// Start (PoolStart, sim/runtime.hpp): on_demand as above; with
// all_at_first_submit (asio::thread_pool, sim/asio_pool.cpp) the first
// submit makes all core threads back to back, each of which arrives at a
// rendezvous as it starts (the real twin's registration job) and then waits
// for work; the submitter blocks until the last one has arrived and woken
// everyone there (a broadcast), then hands its task over through the queue.
// Left out: allowCoreThreadTimeOut, prestartAllCoreThreads, shutdown (the
// run ends when every task is final; idle workers are still alive then).
#include <deque>
#include <memory>

#include "models/assert.hpp"
#include "models/idle_policy.hpp"
#include "models/pool_policy.hpp"
#include "sim/driver.hpp"
#include "sim/queue_lock.hpp"
#include "sim/runtime.hpp"

namespace poolsim::sim {

namespace {

class Pool final : public Runtime {
 public:
  Pool(const SimContext& ctx, PoolStart start)
      : k_(ctx.kernel),
        driver_(ctx.driver),
        limits_(PoolLimits::from(ctx.scenario.backend)),
        start_(start) {
    k_.set_worker_stack(k_.machine().worker_stack, k_.machine().pool_stack);
  }

  Co submit(std::uint32_t task) override {
    if (start_ == PoolStart::all_at_first_submit && !started_) {
      started_ = true;
      co_await start_all();
    }
    // The submitter's own part of a hand-over first (lock_.rest_push(): the
    // harness's time stamp and record, RunContext::submit_now, come before
    // the real twin's submit decides anything), so that the decision and
    // the push below see the queue as it is after it.
    co_await k_.compute(lock_.rest_push());  // its own part; 0 without queue_lock_hold
    const auto queued = static_cast<std::int64_t>(queue_.size());
    switch (decide_submit(limits_, counts_.live, queued)) {
      case SubmitAction::start_core_thread:
      case SubmitAction::start_extra_thread:
        counts_.worker_started();
        POOLSIM_ASSERT(counts_.live <= limits_.max, "more live workers than max_threads");
        co_await k_.spawn(worker(task), "worker");
        break;
      case SubmitAction::enqueue:
        queue_.push_back(task);
        POOLSIM_ASSERT(!limits_.queue_capacity ||
                           static_cast<std::int64_t>(queue_.size()) <= *limits_.queue_capacity,
                       "the queue holds more than its capacity");
        {
          // As the real twin: the push under the lock (whether a worker is
          // idle is read there), then the wake after the unlock.
          // A worker counts as idle from its wait until it runs again (the
          // twin's idle_), so a signal may find every idle worker woken
          // already, or have to wait for one to run (CondVar).
          if (!lock_.try_lock()) co_await lock_.lock_slow();
          const bool wake = idle_.waiters() > 0;
          co_await k_.compute(lock_.handover());  // the push, on the submitter
          if (lock_.unlock()) co_await lock_.wake();
          if (wake)
            while (!k_.cv_try_signal(idle_)) co_await k_.cv_quiesce(idle_);
        }
        break;
      case SubmitAction::reject:
        co_await reject(task);
        break;
    }
  }

  void report(std::map<std::string, double>& extra) const override {
    counts_.report(extra);
    extra["cv_quiesce_waits"] = static_cast<double>(idle_.quiesce_waits());
  }

 private:
  Co reject(std::uint32_t task) {
    switch (counts_.rejected(limits_.reject, static_cast<std::int64_t>(queue_.size()))) {
      case RejectAction::reject_new:
        driver_.reject(task);
        break;
      case RejectAction::drop_oldest:
        driver_.reject(queue_.front());
        queue_.pop_front();
        co_await submit(task);
        break;
      case RejectAction::run_on_caller:
        co_await driver_.execute(task);
        break;
    }
  }

  // Every core thread, made by the submitter one after the other; it
  // returns once all have arrived at the rendezvous (the real twin's
  // on_every_thread: its jobs and the submitter wait on one condition
  // variable, which the last arrival broadcasts).
  Co start_all() {
    const auto n = static_cast<int>(limits_.core);
    for (int i = 0; i < n; ++i) {
      counts_.worker_started();
      POOLSIM_ASSERT(counts_.live <= limits_.max, "more live workers than max_threads");
      co_await k_.spawn(registered_worker(n), "worker");
    }
    while (arrived_ < n) co_await k_.wait(rendezvous_);
  }

  Co registered_worker(int n) {
    POOLSIM_ASSERT(arrived_ < n, "more threads at the start's rendezvous than the pool makes");
    if (++arrived_ == n) {
      k_.notify_all(rendezvous_);
    } else {
      while (arrived_ < n) co_await k_.wait(rendezvous_);
    }
    co_await serve();
  }

  Co worker(std::uint32_t first) {
    co_await driver_.execute(first);
    co_await serve();
  }

  // A worker's loop after its first task (or its start): tasks from the
  // queue, idle waits in between.
  Co serve() {
    for (;;) {
      while (!queue_.empty()) {
        if (!lock_.try_lock()) co_await lock_.lock_slow();
        if (queue_.empty()) {  // another worker took it while this one waited
          if (lock_.unlock()) co_await lock_.wake();
          break;
        }
        const std::uint32_t task = queue_.front();
        queue_.pop_front();
        co_await k_.compute(lock_.handover());  // the pop, on the worker
        if (lock_.unlock()) co_await lock_.wake();
        co_await k_.compute(lock_.rest_take());  // its own part; 0 without queue_lock_hold
        co_await driver_.execute(task);
      }
      IdlePeriod idle;
      while (queue_.empty()) {
        const auto deadline = idle.deadline(idle_wait_limit(limits_, counts_.live), k_.now());
        const bool woken =
            deadline ? co_await k_.cv_wait_until(idle_, *deadline) : co_await k_.cv_wait(idle_);
        if (!queue_.empty()) break;
        if (idle.after_wait(!woken, should_retire(limits_, counts_.live)) == IdleStep::retire) {
          counts_.worker_retired();
          co_return;
        }
      }
    }
  }

  Kernel& k_;
  Driver& driver_;
  PoolLimits limits_;
  std::deque<std::uint32_t> queue_;
  QueueLock lock_{k_};  // the queue's mutex (sim/queue_lock.hpp)
  PoolCounts counts_;
  CondVar idle_;  // the twin's std::condition_variable
  const PoolStart start_;
  bool started_ = false;
  int arrived_ = 0;       // threads at the start's rendezvous (all_at_first_submit)
  WaitQueue rendezvous_;  // the submitter and the threads waiting there
};

}  // namespace

std::unique_ptr<Runtime> make_pool(const SimContext& ctx, PoolStart start) {
  return std::make_unique<Pool>(ctx, start);
}

std::unique_ptr<Runtime> make_pool(const SimContext& ctx) {
  return make_pool(ctx, PoolStart::on_demand);
}

}  // namespace poolsim::sim
