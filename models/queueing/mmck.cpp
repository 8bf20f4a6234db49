// mmck.cpp: M/M/c/K as a CTMC; the model, its solution and sources are in mmck.hpp.
#include "models/queueing/mmck.hpp"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace poolsim::queueing {
namespace {

// The Poisson sum of the uniformised survival function stops when a bound on its
// remaining mass is below this: at the level of double rounding on a probability.
constexpr double kPoissonTailCut = 1e-16;
// Quantile bisection: see erlang.cpp (same tolerance, same reason).
constexpr double kQuantileRelTolerance = 1e-12;
constexpr int kMaxBisectionSteps = 2000;

void check_args(int c, int capacity, double arrival_rate, double service_rate) {
  if (c < 1) throw std::invalid_argument(fmt::format("M/M/c/K needs c >= 1 server, got {}", c));
  if (capacity < c)
    throw std::invalid_argument(fmt::format(
        "M/M/c/K needs capacity K >= c = {} (servers count as places), got {}", c, capacity));
  if (!(arrival_rate > 0) || !std::isfinite(arrival_rate))
    throw std::invalid_argument(fmt::format("arrival rate must be positive, got {}", arrival_rate));
  if (!(service_rate > 0) || !std::isfinite(service_rate))
    throw std::invalid_argument(fmt::format("service rate must be positive, got {}", service_rate));
}

}  // namespace

Eigen::SparseMatrix<double> mmck_generator(int c, int capacity, double arrival_rate,
                                           double service_rate) {
  check_args(c, capacity, arrival_rate, service_rate);
  const int n_states = capacity + 1;
  std::vector<Eigen::Triplet<double>> entries;
  entries.reserve(3 * static_cast<std::size_t>(n_states));
  for (int n = 0; n < n_states; ++n) {
    const double up = n < capacity ? arrival_rate : 0.0;
    const double down = std::min(n, c) * service_rate;
    if (up > 0) entries.emplace_back(n, n + 1, up);
    if (down > 0) entries.emplace_back(n, n - 1, down);
    entries.emplace_back(n, n, -(up + down));
  }
  Eigen::SparseMatrix<double> q(n_states, n_states);
  q.setFromTriplets(entries.begin(), entries.end());
  return q;
}

Eigen::VectorXd ctmc_stationary(const Eigen::SparseMatrix<double>& q) {
  const Eigen::Index n_states = q.rows();
  if (n_states < 1 || q.cols() != n_states)
    throw std::invalid_argument("ctmc_stationary: the generator must be square and non-empty");
  // Bandwidth b: every rate q(i, j) has |i - j| <= b. Eliminating state n only
  // combines states in [n - b, n - 1], so the fill stays inside the band.
  Eigen::Index b = 0;
  for (Eigen::Index k = 0; k < q.outerSize(); ++k)
    for (Eigen::SparseMatrix<double>::InnerIterator it(q, k); it; ++it)
      if (it.value() != 0) b = std::max<Eigen::Index>(b, std::abs(it.row() - it.col()));
  // band(i, b + j - i) = q(i, j) for |i - j| <= b; diagonals are never used (GTH
  // recomputes them as minus the off-diagonal row sums, which is what avoids the
  // cancellations of ordinary elimination).
  Eigen::MatrixXd band = Eigen::MatrixXd::Zero(n_states, 2 * b + 1);
  for (Eigen::Index k = 0; k < q.outerSize(); ++k)
    for (Eigen::SparseMatrix<double>::InnerIterator it(q, k); it; ++it) {
      if (it.row() == it.col()) continue;
      if (it.value() < 0)
        throw std::invalid_argument("ctmc_stationary: negative off-diagonal rate");
      band(it.row(), b + it.col() - it.row()) = it.value();
    }
  auto at = [&](Eigen::Index i, Eigen::Index j) -> double& { return band(i, b + j - i); };

  // State reduction, from the last state down: fold n into the states below it.
  Eigen::VectorXd out_rate = Eigen::VectorXd::Zero(n_states);  // S_n: n's rate to states < n
  for (Eigen::Index n = n_states - 1; n >= 1; --n) {
    const Eigen::Index lo = std::max<Eigen::Index>(0, n - b);
    double s = 0;
    for (Eigen::Index j = lo; j < n; ++j) s += at(n, j);
    if (!(s > 0))
      throw std::invalid_argument(
          "ctmc_stationary: the chain is reducible (a state cannot reach the states below it)");
    out_rate(n) = s;
    for (Eigen::Index i = lo; i < n; ++i) {
      const double to_n = at(i, n);
      if (to_n == 0) continue;
      for (Eigen::Index j = lo; j < n; ++j)
        if (j != i) at(i, j) += to_n * at(n, j) / s;
    }
  }
  // Back substitution: pi_n = sum_{i < n} pi_i q(i, n) / S_n, then normalise.
  Eigen::VectorXd pi(n_states);
  pi(0) = 1;
  for (Eigen::Index n = 1; n < n_states; ++n) {
    double inflow = 0;
    for (Eigen::Index i = std::max<Eigen::Index>(0, n - b); i < n; ++i) inflow += pi(i) * at(i, n);
    pi(n) = inflow / out_rate(n);
  }
  return pi / pi.sum();
}

