// Seed scenarios: every configs/seeds/*.yaml (the reproductions of the four
// articles, docs/reproductions.md) loads, generates and simulates to the end,
// and the simulator reproduces the shape claims of the articles.
//
// Scenarios are loaded with the shipped `default` machine (4 CPUs, no
// calibration needed) instead of their `machine: host`; claims that depend on
// the CPU count read it from the loaded scenario. Large scenarios are scaled
// down with --set overrides (kScale) so the whole file runs in a few seconds
// in Release and stays reasonable under AddressSanitizer.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "models/metrics.hpp"
#include "models/scenario_loader.hpp"
#include "models/workload.hpp"
#include "sim/simulate.hpp"

using namespace poolsim;

namespace {

namespace fs = std::filesystem;

fs::path seeds_dir() { return fs::path(POOLSIM_SOURCE_DIR) / "configs" / "seeds"; }

// Per-scenario overrides that keep the test fast; the shape claims below
// hold at these sizes too (they are ratios and caps, not absolute times).
const std::map<std::string, std::vector<std::string>>& scale() {
  static const std::map<std::string, std::vector<std::string>> m = {
      {"win-100k-micro-threads", {"workload.arrival.count=10000"}},
      {"win-100k-micro-pool", {"workload.arrival.count=10000"}},
      {"java-io-10000-vthreads", {"workload.arrival.duration=200ms"}},
      {"java-mixed", {"workload.arrival.duration=300ms"}},
      {"java-io-1000-pool200", {"workload.arrival.duration=500ms"}},
      {"java-cpu-100", {"workload.arrival.duration=500ms"}},
      {"java-cpu-1000", {"workload.arrival.duration=500ms"}},
      {"java-pinning", {"workload.arrival.duration=500ms"}},
  };
  return m;
}

struct Run {
  Scenario scenario;
  Workload workload;
  RunResult result;
  Metrics metrics;
};

Run simulate_seed(const std::string& name, std::vector<std::string> extra = {}) {
  LoadOptions opts;
  opts.machine = "default";
  if (auto it = scale().find(name); it != scale().end()) opts.sets = it->second;
  for (auto& s : extra) opts.sets.push_back(std::move(s));
  Run r;
  r.scenario = load_scenario(seeds_dir() / (name + ".yaml"), opts);
  r.workload = generate_workload(r.scenario);
  r.result = sim::simulate(r.scenario, r.workload);
  r.metrics = compute_metrics(r.result);
  return r;
}

double m(const Run& r, Metric k) { return r.metrics[k]; }

// Every task final: open and batch workloads complete every task; a closed
// workload completes a prefix of each client's sequence (the rest were never
// issued because the duration ended) and at least one task per client.
void check_complete(const Run& r) {
  const auto& recs = r.result.records;
  REQUIRE(recs.size() == r.workload.tasks.size());
  std::size_t rejected = 0, completed = 0;
  for (const TaskRecord& t : recs) {
    rejected += t.outcome == TaskOutcome::rejected;
    completed += t.outcome == TaskOutcome::completed;
  }
  CHECK(rejected == 0);
  if (r.workload.arrival != ArrivalKind::closed) {
    CHECK(completed == recs.size());
    return;
  }
  std::vector<bool> stopped(r.workload.clients, false);
  std::vector<std::size_t> per_client(r.workload.clients, 0);
  bool prefix = true;
  for (std::size_t i = 0; i < recs.size(); ++i) {
    const auto c = r.workload.tasks[i].client;
    if (recs[i].outcome == TaskOutcome::completed) {
      if (stopped[c]) prefix = false;
      ++per_client[c];
    } else {
      stopped[c] = true;
    }
  }
  CHECK(prefix);
  CHECK(*std::min_element(per_client.begin(), per_client.end()) >= 1);
}

}  // namespace

TEST_CASE("seeds: every seed scenario simulates to completion", "[seeds]") {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(seeds_dir()))
    if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  // The articles' experiments: losing files silently would make this pass vacuously.
  REQUIRE(names.size() >= 17);
  for (const auto& name : names) {
    INFO("scenario " << name);
    const Run r = simulate_seed(name);
    CHECK(r.scenario.name == name);  // the file is named after its scenario
    check_complete(r);
    CHECK(m(r, Metric::completed) > 0);
  }
}

