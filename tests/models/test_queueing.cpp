// Tests of the analytic queueing models against closed forms, published tables
// and independent computations. Reference values marked "mpmath" were evaluated
// from the closed form sum_{k<=c} a^k/k! with 40 significant digits (mpmath 1.3).
#include <Eigen/Dense>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "models/queueing/erlang.hpp"
#include "models/queueing/little.hpp"
#include "models/queueing/mmck.hpp"
#include "models/queueing/usl.hpp"

using namespace poolsim::queueing;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

// Stationary M/M/c/K distribution from the product form, in log space.
std::vector<double> product_form(int c, int capacity, double a) {
  std::vector<double> log_w(capacity + 1);
  for (int n = 0; n <= capacity; ++n)
    log_w[n] = n <= c ? n * std::log(a) - std::lgamma(n + 1.0)
                      : c * std::log(a) - std::lgamma(c + 1.0) + (n - c) * std::log(a / c);
  double top = log_w[0];
  for (double v : log_w) top = std::max(top, v);
  double total = 0;
  for (double& v : log_w) total += (v = std::exp(v - top));
  for (double& v : log_w) v /= total;
  return log_w;
}

// Trapezoid integral of a survival function over [0, horizon]: the mean when the
// tail beyond the horizon is negligible.
template <class F>
double integrate_survival(F survival, double horizon, int steps) {
  const double h = horizon / steps;
  double s = 0.5 * (survival(0.0) + survival(horizon));
  for (int i = 1; i < steps; ++i) s += survival(i * h);
  return s * h;
}

}  // namespace

TEST_CASE("queueing.erlang: Erlang B matches exact values and the published grade-of-service table",
          "[queueing][erlang]") {
  CHECK_THAT(erlang_b(0, 3.0), WithinAbs(1.0, 1e-15));
  CHECK_THAT(erlang_b(1, 1.0), WithinAbs(0.5, 1e-15));
  CHECK_THAT(erlang_b(2, 1.0), WithinAbs(0.2, 1e-15));
  CHECK_THAT(erlang_b(3, 2.0), WithinAbs(4.0 / 19.0, 1e-15));
  CHECK_THAT(erlang_b(5, 2.0), WithinAbs(0.036697247706422018, 1e-14));   // mpmath
  CHECK_THAT(erlang_b(10, 5.0), WithinAbs(0.018384570336648133, 1e-14));  // mpmath
  // Erlang B table (traffic in Erlangs carried at 1% and 5% blocking), entries
  // given to 3 decimals, so the blocking is matched to 1e-4.
  struct Entry {
    int c;
    double a;
    double blocking;
  };
  const Entry table[] = {{10, 4.461, 0.01},   {20, 12.031, 0.01}, {50, 37.901, 0.01},
                         {100, 84.064, 0.01}, {10, 6.216, 0.05},  {20, 15.249, 0.05},
                         {100, 95.24, 0.05}};
  for (const Entry& e : table) {
    INFO("c = " << e.c << ", a = " << e.a);
    CHECK_THAT(erlang_b(e.c, e.a), WithinAbs(e.blocking, 1e-4));
  }
}

TEST_CASE("queueing.erlang: Erlang C matches closed forms and exact table values",
          "[queueing][erlang]") {
  CHECK_THAT(erlang_c(2, 1.0), WithinAbs(1.0 / 3.0, 1e-15));
  CHECK_THAT(erlang_c(3, 2.0), WithinAbs(4.0 / 9.0, 1e-15));
  for (double rho : {0.1, 0.5, 0.9, 0.99}) CHECK_THAT(erlang_c(1, rho), WithinAbs(rho, 1e-15));
  struct Entry {
    int c;
    double a;
    double prob_wait;
  };
  const Entry table[] = {// mpmath
                         {5, 3, 0.23615160349854227},   {10, 8, 0.40918015079644353},
                         {10, 9, 0.668731524107697},    {12, 10, 0.44938822429827087},
                         {13, 10, 0.28527045303649294}, {20, 15, 0.16042938741692362},
                         {50, 45, 0.36386446720698839}, {100, 90, 0.21694048090636638},
                         {100, 95, 0.50645685391302059}};
  for (const Entry& e : table) {
    INFO("c = " << e.c << ", a = " << e.a);
    CHECK_THAT(erlang_c(e.c, e.a), WithinAbs(e.prob_wait, 1e-12));
  }
  // A load the servers cannot carry: everyone waits.
  CHECK(erlang_c(4, 4.0) == 1.0);
  CHECK(erlang_c(4, 7.5) == 1.0);
}

