// event_loop.cpp: simulated event loops (Node.js, Netty's EventLoopGroup,
// Vert.x, nginx workers), `loops` single-threaded loops; twin of
// real/event_loop.cpp (one asio::io_context per loop thread).
//
// Mechanism (the M:N core is sim/user_threads.hpp, with each task fixed to
// one host):
// - submit() assigns tasks to loops round-robin (Netty's
//   EventLoopGroup.next(), the real twin's counter) and posts the task to
//   that loop's queue, waking the loop if it is idle; a task never changes
//   loop;
// - a loop runs its queue in FIFO order: new tasks and timer completions
//   alike (one handler queue, as io_context's), each until the task waits
//   or ends; the reactor is one more entry going round it (asio's
//   task_operation_, scheduler::do_run_one): a timer's completion joins the
//   back of the queue only at the reactor's turn (epoll_reactor::run
//   collects the expired timers, task_cleanup queues them and the reactor
//   behind them), and with nothing else queued the reactor blocks the loop
//   thread (epoll_wait) until a timer expires or a post interrupts it;
// - `cpu` and lock-hold phases run inline on the loop thread;
// - a `wait` is a timer (asio::steady_timer): the loop runs other handlers
//   meanwhile; at its deadline the continuation is queued on the
//   task's own loop (at its next reactor turn; a loop blocked in
//   epoll_wait is woken by the reactor's timerfd, which has no slack:
//   timer_slack - hrtimer_slack after the deadline, as a timed sleep wakes);
// - a wait for a permit of a bounded resource (`holding:`) defers the
//   task: its continuation is posted to its loop when a permit is handed
//   over (the real twin's continuation queue; the loop pays queue_handover
//   for it instead of timer_arm);
// - a `wait_inside` a `lock` blocks the loop thread while it holds the lock,
//   and a contended lock blocks it too: every task of that loop waits
//   (models/wait_policy.hpp: block_thread inside a lock).
// Loop threads start at the first submit, created by the submitting thread
// (it pays thread_create for each).
// Counters (RunResult::extra): loops, handlers (handler runs: task starts
// and resumptions), timers (waits turned into timers), blocking_waits (waits
// inside a lock), loop_blocked_time (seconds loop threads were blocked by
// them; the real twin adds the time spent acquiring a contended lock).
// Runtime costs (CPU of the thread that does the work): post_cost
// (loop_post, else queue_push, else queue_handover) on the submitter per
// post from outside the loops (push_cost from a loop thread) and take_cost
// on the loop per new task's handler taken from the queue, each under the
// loop's scheduler mutex (a QueueLock, as the pool's queue: plus
// queue_handover_remote when the other side last held it on another CPU,
// and glibc's futex calls when contended; a post interrupts a loop blocked
// in its reactor before its unlock, and the loop locks the mutex at its
// reactor turn's end, as asio's wake_one_thread_and_unlock and
// task_cleanup do); timer_arm on the loop per wait
// (arming the timer and, later, dispatching its completion, as calibrate
// measures them together); task_remote on the loop per task posted from
// another CPU (remote_start_cost, paid in Driver::execute before its first
// phase).
// Memory: a task holds loop_task_touch (its handler and timer in the real
// Asio loop) from its first handler to its end (sim/user_threads.hpp),
// allocated from its loop thread's own malloc arena: with the profile's
// arena_header, each loop's arena holds whole pages up to its high-water
// mark (Kernel::arena_touch); a task posted but not yet started holds
// nothing here; the loops' threads
// touch loop_stack more stack in total, at most worker_stack each (the
// dynamic linker's lazy binding, Kernel::set_worker_stack).
// Left out: I/O readiness (a wait is a timer, not a socket), a loop queue's
// bound and back-pressure, Node's libuv thread pool for blocking calls.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "sim/driver.hpp"
#include "sim/queue_lock.hpp"
#include "sim/runtime.hpp"
#include "sim/user_threads.hpp"

namespace poolsim::sim {

namespace {

class EventLoop final : public Runtime {
 public:
  explicit EventLoop(const SimContext& ctx)
      : k_(ctx.kernel),
        home_(ctx.workload.tasks.size(), 0),
        users_(ctx.kernel, ctx.driver, BackendKind::event_loop,
               ctx.kernel.machine().loop_task_touch, ctx.workload.tasks.size(), &EventLoop::ready,
               this) {
    k_.set_worker_stack(k_.machine().worker_stack, k_.machine().loop_stack);
    for (int i = 0; i < std::max(1, ctx.scenario.backend.loops); ++i) loops_.emplace_back(k_);
  }

