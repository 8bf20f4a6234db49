// pool.cpp: our ThreadPoolExecutor-style pool, the real twin of sim/pool.cpp.
//
// Mechanism (java.util.concurrent.ThreadPoolExecutor, OpenJDK): submit()
// asks models/pool_policy.hpp decide_submit() with the live worker count and
// the queue length: start a core thread with the task as its first task;
// else enqueue (waking one idle worker, if any); else, the queue being full,
// start an extra thread up to max_threads; else reject per policy:
//   abort          the task is recorded as rejected (Java throws to the caller);
//   discard        dropped, recorded as rejected;
//   discard-oldest the oldest queued task is dropped (rejected) and the new
//                  one is offered again;
//   caller-runs    the submitting thread runs it (the submitter, or the
//                  worker whose completion released it).
// A worker runs its first task, then takes tasks from the FIFO queue; when
// the queue is empty it waits, for keep_alive if idle_wait_limit() says so
// (it is above the core size), and retires if should_retire() still holds
// when that wait times out with no work. Core threads start lazily, as in
// Java (no prestart).
// Invariants (under mu_): live_ = workers started and not retired, counted
// from the decision that starts one (as Java's ctl CAS), idle_ <= live_,
// queue_.size() <= queue capacity. Nothing calls into the RunContext while
// holding mu_ (a completion may re-enter submit()).
// Left out: Java's lock-free fast path (ctl CAS, double-check of the run
// state): decisions here are taken under one mutex, which serialises
// submitters more than Java does; allowCoreThreadTimeOut; shutdown states.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

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
      switch (decide_submit(limits_, live_, static_cast<std::int64_t>(queue_.size()))) {
        case SubmitAction::start_core_thread:
        case SubmitAction::start_extra_thread:
          start_worker(lk, task);
          return;
        case SubmitAction::enqueue:
          queue_.push_back(task);
          if (idle_ > 0) cv_.notify_one();
          return;
        case SubmitAction::reject:
          break;
      }
      ++rejections_;
      switch (limits_.reject) {
        case RejectPolicy::abort:
        case RejectPolicy::discard:
          lk.unlock();
          ctx_->task_rejected(task);
          return;
        case RejectPolicy::caller_runs:
          ++caller_runs_;
          lk.unlock();
          ctx_->execute(task);
          return;
        case RejectPolicy::discard_oldest: {
          if (queue_.empty()) {  // nothing to drop (queue capacity 0): the new task goes
            lk.unlock();
            ctx_->task_rejected(task);
            return;
          }
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

  void report(std::map<std::string, double>& extra) const override {
    extra["threads_started"] = static_cast<double>(started_);
    extra["threads_retired"] = static_cast<double>(retired_);
    extra["rejections"] = static_cast<double>(rejections_);
    extra["caller_runs"] = static_cast<double>(caller_runs_);
  }

 private:
  // Called with mu_ held; returns with it released.
  void start_worker(std::unique_lock<std::mutex>& lk, std::uint32_t first) {
    ++live_;
    const int n = ++started_;
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
        --live_;
        ++retired_;
        return;
      }
    }
  }

  // Waits for work or stop; true if this worker must retire (keep-alive).
  bool idle_until_work_or_retire(std::unique_lock<std::mutex>& lk) {
    ++idle_;
    // The keep-alive clock runs from the start of this idle period (Java's
    // poll(keepAliveTime)); spurious wake-ups do not restart it.
    bool timing = false;
    std::chrono::steady_clock::time_point deadline{};
    bool retire = false;
    while (queue_.empty() && !stopping_) {
      const auto limit = idle_wait_limit(limits_, live_);
      if (!limit) {
        timing = false;
        cv_.wait(lk);
        continue;
      }
      if (!timing) {
        deadline = std::chrono::steady_clock::now() + *limit;
        timing = true;
      }
      if (cv_.wait_until(lk, deadline) == std::cv_status::timeout && queue_.empty() && !stopping_) {
        if (should_retire(limits_, live_)) {
          retire = true;
          break;
        }
        timing = false;
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
  int live_ = 0;
  int idle_ = 0;
  bool stopping_ = false;
  std::vector<pthread_t> threads_;
  int started_ = 0;
  int retired_ = 0;
  std::int64_t rejections_ = 0;
  std::int64_t caller_runs_ = 0;
};

}  // namespace

std::unique_ptr<Backend> make_pool_backend(const BackendSpec& spec) {
  return std::make_unique<Pool>(spec);
}

}  // namespace poolsim::real
