// sweep_grid.cpp: the --vary range grammar, the grid and its shards (see
// sweep_grid.hpp).
#include "validate/sweep_grid.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <set>
#include <stdexcept>

namespace poolsim::validate {

namespace {

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

// A number followed by an optional unit suffix: "64", "1.5ms", "500/s", "1e9".
struct NumberWithSuffix {
  double value = 0;
  bool integer = true;  // a whole number written without '.'
  std::string suffix;
};

std::optional<NumberWithSuffix> split_number(const std::string& text) {
  if (text.empty() || !(std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '.'))
    return std::nullopt;
  NumberWithSuffix n;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), n.value);
  if (ec != std::errc() || !std::isfinite(n.value)) return std::nullopt;
  const std::string digits(text.data(), p);
  n.integer = digits.find('.') == std::string::npos && n.value == std::floor(n.value);
  n.suffix = std::string(p, text.data() + text.size());
  return n;
}

// Shortest text of at most 12 significant digits that reads back as v (no
// "1.0000000000000002"). Read back with from_chars: std::stod throws
// out_of_range on a subnormal such as 1e-320 (found by fuzz_vary).
std::string format_number(double v) {
  for (int digits = 1; digits <= 12; ++digits) {
    std::string s = fmt::format("{:.{}g}", v, digits);
    double back = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), back);
    if ((ec == std::errc() && back == v) || digits == 12) return s;
  }
  return fmt::format("{}", v);
}

// Splits at commas outside {} and [] (a value may be a YAML flow map or list).
std::vector<std::string> split_top_level(const std::string& text) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : text) {
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(trim(cur));
  return out;
}

std::string too_many(std::size_t max_values) {
  return fmt::format("a sweep runs at most {} points per process (see docs/sweeps.md)", max_values);
}

// A parsed range: start, end, and the step (op '+') or factor (op '*').
struct Range {
  NumberWithSuffix a, b;
  char op = 0;
  double step = 1;
  bool integer = true;
};

Range parse_range(const std::string& text, std::size_t dots) {
  Range r;
  const std::string start_text = trim(text.substr(0, dots));
  std::string rest = trim(text.substr(dots + 2));
  std::string step_text;
  const auto op_at = rest.find_last_of("*+");
  if (op_at != std::string::npos) {
    r.op = rest[op_at];
    step_text = trim(rest.substr(op_at + 1));
    rest = trim(rest.substr(0, op_at));
  }
  const auto a = split_number(start_text);
  const auto b = split_number(rest);
  if (!a || !b)
    throw std::invalid_argument(
        "a range is START..END, START..END+STEP or START..END*FACTOR with numbers "
        "(optionally with one unit: 1ms..8ms*2), got '" +
        abbreviate(text) + "'");
  if (a->suffix != b->suffix)
    throw std::invalid_argument("both ends of the range '" + abbreviate(text) +
                                "' need the same unit ('" + a->suffix + "' vs '" + b->suffix +
                                "')");
  if (b->value < a->value)
    throw std::invalid_argument("the range end " + rest + " is below its start " + start_text);
  r.a = *a;
  r.b = *b;
  // Integer output only where every value is an exact integer of a double
  // (below 2^53), so rounding to long long cannot overflow.
  constexpr double kExactIntegers = 9007199254740992.0;  // 2^53
  r.integer = a->integer && b->integer && b->value < kExactIntegers;
  if (!r.op) return r;
  const auto s = split_number(step_text);
  if (!s)
    throw std::invalid_argument("expected a number after '" + std::string(1, r.op) + "' in '" +
                                abbreviate(text) + "'");
  if (r.op == '*' && !s->suffix.empty())
    throw std::invalid_argument("the factor of a geometric range is a plain number, got '" +
                                step_text + "'");
  if (r.op == '+' && !s->suffix.empty() && s->suffix != a->suffix)
    throw std::invalid_argument("the step '" + step_text + "' needs the range's unit '" +
                                a->suffix + "'");
  r.step = s->value;
  if (r.op == '+') {
    if (!(r.step > 0))
      throw std::invalid_argument("the step of the range '" + text + "' must be greater than 0");
    r.integer = r.integer && s->integer;
  } else if (!(r.step > 1)) {
    throw std::invalid_argument("the factor of the geometric range '" + text +
                                "' must be greater than 1");
  }
  if (r.op == '*' && !(r.a.value > 0))
    throw std::invalid_argument("a geometric range must start above 0, got '" + text + "'");
  return r;
}

