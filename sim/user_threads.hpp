// user_threads.hpp: user-level threads multiplexed on simulated OS threads,
// the M:N core shared by sim/virtual_threads.cpp (virtual threads on
// carriers) and sim/event_loop.cpp (tasks on loop threads).
//
// Glossary: a *user thread* runs one task (Driver::execute, the very code
// every thread runtime runs); a *host* is the OS thread it is mounted on (a
// carrier, a loop thread). A host runs a user thread with
// `co_await users.run(host, task)`, which returns when the user thread ended
// or unmounted.
// Mechanism: each host installs itself as the kernel's UserScheduler hook
// (sim/kernel.hpp). A plain timed sleep of a mounted user thread while its
// host holds no mutex (a `wait` phase) comes to Host::on_sleep: the user
// thread keeps its suspended coroutine, an engine event is set for its
// deadline (the runtime keeps the expiry itself: Boost.Fiber's sleep queue,
// Asio's timer queue), and the host continues at once (symmetric transfer
// back into its loop): it does not block. When the event fires, the owner
// runtime's ready() callback makes the task due; a busy host takes it at its
// next scheduling point, a blocked one is woken by its own kernel timer
// (deadline + timer_slack for a futex timeout, less hrtimer_slack for a
// timerfd; Kernel::timer_notify_one). Any host may resume it (the coroutine
// frame is the user thread's state, nothing of it lives on the host). A sleep while the
// host holds a mutex (wait_inside a lock) returns null from on_sleep: the
// host itself blocks, counted as a pin with its blocked time (the kernel
// says whether the host holds a mutex; models/wait_policy.hpp's
// wait_effect(kind, inside_lock) decides, the rule the real twins follow). Contended lock
// acquisition always blocks the host (monitor enter pins in JDK 21).
// A park (a wait for a permit of a bounded resource, Kernel::park) comes to
// Host::on_park: the user thread unmounts like a sleep, without a timer, and
// Kernel::unpark queues it again through the same ready() callback (a
// virtual thread in Semaphore.acquire unmounts; an event-loop task's
// continuation is deferred). A park while the host holds a mutex would
// block the host (the same wait_effect rule); permits are taken between
// phases, never inside a lock, so it does not happen today.
// Memory: a user thread is its execute() coroutine frame (created at its
// first mount, freed when it ends) plus one pending engine event while it
// sleeps; the scheduler's peak count (virtual_threads_peak in the output)
// counts them. Nothing per task is a kernel Thread. In the simulated
// process's memory_peak a user thread holds the owner runtime's
// per-user-thread bytes (a fiber's stack pages, an event loop task's handler
// and timer: profile fiber_touch, loop_task_touch) from its first mount to
// its end, as the real fiber or task state lives; its host computes the
// page faults of that memory first (first_touch) when it grows the heap past
// its high-water mark.
// Invariants: a user thread is mounted on at most one host; a host has at
// most one mounted user thread; the coroutine of a user thread is resumed
// only by a host's run(), i.e. inside a kernel resume of that host.
// Costs: a user-level switch is CPU work of the host; the owner runtime
// charges it (k.compute on the host, around run()) with the profile's
// fiber_create / fiber_switch / timer_arm, since what a mount costs depends
// on the runtime. Left out: TaskRecord::cpu for
// a task that unmounted (the driver reads the CPU clock of the OS thread it
// started on, which meanwhile ran other user threads).
#pragma once

#include <algorithm>
#include <coroutine>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "models/wait_policy.hpp"
#include "sim/driver.hpp"
#include "sim/kernel.hpp"

namespace poolsim::sim {

class UserThreads {
 public:
  // ready(ctx, task, timer): the task's timer fired (timer) or it was
  // unparked (a permit handed over); queue it on a host.
  using ReadyFn = void (*)(void* ctx, std::uint32_t task, bool timer);

  struct Counters {
    std::int64_t mounts = 0;          // a user thread put on a host (first start included)
    std::int64_t unmounts = 0;        // sleeps that released the host
    std::int64_t pins = 0;            // sleeps inside a lock: the host blocked
    std::int64_t pinned_ns = 0;       // time hosts were blocked by those sleeps
    std::int64_t parks = 0;           // parks that released the host (waits for a permit)
    std::int64_t live = 0, peak = 0;  // user threads alive now / at most
  };

  class Host final : public UserScheduler {
   public:
    std::coroutine_handle<> on_sleep(std::coroutine_handle<> h, std::int64_t wake_at,
                                     bool pinned) override {
      UserThreads& u = *users_;
      if (wait_effect(u.kind_, pinned) == WaitEffect::block_thread) {
        ++u.c_.pins;
        // The host blocks in the kernel until its timer fires (+ timer_slack).
        u.c_.pinned_ns += wake_at + u.k_.machine().timer_slack.count() - u.k_.now().count();
        return {};
      }
      ++u.c_.unmounts;
      u.slots_[mounted_].at = h;
      u.k_.engine().at_ns(wake_at, &UserThreads::on_timer, &u, mounted_);
      u.k_.set_task(kNoTask);
      parked_ = false;
      return std::exchange(loop_, {});
    }

    std::coroutine_handle<> on_park(std::coroutine_handle<> h, bool pinned) override {
      UserThreads& u = *users_;
      if (wait_effect(u.kind_, pinned) == WaitEffect::block_thread) return {};
      ++u.c_.parks;
      u.slots_[mounted_].at = h;
      u.k_.set_task(kNoTask);
      parked_ = true;
      return std::exchange(loop_, {});
    }

    void on_unpark(std::uint32_t task) override { users_->ready_(users_->ready_ctx_, task, false); }