MmckResult mmck(int c, int capacity, double arrival_rate, double service_rate) {
  const Eigen::VectorXd pi =
      ctmc_stationary(mmck_generator(c, capacity, arrival_rate, service_rate));
  const int n_states = capacity + 1;

  MmckResult r;
  r.servers = c;
  r.capacity = capacity;
  r.arrival_rate = arrival_rate;
  r.service_rate = service_rate;
  r.state_probabilities.assign(pi.data(), pi.data() + n_states);

  const auto& p = r.state_probabilities;
  r.blocking_probability = p[capacity];
  r.throughput = arrival_rate * (1 - r.blocking_probability);
  r.utilization = r.throughput / (c * service_rate);
  double admitted_waiting = 0;
  for (int n = 0; n < n_states; ++n) {
    r.mean_in_system += n * p[n];
    r.mean_in_queue += std::max(0, n - c) * p[n];
    if (n >= c && n < capacity) admitted_waiting += p[n];
  }
  const double admitted = 1 - r.blocking_probability;
  r.prob_wait = admitted > 0 ? admitted_waiting / admitted : 1.0;
  r.mean_response = r.mean_in_system / r.throughput;
  r.mean_wait = r.mean_in_queue / r.throughput;
  return r;
}

double mmck_response_exceeds(const MmckResult& model, double t) {
  if (t <= 0) return 1.0;
  const int c = model.servers;
  const int capacity = model.capacity;
  const auto& p = model.state_probabilities;
  if (c < 1 || static_cast<int>(p.size()) != capacity + 1)
    throw std::invalid_argument("mmck_response_exceeds: the model was not built by mmck()");

  // weight[k]: probability that an admitted customer has k waiting phases, that is
  // finds n = c - 1 + k present (k = 0 for every n < c).
  const int max_phases = capacity - c;
  std::vector<double> weight(max_phases + 1, 0.0);
  const double admitted = 1 - p[capacity];
  if (!(admitted > 0)) return 1.0;
  for (int n = 0; n < capacity; ++n) weight[std::max(0, n - c + 1)] += p[n] / admitted;
  // above[k] = sum_{j > k} weight[j]: still waiting after k uniformised steps.
  std::vector<double> above(max_phases + 1, 0.0);
  for (int k = max_phases - 1; k >= 0; --k) above[k] = above[k + 1] + weight[k + 1];

  // Uniformisation at rate c mu: a waiting phase advances with probability 1, the
  // service phase ends with probability mu / (c mu) = 1/c per step.
  const double stay = 1.0 - 1.0 / c;
  const double x = c * model.service_rate * t;
  const double log_x = std::log(x);
  // log Poisson(m; x) = -x + sum_{j=1..m} (log x - log j), summed with Kahan
  // compensation (error O(eps x) rather than O(eps m x)); std::lgamma is avoided
  // because it writes the global signgam and sweeps call this from many threads.
  double log_pmf = -x;
  double log_pmf_carry = 0;
  double in_service = 0;  // G(m) = P(in the service phase after m steps)
  double survival = 0;
  for (long m = 0;; ++m) {
    if (m > 0) {
      const double step = (log_x - std::log(static_cast<double>(m))) - log_pmf_carry;
      const double next = log_pmf + step;
      log_pmf_carry = (next - log_pmf) - step;
      log_pmf = next;
    }
    in_service = stay * in_service + (m <= max_phases ? weight[m] : 0.0);
    const double not_done = in_service + (m < max_phases ? above[m] : 0.0);
    const double pmf = std::exp(log_pmf);
    survival += pmf * not_done;
    // Past the mode the Poisson terms fall at least geometrically with ratio
    // x / (m + 1), so the rest of the sum is at most pmf * x / (m + 1 - x), and
    // each term is weighted by not_done <= 1.
    if (m + 1 > x && pmf * x / (m + 1 - x) < kPoissonTailCut) break;
  }
  return std::min(1.0, survival);
}

double mmck_response_quantile(const MmckResult& model, double q) {
  if (!(q > 0 && q < 1))
    throw std::invalid_argument(fmt::format("quantile must be in (0, 1), got {}", q));
  const double tail = 1 - q;
  double lo = 0;
  double hi = model.mean_response > 0 ? model.mean_response : 1 / model.service_rate;
  for (int i = 0; i < kMaxBisectionSteps && mmck_response_exceeds(model, hi) > tail; ++i) {
    lo = hi;
    hi *= 2;
  }
  for (int i = 0; i < kMaxBisectionSteps && hi - lo > kQuantileRelTolerance * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (mmck_response_exceeds(model, mid) > tail ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace poolsim::queueing
