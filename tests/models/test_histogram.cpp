// LogHistogram (models/histogram.hpp) against exact nearest-rank quantiles,
// and RecordSummary's switch from exact to histogram quantiles.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "models/histogram.hpp"
#include "models/large_buffer.hpp"
#include "models/metrics.hpp"

using namespace poolsim;

namespace {
double exact_rank(const std::vector<std::int64_t>& sorted, double q) {
  auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  rank = std::clamp<std::size_t>(rank, 1, sorted.size());
  return static_cast<double>(sorted[rank - 1]);
}

// Every quantile on a fine grid within the stated relative error.
void check_bound(std::vector<std::int64_t> values, double alpha) {
  LogHistogram h(alpha);
  for (auto v : values) h.add(v);
  std::sort(values.begin(), values.end());
  REQUIRE(h.count() == values.size());
  REQUIRE(h.min() == values.front());
  REQUIRE(h.max() == values.back());
  double worst = 0;
  for (int i = 0; i <= 1000; ++i) {
    const double q = i / 1000.0;
    const double exact = exact_rank(values, q);
    const double got = h.quantile(q);
    const double err = exact == 0 ? std::fabs(got) : std::fabs(got - exact) / exact;
    worst = std::max(worst, err);
    REQUIRE(err <= alpha * (1 + 1e-9));
  }
  // The bound is tight enough to matter: the estimate is not exact.
  CHECK(worst > alpha / 100);
}
}  // namespace

TEST_CASE("histogram: quantiles stay within the stated relative error", "[histogram]") {
  std::mt19937_64 rng(42);
  const double alpha = GENERATE(0.005, 0.01, 0.05);
  SECTION("exponential latencies, mean 2 ms") {
    std::exponential_distribution<double> d(1 / 2e6);
    std::vector<std::int64_t> v;
    for (int i = 0; i < 200000; ++i) v.push_back(static_cast<std::int64_t>(d(rng)));
    check_bound(v, alpha);
  }
  SECTION("lognormal over six decades") {
    std::lognormal_distribution<double> d(std::log(1e5), 2.5);
    std::vector<std::int64_t> v;
    for (int i = 0; i < 200000; ++i) v.push_back(1 + static_cast<std::int64_t>(d(rng)));
    check_bound(v, alpha);
  }
  SECTION("small integers and zeros") {
    std::uniform_int_distribution<std::int64_t> d(0, 300);
    std::vector<std::int64_t> v;
    for (int i = 0; i < 50000; ++i) v.push_back(d(rng));
    check_bound(v, alpha);
  }
}

TEST_CASE("histogram: memory is the bucket span, not the count", "[histogram]") {
  LogHistogram h(0.005);
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<std::int64_t> d(1, 1'000'000'000'000);  // 1 ns .. 1000 s
  for (int i = 0; i < 1'000'000; ++i) h.add(d(rng));
  h.add(1);
  CHECK(h.buckets() <= 2800);  // log(1e12) / log(1.01005) = 2764
  CHECK_THROWS(h.add(-1));
}

TEST_CASE("record_summary: exact up to the limit, then a histogram", "[histogram][metrics]") {
  QuantilePolicy p;
  p.exact_limit = 1000;
  RecordSummary s(p);
  std::vector<TaskRecord> recs;
  std::mt19937_64 rng(3);
  std::exponential_distribution<double> d(1 / 1e6);
  for (int i = 0; i < 5000; ++i) {
    TaskRecord t;
    t.submit = Duration{i * 1000};
    t.start = t.submit + Duration{100};
    t.end = t.start + Duration{1 + static_cast<std::int64_t>(d(rng))};
    t.outcome = i % 10 == 9 ? TaskOutcome::rejected : TaskOutcome::completed;
    recs.push_back(t);
    s.add(t);
    if (i == 999) CHECK(s.exact());
  }
  CHECK_FALSE(s.exact());
  CHECK(s.sorted_latencies().empty());
  RunResult kept;
  kept.records = recs;
  RunResult streamed;
  streamed.summary = s;
  const Metrics a = compute_metrics(kept), b = compute_metrics(streamed);
  CHECK(a.quantiles_exact);
  CHECK_FALSE(b.quantiles_exact);
  CHECK(b.quantile_relative_error == LogHistogram::kDefaultRelativeError);
  for (Metric m : {Metric::completed, Metric::rejected, Metric::makespan, Metric::latency_max,
                   Metric::first_completion, Metric::queue_wait_mean})
    CHECK(a[m] == b[m]);
  CHECK(b[Metric::latency_mean] == Approx(a[Metric::latency_mean]).epsilon(1e-12));
  for (Metric m : {Metric::latency_p50, Metric::latency_p90, Metric::latency_p99}) {
    CHECK(b[m] != a[m]);
    CHECK(std::fabs(b[m] - a[m]) <= 0.005 * a[m] * (1 + 1e-9));
  }
}

