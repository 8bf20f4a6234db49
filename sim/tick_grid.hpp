// tick_grid.hpp: the scheduler ticks' instants, offset + k x tick (k any
// integer), for the kernel model and the mechanisms that act at ticks
// (sim/bandwidth.cpp, sim/group_share.cpp). The offset is the tick's phase
// against the run's start (KernelOptions::tick_phase): on a machine a run
// starts at an arbitrary point between two ticks, and every CPU's tick
// falls at the same instants (tick_sched timers are aligned to jiffies
// unless skew_tick is set).
#pragma once

#include <algorithm>

#include "models/units.hpp"

namespace poolsim::sim {

// A grid's phase against the run's start, a fraction in [0, 1) of its
// `span` (the tick, or a quota's period), as an offset in [0, span).
inline Duration phase_offset(double phase, Duration span) {
  const double x = std::clamp(phase, 0.0, 1.0) * static_cast<double>(span.count());
  return std::min(span - Duration{1}, Duration{static_cast<std::int64_t>(x)});
}

// The first tick at or after `t` (tick > 0).
inline Duration tick_grid_ceil(Duration t, Duration tick, Duration offset) {
  const std::int64_t d = (t - offset).count(), q = tick.count();
  const std::int64_t k = d > 0 ? (d + q - 1) / q : -((-d) / q);
  return offset + Duration{k * q};
}

// The last tick at or before `t` (tick > 0).
inline Duration tick_grid_floor(Duration t, Duration tick, Duration offset) {
  const std::int64_t d = (t - offset).count(), q = tick.count();
  const std::int64_t k = d >= 0 ? d / q : -((-d + q - 1) / q);
  return offset + Duration{k * q};
}

}  // namespace poolsim::sim
