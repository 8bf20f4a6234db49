// virtual_threads.cpp: simulated Java virtual threads (JDK 21, JEP 444), M:N
// on `carriers` OS threads; twin of real/virtual_threads.cpp (Boost.Fiber).
//
// Mechanism (OpenJDK java.lang.VirtualThread and its default scheduler, a
// ForkJoinPool of `carriers` workers in FIFO async mode; the M:N core is
// sim/user_threads.hpp; the real twin's Boost.Fiber scheduling algorithm,
// CarrierAlgorithm, decides the details below):
// - submit() appends the task to the intake and wakes one idle carrier; a
//   virtual thread exists from its first mount (a fiber in the real twin, a
//   stack chunk in Java) to its end;
// - a carrier runs, in this order: the oldest ready virtual thread (resumed
//   after a wait; the shared FIFO ready queue), else a new one from the
//   intake, else it parks until a submit, a push or its own due sleeper
//   wakes it -- the real twin's pick_next order (resumptions first, its
//   launcher only when nothing is ready);
// - `cpu` and lock-hold phases run on the carrier (mounted);
// - a `wait` unmounts (VirtualThread.parkNanos -> yieldContinuation): the
//   carrier runs other virtual threads meanwhile. At its deadline the
//   virtual thread is due on the carrier it slept on, which alone moves it
//   to the shared ready queue, at its next dispatch (Boost.Fiber's
//   scheduler::dispatch, sleep2ready_, reads the clock), or, when that
//   carrier is parked, once its own timer wakes it: the real carrier's
//   condition wait is timed to its earliest sleeper (a futex timeout, with
//   the thread's slack), so it runs timer_slack after the deadline, as a
//   timed sleep wakes (Kernel::timer_notify_one; timer_idle_exit on an idle
//   CPU). Until 2026-12-07 every sleeper was due at deadline + timer_slack
//   and a parked carrier was then woken as by another thread (wakeup_latency
//   and idle_exit more). A carrier busy with
//   another virtual thread, or pinned, delays its due sleepers however idle
//   the other carriers are;
// - a wait for a permit of a bounded resource (`holding:`) unmounts too
//   (Semaphore.acquire parks the virtual thread), until the releasing task
//   hands the permit over; it is then due on its carrier the same way
//   (a fiber's remote wake-up goes to its scheduler's remote ready queue);
// - `lock` is a monitor: a contended enter blocks the carrier, and a
//   `wait_inside` blocks it while the lock is held -- the virtual thread is
//   pinned, as with `synchronized` before JDK 24 (JEP 491), and the carrier
//   is lost to every other virtual thread (models/wait_policy.hpp:
//   block_thread inside a lock, release_thread outside);
// - the carriers' shared state (intake, ready queue, idle count, live
//   count) is under one mutex, CarrierShared::mu, a QueueLock
//   (sim/queue_lock.hpp, glibc's lock): taken by the submit's intake push,
//   each due virtual thread's push to the ready queue (awakened()), every
//   pick, the launcher's intake pop, a new virtual thread's push and pick,
//   the live count at its end, and a park's check and its retaking after
//   the condition wait. A wake of an idle carrier wakes the longest parked
//   (cv.notify_one).
// Carriers start at the first submit, created by the submitting thread (it
// pays thread_create for each), as the real twin's start() creates them,
// called by the first hand-over.
// Counters (RunResult::extra): carriers, mounts (first starts included),
// unmounts, pins (waits inside a lock), pinned_time (seconds carriers were
// blocked by them), virtual_threads_peak (alive at once), carrier_parks,
// remote_resumes (resumes on another CPU than the unmount's).
// Runtime costs (CPU of the thread that does the work): the intake's push
// and pop are a hand-over (QueueLock::handover() under the lock: the lock's
// part, queue_lock_hold, plus queue_handover_remote after the other CPU's
// turn; the rest of push_cost and take_cost outside it); every other
// section holds queue_lock_hold plus the same remote trip; fiber_create on
// the carrier when a virtual thread starts (its creation, first mount and
// end, as calibrate measures them on one carrier: less the 4 sections it
// took inside it); fiber_switch per unmount and per remount (the remount
// less its 2 sections); remote_resumes counts the remounts on another CPU
// than the unmount's (charged nothing beyond the sections' remote trips;
// docs/simulator.md). Counted, simulated only: carrier_lock_sleeps (waits
// for the mutex that slept).
// Left out: the carrier pool's compensation for some pinning blocking calls
// (it grows up to 256 in JDK 21, not for synchronized, which is what is
// modelled); the separate unparker timer thread (the timer makes the
// virtual thread due on its carrier directly); work stealing between the ForkJoinPool's queues (one
// FIFO); the time a contended monitor enter pins (counted in pinned_time by
// the real twin, blocked but not counted here). Memory: a live virtual
// thread holds fiber_touch (its Boost.Fiber stack's touched pages, as the
// real twin allocates it; a JDK stack chunk is smaller) from its first mount
// to its end (sim/user_threads.hpp); every carrier's stack goes
// carrier_stack deeper than a blocked thread's (Boost.Fiber's per-thread
// initialiser; Kernel::set_worker_stack), and every carrier holds
// carrier_touch from its creation: the dispatcher fiber Boost.Fiber makes for
// each thread (fibers/context.cpp make_dispatcher_context: a default_stack,
// malloc'ed, with the context at its top; real carriers initialise it as
// they start).
#include <algorithm>
#include <deque>
#include <memory>
#include <unordered_map>