TEST_CASE("queueing.erlang: Erlang B and C stay exact for thousands of servers",
          "[queueing][erlang]") {
  CHECK_THAT(erlang_c(1000, 950), WithinRel(0.068253415377141424, 1e-10));     // mpmath
  CHECK_THAT(erlang_b(10000, 9900), WithinRel(0.0028581267388565864, 1e-10));  // mpmath
  CHECK_THAT(erlang_c(10000, 9900), WithinRel(0.22277692886414824, 1e-10));    // mpmath
  // Far below the load, B underflows gracefully to 0 instead of becoming NaN.
  const double tiny = erlang_b(10000, 10.0);
  CHECK(tiny >= 0.0);
  CHECK(tiny < 1e-300);
  CHECK(erlang_c(10000, 10.0) == tiny * 10000 / (10000 - 10.0 * (1 - tiny)));
}

TEST_CASE("queueing.mmc: M/M/1 from the M/M/c model is the textbook M/M/1", "[queueing][mmc]") {
  // lambda = 0.8, mu = 1: Wq = rho / (mu - lambda) = 4, W = 1 / (mu - lambda) = 5.
  const MmcResult r = mmc(1, 0.8, 1.0);
  CHECK_THAT(r.offered_load, WithinAbs(0.8, 1e-15));
  CHECK_THAT(r.utilization, WithinAbs(0.8, 1e-15));
  CHECK_THAT(r.prob_wait, WithinAbs(0.8, 1e-15));
  CHECK_THAT(r.mean_wait, WithinRel(4.0, 1e-12));
  CHECK_THAT(r.mean_response, WithinRel(5.0, 1e-12));
  CHECK_THAT(r.mean_in_system, WithinRel(4.0, 1e-12));
  CHECK_THAT(r.mean_in_queue, WithinRel(3.2, 1e-12));
  // The response time is exponential with rate mu - lambda = 0.2.
  for (double t : {0.1, 1.0, 5.0, 20.0, 60.0})
    CHECK_THAT(mmc_response_exceeds(1, 0.8, 1.0, t), WithinRel(std::exp(-0.2 * t), 1e-12));
  CHECK_THAT(r.response_p50, WithinRel(std::log(2.0) / 0.2, 1e-10));
  CHECK_THAT(r.response_p90, WithinRel(std::log(10.0) / 0.2, 1e-10));
  CHECK_THAT(r.response_p99, WithinRel(std::log(100.0) / 0.2, 1e-10));
}

TEST_CASE("queueing.mmc: M/M/2 with theta = mu uses the Erlang-2 limit", "[queueing][mmc]") {
  // c = 2, lambda = mu = 1: C = 1/3, theta = 2 - 1 = mu, Wq = 1/3, W = 4/3, and
  // P(T > t) = (1 - C) e^{-t} + C (1 + t) e^{-t}.
  const MmcResult r = mmc(2, 1.0, 1.0);
  CHECK_THAT(r.mean_wait, WithinRel(1.0 / 3.0, 1e-12));
  CHECK_THAT(r.mean_response, WithinRel(4.0 / 3.0, 1e-12));
  for (double t : {0.0, 0.5, 1.0, 3.0, 10.0}) {
    const double expected = (2.0 / 3.0) * std::exp(-t) + (1.0 / 3.0) * (1 + t) * std::exp(-t);
    CHECK_THAT(mmc_response_exceeds(2, 1.0, 1.0, t), WithinRel(expected, 1e-12));
  }
  // Nearly equal rates take the expm1 path and agree with the limit.
  CHECK_THAT(mmc_response_exceeds(2, 1.0 - 1e-9, 1.0, 2.0),
             WithinRel(mmc_response_exceeds(2, 1.0, 1.0, 2.0), 1e-7));
}

TEST_CASE("queueing.mmc: the waiting-time distribution and its quantiles are consistent",
          "[queueing][mmc]") {
  const int c = 10;
  const double lambda = 8, mu = 1;
  const double prob_wait = erlang_c(c, lambda / mu);
  CHECK_THAT(mmc_wait_exceeds(c, lambda, mu, 0.0), WithinAbs(prob_wait, 1e-15));
  CHECK_THAT(mmc_wait_exceeds(c, lambda, mu, 1.5),
             WithinRel(prob_wait * std::exp(-2.0 * 1.5), 1e-12));
  // Arrivals that do not wait: quantiles up to 1 - C are zero.
  CHECK(mmc_wait_quantile(c, lambda, mu, 0.5) == 0.0);
  for (double q : {0.7, 0.9, 0.99, 0.999}) {
    const double t = mmc_wait_quantile(c, lambda, mu, q);
    CHECK(t > 0);
    CHECK_THAT(mmc_wait_exceeds(c, lambda, mu, t), WithinRel(1 - q, 1e-12));
  }
  // The mean waiting time is the integral of its survival function.
  const double mean = integrate_survival(
      [&](double t) { return mmc_wait_exceeds(c, lambda, mu, t); }, 30.0, 200000);
  CHECK_THAT(mean, WithinRel(mmc(c, lambda, mu).mean_wait, 1e-6));
}

