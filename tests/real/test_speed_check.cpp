// The machine-speed check (real/speed_check.hpp): the canary reads 1x at the
// calibrated rate, a rate that is not the machine's is seen before, during
// and after a repetition, and such a repetition is retried and then marked
// disturbed. A wrong rate stands in for a slowed vCPU: both make the loop
// run at a fraction of the speed its phases were sized with.
#include <algorithm>
#include <string>

#include "real/cpu_work.hpp"
#include "real/speed_check.hpp"
#include "real_test_util.hpp"

using namespace poolsim;
using namespace poolsim::real;
using poolsim::real::test::scenario;

namespace {

// Restores the calibrated rate when a test that pretends it was another ends.
struct RateGuard {
  double saved = units_per_ns();
  ~RateGuard() { set_units_per_ns(saved); }
};

// A batch of 40 tasks of `cpu` on a pool, one measured repetition with the
// speed check's retries as given and no waiting.
Scenario batch_of_40(const std::string& cpu, int threads, int retries) {
  return scenario("workload:\n  arrival: {kind: batch, count: 40}\n  task: [{cpu: " + cpu +
                      "}]\nbackend: {kind: pool, threads: " + std::to_string(threads) +
                      "}\nrun: {reps: 1, warmup: 0, speed_retries: " + std::to_string(retries) +
                      ", speed_wait: 0s}\n",
                  /*default_run=*/false);
}

// Measures the scenario `yaml` (no default run section) on this machine.
std::vector<RunResult> measure(const std::string& yaml) {
  const Scenario s = scenario(yaml, /*default_run=*/false);
  return run_scenario(s, generate_workload(s));
}

}  // namespace

TEST_CASE("speed_check.canary: the loop at its calibrated rate reads about 1x", "[real][speed]") {
  units_per_ns();
  // The canary is the median of three trials on the thread CPU clock, so
  // other processes' load does not move it; a hypervisor slowdown would, so
  // the bound is wide.
  const double s = canary_speed();
  REQUIRE(s > 0.5);
  REQUIRE(s < 2.0);
}

TEST_CASE("speed_check.band: 1 +- band, every figure of a check", "[real][speed]") {
  REQUIRE(within_band(1.2, 0.25));
  REQUIRE(within_band(0.75, 0.25));
  REQUIRE_FALSE(within_band(0.74, 0.25));
  REQUIRE_FALSE(within_band(1.26, 0.25));
  SpeedCheck c;
  c.measured = true;
  c.before = 1.0;
  c.after = 1.0;
  c.during = 0.3;
  REQUIRE(within_band(c, 0.25));  // during not sampled: only the canaries count
  c.during_sampled = true;
  REQUIRE_FALSE(within_band(c, 0.25));
  REQUIRE(describe_speed(c) == "before 1.00x, during 0.30x, after 1.00x, 0 attempts");
  // The kernel's paths count when the profile has a kernel_canary.
  c.during = 1.0;
  c.kernel_before = 1.0;
  c.kernel_after = 0.6;
  REQUIRE(within_band(c, 0.25));  // not checked
  c.kernel_checked = true;
  REQUIRE_FALSE(within_band(c, 0.25));
  REQUIRE(describe_speed(c) ==
          "before 1.00x, during 1.00x, after 1.00x, kernel paths 1.00x and 0.60x, 0 attempts");
  c.kernel_after = 1.1;
  REQUIRE(within_band(c, 0.25));
  REQUIRE(within_band(Canaries{1.0, 0}, 0.25));  // kernel 0: not checked
  REQUIRE_FALSE(within_band(Canaries{1.0, 0.7}, 0.25));
  REQUIRE_FALSE(within_band(Canaries{0.7, 1.0}, 0.25));
}

namespace {

// The fastest of three medians: one median alone read 168 us in a CI run
// where the next read 56 us (the paths warm up after an idle spell), and a
// third of a slow reference is not a third of the speed.
Duration fastest_kernel_round() {
  Duration t = kernel_round_time();
  for (int i = 0; i < 2; ++i) t = std::min(t, kernel_round_time());
  return t;
}

}  // namespace

