// injecting_pool.cpp: a pool that adds threads when starved (Windows thread
// pool / .NET PortableThreadPool), the real twin of sim/injecting_pool.cpp.
//
// Mechanism: min_threads workers start with the runtime and take tasks from
// one FIFO queue. A gate thread (PortableThreadPool.GateThread.cs) wakes
// every injection_delay and asks models/injection_policy.hpp should_inject()
// with the queue length, how long the queue's head has waited, and the live
// worker count: work queued whose head waited a full period (every worker
// is blocked or busy on long tasks) -> start one more worker, up to
// max_threads. A worker idle for InjectionParams::idle_timeout retires
// while should_retire() holds (above min_threads); the idle period's
// deadline is models/idle_policy.hpp's, as in the simulated twin.
// The gate thread is a real OS thread of the runtime and counts in the
// run's threads (as .NET's gate thread does).
// Invariants (under mu_): counts_.live = workers started and not retired,
// at most max_threads (asserted); idle_ <= counts_.live; the queue is in
// enqueue order; nothing calls into the RunContext under mu_ but its clock
// (now()).
// Left out: hill climbing (throughput-driven goal changes), the
// cooperative-blocking hints, and the immediate starts below the minimum
// (the minimum is started up front).
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

#include "models/assert.hpp"
#include "models/idle_policy.hpp"
#include "models/injection_policy.hpp"
#include "real/backend.hpp"

namespace poolsim::real {
namespace {

class InjectingPool final : public Backend {
 public:
  explicit InjectingPool(const BackendSpec& spec)
      : params_(InjectionParams::from(spec)), stack_(spec.stack) {}

  void start(RunContext& ctx) override {
    ctx_ = &ctx;
    std::unique_lock lk(mu_);
    for (int i = 0; i < params_.min_threads; ++i) start_worker(lk);
    lk.unlock();
    gate_ = ctx.spawn("gate", stack_, [this] { gate_loop(); });
  }

  void submit(std::uint32_t task) override {
    std::unique_lock lk(mu_);
    queue_.push_back({task, ctx_->now()});
    if (idle_ == 0) return;
    // Woken after the lock is let go (real/pool.cpp says why: a worker
    // signalled under the lock wakes into the mutex the submitter holds).
    lk.unlock();
    cv_.notify_one();
  }

  void stop() override {
    {
      std::lock_guard lk(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    gate_cv_.notify_all();
    ctx_->join(gate_);
    std::vector<pthread_t> threads;
    {
      std::lock_guard lk(mu_);
      threads.swap(threads_);
    }
    for (pthread_t t : threads) ctx_->join(t);
  }

  void report(std::map<std::string, double>& extra) const override { counts_.report(extra); }

 private:
  // Called and returns with mu_ held (released around the spawn).
  void start_worker(std::unique_lock<std::mutex>& lk) {
    const int n = counts_.worker_started();
    POOLSIM_ASSERT(counts_.live <= params_.max_threads, "more live workers than max_threads");
    lk.unlock();
    const pthread_t t =
        ctx_->spawn("worker " + std::to_string(n), stack_, [this] { worker_loop(); });
    lk.lock();
    threads_.push_back(t);
  }

  void gate_loop() {
    std::unique_lock lk(mu_);
    for (;;) {
      const auto wake = std::chrono::steady_clock::now() + params_.gate_period;
      gate_cv_.wait_until(lk, wake, [this] { return stopping_; });
      if (stopping_) return;
      const Duration oldest = queue_.empty() ? Duration{0} : ctx_->now() - queue_.front().second;
      if (counts_.gate_tick(params_, static_cast<std::int64_t>(queue_.size()), oldest)) {
        start_worker(lk);
      }
    }
  }

  void worker_loop() {
    std::unique_lock lk(mu_);
    for (;;) {
      if (!queue_.empty()) {
        const std::uint32_t t = queue_.front().first;
        queue_.pop_front();
        lk.unlock();
        ctx_->execute(t);
        lk.lock();
        continue;
      }
      if (stopping_) return;
      ++idle_;
      POOLSIM_ASSERT(idle_ <= counts_.live, "more idle workers than live ones");
      IdlePeriod idle;
      bool retire = false;
      while (queue_.empty() && !stopping_) {
        const Duration deadline = *idle.deadline(params_.idle_timeout, RunContext::monotonic_now());
        const auto until = std::chrono::steady_clock::time_point(
            std::chrono::duration_cast<std::chrono::steady_clock::duration>(deadline));
        const bool timed_out = cv_.wait_until(lk, until) == std::cv_status::timeout;
        if (!queue_.empty() || stopping_) break;
        if (idle.after_wait(timed_out, should_retire(params_, counts_.live)) == IdleStep::retire) {
          retire = true;
          break;
        }
      }
      --idle_;
      if (retire) {
        counts_.worker_retired();
        return;
      }
    }
  }

  const InjectionParams params_;
  const Bytes stack_;
  RunContext* ctx_ = nullptr;
  pthread_t gate_{};

  std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable gate_cv_;
  std::deque<std::pair<std::uint32_t, Duration>> queue_;  // task, enqueued at (run clock)
  int idle_ = 0;
  bool stopping_ = false;
  std::vector<pthread_t> threads_;
  InjectingPoolCounts counts_;  // under mu_
};

}  // namespace

std::unique_ptr<Backend> make_injecting_pool_backend(const BackendSpec& spec) {
  return std::make_unique<InjectingPool>(spec);
}

}  // namespace poolsim::real
