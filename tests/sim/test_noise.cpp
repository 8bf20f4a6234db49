// OS noise (sim/noise.hpp): seeded interruptions of busy CPUs that take time
// from the running thread and, when they are switches, count as its
// involuntary switches; none on an idealised profile.
#include <catch2/catch.hpp>

#include "models/metrics.hpp"
#include "sim/noise.hpp"
#include "sim_fixtures.hpp"

using namespace poolsim;
using namespace poolsim::test;
using namespace std::chrono_literals;

namespace {

MachineProfile noisy(int cores, double preempt) {
  MachineProfile m = zero_machine(cores);
  m.noise_interval = 1ms;
  m.noise_median = 10us;
  m.noise_p99 = 10us;  // p99 = median: every interruption takes exactly 10 us
  m.noise_preempt = preempt;
  return m;
}

// The involuntary switches of a pool of `threads` running `threads` tasks
// of 50 ms on `s`.
double switches_of(const Scenario& s, int threads) {
  return compute_metrics(sim::simulate(s, batch(threads, 50ms)))[Metric::switches_involuntary];
}

}  // namespace

TEST_CASE("noise: every interruption of a lone busy thread delays it by its stolen time",
          "[sim][noise]") {
  Scenario s = pool_scenario(noisy(1, 1.0), 1);
  s.seed = 7;
  const Workload w = batch(1, 100ms);
  const RunResult r = sim::simulate(s, w);
  const Metrics m = compute_metrics(r);
  // preempt = 1: every interruption is an involuntary switch of the worker.
  const auto n = static_cast<std::int64_t>(m[Metric::switches_involuntary]);
  // A Poisson process of mean 1 ms over ~100 ms of busy time: about 100.
  REQUIRE(n > 60);
  REQUIRE(n < 140);
  // Exactly 10 us stolen per interruption; the submitter's own run is
  // interrupted too but its work is nil, so only the worker's run counts.
  const Duration end = r.records[0].end;
  REQUIRE(end >= 100ms);
  REQUIRE((end - 100ms).count() % 10000 == 0);
  REQUIRE((end - 100ms) <= Duration{n * 10000});
  REQUIRE(m[Metric::cpu_utilization] < 1.0);
}

TEST_CASE("noise: interrupts that are not switches stretch the run without counting switches",
          "[sim][noise]") {
  Scenario s = pool_scenario(noisy(1, 0.0), 1);
  const RunResult r = sim::simulate(s, batch(1, 100ms));
  const Metrics m = compute_metrics(r);
  REQUIRE(m[Metric::switches_involuntary] == 0);
  REQUIRE(r.records[0].end > 100ms + 500us);  // ~100 interruptions of 10 us
}

TEST_CASE(
    "noise: an interruption is a switch with noise_preempt_idle's probability while another CPU "
    "of the machine is idle, unless the host packs wakes onto the interrupted one",
    "[sim][noise]") {
  // Two CPUs, noise_preempt 1 and noise_preempt_idle 0: one worker leaves
  // the other CPU idle (no switch counted); two workers keep both busy
  // (every interruption a switch). A cpuset of one CPU of the two: the
  // other is idle whatever runs there (a busy submitter keeps the one CPU
  // busy throughout; it is interrupted alone).
  MachineProfile m = noisy(2, 1.0);
  m.noise_preempt_idle = 0.0;
  CHECK(switches_of(pool_scenario(m, 1), 1) == 0);
  CHECK(switches_of(pool_scenario(m, 2), 2) > 50);
  Scenario pinned = pool_scenario(m, 1);
  pinned.limits.cpuset = {0};
  CHECK(switches_of(pinned, 1) == 0);
  // A host that packs wakes onto a lightly used CPU (wake_pack_util above
  // anything the worker's CPU reaches): what wakes stays there, as if every
  // CPU were busy, so every interruption a switch; with a threshold the
  // worker's PELT utilization passes at once, it is spared again.
  m.wake_pack_util = 1.0;
  CHECK(switches_of(pool_scenario(m, 1), 1) > 25);
  m.wake_pack_util = 0.01;
  CHECK(switches_of(pool_scenario(m, 1), 1) == 0);
  m.wake_pack_util = 0;
  m.cores = 1;  // the same CPU, the whole machine: every interruption a switch
  CHECK(switches_of(pool_scenario(m, 1), 1) > 25);
}

TEST_CASE("noise: same seed same run, another seed other interruptions", "[sim][noise]") {
  Scenario s = pool_scenario(noisy(2, 0.5), 2);
  const Workload w = batch(8, 20ms);
  s.seed = 11;
  const RunResult a = sim::simulate(s, w), b = sim::simulate(s, w);
  REQUIRE(compute_metrics(a).values == compute_metrics(b).values);
  s.seed = 12;
  const RunResult c = sim::simulate(s, w);
  REQUIRE(compute_metrics(a).values != compute_metrics(c).values);
}

TEST_CASE("noise: an idealised profile (noise_interval 0) has none", "[sim][noise]") {
  MachineProfile m = noisy(1, 1.0);
  m.noise_interval = Duration{0};
  const RunResult r = sim::simulate(pool_scenario(m, 1), batch(1, 100ms));
  REQUIRE(r.records[0].end == 100ms);
  REQUIRE(compute_metrics(r)[Metric::switches_involuntary] == 0);
}

TEST_CASE("noise: the stolen time counts as the thread's CPU time as far as noise_charged says",
          "[sim][noise]") {
  // One worker, 100 ms of work, interruptions of exactly 10 us every ~1 ms:
  // the run takes 100 ms + k x 10 us. With noise_charged 0 the worker's CPU
  // time is its 100 ms of work; with 1 the kernel charges it the stolen time
  // too (no IRQ or steal time accounting), the run's whole length; with 0.5
  // half of it.
  auto run = [](double charged) {
    MachineProfile m = noisy(1, 0.0);
    m.noise_charged = charged;
    Scenario s = pool_scenario(m, 1);
    s.seed = 7;
    return sim::simulate(s, batch(1, 100ms));
  };
  const RunResult none = run(0), all = run(1), half = run(0.5);
  // The same interruptions: the charge changes no timing.
  REQUIRE(none.records[0].end == all.records[0].end);
  REQUIRE(none.records[0].end == half.records[0].end);
  const Duration stolen = none.records[0].end - 100ms;
  REQUIRE(stolen > 500us);
  CHECK(all.counters.cpu_time - none.counters.cpu_time == stolen);
  CHECK(half.counters.cpu_time - none.counters.cpu_time == stolen / 2);
}

TEST_CASE("noise: a measured mean sets the share of a busy CPU lost, whatever the median",
          "[sim][noise]") {
  // Bimodal stolen times as on this VM: the median (10 us) says little about
  // the mean (26 us). With noise_mean the lognormal has that mean and p99.
  MachineProfile m = noisy(1, 0.0);
  m.noise_p99 = 62us;
  REQUIRE(sim::noise_share(m) < 0.015);  // median and p99 alone: ~1.2% of 1 ms
  m.noise_mean = 26us;
  REQUIRE(sim::noise_share(m) == Approx(0.026).epsilon(1e-3));
  const RunResult r = sim::simulate(pool_scenario(m, 1), batch(1, 1000ms));
  // ~1,000 interruptions of 26 us mean: 26 ms, within a few standard errors.
  const double stolen = to_seconds(r.records[0].end) - 1.0;
  REQUIRE(stolen > 0.020);
  REQUIRE(stolen < 0.032);
}
