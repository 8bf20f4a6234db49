// pool_policy.hpp: the decisions of a ThreadPoolExecutor-style pool, written
// once and called by both the simulated pool (sim/pool.cpp) and the real one
// (real/pool.cpp), so the validator compares kernels and costs, not two
// copies of the policy.
//
// Source: java.util.concurrent.ThreadPoolExecutor.execute() (OpenJDK):
//   1. fewer than corePoolSize threads -> start a new thread with the task as
//      its first task (even if other workers are idle);
//   2. else offer the task to the queue;
//   3. if the queue refuses (full) -> start a thread up to maximumPoolSize;
//   4. else reject (AbortPolicy by default; CallerRuns, Discard, DiscardOldest).
// keepAliveTime retires idle threads above the core size.
// Left out: allowCoreThreadTimeOut, prestartAllCoreThreads (core threads
// start lazily, as in Java).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>

#include "models/scenario.hpp"

namespace poolsim {

enum class SubmitAction : std::uint8_t {
  start_core_thread,   // new thread runs this task first
  enqueue,             // put it on the queue (wake an idle worker if any)
  start_extra_thread,  // queue full: new non-core thread runs this task first
  reject,              // apply the rejection policy
};

struct PoolLimits {
  int core = 1;
  int max = 1;
  std::optional<std::int64_t> queue_capacity;  // unset = unbounded
  RejectPolicy reject = RejectPolicy::abort;
  Duration keep_alive = std::chrono::seconds(60);

  // At least one core thread, and max no lower than core: the simulated pool
  // and its real twin both take their limits from here.
  static PoolLimits from(const BackendSpec& b) {
    const int core = std::max(1, b.threads);
    return PoolLimits{core, std::max(core, b.max_threads), b.queue, b.reject, b.keep_alive};
  }
};

inline SubmitAction decide_submit(const PoolLimits& p, int live_threads, std::int64_t queued) {
  if (live_threads < p.core) return SubmitAction::start_core_thread;
  if (!p.queue_capacity || queued < *p.queue_capacity) return SubmitAction::enqueue;
  if (live_threads < p.max) return SubmitAction::start_extra_thread;
  return SubmitAction::reject;
}

// An idle worker that waited keep_alive without a task exits if the pool has
// more than `core` threads.
inline bool should_retire(const PoolLimits& p, int live_threads) { return live_threads > p.core; }

// A worker above the core size waits at most keep_alive for work; a core
// worker waits forever (nullopt).
inline std::optional<Duration> idle_wait_limit(const PoolLimits& p, int live_threads) {
  if (live_threads > p.core) return p.keep_alive;
  return std::nullopt;
}

}  // namespace poolsim