  Co submit(std::uint32_t task) override {
    if (!started_) {
      started_ = true;
      for (std::size_t i = 0; i < loops_.size(); ++i) {
        const ThreadId t = co_await k_.spawn(loop(i), "loop");
        loops_[i].host = &users_.adopt(t);
        loops_[i].thread = t;
      }
    }
    const std::size_t l = next_loop_++ % loops_.size();
    home_[task] = static_cast<std::uint32_t>(l);
    // asio::post from outside the loop (scheduler::post_immediate_completion):
    // the push under the scheduler's mutex, the loop's wake after it.
    Loop& loop = loops_[l];
    // Its own part of the post: from outside the loops post_cost (loop_post,
    // measured on the submitter's posts: the handler allocated by malloc);
    // from a loop thread (a closed client's next request, a continuation) a
    // pool's push (Asio recycles handler memory per loop thread).
    const MachineProfile& m = k_.machine();
    const bool inside = std::any_of(loops_.begin(), loops_.end(),
                                    [&](const Loop& x) { return x.thread == k_.self(); });
    co_await k_.compute(loop.lock.rest_push(inside ? push_cost(m) : post_cost(m)));
    if (!loop.lock.try_lock()) co_await loop.lock.lock_slow();
    co_await k_.compute(loop.lock.handover());  // the post, on the submitter
    // wake_one_thread_and_unlock: a loop blocked in its reactor is
    // interrupted (epoll_ctl on the interrupter's descriptor) before the
    // unlock; a woken loop that preempts the poster finds the mutex held at
    // its reactor turn's end (task_cleanup) and sleeps on it until the
    // unlock wakes it.
    const bool interrupts = loop.idle;
    if (interrupts) k_.enter_syscall();
    post(loop, task);
    if (interrupts) co_await k_.leave_syscall();
    if (loop.lock.unlock()) co_await loop.lock.wake();
  }

  // A task posted from another CPU: its record and the Asio handler the
  // poster allocated come over (task_remote, measured on the real loop).
  // The other runtimes pay none: the real pool's and virtual threads' extra
  // on two CPUs is their shared queue's, not their remote starts'
  // (docs/simulator.md, "a task started on another CPU").
  Duration remote_start_cost() const override { return k_.machine().task_remote; }

  void report(std::map<std::string, double>& extra) const override {
    const UserThreads::Counters& c = users_.counters();
    extra["loops"] = static_cast<double>(loops_.size());
    extra["handlers"] = static_cast<double>(c.mounts);
    extra["timers"] = static_cast<double>(c.unmounts);
    extra["blocking_waits"] = static_cast<double>(c.pins);
    extra["loop_blocked_time"] = to_seconds(Duration{c.pinned_ns});
    // Sleeps on a scheduler's mutex: mostly a loop woken by a post that
    // preempted its poster inside the mutex (wake_one_thread_and_unlock).
    std::int64_t sleeps = 0;
    for (const Loop& l : loops_) sleeps += l.lock.sleeps();
    extra["loop_lock_sleeps"] = static_cast<double>(sleeps);
  }

 private:
  // The reactor's place in a loop's queue (asio's task_operation_).
  static constexpr std::uint32_t kReactor = UINT32_MAX;
  struct Loop {
    explicit Loop(Kernel& k) : lock(k) {}
    // Handlers ready to run, FIFO, and kReactor once, where the reactor
    // runs next (scheduler::init_task puts it in the empty queue).
    std::deque<std::uint32_t> queue{kReactor};
    // Timers expired since the reactor last ran: their completions join the
    // queue when it runs next.
    std::vector<std::uint32_t> expired;
    UserThreads::Host* host = nullptr;
    ThreadId thread = kNoThread;  // the loop's OS thread
    bool idle = false;
    WaitQueue wake;
    QueueLock lock;  // the io_context scheduler's mutex (sim/queue_lock.hpp)
  };

  void post(Loop& l, std::uint32_t task) {
    l.queue.push_back(task);
    if (l.idle) k_.notify_one(l.wake);
  }

