// virtual_threads.cpp: M:N virtual threads on Boost.Fiber (1.74), the real
// twin of sim/virtual_threads.cpp and the stand-in for Java virtual threads
// (JDK 21, JEP 444).
//
// Mechanism. `carriers` OS threads (spawned through the context, one trace
// track each) run Boost.Fiber schedulers that share one FIFO ready queue, so
// a fiber (virtual thread) may be resumed on any carrier, as a virtual
// thread is resumed on any ForkJoinPool worker. Each task is one fiber:
//   - `cpu` and lock-hold phases run on the carrier (mounted);
//   - a `wait` is boost::this_fiber::sleep_for: the fiber leaves the carrier
//     (an unmount) and the carrier runs other fibers meanwhile;
//   - a `lock` is a real std::mutex from the context's lock table, which
//     blocks the carrier OS thread when contended, and its `wait_inside` is
//     a clock_nanosleep of the carrier while the mutex is held: the virtual
//     thread is pinned, like a wait inside `synchronized` before JDK 24
//     (JEP 491), and the carrier is lost to every other fiber meanwhile.
//     There is no fiber suspension point between lock and unlock, so the
//     fiber cannot migrate while it owns the (thread-owned) std::mutex;
//   - a wait for a permit of a bounded resource (`holding:`) is a
//     Boost.Fiber promise the releasing task fulfils (real/resources.hpp):
//     the fiber suspends (an unmount, counted in unmounts) and its carrier
//     runs other fibers, as a virtual thread in Semaphore.acquire does.
//
// Hand-over. submit() may run on the submitter (not a carrier) or inside a
// task fiber (a completion releasing successors). It only appends the task id
// to the shared intake queue and wakes one idle carrier: no fiber is created
// off a carrier. Each carrier's main context is its *launcher*: it takes one
// id from the intake, creates the fiber there (launch::post: the fiber enters
// the shared ready queue), and yields. The scheduling algorithm below keeps
// a yielded launcher parked until the intake is non-empty (or the run stops),
// so an idle launcher costs nothing. A fiber therefore exists only from its
// first mount to its end, as a Java virtual thread only has a stack chunk
// once it has run: a batch of 100k tasks does not allocate 100k stacks up
// front, only the fibers that have started and are sleeping.
//
// Why a custom boost::fibers::algo::algorithm rather than the two shipped
// multi-thread ones (checked in boostorg/fiber src/algo/*.cpp, 1.74):
//   - algo::shared_work keeps its queue in a *static* member (one per
//     process), and awakened() never wakes another carrier parked in
//     suspend_until(): a fiber pushed by carrier A waits until carrier B's
//     own deadline passes. Java's ForkJoinPool signals an idle worker
//     (signalWork) on every push;
//   - algo::work_stealing registers its schedulers in a static vector sized
//     once by std::call_once, so it cannot be set up twice in one process
//     with another carrier count (tests and benchmarks run many backends).
// The algorithm here is shared_work's design with per-backend state, a
// wake-up of one idle carrier per push, and the launcher rule. One FIFO
// queue stands for the ForkJoinPool of Java's carriers (asyncMode = true,
// FIFO); the per-worker deques and stealing of that pool are not modelled:
// with a handful of carriers the queue's lock is not the bottleneck at the
// task sizes poolsim scenarios use.
// Order on a carrier (pick_next): the dispatcher context first when it is
// ready, so sleeping fibers are moved to the ready queue at every switch
// (Boost.Fiber only wakes a carrier's sleep queue in its dispatcher); then
// the oldest ready fiber (resumptions and fresh fibers alike, FIFO); then the
// launcher, which creates the next fiber only when nothing is ready.
//
// Invariants: every id in the intake becomes exactly one fiber, which calls
// RunContext::execute exactly once; the shared ready queue holds only worker
// fibers (detached from any scheduler); a carrier's main and dispatcher
// contexts never leave their carrier; stop() returns after every fiber ended
// and every carrier thread was joined (its scheduler destroyed).
//
// Counters (RunResult::extra): mounts (a fiber put on a carrier, first start
// included), unmounts (waits that released the carrier), pins (waits inside a
// lock, the carrier blocked), pinned_time (seconds carriers were blocked for
// a pinned virtual thread: waits inside a lock plus waiting to acquire a
// contended lock, both block the carrier in JDK 21), virtual_threads_peak (fibers
// alive at once), carrier_parks (a carrier found nothing to do and slept).
//
// Left out: Java's compensation (the carrier pool growing, up to 256, while
// some blocking calls pin); timed unparks by a separate timer thread: here a
// sleeping fiber is woken by the carrier it slept on, so a fiber that slept
// on a carrier which is now pinned wakes only when that carrier returns to
// its scheduler; per-task CPU time (a carrier runs many tasks, so
// per_task_cpu() is false).
//
// ThreadSanitizer: Boost.Context 1.74 (fcontext, assembly) switches stacks
// without the TSan fiber API. real/fcontext_tsan.cpp interposes its switch
// routines in a -fsanitize=thread build and announces every switch; the
// stacks of worker fibers come from FiberStack below, which tells it when a
// stack is freed. (Announcing the switches from this algorithm instead, in
// pick_next, was tried first and hung: the switch happens later, inside
// Boost.Fiber, after more code has run on the announced fiber.)
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <boost/fiber/algo/algorithm.hpp>
#include <boost/fiber/all.hpp>
#include <boost/fiber/scheduler.hpp>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <vector>

