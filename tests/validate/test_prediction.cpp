// prediction: the mean of draws (validate/prediction.hpp). Draw 0 is the
// plain simulation; draws differ only where the machine leaves something to
// chance (noise, a quota's period phase); the result does not depend on the
// worker count; one draw without either.
#include <catch2/catch.hpp>

#include "../sim/sim_fixtures.hpp"
#include "models/metrics.hpp"
#include "models/scenario_loader.hpp"
#include "sim/simulate.hpp"
#include "validate/prediction.hpp"

using namespace poolsim;
using namespace poolsim::validate;
using namespace std::chrono_literals;

namespace {

// A 2-thread pool on 2 zero-cost CPUs, Poisson 400/s of 2 ms exponential CPU
// (0.8 CPU), with or without a 1-CPU quota: near the quota's edge.
Scenario quota_case(bool quota) {
  std::string yaml =
      "name: q\nseed: 15\nmachine: default\nworkload:\n  arrival: {kind: poisson, rate: 400/s, "
      "count: 1200}\n  task: [{cpu: {dist: exponential, mean: 2ms}}]\nbackend: {kind: pool, "
      "threads: 2}\n";
  if (quota) yaml += "limits: {cpus: 1, period: 100ms}\n";
  Scenario s = load_scenario_text(yaml, "<test>");
  s.machine = test::zero_machine(2);
  s.machine.tick = 4ms;
  return s;
}

}  // namespace

TEST_CASE("draw_phase: the golden-ratio sequence, 0 for draw 0, eight draws spread",
          "[prediction]") {
  CHECK(sim::draw_phase(0) == 0.0);
  CHECK(sim::draw_phase(1) == Approx(0.6180339887));
  CHECK(sim::draw_phase(2) == Approx(0.2360679775));
  std::vector<double> v;
  for (std::uint64_t k = 0; k < 8; ++k) v.push_back(sim::draw_phase(k));
  std::sort(v.begin(), v.end());
  for (std::size_t i = 1; i < v.size(); ++i) CHECK(v[i] - v[i - 1] < 0.25);
  CHECK(sim::noise_seed(7, 0) == 7);
  CHECK(sim::noise_seed(7, 1) != sim::noise_seed(7, 2));
}

TEST_CASE("prediction: without noise and quota one draw, the plain simulation", "[prediction]") {
  const Scenario s = quota_case(false);
  const Workload w = generate_workload(s);
  CHECK(draws_for(s, w, 8) == 1);
  const Prediction p = predict(s, w, sim::SimOptions{}, 8);
  CHECK(p.draws == 1);
  CHECK(p.metrics.values == compute_metrics(sim::simulate(s, w)).values);
  CHECK_THROWS_AS(draws_for(s, w, 0), std::invalid_argument);
  // The proportional newidle balance's dice differ between draws: all of
  // them are made.
  Scenario ni = s;
  ni.machine.newidle_random = 1;
  CHECK(draws_for(ni, w, 8) == 8);
}

TEST_CASE(
    "prediction: under a quota the draws move the period grid, the prediction is their mean, "
    "draw 0 the plain run, the same on 1 or 3 workers",
    "[prediction]") {
  const Scenario s = quota_case(true);
  const Workload w = generate_workload(s);
  REQUIRE(draws_for(s, w, 5) == 5);
  const Prediction one = predict(s, w, sim::SimOptions{}, 5, 1);
  const Prediction three = predict(s, w, sim::SimOptions{}, 5, 3);
  CHECK(one.metrics.values == three.metrics.values);
  REQUIRE(one.draws == 5);
  CHECK(compute_metrics(one.first).values == compute_metrics(sim::simulate(s, w)).values);
  double sum = 0;
  std::vector<double> periods;
  for (std::uint64_t k = 0; k < 5; ++k) {
    sim::SimOptions o;
    o.draw = k;
    const Metrics m = compute_metrics(sim::simulate(s, w, o));
    sum += m[Metric::throttled_time];
    periods.push_back(m[Metric::throttled_periods]);
  }
  CHECK(one.metrics[Metric::throttled_time] == Approx(sum / 5).epsilon(1e-12));
  // The phase matters near the edge: not every draw throttles alike.
  CHECK(one.spread[static_cast<std::size_t>(Metric::throttled_time)].sd > 0);
  // The work is the same in every draw.
  CHECK(one.spread[static_cast<std::size_t>(Metric::completed)].sd == 0);
}

TEST_CASE("prediction: a draw that passes its event budget fails the prediction, on any worker",
          "[prediction]") {
  Scenario s = quota_case(true);
  s.run.max_events = 100;
  const Workload w = generate_workload(s);
  CHECK_THROWS_AS(predict(s, w, sim::SimOptions{}, 4, 1), sim::EventBudgetExceeded);
  CHECK_THROWS_AS(predict(s, w, sim::SimOptions{}, 4, 2), sim::EventBudgetExceeded);
}
