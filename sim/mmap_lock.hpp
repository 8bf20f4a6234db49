// mmap_lock.hpp: a process's mmap lock (mm->mmap_lock), the kernel's
// reader-writer semaphore as Linux 5.13 and later run it
// (kernel/locking/rwsem.c), for the simulated runtime whose threads map and
// unmap their own stacks by the thousand (sim/thread_per_task.cpp).
//
// Mechanism:
// - A reader enters at once unless a writer holds the lock or a waiter
//   reserved it (the handoff bit); with waiters queued it enters only when
//   nobody holds the lock (rwsem_down_read_slowpath's lock stealing, which
//   a reader skips when other readers hold it, so that a stream of readers
//   does not starve a queued writer). Else it queues and sleeps until a
//   release grants it the lock: rwsem_mark_wake grants every queued reader
//   together when the first waiter is a reader.
// - A writer enters whenever nobody holds the lock and no waiter reserved
//   it, queued writers or not (rwsem_try_write_lock: a running writer takes
//   a free lock before a woken one gets back to a CPU). Else it queues and
//   sleeps. A release whose first waiter is a writer only wakes it
//   (wake_q_add, no grant): it tries again when it runs, and sleeps again
//   (another voluntary switch) if another thread took the lock meanwhile.
//   The first waiter that finds the lock held after RWSEM_WAIT_TIMEOUT (one
//   jiffy at HZ 250, so past the second tick boundary after it queued)
//   reserves it (RWSEM_FLAG_HANDOFF): from then on nobody else enters, and
//   the next release leaves it to that waiter.
// Before 2026-12-03 the model granted the lock to a woken writer at the
// release, as to readers: the writer then held it while it waited for a
// CPU behind runnable threads (milliseconds in a thread-per-task run), and
// every thread that wanted the lock meanwhile slept (docs/simulator.md).
// - A writer that finds the lock held first spins (rwsem_optimistic_spin):
//   as long as a writer holds it, which runs (a holder here holds it only
//   inside a system call, and this kernel does not preempt one), or for at
//   most (20 + readers) / 2 us while readers hold it; it takes the lock as
//   soon as it is free, and queues only if the spin ends without it. The
//   spin is CPU time of the spinner, looked at every kSpinQuantum.
// Left out: the spin's end on need_resched, the OSQ order among spinners.
// Invariants (asserted): never a writer together with readers inside; only
// the first waiter holds the reservation; a reader is woken only with the
// lock granted.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>

#include "models/assert.hpp"
#include "sim/co.hpp"
#include "sim/kernel.hpp"

namespace poolsim::sim {

class MmapLock {
 public:
  explicit MmapLock(Kernel& k) : k_(k) {}

  // The paths that do not sleep, without a coroutine frame: true when taken.
  bool try_read() {
    if (writer_ || handoff_ != nullptr) return false;
    if (!waiters_.empty() && readers_ > 0) return false;  // queue behind the writer
    ++readers_;
    return true;
  }
  bool try_write() {
    if (writer_ || readers_ > 0 || handoff_ != nullptr) return false;
    writer_ = true;
    return true;
  }
  // Returns with the read lock granted.
  Co read_slow() {
    Waiter w{false, k_.now()};
    waiters_.push_back(&w);
    ++sleeps_;
    co_await k_.wait(w.q);
    POOLSIM_ASSERT(w.granted, "mmap lock: a reader woken without the lock");
  }
  // Returns holding the write lock.
  Co write_slow() {
    // rwsem_optimistic_spin: while a writer holds the lock (it runs: it
    // holds it only inside a system call), or readers do for at most
    // (20 + readers) / 2 us (rwsem_rspin_threshold), spin and take the lock
    // the moment it is free; no spinning once a waiter reserved it.
    const Duration reader_spin_end =
        k_.now() + std::chrono::nanoseconds((20 + std::min(readers_, 30)) * 500);
    while (handoff_ == nullptr && (writer_ || k_.now() < reader_spin_end)) {
      spin_ += kSpinQuantum;
      co_await k_.compute(kSpinQuantum);
      if (try_write()) co_return;
    }
    Waiter w{true, k_.now()};
    waiters_.push_back(&w);
    for (;;) {
      ++sleeps_;
      co_await k_.wait(w.q);
      w.woken = false;
      if (take_as_waiter(w)) co_return;
    }
  }
  void read_unlock() {
    --readers_;
    POOLSIM_ASSERT(readers_ >= 0 && !writer_, "mmap lock: a reader left a write-held lock");
    if (readers_ == 0) wake_front();
  }
  // CPU time spent spinning, and sleeps on the lock (each a voluntary switch).
  Duration spin_time() const { return spin_; }
  std::int64_t sleeps() const { return sleeps_; }

