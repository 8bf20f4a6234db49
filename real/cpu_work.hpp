// cpu_work.hpp: the calibrated busy loop that executes a `cpu` phase.
//
// Mechanism: a `cpu` phase is an amount of WORK, not a deadline. burn(d)
// runs round(d * units_per_ns) iterations of a dependent integer chain (one
// xorshift step per unit: no memory traffic, no call the compiler can fold),
// so when the thread is preempted or its cgroup is throttled the phase takes
// longer in wall time, exactly as real code would.
//
// Calibration: units_per_ns() measures the loop once per process (about
// 60 ms): seven trials of kTrialUnits iterations (~8 ms, two ticks, each),
// timed on the thread's own CPU clock (CLOCK_THREAD_CPUTIME_ID, so a
// preemption during calibration does not skew it), keeping the fastest:
// every trial spans ticks, so the rate includes what ticks cost a long
// phase, and a trial slowed by other work is discarded (seven more trials
// when they disagree by over 15%; see cpu_work.cpp for the history). The result is cached; the
// runner calibrates in the parent before forking so every repetition uses the same rate, and the
// lead's `poolsim calibrate` may call calibrate_cpu_work() to record it. Speed probe: while a
// measured repetition runs, burn() times one phase in kProbeEvery (per thread) of those at least
// kProbeMinUnits long on the thread's CPU clock and adds it to process-wide totals, so the loop's
// speed DURING the run is known at the cost of two clock reads every few phases
// (real/speed_check.hpp turns it into the repetition's speed check).
// Left out: frequency scaling and SMT sharing are not corrected for; they are
// part of what the machine does to real code.
#pragma once

#include <cstdint>

#include "models/units.hpp"

namespace poolsim::real {

struct CpuWorkCalibration {
  double units_per_ns = 0;  // loop iterations per nanosecond of thread CPU time
  Duration measured{};      // total CPU time the calibration spent
  int trials = 0;
};

// Measures the loop now (does not touch the cache).
CpuWorkCalibration calibrate_cpu_work();
// The cached rate, calibrated on first use (thread-safe).
double units_per_ns();
// Overrides the cached rate (tests, or a rate read from a machine profile).
void set_units_per_ns(double rate);

// Runs `units` iterations of the work loop; returns the chain value so the
// loop cannot be removed.
std::uint64_t burn_units(std::uint64_t units);
// Runs the amount of work that takes `work` of CPU time on this machine.
void burn(Duration work);

// Loop iterations and the thread CPU time they took, summed over the phases
// the speed probe timed.
struct WorkSample {
  std::uint64_t units = 0;
  std::int64_t cpu_ns = 0;
  std::uint64_t phases = 0;
};
// Starts timing sampled phases (clears the totals); stop returns them.
void start_speed_probe();
WorkSample stop_speed_probe();
// The calling thread's CPU clock in nanoseconds (CLOCK_THREAD_CPUTIME_ID).
std::int64_t thread_cpu_clock_ns();

}  // namespace poolsim::real
