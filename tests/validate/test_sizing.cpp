// sizing: the analytic chain against closed forms, the refusal of an
// overloaded input, the recommended size meeting its target in simulation,
// container advice, and task-graph bounds.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "models/metrics.hpp"
#include "models/scenario_loader.hpp"
#include "models/workload.hpp"
#include "sim/simulate.hpp"
#include "validate/sizing.hpp"

using namespace poolsim;
using namespace poolsim::validate;

namespace {

SizingInputs issue_example() {
  SizingInputs in;
  in.rate = 1500;
  in.cpu = 0.002;
  in.wait = 0.038;
  in.cores = 4;
  in.target_p99 = 0.100;
  in.simulate = false;
  return in;
}

// The p99 of the sizing scenario at `threads`, simulated independently of size_pool.
double simulated_p99(const SizingInputs& in, int threads) {
  const Scenario s = load_scenario_text(sizing_scenario_yaml(in, threads), "<test>");
  const RunResult r = sim::simulate(s, generate_workload(s));
  return compute_metrics(r)[Metric::latency_p99];
}

}  // namespace

TEST_CASE("size.analytic: the issue's example gives its numbers", "[sizing]") {
  const auto r = size_pool(issue_example());
  CHECK(r.capacity == 4);
  CHECK(r.cpu_utilization == Approx(0.75));
  CHECK(r.littles_law_concurrency == Approx(60.0));
  CHECK(r.formula_threads == 80);  // 4 x (1 + 38/2)
  // docs/queueing.md: M/D/c with p99 <= 100 ms needs 62 threads.
  REQUIRE(r.erlang_c_threads);
  CHECK(*r.erlang_c_threads == 62);
  CHECK(r.recommended == 62);
  CHECK(r.predicted_p99 <= 0.100);
  CHECK(r.thread_utilization == Approx(60.0 / 62));
  const auto j = sizing_json(r);
  for (const char* key : {"inputs", "cpu_utilization", "littles_law_concurrency", "formula_threads",
                          "erlang_c_threads", "recommended_threads", "predicted", "simulated"})
    CHECK(j.contains(key));
  CHECK(j["inputs"]["rate"] == 1500.0);
  CHECK(j["inputs"]["cores"] == 4);
  CHECK(j["predicted"].contains("latency_p99"));
  CHECK(j["simulated"]["threads"].is_array());
}

TEST_CASE("size.analytic: the quota caps capacity and Goetz's U scales the formula", "[sizing]") {
  auto in = issue_example();
  in.rate = 600;
  in.cpus = 1.5;
  in.target_utilization = 0.5;
  const auto r = size_pool(in);
  CHECK(r.capacity == 1.5);
  CHECK(r.cpu_utilization == Approx(600 * 0.002 / 1.5));
  CHECK(r.formula_exact == Approx(1.5 * 0.5 * 20));
  CHECK(r.formula_threads == 15);
}

TEST_CASE("size.refuses: an overload is refused with the CPUs it would need", "[sizing]") {
  auto in = issue_example();
  in.rate = 2500;  // 5 CPUs of work on 4
  CHECK_THROWS_AS(size_pool(in), SizingRefused);
  CHECK_THROWS_WITH(size_pool(in), Catch::Contains("needs 5 CPUs") && Catch::Contains("125.0%") &&
                                       Catch::Contains("1 CPUs (25.0%) more"));
  in.rate = 1500;
  in.cpus = 2.5;  // 3 CPUs of work in a 2.5-CPU quota
  CHECK_THROWS_WITH(size_pool(in), Catch::Contains("120.0%") && Catch::Contains("quota"));
  // Exactly at capacity has no steady state either.
  in.cpus.reset();
  in.rate = 2000;
  CHECK_THROWS_AS(size_pool(in), SizingRefused);
  // SizingRefused is an std::invalid_argument: exit 2 in the CLI.
  CHECK_THROWS_AS(size_pool(in), std::invalid_argument);
}

TEST_CASE("size.refuses: meaningless inputs are refused", "[sizing]") {
  auto in = issue_example();
  in.cpu = 0;
  CHECK_THROWS_AS(size_pool(in), SizingRefused);
  in = issue_example();
  in.host_cores = 16;
  CHECK_THROWS_WITH(size_pool(in), Catch::Contains("--host-cores needs --cpus"));
  in = issue_example();
  in.target_utilization = 1.5;
  CHECK_THROWS_AS(size_pool(in), SizingRefused);
}

