// erlang.cpp: Erlang B/C and M/M/c; the formulas and their sources are in erlang.hpp.
#include "models/queueing/erlang.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

namespace poolsim::queueing {
namespace {

// Bisection stops when the bracket is this small relative to its upper end: far
// below any time resolution poolsim reports (nanoseconds on second-scale values).
constexpr double kQuantileRelTolerance = 1e-12;
// A double has 2^11 exponents: 2000 doublings or halvings cover every bracket.
constexpr int kMaxBisectionSteps = 2000;

void check_rates(double arrival_rate, double service_rate) {
  if (!(arrival_rate > 0) || !std::isfinite(arrival_rate))
    throw std::invalid_argument(fmt::format("arrival rate must be positive, got {}", arrival_rate));
  if (!(service_rate > 0) || !std::isfinite(service_rate))
    throw std::invalid_argument(fmt::format("service rate must be positive, got {}", service_rate));
}

void check_quantile(double q) {
  if (!(q > 0 && q < 1))
    throw std::invalid_argument(fmt::format("quantile must be in (0, 1), got {}", q));
}

void check_stable(int c, double arrival_rate, double service_rate) {
  if (c < 1) throw std::invalid_argument(fmt::format("M/M/c needs c >= 1 server, got {}", c));
  check_rates(arrival_rate, service_rate);
  if (!mmc_stable(c, arrival_rate, service_rate))
    throw std::invalid_argument(
        fmt::format("M/M/c is unstable: offered load {:.4g} Erlangs on {} servers is utilisation "
                    "{:.4g} (needs < 1)",
                    arrival_rate / service_rate, c, arrival_rate / (c * service_rate)));
}

// P(E_x + E_y > t) for independent exponentials of rates x, y > 0. With y = min(x, y)
// and d = x - y >= 0: e^{-y t} (1 + y (1 - e^{-d t}) / d), where (1 - e^{-d t}) / d
// -> t as d -> 0 (the Erlang-2 case). expm1 keeps it exact for tiny d.
double sum_of_exponentials_exceeds(double x, double y, double t) {
  if (x < y) std::swap(x, y);
  const double d = x - y;
  const double g = d > 0 ? -std::expm1(-d * t) / d : t;
  return std::exp(-y * t) * (1 + y * g);
}

// P(T > t) given the Erlang C value and theta = c mu - lambda > 0.
double response_exceeds(double prob_wait, double theta, double mu, double t) {
  if (t <= 0) return 1.0;
  const double no_wait = (1 - prob_wait) * std::exp(-mu * t);
  return no_wait + prob_wait * sum_of_exponentials_exceeds(theta, mu, t);
}

// The q-quantile of T: the t where P(T > t) = 1 - q. P(T > t) falls strictly from
// 1 at t = 0, so the root is unique; bracket by doubling from the mean, then bisect.
double response_quantile(double prob_wait, double theta, double mu, double q) {
  const double tail = 1 - q;
  double lo = 0;
  double hi = prob_wait / theta + 1 / mu;
  for (int i = 0; i < kMaxBisectionSteps && response_exceeds(prob_wait, theta, mu, hi) > tail;
       ++i) {
    lo = hi;
    hi *= 2;
  }
  for (int i = 0; i < kMaxBisectionSteps && hi - lo > kQuantileRelTolerance * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (response_exceeds(prob_wait, theta, mu, mid) > tail ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// The q-quantile of the M/D/c approximation's wait: P(Wq > t) = C e^{-2 theta t}.
double deterministic_wait_quantile(double prob_wait, double theta, double q) {
  if (prob_wait <= 1 - q) return 0.0;
  return std::log(prob_wait / (1 - q)) / (2 * theta);
}

}  // namespace

double erlang_b(int c, double offered_load_erlangs) {
  if (c < 0) throw std::invalid_argument(fmt::format("Erlang B needs c >= 0, got {}", c));
  if (!(offered_load_erlangs >= 0) || !std::isfinite(offered_load_erlangs))
    throw std::invalid_argument(
        fmt::format("offered load must be finite and >= 0, got {}", offered_load_erlangs));
  double b = 1.0;
  for (int k = 1; k <= c; ++k) b = offered_load_erlangs * b / (k + offered_load_erlangs * b);
  return b;
}

double erlang_c_from_b(int c, double offered_load_erlangs, double erlang_b_value) {
  if (offered_load_erlangs >= c) return 1.0;
  const double b = erlang_b_value;
  return c * b / (c - offered_load_erlangs * (1 - b));
}

double erlang_c(int c, double offered_load_erlangs) {
  if (c < 1) throw std::invalid_argument(fmt::format("Erlang C needs c >= 1, got {}", c));
  return erlang_c_from_b(c, offered_load_erlangs, erlang_b(c, offered_load_erlangs));
}

bool mmc_stable(int c, double arrival_rate, double service_rate) {
  return c >= 1 && arrival_rate < c * service_rate;
}

MmcResult mmc(int c, double arrival_rate, double service_rate) {
  check_stable(c, arrival_rate, service_rate);
  MmcResult r;
  r.servers = c;
  r.arrival_rate = arrival_rate;
  r.service_rate = service_rate;
  r.offered_load = arrival_rate / service_rate;
  r.utilization = r.offered_load / c;
  r.prob_wait = erlang_c(c, r.offered_load);
  const double theta = c * service_rate - arrival_rate;
  r.mean_wait = r.prob_wait / theta;
  r.mean_response = r.mean_wait + 1 / service_rate;
  r.mean_in_queue = arrival_rate * r.mean_wait;
  r.mean_in_system = arrival_rate * r.mean_response;
  r.response_p50 = response_quantile(r.prob_wait, theta, service_rate, 0.50);
  r.response_p90 = response_quantile(r.prob_wait, theta, service_rate, 0.90);
  r.response_p99 = response_quantile(r.prob_wait, theta, service_rate, 0.99);
  return r;
}

double mmc_wait_exceeds(int c, double arrival_rate, double service_rate, double t) {
  check_stable(c, arrival_rate, service_rate);
  if (t < 0) return 1.0;
  const double prob_wait = erlang_c(c, arrival_rate / service_rate);
  return prob_wait * std::exp(-(c * service_rate - arrival_rate) * t);
}

double mmc_wait_quantile(int c, double arrival_rate, double service_rate, double q) {
  check_stable(c, arrival_rate, service_rate);
  check_quantile(q);
  const double prob_wait = erlang_c(c, arrival_rate / service_rate);
  if (prob_wait <= 1 - q) return 0.0;
  return std::log(prob_wait / (1 - q)) / (c * service_rate - arrival_rate);
}

double mmc_response_exceeds(int c, double arrival_rate, double service_rate, double t) {
  check_stable(c, arrival_rate, service_rate);
  const double prob_wait = erlang_c(c, arrival_rate / service_rate);
  return response_exceeds(prob_wait, c * service_rate - arrival_rate, service_rate, t);
}

double mmc_response_quantile(int c, double arrival_rate, double service_rate, double q) {
  check_stable(c, arrival_rate, service_rate);
  check_quantile(q);
  const double prob_wait = erlang_c(c, arrival_rate / service_rate);
  return response_quantile(prob_wait, c * service_rate - arrival_rate, service_rate, q);
}

double mdc_mean_wait(int c, double arrival_rate, double service_rate) {
  check_stable(c, arrival_rate, service_rate);
  return erlang_c(c, arrival_rate / service_rate) / (2 * (c * service_rate - arrival_rate));
}

double mdc_wait_quantile(int c, double arrival_rate, double service_rate, double q) {
  check_stable(c, arrival_rate, service_rate);
  check_quantile(q);
  const double prob_wait = erlang_c(c, arrival_rate / service_rate);
  return deterministic_wait_quantile(prob_wait, c * service_rate - arrival_rate, q);
}

double mdc_response_quantile(int c, double arrival_rate, double service_rate, double q) {
  return mdc_wait_quantile(c, arrival_rate, service_rate, q) + 1 / service_rate;
}

std::optional<int> smallest_servers_for(double arrival_rate, double service_rate,
                                        const ResponseTarget& target, int max_servers) {
  check_rates(arrival_rate, service_rate);
  if (!(target.seconds > 0) || !std::isfinite(target.seconds))
    throw std::invalid_argument(
        fmt::format("target time must be positive, got {}", target.seconds));
  const bool by_quantile = target.statistic == ResponseTarget::Statistic::quantile;
  const bool fixed_service = target.service == ServiceShape::deterministic;
  if (by_quantile) check_quantile(target.quantile);

  // With infinitely many servers nobody waits and T = S: a target at or below S's
  // own mean or quantile cannot be met by any pool.
  const double service_only = by_quantile && !fixed_service
                                  ? -std::log1p(-target.quantile) / service_rate
                                  : 1 / service_rate;
  if (target.seconds <= service_only) return std::nullopt;

  // Start at the smallest stable c and advance B(c, a) one recursion step per
  // candidate. The response time falls as c grows, so the first c that meets the
  // target is the answer; C(c, a) -> 0 as c grows, so the loop ends.
  const double a = arrival_rate / service_rate;
  if (a + 1 > max_servers) return std::nullopt;
  int c = static_cast<int>(std::floor(a)) + 1;
  double b = erlang_b(c, a);
  for (; c <= max_servers; ++c) {  // invariant: b == B(c, a)
    const double theta = c * service_rate - arrival_rate;
    if (theta > 0) {
      const double prob_wait = erlang_c_from_b(c, a, b);
      double value = 0;
      if (fixed_service)
        value = (by_quantile ? deterministic_wait_quantile(prob_wait, theta, target.quantile)
                             : prob_wait / (2 * theta)) +
                1 / service_rate;
      else
        value = by_quantile ? response_quantile(prob_wait, theta, service_rate, target.quantile)
                            : prob_wait / theta + 1 / service_rate;
      if (value <= target.seconds) return c;
    }
    b = a * b / (c + 1 + a * b);
  }
  return std::nullopt;
}

}  // namespace poolsim::queueing
