// units.hpp: the value types of poolsim's vocabulary.
//
// Every time in poolsim is an integer number of nanoseconds (Duration), so the
// simulator's arithmetic is exact and reproducible; doubles appear only at the
// edge, in metrics (SI seconds) and in analytic models. Sizes are bytes.
//
// parse_* read the spec's written forms (docs/scenarios.md, "Values")
// and throw UnitError with what was expected; the scenario loader adds the
// file, line, column and key to that message.
#pragma once

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace poolsim {

using Duration = std::chrono::duration<std::int64_t, std::nano>;
using Bytes = std::int64_t;

// The simulated horizon: 100 Julian years (3,155,760,000 s). No single
// duration may be longer, and the workload generator refuses a task list whose
// serial length (last arrival plus every phase and think time) is longer, so
// simulated times stay below a third of the int64 nanosecond range (292
// years) and the runtimes' own overheads cannot overflow it either.
inline constexpr Duration kMaxDuration{3'155'760'000LL * 1'000'000'000LL};
// Rates: at most one arrival per nanosecond (the simulator's time
// resolution), at least one per horizon.
inline constexpr double kMaxRate = 1e9;
inline constexpr double kMinRate = 1e9 / static_cast<double>(kMaxDuration.count());
// The largest size: 1 TiB (a thread stack or a touched region beyond it is a
// typo, and byte counts summed over 20,000 threads stay far inside int64).
inline constexpr Bytes kMaxBytes = 1LL << 40;

inline constexpr double to_seconds(Duration d) { return static_cast<double>(d.count()) / 1e9; }
inline constexpr Duration from_seconds(double s) {
  return Duration{static_cast<std::int64_t>(s * 1e9 + (s >= 0 ? 0.5 : -0.5))};
}

// A value that does not have the expected form; what() says what was expected.
class UnitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "250ns", "10us", "1.5ms", "2s". A bare number is an error
// ("duration needs a unit: ns, us, ms, s"). Negative durations and durations
// above kMaxDuration are refused.
Duration parse_duration(std::string_view text);
// "5000/s", "20/ms", "3/us": events per second, in [kMinRate, kMaxRate].
double parse_rate(std::string_view text);
// "64KiB", "1MiB", "8MiB", "4096B", "1GiB"; at most kMaxBytes.
Bytes parse_size(std::string_view text);
// "70%" or "0.7", in [0, 1] unless allow_above_one.
double parse_fraction(std::string_view text, bool allow_above_one = false);

// Human-readable forms used by tables: "1.50 ms", "12.0 MiB".
std::string format_duration(Duration d);
std::string format_seconds(double seconds);
std::string format_bytes(double bytes);

}  // namespace poolsim
