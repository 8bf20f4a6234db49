// test_scenario_resources.cpp: `resources:` and `holding:` in the loader
// (models/scenario_resources.cpp), the workload's permit runs, and the
// acquisition rule (models/resource_pool.hpp).
#include <catch2/catch.hpp>
#include <filesystem>
#include <optional>
#include <string>

#include "loader_fixtures.hpp"
#include "models/resource_pool.hpp"
#include "models/scenario_loader.hpp"
#include "models/workload.hpp"

using namespace poolsim;
using poolsim::test::shipped;
namespace fs = std::filesystem;

namespace {

std::string scenario(const std::string& resources, const std::string& task) {
  return "name: r\n" + resources +
         "workload:\n"
         "  arrival: {kind: batch, count: 4}\n"
         "  task: " +
         task +
         "\n"
         "backend: {kind: pool, threads: 2}\n";
}

std::optional<ScenarioError> error_of(const std::string& yaml,
                                      const std::vector<std::string>& sets = {}) {
  LoadOptions o = shipped();
  o.sets = sets;
  try {
    load_scenario_text(yaml, "t.yaml", o);
  } catch (const ScenarioError& e) {
    return e;
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("loader.resources: resources and holding read into the scenario and the workload",
          "[loader][resources]") {
  const Scenario s = load_scenario_text(
      scenario("resources:\n  db: {permits: 10}\n  cache: {permits: 2}\n",
               "[{cpu: 2ms}, {wait: 30ms, holding: db}, {cpu: 1ms, holding: db}, {cpu: 500us}, "
               "{lock: {name: l, hold: 1us}, holding: cache}]"),
      "t.yaml", shipped());
  REQUIRE(s.resources.size() == 2);
  CHECK(s.resources[0].name == "db");
  CHECK(s.resources[0].permits == 10);
  CHECK(s.resources[1].name == "cache");
  CHECK(s.resources[1].permits == 2);
  const Workload w = generate_workload(s);
  const auto ph = w.phases_of(w.tasks[0]);
  REQUIRE(ph.size() == 5);
  CHECK(ph[0].resource == kNoResource);
  CHECK(ph[1].resource == 0);
  CHECK(ph[2].resource == 0);
  CHECK(ph[3].resource == kNoResource);
  CHECK(ph[4].resource == 1);
  // One permit for the run of phases 1-2, another for phase 4.
  CHECK(holding_step(ph, 0).acquire_before == false);
  CHECK(holding_step(ph, 1).acquire_before);
  CHECK_FALSE(holding_step(ph, 1).release_after);
  CHECK_FALSE(holding_step(ph, 2).acquire_before);
  CHECK(holding_step(ph, 2).release_after);
  CHECK(holding_step(ph, 4).acquire_before);
  CHECK(holding_step(ph, 4).release_after);
}

TEST_CASE("loader.resources: holding does not change the sampled durations",
          "[loader][resources]") {
  const Scenario a = load_scenario_text(
      scenario("", "[{cpu: {dist: exponential, mean: 1ms}}, {wait: 5ms}]"), "t.yaml", shipped());
  const Scenario b = load_scenario_text(
      scenario("resources: {db: {permits: 1}}\n",
               "[{cpu: {dist: exponential, mean: 1ms}, holding: db}, {wait: 5ms, holding: db}]"),
      "t.yaml", shipped());
  const Workload wa = generate_workload(a), wb = generate_workload(b);
  REQUIRE(wa.phases.size() == wb.phases.size());
  for (std::size_t i = 0; i < wa.phases.size(); ++i)
    CHECK(wa.phases[i].duration == wb.phases[i].duration);
}

TEST_CASE("loader.resources: --set changes the permits", "[loader][resources]") {
  LoadOptions o = shipped();
  o.sets = {"resources.db.permits=3"};
  const Scenario s = load_scenario_text(
      scenario("resources: {db: {permits: 10}}\n", "[{wait: 1ms, holding: db}]"), "t.yaml", o);
  CHECK(s.resources[0].permits == 3);
}

TEST_CASE("loader.resources: bad input is located and says what was expected",
          "[loader][resources][errors]") {
  struct Case {
    std::string resources, task, where, key, message;
  };
  const Case cases[] = {
      {"resources: {db: {permits: 10}}\n", "[{wait: 30ms, holding: dv}]", "t.yaml:5:32",
       "workload.task[0].holding", "unknown resource 'dv'; did you mean 'db'?"},
      {"", "[{wait: 30ms, holding: db}]", "t.yaml:4:32", "workload.task[0].holding",
       "unknown resource 'db': the scenario declares no resources"},
      {"resources: {db: {permits: 0}}\n", "[{wait: 1ms, holding: db}]", "t.yaml:2:27",
       "resources.db.permits", "permits"},
      {"resources: {db: {permits: 10000000}}\n", "[{wait: 1ms, holding: db}]", "t.yaml:2:27",
       "resources.db.permits", "permits"},
      {"resources: {db: {permits: 2.5}}\n", "[{wait: 1ms, holding: db}]", "t.yaml:2:27",
       "resources.db.permits", ""},
      {"resources: {db: {}}\n", "[{wait: 1ms, holding: db}]", "t.yaml:2:17", "resources.db.permits",
       "permits"},
      {"resources: {db: {permits: 1, size: 2}}\n", "[{wait: 1ms, holding: db}]", "t.yaml:2:30",
       "resources.db.size", "unknown key 'size'"},
      {"resources: {DB: {permits: 1}}\n", "[{wait: 1ms, holding: DB}]", "t.yaml:2:17",
       "resources.DB", "lower-case letters"},
      {"resources: [db]\n", "[{wait: 1ms}]", "t.yaml:2:12", "resources", "expected a map"},
      {"resources: {db: 10}\n", "[{wait: 1ms, holding: db}]", "t.yaml:2:17", "resources.db",
       "expected {permits: N}"},
      {"resources: {db: {permits: 1}}\n", "[{holding: db}]", "t.yaml:5:10", "workload.task[0]",
       "a phase has exactly one of cpu, wait, lock; got none"},
      {"resources: {db: {permits: 1}}\n", "[{wait: 1ms, holding: [db]}]", "t.yaml:5:31",
       "workload.task[0].holding", "a resource name"},
  };
  for (const Case& c : cases) {
    INFO(c.resources << c.task);
    const auto e = error_of(scenario(c.resources, c.task));
    REQUIRE(e.has_value());
    CHECK(e->where() == c.where);
    CHECK(e->key() == c.key);
    CHECK_THAT(e->message(), Catch::Contains(c.message));
  }
}

TEST_CASE("loader.resources: a bad --set of the permits names the override",
          "[loader][resources][errors]") {
  const auto e =
      error_of(scenario("resources: {db: {permits: 10}}\n", "[{wait: 1ms, holding: db}]"),
               {"resources.db.permits=0"});
  REQUIRE(e.has_value());
  CHECK(e->where() == "--set resources.db.permits=0");
}

TEST_CASE("resource_pool: permits go to waiters in FIFO order, never barged",
          "[resources][policy]") {
  FifoPermits<int> p(2);
  CHECK(p.acquire(1));
  CHECK(p.acquire(2));
  CHECK_FALSE(p.acquire(3));
  CHECK_FALSE(p.acquire(4));
  CHECK(p.in_use() == 2);
  CHECK(p.waiting() == 2);
  CHECK(p.release() == std::optional<int>(3));  // handed over: still 2 in use
  CHECK(p.in_use() == 2);
  CHECK_FALSE(p.acquire(5));  // a newcomer queues behind 4, no barging
  CHECK(p.release() == std::optional<int>(4));
  CHECK(p.release() == std::optional<int>(5));
  CHECK(p.release() == std::nullopt);
  CHECK(p.free() == 1);
  CHECK(p.release() == std::nullopt);
  CHECK(p.free() == 2);
}

TEST_CASE("resource_pool: holding_step groups consecutive phases of one resource",
          "[resources][policy]") {
  constexpr std::uint16_t N = kNoResource;
  // a run of one phase, a run of two, two adjacent runs of different resources
  CHECK(holding_step(N, 0, N).acquire_before);
  CHECK(holding_step(N, 0, N).release_after);
  CHECK_FALSE(holding_step(0, 0, N).acquire_before);
  CHECK_FALSE(holding_step(N, 0, 0).release_after);
  CHECK(holding_step(1, 0, 1).acquire_before);
  CHECK(holding_step(1, 0, 1).release_after);
  CHECK_FALSE(holding_step(0, N, 0).acquire_before);
  CHECK_FALSE(holding_step(0, N, 0).release_after);
}
