// injection_policy.hpp: the starvation gate of an injecting pool (Windows
// thread pool / .NET PortableThreadPool), shared by sim/injecting_pool.cpp and
// real/injecting_pool.cpp.
//
// Source: dotnet/runtime PortableThreadPool.GateThread.cs: a gate thread wakes
// every GateThreadDelayMs (500 ms); if work is queued and starving (see
// should_inject), it injects one worker, up to the maximum. Idle workers retire after
// ThreadTimeoutMs (20 s) when above the minimum. The scenario's `injection_delay` is the gate
// period. Left out: hill climbing (it tunes the goal by throughput samples; under blocking
// starvation, the gate dominates), cooperative blocking hints.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include "models/scenario.hpp"

namespace poolsim {

struct InjectionParams {
  int min_threads = 1;
  int max_threads = 512;
  Duration gate_period = std::chrono::milliseconds(500);
  Duration idle_timeout = std::chrono::seconds(20);  // .NET ThreadTimeoutMs

  static InjectionParams from(const BackendSpec& b) {
    InjectionParams p;
    // At least one thread, and max no lower than min (both twins use this).
    p.min_threads = std::max(1, b.min_threads);
    p.max_threads = std::max(p.min_threads, b.max_threads);
    p.gate_period = b.injection_delay;
    return p;
  }
};

// Called by the gate every gate_period. Starvation means work is queued and
// the oldest queued item has waited at least one gate period without being
// dequeued: the threads are all busy (or blocked) for longer than the delay.
// This is the article's rule (seed 000: "if, during the ~500 ms delay, no
// thread becomes free for the item, a thread is created") and .NET's intent
// (GateThread: queued work and SufficientDelaySinceLastDequeue), stated on
// the queue's head so that a pool whose every thread stays blocked grows one
// thread per period, a staircase, while a pool that keeps up never grows.
inline bool should_inject(const InjectionParams& p, std::int64_t queued, Duration oldest_wait,
                          int live_workers) {
  return queued > 0 && oldest_wait >= p.gate_period && live_workers < p.max_threads;
}

// A worker idle for idle_timeout exits while the pool is above its minimum.
inline bool should_retire(const InjectionParams& p, int live_workers) {
  return live_workers > p.min_threads;
}

// The worker bookkeeping of an injecting pool, shared by the simulated pool
// and its real twin (which keeps it under its lock): live workers, and the
// counters both report in RunResult::extra.
struct InjectingPoolCounts {
  int live = 0;  // started and not retired
  int started = 0, retired = 0, injections = 0, workers_peak = 0;

  // Returns the new worker's number (1, 2, ...).
  int worker_started() {
    ++live;
    workers_peak = std::max(workers_peak, live);
    return ++started;
  }
  void worker_retired() {
    --live;
    ++retired;
  }
  // The gate's tick: true (an injection, counted) when the caller must
  // start one worker now.
  bool gate_tick(const InjectionParams& p, std::int64_t queued, Duration oldest_wait) {
    if (!should_inject(p, queued, oldest_wait, live)) return false;
    ++injections;
    return true;
  }
  void report(std::map<std::string, double>& extra) const {
    extra["injections"] = injections;
    extra["threads_started"] = started;
    extra["threads_retired"] = retired;
    extra["workers_peak"] = workers_peak;
  }
};

}  // namespace poolsim
