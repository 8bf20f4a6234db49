// os_noise.hpp: how much of a busy CPU this machine takes away from the
// thread running on it: the fixed-work-quantum (FWQ) benchmark.
//
// Why: on this project's virtual machines even a lone CPU-bound thread is
// preempted hundreds of times a second (kernel threads such as kdamond's 5 ms
// sampling, kworkers, RCU callbacks, timer and network interrupts). Those
// interruptions are involuntary switches the workload did not cause, and they
// lengthen tails and first completions. HPC simulators model them the same
// way: measure the noise with fixed work quanta, inject it in the simulation
// (Petrini, Kerbyson and Pakin, "The Case of the Missing Supercomputer
// Performance", SC 2003; LogGOPSim's noise injection).
//
// Mechanism: one spinner per CPU, each pinned to its CPU and all running at
// once (the machine as a busy workload sees it), repeats a quantum of fixed
// work (~20 us of the calibrated loop) for the measurement window and
// records each quantum's wall time (CLOCK_MONOTONIC). The fastest quantum of
// a spinner is the undisturbed one (the 10th percentile of each block of
// ~1,000 consecutive quanta: the vCPU's speed drifts over seconds here); a
// quantum longer than it by more than max(2 us, 10%) was interrupted, and
// its excess is the time taken away.
// Per CPU-second of busy time that gives the interruption rate; the
// excesses give the stolen time per interruption (median and p99, the
// profile's lognormal); the spinners' own involuntary switches
// (getrusage RUSAGE_THREAD) over the interruptions give the share that were
// switches to another task rather than interrupts.
// Left out: two interruptions inside one quantum count as one (at the rates
// seen here, a few hundred a second against 50,000 quanta, rare); noise on
// an idle CPU is not measured (it delays nothing the model charges).
#pragma once

#include <cstdint>
#include <vector>

#include "models/units.hpp"

namespace poolsim::real {

struct OsNoise {
  Duration window{};             // measured busy time per CPU
  int cpus = 0;                  // spinners (one per CPU this process may use)
  std::int64_t quanta = 0;       // quanta timed, all CPUs
  Duration quantum{};            // the undisturbed quantum (median over CPUs of each one's p10)
  std::int64_t events = 0;       // interrupted quanta, all CPUs
  std::int64_t switches = 0;     // involuntary switches of the spinners, all CPUs
  Duration interval{};           // mean busy time between interruptions of one CPU (0: none seen)
  Duration median{};             // stolen time per interruption: median
  Duration p99{};                //   and 99th percentile
  Duration mean{};               // every quantum's excess over its run's p10, per interruption
  double preempt = 0;            // share of interruptions that were switches to another task
  double charged = 0;            // share of the stolen time the spinners' CPU clocks counted
  std::vector<Duration> stolen;  // every interruption's stolen time (for reports and tests)
};

// Runs the FWQ benchmark for `window` on every CPU this process may use, or
// on the first `spinners` of them (0: all), the others left idle.
OsNoise measure_os_noise(Duration window, int spinners = 0);

// One spinner's record: every quantum's wall time in order, its involuntary
// switches, and the window by the wall and by its thread CPU clock.
struct FwqSeries {
  std::vector<std::int64_t> quanta_ns;
  std::int64_t switches = 0;
  std::int64_t wall_ns = 0, cpu_ns = 0;
};
// The analysis measure_os_noise applies to its spinners' records. The
// undisturbed quantum is each block of ~1,000 quanta's own 10th percentile,
// so that a vCPU that changes speed over the window is not read as noise.
OsNoise summarize_fwq(const std::vector<FwqSeries>& spinners, Duration window);

}  // namespace poolsim::real
