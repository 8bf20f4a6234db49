// The capacity planner's commands end to end on the binary: overload warnings
// in the table and JSON, replications in JSON, capacity and its refusals,
// the metric names in --help and `poolsim metrics`, backend kinds in compare --help.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_util.hpp"
#include "models/metrics.hpp"
#include "models/scenario.hpp"

namespace {

using poolsim::test::Result;
using poolsim::test::run;

const std::string kService =
    std::string(POOLSIM_SOURCE_DIR) + "/configs/scenarios/capacity-service.yaml";

}  // namespace

TEST_CASE("cli: an overloaded simulate says so in the table and the JSON", "[cli][warnings]") {
  const auto table = run("simulate " + kService + " --set backend.threads=cores -q");
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("warning: overload: 300/s offered, 58.6/s served") != std::string::npos);
  CHECK(table.out.find("bottleneck: threads (2 threads / 34 ms = 58.8/s)") != std::string::npos);
  const auto j = nlohmann::json::parse(
      run("simulate " + kService + " --set backend.threads=cores --json - -q", false).out);
  REQUIRE(j["warnings"].size() == 1);
  CHECK(j["warnings"][0]["kind"] == "overload");
  const auto ok = nlohmann::json::parse(run("simulate " + kService + " --json - -q", false).out);
  CHECK(ok["warnings"].is_array());
  CHECK(ok["warnings"].empty());
  CHECK(!ok.contains("replications"));
}

TEST_CASE("cli: --replications adds ci95 beside numeric metrics", "[cli][replications]") {
  const auto j = nlohmann::json::parse(
      run("simulate " + kService + " --replications 3 --json - -q", false).out);
  CHECK(j["metrics"]["latency_p99"].is_number());
  CHECK(j["replications"]["n"] == 3);
  CHECK(j["replications"]["seeds"] == nlohmann::json::array({1, 2, 3}));
  const auto& p99 = j["replications"]["metrics"]["latency_p99"];
  CHECK(p99["mean"] == j["metrics"]["latency_p99"]);
  CHECK(p99["ci95"][0].get<double>() <= p99["mean"].get<double>());
  CHECK(p99["ci95"][1].get<double>() >= p99["mean"].get<double>());
  const auto c =
      run("compare " + kService + " --backends pool:threads=12,work-stealing --replications 2 -q");
  CHECK(c.out.find("work-stealing (!)") != std::string::npos);
  CHECK(c.out.find("(!) work-stealing: overload:") != std::string::npos);
  CHECK(c.out.find("means over 2 replications [95% CI]") != std::string::npos);
}

TEST_CASE("cli: capacity answers in requests per second and refuses what it cannot answer",
          "[cli][capacity]") {
  const auto r = run("capacity " + kService + " --target p99=100ms --json - -q", false);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  // 12 threads of 34 ms serve at most 353/s; the p99 target is met below that.
  CHECK(j["max_rate"].get<double>() > 250);
  CHECK(j["max_rate"].get<double>() < 353);
  CHECK(j["bottleneck"]["resource"] == "threads");
  const auto batch = run("capacity " + std::string(POOLSIM_SOURCE_DIR) +
                         "/configs/scenarios/io-service.yaml --target p99=100ms -q");
  CHECK(batch.exit_code == 2);
  CHECK(batch.out.find("capacity needs an open arrival rate") != std::string::npos);
  const auto bad = run("capacity " + kService + " --target p98=1s -q");
  CHECK(bad.exit_code == 2);
  CHECK(bad.out.find("unknown metric 'p98'") != std::string::npos);
}

TEST_CASE("cli: metric names and backend kinds are discoverable", "[cli][metric_names]") {
  const auto help = run("--help");
  const auto metrics = run("metrics");
  REQUIRE(metrics.exit_code == 0);
  for (auto name : poolsim::kMetricNames) {
    CHECK(help.out.find(std::string(name)) != std::string::npos);
    CHECK(metrics.out.find(std::string(name)) != std::string::npos);
  }
  const auto compare = run("compare --help");
  for (auto kind : poolsim::kAllBackends)
    CHECK(compare.out.find(std::string(poolsim::to_string(kind))) != std::string::npos);
}

TEST_CASE("cli: size --backend and --wait distributions name the flag on bad values",
          "[cli][sizing]") {
  const std::string base = "size --rate 300/s --cpu 4ms --cores 16 --no-simulate ";
  const auto lognormal = run(base + "--wait '{dist: lognormal, median: 20ms, p99: 10ms}'");
  CHECK(lognormal.exit_code == 2);
  CHECK(lognormal.out ==
        "poolsim: --wait {dist: lognormal, median: 20ms, p99: 10ms}: p99: lognormal needs "
        "median < p99 (median 20 ms, p99 10 ms)\n");
  const auto missing = run(base + "--wait '{dist: lognormal, median: 20ms}'");
  CHECK(missing.exit_code == 2);
  CHECK(missing.out ==
        "poolsim: --wait {dist: lognormal, median: 20ms}: p99: missing required key 'p99'\n");
  const auto kind = run(base + "--wait 30ms --backend fibers");
  CHECK(kind.exit_code == 2);
  CHECK(kind.out ==
        "poolsim: --backend fibers: not a backend kind (thread-per-task, pool, work-stealing, "
        "injecting-pool, virtual-threads, event-loop, tbb, asio-pool)\n");
  const auto queue = run(base + "--wait 30ms --backend event-loop --queue 10");
  CHECK(queue.exit_code == 2);
  CHECK(queue.out ==
        "poolsim: --queue: event-loop has no bounded queue (only --backend pool has)\n");
  const auto vt = run(base +
                          "--wait '{dist: lognormal, median: 20ms, p99: 200ms}' --backend "
                          "virtual-threads --target-p99 300ms --json - -q",
                      false);
  REQUIRE(vt.exit_code == 0);
  const auto j = nlohmann::json::parse(vt.out);
  CHECK(j["sized"] == "backend.carriers");
  CHECK(j["inputs"]["backend"] == "virtual-threads");
  CHECK(j["recommended_threads"] == 2);
}

TEST_CASE("cli: compare shows throughput, CPU utilisation, throttling and the defaults it applied",
          "[cli][compare]") {
  const auto r =
      run("compare " + kService + " --backends pool:threads=12,virtual-threads -q", false);
  REQUIRE(r.exit_code == 0);
  const std::string header = r.out.substr(0, r.out.find('\n'));
  for (const char* column : {"throughput", "cpu_utilization", "throttled_time"})
    CHECK(header.find(column) != std::string::npos);
  CHECK(r.out.find("\nbackends as simulated (defaults applied):\n") != std::string::npos);
  CHECK(r.out.find("\n  virtual-threads: {\"kind\":\"virtual-threads\",\"carriers\":2}\n") !=
        std::string::npos);
  const auto j = nlohmann::json::parse(
      run("compare " + kService + " --backends virtual-threads --json - -q", false).out);
  CHECK(j["backends"][0]["simulated"].contains("throughput"));
  CHECK(j["backends"][0]["simulated"].contains("cpu_utilization"));
  CHECK(j["backends"][0]["simulated"].contains("throttled_time"));
  CHECK(j["backends"][0]["backend"]["carriers"] == 2);
}

TEST_CASE("cli: every scenario command's help names the scenario format's page", "[cli][help]") {
  for (const char* cmd : {"simulate", "run", "validate", "compare", "sweep"}) {
    INFO(cmd);
    CHECK(run(std::string(cmd) + " --help")
              .out.find("Scenario YAML file (format: docs/scenarios.md)") != std::string::npos);
  }
}
