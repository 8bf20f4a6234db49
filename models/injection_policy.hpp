// injection_policy.hpp: the starvation gate of an injecting pool (Windows
// thread pool / .NET PortableThreadPool), shared by sim/injecting_pool.cpp and
// real/injecting_pool.cpp.
//
// Source: dotnet/runtime PortableThreadPool.GateThread.cs: a gate thread wakes
// every GateThreadDelayMs (500 ms); if work is queued and no work item was
// dequeued since its last check (starvation), it injects one worker, up to the
// maximum. Idle workers retire after ThreadTimeoutMs (20 s) when above the
// minimum. The scenario's `injection_delay` is the gate period.
// Left out: hill climbing (it tunes the goal by throughput samples; under
// blocking starvation, the gate dominates), cooperative blocking hints.
#pragma once

#include <chrono>
#include <cstdint>

#include "models/scenario.hpp"

namespace poolsim {

struct InjectionParams {
  int min_threads = 1;
  int max_threads = 512;
  Duration gate_period = std::chrono::milliseconds(500);
  Duration idle_timeout = std::chrono::seconds(20);  // .NET ThreadTimeoutMs

  static InjectionParams from(const BackendSpec& b) {
    InjectionParams p;
    p.min_threads = b.min_threads;
    p.max_threads = b.max_threads;
    p.gate_period = b.injection_delay;
    return p;
  }
};

// Called by the gate every gate_period with the number of queued items, the
// dequeue counter now and at the previous check, and the live worker count.
inline bool should_inject(const InjectionParams& p, std::int64_t queued,
                          std::uint64_t dequeues_now, std::uint64_t dequeues_at_last_check,
                          int live_workers) {
  return queued > 0 && dequeues_now == dequeues_at_last_check && live_workers < p.max_threads;
}

// A worker idle for idle_timeout exits while the pool is above its minimum.
inline bool should_retire(const InjectionParams& p, int live_workers) {
  return live_workers > p.min_threads;
}

}  // namespace poolsim
