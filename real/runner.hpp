// runner.hpp: `poolsim run`: execute a scenario's workload on this machine.
//
// Every repetition runs in a forked child process (forked before any thread
// exists in the parent) with a watchdog at run.timeout, under the scenario's
// limits: the cpuset through sched_setaffinity in the child, the CPU quota
// through a child cgroup (real/cgroup.hpp) that the parent creates, the child
// joins before the workload starts, and the parent removes after reading its
// cpu.stat. The child ships its RunResult back over a pipe (real/result_codec).
// Each measured repetition carries a machine-speed check (real/speed_check):
// one run while the CPU was not at its calibrated speed is repeated, and
// marked disturbed when repeating does not help.
// Details and the measurement's own overhead: docs/real-backends.md.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "models/result.hpp"
#include "models/scenario.hpp"
#include "models/workload.hpp"
#include "real/backend.hpp"

namespace poolsim::real {

struct RealOptions {
  bool trace = false;
  // Called before each repetition: its number and the count of its kind
  // (warmup 1/1, then repetition 1/reps ... reps/reps).
  std::function<void(int rep, int total, bool warmup)> progress;
  // Called with a line for the user (the machine-speed check's waits and
  // repeats; real/speed_check.hpp).
  std::function<void(const std::string&)> note;
  // Period of the sampler that records threads_series and runnable_series
  // (a thread outside the counts); 0 disables the series. 10 ms: at 1 ms
  // the SCHED_IDLE sampler still took a worker's CPU 15-20 times a second
  // (picked at a tick with its positive lag), involuntary switches of the
  // workload's threads that the measured program would not have (the
  // quickstart: 221-227 at 1 ms, 211-216 at 10 ms, 205-211 without it, in
  // three alternating rounds).
  Duration sample_period = std::chrono::milliseconds(10);
  // Whether that sampler samples. run_scenario's measured repetitions do
  // not: their sampler thread is made (the child's first extra thread, so
  // in the baseline) and parks until the end, and the series come from the
  // traced repetition (`trace`), which the HTML report and --trace-dir ask
  // for.
  bool sample_series = true;
  // Per-task CPU time (TaskRecord::cpu) from CLOCK_THREAD_CPUTIME_ID: two
  // system calls per task (about 1.5 us of CPU on this machine, measured by
  // bench/real_recording.cpp), so off unless asked for. The run's cpu_time
  // (getrusage) does not need it.
  bool task_cpu = false;
};

// Runs run.warmup + run.reps repetitions and returns the measured ones
// (warmups dropped), each with mode "measured". With opt.trace, the measured
// repetitions record no trace (its spans would count in memory_peak and cost
// time): one more repetition after them runs traced, unmeasured, and its
// trace and series are the first result's `trace`, `threads_series` and
// `runnable_series` (without opt.trace the series are empty). Throws MachineRefused when
// the machine refuses (thread limit, cgroup permission, timeout) and
// std::runtime_error when a child crashes.
std::vector<RunResult> run_scenario(const Scenario& s, const Workload& w,
                                    const RealOptions& opt = {});

// One repetition in the calling process, without fork, watchdog or cgroup
// (the cpuset is not applied either). For the child, benchmarks and tests.
// `fail_fd` >= 0: a refusal is written there and the process _exits;
// otherwise a refusal inside the run prints its message and aborts.
RunResult run_repetition(const Scenario& s, const Workload& w, const RealOptions& opt,
                         int fail_fd = -1);

// In a forked child: writes once to every present page of the private
// writable mappings, so that the pages it shares with its parent
// copy-on-write become its own before the run (the harness's fork is no
// part of the workload's cost). What the parent never touched stays
// untouched. Called by the runner's child first thing after fork.
void break_copy_on_write();

// In a forked child: maps every page of the private read-only file mappings
// (the program's and its libraries' code and constants) into its page
// tables (madvise MADV_POPULATE_READ). fork() does not copy those entries,
// so without this each first execution of a code page after the fork
// faults, about 20 us on this project's PVM guest (perf, 2026-12-04: three
// such faults before the first hand-over of a run, one per page of the
// carriers' first code), where the program a user runs faulted its code in
// long before. Best effort. Returns the bytes populated.
std::size_t map_file_pages();

// The concurrency a scenario needs, checked against run.max_threads before
// any repetition starts: the backend's thread bound plus the submitter, or
// for thread-per-task an estimate of threads alive at once (closed: clients;
// open: arrival rate x mean task length, Little's law).
int estimated_peak_threads(const Scenario& s, const Workload& w);

}  // namespace poolsim::real