#include "real/backend.hpp"
#include "real/fcontext_tsan.hpp"

namespace poolsim::real {
namespace {

namespace bf = boost::fibers;

// Fiber stack size. A task body is shallow (the calibrated loop, a sleep,
// recording), far below 64 KiB; a sanitizer build instruments every frame and
// prints its reports on the current (fiber) stack, so it gets 1 MiB. Memory
// is malloc'ed (bf::fixedsize_stack): only touched pages cost.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr std::size_t kFiberStack = std::size_t{1} << 20;
#else
constexpr std::size_t kFiberStack = std::size_t{64} << 10;
#endif

// The worker fibers' stack allocator: Boost.Fiber's fixedsize_stack that
// also tells the TSan annotations (real/fcontext_tsan.cpp) when a stack is
// freed, so the fiber's TSan state goes with it.
class FiberStack {
 public:
  explicit FiberStack(std::size_t size) : inner_(size) {}
  boost::context::stack_context allocate() { return inner_.allocate(); }
  void deallocate(boost::context::stack_context& sctx) noexcept {
    fcontext_tsan_stack_freed(static_cast<char*>(sctx.sp) - sctx.size, sctx.size);
    inner_.deallocate(sctx);
  }

 private:
  bf::fixedsize_stack inner_;
};

// State shared by the carriers of one backend (the "ForkJoinPool").
struct CarrierShared {
  std::mutex mu;
  std::condition_variable cv;        // idle carriers wait here
  std::deque<bf::context*> ready;    // worker fibers, FIFO
  std::deque<std::uint32_t> intake;  // submitted tasks not yet a fiber
  bool stopping = false;
  int idle = 0;  // carriers inside suspend_until
  // Counters, under mu.
  std::int64_t mounts = 0;
  std::int64_t parks = 0;
  std::int64_t fibers_alive = 0;
  std::int64_t fibers_peak = 0;
  std::condition_variable all_ended;  // fibers_alive reached 0
};

// The per-carrier scheduling algorithm (one instance per carrier thread,
// owned by that thread's Boost.Fiber scheduler). Every method runs on its
// carrier thread; shared state is under CarrierShared::mu.
class CarrierAlgorithm final : public bf::algo::algorithm {
 public:
  explicit CarrierAlgorithm(CarrierShared& shared) : shared_(shared) {}
  CarrierAlgorithm(const CarrierAlgorithm&) = delete;
  CarrierAlgorithm& operator=(const CarrierAlgorithm&) = delete;

  void awakened(bf::context* ctx) noexcept override {
    if (ctx->is_context(bf::type::main_context)) {
      launcher_ = ctx;  // parked until there is intake (see pick_next)
      return;
    }
    if (ctx->is_context(bf::type::pinned_context)) {  // the dispatcher
      local_.push_back(*ctx);
      return;
    }
    ctx->detach();  // a worker fiber: any carrier may resume it
    std::unique_lock lk(shared_.mu);
    shared_.ready.push_back(ctx);
    const bool wake = shared_.idle > 0;
    lk.unlock();
    if (wake) shared_.cv.notify_one();
  }

