// resources.hpp: bounded resources (`resources:`, `holding:`) in a real run:
// a counting semaphore per resource with FIFO hand-off.
//
// The rule is models/resource_pool.hpp's, the simulator's: holding_step()
// says where a task acquires and releases, FifoPermits<W> who gets a permit.
// Here each resource is a FifoPermits under its own std::mutex, and a waiter
// is a Waiter record whose grant() wakes it the way its runtime waits:
//   - thread runtimes (RunContext::acquire_blocking, the default PhaseOps):
//     the OS thread blocks on the record's condition variable (a futex
//     wait: a voluntary switch), like a thread in Semaphore.acquire or in
//     HikariCP's getConnection;
//   - virtual threads (real/virtual_threads.cpp): a Boost.Fiber promise,
//     so the fiber suspends and its carrier runs other fibers;
//   - event loops (real/event_loop.cpp): the record holds the task's
//     continuation, posted to its loop on grant(); the loop never blocks.
// release() hands the permit to the oldest waiter under the lock and calls
// its grant() after unlocking. Records are shared_ptr-owned by the queue and
// the waiter alike, so a waiter that wakes and returns before grant() has
// finished frees nothing grant() still touches. The uncontended path
// (try_acquire) allocates nothing.
// Accounting (ResourceUse, under the resource's lock): each task reports its
// wait, from the request to the instant it proceeds, with granted().
// Invariant: at the end of a run every permit is free and nobody waits
// (idle(), checked by the runner).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "models/resource_pool.hpp"
#include "models/scenario.hpp"

namespace poolsim::real {

class ResourceTable {
 public:
  // A task waiting for a permit. grant() runs once, on the releasing
  // thread, when the permit already belongs to the waiter.
  struct Waiter {
    virtual ~Waiter() = default;
    virtual void grant() = 0;
  };

  explicit ResourceTable(const std::vector<ResourceSpec>& specs);
  bool empty() const { return res_.empty(); }

  // Takes a free permit (true), never ahead of a waiter.
  bool try_acquire(std::uint16_t r);
  // Takes a free permit (true) or queues w last (false: w->grant() follows).
  bool acquire(std::uint16_t r, std::shared_ptr<Waiter> w);
  // The task proceeds holding a permit of r, `waited` after it asked.
  void granted(std::uint16_t r, Duration waited);
  // Gives a permit back: to the oldest waiter (granted) or free.
  void release(std::uint16_t r);

  // Every permit free and nobody waiting.
  bool idle() const;
  void report(const std::vector<ResourceSpec>& specs, std::map<std::string, double>& extra) const;

 private:
  struct Resource {
    explicit Resource(int permits) : permits(permits) {}
    mutable std::mutex mu;
    FifoPermits<std::shared_ptr<Waiter>> permits;  // under mu
    ResourceUse use;                               // under mu
  };
  std::vector<std::unique_ptr<Resource>> res_;
};

}  // namespace poolsim::real
