// steal_policy.hpp: where a work-stealing worker looks for its next task and
// when it stops looking, written once for sim/work_stealing.cpp (and the
// oneTBB model sim/tbb.cpp) and real/work_stealing.cpp.
//
// The chain, in order (as oneTBB's receive_or_steal_task and Taskflow's
// worker loop), find_work(): 1. pop the newest task of its own deque (LIFO,
// cache-warm); 2. take the oldest task of the global injection queue
// (external submissions, FIFO); 3. steal the oldest task of another worker's
// deque (FIFO from the other end), trying victims in a seeded pseudo-random
// order starting at a random worker (StealPolicy::victim), each once per
// round (or one victim per round, oneTBB's arena::steal_task); 4. after
// `spin_rounds` failed rounds (SpinThenPark), park until a submit or a
// spawn wakes it.
// No threads and no clock here: each twin passes its queues (the real twin
// locks each deque inside its accessors), spins and parks its own way (the
// simulator computes the spin pause, the real twin executes pause
// instructions), and counts with StealCounts under the names both report.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "models/rng.hpp"

namespace poolsim {

enum class WorkSource : std::uint8_t { local, injection, steal };

struct StealPolicy {
  int spin_rounds = 4;  // failed full rounds before parking (oneTBB spins a little too)

  // The k-th victim (k = 0 .. workers-2) for `self`, given a random start.
  static int victim(int self, int workers, std::uint64_t start, int k) {
    int v = static_cast<int>((start + static_cast<std::uint64_t>(k)) %
                             static_cast<std::uint64_t>(workers - 1));
    return v >= self ? v + 1 : v;
  }
};

// A worker's counters (summed over workers for RunResult::extra).
struct StealCounts {
  std::int64_t local_pops = 0, injection_pops = 0, steals = 0;
  std::int64_t failed_steals = 0;  // a victim found empty
  std::int64_t spins = 0;          // failed rounds followed by a spin pause
  std::int64_t parks = 0;          // waits until a submit

  void add(const StealCounts& o) {
    local_pops += o.local_pops;
    injection_pops += o.injection_pops;
    steals += o.steals;
    failed_steals += o.failed_steals;
    spins += o.spins;
    parks += o.parks;
  }
  void report(std::map<std::string, double>& extra) const {
    extra["steals"] = static_cast<double>(steals);
    extra["failed_steals"] = static_cast<double>(failed_steals);
    extra["parks"] = static_cast<double>(parks);
    extra["local_pops"] = static_cast<double>(local_pops);
    extra["injection_pops"] = static_cast<double>(injection_pops);
    extra["spin_rounds"] = static_cast<double>(spins);
  }
};

// One round of the chain for worker `self` of `workers`. `Queues` is the
// twin's: pop_local(self) (owner end), pop_injection() (oldest),
// steal(victim) (far end), each returning std::optional<std::uint32_t>.
// `next_random` is called once per round that reaches the steal step (the
// worker's own seeded stream, so both twins try the same victims).
template <class Queues, class NextRandom>
std::optional<std::uint32_t> find_work(Queues& q, int self, int workers, bool all_victims,
                                       NextRandom&& next_random, StealCounts& c) {
  if (auto t = q.pop_local(self)) {
    ++c.local_pops;
    return t;
  }
  if (auto t = q.pop_injection()) {
    ++c.injection_pops;
    return t;
  }
  if (workers < 2) return std::nullopt;
  const std::uint64_t start = next_random();
  const int tries = all_victims ? workers - 1 : 1;
  for (int k = 0; k < tries; ++k) {
    if (auto t = q.steal(StealPolicy::victim(self, workers, start, k))) {
      ++c.steals;
      return t;
    }
    ++c.failed_steals;
  }
  return std::nullopt;
}

// The spin-then-park decision after each round: spin while fewer than
// `spin_rounds` rounds in a row failed, then park (and start counting
// again). A round that finds work resets the count.
class SpinThenPark {
 public:
  enum class Next : std::uint8_t { spin, park };
  explicit SpinThenPark(int spin_rounds) : rounds_(spin_rounds < 1 ? 1 : spin_rounds) {}

  void found() { failed_ = 0; }
  // Failed rounds since the last task found (or the last park).
  int failed() const { return failed_; }
  Next missed() {
    if (++failed_ < rounds_) return Next::spin;
    failed_ = 0;
    return Next::park;
  }

 private:
  int rounds_;
  int failed_ = 0;
};

}  // namespace poolsim
