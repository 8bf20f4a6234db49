// result.hpp: what one run (simulated or measured) produced.
//
// The simulator and the real runner fill the same RunResult: one TaskRecord
// per task of the workload (indexed by task id), run-level counters as the
// kernel counts them, and optional time series and trace for reports. All
// times are relative to the run's origin: the instant the first task could be
// submitted (t = 0 in the simulator; the submitter's start on hardware).
// metrics.hpp reduces a RunResult to the metric names (metric_names.hpp); nothing else
// computes a metric. A long simulation may stream its records into a
// RecordSummary instead of keeping them (memory flat in the task count).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/histogram.hpp"
#include "models/large_buffer.hpp"
#include "models/units.hpp"

namespace poolsim {

enum class TaskOutcome : std::uint8_t {
  not_run,  // never submitted (a closed client stopped, or the run was cut short)
  completed,
  rejected,  // refused by the runtime's rejection policy
};

std::string_view to_string(TaskOutcome o);  // "not_run", "completed", "rejected"

// Integer nanoseconds as microseconds with three decimals ("12.345"), never
// through floating point: the same time gives the same bytes (traces,
// --records).
std::string exact_us(Duration d);

struct TaskRecord {
  // When the task was meant to arrive: its generated arrival (open
  // workloads), the end of its client's think time (closed), its release
  // (graph nodes; roots at 0). Latency is measured from here, so a late
  // submitter cannot hide the queueing it causes (coordinated omission).
  Duration intended{};
  Duration submit{};         // handed to the runtime (intended + the submitter's own lag)
  Duration start{};          // first instruction of its first phase
  Duration end{};            // its last phase finished
  Duration cpu{};            // CPU time it consumed (0 where not measured)
  std::uint32_t worker = 0;  // OS thread (or carrier/loop) that started it
  TaskOutcome outcome = TaskOutcome::not_run;
  // The CPU the submitting thread ran on when it handed the task over (-1:
  // not submitted). A task started on another CPU pays machine.task_remote.
  std::int16_t submit_cpu = -1;
};
// Tens of millions of records are kept in memory (docs/performance.md).
static_assert(sizeof(TaskRecord) <= 48, "TaskRecord grew past 48 bytes");

// How latency quantiles are computed (RecordSummary): exact keeps every
// latency and sorts them; histogram streams them into a LogHistogram (a
// stated relative error, constant memory); automatic is exact until
// `exact_limit` tasks completed, then histogram.
struct QuantilePolicy {
  enum class Choice : std::uint8_t { automatic, exact, histogram };
  Choice choice = Choice::automatic;
  std::size_t exact_limit = 1'000'000;
  double relative_error = LogHistogram::kDefaultRelativeError;
};

// The records of a run reduced as they come, for runs too long to keep one
// TaskRecord per task: exact counts, sums, first and last completion and
// latency maximum; latency quantiles exact or from a histogram
// (QuantilePolicy). compute_metrics() reads records through one of these, so
// the arithmetic is the same whether the records were kept or streamed.
class RecordSummary {
 public:
  explicit RecordSummary(QuantilePolicy p = {});
  void add(const TaskRecord& t);
  // Room for n more records' latencies and lags (exact mode; a hint only).
  void reserve(std::size_t n);

  std::int64_t completed = 0, rejected = 0;
  Duration first_end = Duration::max(), last_end{0};
  Duration first_intended = Duration::max();  // earliest intended arrival handed over
  long double wait_sum_ns = 0;                // start - submit of completed tasks (exact: integers)

  bool exact() const { return !histogram_on_; }
  double relative_error() const { return exact() ? 0.0 : hist_.relative_error(); }
  // Latencies (end - intended arrival of completed tasks) in seconds: mean
  // (of the exact integer sum, in either mode), maximum and
  // nearest-rank quantiles at `qs`, in that order of the result.
  struct Latency {
    double mean = 0, max = 0;
    std::vector<double> quantiles;
  };
  Latency latency(const std::vector<double>& qs) const;
  // Exact latencies in seconds, sorted (empty once the summary is a histogram).
  std::vector<double> sorted_latencies() const;
  // Submit lags (submit - intended of every task handed over), in seconds.
  struct Lag {
    double mean = 0, p99 = 0;
  };
  Lag submit_lag() const;

