// cpu_work.hpp: the calibrated busy loop that executes a `cpu` phase.
//
// Mechanism: a `cpu` phase is an amount of WORK, not a deadline. burn(d)
// runs round(d * units_per_ns) iterations of a dependent integer chain (one
// xorshift step per unit: no memory traffic, no call the compiler can fold),
// so when the thread is preempted or its cgroup is throttled the phase takes
// longer in wall time, exactly as real code would.
//
// Calibration: units_per_ns() measures the loop once per process (about
// 60 ms): the 90th percentile speed of 1001 trials of ~55 us each on the monotonic
// clock. Nine trials in ten run between two of the machine's interruptions, so
// the rate is the loop's undisturbed speed: a `cpu` phase of d is d of work
// the machine's OS noise then lengthens, as the simulator adds the profile's
// noise on top of the work (cpu_work.cpp has the history). The result is cached; the
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
// The loop's undisturbed speed now, in iterations per ns: the 90th percentile speed of
// `trials` timed ~55 us trials (calibrate_cpu_work uses 1001, the speed
// canary canary_rate() 301, about 17 ms).
double undisturbed_rate(int trials);
double canary_rate();
// The cached rate, calibrated on first use (thread-safe).
double units_per_ns();
// Overrides the cached rate and makes it the reference (tests, or a rate read
// from a machine profile).
void set_units_per_ns(double rate);
// The reference rate (the profile's, 1x speed), which speeds are relative to.
double reference_units_per_ns();
// Sizes `cpu` phases at `speed` times the reference rate: the runner calls it
// with the speed the canary measured right before a repetition, so that a
// phase of d is d of undisturbed work at the machine's speed of that minute
// (real/speed_check.hpp).
void size_phases_at(double speed);

// Runs `units` iterations of the work loop; returns the chain value so the
// loop cannot be removed.
std::uint64_t burn_units(std::uint64_t units);
// Runs the amount of work that takes `work` of CPU time on this machine.
void burn(Duration work);
// Runs the work loop once through burn(), about one calibration trial
// (2^15 iterations, ~55 us here), so that the first `cpu` phase of a forked
// repetition does not pay the first run of the loop in its new process
// (real/runner.cpp, run_repetition).
void warm_work_loop();

// Loop iterations and the thread CPU time they took, summed over the phases
// the speed probe timed, and the median over those phases of the loop's
// speed in its fastest block (units per ns; 0 with no phase timed).
struct WorkSample {
  std::uint64_t units = 0;
  std::int64_t cpu_ns = 0;
  std::uint64_t phases = 0;
  double block_rate = 0;
};
// Writes the probe's storage (its totals and the 32 KiB of per-phase
// speeds), so that its pages are resident before a repetition's memory
// baseline: left to the probe, each 512th sampled phase faulted in a page
// of the child's memory that memory_peak counted as the workload's
// (real/runner.cpp, run_repetition).
void reserve_speed_probe();
// Starts timing sampled phases (clears the totals); stop returns them.
void start_speed_probe();
WorkSample stop_speed_probe();
// The calling thread's CPU clock in nanoseconds (CLOCK_THREAD_CPUTIME_ID).
std::int64_t thread_cpu_clock_ns();

}  // namespace poolsim::real
