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
