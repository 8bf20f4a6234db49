#include "models/metrics.hpp"

#include <algorithm>
#include <cmath>

namespace poolsim {

std::string_view to_string(Metric m) { return kMetricNames[static_cast<std::size_t>(m)]; }

std::optional<Metric> metric_from(std::string_view name) {
  for (std::size_t i = 0; i < kMetricCount; ++i)
    if (kMetricNames[i] == name) return static_cast<Metric>(i);
  return std::nullopt;
}

std::string_view unit_of(Metric m) {
  switch (m) {
    case Metric::makespan: case Metric::first_completion: case Metric::latency_mean:
    case Metric::latency_p50: case Metric::latency_p90: case Metric::latency_p99:
    case Metric::latency_max: case Metric::queue_wait_mean: case Metric::throttled_time:
    case Metric::burst_time:
      return "s";
    case Metric::throughput: return "/s";
    case Metric::memory_peak: return "B";
    case Metric::cpu_utilization: return "fraction";
    default: return "";
  }
}

double nearest_rank(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  rank = std::clamp<std::size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

std::vector<double> sorted_latencies(const RunResult& r) {
  std::vector<double> lat;
  lat.reserve(r.records.size());
  for (const auto& t : r.records)
    if (t.outcome == TaskOutcome::completed) lat.push_back(to_seconds(t.end - t.submit));
  std::sort(lat.begin(), lat.end());
  return lat;
}

Metrics compute_metrics(const RunResult& r) {
  Metrics m;
  std::int64_t completed = 0, rejected = 0;
  Duration last{0}, first = Duration::max();
  long double wait_sum = 0;
  for (const auto& t : r.records) {
    if (t.outcome == TaskOutcome::rejected) ++rejected;
    if (t.outcome != TaskOutcome::completed) continue;
    ++completed;
    last = std::max(last, t.end);
    first = std::min(first, t.end);
    wait_sum += static_cast<long double>((t.start - t.submit).count());
  }
  const auto lat = sorted_latencies(r);
  long double lat_sum = 0;
  for (double x : lat) lat_sum += x;

  const double makespan = to_seconds(last);
  m[Metric::makespan] = makespan;
  m[Metric::throughput] = makespan > 0 ? static_cast<double>(completed) / makespan : 0;
  m[Metric::first_completion] = completed ? to_seconds(first) : 0;
  m[Metric::latency_mean] = completed ? static_cast<double>(lat_sum / completed) : 0;
  m[Metric::latency_p50] = nearest_rank(lat, 0.50);
  m[Metric::latency_p90] = nearest_rank(lat, 0.90);
  m[Metric::latency_p99] = nearest_rank(lat, 0.99);
  m[Metric::latency_max] = lat.empty() ? 0 : lat.back();
  m[Metric::queue_wait_mean] = completed ? static_cast<double>(wait_sum / completed) * 1e-9 : 0;
  m[Metric::switches_voluntary] = static_cast<double>(r.counters.switches_voluntary);
  m[Metric::switches_involuntary] = static_cast<double>(r.counters.switches_involuntary);
  m[Metric::threads_peak] = static_cast<double>(r.counters.threads_peak);
  m[Metric::memory_peak] = static_cast<double>(r.counters.memory_peak);
  const double capacity = makespan * r.cpus_available;
  m[Metric::cpu_utilization] = capacity > 0 ? to_seconds(r.counters.cpu_time) / capacity : 0;
  m[Metric::throttled_periods] = static_cast<double>(r.counters.throttled_periods);
  m[Metric::throttled_time] = to_seconds(r.counters.throttled_time);
  m[Metric::completed] = static_cast<double>(completed);
  m[Metric::rejected] = static_cast<double>(rejected);
  m[Metric::burst_periods] = static_cast<double>(r.counters.burst_periods);
  m[Metric::burst_time] = to_seconds(r.counters.burst_time);
  return m;
}

std::array<MetricStats, kMetricCount> summarize(const std::vector<Metrics>& reps) {
  std::array<MetricStats, kMetricCount> out{};
  for (std::size_t i = 0; i < kMetricCount; ++i) {
    auto& s = out[i];
    s.n = static_cast<int>(reps.size());
    if (reps.empty()) continue;
    s.min = s.max = reps[0].values[i];
    double sum = 0;
    for (const auto& r : reps) {
      sum += r.values[i];
      s.min = std::min(s.min, r.values[i]);
      s.max = std::max(s.max, r.values[i]);
    }
    s.mean = sum / s.n;
    if (s.n > 1) {
      double ss = 0;
      for (const auto& r : reps) ss += (r.values[i] - s.mean) * (r.values[i] - s.mean);
      s.sd = std::sqrt(ss / (s.n - 1));
    }
  }
  return out;
}

}  // namespace poolsim
