// event_loop.cpp: `loops` single-threaded event loops on standalone Asio
// (1.22), the real twin of sim/event_loop.cpp and the stand-in for Node.js,
// Netty's EventLoopGroup, Vert.x, nginx workers, and CompletableFuture
// chains whose stages run on one executor thread.
//
// Mechanism. One asio::io_context per loop thread (spawned through the
// context, one trace track each), kept alive by a work guard. submit()
// assigns tasks to loops round-robin (as Netty's EventLoopGroup.next()) and
// posts the task's first step to that loop; a task never changes loop. A
// task is a chain of handlers on its loop:
//   - `cpu` and lock-hold phases run inline in the current handler;
//   - a `wait` arms an asio::steady_timer and returns: the loop runs other
//     handlers meanwhile, and the timer's completion handler continues the
//     task at the next phase (the callback / thenCompose continuation);
//   - a `lock` takes a real std::mutex from the context's lock table, runs
//     the hold, and, if the phase has `wait_inside`, blocks the loop thread in
//     clock_nanosleep while holding it: a blocking call inside a critical
//     section stalls every task of that loop (models/wait_policy.hpp:
//     block_thread inside a lock). The mutex is released in the same
//     handler, so no lock is ever held across a suspension.
//   - a phase `holding:` a bounded resource takes a permit first
//     (models/resource_pool.hpp's holding_step says where); when none is
//     free the task's continuation waits in the resource's FIFO
//     (real/resources.hpp) and the handler returns: the loop runs other
//     handlers, and the releasing task posts the continuation to the
//     task's loop when it hands the permit over (a callback deferred, as a
//     pool of connections handing a connection to a queued callback).
// Because a task is suspended between phases, it is driven by the context's
// step functions (task_started, run_cpu, lock_mutex, sleep_blocking,
// unlock_mutex, task_finished) instead of execute().
//
// Invariants: a task's state (next phase index, its timer, its permit
// flags) is touched only by
// handlers of its own loop, which run one at a time, so it needs no lock;
// the submit time is written before the post, which orders it before the
// loop reads anything; every submitted task reaches task_finished exactly
// once; stop() releases the work guards only after every task is finalized,
// so run() returns with no pending handler, and joins every loop thread.
//
// Counters (RunResult::extra): loops, handlers (handler invocations that ran
// a step of a task), timers (waits turned into timers), loop_blocked_time
// (seconds loop threads were blocked inside a lock: waiting for a contended
// lock plus waits inside it), blocking_waits (waits inside a lock).
//
// Left out: I/O readiness (a wait is a timer, not a socket); a loop's task
// queue bound and back-pressure; Node's libuv thread pool for blocking calls;
// per-task CPU time (a loop thread interleaves tasks, so per_task_cpu() is
// false).
#include <algorithm>
#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <atomic>
#include <memory>
#include <vector>

#include "models/resource_pool.hpp"
#include "models/wait_policy.hpp"
#include "real/backend.hpp"

namespace poolsim::real {
namespace {

// One loop: its io_context, the guard that keeps run() alive while tasks may
// still arrive, and counters written only by the loop thread.
struct Loop {
  asio::io_context io{1};  // concurrency hint 1: a single thread runs it
  std::unique_ptr<asio::executor_work_guard<asio::io_context::executor_type>> guard;
  pthread_t thread{};
  std::int64_t handlers = 0;
  std::int64_t timers = 0;
  std::int64_t blocking_waits = 0;
  Duration blocked{};
};

class EventLoop final : public Backend {
 public:
  explicit EventLoop(const BackendSpec& spec) : stack_(spec.stack) {
    const int n = std::max(1, spec.loops);
    for (int i = 0; i < n; ++i) loops_.push_back(std::make_unique<Loop>());
  }

