// The comparison arithmetic and verdicts on hand-made results.
#include <catch2/catch.hpp>
#include <cmath>

#include "validate/compare.hpp"

using namespace poolsim;
using namespace poolsim::validate;

namespace {
std::array<MetricStats, kMetricCount> measured_all(double mean, double sd) {
  std::array<MetricStats, kMetricCount> a{};
  for (auto& s : a) s = MetricStats{mean, sd, mean - sd, mean + sd, 5};
  return a;
}
const MetricComparison& row(const Comparison& c, Metric m) {
  for (const auto& r : c.rows)
    if (r.metric == m) return r;
  FAIL("metric missing");
  return c.rows.front();
}
}  // namespace

TEST_CASE("compare: error is (predicted - measured) / measured", "[compare]") {
  Metrics p;
  p.resources = true;  // every metric applies (resource_wait_mean only with resources)
  for (auto& v : p.values) v = 0.81;
  auto m = measured_all(0.84, 0.02);
  const auto c = compare(p, m, Tolerance{});
  const auto& r = row(c, Metric::makespan);
  CHECK(r.error == Approx((0.81 - 0.84) / 0.84));
  CHECK(r.tolerance == Approx(0.10));
  CHECK(r.verdict == Verdict::match);
  CHECK(c.overall == Verdict::match);
  CHECK(c.matched == static_cast<int>(kMetricCount));
}

TEST_CASE("compare: beyond tolerance diverges, and a per-metric tolerance applies", "[compare]") {
  Metrics p;
  for (auto& v : p.values) v = 1.0;
  p[Metric::latency_p99] = 1.25;  // +25%
  p[Metric::makespan] = 1.15;     // +15%
  Tolerance t;
  t.per_metric["latency_p99"] = 0.30;
  const auto c = compare(p, measured_all(1.0, 0.01), t);
  CHECK(row(c, Metric::latency_p99).verdict == Verdict::match);
  CHECK(row(c, Metric::makespan).verdict == Verdict::diverge);
  CHECK(c.overall == Verdict::diverge);
  CHECK(c.diverged == 1);
}

TEST_CASE("compare: a measurement noisier than the tolerance is noisy, not failed", "[compare]") {
  Metrics p;
  p.resources = true;
  for (auto& v : p.values) v = 3.0;  // +200%: would diverge
  const auto c = compare(p, measured_all(1.0, 0.5), Tolerance{});
  CHECK(row(c, Metric::makespan).verdict == Verdict::noisy);
  CHECK(row(c, Metric::makespan).spread == Approx(0.5));
  CHECK(c.overall == Verdict::match);
  CHECK(c.noisy == static_cast<int>(kMetricCount));
}

TEST_CASE("compare: a zero measurement matches only a zero prediction", "[compare]") {
  Metrics p;
  p[Metric::throttled_periods] = 0;
  p[Metric::rejected] = 3;
  const auto c = compare(p, measured_all(0.0, 0.0), Tolerance{});
  CHECK(row(c, Metric::throttled_periods).verdict == Verdict::match);
  CHECK(row(c, Metric::throttled_periods).error == 0);
  CHECK(row(c, Metric::rejected).verdict == Verdict::diverge);
  CHECK(std::isinf(row(c, Metric::rejected).error));
  const auto j = comparison_json(Scenario{}, c);
  CHECK(j["metrics"]["rejected"]["error"].is_null());
  CHECK(j["verdict"] == "diverge");
}

TEST_CASE("compare: ignored metrics are not compared", "[compare]") {
  Metrics p;
  p.resources = true;
  Tolerance t;
  t.ignored.insert("switches_voluntary");
  const auto c = compare(p, measured_all(0.0, 0.0), t);
  CHECK(c.rows.size() == kMetricCount - 1);
  for (const auto& r : c.rows) CHECK(r.metric != Metric::switches_voluntary);
}

TEST_CASE("compare: the JSON has the documented shape", "[compare]") {
  Metrics p;
  for (auto& v : p.values) v = 0.81;
  Scenario s;
  s.name = "burst-micro";
  const auto j = comparison_json(s, compare(p, measured_all(0.84, 0.02), Tolerance{}));
  CHECK(j["scenario"] == "burst-micro");
  CHECK(j["verdict"] == "match");
  const auto& mk = j["metrics"]["makespan"];
  CHECK(mk["predicted"].get<double>() == Approx(0.81));
  CHECK(mk["measured"]["mean"].get<double>() == Approx(0.84));
  CHECK(mk["measured"]["n"] == 5);
  CHECK(mk["error"].get<double>() == Approx(-0.0357).epsilon(0.01));
  CHECK(mk["tolerance"].get<double>() == Approx(0.10));
  CHECK(mk["verdict"] == "match");
}

TEST_CASE("compare: resource_wait_mean is compared only for a run with bounded resources",
          "[compare]") {
  Metrics p;
  const auto without = compare(p, measured_all(0.0, 0.0), Tolerance{});
  CHECK(without.rows.size() == kMetricCount - 1);
  for (const auto& r : without.rows) CHECK(r.metric != Metric::resource_wait_mean);
  p.resources = true;
  CHECK(compare(p, measured_all(0.0, 0.0), Tolerance{}).rows.size() == kMetricCount);
}
