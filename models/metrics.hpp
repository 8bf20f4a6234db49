// metrics.hpp: the one function that turns a run into the named metrics.
//
// Simulated and measured runs both go through compute_metrics(), so the
// validator compares the same arithmetic on both sides. Values are SI base
// units (seconds, bytes, counts, per second). Definitions:
//   makespan          last completion (origin 0)
//   throughput        completed / makespan
//   first_completion  earliest completion, from the earliest intended arrival
//   latency_*         end - intended arrival of completed tasks (the
//                     generated arrival, the end of a client's think time, a
//                     graph node's release: TaskRecord::intended), so a late
//                     submitter cannot hide queueing (coordinated omission);
//                     p50/p90/p99 by the nearest-rank method (exact, or from
//                     a log-bucketed histogram within a stated relative error
//                     when a long run streamed its records:
//                     Metrics::quantiles_exact); max
//   queue_wait_mean   mean of start - intended arrival of completed tasks
//   submit_lag_*      submit - intended arrival of every task handed over
//                     (completed or rejected): the submitter's own delay;
//                     mean and p99 (exact or histogram, like latency)
//   cpu_utilization   cpu_time / (makespan * cpus_available)
//   counters          copied from RunCounters
//   completed/rejected  counts of records by outcome
//   resource_wait_mean  mean wait for a permit of a bounded resource over
//                     every acquisition (0 for one granted at once), from
//                     the counters both halves report (models/resource_pool.hpp);
//                     a scenario without resources has none
//                     (Metrics::applies: its outputs leave the row out)
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/result.hpp"

namespace poolsim {

enum class Metric : std::size_t {
  makespan,
  throughput,
  first_completion,
  latency_mean,
  latency_p50,
  latency_p90,
  latency_p99,
  latency_max,
  queue_wait_mean,
  switches_voluntary,
  switches_involuntary,
  threads_peak,
  memory_peak,
  cpu_utilization,
  throttled_periods,
  throttled_time,
  completed,
  rejected,
  submit_lag_mean,
  submit_lag_p99,
  burst_periods,
  burst_time,
  resource_wait_mean,
  count_
};
inline constexpr std::size_t kMetricCount = static_cast<std::size_t>(Metric::count_);
inline constexpr std::array<std::string_view, kMetricCount> kMetricNames = {
    "makespan",        "throughput",         "first_completion",     "latency_mean",
    "latency_p50",     "latency_p90",        "latency_p99",          "latency_max",
    "queue_wait_mean", "switches_voluntary", "switches_involuntary", "threads_peak",
    "memory_peak",     "cpu_utilization",    "throttled_periods",    "throttled_time",
    "completed",       "rejected",           "submit_lag_mean",      "submit_lag_p99",
    "burst_periods",   "burst_time",         "resource_wait_mean"};
std::string_view to_string(Metric m);
std::optional<Metric> metric_from(std::string_view name);
// "s", "/s", "B", "" (counts), "%"-like fraction: used by tables.
std::string_view unit_of(Metric m);

struct Metrics {
  std::array<double, kMetricCount> values{};
  // latency_p50/p90/p99: exact, or within quantile_relative_error of exact.
  bool quantiles_exact = true;
  double quantile_relative_error = 0;
  // The run used bounded resources (Scenario::resources): resource_wait_mean
  // means something. Without them the row is left out of a run's outputs.
  bool resources = false;
  bool applies(Metric m) const { return m != Metric::resource_wait_mean || resources; }
  double operator[](Metric m) const { return values[static_cast<std::size_t>(m)]; }
  double& operator[](Metric m) { return values[static_cast<std::size_t>(m)]; }
};

// Kept records are reduced through an exact RecordSummary, a streamed run's
// summary is read as it is: both go through the same arithmetic.
Metrics compute_metrics(const RunResult& r);

// Statistics of one metric over repetitions (sd is the sample standard
// deviation, 0 for n = 1).
struct MetricStats {
  double mean = 0, sd = 0, min = 0, max = 0;
  int n = 0;
};
std::array<MetricStats, kMetricCount> summarize(const std::vector<Metrics>& reps);

// Latency quantile helper shared with reports: sorted latencies (seconds) of
// the completed tasks (of a streamed run: while its summary is exact).
std::vector<double> sorted_latencies(const RunResult& r);
// Nearest-rank quantile of a sorted sample, q in [0, 1].
double nearest_rank(const std::vector<double>& sorted, double q);

}  // namespace poolsim
