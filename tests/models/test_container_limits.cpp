// Container limits in the scenario loader: Kubernetes millicores, limits.burst,
// host_cpus thread counts, and the cfs_bandwidth_slice profile field.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "loader_fixtures.hpp"
#include "models/scenario_loader.hpp"

using namespace poolsim;
using poolsim::test::shipped;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

const std::string kWorkload =
    "workload:\n"
    "  arrival: {kind: batch, count: 10}\n"
    "  task: [{cpu: 1ms}]\n";

Scenario load(const std::string& limits, const std::string& threads = "2") {
  return load_scenario_text("name: t\n" + limits + kWorkload + "backend: {kind: pool, threads: '" +
                                threads + "', max_threads: 1000}\n",
                            "t.yaml", shipped());
}

ScenarioError error_of(const std::string& limits, const std::string& threads = "2") {
  try {
    load(limits, threads);
  } catch (const ScenarioError& e) {
    return e;
  }
  FAIL("expected a ScenarioError");
  throw;
}

}  // namespace

TEST_CASE("loader.containers: limits.cpus takes Kubernetes millicores beside a number",
          "[loader][containers]") {
  CHECK(*load("limits: {cpus: 1500m}\n").limits.cpus == Approx(1.5));
  CHECK(*load("limits: {cpus: 250m}\n").limits.cpus == Approx(0.25));
  CHECK(*load("limits: {cpus: 1.5}\n").limits.cpus == Approx(1.5));
  const ScenarioError e = error_of("limits: {cpus: 1.5m}\n");
  CHECK(e.key() == "limits.cpus");
  CHECK_THAT(e.message(), Catch::Contains("millicores such as 1500m"));
  CHECK(e.where() == "t.yaml:2:16");
  CHECK_THAT(error_of("limits: {cpus: 0m}\n").message(), Catch::Contains("between 0.001"));
}

TEST_CASE("loader.containers: limits.burst needs a quota and fits in it", "[loader][containers]") {
  CHECK(load("limits: {cpus: 1, burst: 40ms}\n").limits.burst == 40ms);
  CHECK(load("limits: {cpus: 1}\n").limits.burst == 0ns);
  const ScenarioError no_quota = error_of("limits: {burst: 40ms}\n");
  CHECK(no_quota.key() == "limits.burst");
  CHECK_THAT(no_quota.message(), Catch::Contains("needs limits.cpus"));
  const ScenarioError too_big = error_of("limits: {cpus: 0.5, burst: 60ms}\n");
  CHECK_THAT(too_big.message(), Catch::Contains("between 0ns and the quota"));
  CHECK_THAT(too_big.message(), Catch::Contains("50 ms"));
}

TEST_CASE("loader.containers: host_cpus counts every CPU of the machine, cores the container's",
          "[loader][containers]") {
  // The shipped default machine has 4 CPUs.
  const std::string quota = "limits: {cpus: 1500m, cpuset: \"0-2\"}\n";
  CHECK(load(quota, "host_cpus").backend.threads == 4);
  CHECK(load(quota, "2*host_cpus").backend.threads == 8);
  CHECK(load(quota, "host_cpus/2").backend.threads == 2);
  CHECK(load(quota, "cores").backend.threads == 2);
  CHECK_THAT(error_of(quota, "host_cpu").message(), Catch::Contains("host_cpus may stand"));
}

TEST_CASE("loader.containers: cfs_bandwidth_slice is a profile field, 5 ms by default",
          "[loader][containers]") {
  CHECK(load("").machine.cfs_bandwidth_slice == 5ms);
  const Scenario s =
      load_scenario_text("name: t\nmachine: {base: default, cfs_bandwidth_slice: 3ms}\n" +
                             kWorkload + "backend: {kind: pool, threads: 1}\n",
                         "t.yaml", shipped());
  CHECK(s.machine.cfs_bandwidth_slice == 3ms);
  CHECK_THROWS_AS(
      load_scenario_text("name: t\nmachine: {base: default, cfs_bandwidth_slice: 0ns}\n" +
                             kWorkload + "backend: {kind: pool, threads: 1}\n",
                         "t.yaml", shipped()),
      ScenarioError);
}

TEST_CASE("loader.containers: the profile writer keeps cfs_bandwidth_slice (what calibrate reads)",
          "[loader][containers]") {
  MachineProfile m = load_machine_profile("default", shipped());
  m.name = "slice-box";
  m.cfs_bandwidth_slice = Duration{3000001};
  const fs::path file =
      fs::temp_directory_path() / ("poolsim-slice-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(file) << machine_profile_yaml(m, "written by a test");
  const MachineProfile r = load_machine_profile(file.string(), shipped());
  fs::remove(file);
  CHECK(r.cfs_bandwidth_slice == Duration{3000001});
  CHECK_THAT(machine_profile_yaml(m), Catch::Contains("cfs_bandwidth_slice: "));
}

TEST_CASE("loader.containers: limits.shares and limits.weight are one CPU weight in shares units",
          "[loader][containers]") {
  CHECK(load("").limits.shares == 1024);
  CHECK(load("limits: {shares: 512}\n").limits.shares == 512);
  CHECK(load("limits: {weight: 100}\n").limits.shares == 1024);
  CHECK(load("limits: {weight: 400}\n").limits.shares == 4096);
  const ScenarioError both = error_of("limits: {shares: 512, weight: 50}\n");
  CHECK(both.key() == "limits.weight");
  CHECK_THAT(both.message(), Catch::Contains("give one"));
  CHECK_THAT(error_of("limits: {shares: 1}\n").message(), Catch::Contains("between 2 and 262144"));
  CHECK_THAT(error_of("limits: {weight: 10001}\n").message(),
             Catch::Contains("between 1 and 10000"));
}

TEST_CASE("loader.containers: limits.neighbour needs a thread count and takes its own weight",
          "[loader][containers]") {
  const Scenario s = load("limits: {neighbour: {threads: 2, weight: 400}}\n");
  REQUIRE(s.limits.neighbour);
  CHECK(s.limits.neighbour->threads == 2);
  CHECK(s.limits.neighbour->shares == 4096);
  CHECK(load("limits: {neighbour: {threads: 1}}\n").limits.neighbour->shares == 1024);
  CHECK(!load("").limits.neighbour);
  const ScenarioError missing = error_of("limits: {neighbour: {shares: 2048}}\n");
  CHECK_THAT(missing.message(), Catch::Contains("threads"));
  const ScenarioError unknown = error_of("limits: {neighbour: {threads: 1, cpus: 1}}\n");
  CHECK_THAT(unknown.message(), Catch::Contains("unknown"));
  CHECK_THAT(error_of("limits: {neighbour: {threads: 0}}\n").message(),
             Catch::Contains("between 1 and 4096"));
}