 private:
  // Megabytes in a million-task run: huge pages where the kernel gives them.
  using NsBuffer = std::vector<std::int64_t, LargeBufferAllocator<std::int64_t>>;
  void to_histogram();
  void add_lag(std::int64_t lag);
  // Sorts exact_ns_ in place, once (until the next add).
  void sort_exact() const;
  QuantilePolicy policy_;
  bool histogram_on_ = false;
  // While exact. The readers (latency, sorted_latencies, submit_lag) reorder
  // these in place instead of copying them, which changes no result: a
  // summary is a multiset of values. Hence mutable, and reading one summary
  // from two threads at once is not safe.
  mutable NsBuffer exact_ns_;
  mutable bool exact_sorted_ = true;  // exact_ns_ is in ascending order
  LogHistogram hist_;
  long double lat_sum_ns_ = 0;  // both modes: exact integer sum (below 2^64 ns)
  std::int64_t lat_max_ns_ = 0;
  // While exact: the lags that are not 0 (see exact_ns_), and how many were
  // 0 (a submitter on time hands every task over with none).
  mutable NsBuffer lag_ns_;
  std::int64_t lag_zeros_ = 0;
  LogHistogram lag_hist_;
  long double lag_sum_ns_ = 0;
  std::int64_t lag_n_ = 0;
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
  std::string name;  // "cpu 0", "worker 3", "submitter"
  bool is_cpu = false;
};

struct TraceSpan {
  std::uint32_t track = 0;
  SpanKind kind = SpanKind::running;
  std::uint32_t task = kNoTask;    // task id for running/task spans
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

// The calibrated work loop's speed around and during one measured
// repetition, each as a fraction of the rate its `cpu` phases were sized
// with (1 = as calibrated; real/speed_check.hpp measures it). A repetition
// outside the band is run again; if it stays outside it is `disturbed` and no
// verdict is drawn from it.
struct SpeedCheck {
  bool measured = false;        // false: simulated, or a measurement without the check
  double before = 0;            // canary loop in the parent, right before the repetition
  double during = 0;            // sampled `cpu` phases: the loop's speed in their fastest blocks
  bool during_sampled = false;  // false: no phase was long enough to be timed
  double phase_cpu = 0;         // the same phases' work per thread CPU time (OS noise included)
  double after = 0;             // canary loop right after it
  // The kernel's page-table paths (machine field kernel_canary) around it, as
  // the profile's round time over the round time now (1 = as calibrated, 0.5
  // = twice as slow); checked only when the profile has kernel_canary.
  bool kernel_checked = false;
  double kernel_before = 0;
  double kernel_after = 0;
  std::int32_t attempts = 0;  // runs it took (1 = first try within the band)
  bool disturbed = false;     // still outside the band after the last attempt
};

struct RunResult {
  std::string mode = "simulated";   // "simulated" | "measured"
  double cpus_available = 1;        // capacity the scenario could use (for cpu_utilization)
  std::vector<TaskRecord> records;  // one per task id (empty when streamed)
  // Streamed runs (the simulator without records, SimOptions::records):
  // the records reduced as tasks finished; compute_metrics() reads it.
  std::optional<RecordSummary> summary;
  RunCounters counters;
  std::map<std::string, double> extra;  // runtime-specific counters: steals, mounts, pinned_time...
  std::vector<Sample> threads_series;   // live OS threads over time
  std::vector<Sample> runnable_series;  // runnable + running threads over time
  Trace trace;                          // filled only when a trace was asked for
  SpeedCheck speed;                     // measured runs: the machine's speed (see above)
};

}  // namespace poolsim
