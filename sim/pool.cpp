// pool.cpp: the ThreadPoolExecutor-style pool runtime.
//
// Mechanism (java.util.concurrent.ThreadPoolExecutor, decisions in
// models/pool_policy.hpp, shared with real/pool.cpp):
// - submit() asks decide_submit(live threads, queued tasks): start a core
//   thread with the task as its first task; or enqueue it on the FIFO queue
//   and notify one idle worker (LinkedBlockingQueue.offer signals notEmpty);
//   or, with the queue full, start an extra thread up to max_threads; or
//   reject. Starting a thread costs the submitting thread thread_create.
// - Rejection: abort and discard drop the task (recorded as rejected);
//   discard-oldest drops the queue's head and submits again; caller-runs
//   runs the task on the submitting thread (counted in
//   extra.rejected_caller_runs).
// - A worker runs its first task, then takes tasks from the queue; with the
//   queue empty it blocks on the idle wait queue, forever for a core worker,
//   for at most keep_alive (idle_wait_limit) above the core size, and exits
//   when should_retire says so after a timed-out wait (getTask()).
// The worker count is incremented when a start is decided, before the new
// thread runs (addWorker's compareAndIncrementWorkerCount).
// Hand-over cost: machine.queue_handover of CPU on the submitting thread per
// enqueue (after the task is queued and an idle worker notified, as the real
// twin pushes and signals under its lock) and on the worker per dequeue
// (before it runs the task). A task handed to a new thread as its first task
// never passes through the queue and pays neither.
// Left out: allowCoreThreadTimeOut, prestartAllCoreThreads, shutdown (the
// run ends when every task is final; idle workers are still alive then).
#include <deque>
#include <memory>

#include "models/pool_policy.hpp"
#include "sim/driver.hpp"
#include "sim/runtime.hpp"

namespace poolsim::sim {

namespace {

class Pool final : public Runtime {
 public:
  explicit Pool(const SimContext& ctx)
      : k_(ctx.kernel), driver_(ctx.driver), limits_(PoolLimits::from(ctx.scenario.backend)) {}

  Co submit(std::uint32_t task) override {
    switch (decide_submit(limits_, live_, static_cast<std::int64_t>(queue_.size()))) {
      case SubmitAction::start_core_thread:
      case SubmitAction::start_extra_thread:
        ++live_;
        co_await k_.spawn(worker(task), "worker");
        break;
      case SubmitAction::enqueue:
        queue_.push_back(task);
        k_.notify_one(idle_);
        co_await k_.compute(k_.machine().queue_handover);  // the push, on the submitter
        break;
      case SubmitAction::reject:
        co_await reject(task);
        break;
    }
  }

 private:
  Co reject(std::uint32_t task) {
    switch (limits_.reject) {
      case RejectPolicy::abort:
      case RejectPolicy::discard:
        driver_.reject(task);
        break;
      case RejectPolicy::discard_oldest:
        if (queue_.empty()) {
          driver_.reject(task);  // nothing older to drop (a zero-capacity queue)
        } else {
          driver_.reject(queue_.front());
          queue_.pop_front();
          co_await submit(task);
        }
        break;
      case RejectPolicy::caller_runs:
        driver_.add_extra("rejected_caller_runs", 1);
        co_await driver_.execute(task);
        break;
    }
  }

  Co worker(std::uint32_t first) {
    co_await driver_.execute(first);
    for (;;) {
      while (!queue_.empty()) {
        const std::uint32_t task = queue_.front();
        queue_.pop_front();
        co_await k_.compute(k_.machine().queue_handover);  // the pop, on the worker
        co_await driver_.execute(task);
      }
      const bool woken = co_await k_.wait(idle_, idle_wait_limit(limits_, live_));
      if (!woken && queue_.empty() && should_retire(limits_, live_)) {
        --live_;
        co_return;
      }
    }
  }

  Kernel& k_;
  Driver& driver_;
  PoolLimits limits_;
  std::deque<std::uint32_t> queue_;
  int live_ = 0;
  WaitQueue idle_;
};

}  // namespace

std::unique_ptr<Runtime> make_pool(const SimContext& ctx) { return std::make_unique<Pool>(ctx); }

}  // namespace poolsim::sim