#include "models/assert.hpp"
#include "sim/driver.hpp"
#include "sim/queue_lock.hpp"
#include "sim/runtime.hpp"
#include "sim/user_threads.hpp"

namespace poolsim::sim {

namespace {

class VirtualThreads final : public Runtime {
 public:
  explicit VirtualThreads(const SimContext& ctx)
      : k_(ctx.kernel),
        carriers_(std::max(1, ctx.scenario.backend.carriers)),
        users_(ctx.kernel, ctx.driver, BackendKind::virtual_threads,
               ctx.kernel.machine().fiber_touch, ctx.workload.tasks.size(), &VirtualThreads::ready,
               this),
        due_(static_cast<std::size_t>(carriers_)),
        parked_(static_cast<std::size_t>(carriers_), false),
        park_q_(static_cast<std::size_t>(carriers_)) {
    // Boost.Fiber's per-thread initialiser deepens every carrier's stack.
    const Bytes each = k_.machine().carrier_stack;
    k_.set_worker_stack(each, each * carriers_);
  }

  Co submit(std::uint32_t task) override {
    if (!started_) {
      started_ = true;
      for (int i = 0; i < carriers_; ++i) {
        const ThreadId t = co_await k_.spawn(carrier(i), "carrier");
        hosts_.push_back(&users_.adopt(t));
        k_.memory_add(k_.machine().carrier_touch);
      }
    }
    // The real twin's submit(): the intake push under CarrierShared::mu,
    // the idle carriers read there, the wake after the unlock; the rest of
    // the push (the harness's time stamp and record) before it.
    co_await k_.compute(mu_.rest_push());
    if (!mu_.try_lock()) co_await mu_.lock_slow();
    intake_.push_back(task);
    const bool wake = !idle_order_.empty();
    co_await k_.compute(mu_.handover());
    if (mu_.unlock()) co_await mu_.wake();
    if (wake) co_await notify_idle();
  }

  void report(std::map<std::string, double>& extra) const override {
    const UserThreads::Counters& c = users_.counters();
    extra["carriers"] = carriers_;
    extra["mounts"] = static_cast<double>(c.mounts);
    extra["unmounts"] = static_cast<double>(c.unmounts + c.parks);
    extra["remote_resumes"] = static_cast<double>(remote_resumes_);
    extra["pins"] = static_cast<double>(c.pins);
    extra["pinned_time"] = to_seconds(Duration{c.pinned_ns});
    extra["virtual_threads_peak"] = static_cast<double>(c.peak);
    extra["carrier_parks"] = static_cast<double>(parks_);
    extra["carrier_lock_sleeps"] = static_cast<double>(mu_.sleeps());
  }

 private:
  // Where an unmounted virtual thread unmounted: its CPU (remote_resumes)
  // and its carrier, whose scheduler holds it until it is due.
  struct Unmounted {
    int cpu;
    int carrier;  // up to run.max_threads carriers
  };

  // Its deadline passed (or its permit was handed over): the virtual thread
  // is due on the carrier it unmounted on, which moves it to the shared
  // ready queue at its next dispatch. A parked carrier is woken for it: by
  // the permit's releaser at once, or by its own timer (its condition wait
  // was timed to its earliest sleeper) timer_slack after the deadline.
  static void ready(void* self, std::uint32_t task, bool timer) {
    auto& vt = *static_cast<VirtualThreads*>(self);
    const auto it = vt.unmounted_.find(task);
    POOLSIM_ASSERT(it != vt.unmounted_.end(), "virtual threads: a task due that never unmounted");
    const auto c = static_cast<std::size_t>(it->second.carrier);
    vt.due_[c].push_back(task);
    if (!vt.parked_[c]) return;
    if (!timer) {
      vt.wake_carrier(static_cast<int>(c));
      return;
    }
    vt.k_.engine().at(vt.k_.now() + vt.users_.blocked_host_late(),
                      &VirtualThreads::on_carrier_timer, &vt, c);
  }

