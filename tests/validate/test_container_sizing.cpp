// size --container (validate/container_sizing.hpp): the sizing rules' thread
// counts in a container, each simulated, and the recommendation's rule.
#include <catch2/catch.hpp>
#include <chrono>

#include "validate/container_sizing.hpp"

using namespace poolsim;
using namespace poolsim::validate;
using namespace std::chrono_literals;

namespace {
ContainerInputs inputs(double rate, double cpus, int host) {
  ContainerInputs in;
  in.base.rate = rate;
  in.base.cpu = 0.002;
  in.base.cores = host;
  in.base.host_cores = host;
  in.base.cpus = cpus;
  in.base.requests = 2000;
  in.base.jobs = 2;
  in.base.service = queueing::ServiceShape::exponential;
  return in;
}
}  // namespace

TEST_CASE("size.container: each rule's thread count, simulated in the container",
          "[sizing][container]") {
  const ContainerSizing r = size_container(inputs(500, 1.5, 8));
  REQUIRE(r.choices.size() == 4);
  CHECK(r.choices[0].threads == 8);  // host CPUs
  CHECK(r.choices[1].threads == 1);  // floor(1.5)
  CHECK(r.choices[2].threads == 2);  // ceil(1.5)
  CHECK(r.choices[3].threads == 1);  // ceil(500/s x 2 ms)
  for (const auto& c : r.choices) CHECK(c.metrics[Metric::completed] == 2000);
  // The recommendation has the lowest p99 within the slack.
  double best = 1e9;
  for (const auto& c : r.choices) best = std::min(best, c.metrics[Metric::latency_p99]);
  CHECK(r.choices[r.recommended].metrics[Metric::latency_p99] <= best * (1 + kP99Slack));
  CHECK(container_sizing_json(r)["recommended_threads"] == r.choices[r.recommended].threads);
}

TEST_CASE("size.container: a cpuset caps the quota-based sizes, and burst reaches the simulation",
          "[sizing][container]") {
  ContainerInputs in = inputs(300, 3, 8);
  in.cpuset = "0-1";
  in.cpuset_size = 2;
  in.burst = 100ms;
  const ContainerSizing r = size_container(in);
  CHECK(r.choices[0].threads == 8);
  CHECK(r.choices[1].threads == 2);
  CHECK(r.choices[2].threads == 2);
  CHECK_THAT(container_sizing_text(r), Catch::Contains("burst 100 ms, cpuset 0-1"));
}

TEST_CASE("size.container: refuses a load the container cannot carry", "[sizing][container]") {
  CHECK_THROWS_AS(size_container(inputs(600, 1, 4)), SizingRefused);
  ContainerInputs no_quota = inputs(100, 1, 4);
  no_quota.base.cpus.reset();
  CHECK_THROWS_AS(size_container(no_quota), SizingRefused);
}
