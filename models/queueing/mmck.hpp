// mmck.hpp: the M/M/c/K queue (Poisson arrivals at rate lambda, c servers with
// exponential service at rate mu each, room for K customers in all: c in service
// and K - c waiting; an arrival that finds K present is rejected) solved as a
// continuous-time Markov chain.
//
// The state n = 0..K is the number present. The generator Q is the birth-death
// chain Q(n, n+1) = lambda, Q(n, n-1) = min(n, c) mu, Q(n, n) = -(row sum)
// (Gross, Shortle, Thompson, Harris, "Fundamentals of Queueing Theory", 4th ed.,
// 2008, section 2.5). The stationary distribution solves pi Q = 0, sum pi = 1 by
// the GTH state-reduction algorithm (Grassmann, Taksar, Heyman, "Regenerative
// analysis and steady state distributions for Markov chains", Oper. Res. 33(5),
// 1985) on Q stored as an Eigen band: Gaussian elimination that recomputes each
// diagonal as minus its row sum, so it never subtracts, and every probability,
// even a blocking probability of 1e-30, comes out accurate to a few rounding
// errors. (An LU solve of Q^T with one equation replaced by sum pi = 1 is only
// accurate relative to the largest pi_n: it returned 0 for pi_200 = 1e-20 in a
// trial.) Cost O(K b^2) for bandwidth b; M/M/c/K has b = 1. The closed product
// form pi_n ~ a^n / n! (n <= c), a^c / c! rho^{n-c} (n > c) is used only by the tests.
//
// From pi: by PASTA an arrival sees the stationary state, so the blocking
// probability is pi_K, the admitted throughput lambda (1 - pi_K), and Little's law
// on the admitted flow gives W = L / (lambda (1 - pi_K)) and Wq = Lq / the same.
// Response time of an admitted customer who finds n present (FCFS): Exp(mu) if
// n < c; else Erlang(n - c + 1, c mu) (the departures ahead of it) plus Exp(mu).
// Its survival function is evaluated exactly by uniformisation at rate c mu (Grassmann,
// "Transient solutions in Markovian queueing systems", Comput. Oper. Res. 4, 1977):
// P(T > t) = sum_m Poisson(m; c mu t) H(m), where H(m) is the probability that m
// uniformised steps do not finish the customer: a waiting phase advances at every
// step, the service phase ends with probability 1/c per step. The Poisson sum is cut
// when its remaining mass is below 1e-15. Quantiles invert it by bisection.
//
// What it leaves out: exponential service (see erlang.hpp for what that means for
// deterministic CPU work), rejected customers do not retry, no timeouts.
#pragma once

#include <Eigen/Core>
#include <Eigen/SparseCore>
#include <vector>

namespace poolsim::queueing {

struct MmckResult {
  int servers = 0;                          // c
  int capacity = 0;                         // K >= c
  double arrival_rate = 0;                  // lambda (offered)
  double service_rate = 0;                  // mu, per server
  std::vector<double> state_probabilities;  // pi_0 .. pi_K
  double blocking_probability = 0;          // pi_K: an arrival is rejected
  double throughput = 0;                    // lambda (1 - pi_K), admitted and served per second
  double utilization = 0;                   // throughput / (c mu): mean fraction of servers busy
  double prob_wait = 0;                     // an admitted customer finds all c servers busy
  double mean_in_system = 0;                // L = sum n pi_n
  double mean_in_queue = 0;                 // Lq = sum (n - c)+ pi_n
  double mean_response = 0;                 // W = L / throughput
  double mean_wait = 0;                     // Wq = Lq / throughput
};

// The generator matrix Q ((K+1) x (K+1), rows sum to zero). Throws
// std::invalid_argument unless 1 <= c <= K and both rates are positive.
Eigen::SparseMatrix<double> mmck_generator(int c, int capacity, double arrival_rate,
                                           double service_rate);

// The stationary distribution of an irreducible CTMC with generator q (square,
// off-diagonal rates >= 0; the diagonal is ignored and taken as minus the row sum),
// by GTH on q's band. Throws std::invalid_argument on a negative rate or when some
// state cannot reach the states numbered below it (a reducible chain).
Eigen::VectorXd ctmc_stationary(const Eigen::SparseMatrix<double>& q);

// Solves pi Q = 0 with ctmc_stationary and derives the measures above (same argument checks).
MmckResult mmck(int c, int capacity, double arrival_rate, double service_rate);

// P(T > t) for the response time of an admitted customer, and its q-quantile,
// q in (0, 1).
double mmck_response_exceeds(const MmckResult& model, double t);
double mmck_response_quantile(const MmckResult& model, double q);

}  // namespace poolsim::queueing