TEST_CASE("record_summary: forced exact never switches", "[histogram][metrics]") {
  QuantilePolicy p;
  p.choice = QuantilePolicy::Choice::exact;
  p.exact_limit = 10;
  RecordSummary s(p);
  for (int i = 0; i < 100; ++i) {
    TaskRecord t;
    t.end = Duration{i + 1};
    t.outcome = TaskOutcome::completed;
    s.add(t);
  }
  CHECK(s.exact());
  CHECK(s.sorted_latencies().size() == 100);
}

namespace {
// What an exact summary reports, from a sorted copy of its values: the mean
// of the exact integer sum, nearest-rank quantiles, the lag's p99.
struct Reference {
  double mean = 0, max = 0, p50 = 0, p90 = 0, p99 = 0, lag_p99 = 0;
};
Reference reference(std::vector<std::int64_t> lat, std::vector<std::int64_t> lag) {
  std::sort(lat.begin(), lat.end());
  std::sort(lag.begin(), lag.end());
  Reference r;
  long double sum = 0;  // integer nanoseconds: exact
  for (std::int64_t x : lat) sum += static_cast<long double>(x);
  r.mean = static_cast<double>(sum / static_cast<long double>(lat.size()) / 1e9L);
  r.max = to_seconds(Duration{lat.back()});
  const auto at = [](const std::vector<std::int64_t>& v, double q) {
    return to_seconds(Duration{static_cast<std::int64_t>(exact_rank(v, q))});
  };
  r.p50 = at(lat, 0.50);
  r.p90 = at(lat, 0.90);
  r.p99 = at(lat, 0.99);
  r.lag_p99 = at(lag, 0.99);
  return r;
}
void check_against(const RecordSummary& s, const Reference& want) {
  const auto lat = s.latency({0.50, 0.90, 0.99});
  CHECK(lat.mean == want.mean);
  CHECK(lat.max == want.max);
  CHECK(lat.quantiles[0] == want.p50);
  CHECK(lat.quantiles[1] == want.p90);
  CHECK(lat.quantiles[2] == want.p99);
  CHECK(s.submit_lag().p99 == want.lag_p99);
}
}  // namespace