  // A permit handed over posts the task's continuation (op_queue_, at
  // once); a timer's completion waits for the reactor (epoll_reactor::run
  // collects the expired timers: timer_queue's own clock, at its
  // deadline). A loop blocked in epoll_wait is woken by the reactor's
  // timerfd, armed without slack (timerfd_settime -> hrtimer_start): its
  // interrupt's way to the loop, timer_slack less hrtimer_slack later, as a
  // timed sleep wakes (idle exit included).
  static void ready(void* self, std::uint32_t task, bool timer) {
    auto& el = *static_cast<EventLoop*>(self);
    const std::uint32_t i = el.home_[task];
    Loop& l = el.loops_[i];
    if (!timer) {
      el.post(l, task);
      return;
    }
    l.expired.push_back(task);
    if (!l.idle) return;
    el.k_.engine().at(el.k_.now() + el.users_.blocked_host_late(), &EventLoop::on_timerfd, &el, i);
  }

  // The timerfd's expiry reaches the loop: woken if it is still blocked with
  // a timer due (a post may have woken it first, and its reactor turn
  // collected the timer).
  static void on_timerfd(void* self, std::uint64_t i) {
    auto& el = *static_cast<EventLoop*>(self);
    Loop& l = el.loops_[i];
    if (l.idle && !l.expired.empty()) el.k_.timer_notify_one(l.wake);
  }

  // The end of the reactor's turn (task_cleanup): the completions of the
  // timers that expired go to the back of the queue, the reactor behind them.
  static void requeue_reactor(Loop& l) {
    for (const std::uint32_t t : l.expired) l.queue.push_back(t);
    l.expired.clear();
    l.queue.push_back(kReactor);
  }

  Co loop(std::size_t i) {
    Loop& l = loops_[i];
    int since_unwind = 0;
    bool held = false;  // the scheduler's mutex, from the reactor turn's end
    for (;;) {
      POOLSIM_ASSERT(!l.queue.empty(), "a loop's queue lost its reactor");
      const std::uint32_t task = l.queue.front();
      l.queue.pop_front();
      if (held && (task == kReactor || users_.started(task))) {
        held = false;
        if (l.lock.unlock()) co_await l.lock.wake();
      }
      if (task == kReactor) {
        // The reactor's turn (scheduler::do_run_one at task_operation_):
        // with other handlers queued it polls (epoll_wait, timeout 0), else
        // it blocks until a timer expires or a post interrupts it.
        if (l.queue.empty() && l.expired.empty()) {
          l.idle = true;
          co_await k_.wait(l.wake);
          l.idle = false;
          // task_cleanup: the completions go back under the scheduler's
          // mutex, and the operation after the reactor is taken in the same
          // hold (do_run_one's loop). Contended only where the loop was
          // woken by a post still holding it.
          if (!l.lock.try_lock()) co_await l.lock.lock_slow();
          held = true;
        }
        requeue_reactor(l);
        continue;
      }
      // A new task's handler is a posted operation taken from the queue
      // under the scheduler's mutex (scheduler::do_run_one); a timer
      // completion's dispatch is in timer_arm, charged at the arm.
      if (!users_.started(task)) {
        if (!std::exchange(held, false) && !l.lock.try_lock()) co_await l.lock.lock_slow();
        co_await k_.compute(l.lock.handover());
        if (l.lock.unlock()) co_await l.lock.wake();
        co_await k_.compute(l.lock.rest_take());  // its own part; 0 without queue_lock_hold
        // Its handler and timer: their bytes, and the faults of new heap.
        if (const Duration fault = users_.first_touch(task, l.host); fault > Duration{0})
          co_await k_.compute(fault);
      }
      const bool ended = co_await users_.run(*l.host, task);
      // A wait armed a timer; a wait for a permit left a continuation
      // that the releaser posts (a queue hand-over).
      if (!ended)
        co_await k_.compute(l.host->parked() ? k_.machine().queue_handover
                                             : k_.machine().timer_arm);
      // Bound the native stack (Kernel::unwind_stack), in zero time.
      if (++since_unwind == kUnwindEvery) {
        since_unwind = 0;
        co_await k_.unwind_stack();
      }
    }
  }

  // Handlers a loop runs between two stack unwinds (see virtual_threads.cpp).
  static constexpr int kUnwindEvery = 64;
  Kernel& k_;
  std::deque<Loop> loops_;           // a deque: a Loop holds a lock, which does not move
  std::vector<std::uint32_t> home_;  // task -> its loop
  std::uint64_t next_loop_ = 0;
  bool started_ = false;
  UserThreads users_;
};

}  // namespace

std::unique_ptr<Runtime> make_event_loop(const SimContext& ctx) {
  return std::make_unique<EventLoop>(ctx);
}

}  // namespace poolsim::sim
