// thread_per_task.cpp: the thread-per-task runtime (pthread_create, new
// Thread, CreateThread per task).
//
// Mechanism: submit() makes the submitting thread create a new OS thread for
// the task, computing machine.thread_create itself first (so 100k creations
// take 100k * thread_create of the submitter's CPU time, and are stretched
// when the new threads compete with it for the CPU). The new thread runs the
// task and exits, computing machine.thread_exit. Every thread's stack counts
// stack_touch toward memory_peak while it lives, and the first ones to run
// pool_stack more in all, at most worker_stack each (the dynamic linker's
// lazy binding: a function is bound once per process).
// Stacks (glibc's stack cache, nptl/nptl-stack.c): the stacks of ended
// threads are kept, up to machine.stack_cache bytes, and a new thread takes
// one if any is free. A creation that finds the cache empty maps a stack:
// the creator computes machine.stack_map more (and stack_map_remote while
// another CPU runs a thread of the process). A thread that ends with the
// cache full unmaps its stack: it computes machine.stack_unmap more, plus
// machine.tlb_shootdown when the scenario has several CPUs (munmap then
// interrupts the other CPUs the process runs on). The cache starts empty,
// as in a new process. The mapping and unmapping hold the process's mmap lock
// for writing, and every dying thread first releases its unused stack
// (glibc's advise_stack_range: madvise, machine.stack_madvise) holding it
// for reading, so a creator mapping a stack and dying threads wait for each
// other (perf on the real twin: docs/validation.md, "Thread churn"). Each
// of these is a system call (Kernel::enter_syscall): its thread is not
// switched out while it holds the lock.
// Only this runtime creates threads by the thousand;
// the others' few creations do not touch this count.
// Twin: real/thread_per_task.cpp. No policy: nothing is ever refused (the
// real runner refuses scenarios above run.max_threads; the simulator shows
// what would happen).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "models/assert.hpp"
#include "sim/driver.hpp"
#include "sim/runtime.hpp"

namespace poolsim::sim {

namespace {

class ThreadPerTask final : public Runtime {
 public:
  explicit ThreadPerTask(const SimContext& ctx) : k_(ctx.kernel), driver_(ctx.driver) {
    k_.set_worker_stack(k_.machine().worker_stack, k_.machine().pool_stack);
  }

  // The stack cache is the kernel's (Kernel::take_cached_stack); mapping and
  // unmapping are done here, under the mmap lock.
  Co submit(std::uint32_t task) override {
    const bool cached = k_.take_cached_stack();
    if (!cached) {
      k_.enter_syscall();
      if (!try_write_lock()) co_await write_wait();
      co_await k_.compute(k_.stack_map_cost());
      write_unlock();
      k_.leave_syscall();
    }
    co_await k_.spawn(body(task), "thread",
                      cached ? Kernel::StackSource::cached : Kernel::StackSource::mapped);
  }

  void report(std::map<std::string, double>& extra) const override {
    extra["stacks_mapped"] = static_cast<double>(k_.stacks_mapped());
    extra["stacks_unmapped"] = static_cast<double>(k_.stacks_unmapped());
    extra["stacks_cached"] = static_cast<double>(k_.stacks_cached());  // free at the end
  }

 private:
  Co body(std::uint32_t task) {
    co_await driver_.execute(task);
    const MachineProfile& m = k_.machine();
    // advise_stack_range: the unused stack released, under the read lock.
    k_.enter_syscall();
    if (!try_read_lock()) co_await read_wait();
    co_await k_.compute(m.stack_madvise);
    read_unlock();
    k_.leave_syscall();
    k_.prepay_exit(m.stack_madvise);  // thread_exit was measured with it
    if (!k_.release_stack()) {
      k_.enter_syscall();
      if (!try_write_lock()) co_await write_wait();
      co_await k_.compute(m.stack_unmap + (k_.cpu_count() > 1 ? m.tlb_shootdown : Duration{0}));
      write_unlock();
      k_.leave_syscall();
    }
  }

  // The process's mmap lock (mm->mmap_lock, a reader-writer semaphore,
  // kernel/locking/rwsem.c). A reader enters unless a writer holds it or
  // waits (readers do not pass a waiting writer); a writer enters when it is
  // free. Whoever cannot enter sleeps (a voluntary switch), and a release
  // hands the lock over instead of letting the releaser take it back: the
  // last reader out grants it to a waiting writer; a writer's release grants
  // it to every waiting reader (rwsem_mark_wake wakes the readers with their
  // read locks granted), else to the next writer. Invariant (asserted):
  // never a writer together with readers inside. The uncontended paths take
  // the lock without a coroutine frame (try_*); only a waiter has one.
  bool try_read_lock() {
    if (mm_writer_ || mm_writers_waiting_ > 0) return false;
    ++mm_readers_;
    return true;
  }
  Co read_wait() {
    ++mm_readers_waiting_;
    co_await k_.wait(mm_readers_q_);  // granted by write_unlock
  }
  void read_unlock() {
    --mm_readers_;
    POOLSIM_ASSERT(mm_readers_ >= 0 && !mm_writer_, "mmap lock: a reader left a write-held lock");
    if (mm_readers_ == 0 && mm_writers_waiting_ > 0) grant_writer();
  }
  bool try_write_lock() {
    if (mm_writer_ || mm_readers_ > 0 || mm_writers_waiting_ > 0) return false;
    mm_writer_ = true;
    return true;
  }
  Co write_wait() {
    ++mm_writers_waiting_;
    co_await k_.wait(mm_writers_q_);  // granted by grant_writer
  }
  void write_unlock() {
    POOLSIM_ASSERT(mm_writer_ && mm_readers_ == 0, "mmap lock: write release while not held");
    mm_writer_ = false;
    if (mm_readers_waiting_ > 0) {
      mm_readers_ += std::exchange(mm_readers_waiting_, 0);
      k_.notify_all(mm_readers_q_);
    } else if (mm_writers_waiting_ > 0) {
      grant_writer();
    }
  }
  void grant_writer() {
    --mm_writers_waiting_;
    mm_writer_ = true;
    const bool woke = k_.notify_one(mm_writers_q_);
    POOLSIM_ASSERT(woke, "mmap lock: a writer counted as waiting is not");
    (void)woke;
  }

  Kernel& k_;
  Driver& driver_;
  int mm_readers_ = 0, mm_readers_waiting_ = 0, mm_writers_waiting_ = 0;
  bool mm_writer_ = false;
  WaitQueue mm_readers_q_, mm_writers_q_;
};

}  // namespace

std::unique_ptr<Runtime> make_thread_per_task(const SimContext& ctx) {
  return std::make_unique<ThreadPerTask>(ctx);
}

}  // namespace poolsim::sim
