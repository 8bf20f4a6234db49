// metrics.cpp: the metrics of a run and the streaming reduction of its
// records (design in metrics.hpp and result.hpp).
#include "models/metrics.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <utility>

#include "models/resource_pool.hpp"

namespace poolsim {

std::string_view to_string(Metric m) { return kMetricNames[static_cast<std::size_t>(m)]; }

std::optional<Metric> metric_from(std::string_view name) {
  for (std::size_t i = 0; i < kMetricCount; ++i)
    if (kMetricNames[i] == name) return static_cast<Metric>(i);
  return std::nullopt;
}

std::string_view unit_of(Metric m) {
  switch (m) {
    case Metric::makespan:
    case Metric::first_completion:
    case Metric::latency_mean:
    case Metric::latency_p50:
    case Metric::latency_p90:
    case Metric::latency_p99:
    case Metric::latency_max:
    case Metric::queue_wait_mean:
    case Metric::throttled_time:
    case Metric::submit_lag_mean:
    case Metric::submit_lag_p99:
    case Metric::burst_time:
    case Metric::resource_wait_mean:
      return "s";
    case Metric::throughput:
      return "/s";
    case Metric::memory_peak:
      return "B";
    case Metric::cpu_utilization:
      return "fraction";
    default:
      return "";
  }
}

namespace {
// The index of the nearest-rank q-quantile in a sorted list of n > 0 values.
std::size_t nearest_rank_index(std::size_t n, double q) {
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(n)));
  return std::clamp<std::size_t>(rank, 1, n) - 1;
}
}  // namespace

double nearest_rank(const std::vector<double>& sorted, double q) {
  return sorted.empty() ? 0 : sorted[nearest_rank_index(sorted.size(), q)];
}

std::vector<double> sorted_latencies(const RunResult& r) {
  if (r.summary) return r.summary->sorted_latencies();
  std::vector<double> lat;
  lat.reserve(r.records.size());
  for (const auto& t : r.records)
    if (t.outcome == TaskOutcome::completed) lat.push_back(to_seconds(t.end - t.intended));
  std::sort(lat.begin(), lat.end());
  return lat;
}

// ---- RecordSummary ---------------------------------------------------------

RecordSummary::RecordSummary(QuantilePolicy p)
    : policy_(p), hist_(p.relative_error), lag_hist_(p.relative_error) {
  histogram_on_ = p.choice == QuantilePolicy::Choice::histogram;
}

void RecordSummary::add(const TaskRecord& t) {
  if (t.outcome == TaskOutcome::not_run) return;
  first_intended = std::min(first_intended, t.intended);
  add_lag(std::max<std::int64_t>(0, (t.submit - t.intended).count()));
  if (t.outcome == TaskOutcome::rejected) ++rejected;
  if (t.outcome != TaskOutcome::completed) return;
  ++completed;
  last_end = std::max(last_end, t.end);
  first_end = std::min(first_end, t.end);
  wait_sum_ns += static_cast<long double>((t.start - t.intended).count());
  const std::int64_t lat = (t.end - t.intended).count();
  lat_sum_ns_ += static_cast<long double>(lat);
  lat_max_ns_ = std::max(lat_max_ns_, lat);
  if (histogram_on_) {
    hist_.add(lat);
    return;
  }
  exact_ns_.push_back(lat);
  exact_sorted_ = false;
  if (policy_.choice == QuantilePolicy::Choice::automatic && exact_ns_.size() > policy_.exact_limit)
    to_histogram();
}

void RecordSummary::reserve(std::size_t n) {
  if (histogram_on_) return;
  exact_ns_.reserve(exact_ns_.size() + n);
  lag_ns_.reserve(lag_ns_.size() + n);
}

// Submit lags go the way latencies go: kept while exact, else a histogram.
void RecordSummary::add_lag(std::int64_t lag) {
  ++lag_n_;
  lag_sum_ns_ += static_cast<long double>(lag);
  if (histogram_on_)
    lag_hist_.add(lag);
  else if (lag == 0)
    ++lag_zeros_;
  else
    lag_ns_.push_back(lag);
}

// Past the exact limit: the latencies kept so far go into the histogram and
// their memory is released.
void RecordSummary::to_histogram() {
  histogram_on_ = true;
  for (; lag_zeros_ > 0; --lag_zeros_) lag_hist_.add(0);
  for (std::int64_t lag : lag_ns_) lag_hist_.add(lag);
  NsBuffer().swap(lag_ns_);
  for (std::int64_t lat : exact_ns_) hist_.add(lat);
  NsBuffer().swap(exact_ns_);
}

void RecordSummary::sort_exact() const {
  if (exact_sorted_) return;
  // Only sorted_latencies() needs the whole order (the HTML report's
  // distributions); the metrics select their quantiles (latency()).
  std::sort(exact_ns_.begin(), exact_ns_.end());
  exact_sorted_ = true;
}

std::vector<double> RecordSummary::sorted_latencies() const {
  // Sorted as integers (the order of their conversions to seconds).
  sort_exact();
  std::vector<double> lat;
  lat.reserve(exact_ns_.size());
  for (std::int64_t x : exact_ns_) lat.push_back(to_seconds(Duration{x}));
  return lat;
}