TEST_CASE("queueing.mmc: response-time quantiles invert the survival function and are monotone",
          "[queueing][mmc]") {
  struct Case {
    int c;
    double lambda, mu;
  };
  for (const Case& k :
       {Case{1, 0.5, 1.0}, Case{4, 3.5, 1.0}, Case{66, 1500, 25}, Case{2, 1.0, 1.0}}) {
    INFO("c = " << k.c << ", lambda = " << k.lambda << ", mu = " << k.mu);
    double previous = 0;
    for (double q : {0.01, 0.25, 0.5, 0.9, 0.99, 0.999}) {
      const double t = mmc_response_quantile(k.c, k.lambda, k.mu, q);
      CHECK(t > previous);
      CHECK_THAT(mmc_response_exceeds(k.c, k.lambda, k.mu, t), WithinRel(1 - q, 1e-9));
      previous = t;
    }
    const MmcResult r = mmc(k.c, k.lambda, k.mu);
    // The response time is at least the service time: its quantile is at least S's.
    CHECK(r.response_p99 >= std::log(100.0) / k.mu);
    // Little's law holds inside the result.
    CHECK_THAT(r.mean_in_system, WithinRel(k.lambda * r.mean_response, 1e-12));
    // The mean is the integral of the survival function.
    const double horizon = 60 * r.mean_response;
    const double mean = integrate_survival(
        [&](double t) { return mmc_response_exceeds(k.c, k.lambda, k.mu, t); }, horizon, 400000);
    CHECK_THAT(mean, WithinRel(r.mean_response, 1e-6));
  }
}

namespace {

// Exact M/D/1 waiting-time CDF with D = 1 (Erlang 1909; Crommelin 1932):
// P(W <= t) = (1 - rho) sum_{k=0..floor(t)} e^{rho (t - k)} (rho (k - t))^k / k!.
// The sum alternates; long double keeps it exact to ~1e-10 for t <= 30.
double md1_wait_cdf(double rho, double t) {
  long double sum = 0;
  for (int k = 0; k <= static_cast<int>(std::floor(t)); ++k) {
    const long double u = rho * (static_cast<long double>(k) - t);
    sum += std::exp(-u) * std::pow(u, k) / std::tgamma(k + 1.0L);
  }
  return static_cast<double>((1 - rho) * sum);
}

double md1_wait_quantile(double rho, double q) {
  double lo = 0, hi = 30;
  for (int i = 0; i < 100; ++i)
    (md1_wait_cdf(rho, 0.5 * (lo + hi)) < q ? lo : hi) = 0.5 * (lo + hi);
  return 0.5 * (lo + hi);
}

}  // namespace

TEST_CASE("queueing.mdc: the approximation is exact in the mean for M/D/1 and close in the tail",
          "[queueing][mdc]") {
  // Pollaczek-Khinchine for M/D/1: Wq = rho D / (2 (1 - rho)).
  for (double rho : {0.3, 0.8, 0.95})
    CHECK_THAT(mdc_mean_wait(1, rho, 1.0), WithinRel(rho / (2 * (1 - rho)), 1e-12));
  // Half the M/M/c wait at any c, with the same probability of waiting.
  CHECK_THAT(mdc_mean_wait(10, 8, 1), WithinRel(0.5 * mmc(10, 8, 1).mean_wait, 1e-12));
  CHECK(mdc_wait_quantile(10, 8, 1, 0.5) == 0.0);
  // The exact quantiles of the test's reference (cross-checked with mpmath at 120
  // digits: 1.5157, 3.3363, 10.3559, 10.7825, 21.8982).
  CHECK_THAT(md1_wait_quantile(0.5, 0.90), WithinAbs(1.5157, 1e-3));
  CHECK_THAT(md1_wait_quantile(0.9, 0.99), WithinAbs(21.8982, 1e-3));
  struct Case {
    double rho, q, max_overestimate;
  };
  for (const Case& k : {Case{0.5, 0.90, 0.05}, Case{0.5, 0.99, 0.15}, Case{0.8, 0.99, 0.06},
                        Case{0.9, 0.90, 0.03}, Case{0.9, 0.99, 0.04}}) {
    INFO("rho = " << k.rho << ", q = " << k.q);
    const double exact = md1_wait_quantile(k.rho, k.q) + 1.0;
    const double approx = mdc_response_quantile(1, k.rho, 1.0, k.q);
    CHECK(approx >= exact);
    CHECK(approx <= exact * (1 + k.max_overestimate));
  }
}