    // The last unmount on this host was a park (not a timed sleep).
    bool parked() const { return parked_; }

   private:
    friend class UserThreads;
    explicit Host(UserThreads& u) : users_(&u) {}
    UserThreads* users_;
    std::coroutine_handle<> loop_;  // where the host continues after an unmount
    std::uint32_t mounted_ = kNoTask;
    bool parked_ = false;
    Kernel::ArenaHeap heap_;  // its thread's arena (first_touch with a host)
  };

  struct RunAwait {
    UserThreads& u;
    Host& host;
    std::uint32_t task;
    bool await_ready() const noexcept { return false; }
    std::coroutine_handle<> await_suspend(std::coroutine_handle<> loop) {
      Slot& s = u.slots_[task];
      if (!s.top) {
        POOLSIM_ASSERT(s.touched, "a user thread mounted before its host paid its first_touch");
        s.top = u.driver_.execute(task).release();
        s.at = s.top;
        u.c_.peak = std::max(u.c_.peak, ++u.c_.live);
      } else {
        u.k_.set_task(task);  // a resumption (execute tags only its start)
      }
      ++u.c_.mounts;
      s.top.promise().continuation = loop;  // where it returns when it ends
      host.loop_ = loop;
      host.mounted_ = task;
      return std::exchange(s.at, {});
    }
    // True when the user thread ended, false when it unmounted.
    bool await_resume() {
      host.mounted_ = kNoTask;
      Slot& s = u.slots_[task];
      if (s.top.done()) {
        s.top.destroy();
        s.top = {};
        --u.c_.live;
        s.touched = false;
        if (s.heap)
          u.k_.arena_release(*std::exchange(s.heap, nullptr), u.bytes_);
        else
          u.k_.heap_release(u.bytes_);
        return true;
      }
      return false;
    }
  };

  // kind: the runtime (virtual_threads, event_loop), for wait_effect();
  // bytes: the memory a live user thread holds (memory_peak).
  UserThreads(Kernel& k, Driver& d, BackendKind kind, Bytes bytes, std::size_t tasks, ReadyFn ready,
              void* ready_ctx)
      : k_(k),
        driver_(d),
        kind_(kind),
        bytes_(bytes),
        ready_(ready),
        ready_ctx_(ready_ctx),
        slots_(tasks) {}
  ~UserThreads() {
    for (Slot& s : slots_)
      if (s.top) s.top.destroy();
  }
  UserThreads(const UserThreads&) = delete;
  UserThreads& operator=(const UserThreads&) = delete;

  // Makes OS thread t a host (call before t runs a user thread).
  Host& adopt(ThreadId t) {
    hosts_.push_back(std::unique_ptr<Host>(new Host(*this)));
    k_.set_user_scheduler(t, hosts_.back().get());
    return *hosts_.back();
  }

  // Runs task's user thread on `host` (the calling OS thread) until it ends
  // (the await yields true) or unmounts (false); creates it at its first run.
  RunAwait run(Host& host, std::uint32_t task) { return {*this, host, task}; }
  // True once task's user thread exists (it has been mounted) and until it ends.
  bool started(std::uint32_t task) const { return static_cast<bool>(slots_[task].top); }
  // Before a user thread's first mount, its host allocates its state (a
  // fiber's stack, a loop task's handler and timer): the bytes count from
  // here, and the CPU returned (Kernel::heap_touch: the first touch of pages
  // the heap grows into) is the host's to compute before run(). With
  // `arena_of`, from that host's own malloc arena (an event loop's task:
  // Kernel::arena_touch), where it is freed again at its end.
  [[nodiscard]] Duration first_touch(std::uint32_t task, Host* arena_of = nullptr) {
    Slot& s = slots_[task];
    POOLSIM_ASSERT(!s.top && !s.touched, "first_touch of a user thread that exists");
    s.touched = true;
    if (!arena_of) return k_.heap_touch(bytes_);
    s.heap = &arena_of->heap_;
    return k_.arena_touch(*s.heap, bytes_);
  }

  const Counters& counters() const { return c_; }

  // How long after a user thread's deadline a host blocked for it runs: the
  // kernel timer it blocked on. An event loop waits in epoll_wait on Asio's
  // timerfd, whose hrtimer has no slack (timer_slack - hrtimer_slack); a
  // carrier's condition wait is a futex timeout with the thread's slack
  // (timer_slack). The owner wakes it then with Kernel::timer_notify_one.
  Duration blocked_host_late() const {
    const MachineProfile& m = k_.machine();
    if (kind_ == BackendKind::event_loop)
      return std::max(m.timer_slack - m.hrtimer_slack, Duration{0});
    return m.timer_slack;
  }

 private:
  struct Slot {
    Co::Handle top;  // the execute() frame, owned; null before its start and after its end
    std::coroutine_handle<> at;         // where it resumes (null while mounted)
    bool touched = false;               // first_touch paid, until it ends
    Kernel::ArenaHeap* heap = nullptr;  // the host arena its state came from, if any
  };

  static void on_timer(void* self, std::uint64_t task) {
    auto& u = *static_cast<UserThreads*>(self);
    u.ready_(u.ready_ctx_, static_cast<std::uint32_t>(task), true);
  }

  Kernel& k_;
  Driver& driver_;
  BackendKind kind_;
  Bytes bytes_;
  ReadyFn ready_;
  void* ready_ctx_;
  std::vector<Slot> slots_;  // per task
  std::vector<std::unique_ptr<Host>> hosts_;
  Counters c_;
};

}  // namespace poolsim::sim