TEST_CASE(
    "size.analytic: a target below what exponential service alone gives is reported unreachable",
    "[sizing]") {
  auto in = issue_example();
  in.service = queueing::ServiceShape::exponential;
  const auto r = size_pool(in);
  // 40 ms exponential service alone has p99 = 40 ms x ln 100 = 184 ms > 100 ms.
  CHECK(r.erlang_c_note.find("no pool meets") != std::string::npos);
  CHECK(r.target_p99 == Approx(1.25 * 0.040 * std::log(100.0)));
  REQUIRE(r.erlang_c_threads);
  CHECK(r.predicted_p99 <= r.target_p99 + 1e-12);
}

TEST_CASE("size.analytic: a bounded queue is solved as M/M/c/K", "[sizing]") {
  auto in = issue_example();
  in.queue = 1000;
  const auto r = size_pool(in);
  REQUIRE(r.bounded);
  CHECK(r.bounded->threads == 62);
  CHECK(r.bounded->blocking >= 0);
  CHECK(r.bounded->blocking < 1e-6);
  CHECK(r.bounded->throughput == Approx(1500).epsilon(1e-6));
  const auto j = sizing_json(r);
  CHECK(j["bounded_queue"]["model"] == "M/M/c/K");
}

TEST_CASE("size.simulated: the recommended size meets its target in simulation", "[sizing][sim]") {
  SizingInputs in;
  in.rate = 400;
  in.cpu = 0.002;
  in.wait = 0.008;
  in.cores = 2;
  in.target_p99 = 0.025;
  in.requests = 3000;
  in.jobs = 2;
  const auto r = size_pool(in);
  REQUIRE_FALSE(r.simulated.empty());
  REQUIRE(r.simulated_meets);
  // Every simulated size from the recommendation up meets the target ...
  for (const auto& s : r.simulated) {
    if (s.threads >= r.recommended) CHECK(s.meets);
    CHECK(s.metrics[Metric::completed] == 3000);
  }
  // ... and an independent simulation agrees.
  CHECK(simulated_p99(in, r.recommended) <= 0.025);
  // The next smaller simulated size does not meet it, or the recommendation is 1.
  const auto below =
      std::find_if(r.simulated.rbegin(), r.simulated.rend(),
                   [&](const SimulatedSize& s) { return s.threads < r.recommended; });
  if (below != r.simulated.rend()) CHECK_FALSE(below->meets);
  // Sorted, no duplicates, and the JSON lists them in order.
  for (std::size_t i = 1; i < r.simulated.size(); ++i)
    CHECK(r.simulated[i - 1].threads < r.simulated[i].threads);
  const auto j = sizing_json(r);
  CHECK(j["simulated"]["threads"].size() == r.simulated.size());
  CHECK(j["recommended_threads"] == r.recommended);
}

TEST_CASE("size.simulated: the host-sized pool is throttled in the quota", "[sizing][sim]") {
  SizingInputs in;
  in.rate = 700;
  in.cpu = 0.002;
  in.wait = 0;
  in.cores = 8;
  in.host_cores = 8;
  in.cpus = 2;
  in.requests = 3000;
  in.jobs = 2;
  const auto r = size_pool(in);
  REQUIRE(r.container);
  const auto& a = *r.container;
  CHECK(a.by_host == 8);
  CHECK(a.by_quota == 2);
  REQUIRE(a.host_sized.threads == 8);
  REQUIRE(a.quota_sized.threads == 2);
  // Eight threads on eight CPUs hold eight CPUs' runtime slices and spend
  // the quota early. (With per-CPU throttling the CPUs it throttles may
  // have no thread waiting at this load: the time can be 0; docs/containers.md.)
  CHECK(a.host_sized.metrics[Metric::throttled_periods] >
        a.quota_sized.metrics[Metric::throttled_periods]);
  CHECK(a.host_sized.metrics[Metric::throttled_time] >=
        a.quota_sized.metrics[Metric::throttled_time]);
  CHECK(sizing_json(r)["container"]["recommendation"] == "size by the quota");
}