RecordSummary::Latency RecordSummary::latency(const std::vector<double>& qs) const {
  Latency out;
  // Both modes: the exact sum of integer nanoseconds (exact below 2^64 ns)
  // and the exact maximum.
  out.mean = completed ? static_cast<double>(lat_sum_ns_ / completed / 1e9L) : 0;
  out.max = to_seconds(Duration{lat_max_ns_});
  if (histogram_on_) {
    for (double q : qs) out.quantiles.push_back(hist_.quantile(q) * 1e-9);
    return out;
  }
  // Exact: each nearest-rank order statistic selected in place
  // (nth_element, linear), from the lowest rank up, each selection within
  // the part above the previous one; no sort and no scratch buffer (a sort
  // of a million latencies took a scratch copy whose first touch cost more
  // than the sort on this VM). The value at an index is the one a full sort
  // would put there.
  const std::size_t n = exact_ns_.size();
  out.quantiles.assign(qs.size(), 0.0);
  if (n == 0) return out;
  std::vector<std::pair<std::size_t, std::size_t>> want;  // (index, position in qs)
  want.reserve(qs.size());
  for (std::size_t k = 0; k < qs.size(); ++k) want.push_back({nearest_rank_index(n, qs[k]), k});
  std::sort(want.begin(), want.end());
  std::size_t from = 0;
  for (const auto& [i, k] : want) {
    if (!exact_sorted_ && i >= from) {
      const auto base = exact_ns_.begin();
      std::nth_element(base + static_cast<std::ptrdiff_t>(from),
                       base + static_cast<std::ptrdiff_t>(i), exact_ns_.end());
      from = i + 1;
    }
    out.quantiles[k] = to_seconds(Duration{exact_ns_[i]});
  }
  return out;
}

RecordSummary::Lag RecordSummary::submit_lag() const {
  Lag out;
  out.mean = lag_n_ ? static_cast<double>(lag_sum_ns_ / lag_n_) * 1e-9 : 0;
  if (histogram_on_) {
    out.p99 = lag_hist_.quantile(0.99) * 1e-9;
    return out;
  }
  // One order statistic of the lags: the zeros, then the others (all
  // positive) in ascending order. nth_element puts the value a full sort
  // would put at that index there (the lags are a multiset: their order
  // means nothing, and the mean is summed as they came).
  const auto n = static_cast<std::size_t>(lag_zeros_) + lag_ns_.size();
  if (n > 0) {
    const std::size_t i = nearest_rank_index(n, 0.99);
    if (i >= static_cast<std::size_t>(lag_zeros_)) {
      const auto nth =
          lag_ns_.begin() + static_cast<std::ptrdiff_t>(i - static_cast<std::size_t>(lag_zeros_));
      std::nth_element(lag_ns_.begin(), nth, lag_ns_.end());
      out.p99 = to_seconds(Duration{*nth});
    }
  }
  return out;
}

// ---- metrics -----------------------------------------------------------------

namespace {
Metrics metrics_from(const RecordSummary& s, const RunResult& r) {
  Metrics m;
  const std::int64_t completed = s.completed;
  const auto lat = s.latency({0.50, 0.90, 0.99});
  const double makespan = to_seconds(s.last_end);
  m[Metric::makespan] = makespan;
  m[Metric::throughput] = makespan > 0 ? static_cast<double>(completed) / makespan : 0;
  m[Metric::first_completion] = completed ? to_seconds(s.first_end - s.first_intended) : 0;
  m[Metric::latency_mean] = lat.mean;
  m[Metric::latency_p50] = lat.quantiles[0];
  m[Metric::latency_p90] = lat.quantiles[1];
  m[Metric::latency_p99] = lat.quantiles[2];
  m[Metric::latency_max] = lat.max;
  m[Metric::queue_wait_mean] =
      completed ? static_cast<double>(s.wait_sum_ns / completed) * 1e-9 : 0;
  m[Metric::switches_voluntary] = static_cast<double>(r.counters.switches_voluntary);
  m[Metric::switches_involuntary] = static_cast<double>(r.counters.switches_involuntary);
  m[Metric::threads_peak] = static_cast<double>(r.counters.threads_peak);
  m[Metric::memory_peak] = static_cast<double>(r.counters.memory_peak);
  const double capacity = makespan * r.cpus_available;
  m[Metric::cpu_utilization] = capacity > 0 ? to_seconds(r.counters.cpu_time) / capacity : 0;
  m[Metric::throttled_periods] = static_cast<double>(r.counters.throttled_periods);
  m[Metric::throttled_time] = to_seconds(r.counters.throttled_time);
  m[Metric::completed] = static_cast<double>(completed);
  m[Metric::rejected] = static_cast<double>(s.rejected);
  const auto lag = s.submit_lag();
  m[Metric::submit_lag_mean] = lag.mean;
  m[Metric::submit_lag_p99] = lag.p99;
  m[Metric::burst_periods] = static_cast<double>(r.counters.burst_periods);
  m[Metric::burst_time] = to_seconds(r.counters.burst_time);
  const auto acq = r.extra.find(kExtraResourceAcquisitions);
  const auto wait = r.extra.find(kExtraResourceWaitTotal);
  if (acq != r.extra.end() && wait != r.extra.end()) {
    m.resources = true;
    m[Metric::resource_wait_mean] = acq->second > 0 ? wait->second / acq->second : 0;
  }
  m.quantiles_exact = s.exact();
  m.quantile_relative_error = s.relative_error();
  return m;
}
}  // namespace

Metrics compute_metrics(const RunResult& r) {
  if (r.summary) return metrics_from(*r.summary, r);
  QuantilePolicy exact;
  exact.choice = QuantilePolicy::Choice::exact;
  RecordSummary s(exact);
  s.reserve(r.records.size());
  for (const auto& t : r.records) s.add(t);
  return metrics_from(s, r);
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
