// sis_util.hpp: SIS_UTIL's bound on a wake-up's search for an idle CPU
// (kernel/sched/fair.c, update_idle_cpu_scan and select_idle_cpu; Linux 6.0
// on, "sched/fair: Introduce SIS_UTIL to search idle CPU based on sum of
// util_avg"). Each periodic balance of the last-level cache's domain (not a
// newly idle CPU's) sums its CPUs' utilization and writes how many CPUs a
// wake-up may look at for an idle one (sd_llc_shared->nr_idle_scan); 0
// skips the search, and the woken thread stays on its target CPU.
#pragma once

#include <algorithm>
#include <cstdint>

namespace poolsim::sim {

// With x = sum_util / llc_weight (1024 = a busy CPU) and the domain's
// imbalance_pct 117 (sd_init), the CPUs to look at are
// llc_weight * (1024 - min(1024, x^2 * 117^2 / (10000 * 1024))) / 1024, in
// integers: none from x = 85% on a large LLC ("when sum_util hits 85% or
// above, the scan stops"); on 2 CPUs both while x < 28 (2.7%), one up to
// x = 619 (60.4%), none from 620.
inline int sis_util_scan(std::uint64_t sum_util, std::uint64_t llc_weight) {
  constexpr std::uint64_t kPct = 117;
  constexpr std::uint64_t kScale = 1024;  // SCHED_CAPACITY_SCALE
  if (llc_weight == 0) return 0;
  const std::uint64_t x = sum_util / llc_weight;  // equation [3]
  const std::uint64_t tmp = std::min<std::uint64_t>(x * x * kPct * kPct / (10000 * kScale), kScale);
  return static_cast<int>((kScale - tmp) * llc_weight / kScale);  // equations [4] and [2]
}

}  // namespace poolsim::sim
