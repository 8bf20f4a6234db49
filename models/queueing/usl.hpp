// usl.hpp: the Universal Scalability Law and its least-squares fit.
//
// X(N) = lambda N / (1 + sigma (N - 1) + kappa N (N - 1))
// (N. J. Gunther, "Guerrilla Capacity Planning", Springer 2007, chapter 4):
// lambda is the throughput of one worker, sigma the contention (serial fraction,
// Amdahl), kappa the coherency cost (pairwise crosstalk). dX/dN = 0 at
// N* = sqrt((1 - sigma) / kappa): past it, more threads lower the throughput.
//
// Fit: minimise sum_i (X_i - X(N_i))^2 over lambda > 0, sigma >= 0, kappa >= 0.
//   1. Initial guess from the linearisation N / X = (1 + sigma (N-1) + kappa N (N-1)) / lambda,
//      linear in (1/lambda, sigma/lambda, kappa/lambda): ordinary least squares with
//      Eigen (column-pivoting QR), clipped to the bounds.
//   2. Levenberg-Marquardt on the nonlinear residuals (Marquardt 1963, with the
//      scaled damping diag(J^T J)), projected onto sigma, kappa >= 0 after each
//      step; a step is kept only if it lowers the residual sum of squares.
// R^2 = 1 - SS_res / SS_tot on the throughput values.
//
// What it leaves out: weights (every point counts the same in absolute throughput,
// so high-throughput points dominate), confidence intervals, the N < 1 region.
#pragma once

#include <optional>
#include <span>

namespace poolsim::queueing {

struct UslPoint {
  double concurrency = 0;  // N >= 1 (threads, clients)
  double throughput = 0;   // X(N) > 0, per second
};

struct UslParams {
  double lambda = 0;  // throughput of one worker
  double sigma = 0;   // contention >= 0
  double kappa = 0;   // coherency >= 0
};

// X(N) for the given parameters.
double usl_throughput(const UslParams& params, double concurrency);

// N* = sqrt((1 - sigma) / kappa); std::nullopt when kappa == 0 (throughput rises
// towards lambda / sigma without a peak) or sigma >= 1 (it never rises above X(1)).
std::optional<double> usl_peak_concurrency(const UslParams& params);

struct UslFit {
  UslParams params;
  double r_squared = 0;
  std::optional<double> peak_concurrency;  // usl_peak_concurrency(params)
  std::optional<double> peak_throughput;   // X(N*) when N* exists
  int iterations = 0;                      // Levenberg-Marquardt steps taken
};

// Throws std::invalid_argument with fewer than 3 distinct concurrencies (three
// parameters), a concurrency below 1, or a non-positive or non-finite throughput.
UslFit fit_usl(std::span<const UslPoint> points);

}  // namespace poolsim::queueing
