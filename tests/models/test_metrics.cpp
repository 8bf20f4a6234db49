// compute_metrics() on hand-made records.
#include <catch2/catch.hpp>

#include "models/metrics.hpp"

using namespace poolsim;
using namespace std::chrono_literals;

namespace {
TaskRecord rec(Duration submit, Duration start, Duration end,
               TaskOutcome o = TaskOutcome::completed) {
  TaskRecord r;
  r.intended = submit;  // handed over on time: no submit lag
  r.submit = submit;
  r.start = start;
  r.end = end;
  r.outcome = o;
  return r;
}
}  // namespace

TEST_CASE("metrics: a small hand-made run gives its exact metrics", "[metrics]") {
  RunResult r;
  r.cpus_available = 2;
  r.records = {rec(0ms, 0ms, 10ms), rec(0ms, 0ms, 20ms), rec(5ms, 10ms, 30ms), rec(5ms, 20ms, 40ms),
               rec(6ms, 6ms, 6ms, TaskOutcome::rejected)};
  r.counters.cpu_time = 60ms;
  r.counters.switches_voluntary = 7;
  r.counters.switches_involuntary = 3;
  r.counters.threads_peak = 3;
  r.counters.memory_peak = 1 << 20;
  r.counters.throttled_periods = 2;
  r.counters.throttled_time = 15ms;
  const auto m = compute_metrics(r);
  CHECK(m[Metric::makespan] == Approx(0.040));
  CHECK(m[Metric::completed] == 4);
  CHECK(m[Metric::rejected] == 1);
  CHECK(m[Metric::throughput] == Approx(100.0));
  CHECK(m[Metric::first_completion] == Approx(0.010));
  // latencies 10, 20, 25, 35 ms
  CHECK(m[Metric::latency_mean] == Approx(0.0225));
  CHECK(m[Metric::latency_p50] == Approx(0.020));
  CHECK(m[Metric::latency_p90] == Approx(0.035));
  CHECK(m[Metric::latency_p99] == Approx(0.035));
  CHECK(m[Metric::latency_max] == Approx(0.035));
  // waits 0, 0, 5, 15 ms
  CHECK(m[Metric::queue_wait_mean] == Approx(0.005));
  CHECK(m[Metric::cpu_utilization] == Approx(0.060 / (0.040 * 2)));
  CHECK(m[Metric::switches_voluntary] == 7);
  CHECK(m[Metric::switches_involuntary] == 3);
  CHECK(m[Metric::threads_peak] == 3);
  CHECK(m[Metric::memory_peak] == 1 << 20);
  CHECK(m[Metric::throttled_periods] == 2);
  CHECK(m[Metric::throttled_time] == Approx(0.015));
}

TEST_CASE("metrics: quantiles are nearest-rank", "[metrics]") {
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  CHECK(nearest_rank(v, 0.5) == 50);
  CHECK(nearest_rank(v, 0.99) == 99);
  CHECK(nearest_rank(v, 1.0) == 100);
  CHECK(nearest_rank(v, 0.0) == 1);
  CHECK(nearest_rank({}, 0.5) == 0);
}

TEST_CASE("metrics: an empty run has zero metrics, not NaN", "[metrics]") {
  RunResult r;
  const auto m = compute_metrics(r);
  for (double v : m.values) CHECK(v == 0);
}

TEST_CASE("metrics: summaries over repetitions give mean, sd, min, max, n", "[metrics]") {
  Metrics a, b, c;
  a[Metric::makespan] = 1.0;
  b[Metric::makespan] = 2.0;
  c[Metric::makespan] = 3.0;
  const auto s = summarize({a, b, c});
  const auto& ms = s[static_cast<std::size_t>(Metric::makespan)];
  CHECK(ms.mean == Approx(2.0));
  CHECK(ms.sd == Approx(1.0));
  CHECK(ms.min == 1.0);
  CHECK(ms.max == 3.0);
  CHECK(ms.n == 3);
}

TEST_CASE("metrics: metric names round-trip", "[metrics]") {
  for (std::size_t i = 0; i < kMetricCount; ++i) {
    const auto m = static_cast<Metric>(i);
    CHECK(metric_from(to_string(m)) == m);
  }
  CHECK_FALSE(metric_from("latency_p95").has_value());
}