TEST_CASE("speed_check.kernel: a stack map, touch and unmap round, against the profile's",
          "[real][speed]") {
  const Duration now = fastest_kernel_round();
  REQUIRE(now > Duration{0});
  REQUIRE(now < std::chrono::milliseconds(10));
  REQUIRE(kernel_speed(Duration{0}) == 0);  // a profile without kernel_canary
  // A profile whose round took a third of what it takes now reads the
  // kernel's paths about 3x slow (the wide bound: they drift by 2x here).
  const double third = kernel_speed(now / 3);
  INFO("round " << format_duration(now) << ", a third of it reads " << third);
  REQUIRE(third > 0);
  REQUIRE(third < 0.7);
}

TEST_CASE(
    "speed_check.runner: kernel paths three times slower than the profile's: retried, then "
    "disturbed",
    "[real][speed]") {
  Scenario s = batch_of_40("100us", 2, 1);
  s.machine.kernel_canary = fastest_kernel_round() / 3;
  const Workload w = generate_workload(s);
  const auto reps = run_scenario(s, w, RealOptions{});
  REQUIRE(reps.size() == 1);
  const SpeedCheck& c = reps[0].speed;
  INFO(describe_speed(c));
  REQUIRE(c.kernel_checked);
  REQUIRE(c.attempts == 2);
  REQUIRE(c.disturbed);
  REQUIRE(c.kernel_before < 0.75);
  REQUIRE(c.kernel_after < 0.75);
}

TEST_CASE(
    "speed_check.runner: a repetition at a third of the calibrated speed is retried, then "
    "disturbed",
    "[real][speed]") {
  RateGuard guard;
  // Pretend the loop was calibrated three times faster than it runs: every
  // phase then runs at 0.33x of "its" speed, as in a slowed vCPU's minute.
  set_units_per_ns(guard.saved * 3);
  const Scenario s = batch_of_40("300us", 2, 1);
  const Workload w = generate_workload(s);
  RealOptions opt;
  int notes = 0;
  opt.note = [&notes](const std::string&) { ++notes; };
  const auto reps = run_scenario(s, w, opt);
  REQUIRE(reps.size() == 1);
  const SpeedCheck& c = reps[0].speed;
  REQUIRE(c.measured);
  REQUIRE(c.attempts == 2);
  REQUIRE(c.disturbed);
  REQUIRE(c.before < 0.6);
  REQUIRE(c.after < 0.6);
  REQUIRE(c.during_sampled);  // 40 phases on 2 threads: one in eight per thread is timed
  REQUIRE(c.during < 0.6);
  REQUIRE(notes >= 2);  // the wait before each attempt, and the retry/disturbed lines
}

TEST_CASE("speed_check.runner: a repetition at the calibrated speed passes at its first attempt",
          "[real][speed]") {
  const auto reps = measure(
      "workload:\n  arrival: {kind: batch, count: 4}\n  task: [{cpu: 200us}]\n"
      "backend: {kind: pool, threads: 2}\nrun: {reps: 2, warmup: 0}\n");
  REQUIRE(reps.size() == 2);
  for (const auto& r : reps) {
    REQUIRE(r.speed.measured);
    REQUIRE(r.speed.attempts >= 1);
    REQUIRE(r.speed.before > 0);
  }
}