std::vector<std::string> expand_range(const std::string& text, std::size_t dots,
                                      std::size_t max_values) {
  const Range r = parse_range(text, dots);
  // Values up to the end, with a relative slack of 1e-9 so 0.1..0.3+0.1 keeps 0.3.
  const double end = r.b.value * (1 + 1e-9) + 1e-12;
  // The count before expanding: 1..1e9 must not allocate a billion strings.
  // (the same relative slack as `end`, applied to the number of steps).
  const double steps = r.op == '*' ? std::log(r.b.value / r.a.value) / std::log(r.step)
                                   : (r.b.value - r.a.value) / r.step;
  const double nearest = std::round(steps);
  const double count =
      (std::abs(steps - nearest) <= 1e-9 * std::max(1.0, nearest) ? nearest : std::floor(steps)) +
      1;
  if (count > static_cast<double>(max_values))
    throw std::invalid_argument(
        fmt::format("the range '{}' has {} values; {}", abbreviate(text),
                    count < 1e15 ? fmt::format("{:.0f}", count) : fmt::format("{:.3g}", count),
                    too_many(max_values)));
  // The loop stops at that count too: a step far below the ends' precision
  // (1e5..1e5+1e-12) would otherwise crawl through the slack in `end`, one
  // value per step, for 1e8 steps (found by fuzz_vary).
  const auto n_values = static_cast<long long>(count);
  std::vector<std::string> out;
  std::set<long long> seen_int;
  for (long long i = 0; i < n_values; ++i) {
    const double v = r.op == '*' ? r.a.value * std::pow(r.step, static_cast<double>(i))
                                 : r.a.value + static_cast<double>(i) * r.step;
    if (v > end) break;
    if (r.integer) {
      // Integer ranges give integers; a geometric factor like 1.5 rounds to the
      // nearest one, and repeats (1, 1.5 -> 2, 2.25 -> 2) are dropped.
      const long long n = std::llround(v);
      if (!seen_int.insert(n).second) continue;
      out.push_back(std::to_string(n) + r.a.suffix);
    } else {
      // Values are written with 12 significant digits: a step finer than
      // that would run the same point twice (found by fuzz_vary).
      std::string value = format_number(v) + r.a.suffix;
      if (!out.empty() && out.back() == value)
        throw std::invalid_argument("the range '" + abbreviate(text) +
                                    "' steps below 12 significant digits: two of its values "
                                    "both read " +
                                    value);
      out.push_back(std::move(value));
    }
  }
  return out;
}

}  // namespace

std::string abbreviate(const std::string& text) {
  constexpr std::size_t kShown = 60;
  if (text.size() <= kShown + 20) return text;
  return text.substr(0, kShown) + fmt::format("... ({} characters)", text.size());
}

std::vector<std::string> expand_values(const std::string& text, std::size_t max_values) {
  const std::string t = trim(text);
  if (t.empty()) throw std::invalid_argument("no values given");
  // A range unless it is a flow map or list (whose text may hold "..").
  const auto dots = t.find("..");
  if (dots != std::string::npos && t.front() != '{' && t.front() != '[' &&
      t.find(',') == std::string::npos)
    return expand_range(t, dots, max_values);
  std::vector<std::string> values = split_top_level(t);
  for (const auto& v : values)
    if (v.empty()) throw std::invalid_argument("empty value in the list '" + abbreviate(t) + "'");
  if (values.size() > max_values)
    throw std::invalid_argument(
        fmt::format("the list has {} values; {}", values.size(), too_many(max_values)));
  return values;
}