  // The per-task bookkeeping (a phase index, a permit state, a timer slot:
  // 14 bytes a task, 3.5 MB for java-mixed's 250,000) is the harness's, not
  // the runtime's: made before the origin, and before the memory baselines.
  // Made in start(), on the first hand-over, its zeroing faulted in ~850
  // pages and held the first wave's second task back 1.27 ms (2026-12-03;
  // the simulator's loops start in 84 us). Made after the baselines (in
  // prepare, until 2026-12-06), memory_peak counted what of it the heap's
  // free resident pages could not hold: nothing in the battery's runs, whose
  // main heap had room (moving it changed no figure there), but a user's
  // loop holds nothing for a request not yet arrived or long done.
  void reserve(RunContext& ctx) override {
    const std::size_t n = ctx.workload().tasks.size();
    next_phase_ = std::make_unique<std::uint32_t[]>(n);
    permit_ = std::make_unique<PermitState[]>(n);
    timers_.resize(n);
  }

  void start(RunContext& ctx) override {
    ctx_ = &ctx;
    for (std::size_t i = 0; i < loops_.size(); ++i) {
      Loop& loop = *loops_[i];
      loop.guard = std::make_unique<asio::executor_work_guard<asio::io_context::executor_type>>(
          loop.io.get_executor());
      loop.thread = ctx.spawn("loop " + std::to_string(i + 1), stack_, [&loop] { loop.io.run(); });
    }
  }

  void submit(std::uint32_t task) override {
    const std::size_t i = next_loop_.fetch_add(1, std::memory_order_relaxed) % loops_.size();
    Loop& loop = *loops_[i];
    asio::post(loop.io, [this, &loop, task] {
      next_phase_[task] = 0;
      ctx_->task_started(task);
      step(loop, task);
    });
  }

  void stop() override {
    for (auto& loop : loops_) loop->guard.reset();
    for (auto& loop : loops_) ctx_->join(loop->thread);
  }

  void report(std::map<std::string, double>& extra) const override {
    std::int64_t handlers = 0, timers = 0, blocking = 0;
    Duration blocked{};
    for (const auto& loop : loops_) {
      handlers += loop->handlers;
      timers += loop->timers;
      blocking += loop->blocking_waits;
      blocked += loop->blocked;
    }
    extra["loops"] = static_cast<double>(loops_.size());
    extra["handlers"] = static_cast<double>(handlers);
    extra["timers"] = static_cast<double>(timers);
    extra["blocking_waits"] = static_cast<double>(blocking);
    extra["loop_blocked_time"] = to_seconds(blocked);
  }

  bool per_task_cpu() const override { return false; }

 private:
  // Runs the task's phases from next_phase_[task] until it arms a timer or
  // ends. Runs on the task's loop thread only.
  void step(Loop& loop, std::uint32_t task) {
    ++loop.handlers;
    const Workload& w = ctx_->workload();
    const auto phases = w.phases_of(w.tasks[task]);
    std::uint32_t& k = next_phase_[task];
    PermitState& permit = permit_[task];
    if (permit.release_due) {  // the wait that ended held the last phase's permit
      permit.release_due = false;
      ctx_->release_resource(phases[k - 1].resource);
    }
    while (k < phases.size()) {
      const Phase& p = phases[k];
      const HoldingStep hold = holding_step(phases, k);
      if (hold.acquire_before && !permit.granted && !acquire(loop, task, p.resource)) return;
      permit.granted = false;
      ++k;
      switch (p.kind) {
        case PhaseKind::cpu:
          ctx_->run_cpu(p.duration);
          break;
        case PhaseKind::wait:
          if (p.duration.count() > 0) {
            permit.release_due = hold.release_after;
            arm_timer(loop, task, p.duration);
            return;
          }
          break;
        case PhaseKind::lock:
          run_lock_phase(loop, p);
          break;
      }
      if (hold.release_after) ctx_->release_resource(p.resource);
    }
    timers_[task].reset();
    ctx_->task_finished(task);
  }

