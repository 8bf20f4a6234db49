// resource_pool.hpp: bounded resources (a connection pool, a semaphore): the
// acquisition rule that the simulated and the real runtimes both follow.
//
// A resource (Scenario::resources) has `permits` permits. A phase with
// `holding: NAME` runs while its task holds one permit of NAME.
//
// Which phases share a permit: holding_step(phases, i) says whether the task
// acquires a permit before phase i (it holds a resource that the phase
// before it does not hold) and releases it after phase i (the phase after it
// does not hold the same resource, or it is the last phase). A run of
// consecutive phases holding the same resource therefore keeps one permit
// from the start of its first phase to the end of its last. A phase holds at
// most one resource, so a task never holds two permits at once and tasks
// cannot deadlock on permits. The permit is released when the task ends
// (its last holding phase is its last phase); a rejected task never started,
// so it never held one.
//
// FifoPermits<W> is the permit count and the queue of waiters, the model of
// java.util.concurrent.Semaphore(n, fair = true) and of a pool such as
// HikariCP's handing a returned connection to the longest waiter: acquire()
// grants a permit at once when one is free, else queues the waiter last;
// release() hands the permit directly to the oldest waiter (returned: it now
// holds the permit, and waking it is the caller's job) or, with nobody
// waiting, makes it free. There is no barging: a permit is never free while
// someone waits (invariant, asserted), so a newcomer cannot overtake a
// waiter.
//
// ResourceUse is the accounting both halves keep per resource (acquisitions,
// how many waited, the summed wait from the request to the grant, the most
// permits in use at once) and report() writes it into RunResult::extra under
// the same names on both sides; compute_metrics() derives resource_wait_mean
// from it.
//
// Callers: sim/driver.cpp (W: a simulated waiter, a thread or a parked user
// thread) and real/resources.cpp (W: a waiter record of a thread, a fiber or
// an event-loop continuation, under the resource's lock).
// Left out: timeouts on acquire (HikariCP's connectionTimeout), permits
// added or removed during a run, a task holding two resources at once.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "models/assert.hpp"
#include "models/scenario.hpp"
#include "models/units.hpp"
#include "models/workload.hpp"

namespace poolsim {

// What a task does about permits around phase i of `phases`.
struct HoldingStep {
  bool acquire_before = false;  // take one permit of phases[i].resource first
  bool release_after = false;   // give it back once phase i has ended
};

// The rule, from the resources of the phase before (kNoResource for the
// first phase), this phase, and the phase after (kNoResource for the last).
constexpr HoldingStep holding_step(std::uint16_t before, std::uint16_t r, std::uint16_t after) {
  if (r == kNoResource) return {};
  return {before != r, after != r};
}

inline HoldingStep holding_step(std::span<const Phase> phases, std::size_t i) {
  return holding_step(i == 0 ? kNoResource : phases[i - 1].resource, phases[i].resource,
                      i + 1 == phases.size() ? kNoResource : phases[i + 1].resource);
}

template <class W>
class FifoPermits {
 public:
  explicit FifoPermits(int permits) : free_(permits), permits_(permits) {
    POOLSIM_ASSERT(permits > 0, "a resource has at least one permit");
  }

  // True: w holds a permit now. False: w waits, last in line.
  bool acquire(W w) {
    POOLSIM_ASSERT(free_ == 0 || waiters_.empty(), "a permit is free while someone waits");
    if (free_ > 0) {
      --free_;
      return true;
    }
    waiters_.push_back(std::move(w));
    return false;
  }

  // The permit goes to the oldest waiter (returned) or becomes free.
  std::optional<W> release() {
    if (waiters_.empty()) {
      POOLSIM_ASSERT(free_ < permits_, "a permit is released that was never acquired");
      ++free_;
      return std::nullopt;
    }
    W next = std::move(waiters_.front());
    waiters_.pop_front();
    return next;
  }

  int permits() const { return permits_; }
  int free() const { return free_; }
  int in_use() const { return permits_ - free_; }
  std::size_t waiting() const { return waiters_.size(); }

 private:
  std::deque<W> waiters_;
  int free_;
  const int permits_;
};

struct ResourceUse {
  std::int64_t acquisitions = 0;  // permits granted
  std::int64_t waits = 0;         // of them, granted after a wait
  Duration wait_total{};          // summed from the request to the grant
  int in_use_peak = 0;            // most permits held at once

  void granted(Duration waited, int in_use) {
    ++acquisitions;
    if (waited > Duration{0}) ++waits;
    wait_total += waited;
    if (in_use > in_use_peak) in_use_peak = in_use;
  }
};

// Names in RunResult::extra: "resource_acquisitions" and
// "resource_wait_total" (seconds) over every resource, and per resource
// "resource.NAME.acquisitions", ".waits", ".wait_mean" (seconds),
// ".in_use_peak", ".permits". Nothing is written without resources.
inline constexpr const char* kExtraResourceAcquisitions = "resource_acquisitions";
inline constexpr const char* kExtraResourceWaitTotal = "resource_wait_total";

inline void report_resources(const std::vector<ResourceSpec>& specs,
                             const std::vector<ResourceUse>& use,
                             std::map<std::string, double>& extra) {
  if (specs.empty()) return;
  double acquisitions = 0, wait_total = 0;
  for (std::size_t i = 0; i < specs.size() && i < use.size(); ++i) {
    const ResourceUse& u = use[i];
    const std::string p = "resource." + specs[i].name + ".";
    extra[p + "permits"] = specs[i].permits;
    extra[p + "acquisitions"] = static_cast<double>(u.acquisitions);
    extra[p + "waits"] = static_cast<double>(u.waits);
    extra[p + "wait_mean"] =
        u.acquisitions > 0 ? to_seconds(u.wait_total) / static_cast<double>(u.acquisitions) : 0.0;
    extra[p + "in_use_peak"] = u.in_use_peak;
    acquisitions += static_cast<double>(u.acquisitions);
    wait_total += to_seconds(u.wait_total);
  }
  extra[kExtraResourceAcquisitions] = acquisitions;
  extra[kExtraResourceWaitTotal] = wait_total;
}

}  // namespace poolsim
