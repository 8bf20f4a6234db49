#include "models/units.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>

namespace poolsim {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits "1.5ms" into 1.5 and "ms". Returns false when there is no number.
bool split_number(std::string_view s, double& value, std::string_view& suffix) {
  s = trim(s);
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  bool digits = false;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) {
    digits = digits || std::isdigit(static_cast<unsigned char>(s[i]));
    ++i;
  }
  if (!digits) return false;
  // exponent (1e3us)
  if (i + 1 < s.size() && (s[i] == 'e' || s[i] == 'E') &&
      (std::isdigit(static_cast<unsigned char>(s[i + 1])) || s[i + 1] == '-' || s[i + 1] == '+')) {
    std::size_t j = i + 1;
    if (s[j] == '-' || s[j] == '+') ++j;
    if (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) {
      while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
      i = j;
    }
  }
  std::string num(s.substr(0, i));
  char* end = nullptr;
  value = std::strtod(num.c_str(), &end);
  if (end != num.c_str() + num.size()) return false;
  suffix = trim(s.substr(i));
  return std::isfinite(value);
}

}  // namespace

Duration parse_duration(std::string_view text) {
  double v = 0;
  std::string_view unit;
  if (!split_number(text, v, unit))
    throw UnitError("expected a duration such as 250ns, 10us, 1.5ms or 2s, got '" +
                    std::string(text) + "'");
  if (unit.empty())
    throw UnitError("duration needs a unit: ns, us, ms, s (got '" + std::string(trim(text)) + "')");
  double scale = 0;
  if (unit == "ns")
    scale = 1;
  else if (unit == "us" || unit == "µs")
    scale = 1e3;
  else if (unit == "ms")
    scale = 1e6;
  else if (unit == "s")
    scale = 1e9;
  else if (unit == "min")
    scale = 60e9;
  else
    throw UnitError("unknown duration unit '" + std::string(unit) + "': expected ns, us, ms or s");
  if (v < 0)
    throw UnitError("a duration cannot be negative (got '" + std::string(trim(text)) + "')");
  const double ns = v * scale;
  if (ns > static_cast<double>(kMaxDuration.count()))
    throw UnitError(
        "a duration must be at most 3155760000s (100 years, the simulated horizon), got '" +
        std::string(trim(text)) + "'");
  return Duration{static_cast<std::int64_t>(std::llround(ns))};
}

double parse_rate(std::string_view text) {
  const auto t = trim(text);
  const auto slash = t.find('/');
  if (slash == std::string_view::npos)
    throw UnitError("rate needs a unit: /s, /ms or /us (e.g. 5000/s), got '" + std::string(t) +
                    "'");
  double v = 0;
  std::string_view rest;
  if (!split_number(t.substr(0, slash), v, rest) || !rest.empty())
    throw UnitError("expected a rate such as 5000/s, got '" + std::string(t) + "'");
  const auto unit = trim(t.substr(slash + 1));
  double per_second = 0;
  if (unit == "s")
    per_second = 1;
  else if (unit == "ms")
    per_second = 1e3;
  else if (unit == "us")
    per_second = 1e6;
  else if (unit == "min")
    per_second = 1.0 / 60;
  else
    throw UnitError("unknown rate unit '/" + std::string(unit) + "': expected /s, /ms or /us");
  if (v <= 0) throw UnitError("a rate must be positive (got '" + std::string(t) + "')");
  const double r = v * per_second;
  if (r > kMaxRate)
    throw UnitError(
        "a rate must be at most 1e9/s (one arrival per nanosecond, the simulator's time "
        "resolution), got '" +
        std::string(t) + "'");
  if (r < kMinRate)
    throw UnitError(
        "a rate must be at least 3.17e-10/s (one arrival per 100 years, the simulated "
        "horizon), got '" +
        std::string(t) + "'");
  return r;
}

Bytes parse_size(std::string_view text) {
  double v = 0;
  std::string_view unit;
  if (!split_number(text, v, unit))
    throw UnitError("expected a size such as 64KiB, 8MiB or 4096B, got '" + std::string(text) +
                    "'");
  if (unit.empty())
    throw UnitError("size needs a unit: B, KiB, MiB, GiB (got '" + std::string(trim(text)) + "')");
  double scale = 0;
  if (unit == "B")
    scale = 1;
  else if (unit == "KiB")
    scale = 1024.0;
  else if (unit == "MiB")
    scale = 1024.0 * 1024;
  else if (unit == "GiB")
    scale = 1024.0 * 1024 * 1024;
  else if (unit == "KB" || unit == "kB")
    scale = 1e3;
  else if (unit == "MB")
    scale = 1e6;
  else if (unit == "GB")
    scale = 1e9;
  else
    throw UnitError("unknown size unit '" + std::string(unit) + "': expected B, KiB, MiB or GiB");
  if (v < 0) throw UnitError("a size cannot be negative (got '" + std::string(trim(text)) + "')");
  if (v * scale > static_cast<double>(kMaxBytes))
    throw UnitError("a size must be at most 1TiB, got '" + std::string(trim(text)) + "'");
  return static_cast<Bytes>(std::llround(v * scale));
}

double parse_fraction(std::string_view text, bool allow_above_one) {
  double v = 0;
  std::string_view unit;
  if (!split_number(text, v, unit))
    throw UnitError("expected a fraction such as 70% or 0.7, got '" + std::string(text) + "'");
  if (unit == "%")
    v /= 100;
  else if (!unit.empty())
    throw UnitError("expected a fraction such as 70% or 0.7, got '" + std::string(trim(text)) +
                    "'");
  if (v < 0 || (!allow_above_one && v > 1))
    throw UnitError("a fraction must be between 0 and 1 (0% and 100%), got '" +
                    std::string(trim(text)) + "'");
  return v;
}

std::string format_seconds(double s) {
  char buf[64];
  const double a = std::fabs(s);
  if (a == 0) return "0";
  if (a < 1e-6)
    std::snprintf(buf, sizeof buf, "%.0f ns", s * 1e9);
  else if (a < 1e-3)
    std::snprintf(buf, sizeof buf, "%.3g us", s * 1e6);
  else if (a < 1)
    std::snprintf(buf, sizeof buf, "%.3g ms", s * 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.4g s", s);
  return buf;
}

std::string format_duration(Duration d) { return format_seconds(to_seconds(d)); }

std::string format_bytes(double b) {
  char buf[64];
  const double a = std::fabs(b);
  if (a < 1024)
    std::snprintf(buf, sizeof buf, "%.0f B", b);
  else if (a < 1024.0 * 1024)
    std::snprintf(buf, sizeof buf, "%.3g KiB", b / 1024);
  else if (a < 1024.0 * 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%.3g MiB", b / (1024.0 * 1024));
  else
    std::snprintf(buf, sizeof buf, "%.3g GiB", b / (1024.0 * 1024 * 1024));
  return buf;
}

}  // namespace poolsim
