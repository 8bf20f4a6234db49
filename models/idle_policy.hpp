// idle_policy.hpp: how an idle pool worker waits for work and when it
// retires, written once for the pools that retire idle workers: the pool
// (sim/pool.cpp, real/pool.cpp; keep_alive above the core size) and the
// injecting pool (sim/injecting_pool.cpp, real/injecting_pool.cpp;
// idle_timeout above the minimum).
//
// Mechanism (Java's getTask(): poll(keepAliveTime) on the queue; .NET's
// WorkerThread: a semaphore wait of ThreadTimeoutMs): a worker that finds
// the queue empty starts an idle period whose deadline is fixed when it
// starts; a wake-up that finds no work (another worker took it, or a
// spurious wake-up) waits again for the same deadline; when the deadline
// passes with no work, the worker retires if the pool's rule allows it
// (should_retire of pool_policy.hpp / injection_policy.hpp), else a new idle
// period starts. A worker whose wait has no limit (a core worker) waits
// until notified.
// No clock and no lock here: each twin drives it with its own clock (the
// simulated kernel's, CLOCK_MONOTONIC) and under its own lock.
#pragma once

#include <cstdint>
#include <optional>

#include "models/units.hpp"

namespace poolsim {

enum class IdleStep : std::uint8_t {
  wait_again,  // no work: wait again (same period, or a new one after a timeout)
  retire,      // the period ended with no work and the pool may shrink: exit
};

class IdlePeriod {
 public:
  // Before each wait, at `now`, with the wait's limit (nullopt: no limit).
  // Returns the instant the wait ends by itself (nullopt: only a notify).
  std::optional<Duration> deadline(std::optional<Duration> limit, Duration now) {
    if (!limit) {
      deadline_.reset();
      return std::nullopt;
    }
    if (!deadline_) deadline_ = now + *limit;
    return deadline_;
  }

  // After a wait that found no work: `timed_out` when its deadline passed;
  // `may_retire` is the pool's should_retire() now.
  IdleStep after_wait(bool timed_out, bool may_retire) {
    if (!timed_out) return IdleStep::wait_again;
    deadline_.reset();
    return may_retire ? IdleStep::retire : IdleStep::wait_again;
  }

 private:
  std::optional<Duration> deadline_;  // set while a limited idle period runs
};

}  // namespace poolsim
