// warnings: the capacity bounds against their arithmetic, the backlog trend
// against a deterministic queue whose backlog is known in closed form, and
// the overload verdict on both sides of the bound.
#include <catch2/catch.hpp>

#include "models/metric_names.hpp"
#include "models/scenario_loader.hpp"
#include "models/warnings.hpp"

using namespace poolsim;
using namespace std::chrono_literals;

namespace {

Scenario open_scenario(double rate, int threads, const std::string& limits = "") {
  const std::string yaml =
      "name: w\nseed: 1\nmachine: {base: default, cores: 16}\n" + limits +
      "workload:\n  arrival: {kind: poisson, rate: " + std::to_string(rate) +
      "/s, count: 2000}\n  task: [{cpu: 4ms}, {wait: 30ms}]\nbackend: {kind: pool, threads: " +
      std::to_string(threads) + "}\n";
  return load_scenario_text(yaml, "<test>");
}

// D/D/c by hand: arrivals every 1/rate, service S on `servers` FIFO servers.
// With rate > servers / S the backlog after n arrivals is n (1 - servers / (rate S)).
RunResult fluid_run(double rate, Duration service, int servers, int n) {
  RunResult r;
  std::vector<Duration> free_at(static_cast<std::size_t>(servers), Duration{0});
  for (int i = 0; i < n; ++i) {
    TaskRecord t;
    t.submit = from_seconds(i / rate);
    auto it = std::min_element(free_at.begin(), free_at.end());
    t.start = std::max(t.submit, *it);
    t.end = t.start + service;
    *it = t.end;
    t.outcome = TaskOutcome::completed;
    r.records.push_back(t);
  }
  return r;
}

}  // namespace

TEST_CASE("warnings: the pool's bounds are threads / (cpu + wait) and CPUs / cpu", "[warnings]") {
  const Scenario s = open_scenario(300, 8);
  const Workload w = generate_workload(s);
  const auto caps = capacities(s, w);
  REQUIRE(caps.size() == 2);
  CHECK(caps[0].resource == "CPUs");
  CHECK(caps[0].max_rate == Approx(16 / 0.004));
  CHECK(caps[1].resource == "threads");
  CHECK(caps[1].max_rate == Approx(8 / 0.034));
  const auto neck = bottleneck(s, w);
  REQUIRE(neck);
  CHECK(neck->describe() == "threads (8 threads / 34 ms = 235/s)");
}

TEST_CASE("warnings: a quota tighter than the cores is the CPU bound, named 'quota'",
          "[warnings]") {
  const Scenario s = open_scenario(300, 64, "limits: {cpus: 1.5}\n");
  const Workload w = generate_workload(s);
  const auto neck = bottleneck(s, w);
  REQUIRE(neck);
  CHECK(neck->resource == "quota");
  CHECK(neck->describe() == "quota (1.5 CPUs / 4 ms = 375/s)");
}

TEST_CASE("warnings: virtual threads hold a carrier only for the CPU phases", "[warnings]") {
  Scenario s = open_scenario(300, 8);
  s.backend.kind = BackendKind::virtual_threads;
  s.backend.carriers = 2;
  const Workload w = generate_workload(s);
  const auto neck = bottleneck(s, w);
  REQUIRE(neck);
  CHECK(neck->resource == "carriers");
  CHECK(neck->max_rate == Approx(2 / 0.004));
}

TEST_CASE("warnings: the backlog trend of an overloaded D/D/1 is n/2 (1 - mu/lambda)",
          "[warnings]") {
  // lambda = 1000/s, S = 2 ms: mu = 500/s; over the second half's 1000
  // arrivals the backlog grows by 1000 (1 - 0.5) = 500.
  const auto over = backlog_trend(fluid_run(1000, 2ms, 1, 2001));
  CHECK(over.arrivals == 1000);
  CHECK(over.growth == Approx(500).margin(1));
  // lambda = 400/s on the same server: no backlog, growth 0.
  const auto under = backlog_trend(fluid_run(400, 2ms, 1, 2001));
  CHECK(under.growth == Approx(0).margin(1));
}

TEST_CASE("warnings: overload is named on both sides of the bound", "[warnings]") {
  // 300/s on 8 threads of 34 ms (235/s): overloaded by the bound.
  Scenario s = open_scenario(300, 8);
  Workload w = generate_workload(s);
  RunResult r = fluid_run(300, 34ms, 8, 2000);
  Metrics m = compute_metrics(r);
  auto warnings = overload_warnings(s, w, r, m);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].kind == "overload");
  CHECK_THAT(warnings[0].message, Catch::StartsWith("overload: 300/s offered, 235/s served"));
  CHECK_THAT(warnings[0].message,
             Catch::EndsWith("bottleneck: threads (8 threads / 34 ms = 235/s)"));
  // 200/s on the same pool: below the bound, the fluid backlog stays flat.
  s = open_scenario(200, 8);
  w = generate_workload(s);
  r = fluid_run(200, 34ms, 8, 2000);
  m = compute_metrics(r);
  CHECK(overload_warnings(s, w, r, m).empty());
}

TEST_CASE("warnings: a growing backlog is overload even below the bound", "[warnings]") {
  // The bound says 235/s, but the run served 100/s (overheads the bound leaves out).
  const Scenario s = open_scenario(200, 8);
  const Workload w = generate_workload(s);
  const RunResult r = fluid_run(200, 10ms, 1, 2000);
  const Metrics m = compute_metrics(r);
  const auto warnings = overload_warnings(s, w, r, m);
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0].message, Catch::Contains("the backlog grew by 500 requests"));
  CHECK_THAT(warnings[0].message, Catch::Contains("tightest bound, before overheads: threads"));
}

