// CFS bandwidth control (sim/bandwidth.hpp) against hand-computed cases, and
// through the kernel model. Times are exact: the model moves runtime in
// nanoseconds, and each CPU starts with 1 ns of runtime (tg_set_cfs_bandwidth).
#include <catch2/catch.hpp>
#include <functional>
#include <vector>

#include "sim/bandwidth.hpp"
#include "sim/engine.hpp"
#include "sim_fixtures.hpp"

using namespace poolsim;
using namespace poolsim::sim;
using namespace poolsim::test;
using namespace std::chrono_literals;

namespace {

// A Bandwidth driven as the kernel drives it: a throttled CPU stops its
// thread and parks it; an unthrottled one runs its thread again when
// `rerun` says so. Actions at given times come from a script.
struct Rig {
  Engine engine;
  std::vector<std::function<void()>> actions;
  struct Event {
    Duration t;
    int cpu;
    bool throttle;
  };
  std::vector<Event> events;
  bool rerun = true;
  std::unique_ptr<Bandwidth> bw;

  Rig(BandwidthParams p, int cpus) {
    bw = std::make_unique<Bandwidth>(engine, p, cpus, &Rig::hook, this);
  }
  static void hook(void* self, int cpu, bool throttle) {
    auto& r = *static_cast<Rig*>(self);
    r.events.push_back({r.engine.now(), cpu, throttle});
    if (throttle) {
      r.bw->stop(cpu, false);
      r.bw->parked(cpu);
    } else if (r.rerun) {
      REQUIRE(r.bw->start(cpu));
    }
  }
  void at(Duration t, std::function<void()> f) {
    actions.push_back(std::move(f));
    engine.at(
        t, [](void* ctx, std::uint64_t i) { static_cast<Rig*>(ctx)->actions[i](); }, this,
        actions.size() - 1);
  }
  // Runs every event up to and including time t.
  void run_until(Duration t) {
    bool reached = false;
    at(t, [&reached] { reached = true; });
    while (!reached && engine.step()) {
    }
  }
};

BandwidthParams params(Duration quota, Duration burst = 0ns, Duration tick = 0ns) {
  return {quota, 100ms, burst, 5ms, tick};
}

}  // namespace

TEST_CASE(
    "bandwidth: one CPU-bound thread under 0.5 CPU is throttled for the second half of "
    "every period",
    "[bandwidth]") {
  Rig r(params(50ms), 1);
  REQUIRE(r.bw->start(0));
  r.run_until(250ms);
  // Slices of 5 ms at 1 ns, 5 ms + 1 ns, ...: the pool is empty after the
  // tenth, and the CPU finds no runtime at 50 ms + 1 ns; the period timer
  // pays its 0 debt + 1 ns at 100 ms.
  REQUIRE(r.events.size() >= 4);
  CHECK(r.events[0].t == 50ms + 1ns);
  CHECK(r.events[0].throttle);
  CHECK(r.events[1].t == 100ms);
  CHECK_FALSE(r.events[1].throttle);
  // The second period starts with 1 ns paid out of its 50 ms: the pool is
  // empty when the CPU's runtime runs out at 150 ms exactly.
  CHECK(r.events[2].t == 150ms);
  CHECK(r.events[3].t == 200ms);
  CHECK(r.bw->stats().nr_throttled == 2);
  CHECK(r.bw->stats().nr_periods == 2);
  CHECK(r.bw->stats().throttled_time == (50ms - 1ns) + 50ms);
}

TEST_CASE(
    "bandwidth: two threads on 2 CPUs under 1.5 CPUs take 5 ms slices until the pool is "
    "empty, then both CPUs are throttled",
    "[bandwidth]") {
  Rig r(params(150ms), 2);
  REQUIRE(r.bw->start(0));
  REQUIRE(r.bw->start(1));
  r.run_until(30ms);
  // Rounds of two slices at 1 ns, 5 ms + 1 ns, ..., 25 ms + 1 ns: 6 rounds.
  CHECK(r.bw->pool() == 150ms - 12 * 5ms);
  CHECK(r.bw->runtime_of(0) == 5ms - (30ms - (25ms + 1ns)));
  r.run_until(100ms);
  // 15 rounds empty the pool at 70 ms + 1 ns; both find none at 75 ms + 1 ns.
  REQUIRE(r.events.size() == 4);
  CHECK(r.events[0].t == 75ms + 1ns);
  CHECK(r.events[1].t == 75ms + 1ns);
  CHECK(r.events[0].cpu == 0);
  CHECK(r.events[1].cpu == 1);
  CHECK(r.events[2].t == 100ms);
  CHECK(r.events[3].t == 100ms);
  CHECK(r.bw->stats().nr_throttled == 1);
  // v1 and v2 both sum over CPUs: 2 x (25 ms - 1 ns).
  CHECK(r.bw->stats().throttled_time == 50ms - 2ns);
  // The timer paid each CPU 1 ns (its 0 debt + 1 ns) from the new quota.
  CHECK(r.bw->pool() == 150ms - 2ns);
}