  bf::context* pick_next() noexcept override {
    if (!local_.empty()) {
      bf::context* ctx = &local_.front();
      local_.pop_front();
      return ctx;
    }
    std::unique_lock lk(shared_.mu);
    if (!shared_.ready.empty()) {
      bf::context* ctx = shared_.ready.front();
      shared_.ready.pop_front();
      ++shared_.mounts;
      lk.unlock();
      bf::context::active()->attach(ctx);
      return ctx;
    }
    if (launcher_runnable()) {
      bf::context* ctx = launcher_;
      launcher_ = nullptr;
      return ctx;
    }
    return nullptr;
  }

  bool has_ready_fibers() const noexcept override {
    if (!local_.empty()) return true;
    std::lock_guard lk(shared_.mu);
    return !shared_.ready.empty() || launcher_runnable();
  }

  void suspend_until(const std::chrono::steady_clock::time_point& tp) noexcept override {
    std::unique_lock lk(shared_.mu);
    const auto runnable = [this] {
      return notified_ || !shared_.ready.empty() || launcher_runnable();
    };
    if (!runnable()) {
      ++shared_.parks;
      ++shared_.idle;
      if (tp == std::chrono::steady_clock::time_point::max()) {
        shared_.cv.wait(lk, runnable);
      } else {
        shared_.cv.wait_until(lk, tp, runnable);
      }
      --shared_.idle;
    }
    notified_ = false;
  }

  // Called by Boost.Fiber when a context of this carrier is made ready from
  // another thread, and at scheduler shutdown.
  void notify() noexcept override {
    {
      std::lock_guard lk(shared_.mu);
      notified_ = true;
    }
    shared_.cv.notify_all();
  }

 private:
  // Under shared_.mu.
  bool launcher_runnable() const {
    return launcher_ != nullptr && (!shared_.intake.empty() || shared_.stopping);
  }

  CarrierShared& shared_;
  bf::scheduler::ready_queue_type local_{};  // this carrier's dispatcher
  bf::context* launcher_ = nullptr;          // this carrier's parked main context
  bool notified_ = false;                    // under shared_.mu
};

class VirtualThreads;

// A virtual thread waiting for a permit: grant() fulfils the promise its
// fiber waits on (from the releasing fiber, on any carrier).
struct FiberWaiter final : ResourceTable::Waiter {
  bf::promise<void> promise;
  void grant() override { promise.set_value(); }
};

// Waits, locks and permits of a virtual thread.
class FiberOps final : public PhaseOps {
 public:
  // wait_effect(virtual_threads, false): the virtual thread unmounts.
  void wait_releasing(RunContext& ctx, Duration d) override {
    (void)ctx;
    unmounts.fetch_add(1, std::memory_order_relaxed);
    const int before = sched_getcpu();
    boost::this_fiber::sleep_for(std::chrono::nanoseconds(d.count()));
    count_resume(before);
  }
  // wait_effect(virtual_threads, true): pinned, the carrier OS thread blocks.
  void wait_blocking(RunContext& ctx, Duration d, bool inside_lock) override {
    const Duration t0 = RunContext::monotonic_now();
    ctx.sleep_blocking(d);
    if (!inside_lock) return;
    pins.fetch_add(1, std::memory_order_relaxed);
    pinned_ns.fetch_add((RunContext::monotonic_now() - t0).count(), std::memory_order_relaxed);
  }
  void acquire(RunContext& ctx, std::uint16_t r) override {
    ResourceTable& table = ctx.resources();
    if (table.try_acquire(r)) {
      table.granted(r, Duration{0});
      return;
    }
    const Duration t0 = RunContext::monotonic_now();
    auto w = std::make_shared<FiberWaiter>();
    bf::future<void> granted = w->promise.get_future();
    if (!table.acquire(r, w)) {
      unmounts.fetch_add(1, std::memory_order_relaxed);
      const int before = sched_getcpu();
      granted.get();  // the fiber suspends; the carrier runs others
      count_resume(before);
    }
    table.granted(r, RunContext::monotonic_now() - t0);
  }
  void lock(RunContext& ctx, std::uint32_t lock) override {
    if (ctx.mutex(lock).try_lock()) return;
    // Contended monitor enter: the carrier blocks with the fiber pinned.
    const Duration t0 = RunContext::monotonic_now();
    ctx.lock_mutex(lock);
    pinned_ns.fetch_add((RunContext::monotonic_now() - t0).count(), std::memory_order_relaxed);
  }