  // A parked carrier's timed condition wait expires: woken if it is still
  // parked with a sleeper due (a submit or a push may have woken it first).
  static void on_carrier_timer(void* self, std::uint64_t c) {
    auto& vt = *static_cast<VirtualThreads*>(self);
    if (vt.parked_[c] && !vt.due_[c].empty()) vt.wake_carrier(static_cast<int>(c), true);
  }

  // The real twin's cv.notify_one after its unlock: a FUTEX_WAKE system
  // call, on whose way back the caller is switched out if the carrier it
  // woke onto its own CPU preempts it (Kernel::leave_syscall), before it
  // goes on to its own pick. Until 2026-12-06 the wake was free of that
  // point: the waker always picked the virtual thread it had just made
  // ready, and the woken carrier, even on the waker's CPU, found nothing
  // and waited again (docs/runtimes.md, "virtual-threads").
  Co notify_idle() {
    k_.enter_syscall();
    wake_idle();
    co_await k_.leave_syscall();
  }

  // The real twin's cv.notify_one on the shared condition variable: one
  // parked carrier, the longest parked.
  void wake_idle() {
    if (!idle_order_.empty()) wake_carrier(idle_order_.front());
  }
  // `by_timer`: its own timed wait expired (no waker).
  void wake_carrier(int c, bool by_timer = false) {
    const auto at = std::find(idle_order_.begin(), idle_order_.end(), c);
    if (at != idle_order_.end()) idle_order_.erase(at);
    parked_[static_cast<std::size_t>(c)] = false;
    WaitQueue& q = park_q_[static_cast<std::size_t>(c)];
    if (by_timer)
      k_.timer_notify_one(q);
    else
      k_.notify_one(q);
  }

  // One critical section of CarrierShared::mu other than the intake's push
  // and pop (a ready push or pop, a counter): queue_lock_hold (measured on
  // a pool's deque; 0 in profiles without it), plus the lines' trip.
  Co section() {
    if (!mu_.try_lock()) co_await mu_.lock_slow();
    co_await k_.compute(mu_.section(k_.machine().queue_lock_hold));
    if (mu_.unlock()) co_await mu_.wake();
  }

  // What a carrier's CPU costs outside CarrierShared::mu: `cost` less the
  // hold of the `sections` sections the calibration's single carrier took
  // inside it (charged apart, by section()).
  Duration outside(Duration cost, int sections) const {
    return std::max(cost - sections * k_.machine().queue_lock_hold, Duration{0});
  }