// The exact summary selects its quantiles in place (nth_element), sorts its
// latencies in place for sorted_latencies() and takes the lag's p99 with
// nth_element: the same values as a full sort of a copy, however often it
// is read and when records come after a read. 140,000 latencies: their
// buffer passes 1 MiB, where it comes from LargeBufferAllocator's mappings.
TEST_CASE("record_summary: in-place exact quantiles equal a sorted copy's",
          "[histogram][metrics]") {
  QuantilePolicy p;
  p.choice = QuantilePolicy::Choice::exact;
  RecordSummary s(p);
  std::mt19937_64 rng(11);
  std::vector<std::int64_t> lat, lag;
  auto add = [&](int count) {
    for (int i = 0; i < count; ++i) {
      TaskRecord t;
      t.intended = Duration{static_cast<std::int64_t>(rng() % 1'000'000'000)};
      // A third of the tasks handed over on time (lag 0, counted apart).
      const auto late = i % 3 == 0 ? 0 : static_cast<std::int64_t>(rng() % 50'000);
      t.submit = t.intended + Duration{late};
      t.start = t.submit;
      // Latencies over many orders of magnitude (up to ~2^41 ns), some repeated.
      const std::int64_t l = i % 7 == 0 ? 12345 : static_cast<std::int64_t>(rng() >> (23 + i % 20));
      t.end = t.intended + Duration{l};
      t.outcome = TaskOutcome::completed;
      s.add(t);
      lat.push_back(l);
      lag.push_back((t.submit - t.intended).count());
    }
  };
  add(140000);
  const Reference first = reference(lat, lag);
  check_against(s, first);
  check_against(s, first);  // a second read sees the same values
  const std::vector<double> sorted = s.sorted_latencies();
  CHECK(sorted.size() == lat.size());
  CHECK(std::is_sorted(sorted.begin(), sorted.end()));
  add(3000);  // records after a read
  check_against(s, reference(lat, lag));
}

TEST_CASE("record_summary: the lag p99 with more than 99% of the lags 0", "[histogram][metrics]") {
  QuantilePolicy p;
  p.choice = QuantilePolicy::Choice::exact;
  for (const int late : {5, 10, 11, 200}) {  // tasks of 1000 handed over late
    RecordSummary s(p);
    std::vector<std::int64_t> lags;
    for (int i = 0; i < 1000; ++i) {
      TaskRecord t;
      t.submit = Duration{i < late ? 1000 + i : 0};
      t.end = t.submit + Duration{1};
      t.outcome = TaskOutcome::completed;
      s.add(t);
      lags.push_back(t.submit.count());
    }
    std::sort(lags.begin(), lags.end());
    CHECK(s.submit_lag().p99 == to_seconds(Duration{lags[989]}));
    CHECK((s.submit_lag().p99 > 0) == (late > 10));
  }
}

TEST_CASE("large_buffer: small blocks from malloc, large ones 2 MiB aligned, contents kept",
          "[histogram][metrics]") {
  std::vector<std::int64_t, LargeBufferAllocator<std::int64_t>> v;
  for (std::int64_t i = 0; i < 300'000; ++i) v.push_back(i * 7);  // grows through 1 MiB
  for (std::int64_t i = 0; i < 300'000; ++i) REQUIRE(v[static_cast<std::size_t>(i)] == i * 7);
  CHECK(reinterpret_cast<std::uintptr_t>(v.data()) % large_buffer::kHuge == 0);
  void* small = large_buffer::allocate(4096);
  CHECK(small != nullptr);
  large_buffer::deallocate(small, 4096);
  CHECK(large_buffer::mapped_size(1) == large_buffer::kHuge);
  CHECK(large_buffer::mapped_size(large_buffer::kHuge + 1) == 2 * large_buffer::kHuge);
}

TEST_CASE("log_histogram: the memoised bucket of a value is the one its logarithm gives",
          "[histogram]") {
  for (const double a : {0.005, 0.01, 0.05}) {
    LogHistogram h(a);
    std::mt19937_64 rng(5);
    for (int i = 0; i < 200000; ++i) {
      // Values over the whole range, dense near bucket boundaries too: the
      // integers around gamma^k.
      const int shift = static_cast<int>(rng() % 62);
      std::int64_t v = static_cast<std::int64_t>((rng() >> 2) >> shift);
      if (i % 4 == 0) {
        const double g = (1 + a) / (1 - a);
        const double b = std::pow(g, static_cast<double>(rng() % 8000));
        if (b < 9e18) v = static_cast<std::int64_t>(b) + static_cast<std::int64_t>(rng() % 3) - 1;
      }
      if (v < 1) v = 1;
      REQUIRE(h.bucket_of(v) == h.index_of(v));
    }
    for (std::int64_t v = 1; v < 5000; ++v) REQUIRE(h.bucket_of(v) == h.index_of(v));
  }
}