TEST_CASE("warnings: batch and closed workloads get no overload check", "[warnings]") {
  Scenario s = open_scenario(300, 1);
  s.workload.arrival->kind = ArrivalKind::batch;
  const Workload w = generate_workload(open_scenario(300, 1));
  const RunResult r = fluid_run(300, 34ms, 1, 2000);
  CHECK(overload_warnings(s, w, r, compute_metrics(r)).empty());
}

TEST_CASE("metric_names: one row per metric, units agree with metrics.hpp", "[metric_names]") {
  for (std::size_t i = 0; i < kMetricCount; ++i) {
    const auto& row = metric_table()[i];
    CHECK(static_cast<std::size_t>(row.metric) == i);
    CHECK(row.name == kMetricNames[i]);
    const auto u = unit_of(row.metric);
    const std::string_view expected = u == "s"          ? "seconds"
                                      : u == "/s"       ? "per second"
                                      : u == "B"        ? "bytes"
                                      : u == "fraction" ? "fraction"
                                                        : "count";
    CHECK(row.unit == expected);
    CHECK(!row.meaning.empty());
  }
}

TEST_CASE("metric_names: aliases are unique and resolve", "[metric_names]") {
  std::set<std::string> seen;
  for (const auto& row : metric_table()) {
    CHECK(seen.insert(std::string(row.name)).second);
    for (auto a : row.aliases)
      if (!a.empty()) CHECK(seen.insert(std::string(a)).second);
  }
  CHECK(resolve_metric("p99") == Metric::latency_p99);
  CHECK(resolve_metric("P50") == Metric::latency_p50);
  CHECK(resolve_metric("mean") == Metric::latency_mean);
  CHECK(resolve_metric("latency_p90") == Metric::latency_p90);
  CHECK(!resolve_metric("p98"));
}

TEST_CASE("metric_names: an unknown name suggests the closest one", "[metric_names]") {
  try {
    parse_metric("latancy_p99", "--plot-metric");
    FAIL("no exception");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()) ==
          "--plot-metric: unknown metric 'latancy_p99'; did you mean 'latency_p99'? "
          "(`poolsim metrics` lists every name and alias)");
  }
}

TEST_CASE("warnings: rejections by a bounded queue are named with the queue", "[warnings]") {
  Scenario s = open_scenario(200, 8);
  s.backend.queue = 10;
  const Workload w = generate_workload(s);
  RunResult r = fluid_run(200, 34ms, 8, 2000);
  for (std::size_t i = 0; i < r.records.size(); i += 100)
    r.records[i].outcome = TaskOutcome::rejected;
  const auto warnings = overload_warnings(s, w, r, compute_metrics(r));
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].kind == "rejected");
  CHECK(warnings[0].message ==
        "rejected: 20 of 2000 requests (1.0%) refused by the backend (queue 10, reject abort)");
}

// The streamed run's bound is taken from its head's tasks as a stream draws
// them (app/simulate_cmd.cpp): the very bound the list of those tasks gives.
TEST_CASE("warnings: a stream's bottleneck equals its list's, to the bit", "[warnings]") {
  const Scenario s = load_scenario_text(
      "name: w\nseed: 5\nmachine: {base: default, cores: 4}\nresources:\n  db: {permits: 3}\n"
      "workload:\n  arrival: {kind: poisson, rate: 500/s, count: 3000}\n  task:\n"
      "    - cpu: {dist: exponential, mean: 1ms}\n"
      "    - {wait: {dist: exponential, mean: 5ms}, holding: db}\n"
      "    - lock: {name: rows, hold: {dist: exponential, mean: 6ms}, shards: 2,"
      " wait_inside: 100us}\n"
      "backend: {kind: pool, threads: 64}\n",
      "<test>");
  const Workload list = generate_workload(s);
  const auto caps = capacities(s, list);
  const auto want = bottleneck(s, list);
  REQUIRE(want);
  Workload streamed = generate_workload(s, s.seed, GenerateOptions{true});
  const auto got = bottleneck(s, *streamed.stream, streamed.lock_names);
  REQUIRE(got);
  CHECK(want->resource.rfind("lock 'rows#", 0) == 0);  // a shard's name is read too
  CHECK(got->resource == want->resource);
  CHECK(got->hold == want->hold);
  CHECK(got->max_rate == want->max_rate);
  CHECK(got->describe() == want->describe());
  CHECK(caps.size() >= 4);  // CPUs, threads, the lock shards, db
  CHECK(streamed.stream->drawn() == list.tasks.size());
}

// simulate's streamed path: the bound of the first n tasks, added through
// TaskStream::tap while the run draws the whole stream, is the bound of a
// list of those n tasks.
TEST_CASE("warnings: a tapped stream's first tasks give their list's bound", "[warnings]") {
  Scenario s = open_scenario(300, 8);
  s.workload.arrival->count = 5000;
  Workload whole = generate_workload(s, s.seed, GenerateOptions{true});
  StreamBound bound(s, whole.lock_names);
  std::uint32_t last_id = 0;
  whole.stream->tap(1200, [&](const Task& t, std::span<const Phase> p) {
    bound.add(t, p);
    last_id = t.id;
  });
  Task t;
  std::vector<Phase> phases;
  while (whole.stream->next(t, phases)) {
  }
  CHECK(whole.stream->drawn() == 5000);
  CHECK(bound.tasks() == 1200);
  CHECK(last_id == 1199);
  Scenario head = s;
  head.workload.arrival->count = 1200;
  const auto want = bottleneck(head, generate_workload(head));
  const auto got = bound.bottleneck();
  REQUIRE(want);
  REQUIRE(got);
  CHECK(got->hold == want->hold);
  CHECK(got->max_rate == want->max_rate);
  CHECK(got->describe() == want->describe());
}
