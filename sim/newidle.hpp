// newidle.hpp: the proportional newidle balance's statistics (kernel/sched/
// fair.c, sched_balance_newidle with the feature NI_RANDOM, and
// update_newidle_stats; Linux 6.18.5 and 6.19 on). One per CPU's domain.
//
// A CPU going idle balances only if a 1024-sided die shows at most
// 1 + newidle_ratio, the domain's recent successes per 1024 calls. A skipped
// call counts as a failure; a balance that pulled a thread counts
// 1024 / (1 + ratio) successes (the inverse of the chance it ran, in
// integers), so the ratio follows the chance a balance would pull, whether
// or not it ran (below it where that chance is high: the weight rounds down
// to 1 once the ratio reaches 682; tests/sim/test_kernel.cpp, kernel.newidle).
// Calls and successes are halved when calls reach 1024, and the ratio is the
// successes then. sd_init starts them at 50%.
#pragma once

#include <cstdint>

#include "models/rng.hpp"

namespace poolsim::sim {

struct NewidleStats {
  std::uint32_t call = 512, success = 256, ratio = 512;

  // Rolls the die: true if the balance runs; `weight` is then what a pull
  // counts. A skipped call is recorded here.
  bool roll(Rng& rng, std::uint32_t& weight) {
    weight = 1 + ratio;
    if (rng.below(1024) > weight) {
      record(0);
      return false;
    }
    weight = (1024 + weight / 2) / weight;
    return true;
  }

  void record(std::uint32_t successes) {
    ++call;
    success += successes;
    if (call >= 1024) {
      ratio = success;
      call /= 2;
      success /= 2;
    }
  }
};

}  // namespace poolsim::sim
