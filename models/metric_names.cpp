// metric_names.cpp: the table of metric_names.hpp. The meanings follow the
// definitions in metrics.hpp (compute_metrics is the only computation).
#include "models/metric_names.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <vector>

#include "models/scenario_loader.hpp"

namespace poolsim {
namespace {

constexpr std::array<MetricInfo, kMetricCount> kTable = {{
    {Metric::makespan,
     "makespan",
     "seconds",
     "time from the start to the last completion",
     {"duration"}},
    {Metric::throughput,
     "throughput",
     "per second",
     "completed requests / makespan (the served rate)",
     {"served", "rps"}},
    {Metric::first_completion,
     "first_completion",
     "seconds",
     "time from the first intended arrival to the first completion",
     {"first"}},
    {Metric::latency_mean,
     "latency_mean",
     "seconds",
     "mean response time (completion - intended arrival) of completed requests",
     {"mean", "latency"}},
    {Metric::latency_p50,
     "latency_p50",
     "seconds",
     "median response time (nearest rank)",
     {"p50", "median"}},
    {Metric::latency_p90,
     "latency_p90",
     "seconds",
     "90th percentile of the response time",
     {"p90"}},
    {Metric::latency_p99,
     "latency_p99",
     "seconds",
     "99th percentile of the response time",
     {"p99"}},
    {Metric::latency_max, "latency_max", "seconds", "longest response time", {"max", "p100"}},
    {Metric::queue_wait_mean,
     "queue_wait_mean",
     "seconds",
     "mean time from the intended arrival to the first instruction (waiting for a thread)",
     {"wait", "queue_wait"}},
    {Metric::switches_voluntary,
     "switches_voluntary",
     "count",
     "context switches where a thread blocked or yielded",
     {"voluntary"}},
    {Metric::switches_involuntary,
     "switches_involuntary",
     "count",
     "context switches where a thread was preempted",
     {"involuntary", "preemptions"}},
    {Metric::threads_peak,
     "threads_peak",
     "count",
     "OS threads alive at once, submitter included",
     {"threads"}},
    {Metric::memory_peak,
     "memory_peak",
     "bytes",
     "thread stacks touched + runtime memory at the peak",
     {"memory"}},
    {Metric::cpu_utilization,
     "cpu_utilization",
     "fraction",
     "CPU time / (makespan x CPUs the scenario may use)",
     {"cpu", "utilization"}},
    {Metric::throttled_periods,
     "throttled_periods",
     "count",
     "CFS quota periods in which the scenario was throttled",
     {"throttled_count"}},
    {Metric::throttled_time,
     "throttled_time",
     "seconds",
     "time spent throttled by the CPU quota",
     {"throttled", "throttling"}},
    {Metric::completed, "completed", "count", "requests completed", {}},
    {Metric::rejected,
     "rejected",
     "count",
     "requests refused by the backend (bounded queue)",
     {"rejections"}},
    {Metric::submit_lag_mean,
     "submit_lag_mean",
     "seconds",
     "mean delay of the submitter: handover to the runtime - intended arrival",
     {"submit_lag", "lag"}},
    {Metric::submit_lag_p99,
     "submit_lag_p99",
     "seconds",
     "99th percentile of the submitter's delay",
     {"lag_p99"}},
    {Metric::burst_periods,
     "burst_periods",
     "count",
     "CFS periods in which the group ran on burst (quota saved from earlier periods)",
     {"bursts"}},
    {Metric::burst_time,
     "burst_time",
     "seconds",
     "CPU time run on burst beyond the quota",
     {"burst"}},
    {Metric::resource_wait_mean,
     "resource_wait_mean",
     "seconds",
     "mean wait for a permit of a bounded resource (`resources:`), per acquisition",
     {"resource_wait", "permit_wait"}},
}};

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

const std::array<MetricInfo, kMetricCount>& metric_table() { return kTable; }

const MetricInfo& metric_info(Metric m) { return kTable[static_cast<std::size_t>(m)]; }

std::optional<Metric> resolve_metric(std::string_view text) {
  const std::string t = lower(text);
  for (const auto& row : kTable) {
    if (row.name == t) return row.metric;
    for (auto a : row.aliases)
      if (!a.empty() && a == t) return row.metric;
  }
  return std::nullopt;
}

Metric parse_metric(std::string_view text, std::string_view flag) {
  if (const auto m = resolve_metric(text)) return *m;
  std::vector<std::string> names;
  for (const auto& row : kTable) {
    names.emplace_back(row.name);
    for (auto a : row.aliases)
      if (!a.empty()) names.emplace_back(a);
  }
  std::string msg = std::string(flag) + ": unknown metric '" + std::string(text) + "'";
  if (const auto near = did_you_mean(lower(text), names)) {
    const auto m = resolve_metric(*near);
    msg += "; did you mean '" + std::string(metric_info(*m).name) + "'?";
  }
  msg += " (`poolsim metrics` lists every name and alias)";
  throw std::invalid_argument(msg);
}

}  // namespace poolsim
