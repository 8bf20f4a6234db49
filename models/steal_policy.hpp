// steal_policy.hpp: where a work-stealing worker looks for its next task,
// shared by sim/work_stealing.cpp and real/work_stealing.cpp.
//
// The chain, in order (as oneTBB's receive_or_steal_task and Taskflow's
// worker loop): 1. pop the newest task of its own deque (LIFO, cache-warm);
// 2. take the oldest task of the global injection queue (external
// submissions, FIFO); 3. steal the oldest task of another worker's deque
// (FIFO from the other end), trying victims in a seeded pseudo-random order
// starting at a random worker, each once; 4. spin `spin_rounds` rounds of
// 2-3, then park until a submit or a spawn wakes it.
#pragma once

#include <cstdint>

#include "models/rng.hpp"

namespace poolsim {

enum class WorkSource : std::uint8_t { local, injection, steal };

struct StealPolicy {
  int spin_rounds = 4;  // failed full rounds before parking (oneTBB spins a little too)

  // The k-th victim (k = 0 .. workers-2) for `self`, given a random start.
  static int victim(int self, int workers, std::uint64_t start, int k) {
    int v = static_cast<int>((start + static_cast<std::uint64_t>(k)) % static_cast<std::uint64_t>(workers - 1));
    return v >= self ? v + 1 : v;
  }
};

}  // namespace poolsim