TEST_CASE("size.graph: work/span bounds and the useful thread count", "[sizing][graph]") {
  const auto b = graph_bounds(4, 0.080, 0.080, 0.010);
  CHECK(b.makespan_bound == Approx(0.020));
  CHECK(b.useful_threads == 8);
  CHECK(graph_bounds(4, 0.010, 0.010, 0.010).useful_threads == 1);

  const auto dir = std::filesystem::temp_directory_path() / "poolsim-test-sizing";
  std::filesystem::create_directories(dir);
  const auto file = dir / "fork-join.yaml";
  {
    std::ofstream f(file);
    f << "name: fj\nmachine: default\nworkload:\n  graph: {fork_join: {depth: 3, fanout: 2, leaf: "
         "[{cpu: 10ms}]}}\n"
         "backend: {kind: pool, threads: 1}\n";
  }
  const auto g = size_graph(file.string(), LoadOptions{}, true, 2);
  CHECK(g.work == Approx(0.080));
  CHECK(g.critical_path == Approx(0.010));
  CHECK(g.useful_threads == 8);
  CHECK(g.makespan_bound == Approx(0.020));  // 80 ms of work on 4 CPUs
  CHECK(g.thread_key == "backend.threads");
  REQUIRE(g.simulated.size() == 4);  // 1, 2, 4, 8
  for (const auto& s : g.simulated) CHECK(s.metrics[Metric::makespan] >= g.makespan_bound * 0.999);
  REQUIRE(g.recommended);
  CHECK(*g.recommended == 4);  // 4 CPUs: more threads do not shorten it
  const auto j = graph_sizing_json(g);
  CHECK(j["graph"]["useful_threads_max"] == 8);

  const auto plain = dir / "plain.yaml";
  {
    std::ofstream f(plain);
    f << "name: plain\nmachine: default\nworkload:\n  arrival: {kind: batch, count: 2}\n  task: "
         "[{cpu: 1ms}]\n"
         "backend: {kind: pool, threads: 1}\n";
  }
  CHECK_THROWS_AS(size_graph(plain.string(), LoadOptions{}, false, 1), SizingRefused);
  std::filesystem::remove_all(dir);
}

namespace {
// The capacity planner's study (issue 19): 300/s of 4 ms CPU + 30 ms wait,
// a 1.5-CPU quota on a 16-core host.
SizingInputs study_inputs() {
  SizingInputs in;
  in.rate = 300;
  in.cpu = 0.004;
  in.wait = 0.030;
  in.cores = 16;
  in.cpus = 1.5;
  return in;
}
}  // namespace

TEST_CASE("size.backends: virtual threads and an event loop size carriers for the CPU time only",
          "[sizing]") {
  // 300/s of 4 ms CPU + 30 ms wait on 1.5 CPUs: a pool needs Little's law's
  // 10.2 threads and more; a carrier is held for the 4 ms only (1.2 busy).
  SizingInputs in = study_inputs();
  in.target_p99 = 0.100;
  in.simulate = false;
  const auto pool = size_pool(in);
  for (auto kind : {BackendKind::virtual_threads, BackendKind::event_loop}) {
    in.backend = kind;
    const auto r = size_pool(in);
    CHECK(r.service_time == Approx(0.004));
    CHECK(r.littles_law_concurrency == Approx(10.2));
    CHECK(r.formula_threads == 2);  // capacity x U: the wait holds no carrier
    REQUIRE(r.erlang_c_threads);
    CHECK(*r.erlang_c_threads == 2);
    CHECK(*r.erlang_c_threads < *pool.erlang_c_threads);
    // p99 = the carriers' M/D/c response + the 30 ms wait after it.
    CHECK(r.predicted_p99 > 0.034);
    CHECK(r.predicted_p99 < 0.100);
    const auto j = sizing_json(r);
    CHECK(j["sized"] ==
          (kind == BackendKind::virtual_threads ? "backend.carriers" : "backend.loops"));
  }
  CHECK(sizing_worker_key(BackendKind::pool) == "backend.threads");
  CHECK(sizing_worker_key(BackendKind::work_stealing) == "backend.threads");
  CHECK(sizing_worker_key(BackendKind::injecting_pool) == "backend.min_threads");
  CHECK(sizing_worker_key(BackendKind::tbb) == "backend.threads");
  CHECK(sizing_worker_key(BackendKind::asio_pool) == "backend.threads");
  CHECK_THROWS_AS(sizing_worker_key(BackendKind::thread_per_task), SizingRefused);
  in.backend = BackendKind::thread_per_task;
  CHECK_THROWS_WITH(size_pool(in),
                    "--backend thread-per-task: nothing to size, it starts one thread per request "
                    "(Little's law: 300/s x 34 ms = 10.2 threads alive on average); size a pool, "
                    "work-stealing, injecting-pool, virtual-threads or event-loop instead");
}

