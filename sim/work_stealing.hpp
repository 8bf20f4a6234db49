// work_stealing.hpp: the work-stealing runtime's variants, shared by
// sim/work_stealing.cpp (our ForkJoinPool-style runtime, twin of
// real/work_stealing.cpp) and sim/tbb.cpp (the oneTBB arena model), so the
// two differ only in the parameters below, never in a second copy of the
// worker loop.
#pragma once

#include <memory>

#include "sim/runtime.hpp"

namespace poolsim::sim {

struct WorkStealingFlavor {
  int threads = 1;
  // Failed search rounds before a worker parks (models/steal_policy.hpp
  // spin_rounds for ours; stealing_loop_backoff's thresholds for oneTBB).
  int spin_rounds = 4;
  // true: a round tries every other worker once (StealPolicy::victim order);
  // false: one random victim per round (oneTBB arena::steal_task).
  bool all_victims_per_round = true;
  // true: workers are started in oneTBB's RML chain reaction (the first
  // submit starts two, each new worker starts up to two more); false: the
  // first submit starts all of them.
  bool chain_start = false;
  const char* role = "worker";
};

std::unique_ptr<Runtime> make_work_stealing_runtime(const SimContext& ctx,
                                                    const WorkStealingFlavor& flavor);

}  // namespace poolsim::sim