TEST_CASE(
    "seeds.one_cpu_16_tasks: 1, 4 and 16 workers give the same makespan, different first "
    "completions",
    "[seeds]") {
  // Seed 002: all done 0.90 / 0.92 / 1.08 s, first 0.09 / 0.24 / 0.83 s, mean
  // 0.48 / 0.58 / 1.03 s for 1 / 4 / 16 workers on one CPU.
  const Run w1 = simulate_seed("linux-1cpu-16tasks-w1");
  const Run w4 = simulate_seed("linux-1cpu-16tasks-w4");
  const Run w16 = simulate_seed("linux-1cpu-16tasks-w16");
  REQUIRE(w1.scenario.cores() == 1);  // cpuset "0"
  const double work = 16 * 0.056;
  for (const Run* r : {&w1, &w4, &w16}) {
    CHECK(m(*r, Metric::makespan) >= work);
    CHECK(m(*r, Metric::makespan) == Approx(m(w1, Metric::makespan)).epsilon(0.05));
  }
  const double f1 = m(w1, Metric::first_completion);
  CHECK(f1 == Approx(0.056).epsilon(0.05));
  CHECK(m(w4, Metric::first_completion) / f1 == Approx(4).epsilon(0.15));
  CHECK(m(w16, Metric::first_completion) / f1 > 13);
  // Mean completion: FIFO (8.5 tasks' worth) vs time shared (~all at the end).
  CHECK(m(w1, Metric::latency_mean) == Approx(8.5 * 0.056).epsilon(0.05));
  CHECK(m(w16, Metric::latency_mean) > 1.8 * m(w1, Metric::latency_mean));
  CHECK(m(w4, Metric::latency_mean) > m(w1, Metric::latency_mean));
  CHECK(m(w4, Metric::latency_mean) < m(w16, Metric::latency_mean));
  // One worker is never preempted by another; 16 are, many times.
  CHECK(m(w16, Metric::switches_involuntary) >
        10 * std::max(1.0, m(w1, Metric::switches_involuntary)));
}

TEST_CASE("seeds.quota_vs_cpuset: the same work per period, but only the quota run is throttled",
          "[seeds]") {
  const Run quota = simulate_seed("linux-quota-vs-cpuset");
  const Run cpuset = simulate_seed("linux-1cpu-16tasks-w16");
  // The same CPU time per 100 ms: about the same makespan, but the quota run
  // stalls every period once the group's runtime is spent.
  CHECK(m(quota, Metric::makespan) == Approx(m(cpuset, Metric::makespan)).epsilon(0.15));
  CHECK(m(quota, Metric::throttled_periods) >= 0.8 * m(quota, Metric::makespan) / 0.1 - 1);
  CHECK(m(cpuset, Metric::throttled_periods) == 0);
}

TEST_CASE(
    "seeds.container_trap: a pool sized by the host's CPUs is throttled, one sized by the quota is "
    "not",
    "[seeds]") {
  // A pool sized by the host's CPU count inside a smaller quota burns the
  // period's runtime early and stalls; sized by the quota it is not throttled.
  const Run host_count = simulate_seed("container-cpu-count-trap");
  const Run by_quota = simulate_seed("container-cpu-count-trap", {"backend.threads=1"});
  REQUIRE(host_count.scenario.backend.threads > 1);
  CHECK(m(host_count, Metric::throttled_time) > 0.3 * m(host_count, Metric::makespan));
  CHECK(m(by_quota, Metric::throttled_time) < 0.01 * m(by_quota, Metric::makespan));
  // The quota bounds the work per period either way: about the same makespan,
  // but the first task finishes later when two share the quota.
  CHECK(m(host_count, Metric::makespan) == Approx(m(by_quota, Metric::makespan)).epsilon(0.10));
  CHECK(m(host_count, Metric::first_completion) > 1.5 * m(by_quota, Metric::first_completion));
}

TEST_CASE("seeds.windows: thread creation dominates micro tasks", "[seeds]") {
  const Run threads = simulate_seed("win-100k-micro-threads");
  const Run pool = simulate_seed("win-100k-micro-pool");
  // Seed 000: 12.5 s vs 0.8 s (x15); creation costs dominate tiny tasks.
  CHECK(m(threads, Metric::makespan) > 5 * m(pool, Metric::makespan));
  const double per_thread = m(threads, Metric::makespan) / m(threads, Metric::completed);
  CHECK(per_thread >= to_seconds(threads.scenario.machine.thread_create));
  // The pool never grows with tasks this short: min_threads workers, a gate, the submitter.
  CHECK(m(pool, Metric::threads_peak) == pool.scenario.cores() + 2);
}

TEST_CASE(
    "seeds.windows: compute tasks take the same makespan on threads and on the pool, mixed tasks "
    "hold a thread each",
    "[seeds]") {
  const Run tpt = simulate_seed("win-20-compute");
  const Run pool = simulate_seed("win-20-compute", {"backend={kind: injecting-pool}"});
  CHECK(m(tpt, Metric::makespan) == Approx(m(pool, Metric::makespan)).epsilon(0.05));
  // 100 mixed tasks: every thread-per-task task is alive at once; the pool
  // keeps `cores` workers and never injects (its queue keeps moving).
  const Run mixed = simulate_seed("win-100-mixed");
  const Run mixed_pool = simulate_seed("win-100-mixed", {"backend={kind: injecting-pool}"});
  CHECK(m(mixed, Metric::threads_peak) >= 90);
  CHECK(m(mixed_pool, Metric::threads_peak) == mixed_pool.scenario.cores() + 2);
  CHECK(m(mixed_pool, Metric::makespan) >= 100 * 0.010 / mixed_pool.scenario.cores());
}