TEST_CASE("queueing.mmc: an unstable queue and bad arguments are refused", "[queueing][mmc]") {
  CHECK_FALSE(mmc_stable(4, 4.0, 1.0));
  CHECK(mmc_stable(4, 3.99, 1.0));
  CHECK_THROWS_AS(mmc(4, 4.0, 1.0), std::invalid_argument);
  CHECK_THROWS_WITH(mmc(4, 6.0, 1.0), Catch::Contains("utilisation 1.5"));
  CHECK_THROWS_AS(mmc(0, 1.0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(mmc(2, -1.0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(mmc_response_quantile(2, 1.0, 1.0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(erlang_b(-1, 1.0), std::invalid_argument);
}

TEST_CASE("queueing.mmc: smallest_servers_for finds the boundary pool size", "[queueing][mmc]") {
  // The example: 1500 requests/s, each holding a thread for 2 ms CPU + 38 ms
  // wait: mu = 25/s, a = 60 Erlangs.
  const double lambda = 1500, mu = 25;
  SECTION("a p99 target") {
    // Exponential service of mean 40 ms alone has p99 = ln(100) * 40 ms = 184 ms.
    const auto c = smallest_servers_for(lambda, mu, ResponseTarget::at_quantile(0.99, 0.200));
    REQUIRE(c);
    CHECK(mmc_response_quantile(*c, lambda, mu, 0.99) <= 0.200);
    REQUIRE(mmc_stable(*c - 1, lambda, mu));
    CHECK(mmc_response_quantile(*c - 1, lambda, mu, 0.99) > 0.200);
    // A brute-force scan from the smallest stable pool finds the same size.
    int scan = 61;
    while (mmc_response_quantile(scan, lambda, mu, 0.99) > 0.200) ++scan;
    CHECK(*c == scan);
  }
  SECTION("a mean target") {
    const auto c = smallest_servers_for(lambda, mu, ResponseTarget::mean(0.041));
    REQUIRE(c);
    CHECK(mmc(*c, lambda, mu).mean_response <= 0.041);
    CHECK(mmc(*c - 1, lambda, mu).mean_response > 0.041);
  }
  SECTION("a p99 target with fixed service times") {
    // 40 ms fixed: a 100 ms p99 is reachable, which no exponential model allows.
    const ResponseTarget target =
        ResponseTarget::at_quantile(0.99, 0.100, ServiceShape::deterministic);
    const auto c = smallest_servers_for(lambda, mu, target);
    REQUIRE(c);
    CHECK(mdc_response_quantile(*c, lambda, mu, 0.99) <= 0.100);
    CHECK(mdc_response_quantile(*c - 1, lambda, mu, 0.99) > 0.100);
    CHECK_FALSE(
        smallest_servers_for(lambda, mu, ResponseTarget::mean(0.040, ServiceShape::deterministic)));
    const auto by_mean =
        smallest_servers_for(lambda, mu, ResponseTarget::mean(0.041, ServiceShape::deterministic));
    REQUIRE(by_mean);
    CHECK(mdc_mean_wait(*by_mean, lambda, mu) <= 0.001);
    CHECK(mdc_mean_wait(*by_mean - 1, lambda, mu) > 0.001);
  }
  SECTION("a loose target is met by the smallest stable pool") {
    CHECK(smallest_servers_for(1.0, 1.0, ResponseTarget::mean(1000.0)) == 2);
  }
  SECTION("targets no pool can meet") {
    // The service time alone has p99 = ln(100) / 25 = 184 ms.
    CHECK_FALSE(smallest_servers_for(lambda, mu, ResponseTarget::at_quantile(0.99, 0.180)));
    CHECK_FALSE(smallest_servers_for(lambda, mu, ResponseTarget::mean(0.040)));
    // Feasible, but not within the allowed number of servers.
    CHECK_FALSE(smallest_servers_for(lambda, mu, ResponseTarget::at_quantile(0.99, 0.190), 60));
  }
  SECTION("thousands of servers") {
    const auto c = smallest_servers_for(250000, 25, ResponseTarget::at_quantile(0.99, 0.19));
    REQUIRE(c);
    CHECK(*c > 10000);
    CHECK(mmc_response_quantile(*c, 250000, 25, 0.99) <= 0.19);
    CHECK(mmc_response_quantile(*c - 1, 250000, 25, 0.99) > 0.19);
  }
}

TEST_CASE("queueing.mmck: the generator is a birth-death generator", "[queueing][mmck]") {
  const auto q = mmck_generator(3, 6, 2.0, 1.0);
  REQUIRE(q.rows() == 7);
  REQUIRE(q.cols() == 7);
  const Eigen::MatrixXd dense(q);
  for (int n = 0; n <= 6; ++n) CHECK_THAT(dense.row(n).sum(), WithinAbs(0.0, 1e-15));
  CHECK(dense(0, 1) == 2.0);
  CHECK(dense(6, 5) == 3.0);  // min(6, 3) servers busy
  CHECK(dense(2, 1) == 2.0);
  CHECK(dense(6, 6) == -3.0);  // no arrivals into a full system
  CHECK_THROWS_AS(mmck_generator(3, 2, 1.0, 1.0), std::invalid_argument);
}

TEST_CASE("queueing.mmck: the GTH solver matches a dense LU solve and keeps tiny tails exact",
          "[queueing][mmck]") {
  // A chain with bandwidth 2 (jumps of +-1 and +-2), not a birth-death chain.
  const int n_states = 7;
  std::vector<Eigen::Triplet<double>> rates;
  for (int i = 0; i < n_states; ++i) {
    if (i + 1 < n_states) rates.emplace_back(i, i + 1, 1.0 + 0.1 * i);
    if (i + 2 < n_states) rates.emplace_back(i, i + 2, 0.5);
    if (i >= 1) rates.emplace_back(i, i - 1, 2.0);
    if (i >= 2) rates.emplace_back(i, i - 2, 0.25 * i);
  }
  Eigen::SparseMatrix<double> q(n_states, n_states);
  q.setFromTriplets(rates.begin(), rates.end());
  const Eigen::VectorXd pi = ctmc_stationary(q);
  // Independent solution: Q^T pi = 0 with the last equation replaced by sum pi = 1.
  Eigen::MatrixXd dense(q);
  for (int i = 0; i < n_states; ++i) dense(i, i) = -dense.row(i).sum();
  Eigen::MatrixXd system = dense.transpose();
  system.row(n_states - 1).setOnes();
  Eigen::VectorXd rhs = Eigen::VectorXd::Zero(n_states);
  rhs(n_states - 1) = 1;
  const Eigen::VectorXd expected = system.fullPivLu().solve(rhs);
  for (int i = 0; i < n_states; ++i) CHECK_THAT(pi(i), WithinRel(expected(i), 1e-12));
  CHECK_THAT((pi.transpose() * dense).norm(), WithinAbs(0.0, 1e-14));

  // M/M/1/K with rho = 0.8, K = 400: pi_n = (1 - rho) rho^n / (1 - rho^{K+1}) down to 1e-39.
  const MmckResult r = mmck(1, 400, 0.8, 1.0);
  for (int n : {0, 30, 100, 200, 400}) {
    INFO("n = " << n);
    CHECK_THAT(r.state_probabilities[n],
               WithinRel(0.2 * std::pow(0.8, n) / (1 - std::pow(0.8, 401)), 1e-12));
  }
  // A reducible chain (state 2 cannot be left downwards) is refused.
  Eigen::SparseMatrix<double> broken(3, 3);
  broken.insert(0, 1) = 1.0;
  broken.insert(1, 2) = 1.0;
  CHECK_THROWS_AS(ctmc_stationary(broken), std::invalid_argument);
}

TEST_CASE("queueing.mmck: K = c is the Erlang loss system", "[queueing][mmck]") {
  struct Case {
    int c;
    double a;
  };
  for (const Case& k : {Case{1, 1.0}, Case{2, 1.0}, Case{5, 2.0}, Case{10, 4.461}, Case{100, 95.24},
                        Case{30, 60.0}}) {
    INFO("c = " << k.c << ", a = " << k.a);
    const MmckResult r = mmck(k.c, k.c, k.a * 2.0, 2.0);
    CHECK_THAT(r.blocking_probability, WithinAbs(erlang_b(k.c, k.a), 1e-12));
    CHECK(r.mean_wait == 0.0);
    CHECK(r.prob_wait == 0.0);
    // Nobody waits, so the response time is the exponential service time.
    CHECK_THAT(r.mean_response, WithinRel(0.5, 1e-10));
    CHECK_THAT(mmck_response_exceeds(r, 1.0), WithinRel(std::exp(-2.0), 1e-12));
  }
}

TEST_CASE("queueing.mmck: M/M/1/K matches its closed form", "[queueing][mmck]") {
  for (double rho : {0.5, 0.8, 1.0, 1.5}) {
    INFO("rho = " << rho);
    const int capacity = 10;
    const MmckResult r = mmck(1, capacity, rho, 1.0);
    double norm = 0;
    for (int n = 0; n <= capacity; ++n) norm += std::pow(rho, n);
    double mean_n = 0;
    for (int n = 0; n <= capacity; ++n) {
      const double pn = std::pow(rho, n) / norm;
      CHECK_THAT(r.state_probabilities[n], WithinAbs(pn, 1e-13));
      mean_n += n * pn;
    }
    CHECK_THAT(r.blocking_probability, WithinRel(std::pow(rho, capacity) / norm, 1e-11));
    CHECK_THAT(r.mean_in_system, WithinRel(mean_n, 1e-11));
    if (rho != 1.0) {
      // Gross et al. eq. (2.46): L = rho/(1-rho) - (K+1) rho^{K+1} / (1 - rho^{K+1}).
      const double closed = rho / (1 - rho) - (capacity + 1) * std::pow(rho, capacity + 1) /
                                                  (1 - std::pow(rho, capacity + 1));
      CHECK_THAT(r.mean_in_system, WithinRel(closed, 1e-11));
    }
    // An admitted customer who finds n present leaves after n + 1 exponential
    // services: T ~ Erlang(n + 1, mu), so P(T > t) = sum_n w_n P(Poisson(mu t) <= n).
    for (double t : {0.3, 2.0, 7.0, 15.0}) {
      double expected = 0;
      double pois = std::exp(-t), cumulative = 0;
      for (int n = 0; n < capacity; ++n) {
        cumulative += pois;
        expected += r.state_probabilities[n] / (1 - r.blocking_probability) * cumulative;
        pois *= t / (n + 1);
      }
      CHECK_THAT(mmck_response_exceeds(r, t), WithinRel(expected, 1e-11));
    }
  }
}

TEST_CASE("queueing.mmck: M/M/c/K matches the product form", "[queueing][mmck]") {
  struct Case {
    int c, capacity;
    double a;
  };
  for (const Case& k :
       {Case{4, 20, 3.5}, Case{4, 20, 6.0}, Case{16, 200, 15.0}, Case{50, 1000, 60.0}}) {
    INFO("c = " << k.c << ", K = " << k.capacity << ", a = " << k.a);
    const MmckResult r = mmck(k.c, k.capacity, k.a * 25.0, 25.0);
    const std::vector<double> expected = product_form(k.c, k.capacity, k.a);
    double max_error = 0;
    for (int n = 0; n <= k.capacity; ++n)
      max_error = std::max(max_error, std::abs(r.state_probabilities[n] - expected[n]));
    CHECK(max_error < 1e-12);
    CHECK_THAT(r.blocking_probability, WithinRel(expected[k.capacity], 1e-8));
    // Little's law on the admitted flow, and flow balance: the admitted rate equals
    // mu times the mean number of busy servers.
    CHECK_THAT(r.mean_in_system, WithinRel(r.throughput * r.mean_response, 1e-12));
    CHECK_THAT(r.mean_in_queue, WithinRel(r.throughput * r.mean_wait, 1e-12));
    double busy = 0;
    for (int n = 0; n <= k.capacity; ++n) busy += std::min(n, k.c) * r.state_probabilities[n];
    CHECK_THAT(r.throughput, WithinRel(busy * 25.0, 1e-10));
    CHECK_THAT(r.mean_response, WithinRel(r.mean_wait + 1 / 25.0, 1e-10));
  }
}

TEST_CASE("queueing.mmck: a large K converges to M/M/c", "[queueing][mmck]") {
  const int c = 4;
  const double lambda = 3, mu = 1;
  const MmckResult r = mmck(c, 400, lambda, mu);
  const MmcResult inf = mmc(c, lambda, mu);
  CHECK(r.blocking_probability < 1e-40);
  CHECK_THAT(r.blocking_probability, WithinRel(product_form(c, 400, lambda / mu)[400], 1e-10));
  CHECK_THAT(r.prob_wait, WithinRel(inf.prob_wait, 1e-10));
  CHECK_THAT(r.mean_wait, WithinRel(inf.mean_wait, 1e-10));
  CHECK_THAT(r.mean_response, WithinRel(inf.mean_response, 1e-10));
  CHECK_THAT(r.mean_in_system, WithinRel(inf.mean_in_system, 1e-10));
  for (double t : {0.2, 1.0, 4.0, 12.0})
    CHECK_THAT(mmck_response_exceeds(r, t),
               WithinRel(mmc_response_exceeds(c, lambda, mu, t), 1e-10));
  CHECK_THAT(mmck_response_quantile(r, 0.99), WithinRel(inf.response_p99, 1e-9));
  CHECK_THAT(mmck_response_quantile(r, 0.5), WithinRel(inf.response_p50, 1e-9));
}

TEST_CASE("queueing.mmck: response quantiles under overload stay finite and ordered",
          "[queueing][mmck]") {
  // 1500/s offered to 50 threads of 25/s (capacity 1250/s) with 950 queue slots.
  const MmckResult r = mmck(50, 1000, 1500, 25);
  CHECK_THAT(r.throughput, WithinRel(1250.0, 1e-3));  // the servers saturate
  CHECK_THAT(r.blocking_probability, WithinRel(1.0 / 6.0, 1e-2));
  const double p50 = mmck_response_quantile(r, 0.5);
  const double p99 = mmck_response_quantile(r, 0.99);
  CHECK(std::isfinite(p99));
  CHECK(p50 < p99);
  CHECK_THAT(mmck_response_exceeds(r, p99), WithinRel(0.01, 1e-8));
  // Nearly full on arrival: about 950 queued ahead at 1250/s, so around 0.76 s.
  CHECK(p50 > 0.6);
  CHECK(p99 < 0.95);
  // The mean is the integral of the survival function.
  const double mean =
      integrate_survival([&](double t) { return mmck_response_exceeds(r, t); }, 2.0, 4000);
  CHECK_THAT(mean, WithinRel(r.mean_response, 1e-5));
}

TEST_CASE("queueing.usl: the fit recovers known parameters from exact data", "[queueing][usl]") {
  const UslParams truth{1000.0, 0.05, 0.001};
  std::vector<UslPoint> points;
  for (double n : {1, 2, 4, 8, 16, 24, 32, 48, 64}) points.push_back({n, usl_throughput(truth, n)});
  const UslFit fit = fit_usl(points);
  CHECK_THAT(fit.params.lambda, WithinRel(1000.0, 1e-8));
  CHECK_THAT(fit.params.sigma, WithinRel(0.05, 1e-7));
  CHECK_THAT(fit.params.kappa, WithinRel(0.001, 1e-7));
  CHECK_THAT(fit.r_squared, WithinAbs(1.0, 1e-12));
  REQUIRE(fit.peak_concurrency);
  CHECK_THAT(*fit.peak_concurrency, WithinRel(std::sqrt(0.95 / 0.001), 1e-7));
  REQUIRE(fit.peak_throughput);
  CHECK_THAT(*fit.peak_throughput, WithinRel(usl_throughput(truth, std::sqrt(950.0)), 1e-7));
}

TEST_CASE("queueing.usl: the fit recovers known parameters from noisy data", "[queueing][usl]") {
  const UslParams truth{250.0, 0.08, 0.0005};
  std::mt19937 gen(20240607);  // std::mt19937's sequence is fixed by the standard
  std::normal_distribution<double> noise(0.0, 0.01);  // 1% multiplicative noise
  std::vector<UslPoint> points;
  for (int n = 1; n <= 96; n += 5)
    points.push_back({double(n), usl_throughput(truth, n) * (1 + noise(gen))});
  const UslFit fit = fit_usl(points);
  CHECK_THAT(fit.params.lambda, WithinRel(250.0, 0.05));
  CHECK_THAT(fit.params.sigma, WithinAbs(0.08, 0.01));
  CHECK_THAT(fit.params.kappa, WithinRel(0.0005, 0.2));
  CHECK(fit.r_squared > 0.98);
  CHECK(fit.r_squared < 1.0);
  REQUIRE(fit.peak_concurrency);
  CHECK_THAT(*fit.peak_concurrency, WithinRel(std::sqrt(0.92 / 0.0005), 0.1));
  // The nonlinear fit is at least as good as the true parameters on this data.
  double fit_ss = 0, truth_ss = 0;
  for (const UslPoint& p : points) {
    fit_ss += std::pow(p.throughput - usl_throughput(fit.params, p.concurrency), 2);
    truth_ss += std::pow(p.throughput - usl_throughput(truth, p.concurrency), 2);
  }
  CHECK(fit_ss <= truth_ss);
}

TEST_CASE("queueing.usl: sigma and kappa stay non-negative, no peak without kappa",
          "[queueing][usl]") {
  SECTION("Amdahl data: kappa = 0, no retrograde region") {
    const UslParams truth{100.0, 0.1, 0.0};
    std::vector<UslPoint> points;
    for (double n : {1, 2, 4, 8, 16, 32}) points.push_back({n, usl_throughput(truth, n)});
    const UslFit fit = fit_usl(points);
    CHECK_THAT(fit.params.sigma, WithinRel(0.1, 1e-6));
    CHECK(fit.params.kappa >= 0.0);
    CHECK(fit.params.kappa < 1e-9);
    if (fit.params.kappa == 0.0) CHECK_FALSE(fit.peak_concurrency);
  }
  SECTION("slightly superlinear data pins sigma and kappa at zero") {
    // X = 10 N^1.02 would need a negative sigma: the bound holds it at 0.
    std::vector<UslPoint> points;
    for (double n : {1, 2, 3, 4, 6, 8}) points.push_back({n, 10 * std::pow(n, 1.02)});
    const UslFit fit = fit_usl(points);
    CHECK(fit.params.sigma == 0.0);
    CHECK(fit.params.kappa == 0.0);
    CHECK_FALSE(fit.peak_concurrency);
    CHECK(fit.r_squared > 0.99);
  }
  CHECK_FALSE(usl_peak_concurrency({100.0, 1.2, 0.01}));
  CHECK_THAT(*usl_peak_concurrency({100.0, 0.0, 0.01}), WithinRel(10.0, 1e-15));
}

TEST_CASE("queueing.usl: data that cannot determine three parameters is refused",
          "[queueing][usl]") {
  const std::vector<UslPoint> two{{1, 10}, {2, 19}, {2, 18.5}};
  CHECK_THROWS_WITH(fit_usl(two), Catch::Contains("3 distinct"));
  const std::vector<UslPoint> zero{{1, 10}, {2, 0}, {4, 30}};
  CHECK_THROWS_AS(fit_usl(zero), std::invalid_argument);
  const std::vector<UslPoint> fractional{{0.5, 10}, {2, 19}, {4, 30}};
  CHECK_THROWS_AS(fit_usl(fractional), std::invalid_argument);
}

TEST_CASE("queueing.little: Little's law and the pool-size formulas", "[queueing][little]") {
  // The example: 1500/s, 2 ms CPU + 38 ms wait, 4 cores.
  CHECK_THAT(littles_law_concurrency(1500, 0.040), WithinRel(60.0, 1e-12));
  CHECK_THAT(littles_law_time(60.0, 1500), WithinRel(0.040, 1e-12));
  CHECK_THAT(littles_law_rate(60.0, 0.040), WithinRel(1500.0, 1e-12));
  CHECK_THAT(offered_load(1500, 0.040), WithinRel(60.0, 1e-12));
  CHECK_THAT(cpus_needed(1500, 0.002), WithinRel(3.0, 1e-12));
  CHECK_THAT(cpu_utilization(1500, 0.002, cpu_capacity(4, std::nullopt)), WithinRel(0.75, 1e-12));
  // A 1.5-CPU quota: the same load needs twice the CPUs it has.
  CHECK(cpu_capacity(4, 1.5) == 1.5);
  CHECK(cpu_capacity(2, 8.0) == 2.0);
  CHECK_THAT(cpu_utilization(1500, 0.002, cpu_capacity(4, 1.5)), WithinRel(2.0, 1e-12));
  // Goetz: 4 * 1.0 * (1 + 38/2) = 80; at 75% target utilisation, 60.
  CHECK_THAT(goetz_pool_size(4, 1.0, 0.038, 0.002), WithinRel(80.0, 1e-12));
  CHECK_THAT(goetz_pool_size(4, 0.75, 0.038, 0.002), WithinRel(60.0, 1e-12));
  CHECK_THAT(goetz_pool_size(1.5, 1.0, 0.0, 0.002), WithinRel(1.5, 1e-12));
  CHECK_THROWS_AS(goetz_pool_size(4, 1.2, 0.038, 0.002), std::invalid_argument);
  CHECK_THROWS_AS(goetz_pool_size(4, 1.0, 0.038, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(littles_law_concurrency(-1, 1), std::invalid_argument);
  CHECK_THROWS_AS(cpu_capacity(0, std::nullopt), std::invalid_argument);
  // The same law inside the queueing models: M/M/c's L = lambda W.
  const MmcResult r = mmc(66, 1500, 25);
  CHECK_THAT(r.mean_in_system, WithinRel(littles_law_concurrency(1500, r.mean_response), 1e-12));
}
