// virtual_threads.cpp: simulated Java virtual threads (JDK 21, JEP 444), M:N
// on `carriers` OS threads; twin of real/virtual_threads.cpp (Boost.Fiber).
//
// Mechanism (OpenJDK java.lang.VirtualThread and its default scheduler, a
// ForkJoinPool of `carriers` workers in FIFO async mode; the M:N core is
// sim/user_threads.hpp):
// - submit() appends the task to the intake and wakes one idle carrier; a
//   virtual thread exists from its first mount (a fiber in the real twin, a
//   stack chunk in Java) to its end;
// - a carrier runs, in this order: the oldest ready virtual thread (resumed
//   after a wait; the shared FIFO ready queue), else a new one from the
//   intake, else it parks until a submit or a timer wakes it -- the real
//   twin's pick_next order (resumptions first, its launcher only when
//   nothing is ready);
// - `cpu` and lock-hold phases run on the carrier (mounted);
// - a `wait` unmounts (VirtualThread.parkNanos -> yieldContinuation): the
//   carrier runs other virtual threads meanwhile, and when the timer fires
//   (deadline + timer_slack) the virtual thread is queued and one idle
//   carrier is woken (the kernel's wake-up costs apply to the carrier);
// - a wait for a permit of a bounded resource (`holding:`) unmounts too
//   (Semaphore.acquire parks the virtual thread), until the releasing task
//   hands the permit over and queues it (Kernel::park/unpark);
// - `lock` is a monitor: a contended enter blocks the carrier, and a
//   `wait_inside` blocks it while the lock is held -- the virtual thread is
//   pinned, as with `synchronized` before JDK 24 (JEP 491), and the carrier
//   is lost to every other virtual thread (models/wait_policy.hpp:
//   block_thread inside a lock, release_thread outside).
// Carriers start at the first submit, created by the submitting thread (it
// pays thread_create for each), as the real twin's start() creates them,
// called by the first hand-over.
// Counters (RunResult::extra): carriers, mounts (first starts included),
// unmounts, pins (waits inside a lock), pinned_time (seconds carriers were
// blocked by them), virtual_threads_peak (alive at once), carrier_parks,
// remote_resumes (resumes on another CPU than the unmount's).
// Runtime costs (CPU of the thread that does the work): push_cost
// (models/machine.hpp: queue_push, else queue_handover) on the submitter per
// intake push and take_cost on the carrier per intake pop;
// fiber_create on the carrier when a virtual thread starts (its creation,
// first mount and end, as calibrate measures them together); fiber_switch on
// the carrier per unmount and per remount (yield, the shared ready queue);
// remote_resumes counts the remounts on another CPU than the unmount's
// (charged nothing: the real carriers' extra on two CPUs is their shared
// queue's; docs/simulator.md).
// Left out: the carrier pool's compensation for some pinning blocking calls
// (it grows up to 256 in JDK 21, not for synchronized, which is what is
// modelled); the separate unparker timer thread (the timer queues the virtual
// thread directly); work stealing between the ForkJoinPool's queues (one
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

#include "sim/driver.hpp"
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
               this) {
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
    intake_.push_back(task);
    if (idle_ > 0) k_.notify_one(idle_q_);
    co_await k_.compute(push_cost(k_.machine()));  // the intake push, on the submitter
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
  }

 private:
  static void ready(void* self, std::uint32_t task, bool /*timer*/) {
    auto& vt = *static_cast<VirtualThreads*>(self);
    vt.ready_.push_back(task);
    if (vt.idle_ > 0) vt.k_.notify_one(vt.idle_q_);
  }

  Co carrier(int i) {
    UserThreads::Host& host = *hosts_[static_cast<std::size_t>(i)];
    int since_unwind = 0;
    bool woken_for_nothing = false;
    for (;;) {
      std::deque<std::uint32_t>* from = !ready_.empty()    ? &ready_
                                        : !intake_.empty() ? &intake_
                                                           : nullptr;
      if (from != nullptr) {
        const std::uint32_t task = from->front();
        from->pop_front();
        // The real twin's carrier makes the virtual thread ready in the
        // shared queue before it mounts it (a new fiber posted by its
        // launcher, a resumed one moved there by its dispatcher), and
        // awakened() wakes an idle carrier for it; this carrier takes it
        // first, so that carrier finds nothing (unless more is queued) and
        // sleeps again (CarrierAlgorithm, real/virtual_threads.cpp).
        if (idle_ > 0) k_.notify_one(idle_q_);
        const MachineProfile& m = k_.machine();
        // A new virtual thread: the intake pop, then its creation (the cost
        // of its first mount and its end included); a resumed one: the
        // remount.
        const bool resumed = users_.started(task);
        co_await k_.compute(resumed ? m.fiber_switch : take_cost(m) + m.fiber_create);
        // A resume on another CPU than the unmount's, counted as the real
        // twin counts it (sched_getcpu around the suspension).
        if (const auto it = unmounted_on_.find(task); resumed && it != unmounted_on_.end()) {
          if (it->second != k_.current_cpu()) ++remote_resumes_;
          unmounted_on_.erase(it);
        }
        const bool ended = co_await users_.run(host, task);
        if (!ended) {
          unmounted_on_[task] = static_cast<std::int16_t>(k_.current_cpu());
          co_await k_.compute(m.fiber_switch);  // the unmount
        }
        // Bound the native stack (Kernel::unwind_stack): every kUnwindEvery
        // tasks run, resume once from the event loop, in zero time.
        if (++since_unwind == kUnwindEvery) {
          since_unwind = 0;
          co_await k_.unwind_stack();
        }
        continue;
      }
      // A wake that finds nothing waits again within the same park, as the
      // real carrier's condition wait does (carrier_parks counts parks).
      if (!woken_for_nothing) ++parks_;
      ++idle_;
      co_await k_.wait(idle_q_);
      --idle_;
      woken_for_nothing = ready_.empty() && intake_.empty();
    }
  }

  // Tasks a carrier runs between two stack unwinds: deep enough that the
  // extra engine events are negligible, shallow enough for any native stack.
  static constexpr int kUnwindEvery = 64;
  Kernel& k_;
  const int carriers_;
  UserThreads users_;
  std::vector<UserThreads::Host*> hosts_;  // by carrier index
  std::deque<std::uint32_t> intake_;       // submitted, not yet started
  std::deque<std::uint32_t> ready_;        // unmounted and due again
  int idle_ = 0;
  bool started_ = false;
  std::int64_t parks_ = 0;
  std::int64_t remote_resumes_ = 0;
  // The CPU each unmounted virtual thread unmounted on, until it resumes.
  std::unordered_map<std::uint32_t, std::int16_t> unmounted_on_;
  WaitQueue idle_q_;
};

}  // namespace

std::unique_ptr<Runtime> make_virtual_threads(const SimContext& ctx) {
  return std::make_unique<VirtualThreads>(ctx);
}

}  // namespace poolsim::sim