TEST_CASE("seeds.java: an I/O pool's throughput is capped by Little's law", "[seeds]") {
  const Run pool = simulate_seed("java-io-1000-pool200");
  // 200 threads / 10 ms = 20,000/s at most; waits overshoot by the timer slack.
  CHECK(m(pool, Metric::throughput) <= 20000);
  CHECK(m(pool, Metric::throughput) > 17000);
  // 1,000 clients on 200 threads: ~5 waits per request.
  CHECK(m(pool, Metric::latency_mean) == Approx(0.050).epsilon(0.15));
  const Run vt = simulate_seed("java-io-1000-pool200", {"backend={kind: virtual-threads}"});
  CHECK(m(vt, Metric::throughput) > 3 * m(pool, Metric::throughput));
}

TEST_CASE("seeds.java: virtual threads at 10,000 clients beat the pool", "[seeds]") {
  const Run vt = simulate_seed("java-io-10000-vthreads");
  const Run pool = simulate_seed("java-io-10000-vthreads", {"backend={kind: pool, threads: 200}"});
  CHECK(m(pool, Metric::throughput) <= 20000);
  CHECK(m(vt, Metric::throughput) > 3 * m(pool, Metric::throughput));
  // Bounded by the CPU: 20 us of work per request on the carriers.
  CHECK(m(vt, Metric::throughput) < vt.scenario.cores() / 20e-6);
  CHECK(m(vt, Metric::threads_peak) <= vt.scenario.cores() + 1);
  const Run mixed = simulate_seed("java-mixed");
  const Run mixed_pool = simulate_seed("java-mixed", {"backend={kind: pool, threads: 200}"});
  CHECK(m(mixed, Metric::throughput) > 1.2 * m(mixed_pool, Metric::throughput));
}

TEST_CASE("seeds.java: pinning collapses virtual threads to carriers / wait", "[seeds]") {
  const Run pinned = simulate_seed("java-pinning");
  const double carriers = pinned.scenario.backend.carriers;
  // Every wait holds a carrier: at most carriers / 10 ms.
  CHECK(m(pinned, Metric::throughput) <= carriers / 0.010);
  CHECK(m(pinned, Metric::throughput) > 0.8 * carriers / 0.010);
  const Run pool = simulate_seed("java-pinning", {"backend={kind: pool, threads: 200}"});
  CHECK(m(pool, Metric::throughput) > 20 * m(pinned, Metric::throughput));
  const Run unpinned = simulate_seed("java-io-1000-pool200", {"backend={kind: virtual-threads}"});
  CHECK(m(unpinned, Metric::throughput) > 50 * m(pinned, Metric::throughput));
}

TEST_CASE(
    "seeds.java: CPU-bound throughput is within 10% on every model and never above cores / 1 ms",
    "[seeds]") {
  const Run pool = simulate_seed("java-cpu-100");
  const double cap = pool.scenario.cores() / 0.001;
  CHECK(m(pool, Metric::throughput) <= cap);
  for (const char* b :
       {"{kind: work-stealing}", "{kind: virtual-threads}", "{kind: thread-per-task}"}) {
    INFO("backend " << b);
    const Run r = simulate_seed("java-cpu-100", {std::string("backend=") + b});
    CHECK(m(r, Metric::throughput) == Approx(m(pool, Metric::throughput)).epsilon(0.10));
  }
  const Run tpt = simulate_seed("java-cpu-1000");
  // Far more OS threads than the pool of the same load (one per request in flight).
  CHECK(m(tpt, Metric::threads_peak) > 100);
  CHECK(m(tpt, Metric::throughput) <= cap);
}

TEST_CASE("seeds.ios: thread creation and wake-up latency", "[seeds]") {
  const Run create = simulate_seed("ios-thread-create");
  const auto& mp = create.scenario.machine;
  const double per_thread = m(create, Metric::makespan) / 1000;
  CHECK(per_thread >= to_seconds(mp.thread_create + mp.thread_exit));
  CHECK(per_thread < 10 * to_seconds(mp.thread_create + mp.thread_exit + mp.switch_cost * 2));
  // A wake-up onto an idle CPU pays the wake path and the idle exit; onto the
  // waker's own CPU it is a switch away.
  const Run idle = simulate_seed("ios-wakeup");
  const auto& wm = idle.scenario.machine;
  CHECK(m(idle, Metric::queue_wait_mean) >= to_seconds(wm.wakeup_latency + wm.idle_exit));
  const Run same = simulate_seed("ios-wakeup", {"limits.cpuset=0"});
  CHECK(m(same, Metric::queue_wait_mean) < m(idle, Metric::queue_wait_mean));
}
