// Statistics of the samplers over large samples: means and quantiles within
// tight bounds, and the lognormal median/p99 parameterisation.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "models/distribution.hpp"

using namespace poolsim;
using namespace std::chrono_literals;

namespace {
std::vector<double> draw(const Distribution& d, int n, std::uint64_t seed = 7) {
  Rng rng(seed);
  std::vector<double> v(n);
  for (auto& x : v) x = to_seconds(d.sample(rng));
  std::sort(v.begin(), v.end());
  return v;
}
double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / v.size();
}
double q(const std::vector<double>& v, double p) {
  return v[static_cast<std::size_t>(p * (v.size() - 1))];
}
}  // namespace

TEST_CASE("distribution.exponential: mean and quantiles are exact", "[distribution]") {
  const auto d = Distribution::exponential(2ms);
  const auto v = draw(d, 400000);
  CHECK(mean(v) == Approx(0.002).epsilon(0.01));
  CHECK(q(v, 0.5) == Approx(0.002 * std::log(2.0)).epsilon(0.01));
  CHECK(q(v, 0.99) == Approx(0.002 * std::log(100.0)).epsilon(0.02));
  CHECK(d.quantile_seconds(0.99) == Approx(0.002 * std::log(100.0)));
}

TEST_CASE("distribution.uniform: samples stay within bounds and average the mean",
          "[distribution]") {
  const auto v = draw(Distribution::uniform(1ms, 3ms), 200000);
  CHECK(v.front() >= 0.001);
  CHECK(v.back() <= 0.003);
  CHECK(mean(v) == Approx(0.002).epsilon(0.005));
  CHECK(q(v, 0.25) == Approx(0.0015).epsilon(0.01));
}

TEST_CASE("distribution.lognormal: parameterised by median and p99", "[distribution]") {
  const auto d = Distribution::lognormal(2ms, 20ms);
  const auto v = draw(d, 400000);
  CHECK(q(v, 0.5) == Approx(0.002).epsilon(0.01));
  CHECK(q(v, 0.99) == Approx(0.020).epsilon(0.03));
  CHECK(d.quantile_seconds(0.5) == Approx(0.002).epsilon(1e-9));
  CHECK(d.quantile_seconds(0.99) == Approx(0.020).epsilon(1e-9));
  CHECK(mean(v) == Approx(d.mean_seconds()).epsilon(0.02));
}

TEST_CASE("distribution.normal: truncated at zero", "[distribution]") {
  const auto wide = Distribution::normal(1ms, 1ms);
  const auto v = draw(wide, 300000);
  CHECK(v.front() >= 0);
  CHECK(mean(v) == Approx(wide.mean_seconds()).epsilon(0.01));
  CHECK(wide.mean_seconds() > 0.001);  // truncation raises the mean
  const auto narrow = draw(Distribution::normal(2ms, 500us), 300000);
  CHECK(mean(narrow) == Approx(0.002).epsilon(0.005));
  CHECK(q(narrow, 0.5) == Approx(0.002).epsilon(0.01));
}

TEST_CASE("distribution.empirical: draws only its samples", "[distribution]") {
  const Distribution d(EmpiricalDist{"x.csv", {1ms, 2ms, 3ms, 10ms}});
  const auto v = draw(d, 100000);
  CHECK(mean(v) == Approx(0.004).epsilon(0.02));
  for (double x : v) CHECK((x == 0.001 || x == 0.002 || x == 0.003 || x == 0.010));
}

TEST_CASE("distribution: normal_quantile inverts the normal CDF", "[distribution]") {
  CHECK(normal_quantile(0.5) == Approx(0).margin(1e-12));
  CHECK(normal_quantile(0.99) == Approx(kZ99).epsilon(1e-12));
  CHECK(normal_quantile(0.001) == Approx(-3.090232306167813).epsilon(1e-10));
}

TEST_CASE("distribution: the same seed gives the same samples, another seed others",
          "[distribution]") {
  const auto d = Distribution::exponential(1ms);
  CHECK(draw(d, 1000, 3) == draw(d, 1000, 3));
  CHECK(draw(d, 1000, 3) != draw(d, 1000, 4));
}

TEST_CASE("distribution: invalid parameters are refused", "[distribution]") {
  CHECK_THROWS(Distribution::lognormal(2ms, 1ms));
  CHECK_THROWS(Distribution::uniform(3ms, 1ms));
  CHECK_THROWS(Distribution(EmpiricalDist{"x.csv", {}}));
}

TEST_CASE("distribution.lognormal_p99_of: the lognormal with a given median and mean",
          "[distribution]") {
  // The 03:08 profile's held-back timers: 512 us median, 1.86 ms mean.
  const Duration p99 = lognormal_p99_of(512us, 1860us);
  const Distribution d = Distribution::lognormal(512us, p99);
  REQUIRE(d.mean_seconds() == Approx(1.86e-3).epsilon(1e-3));
  REQUIRE(d.quantile_seconds(0.5) == Approx(512e-6).epsilon(1e-3));
  REQUIRE_THROWS(lognormal_p99_of(1ms, 1ms));
  REQUIRE_THROWS(lognormal_p99_of(0us, 1ms));
}

TEST_CASE("distribution.lognormal_median_of: the lognormal with a given mean and p99",
          "[distribution]") {
  // This VM's FWQ at 21:40 UTC: 26 us mean, 62 us p99 per interruption.
  const Duration median = lognormal_median_of(26us, 62us);
  const Distribution d = Distribution::lognormal(median, 62us);
  REQUIRE(d.mean_seconds() == Approx(26e-6).epsilon(1e-3));
  REQUIRE(to_seconds(median) < 26e-6);  // right-skewed: median below the mean
  // Past every lognormal's reach (p99 = 100 means): sigma = z99, the
  // lognormal of that p99 with the least mean, p99 e^(-z99^2/2).
  const Duration wide = lognormal_median_of(1us, 100us);
  const double z = 2.3263478740408408;
  REQUIRE(Distribution::lognormal(wide, 100us).mean_seconds() ==
          Approx(100e-6 * std::exp(-z * z / 2)).epsilon(1e-3));
  REQUIRE_THROWS(lognormal_median_of(10us, 10us));
}