VaryAxis parse_vary(const std::string& spec, std::size_t max_values) {
  const auto eq = spec.find('=');
  if (eq == std::string::npos)
    throw std::invalid_argument("--vary " + abbreviate(spec) +
                                ": expected KEY=VALUES, e.g. backend.threads=1,2,4,8 or 1..64*2");
  VaryAxis axis;
  axis.key = trim(spec.substr(0, eq));
  if (axis.key.empty())
    throw std::invalid_argument("--vary " + abbreviate(spec) + ": the key before '=' is empty");
  try {
    axis.values = expand_values(spec.substr(eq + 1), max_values);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("--vary " + abbreviate(spec) + ": " + e.what());
  }
  return axis;
}

std::size_t grid_size(const std::vector<VaryAxis>& axes, std::size_t max_points) {
  std::set<std::string> keys;
  std::size_t total = 1;
  for (const auto& a : axes) {
    if (!keys.insert(a.key).second)
      throw std::invalid_argument("--vary " + a.key + " is given twice");
    if (a.values.empty()) throw std::invalid_argument("--vary " + a.key + " has no values");
    total *= a.values.size();
    if (total > max_points)
      throw std::invalid_argument(
          fmt::format("the grid has more than {} points; narrow a --vary or share it among more "
                      "processes (--shard K/N, mpirun; see docs/sweeps.md)",
                      max_points));
  }
  return total;
}

std::vector<std::vector<std::string>> expand_grid(const std::vector<VaryAxis>& axes,
                                                  std::size_t max_points) {
  const std::size_t total = grid_size(axes, max_points);
  if (axes.empty()) return {{}};
  std::vector<std::vector<std::string>> grid;
  grid.reserve(total);
  std::vector<std::size_t> idx(axes.size(), 0);
  for (std::size_t n = 0; n < total; ++n) {
    std::vector<std::string> point;
    point.reserve(axes.size());
    for (std::size_t i = 0; i < axes.size(); ++i) point.push_back(axes[i].values[idx[i]]);
    grid.push_back(std::move(point));
    // Odometer, last axis fastest.
    for (std::size_t i = axes.size(); i-- > 0;) {
      if (++idx[i] < axes[i].values.size()) break;
      idx[i] = 0;
    }
  }
  return grid;
}

std::size_t grid_cap(std::size_t processes) {
  if (processes <= 1) return kMaxGridPoints;
  if (processes >= kMaxDistributedPoints / kMaxGridPoints) return kMaxDistributedPoints;
  return kMaxGridPoints * processes;
}

std::vector<std::string> grid_point(const std::vector<VaryAxis>& axes, std::size_t index) {
  std::vector<std::string> point(axes.size());
  for (std::size_t i = axes.size(); i-- > 0;) {
    point[i] = axes[i].values[index % axes[i].values.size()];
    index /= axes[i].values.size();
  }
  return point;
}

std::string point_label(const std::vector<VaryAxis>& axes, const std::vector<std::string>& values) {
  std::string out;
  for (std::size_t i = 0; i < axes.size() && i < values.size(); ++i) {
    if (!out.empty()) out += ' ';
    out += axes[i].key + "=" + values[i];
  }
  return out;
}

Shard parse_shard(const std::string& text) {
  const auto bad = [&] {
    return std::invalid_argument("--shard " + abbreviate(text) +
                                 ": expected K/N with 1 <= K <= N, e.g. --shard 2/8 "
                                 "(Slurm: --shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT "
                                 "with --array=1-N)");
  };
  const auto slash = text.find('/');
  if (slash == std::string::npos) throw bad();
  Shard s;
  const auto parse = [&](std::string_view part, std::size_t& out) {
    const auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), out);
    if (part.empty() || ec != std::errc() || p != part.data() + part.size()) throw bad();
  };
  parse(std::string_view(text).substr(0, slash), s.k);
  parse(std::string_view(text).substr(slash + 1), s.n);
  if (s.n < 1 || s.k < 1 || s.k > s.n) throw bad();
  return s;
}

std::vector<std::size_t> shard_indices(std::size_t points, Shard s) {
  std::vector<std::size_t> out;
  for (std::size_t i = s.k - 1; i < points; i += s.n) out.push_back(i);
  return out;
}

}  // namespace poolsim::validate