  void write_unlock() {
    POOLSIM_ASSERT(writer_ && readers_ == 0, "mmap lock: write release while not held");
    writer_ = false;
    wake_front();
  }

 private:
  // How often a spinning writer looks at the lock (the kernel's loop looks
  // every few tens of nanoseconds; a coarser look costs simulated events).
  static constexpr Duration kSpinQuantum = std::chrono::microseconds(1);

  struct Waiter {
    bool writer;
    Duration since;  // when it queued (RWSEM_WAIT_TIMEOUT counts from here)
    WaitQueue q{};
    bool granted = false;  // a reader: the release gave it the lock
    bool woken = false;    // a writer: woken, not yet back on a CPU
  };

  // A woken writer, back on a CPU: rwsem_try_write_lock.
  bool take_as_waiter(Waiter& w) {
    if (writer_ || readers_ > 0) {
      if (handoff_ == nullptr && waiters_.front() == &w && timed_out(w)) handoff_ = &w;
      return false;
    }
    if (handoff_ != nullptr && handoff_ != &w) return false;
    handoff_ = nullptr;
    writer_ = true;
    waiters_.erase(std::find(waiters_.begin(), waiters_.end(), &w));
    return true;
  }
  // time_after(jiffies, waiter->timeout), timeout = jiffies + 1 at the
  // queueing: two tick boundaries passed (4 ms where the profile has no
  // tick), the ticks at the kernel's phase (Kernel::tick_offset).
  bool timed_out(const Waiter& w) const {
    const bool ticks = k_.machine().tick.count() > 0;
    const Duration jiffy = ticks ? k_.machine().tick : Duration{4000000};
    const Duration off = ticks ? k_.tick_offset() : Duration{0};
    return tick_grid_floor(k_.now(), jiffy, off) > tick_grid_floor(w.since, jiffy, off) + jiffy;
  }
  // rwsem_mark_wake(RWSEM_WAKE_ANY) once nobody holds the lock: the first
  // writer woken, or every queued reader granted.
  void wake_front() {
    if (waiters_.empty() || writer_ || readers_ > 0) return;
    Waiter* first = waiters_.front();
    POOLSIM_ASSERT(handoff_ == nullptr || handoff_ == first,
                   "mmap lock: reserved for a waiter that is not the first");
    if (first->writer) {
      if (!first->woken) {
        first->woken = true;
        k_.notify_one(first->q);
      }
      return;
    }
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      Waiter* w = *it;
      if (w->writer) {
        ++it;
        continue;
      }
      ++readers_;
      w->granted = true;
      k_.notify_one(w->q);
      it = waiters_.erase(it);
    }
  }

  Kernel& k_;
  std::deque<Waiter*> waiters_;  // in queueing order (the kernel's wait_list)
  Waiter* handoff_ = nullptr;    // RWSEM_FLAG_HANDOFF: reserved for this waiter
  int readers_ = 0;
  bool writer_ = false;
  Duration spin_{0};
  std::int64_t sleeps_ = 0;
};

}  // namespace poolsim::sim
