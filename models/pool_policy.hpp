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
//   4. else reject (AbortPolicy by default; CallerRuns, Discard, DiscardOldest):
//      decide_reject() says what the policy does with the refused task.
// keepAliveTime retires idle threads above the core size.
// PoolCounts is the pool's bookkeeping (live workers) and its counters, with
// the one set of RunResult::extra names both twins report.
// Left out: allowCoreThreadTimeOut, prestartAllCoreThreads (core threads
// start lazily, as in Java).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

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

// What the rejection policy does with a task decide_submit() refused
// (java.util.concurrent.ThreadPoolExecutor's four handlers).
enum class RejectAction : std::uint8_t {
  reject_new,     // abort, discard: the new task is rejected (Java's abort
                  // throws to the caller, which drops it)
  run_on_caller,  // caller-runs: the submitting thread runs it now
  drop_oldest,    // discard-oldest: the queue's head is rejected and the
                  // new task offered again (poll(), then execute(r))
};

inline RejectAction decide_reject(RejectPolicy policy, std::int64_t queued) {
  switch (policy) {
    case RejectPolicy::abort:
    case RejectPolicy::discard:
      return RejectAction::reject_new;
    case RejectPolicy::caller_runs:
      return RejectAction::run_on_caller;
    case RejectPolicy::discard_oldest:
      // Nothing older to drop (a zero-capacity queue): the new task goes.
      return queued > 0 ? RejectAction::drop_oldest : RejectAction::reject_new;
  }
  return RejectAction::reject_new;
}

// The worker bookkeeping and counters of a pool, shared by the simulated
// pool and its real twin (which keeps it under its lock).
// Invariant: live == started - retired, and live <= max_threads (a start is
// decided only below the maximum).
struct PoolCounts {
  int live = 0;  // started and not retired, counted from the decision (Java's ctl CAS)
  std::int64_t started = 0, retired = 0;
  std::int64_t rejections = 0;   // reject decisions (a discard-oldest retry counts again)
  std::int64_t caller_runs = 0;  // tasks the submitting thread ran (caller-runs)

  // Returns the new worker's number (1, 2, ...).
  int worker_started() {
    ++live;
    return static_cast<int>(++started);
  }
  void worker_retired() {
    --live;
    ++retired;
  }
  // Counts a reject decision and returns what to do.
  RejectAction rejected(RejectPolicy policy, std::int64_t queued) {
    ++rejections;
    const RejectAction a = decide_reject(policy, queued);
    if (a == RejectAction::run_on_caller) ++caller_runs;
    return a;
  }
  void report(std::map<std::string, double>& extra) const {
    extra["threads_started"] = static_cast<double>(started);
    extra["threads_retired"] = static_cast<double>(retired);
    extra["rejections"] = static_cast<double>(rejections);
    extra["caller_runs"] = static_cast<double>(caller_runs);
  }
};

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
