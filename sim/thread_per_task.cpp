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
// Stacks (glibc's stack cache, nptl/nptl-stack.c): the stacks of ending
// threads are kept, up to machine.stack_cache bytes, and a new thread takes
// one if any is free: a stack is free once its thread has exited (the
// kernel clears its tid), not while the thread that queued it still runs its
// exit path. A creation that finds no free stack maps one: the creator
// computes machine.stack_map more (and stack_map_remote while another CPU
// runs a thread of the process), and takes the cache lock a second time to
// list it. A thread whose queued stack takes the cache over its size unmaps
// free stacks until it is under again (none if none is free): each costs
// machine.stack_unmap, plus machine.tlb_shootdown when the scenario has
// several CPUs (munmap then interrupts the other CPUs the process runs
// on). The cache starts empty,
// as in a new process. The mapping and unmapping hold the process's mmap lock
// for writing, and every dying thread first releases its unused stack
// (glibc's advise_stack_range: madvise, machine.stack_madvise) holding it
// for reading, so a creator mapping a stack and dying threads wait for each
// other (perf on the real twin: docs/validation.md, "Thread churn"); the
// lock is the kernel's rwsem as sim/mmap_lock.hpp runs it. Each of these is
// a system call (Kernel::enter_syscall): its thread is not switched out
// while it holds the lock, but may be on the call's way back to user space
// (Kernel::leave_syscall), holding the stack cache lock if it unmaps under
// it. The cache itself is guarded by glibc's
// dl_stack_cache_lock (a low-level lock, sim/queue_lock.hpp): the creator's
// look into it, and the dying thread's return of its stack with the
// unmapping under it (__nptl_deallocate_stack -> __nptl_free_stacks). A
// thread leaves the live count when its body ends (Kernel::body_ended), as
// the real runner counts it, before this exit path.
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
#include "sim/mmap_lock.hpp"
#include "sim/queue_lock.hpp"
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
    // get_cached_stack, under glibc's stack cache lock.
    if (!stack_lock_.try_lock()) co_await stack_lock_.lock_slow();
    const bool cached = k_.take_cached_stack();
    if (stack_lock_.unlock()) co_await stack_lock_.wake();
    if (!cached) {
      k_.enter_syscall();
      if (!mm_.try_write()) co_await mm_.write_slow();
      co_await k_.compute(k_.stack_map_cost());
      mm_.write_unlock();
      co_await k_.leave_syscall();
      // allocate_stack puts the new stack on the list of stacks in use,
      // under the stack cache lock again.
      if (!stack_lock_.try_lock()) co_await stack_lock_.lock_slow();
      if (stack_lock_.unlock()) co_await stack_lock_.wake();
    }
    co_await k_.spawn(body(task), "thread",
                      cached ? Kernel::StackSource::cached : Kernel::StackSource::mapped);
  }

  void report(std::map<std::string, double>& extra) const override {
    extra["stacks_mapped"] = static_cast<double>(k_.stacks_mapped());
    extra["stacks_unmapped"] = static_cast<double>(k_.stacks_unmapped());
    extra["stacks_cached"] = static_cast<double>(k_.stacks_cached());  // free at the end
    extra["mmap_lock_sleeps"] = static_cast<double>(mm_.sleeps());
    extra["stack_lock_sleeps"] = static_cast<double>(stack_lock_.sleeps());
    extra["mmap_lock_spin"] = to_seconds(mm_.spin_time());
  }

 private:
  Co body(std::uint32_t task) {
    co_await driver_.execute(task);
    k_.body_ended();  // the real twin's count ends with its body; glibc's exit path follows
    const MachineProfile& m = k_.machine();
    // advise_stack_range: the unused stack released, under the read lock.
    k_.enter_syscall();
    if (!mm_.try_read()) co_await mm_.read_slow();
    co_await k_.compute(m.stack_madvise);
    mm_.read_unlock();
    co_await k_.leave_syscall();
    k_.prepay_exit(m.stack_madvise);  // thread_exit was measured with it
    // __nptl_deallocate_stack, under glibc's stack cache lock: queue_stack
    // puts the stack in the cache and, with the cache over its size,
    // __nptl_free_stacks unmaps free ones, still holding that lock.
    if (!stack_lock_.try_lock()) co_await stack_lock_.lock_slow();
    for (int unmaps = k_.release_stack(); unmaps > 0; --unmaps) {
      k_.enter_syscall();
      if (!mm_.try_write()) co_await mm_.write_slow();
      co_await k_.compute(m.stack_unmap + (k_.cpu_count() > 1 ? m.tlb_shootdown : Duration{0}));
      mm_.write_unlock();
      co_await k_.leave_syscall();
    }
    if (stack_lock_.unlock()) co_await stack_lock_.wake();
  }

  Kernel& k_;
  Driver& driver_;
  MmapLock mm_{k_};  // the process's mmap lock (sim/mmap_lock.hpp)
  // glibc's dl_stack_cache_lock, a low-level lock like the pools' queue
  // lock (sim/queue_lock.hpp; its critical sections here are the stack
  // cache's list operations, free, and an unmapping).
  QueueLock stack_lock_{k_};
};

}  // namespace

std::unique_ptr<Runtime> make_thread_per_task(const SimContext& ctx) {
  return std::make_unique<ThreadPerTask>(ctx);
}

}  // namespace poolsim::sim