TEST_CASE("speed_check.runner: the workload's own timer interrupts do not read as a slower machine",
          "[real][speed]") {
  // 2,000 tasks that sleep 10 ms, then compute 100 us, on 200 threads
  // (compare-io): on this project's VM a timer interrupt costs the thread it
  // lands on tens of us, and the sampled phases ran at 0.66-0.72x on the
  // thread CPU clock (2026-12-03: every repetition was marked disturbed;
  // 400 tasks on 40 threads: 0.90x). The loop's own speed, from each
  // phase's fastest block, is the machine's.
  const auto reps = measure(
      "workload:\n  arrival: {kind: batch, count: 2000}\n  task: [{wait: 10ms}, {cpu: 100us}]\n"
      "backend: {kind: pool, threads: 200}\nrun: {reps: 1, warmup: 0, speed_retries: 2}\n");
  REQUIRE(reps.size() == 1);
  const SpeedCheck& c = reps[0].speed;
  INFO(describe_speed(c) << ", phase_cpu " << c.phase_cpu);
  REQUIRE(c.during_sampled);
  REQUIRE_FALSE(c.disturbed);
  REQUIRE(within_band(c.during, 0.25));
  // The CPU clock's figure sees the interrupts (or, on a quieter machine,
  // about as little as the blocks do).
  REQUIRE(c.phase_cpu <= c.during * 1.05);
}

TEST_CASE("speed_check.reference: phases are sized relative to the profile's rate",
          "[real][speed]") {
  RateGuard guard;
  set_units_per_ns(0.5);
  REQUIRE(units_per_ns() == 0.5);
  REQUIRE(reference_units_per_ns() == 0.5);
  size_phases_at(1.2);
  REQUIRE(units_per_ns() == 0.5 * 1.2);
  REQUIRE(reference_units_per_ns() == 0.5);  // speeds stay relative to the profile
  size_phases_at(1.0);
  REQUIRE(units_per_ns() == 0.5);
}

TEST_CASE(
    "speed_check.runner: a repetition's phases are sized at the speed measured before it, not "
    "at the profile's",
    "[real][speed]") {
  RateGuard guard;
  // A profile that says the loop is 1.3x faster than it is (a machine now
  // 0.77x as fast as calibrated, inside the 25% band): sized at the profile's
  // rate every phase would do 1.3x the work; sized at the measured speed, the
  // CPU time stays near the work.
  const Scenario s = batch_of_40("4ms", 1, 0);
  const Workload w = generate_workload(s);
  // The same run with the profile right: the control. Both runs carry this
  // build's and this machine's own overheads (OS noise, the pool's work per
  // task, a sanitizer's), so their ratio is about 1 if the phases are sized
  // at the measured speed, 1.3 if they were sized at the profile's. The VM's
  // speed can also move between the canary and the work (CI saw 1.18 once,
  // 2026-12-02): a pair is tried up to three times and one pair near 1 is
  // enough, while phases sized at the profile's rate give 1.3 every time.
  std::string seen;
  bool near_one = false;
  for (int attempt = 0; attempt < 3 && !near_one; ++attempt) {
    set_units_per_ns(guard.saved);
    const auto control = run_scenario(s, w, RealOptions{});
    REQUIRE(control.size() == 1);
    set_units_per_ns(guard.saved * 1.3);
    const auto reps = run_scenario(s, w, RealOptions{});
    REQUIRE(reps.size() == 1);
    const RunResult& r = reps[0];
    REQUIRE(r.speed.before < 0.9);
    const double ratio = to_seconds(r.counters.cpu_time) / to_seconds(control[0].counters.cpu_time);
    seen += " " + std::to_string(ratio);
    near_one = ratio < 1.15 && ratio > 0.85;
  }
  INFO("CPU time against the control's, per attempt:" << seen);
  REQUIRE(near_one);
}

TEST_CASE("speed_check.steady: the canary after a repetition within the drift of the one before",
          "[real][speed]") {
  SpeedCheck c;
  c.measured = true;
  c.before = 0.774;  // 2026-12-01 21:47: the VM slowed at the end of the previous repetition
  c.after = 0.996;   // and recovered during this one, whose phases were sized at 0.774
  REQUIRE(within_band(c, 0.25));
  REQUIRE_FALSE(steady(c, 0.10));
  c.after = 0.80;
  REQUIRE(steady(c, 0.10));
  c.before = 0;  // not measured
  REQUIRE_FALSE(steady(c, 0.10));
}