TEST_CASE("size.backends: every sizable backend's recommendation meets its target in simulation",
          "[sizing][sim]") {
  SizingInputs in = study_inputs();
  in.target_p99 = 0.100;
  in.requests = 3000;
  in.jobs = 2;
  for (auto kind : {BackendKind::pool, BackendKind::work_stealing, BackendKind::injecting_pool,
                    BackendKind::virtual_threads, BackendKind::event_loop, BackendKind::tbb,
                    BackendKind::asio_pool}) {
    INFO(to_string(kind));
    in.backend = kind;
    const auto r = size_pool(in);
    REQUIRE(r.simulated_meets);
    // The scenario varies the backend's own worker key, and an independent
    // simulation at the recommendation meets the target.
    const Scenario s = load_scenario_text(sizing_scenario_yaml(in, r.recommended), "<test>");
    CHECK(s.backend.kind == kind);
    CHECK(s.backend.thread_bound() >= r.recommended);
    CHECK(simulated_p99(in, r.recommended) <= 0.100);
  }
}

TEST_CASE("size.wait_distribution: a lognormal wait sizes on its mean and its p99", "[sizing]") {
  SizingInputs in = study_inputs();
  in.target_p99 = 0.300;
  in.simulate = false;
  in.wait_dist = "{dist: lognormal, median: 20ms, p99: 200ms}";
  const Distribution d =
      Distribution::lognormal(std::chrono::milliseconds(20), std::chrono::milliseconds(200));
  in.wait = d.mean_seconds();
  in.wait_p99 = d.quantile_seconds(0.99);
  const auto r = size_pool(in);
  CHECK(r.littles_law_concurrency == Approx(300 * (0.004 + in.wait)));
  REQUIRE(r.erlang_c_threads);
  // The M/G/c approximation: at the analytic size the p99 is within the
  // target, one below it is not, and no size does better than C + the wait's p99.
  CHECK(r.predicted_p99 >= 0.004 + in.wait_p99);
  CHECK(sizing_json(r)["predicted"]["model"] == "M/G/c");
  CHECK(sizing_json(r)["inputs"]["wait_p99"].get<double>() == Approx(0.2));
  // The simulated scenario draws from the distribution.
  const Scenario s = load_scenario_text(sizing_scenario_yaml(in, 12), "<test>");
  const auto& task = s.workload.classes.at(0).task;
  REQUIRE(task.size() == 2);
  CHECK(std::get<WaitPhase>(task[1]).time.quantile_seconds(0.99) == Approx(0.2));
  // A target below what the service alone takes at p99 is unreachable.
  in.target_p99 = 0.150;
  const auto low = size_pool(in);
  CHECK(low.target_origin == "default (the --target-p99 given is unreachable)");
}

TEST_CASE("size.text: an unreachable target and a quota without --host-cores are said plainly",
          "[sizing]") {
  SizingInputs in = study_inputs();
  in.target_p99 = 0.050;
  in.service = queueing::ServiceShape::exponential;
  in.simulate = false;
  const std::string text = sizing_text(size_pool(in));
  CHECK(text.find("\nNOT within --target-p99 50 ms: no size reaches it (see the queueing model "
                  "line); the recommendation below is for the default target 196 ms\n") !=
        std::string::npos);
  CHECK(text.find("\n(sized inside the 1.5-CPU quota; for the container advice, what a pool sized "
                  "by the host's 16 CPUs or by the quota does in it, add --host-cores 16 or "
                  "--host-cores 16 --container)\n") != std::string::npos);
}