  // models/wait_policy.hpp's rule, which this step code follows: a plain
  // wait arms a timer, a wait inside a lock blocks the loop thread.
  static_assert(wait_effect(BackendKind::event_loop, false) == WaitEffect::release_thread);
  static_assert(wait_effect(BackendKind::event_loop, true) == WaitEffect::block_thread);

  void run_lock_phase(Loop& loop, const Phase& p) {
    if (!ctx_->mutex(p.lock).try_lock()) {
      const Duration t0 = RunContext::monotonic_now();
      ctx_->lock_mutex(p.lock);  // the loop thread blocks
      loop.blocked += RunContext::monotonic_now() - t0;
    }
    ctx_->run_cpu(p.duration);
    if (p.wait_inside.count() > 0) {
      const Duration t0 = RunContext::monotonic_now();
      ctx_->sleep_blocking(p.wait_inside);  // the loop thread blocks
      loop.blocked += RunContext::monotonic_now() - t0;
      ++loop.blocking_waits;
    }
    ctx_->unlock_mutex(p.lock);
  }

  // A continuation waiting for a permit: grant() posts it to the task's
  // loop (from the releasing thread), where it proceeds holding the permit.
  struct LoopWaiter final : ResourceTable::Waiter {
    EventLoop* el;
    Loop* loop;
    std::uint32_t task;
    std::uint16_t resource;
    Duration asked;
    LoopWaiter(EventLoop* e, Loop* l, std::uint32_t t, std::uint16_t r, Duration a)
        : el(e), loop(l), task(t), resource(r), asked(a) {}
    void grant() override {
      asio::post(loop->io, [el = el, loop = loop, task = task, r = resource, asked = asked] {
        el->ctx_->resources().granted(r, RunContext::monotonic_now() - asked);
        el->permit_[task].granted = true;
        el->step(*loop, task);
      });
    }
  };

  // Takes a permit of r for the task (true), or leaves its continuation in
  // the resource's queue (false: the handler returns, the loop goes on).
  bool acquire(Loop& loop, std::uint32_t task, std::uint16_t r) {
    ResourceTable& table = ctx_->resources();
    if (table.try_acquire(r)) {
      table.granted(r, Duration{0});
      return true;
    }
    const Duration asked = RunContext::monotonic_now();
    if (table.acquire(r, std::make_shared<LoopWaiter>(this, &loop, task, r, asked))) {
      table.granted(r, RunContext::monotonic_now() - asked);
      return true;
    }
    return false;
  }

  void arm_timer(Loop& loop, std::uint32_t task, Duration d) {
    ++loop.timers;
    auto& timer = timers_[task];
    if (!timer) timer = std::make_unique<asio::steady_timer>(loop.io);
    timer->expires_after(std::chrono::nanoseconds(d.count()));
    timer->async_wait([this, &loop, task](const std::error_code& ec) {
      if (ec)
        ctx_->fail("event-loop: timer of task " + std::to_string(task) +
                   " failed: " + ec.message());
      step(loop, task);
    });
  }

  const Bytes stack_;
  RunContext* ctx_ = nullptr;
  std::vector<std::unique_ptr<Loop>> loops_;
  std::atomic<std::uint64_t> next_loop_{0};
  // Per task, touched only on the task's loop: the next phase to run, and
  // the timer of its waits (created at its first wait, freed at its end).
  std::unique_ptr<std::uint32_t[]> next_phase_;
  // Per task, on its loop: a permit was handed to its waiting continuation;
  // the wait now armed ends the last phase holding a permit (release it
  // when the timer fires).
  struct PermitState {
    bool granted = false;
    bool release_due = false;
  };
  std::unique_ptr<PermitState[]> permit_;
  std::vector<std::unique_ptr<asio::steady_timer>> timers_;
};

}  // namespace

std::unique_ptr<Backend> make_event_loop_backend(const BackendSpec& spec) {
  return std::make_unique<EventLoop>(spec);
}

}  // namespace poolsim::real
