// usl.cpp: the USL and its fit; the formulas and sources are in usl.hpp.
#include "models/queueing/usl.hpp"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

namespace poolsim::queueing {
namespace {

// Levenberg-Marquardt controls (the usual choices, Nocedal and Wright, "Numerical
// Optimization", 2nd ed., section 10.3): start with a mild damping, divide it by 10
// after a step that lowers the cost and multiply it by 10 after one that does not.
constexpr double kInitialDamping = 1e-3;
constexpr double kDampingFactor = 10;
// Beyond this damping the step is a vanishing gradient step: no progress is left.
constexpr double kMaxDamping = 1e16;
// Converged when an accepted step lowers the cost by less than this fraction.
constexpr double kRelativeCostTolerance = 1e-14;
// A three-parameter problem converges in tens of steps; this is only a guard.
constexpr int kMaxIterations = 500;

double contention_denominator(const UslParams& p, double n) {
  return 1 + p.sigma * (n - 1) + p.kappa * n * (n - 1);
}

double sum_of_squares(std::span<const UslPoint> points, const UslParams& p) {
  double s = 0;
  for (const UslPoint& pt : points) {
    const double r = pt.throughput - usl_throughput(p, pt.concurrency);
    s += r * r;
  }
  return s;
}

UslParams project(UslParams p) {
  p.sigma = std::max(0.0, p.sigma);
  p.kappa = std::max(0.0, p.kappa);
  return p;
}

void check_points(std::span<const UslPoint> points) {
  std::set<double> distinct;
  for (const UslPoint& pt : points) {
    if (!(pt.concurrency >= 1) || !std::isfinite(pt.concurrency))
      throw std::invalid_argument(
          fmt::format("USL fit: concurrency must be >= 1, got {}", pt.concurrency));
    if (!(pt.throughput > 0) || !std::isfinite(pt.throughput))
      throw std::invalid_argument(fmt::format(
          "USL fit: throughput must be positive, got {} at N = {}", pt.throughput, pt.concurrency));
    distinct.insert(pt.concurrency);
  }
  if (distinct.size() < 3)
    throw std::invalid_argument(fmt::format(
        "USL fit needs at least 3 distinct concurrencies (3 parameters), got {}", distinct.size()));
}

// Step 1: N / X = a + b (N - 1) + c N (N - 1) with a = 1/lambda, b = sigma/lambda,
// c = kappa/lambda, solved by least squares.
UslParams linearised_guess(std::span<const UslPoint> points) {
  const auto m = static_cast<Eigen::Index>(points.size());
  Eigen::MatrixXd design(m, 3);
  Eigen::VectorXd y(m);
  double best_per_worker = 0;
  for (Eigen::Index i = 0; i < m; ++i) {
    const double n = points[i].concurrency;
    design(i, 0) = 1;
    design(i, 1) = n - 1;
    design(i, 2) = n * (n - 1);
    y(i) = n / points[i].throughput;
    best_per_worker = std::max(best_per_worker, points[i].throughput / n);
  }
  const Eigen::Vector3d coef = design.colPivHouseholderQr().solve(y);
  UslParams p;
  // A non-positive intercept (noisy data) gives no usable 1/lambda: start from the
  // best per-worker throughput seen, which X(N) <= lambda N bounds from below.
  p.lambda = coef(0) > 0 ? 1 / coef(0) : best_per_worker;
  p.sigma = coef(1) * p.lambda;
  p.kappa = coef(2) * p.lambda;
  return project(p);
}

}  // namespace

double usl_throughput(const UslParams& params, double concurrency) {
  return params.lambda * concurrency / contention_denominator(params, concurrency);
}

std::optional<double> usl_peak_concurrency(const UslParams& params) {
  if (!(params.kappa > 0) || params.sigma >= 1) return std::nullopt;
  return std::sqrt((1 - params.sigma) / params.kappa);
}

UslFit fit_usl(std::span<const UslPoint> points) {
  check_points(points);
  const auto m = static_cast<Eigen::Index>(points.size());

  UslFit fit;
  UslParams p = linearised_guess(points);
  double cost = sum_of_squares(points, p);
  double damping = kInitialDamping;

  // Step 2: Levenberg-Marquardt. Residual r_i = X_i - lambda N / D(N); its
  // derivatives are -N/D, lambda N (N-1) / D^2 and lambda N^2 (N-1) / D^2.
  Eigen::MatrixXd jac(m, 3);
  Eigen::VectorXd res(m);
  bool converged = false;
  for (int iter = 0; iter < kMaxIterations && !converged && cost > 0; ++iter) {
    for (Eigen::Index i = 0; i < m; ++i) {
      const double n = points[i].concurrency;
      const double d = contention_denominator(p, n);
      res(i) = points[i].throughput - p.lambda * n / d;
      jac(i, 0) = -n / d;
      jac(i, 1) = p.lambda * n * (n - 1) / (d * d);
      jac(i, 2) = p.lambda * n * n * (n - 1) / (d * d);
    }
    const Eigen::Matrix3d jtj = jac.transpose() * jac;
    const Eigen::Vector3d gradient = jac.transpose() * res;

    bool accepted = false;
    while (!accepted && damping < kMaxDamping) {
      Eigen::Matrix3d lhs = jtj;
      for (int j = 0; j < 3; ++j)
        lhs(j, j) += damping * std::max(jtj(j, j), std::numeric_limits<double>::min());
      const Eigen::Vector3d step = lhs.ldlt().solve(-gradient);
      UslParams trial = project({p.lambda + step(0), p.sigma + step(1), p.kappa + step(2)});
      if (!(trial.lambda > 0)) trial.lambda = 0.5 * p.lambda;
      const double trial_cost = sum_of_squares(points, trial);
      if (trial_cost < cost) {
        const double gain = cost - trial_cost;
        p = trial;
        const double old_cost = cost;
        cost = trial_cost;
        damping /= kDampingFactor;
        accepted = true;
        ++fit.iterations;
        converged = gain <= kRelativeCostTolerance * old_cost;
      } else {
        damping *= kDampingFactor;
      }
    }
    converged = converged || !accepted;  // damped to a vanishing step: a minimum
  }

  fit.params = p;
  double mean = 0;
  for (const UslPoint& pt : points) mean += pt.throughput;
  mean /= static_cast<double>(m);
  double total = 0;
  for (const UslPoint& pt : points) total += (pt.throughput - mean) * (pt.throughput - mean);
  // Identical throughputs have no variance to explain: an exact fit scores 1.
  fit.r_squared = total > 0 ? 1 - cost / total : (cost == 0 ? 1.0 : 0.0);
  fit.peak_concurrency = usl_peak_concurrency(p);
  if (fit.peak_concurrency) fit.peak_throughput = usl_throughput(p, *fit.peak_concurrency);
  return fit;
}

}  // namespace poolsim::queueing
