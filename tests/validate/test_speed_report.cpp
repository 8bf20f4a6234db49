// Disturbed repetitions in reports (validate/speed_report.hpp): verdicts come
// from the undisturbed repetitions only, and none is drawn when too few remain.
#include <catch2/catch.hpp>

#include "validate/compare.hpp"
#include "validate/speed_report.hpp"

using namespace poolsim;
using namespace poolsim::validate;

namespace {
// `phase_cpu` < 0: the same as `during`.
RunResult rep(bool disturbed, int attempts, double during = 1.0, double phase_cpu = -1) {
  RunResult r;
  r.mode = "measured";
  r.speed.measured = true;
  r.speed.before = 1.0;
  r.speed.during = during;
  r.speed.during_sampled = true;
  r.speed.phase_cpu = phase_cpu < 0 ? during : phase_cpu;
  r.speed.after = 1.0;
  r.speed.attempts = attempts;
  r.speed.disturbed = disturbed;
  return r;
}
}  // namespace

TEST_CASE("speed_report: disturbed repetitions are left out, the others give the verdict",
          "[speed]") {
  const std::vector<RunResult> reps = {rep(false, 1), rep(true, 3, 0.27), rep(false, 2)};
  const auto s = split_by_speed(reps);
  REQUIRE(s.usable.size() == 2);
  REQUIRE(s.disturbed == 1);
  REQUIRE(s.repeated == 2);
  REQUIRE(s.verdict_possible);
  REQUIRE(speed_lines(reps) ==
          "machine speed: repetition 2 was disturbed, left out of the verdict (before 1.00x, "
          "during 0.27x, after 1.00x, 3 attempts)\n"
          "machine speed: repetition 3 was run again until the machine ran at its calibrated "
          "speed and held it (before 1.00x, during 1.00x, after 1.00x, 2 attempts)\n");
  const auto j = speed_json(reps);
  REQUIRE(j.size() == 3);
  REQUIRE(j[1]["disturbed"] == true);
  REQUIRE(j[1]["attempts"] == 3);
  REQUIRE(j[0]["kernel_before"].is_null());  // a profile without kernel_canary
  std::vector<RunResult> checked = {rep(false, 1)};
  checked[0].speed.kernel_checked = true;
  checked[0].speed.kernel_before = 0.9;
  checked[0].speed.kernel_after = 1.1;
  const auto k = speed_json(checked);
  REQUIRE(k[0]["kernel_before"] == 0.9);
  REQUIRE(k[0]["kernel_after"] == 1.1);
}

TEST_CASE("speed_report: with fewer than two undisturbed repetitions no verdict is drawn",
          "[speed]") {
  REQUIRE_FALSE(split_by_speed({rep(false, 1), rep(true, 3)}).verdict_possible);
  REQUIRE(split_by_speed({rep(false, 1)}).verdict_possible);  // one asked for, one usable
  REQUIRE_FALSE(split_by_speed({rep(true, 3)}).verdict_possible);
  REQUIRE(speed_lines({rep(false, 1), rep(false, 1)}).empty());  // nothing to say
}

TEST_CASE("speed_report: a disturbed comparison has no verdict in any row", "[speed]") {
  Metrics p;
  for (auto& v : p.values) v = 1.0;
  std::array<MetricStats, kMetricCount> m{};
  for (auto& s : m) s = MetricStats{2.0, 0.0, 2.0, 2.0, 1};
  auto c = compare(p, m, Tolerance{});
  REQUIRE(c.overall == Verdict::diverge);
  mark_disturbed(c);
  REQUIRE(c.overall == Verdict::disturbed);
  REQUIRE(c.diverged == 0);
  for (const auto& r : c.rows) REQUIRE(r.verdict == Verdict::disturbed);
  REQUIRE(comparison_table(c).find(
              "verdict: disturbed (the machine did not run at its calibrated speed") !=
          std::string::npos);
}

TEST_CASE("speed_report.noise: the phases' loss to interruptions against the profile's noise",
          "[speed]") {
  MachineProfile m;
  m.noise_interval = std::chrono::milliseconds(1);
  m.noise_median = std::chrono::microseconds(40);
  m.noise_p99 = std::chrono::microseconds(40);  // every interruption 40 us: 4% of a busy CPU
  m.noise_charged = 1.0;
  // Phases whose work per thread CPU time is 0.93x and 0.95x of the loop's
  // undisturbed speed (this VM at 21:13 UTC: 0.92-0.93x) while their
  // fastest blocks ran at 1.00x: the loss is the CPU clock's figure.
  std::vector<RunResult> reps = {rep(false, 1, 1.0, 0.93), rep(false, 1, 1.0, 0.95),
                                 rep(true, 3, 0.27)};
  const NoiseReport n = noise_report(reps, m);
  REQUIRE(n.reps == 2);  // the disturbed one is left out
  REQUIRE(n.measured_loss == Approx(0.06));
  REQUIRE(n.profile_loss == Approx(0.04 / 1.04));
  REQUIRE(noise_line(n) ==
          "machine noise: the sampled cpu phases lost 6.0% of their CPU time to interruptions "
          "(mean of 2 repetitions); the profile's OS noise predicts 3.8%\n");
  REQUIRE(noise_json(n)["repetitions"] == 2);
  reps[0].speed.during_sampled = false;
  reps[1].speed.during_sampled = false;
  REQUIRE(noise_line(noise_report(reps, m)).empty());
  REQUIRE(noise_json(noise_report(reps, m)).is_null());
}
