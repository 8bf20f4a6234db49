// result.hpp: what one run (simulated or measured) produced.
//
// The simulator and the real runner fill the same RunResult: one TaskRecord
// per task of the workload (indexed by task id), run-level counters as the
// kernel counts them, and optional time series and trace for reports. All
// times are relative to the run's origin: the instant the first task could be
// submitted (t = 0 in the simulator; the submitter's start on hardware).
// metrics.hpp reduces a RunResult to the spec's metric names; nothing else
// computes a metric.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "models/units.hpp"

namespace poolsim {

enum class TaskOutcome : std::uint8_t {
  not_run,    // never submitted (a closed client stopped, or the run was cut short)
  completed,
  rejected,   // refused by the runtime's rejection policy
};

struct TaskRecord {
  Duration submit{};   // handed to the runtime
  Duration start{};    // first instruction of its first phase
  Duration end{};      // its last phase finished
  Duration cpu{};      // CPU time it consumed (0 where not measured)
  std::uint32_t worker = 0;  // OS thread (or carrier/loop) that started it
  TaskOutcome outcome = TaskOutcome::not_run;
};

// Counters for the whole run, as the kernel counts them (getrusage, cpu.stat).
struct RunCounters {
  std::int64_t switches_voluntary = 0;    // the thread blocked or yielded
  std::int64_t switches_involuntary = 0;  // preempted (slice end, wake-up)
  std::int64_t threads_peak = 0;          // OS threads alive at once, submitter included
  Bytes memory_peak = 0;                  // stacks touched + runtime memory
  Duration cpu_time{};                    // CPU time of the scenario's threads
  std::int64_t throttled_periods = 0;     // cpu.stat nr_throttled
  Duration throttled_time{};              // cpu.stat throttled_time
  std::int64_t burst_periods = 0;         // cpu.stat nr_bursts
  Duration burst_time{};                  // cpu.stat burst_time (v2 burst_usec)
};

// A step function sampled where it changes: value from t until the next sample.
struct Sample {
  Duration t{};
  std::int32_t value = 0;
};

// The schedule, for Chrome trace-event JSON (Perfetto): tracks are CPUs or OS
// threads; spans say what a track did from begin to end.
enum class SpanKind : std::uint8_t { running, runnable, blocked, throttled, task };
std::string_view to_string(SpanKind k);

struct TraceTrack {
  std::string name;   // "cpu 0", "worker 3", "submitter"
  bool is_cpu = false;
};

struct TraceSpan {
  std::uint32_t track = 0;
  SpanKind kind = SpanKind::running;
  std::uint32_t task = kNoTask;  // task id for running/task spans
  std::uint32_t thread = kNoTask;  // on CPU tracks: the thread that ran
  Duration begin{}, end{};
  static constexpr std::uint32_t kNoTask = 0xffffffffu;
};

struct Trace {
  std::vector<TraceTrack> tracks;
  std::vector<TraceSpan> spans;
  bool empty() const { return spans.empty(); }
};

// Chrome trace-event JSON ("X" complete events, microsecond timestamps with
// nanosecond decimals, one pid for CPUs and one for threads).
void write_chrome_trace(std::ostream& out, const Trace& trace, const std::string& title);

struct RunResult {
  std::string mode = "simulated";  // "simulated" | "measured"
  double cpus_available = 1;       // capacity the scenario could use (for cpu_utilization)
  std::vector<TaskRecord> records; // one per task id
  RunCounters counters;
  std::map<std::string, double> extra;  // runtime-specific counters: steals, mounts, pinned_time...
  std::vector<Sample> threads_series;   // live OS threads over time
  std::vector<Sample> runnable_series;  // runnable + running threads over time
  Trace trace;                          // filled only when a trace was asked for
};

}  // namespace poolsim
