// capacity: the bisection against Erlang C on M/M/c with the zero-cost
// profile (mean response and p99), the target's parsing, and the refusals.
#include <catch2/catch.hpp>

#include "../sim/sim_fixtures.hpp"
#include "models/queueing/erlang.hpp"
#include "models/scenario_loader.hpp"
#include "validate/capacity.hpp"

using namespace poolsim;
using namespace poolsim::validate;

namespace {

Scenario mmc(int c, double rate, int count) {
  const std::string yaml =
      "name: mmc\nseed: 3\nmachine: default\nworkload:\n  arrival: {kind: poisson, rate: " +
      std::to_string(rate) + "/s, count: " + std::to_string(count) +
      "}\n  task: [{cpu: {dist: exponential, mean: 1ms}}]\nbackend: {kind: pool, threads: " +
      std::to_string(c) + "}\n";
  Scenario s = load_scenario_text(yaml, "<test>");
  s.machine = test::zero_machine(c + 1);
  return s;
}

// The arrival rate at which an M/M/c metric reaches `target` (it grows with the rate).
template <class F>
double solve_rate(int c, double mu, double target, F metric) {
  double lo = 0.01 * c * mu, hi = c * mu * (1 - 1e-9);
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (lo + hi);
    (metric(mid) <= target ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace

TEST_CASE("capacity: M/M/2 mean response 2 ms: the rate Erlang C gives", "[capacity]") {
  const double mu = 1000;
  const double expected = solve_rate(2, mu, 0.002, [&](double lambda) {
    return 1 / mu + queueing::erlang_c(2, lambda / mu) / (2 * mu - lambda);
  });
  CapacityOptions opt;
  opt.replications = 4;
  const auto r = find_capacity(mmc(2, 1000, 40000), parse_target("latency_mean=2ms"), opt);
  INFO("capacity " << r.max_rate << " Erlang C " << expected);
  CHECK(r.max_rate == Approx(expected).epsilon(0.03));
  CHECK(r.at_max.value <= 0.002);
  CHECK(r.bottleneck.resource == "threads");
  CHECK(r.bottleneck.max_rate == Approx(2000).epsilon(0.02));
}

TEST_CASE("capacity: M/M/4 p99 10 ms: the rate the M/M/c response quantile gives", "[capacity]") {
  const double mu = 1000;
  const double expected = solve_rate(4, mu, 0.010, [&](double lambda) {
    return queueing::mmc_response_quantile(4, lambda, mu, 0.99);
  });
  CapacityOptions opt;
  opt.replications = 4;
  const auto r = find_capacity(mmc(4, 1000, 40000), parse_target("p99=10ms"), opt);
  INFO("capacity " << r.max_rate << " M/M/c " << expected);
  CHECK(r.max_rate == Approx(expected).epsilon(0.03));
  const auto j = capacity_json(r);
  CHECK(j["max_rate"].get<double>() == r.max_rate);
  CHECK(j["bottleneck"]["resource"] == "threads");
  CHECK(j["target"]["metric"] == "latency_p99");
  CHECK(j["warnings"].is_array());
}

TEST_CASE("capacity: targets are parsed in the metric's unit, by name or alias", "[capacity]") {
  CHECK(parse_target("latency_p99=100ms").value == Approx(0.1));
  CHECK(parse_target("p99=0.1s").metric == Metric::latency_p99);
  CHECK(parse_target("cpu=80%").value == Approx(0.8));
  CHECK(parse_target("rejected=0").metric == Metric::rejected);
  CHECK_THROWS_WITH(parse_target("p99"), Catch::StartsWith("--target: expected METRIC=VALUE"));
  CHECK_THROWS_WITH(
      parse_target("throughput=100/s"),
      Catch::StartsWith("--target: throughput is not a limit that more load pushes up"));
  CHECK_THROWS_WITH(parse_target("p99=100"), Catch::Contains("duration needs a unit"));
}

TEST_CASE("capacity: a scenario without an open arrival rate is refused", "[capacity]") {
  Scenario s = mmc(2, 1000, 100);
  s.workload.arrival->kind = ArrivalKind::batch;
  CHECK_THROWS_AS(find_capacity(s, parse_target("p99=10ms")), CapacityRefused);
  CHECK_THROWS_WITH(
      find_capacity(s, parse_target("p99=10ms")),
      Catch::StartsWith(
          "capacity needs an open arrival rate: mmc has workload.arrival.kind batch"));
}

TEST_CASE("capacity: a target below the service time alone is refused", "[capacity]") {
  CHECK_THROWS_WITH(find_capacity(mmc(2, 1000, 4000), parse_target("latency_mean=500us")),
                    Catch::StartsWith("capacity: latency_mean=500us cannot be met at any rate"));
}