  // A resume on another CPU than the one the fiber unmounted on (its stack
  // and the task's state come over): remote_resumes.
  void count_resume(int before) {
    if (sched_getcpu() != before) remote_resumes.fetch_add(1, std::memory_order_relaxed);
  }

  std::atomic<std::int64_t> unmounts{0};
  std::atomic<std::int64_t> remote_resumes{0};
  std::atomic<std::int64_t> pins{0};
  std::atomic<std::int64_t> pinned_ns{0};
};

class VirtualThreads final : public Backend {
 public:
  explicit VirtualThreads(const BackendSpec& spec)
      : carriers_(std::max(1, spec.carriers)), stack_(spec.stack) {}

  void start(RunContext& ctx) override {
    ctx_ = &ctx;
    for (int i = 0; i < carriers_; ++i) {
      threads_.push_back(
          ctx.spawn("carrier " + std::to_string(i + 1), stack_, [this] { carrier_main(); }));
    }
  }

  void submit(std::uint32_t task) override {
    std::unique_lock lk(shared_.mu);
    shared_.intake.push_back(task);
    const bool wake = shared_.idle > 0;
    lk.unlock();
    if (wake) shared_.cv.notify_one();
  }

  void stop() override {
    {
      // Every task is finalized; wait for the fibers' last instructions.
      std::unique_lock lk(shared_.mu);
      shared_.all_ended.wait(lk, [this] { return shared_.fibers_alive == 0; });
      shared_.stopping = true;
    }
    shared_.cv.notify_all();
    for (pthread_t t : threads_) ctx_->join(t);
    threads_.clear();
  }

  void report(std::map<std::string, double>& extra) const override {
    extra["carriers"] = carriers_;
    extra["mounts"] = static_cast<double>(shared_.mounts);
    extra["unmounts"] = static_cast<double>(ops_.unmounts.load(std::memory_order_relaxed));
    extra["remote_resumes"] =
        static_cast<double>(ops_.remote_resumes.load(std::memory_order_relaxed));
    extra["pins"] = static_cast<double>(ops_.pins.load(std::memory_order_relaxed));
    extra["pinned_time"] = to_seconds(Duration{ops_.pinned_ns.load(std::memory_order_relaxed)});
    extra["virtual_threads_peak"] = static_cast<double>(shared_.fibers_peak);
    extra["carrier_parks"] = static_cast<double>(shared_.parks);
  }

  bool per_task_cpu() const override { return false; }

 private:
  // The body of a carrier thread: install the algorithm, then act as the
  // launcher until the run stops. Returning destroys this thread's
  // scheduler (thread-local), after its dispatcher has run every fiber
  // attached to it to the end.
  void carrier_main() {
    bf::use_scheduling_algorithm<CarrierAlgorithm>(shared_);
    for (;;) {
      std::optional<std::uint32_t> task;
      {
        std::lock_guard lk(shared_.mu);
        if (!shared_.intake.empty()) {
          task = shared_.intake.front();
          shared_.intake.pop_front();
          shared_.fibers_peak = std::max(shared_.fibers_peak, ++shared_.fibers_alive);
        } else if (shared_.stopping) {
          return;
        }
      }
      if (task) {
        bf::fiber(bf::launch::post, std::allocator_arg, FiberStack(kFiberStack),
                  [this, id = *task] { run_fiber(id); })
            .detach();
      }
      boost::this_fiber::yield();
    }
  }

  void run_fiber(std::uint32_t task) {
    ctx_->execute(task, ops_);
    std::unique_lock lk(shared_.mu);
    if (--shared_.fibers_alive == 0) {
      lk.unlock();
      shared_.all_ended.notify_all();
    }
  }

  const int carriers_;
  const Bytes stack_;
  RunContext* ctx_ = nullptr;
  CarrierShared shared_;
  FiberOps ops_;
  std::vector<pthread_t> threads_;
};

}  // namespace

std::unique_ptr<Backend> make_virtual_threads_backend(const BackendSpec& spec) {
  return std::make_unique<VirtualThreads>(spec);
}

}  // namespace poolsim::real
