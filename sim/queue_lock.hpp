// queue_lock.hpp: the mutex around a runtime's shared task queue, as glibc's
// low-level lock does it (nptl/lowlevellock.c, include lowlevellock.h), for
// the simulated runtimes whose real twins guard one deque with a
// std::mutex (sim/pool.cpp, sim/injecting_pool.cpp).
//
// Mechanism (the lock word: 0 free, 1 held, 2 held and maybe waited for):
// - lock: a compare-and-swap 0 -> 1, no system call. If the lock is held,
//   __lll_lock_wait: exchange the word to 2; if it was 0 the lock is taken
//   (with the word left at 2); else FUTEX_WAIT(word, 2), which returns at
//   once if the word is no longer 2 and otherwise sleeps until a
//   FUTEX_WAKE; then exchange again. glibc's default mutex does not spin
//   (only PTHREAD_MUTEX_ADAPTIVE_NP does) and does not hand the lock over:
//   whoever exchanges first after a release gets it.
// - unlock: exchange the word to 0; if it was 2, FUTEX_WAKE one waiter
//   (a system call even when nobody sleeps).
// Every futex system call that neither sleeps nor wakes a sleeper costs the
// caller machine.futex_call of CPU (on this project's PVM guests a system
// call is about 1 us); a wait that sleeps is a voluntary switch, and the
// waker pays the wake as for any notify_one (wake_cost, wake_ipi). The
// waiter leaves its CPU only if the lock is still held futex_wait_check
// after it found it held (its CPU meanwhile; futex_call when 0): a release
// before then reaches it in time (FUTEX_WAIT reads the word under the hash
// bucket's lock and returns EAGAIN, or the FUTEX_WAKE finds it queued but
// still running, before schedule() dequeues it). Measured (calibrate,
// 2026-12-05): 141 ns, where a FUTEX_WAKE on an empty word costs 78 ns;
// with the check at futex_call a simulated submitter posting to an event
// loop slept on a take that held the lock 167 ns and waited out the
// other loop's slice (docs/validation.md).
// The critical section is the lock's part of the runtime's queue_handover
// (queue_lock_hold, all of it when 0; the rest, rest_push() and rest_take(), is the side's own
// work outside the lock, a submitter's before its submit, a worker's after
// its unlock: the real submitter's time stamp, record and arrival loop are
// 60% of its CPU per post, perf, 2026-12-05), plus
// queue_handover_remote when the last holder ran on another CPU (the lock
// word's and the deque's cache lines move: 39-332 ns in calibrations of
// 2026-12-03, as a line took 91-234 ns to cross, depending on the minute); a holder preempted
// inside it keeps the lock. Measured (2026-12-03, win-100k-micro-pool, `perf stat -e
// syscalls:sys_enter_futex`): 48,605 futex calls and 281 context switches
// for 100,000 tasks of 100 ns on 2 workers; 19,624 with 1 worker.
// Invariant (asserted): only a holder unlocks.
// Left out: the condition variable's internal lock (the idle workers' wait).
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

#include "models/assert.hpp"
#include "sim/co.hpp"
#include "sim/kernel.hpp"

namespace poolsim::sim {

class QueueLock {
 public:
  explicit QueueLock(Kernel& k) : k_(k) {}

  // The uncontended path, without a coroutine frame: true when taken.
  bool try_lock() {
    if (word_ != 0) return false;
    word_ = 1;
    took();
    return true;
  }
  // __lll_lock_wait: returns with the lock held.
  Co lock_slow() {
    for (;;) {
      const int was = word_;
      word_ = 2;
      if (was == 0) {
        took();
        co_return;
      }
      co_await k_.compute(wait_check(k_.machine()));  // FUTEX_WAIT(word, 2)
      if (word_ != 2) continue;                       // released meanwhile: on it goes
      ++sleeps_;
      co_await k_.wait(q_);  // until a FUTEX_WAKE
    }
  }
  // The holder's critical section: the lock's part of queue_handover
  // (queue_lock_hold; all of it when that is 0), plus queue_handover_remote
  // when another CPU held the lock last (the lock word's and the queue's
  // cache lines come over).
  Duration handover() const {
    const MachineProfile& m = k_.machine();
    return held(m) + (remote_ ? m.queue_handover_remote : Duration{0});
  }
  // The rest of a side's part of the hand-over (push_cost, take_cost:
  // models/machine.hpp), its own work outside the lock: a submitter charges
  // it before its submit decides anything (the harness's time stamp and
  // record come first), a worker after its unlock (the task's start
  // record); meanwhile another thread can take the lock.
  Duration rest_push() const { return rest_push(push_cost(k_.machine())); }
  // The same for a push whose side costs `side` in all (an event loop's
  // post: post_cost), at least the hold.
  Duration rest_push(Duration side) const {
    return std::max(side - held(k_.machine()), Duration{0});
  }
  Duration rest_take() const {
    const MachineProfile& m = k_.machine();
    return take_cost(m) - held(m);
  }
  // A critical section whose own work is `work` (a counter, a pointer
  // pushed), plus queue_handover_remote as handover() has it.
  Duration section(Duration work) const {
    return work + (remote_ ? k_.machine().queue_handover_remote : Duration{0});
  }
  // lll_unlock: true when the caller must then make the FUTEX_WAKE call
  // (wake()), outside any other work of its critical section.
  [[nodiscard]] bool unlock() {
    POOLSIM_ASSERT(word_ != 0, "queue lock: unlocked while free");
    return std::exchange(word_, 0) == 2;
  }
  // The waits that slept in FUTEX_WAIT so far.
  std::int64_t sleeps() const { return sleeps_; }
  // FUTEX_WAKE: the first sleeper woken (the waker pays the wake, as for
  // any notify_one), or, with nobody asleep, the call's own cost.
  Co wake() {
    if (!k_.notify_one(q_)) co_await k_.compute(k_.machine().futex_call);
  }

 private:
  // The waiter's time in FUTEX_WAIT up to where a release no longer keeps
  // it on its CPU: futex_wait_check, else futex_call.
  static Duration wait_check(const MachineProfile& m) {
    return m.futex_wait_check > Duration{0} ? m.futex_wait_check : m.futex_call;
  }
  static Duration held(const MachineProfile& m) {
    const Duration side = std::min(push_cost(m), take_cost(m));
    return m.queue_lock_hold > Duration{0} ? std::min(m.queue_lock_hold, side) : side;
  }
  void took() {
    const int cpu = k_.current_cpu();
    remote_ = last_cpu_ >= 0 && cpu != last_cpu_;
    last_cpu_ = cpu;
  }

  Kernel& k_;
  int word_ = 0;
  int last_cpu_ = -1;  // the CPU of the last holder
  bool remote_ = false;
  std::int64_t sleeps_ = 0;
  WaitQueue q_;  // the waiters asleep in FUTEX_WAIT
};

}  // namespace poolsim::sim
