// speed_check.cpp: the machine-speed canary (design comment in speed_check.hpp).
#include "real/speed_check.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "real/cpu_work.hpp"

namespace poolsim::real {

double canary_speed() { return canary_rate() / reference_units_per_ns(); }

bool within_band(double speed, double band) { return std::fabs(speed - 1.0) <= band; }

bool within_band(const SpeedCheck& s, double band) {
  return within_band(s.before, band) && within_band(s.after, band) &&
         (!s.during_sampled || within_band(s.during, band));
}

bool steady(const SpeedCheck& s, double drift) {
  return s.before > 0 && within_band(s.after / s.before, drift);
}

double wait_for_speed(double band, Duration limit,
                      const std::function<void(const std::string&)>& note) {
  double speed = canary_speed();
  if (within_band(speed, band)) return speed;
  if (note)
    note(
        fmt::format("the machine runs at {} of its calibrated speed: waiting up to {:.0f} s for it",
                    format_speed(speed), to_seconds(limit)));
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!within_band(speed, band) && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    speed = canary_speed();
  }
  return speed;
}

std::string format_speed(double speed) { return fmt::format("{:.2f}x", speed); }

std::string describe_speed(const SpeedCheck& s) {
  if (!s.measured) return "not checked";
  std::string out = "before " + format_speed(s.before);
  out += s.during_sampled ? ", during " + format_speed(s.during) : ", during: no phase sampled";
  out += ", after " + format_speed(s.after);
  out += fmt::format(", {} attempt{}", s.attempts, s.attempts == 1 ? "" : "s");
  return out;
}

}  // namespace poolsim::real