  Co carrier(int i) {
    UserThreads::Host& host = *hosts_[static_cast<std::size_t>(i)];
    const auto me = static_cast<std::size_t>(i);
    int since_unwind = 0;
    bool woken_for_nothing = false;
    for (;;) {
      // The dispatcher (scheduler::dispatch, sleep2ready_): this carrier's
      // due virtual threads into the shared ready queue, awakened() for
      // each (a section, an idle carrier woken).
      while (!due_[me].empty()) {
        const std::uint32_t task = due_[me].front();
        due_[me].pop_front();
        if (!mu_.try_lock()) co_await mu_.lock_slow();
        ready_.push_back(task);
        const bool wake = !idle_order_.empty();
        co_await k_.compute(mu_.section(k_.machine().queue_lock_hold));
        if (mu_.unlock()) co_await mu_.wake();
        if (wake) co_await notify_idle();
      }
      // pick_next: the oldest ready virtual thread, else the launcher when
      // the intake holds a task, else nothing.
      if (!mu_.try_lock()) co_await mu_.lock_slow();
      const MachineProfile& m = k_.machine();
      std::uint32_t task = kNoTask;
      if (!ready_.empty()) {
        task = ready_.front();
        ready_.pop_front();
      }
      const bool launch = task == kNoTask && !intake_.empty();
      co_await k_.compute(mu_.section(k_.machine().queue_lock_hold));
      if (mu_.unlock()) co_await mu_.wake();
      if (task != kNoTask) {
        // A resumed virtual thread: the remount (fiber_switch, of which its
        // ready push and this pick were under the lock).
        co_await k_.compute(outside(m.fiber_switch, 2));
        const auto it = unmounted_.find(task);
        POOLSIM_ASSERT(it != unmounted_.end(), "virtual threads: a resumed task never unmounted");
        if (it->second.cpu != k_.current_cpu()) ++remote_resumes_;
        unmounted_.erase(it);
      } else if (launch) {
        // The launcher: the intake pop, then the fiber's creation, its
        // ready push (awakened(), an idle carrier woken: it finds nothing
        // unless more is queued) and this carrier's pick of it.
        if (!mu_.try_lock()) co_await mu_.lock_slow();
        if (intake_.empty()) {  // another carrier's launcher took it
          if (mu_.unlock()) co_await mu_.wake();
          continue;
        }
        task = intake_.front();
        intake_.pop_front();
        co_await k_.compute(mu_.handover());
        if (mu_.unlock()) co_await mu_.wake();
        co_await k_.compute(mu_.rest_take());
        co_await k_.compute(outside(m.fiber_create, 4) + users_.first_touch(task));
        const bool wake = !idle_order_.empty();
        co_await section();
        if (wake) co_await notify_idle();
        co_await section();
      } else {
        co_await park(i, woken_for_nothing);
        woken_for_nothing = ready_.empty() && intake_.empty() && due_[me].empty();
        continue;
      }
      const bool ended = co_await users_.run(host, task);
      if (ended) {
        co_await section();  // run_fiber: the live count
      } else {
        unmounted_[task] = {k_.current_cpu(), i};
        co_await k_.compute(m.fiber_switch);  // the unmount
      }
      // Bound the native stack (Kernel::unwind_stack): every kUnwindEvery
      // tasks run, resume once from the event loop, in zero time.
      if (++since_unwind == kUnwindEvery) {
        since_unwind = 0;
        co_await k_.unwind_stack();
      }
    }
  }

  // suspend_until: under the lock, nothing runnable: the carrier waits on
  // the condition variable (which releases the lock) until a push, a
  // submit or its own due sleeper wakes it, and takes the lock again. A
  // wake that finds nothing waits again within the same park
  // (carrier_parks counts parks).
  Co park(int i, bool woken_for_nothing) {
    const auto me = static_cast<std::size_t>(i);
    if (!mu_.try_lock()) co_await mu_.lock_slow();
    if (!ready_.empty() || !intake_.empty() || !due_[me].empty()) {
      co_await k_.compute(mu_.section(k_.machine().queue_lock_hold));
      if (mu_.unlock()) co_await mu_.wake();
      co_return;
    }
    if (!woken_for_nothing) ++parks_;
    idle_order_.push_back(i);
    parked_[me] = true;
    co_await k_.compute(mu_.section(k_.machine().queue_lock_hold));
    if (mu_.unlock()) co_await mu_.wake();
    // A wake meanwhile (wake_carrier cleared parked_) is not lost: the real
    // condition wait registered under the lock, and its futex word changed.
    if (parked_[me]) co_await k_.wait(park_q_[me]);
    co_await section();  // the condition wait takes the lock again
  }

  // Tasks a carrier runs between two stack unwinds: deep enough that the
  // extra engine events are negligible, shallow enough for any native stack.
  static constexpr int kUnwindEvery = 64;
  Kernel& k_;
  const int carriers_;
  UserThreads users_;
  std::vector<UserThreads::Host*> hosts_;  // by carrier index
  std::deque<std::uint32_t> intake_;       // submitted, not yet started
  std::deque<std::uint32_t> ready_;        // the shared ready queue: due again
  // Per carrier: its due sleepers not yet moved to ready_ (its scheduler's
  // sleep queue), whether it is parked, the queue it parks on.
  std::vector<std::deque<std::uint32_t>> due_;
  std::vector<bool> parked_;
  std::vector<WaitQueue> park_q_;
  std::deque<int> idle_order_;  // parked carriers, longest parked first
  QueueLock mu_{k_};            // CarrierShared::mu (sim/queue_lock.hpp)
  bool started_ = false;
  std::int64_t parks_ = 0;
  std::int64_t remote_resumes_ = 0;
  // The unmounted virtual threads: where each unmounted, until it resumes.
  std::unordered_map<std::uint32_t, Unmounted> unmounted_;
};

}  // namespace

std::unique_ptr<Runtime> make_virtual_threads(const SimContext& ctx) {
  return std::make_unique<VirtualThreads>(ctx);
}

}  // namespace poolsim::sim
