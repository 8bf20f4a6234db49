// wait_policy.hpp: what a blocking wait does to the OS thread under each
// runtime, shared by the simulated and the real runtimes.
//
// Thread runtimes (thread-per-task, pools, work stealing, tbb, asio-pool):
// a `wait` blocks the OS thread. Virtual threads: a `wait` unmounts the
// virtual thread and frees its carrier, but a wait while holding a `lock`
// pins the carrier, which blocks (synchronized before JDK 24, JEP 491).
// Event loops: a `wait` is a timer that frees the loop; a wait while holding a
// lock blocks the loop thread.
// Called by sim/user_threads.hpp (the simulated carriers and loops, when a
// mounted task sleeps) and real/run_context.cpp (RunContext::execute picks
// the runtime's blocking or releasing wait); the event loops' step code,
// which cannot block a loop for a plain wait, states it with static_assert.
#pragma once

#include "models/scenario.hpp"

namespace poolsim {

enum class WaitEffect : std::uint8_t { block_thread, release_thread };

constexpr WaitEffect wait_effect(BackendKind k, bool inside_lock) {
  switch (k) {
    case BackendKind::virtual_threads:
    case BackendKind::event_loop:
      return inside_lock ? WaitEffect::block_thread : WaitEffect::release_thread;
    default:
      return WaitEffect::block_thread;
  }
}

}  // namespace poolsim
