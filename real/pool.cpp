// pool.cpp: our ThreadPoolExecutor-style pool, the real twin of sim/pool.cpp.
//
// Mechanism (java.util.concurrent.ThreadPoolExecutor, OpenJDK): submit()
// asks models/pool_policy.hpp decide_submit() with the live worker count and
// the queue length: start a core thread with the task as its first task;
// else enqueue (waking one idle worker, if any); else, the queue being full,
// start an extra thread up to max_threads; else reject per policy
// (decide_reject(), counted in PoolCounts with the simulated pool's names):
//   abort          the task is recorded as rejected (Java throws to the caller);
//   discard        dropped, recorded as rejected;
//   discard-oldest the oldest queued task is dropped (rejected) and the new
//                  one is offered again;
//   caller-runs    the submitting thread runs it (the submitter, or the
//                  worker whose completion released it).
// A worker runs its first task, then takes tasks from the FIFO queue; when
// the queue is empty it is idle (models/idle_policy.hpp, as the simulated
// pool): it waits until keep_alive after the idle period began if
// idle_wait_limit() says so (it is above the core size), and retires if
// should_retire() holds when that deadline passes with no work. Core
// threads start lazily, as in Java (no prestart).
// Invariants (under mu_, asserted): counts_.live = workers started and not
// retired, counted from the decision that starts one (as Java's ctl CAS), at
// most max_threads; idle_ <= counts_.live; queue_.size() <= queue capacity.
// Nothing calls into the RunContext while holding mu_ (a completion may
// re-enter submit()).
// Counters (RunResult::extra): threads_started, threads_retired, rejections,
// caller_runs.
// Left out: Java's lock-free fast path (ctl CAS, double-check of the run
// state): decisions here are taken under one mutex, which serialises
// submitters more than Java does; allowCoreThreadTimeOut; shutdown states.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

#include "models/assert.hpp"
#include "models/idle_policy.hpp"
#include "models/pool_policy.hpp"
#include "real/backend.hpp"

namespace poolsim::real {
namespace {

class Pool final : public Backend {
 public:
  explicit Pool(const BackendSpec& spec) : limits_(PoolLimits::from(spec)), stack_(spec.stack) {}

  void start(RunContext& ctx) override { ctx_ = &ctx; }

  void submit(std::uint32_t task) override {
    std::unique_lock lk(mu_);
    for (;;) {
      const auto queued = static_cast<std::int64_t>(queue_.size());
      switch (decide_submit(limits_, counts_.live, queued)) {
        case SubmitAction::start_core_thread:
        case SubmitAction::start_extra_thread:
          start_worker(lk, task);
          return;
        case SubmitAction::enqueue:
          queue_.push_back(task);
          POOLSIM_ASSERT(!limits_.queue_capacity ||
                             static_cast<std::int64_t>(queue_.size()) <= *limits_.queue_capacity,
                         "the queue holds more than its capacity");
          // Woken after the lock is let go, as ThreadPoolExecutor's
          // LinkedBlockingQueue does (AQS's signal moves the waiter to the
          // lock's queue; unlock unparks it). glibc's condition variable
          // wakes at once: signalled under the lock, the woken worker took
          // the CPU from the submitter (packed on its CPU), blocked on the
          // mutex the submitter still held, and was woken again by its
          // unlock: 34 of the submitter's 70 preemptions in a quickstart
          // repetition (perf sched, 2026-12-02), a second wake and a
          // voluntary switch that neither Java nor the model has.
          if (idle_ > 0) {
            lk.unlock();
            cv_.notify_one();
          }
          return;
        case SubmitAction::reject:
          break;
      }
      switch (counts_.rejected(limits_.reject, queued)) {
        case RejectAction::reject_new:
          lk.unlock();
          ctx_->task_rejected(task);
          return;
        case RejectAction::run_on_caller:
          lk.unlock();
          ctx_->execute(task);
          return;
        case RejectAction::drop_oldest: {
          const std::uint32_t oldest = queue_.front();
          queue_.pop_front();
          lk.unlock();
          ctx_->task_rejected(oldest);
          lk.lock();
          continue;  // offer the new task again (Java: poll(), then execute(r))
        }
      }
    }
  }

  void stop() override {
    {
      std::lock_guard lk(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    std::vector<pthread_t> threads;
    {
      std::lock_guard lk(mu_);
      threads.swap(threads_);
    }
    for (pthread_t t : threads) ctx_->join(t);
  }

  void report(std::map<std::string, double>& extra) const override { counts_.report(extra); }

 private:
  // Called with mu_ held; returns with it released.
  void start_worker(std::unique_lock<std::mutex>& lk, std::uint32_t first) {
    const int n = counts_.worker_started();
    POOLSIM_ASSERT(counts_.live <= limits_.max, "more live workers than max_threads");
    lk.unlock();
    const pthread_t t =
        ctx_->spawn("worker " + std::to_string(n), stack_, [this, first] { worker_loop(first); });
    lk.lock();
    threads_.push_back(t);
    lk.unlock();
  }

  void worker_loop(std::uint32_t first) {
    ctx_->execute(first);
    std::unique_lock lk(mu_);
    for (;;) {
      if (!queue_.empty()) {
        const std::uint32_t t = queue_.front();
        queue_.pop_front();
        lk.unlock();
        ctx_->execute(t);
        lk.lock();
        continue;
      }
      if (stopping_) return;
      if (idle_until_work_or_retire(lk)) {
        counts_.worker_retired();
        return;
      }
    }
  }

  // Waits for work or stop; true if this worker must retire (keep-alive).
  bool idle_until_work_or_retire(std::unique_lock<std::mutex>& lk) {
    ++idle_;
    POOLSIM_ASSERT(idle_ <= counts_.live, "more idle workers than live ones");
    IdlePeriod idle;
    bool retire = false;
    while (queue_.empty() && !stopping_) {
      const auto deadline =
          idle.deadline(idle_wait_limit(limits_, counts_.live), RunContext::monotonic_now());
      bool timed_out = false;
      if (!deadline) {
        cv_.wait(lk);
      } else {
        const auto until = std::chrono::steady_clock::time_point(
            std::chrono::duration_cast<std::chrono::steady_clock::duration>(*deadline));
        timed_out = cv_.wait_until(lk, until) == std::cv_status::timeout;
      }
      if (!queue_.empty() || stopping_) break;
      if (idle.after_wait(timed_out, should_retire(limits_, counts_.live)) == IdleStep::retire) {
        retire = true;
        break;
      }
    }
    --idle_;
    return retire;
  }

  const PoolLimits limits_;
  const Bytes stack_;
  RunContext* ctx_ = nullptr;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::uint32_t> queue_;
  PoolCounts counts_;
  int idle_ = 0;
  bool stopping_ = false;
  std::vector<pthread_t> threads_;
};

}  // namespace

std::unique_ptr<Backend> make_pool_backend(const BackendSpec& spec) {
  return std::make_unique<Pool>(spec);
}

}  // namespace poolsim::real
