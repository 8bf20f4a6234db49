// injecting_pool.cpp: the simulated pool that adds threads when starved
// (Windows thread pool / .NET PortableThreadPool), twin of
// real/injecting_pool.cpp; decisions in models/injection_policy.hpp.
//
// Mechanism (dotnet/runtime PortableThreadPool.GateThread.cs, through
// models/injection_policy.hpp):
// - min_threads workers and one gate thread start at the first submit,
//   created by the submitting thread (it pays thread_create for each), as the
//   real twin's start() creates them, called by the first hand-over;
// - workers take tasks from one FIFO queue; submit() appends and wakes one
//   idle worker;
// - the gate sleeps injection_delay (a timed sleep, so + timer_slack each
//   period, as the real gate's timed condition-variable wait), then asks
//   should_inject(queued, how long the oldest queued task has waited, live
//   workers): work queued whose head waited a full period -> it creates one
//   worker itself (the gate pays thread_create), up to max_threads: under
//   steady blocking the pool grows one thread per period, a staircase;
// - a worker idle for InjectionParams::idle_timeout (20 s, .NET's
//   ThreadTimeoutMs) retires while should_retire() holds (above min_threads);
//   the deadline is fixed when it goes idle (models/idle_policy.hpp, the
//   rule of both twins and of the pool).
// Hand-over cost: push_cost (queue_push, else queue_handover) of CPU on the
// submitter per push and take_cost on the worker per pop (plus
// queue_handover_remote when another CPU held the queue last), under the
// queue's lock (the twin's locked deque; sim/queue_lock.hpp), as in
// sim/pool.cpp.
// Invariants: counts_.live = workers started and not retired, at most
// max_threads (asserted); idle_ <= counts_.live; the queue is in enqueue
// order, so its head waited longest.
// Counters (RunResult::extra): injections, threads_started, threads_retired,
// workers_peak (workers alive at once; the gate and the submitter are not
// workers but are OS threads of the run, in threads_peak).
// Left out: hill climbing (throughput-driven goal changes), cooperative
// blocking hints, and .NET's CPU-utilisation scaling of the delay.
#include <algorithm>
#include <deque>
#include <memory>

#include "models/assert.hpp"
#include "models/idle_policy.hpp"
#include "models/injection_policy.hpp"
#include "sim/driver.hpp"
#include "sim/queue_lock.hpp"
#include "sim/runtime.hpp"

namespace poolsim::sim {

namespace {

class InjectingPool final : public Runtime {
 public:
  explicit InjectingPool(const SimContext& ctx)
      : k_(ctx.kernel), driver_(ctx.driver), params_(InjectionParams::from(ctx.scenario.backend)) {
    k_.set_worker_stack(k_.machine().worker_stack, k_.machine().pool_stack);
  }

  Co submit(std::uint32_t task) override {
    if (!started_) {
      started_ = true;
      for (int i = 0; i < params_.min_threads; ++i) co_await start_worker();
      co_await k_.spawn(gate(), "gate");
    }
    // The submitter's own part of the hand-over (lock_.rest_push()), the push
    // under the twin's lock, then the wake after its unlock.
    co_await k_.compute(lock_.rest_push());  // its own part; 0 without queue_lock_hold
    if (!lock_.try_lock()) co_await lock_.lock_slow();
    queue_.push_back({task, k_.now()});
    const bool wake = idle_ > 0;
    co_await k_.compute(lock_.handover());  // the push, on the submitter
    if (lock_.unlock()) co_await lock_.wake();
    if (wake)  // glibc's signal may wait for a woken worker to run (CondVar)
      while (!k_.cv_try_signal(idle_q_)) co_await k_.cv_quiesce(idle_q_);
  }

  void report(std::map<std::string, double>& extra) const override {
    counts_.report(extra);
    extra["cv_quiesce_waits"] = static_cast<double>(idle_q_.quiesce_waits());
  }

 private:
  // The calling thread pays thread_create. The count is raised before the
  // new worker runs (the real twin counts it under its lock before spawning).
  Co start_worker() {
    counts_.worker_started();
    POOLSIM_ASSERT(counts_.live <= params_.max_threads, "more live workers than max_threads");
    co_await k_.spawn(worker(), "worker");
  }

  Co gate() {
    for (;;) {
      co_await k_.sleep_for(params_.gate_period);
      const Duration oldest = queue_.empty() ? Duration{0} : k_.now() - queue_.front().second;
      if (counts_.gate_tick(params_, static_cast<std::int64_t>(queue_.size()), oldest)) {
        co_await start_worker();
      }
    }
  }

  Co worker() {
    for (;;) {
      if (!queue_.empty()) {
        if (!lock_.try_lock()) co_await lock_.lock_slow();
        if (queue_.empty()) {  // another worker took it while this one waited
          if (lock_.unlock()) co_await lock_.wake();
          continue;
        }
        const std::uint32_t t = queue_.front().first;
        queue_.pop_front();
        co_await k_.compute(lock_.handover());  // the pop, on the worker
        if (lock_.unlock()) co_await lock_.wake();
        co_await k_.compute(lock_.rest_take());  // its own part; 0 without queue_lock_hold
        co_await driver_.execute(t);
        continue;
      }
      ++idle_;
      POOLSIM_ASSERT(idle_ <= counts_.live, "more idle workers than live ones");
      IdlePeriod idle;
      bool retire = false;
      while (queue_.empty()) {
        const auto deadline = idle.deadline(params_.idle_timeout, k_.now());
        const bool woken = co_await k_.cv_wait_until(idle_q_, *deadline);
        if (!queue_.empty()) break;
        if (idle.after_wait(!woken, should_retire(params_, counts_.live)) == IdleStep::retire) {
          retire = true;
          break;
        }
      }
      --idle_;
      if (retire) {
        counts_.worker_retired();
        co_return;
      }
    }
  }

  Kernel& k_;
  Driver& driver_;
  InjectionParams params_;
  std::deque<std::pair<std::uint32_t, Duration>> queue_;  // task, enqueued at
  QueueLock lock_{k_};                                    // the queue's mutex (sim/queue_lock.hpp)
  int idle_ = 0;
  bool started_ = false;
  CondVar idle_q_;  // the twin's std::condition_variable
  InjectingPoolCounts counts_;
};

}  // namespace

std::unique_ptr<Runtime> make_injecting_pool(const SimContext& ctx) {
  return std::make_unique<InjectingPool>(ctx);
}

}  // namespace poolsim::sim