TEST_CASE("bandwidth: a CPU notices at its tick and pays the overrun from the next period",
          "[bandwidth]") {
  Rig r(params(50ms, 0ns, 4ms), 1);
  REQUIRE(r.bw->start(0));
  r.run_until(99ms);
  // Checks at ticks 4, 12, 20, 28, 36, 44 ms each take the debt (3 ms, the
  // first 4 ms - 1 ns) plus a slice; at 52 ms it owes 3 ms and the pool has
  // 1 ms + 1 ns: throttled owing 2 ms - 1 ns.
  // The period ends half a tick early (the timer's mean phase): 98 ms.
  REQUIRE(r.events.size() >= 2);
  CHECK(r.events[0].t == 52ms);
  CHECK(r.events[1].t == 98ms);
  CHECK(r.bw->stats().throttled_time == 46ms);
  // The timer paid the debt + 1 ns out of the new 50 ms.
  CHECK(r.bw->pool() == 48ms);
}

TEST_CASE(
    "bandwidth: burst keeps unused quota up to the burst, and a period that uses more "
    "than its quota counts as a burst",
    "[bandwidth]") {
  Rig r(params(50ms, 30ms), 1);
  REQUIRE(r.bw->start(0));
  r.at(10ms, [&] { r.bw->stop(0, true); });
  r.run_until(120ms);
  // 10 ms handed out in two slices; 40 ms left + 50 ms capped at 80 ms.
  CHECK(r.bw->pool() == 80ms);
  CHECK(r.bw->stats().nr_bursts == 0);
  // A period with no request stops the timer; the cap holds at 200 ms.
  r.run_until(240ms);
  CHECK(r.bw->pool() == 80ms);
  r.at(250ms, [&] { REQUIRE(r.bw->start(0)); });
  r.run_until(450ms);
  // From 250 ms it runs 130 ms straight: 50 ms to 300 ms (refilled to 80),
  // 80 ms more until the pool is empty at 375 ms + 1 ns, throttled at
  // 380 ms + 1 ns; the refill at 400 ms counts the 30 ms handed out beyond
  // the quota since the last refill as one burst.
  REQUIRE(r.events.size() >= 2);
  CHECK(r.events[0].t == 380ms + 1ns);
  CHECK(r.events[1].t == 400ms);
  CHECK(r.bw->stats().nr_bursts == 1);
  CHECK(r.bw->stats().burst_time == 30ms);
  CHECK(r.bw->stats().nr_periods == 4);  // 100, 200 (then stopped), 300, 400
  CHECK(r.bw->stats().nr_throttled == 1);
}

TEST_CASE(
    "bandwidth: CPUs that go idle return slack above 1 ms, and the slack timer hands it "
    "to the throttled CPU 5 ms later",
    "[bandwidth]") {
  Rig r(params(15ms), 3);
  r.rerun = false;
  REQUIRE(r.bw->start(0));
  r.at(4ms, [&] {
    REQUIRE(r.bw->start(1));
    REQUIRE(r.bw->start(2));
  });
  // CPU 0: slices at 1 ns (pool 10 ms); CPUs 1 and 2 at 4 ms + 1 ns (pool 0);
  // CPU 0 finds none at 5 ms + 1 ns and is throttled.
  r.at(5ms + 1us, [&] {
    r.bw->stop(1, true);  // keeps 1 ms, returns 3 ms - 1 us + 1 ns
    CHECK(r.bw->runtime_of(1) == 1ms);
    r.bw->stop(2, true);  // the pool now holds more than a slice: slack timer
  });
  r.run_until(50ms);
  REQUIRE(r.events.size() == 2);
  CHECK(r.events[0].t == 5ms + 1ns);
  CHECK(r.events[0].throttle);
  CHECK(r.events[1].t == 10ms + 1us);  // kCfsSlackPeriod after the second return
  CHECK_FALSE(r.events[1].throttle);
  CHECK(r.bw->stats().throttled_time == 5ms + 1us - 1ns);
  CHECK(r.bw->stats().nr_throttled == 0);  // unthrottled before any period timer
  CHECK(r.bw->pool() == 2 * (3ms - 1us + 1ns) - 1ns);
}

TEST_CASE("bandwidth: no slack timer within 7 ms of the period refill", "[bandwidth]") {
  Rig r(params(15ms), 3);
  r.rerun = false;
  r.at(90ms, [&] { REQUIRE(r.bw->start(0)); });
  r.at(94ms, [&] {
    REQUIRE(r.bw->start(1));
    REQUIRE(r.bw->start(2));
  });
  r.at(95ms + 1us, [&] {
    r.bw->stop(1, true);
    r.bw->stop(2, true);
  });
  r.run_until(99ms);
  REQUIRE(r.events.size() == 1);
  CHECK(r.events[0].t == 95ms + 1ns);
  r.run_until(101ms);
  REQUIRE(r.events.size() == 2);
  CHECK(r.events[1].t == 100ms);  // the period timer, not the slack timer
  CHECK(r.bw->stats().nr_throttled == 1);
}

