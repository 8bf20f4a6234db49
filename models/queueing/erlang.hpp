// erlang.hpp: Erlang B, Erlang C and the M/M/c queue (Poisson arrivals at rate
// lambda, c identical servers with exponential service at rate mu each, FCFS,
// unbounded queue).
//
// Formulas (Kleinrock, "Queueing Systems, Vol. 1", 1975, sections 3.5 and 3.6;
// Gross, Shortle, Thompson, Harris, "Fundamentals of Queueing Theory", 4th ed.,
// 2008, section 2.3), with offered load a = lambda / mu in Erlangs and
// utilisation rho = a / c:
//   Erlang B (loss)   B(c, a) = (a^c / c!) / sum_{k=0..c} a^k / k!
//   Erlang C (delay)  C(c, a) = c B / (c - a (1 - B))        (a < c)
//   P(Wq > t) = C exp(-(c mu - lambda) t),  Wq = C / (c mu - lambda)
//   T = Wq + S, S ~ Exp(mu) independent of Wq (FCFS), so
//   P(T > t) = (1 - C) e^{-mu t} + C P(E_theta + E_mu > t),  theta = c mu - lambda,
//   P(E_x + E_y > t) = e^{-y t} (1 + y (1 - e^{-(x - y) t}) / (x - y)),  y = min(x, y).
// B is computed with the stable recursion B(0) = 1, B(k) = a B(k-1) / (k + a B(k-1))
// (every term in [0, 1], no factorials), so c = 10,000 and beyond stay exact to
// rounding. The response-time quantile has no closed form: it is the root of the
// survival function above, found by bracketing and bisection to a relative 1e-12.
//
// What it leaves out: service times are exponential (coefficient of variation 1);
// a deterministic CPU task has CV 0 and waits about half as long (Pollaczek-Khinchine
// for c = 1; Allen-Cunneen's (1 + CV^2) / 2 factor for c > 1), so M/M/c is a
// conservative bound for such work. No CPU contention between servers (each server
// is a whole CPU or a thread whose time is its own), no abandonment, no bursts.
#pragma once

#include <optional>

namespace poolsim::queueing {

// Erlang B: probability that an arrival finds all c servers busy in the loss
// system M/M/c/c; offered_load_erlangs = lambda / mu >= 0, c >= 0.
double erlang_b(int c, double offered_load_erlangs);

// Erlang C: probability that an arrival waits in M/M/c. For a load the servers
// cannot carry (a >= c) every arrival eventually waits: returns 1.
double erlang_c(int c, double offered_load_erlangs);

// Erlang C from B(c, a) (shared by the incremental server search).
double erlang_c_from_b(int c, double offered_load_erlangs, double erlang_b_value);

// The steady state of an M/M/c queue; times in seconds, rates per second.
struct MmcResult {
  int servers = 0;
  double arrival_rate = 0;    // lambda
  double service_rate = 0;    // mu, per server
  double offered_load = 0;    // a = lambda / mu, Erlangs (busy servers on average)
  double utilization = 0;     // rho = a / c
  double prob_wait = 0;       // Erlang C
  double mean_wait = 0;       // Wq = C / (c mu - lambda)
  double mean_response = 0;   // W = Wq + 1 / mu
  double mean_in_queue = 0;   // Lq = lambda Wq
  double mean_in_system = 0;  // L = lambda W
  double response_p50 = 0;
  double response_p90 = 0;
  double response_p99 = 0;
};

// True when lambda < c mu (the queue has a steady state).
bool mmc_stable(int c, double arrival_rate, double service_rate);

// Throws std::invalid_argument on c < 1, a non-positive rate, or an unstable queue
// (the message gives the utilisation it would need).
MmcResult mmc(int c, double arrival_rate, double service_rate);

// P(Wq > t) and its q-quantile (0 when q <= 1 - C: those arrivals do not wait).
double mmc_wait_exceeds(int c, double arrival_rate, double service_rate, double t);
double mmc_wait_quantile(int c, double arrival_rate, double service_rate, double q);

// P(T > t) for the response time T = Wq + S, and its q-quantile, q in (0, 1).
double mmc_response_exceeds(int c, double arrival_rate, double service_rate, double t);
double mmc_response_quantile(int c, double arrival_rate, double service_rate, double q);

// M/D/c approximation, for fixed service times D = 1/mu (CPU-bound tasks of one
// size). M/D/c has no closed form; this keeps M/M/c's probability of waiting C and
// halves its conditional mean wait, the Allen-Cunneen factor (1 + CV_s^2) / 2 with
// CV_s = 0 (Allen, "Probability, Statistics, and Queueing Theory", 2nd ed., 1990,
// section 6.4), with the wait still exponential given that it is positive:
//   P(Wq > t) ~ C exp(-2 (c mu - lambda) t),  T = Wq + D.
// For c = 1 the mean is exact (Pollaczek-Khinchine); against the exact M/D/1
// waiting-time distribution (Erlang 1909, Crommelin 1932) the p99 of T comes out
// 3% high at rho = 0.9, 5% at 0.8 and 13% at 0.5: it errs on the safe side
// (tests/models/test_queueing.cpp).
double mdc_mean_wait(int c, double arrival_rate, double service_rate);
double mdc_wait_quantile(int c, double arrival_rate, double service_rate, double q);
double mdc_response_quantile(int c, double arrival_rate, double service_rate, double q);

// How service times are distributed: exponential (exact M/M/c) or fixed (the
// M/D/c approximation above).
enum class ServiceShape { exponential, deterministic };

// A response-time target: the mean, or the q-quantile, at most `seconds`.
struct ResponseTarget {
  enum class Statistic { mean, quantile };
  Statistic statistic = Statistic::mean;
  double quantile = 0.5;  // used when statistic == quantile, in (0, 1)
  double seconds = 0;
  ServiceShape service = ServiceShape::exponential;

  static ResponseTarget mean(double seconds, ServiceShape service = ServiceShape::exponential) {
    return {Statistic::mean, 0.5, seconds, service};
  }
  static ResponseTarget at_quantile(double q, double seconds,
                                    ServiceShape service = ServiceShape::exponential) {
    return {Statistic::quantile, q, seconds, service};
  }
};

// No pool is larger than this unless the caller says so: the kernel's default
// threads-max on a small machine is of this order, and Erlang C is exact to
// rounding well beyond it.
inline constexpr int kMaxServersSearched = 1'000'000;

// The smallest c whose M/M/c (or, for ServiceShape::deterministic, approximate
// M/D/c) response time meets the target. std::nullopt when no c can: the target is
// at or below what the service time alone gives (exponential: the mean 1/mu or the
// quantile -ln(1-q)/mu; deterministic: D = 1/mu), or no c <= max_servers meets it.
// Cost O(c): B(c, a) is advanced by one recursion step per candidate.
std::optional<int> smallest_servers_for(double arrival_rate, double service_rate,
                                        const ResponseTarget& target,
                                        int max_servers = kMaxServersSearched);

}  // namespace poolsim::queueing
