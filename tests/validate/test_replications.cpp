// replications: Student t against its tables, the seed rule (replication 0 is
// the plain run), independence of the worker count, and the overload warning
// on simulated M/M/c queues on both sides of rho = 1 and behind a quota.
#include <catch2/catch.hpp>
#include <cmath>

#include "../sim/sim_fixtures.hpp"
#include "models/metrics.hpp"
#include "models/scenario_loader.hpp"
#include "validate/output.hpp"
#include "validate/replications.hpp"

using namespace poolsim;
using namespace poolsim::validate;

namespace {

// M/M/c: Poisson arrivals at rho c mu, exponential 1 ms CPU, a pool of c
// threads on c + 1 zero-cost CPUs (the submitter never competes).
Scenario mmc(int c, double rho, int count = 20000) {
  const std::string yaml =
      "name: mmc\nseed: 1\nmachine: default\nworkload:\n  arrival: {kind: poisson, rate: " +
      std::to_string(rho * c * 1000.0) + "/s, count: " + std::to_string(count) +
      "}\n  task: [{cpu: {dist: exponential, mean: 1ms}}]\nbackend: {kind: pool, threads: " +
      std::to_string(c) + "}\n";
  Scenario s = load_scenario_text(yaml, "<test>");
  s.machine = test::zero_machine(c + 1);
  return s;
}

bool has_overload(const std::vector<Warning>& w) {
  return std::any_of(w.begin(), w.end(), [](const Warning& x) { return x.kind == "overload"; });
}

}  // namespace

TEST_CASE("replications: Student t quantiles match the tables", "[replications]") {
  CHECK(student_t_975(1) == Approx(12.706).epsilon(1e-4));
  CHECK(student_t_975(4) == Approx(2.776).epsilon(1e-3));
  CHECK(student_t_975(29) == Approx(2.045).epsilon(1e-3));
  MetricStats s;
  s.mean = 10;
  s.sd = 2;
  s.n = 5;
  const Interval ci = ci95(s);
  CHECK(ci.low == Approx(10 - 2.776 * 2 / std::sqrt(5.0)).epsilon(1e-3));
  CHECK(ci.high == Approx(10 + 2.776 * 2 / std::sqrt(5.0)).epsilon(1e-3));
  s.n = 1;
  CHECK(ci95(s).low == 10);
  CHECK(ci95(s).high == 10);
}

TEST_CASE("replications: seed s + i, replication 0 is the plain run, workers do not matter",
          "[replications]") {
  Scenario s = mmc(2, 0.7, 3000);
  s.seed = 41;
  const Replicated one = replicate(s, 4, 1);
  const Replicated two = replicate(s, 4, 2);
  CHECK(one.seeds == std::vector<std::uint64_t>{41, 42, 43, 44});
  const Metrics plain = compute_metrics(sim::simulate(s, generate_workload(s)));
  CHECK(one.runs[0].values == plain.values);
  for (std::size_t i = 0; i < 4; ++i) CHECK(one.runs[i].values == two.runs[i].values);
  Scenario s3 = s;
  s3.seed = 43;
  CHECK(one.runs[2].values == compute_metrics(sim::simulate(s3, generate_workload(s3))).values);
  // The seeds differ, so the runs do, and the interval has a width.
  CHECK(one.runs[0][Metric::latency_mean] != one.runs[1][Metric::latency_mean]);
  const auto i = static_cast<std::size_t>(Metric::latency_mean);
  CHECK(one.ci[i].low < one.stats[i].mean);
  CHECK(one.ci[i].high > one.stats[i].mean);
}

TEST_CASE("replications: N = 1 writes the plain simulate JSON byte for byte", "[replications]") {
  const Scenario s = mmc(2, 0.5, 2000);
  const Replicated r = replicate(s, 1);
  const Workload w = generate_workload(s);
  const RunResult plain = sim::simulate(s, w);
  CHECK(replicated_json(s, r).dump() == simulated_json(s, w, compute_metrics(plain), plain).dump());
  CHECK(!replicated_json(s, r).contains("replications"));
  const auto j = replicated_json(s, replicate(s, 3));
  REQUIRE(j.contains("replications"));
  CHECK(j["replications"]["metrics"]["latency_p99"]["ci95"].size() == 2);
  CHECK(j["metrics"]["latency_p99"].is_number());
}

TEST_CASE("warnings: simulated M/M/4 at rho 1.2 is overloaded, at rho 0.7 it is not",
          "[replications][warnings]") {
  const Replicated over = replicate(mmc(4, 1.2), 3);
  REQUIRE(has_overload(over.warnings));
  CHECK_THAT(over.warnings[0].message, Catch::Contains("bottleneck: threads (4 threads / "));
  CHECK_THAT(over.warnings[0].message, Catch::EndsWith("(3 of 3 replications)"));
  // mu c = 4000/s served at most: the run served about that.
  CHECK(over.stats[static_cast<std::size_t>(Metric::throughput)].mean ==
        Approx(4000).epsilon(0.05));
  const Replicated under = replicate(mmc(4, 0.7), 5);
  CHECK(under.warnings.empty());
  // At rho 0.9 a stable queue's backlog wanders but does not trend.
  CHECK(replicate(mmc(4, 0.9), 5).warnings.empty());
}

TEST_CASE("warnings: behind a 1.5-CPU quota the quota is the bottleneck",
          "[replications][warnings]") {
  const std::string yaml =
      "name: quota\nseed: 1\nmachine: {base: default, cores: 16}\nlimits: {cpus: 1.5}\n"
      "workload:\n  arrival: {kind: poisson, rate: 450/s, duration: 10s}\n"
      "  task: [{cpu: 4ms}, {wait: 30ms}]\nbackend: {kind: pool, threads: 64}\n";
  const Scenario s = load_scenario_text(yaml, "<test>");
  const Replicated r = replicate(s, 1);
  REQUIRE(has_overload(r.warnings));
  CHECK_THAT(r.warnings[0].message, Catch::StartsWith("overload: 450/s offered, "));
  CHECK_THAT(r.warnings[0].message, Catch::EndsWith("bottleneck: quota (1.5 CPUs / 4 ms = 375/s)"));
  // The served rate is at most the quota's bound.
  CHECK(r.runs[0][Metric::throughput] < 376);
}