TEST_CASE(
    "bandwidth: a CPU whose thread blocks owing runtime is throttled with no thread: it "
    "counts in nr_throttled but adds no throttled time",
    "[bandwidth]") {
  Rig r(params(10ms), 2);
  r.rerun = false;
  REQUIRE(r.bw->start(0));
  REQUIRE(r.bw->start(1));
  // Both take 5 ms at 1 ns: pool 0. CPU 1 blocks at 5 ms + 1 ns exactly
  // when its runtime is gone (before its check fires): it asks, gets none.
  r.at(5ms + 1ns, [&] { r.bw->stop(1, true); });
  r.run_until(150ms);
  CHECK(r.bw->throttled(1) == false);  // unthrottled at 100 ms
  CHECK(r.bw->stats().nr_throttled == 1);
  CHECK(r.bw->stats().throttled_time == 100ms - (5ms + 1ns));  // CPU 0's only
}

TEST_CASE("bandwidth: the kernel model throttles per CPU with 5 ms slices", "[bandwidth]") {
  // Two CPU-bound threads of 200 ms on 2 CPUs, quota 1 CPU: 50 ms (and 1 ns)
  // of each period on each CPU, so 4 periods; throttled 3 times, each time
  // both CPUs for the rest of the period.
  Scenario s = pool_scenario(zero_machine(2), 2);
  s.limits.cpus = 1.0;
  const RunResult r = sim::simulate(s, batch(2, 200ms));
  CHECK(r.counters.throttled_periods == 3);
  CHECK(to_seconds(r.counters.throttled_time) == Approx(0.3).epsilon(1e-6));
  CHECK(makespan(r) == Approx(0.35).epsilon(1e-6));
  CHECK(r.counters.burst_periods == 0);
}

TEST_CASE("bandwidth: burst lets a thread that was idle run past its quota in the kernel model",
          "[bandwidth]") {
  // One 170 ms task arriving at 250 ms under 0.5 CPU: without burst it runs
  // 50 ms per period and is throttled twice; with 50 ms of burst saved up
  // (the timer ran idle since the quota was written) it runs 100 ms per
  // period until 400 ms, whose refill counts the 50 ms over quota as a burst.
  auto run = [](Duration burst) {
    Scenario s = pool_scenario(zero_machine(1), 1);
    s.limits.cpus = 0.5;
    s.limits.burst = burst;
    const Workload w = make_workload(ArrivalKind::periodic, {250ms}, {170ms});
    return sim::simulate(s, w);
  };
  const RunResult plain = run(0ns), burst = run(50ms);
  CHECK(plain.counters.throttled_periods == 2);
  CHECK(burst.counters.throttled_periods == 0);
  CHECK(plain.counters.throttled_time > burst.counters.throttled_time);
  CHECK(burst.counters.burst_periods == 1);
  CHECK(burst.counters.burst_time == 50ms);
  CHECK(plain.counters.burst_periods == 0);
}

TEST_CASE(
    "bandwidth: a thread that blocks owing runtime takes a slice for its debt, and the idle "
    "CPU returns all but 1 ms of it",
    "[bandwidth]") {
  Rig r(params(20ms, 0ns, 4ms), 1);
  REQUIRE(r.bw->start(0));
  // Blocks at 2 ms, before its first tick: it owes 2 ms - 1 ns, takes that
  // plus a slice (update_curr at the dequeue), then returns 4 ms of slack
  // (return_cfs_rq_runtime on the last dequeue).
  r.at(2ms, [&] { r.bw->stop(0, true); });
  r.run_until(3ms);
  CHECK(r.bw->runtime_of(0) == 1ms);
  CHECK(r.bw->pool() == 20ms - (7ms - 1ns) + 4ms);
  CHECK(r.events.empty());
}

TEST_CASE(
    "bandwidth: the phase moves the period grid earlier, the first period is that much "
    "shorter and the next ones keep the grid",
    "[bandwidth]") {
  BandwidthParams p = params(50ms);
  p.phase = 30ms;
  Rig r(p, 1);
  REQUIRE(r.bw->start(0));
  r.run_until(200ms);
  // Throttled at 50 ms + 1 ns (the quota of the first period is whole), the
  // timer fires 30 ms early: at 70, 170, ...
  REQUIRE(r.events.size() >= 3);
  CHECK(r.events[0].t == 50ms + 1ns);
  CHECK(r.events[1].t == 70ms);
  CHECK_FALSE(r.events[1].throttle);
  CHECK(r.events[2].t == 120ms);  // 50 ms more of runtime from 70 ms
  REQUIRE(r.events.size() >= 4);
  CHECK(r.events[3].t == 170ms);  // the grid kept: one period after 70 ms
  CHECK(r.bw->stats().nr_periods == 2);
  p.phase = 100ms;
  CHECK_THROWS_AS(Bandwidth(r.engine, p, 1, &Rig::hook, &r), std::invalid_argument);
}
