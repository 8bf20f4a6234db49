#include "validate/output.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <type_traits>
#include <variant>

#include "models/backend_registry.hpp"
#include "models/machine_fields.hpp"
#include "validate/sizing.hpp"
#include "validate/table.hpp"

namespace poolsim::validate {

using nlohmann::ordered_json;

ordered_json backend_json(const BackendSpec& b) {
  ordered_json j;
  j["kind"] = std::string(to_string(b.kind));
  // The kind's parameters in registry order: thread counts and sizes as
  // integers, durations in seconds, a queue as its capacity or "unbounded",
  // a reject policy by name.
  for (const BackendParam& p : backend_info(b.kind).params) {
    const std::string key(p.key);
    std::visit(
        [&](auto member) {
          const auto& v = b.*member;
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, Duration>)
            j[key] = to_seconds(v);
          else if constexpr (std::is_same_v<T, std::optional<std::int64_t>>)
            j[key] = v ? ordered_json(*v) : ordered_json("unbounded");
          else if constexpr (std::is_same_v<T, RejectPolicy>)
            j[key] = std::string(to_string(v));
          else
            j[key] = v;
        },
        p.member);
  }
  return j;
}

ordered_json machine_json(const MachineProfile& m) {
  ordered_json j;
  j["name"] = m.name;
  // Counts and sizes as integers, durations in seconds, fractions as they are.
  for (const MachineField& f : kMachineFields) {
    const std::string key(f.name);
    std::visit(
        [&](auto member) {
          const auto& v = m.*member;
          if constexpr (std::is_same_v<std::decay_t<decltype(v)>, Duration>)
            j[key] = to_seconds(v);
          else
            j[key] = v;
        },
        f.member);
  }
  return j;
}

ordered_json limits_json(const Limits& l) {
  ordered_json j = ordered_json::object();
  if (l.cpus) {
    j["cpus"] = *l.cpus;
    j["period"] = to_seconds(l.period);
    if (l.burst > Duration{0}) j["burst"] = to_seconds(l.burst);
  }
  if (!l.cpuset.empty()) j["cpuset"] = l.cpuset_text;
  return j;
}

namespace {
ordered_json header(const Scenario& s, std::string_view mode) {
  ordered_json j;
  j["scenario"] = s.name;
  j["mode"] = std::string(mode);
  j["backend"] = backend_json(s.backend);
  j["machine"] = machine_json(s.machine);
  if (s.limits.cpus || !s.limits.cpuset.empty()) j["limits"] = limits_json(s.limits);
  j["seed"] = s.seed;
  return j;
}
ordered_json workload_json(const Workload& w) {
  ordered_json j;
  j["tasks"] = w.task_count();
  j["arrival"] = w.graph ? "graph" : std::string(to_string(w.arrival));
  j["total_work"] = to_seconds(w.total_work);
  j["critical_path"] = to_seconds(w.critical_path);
  if (w.graph) {
    double length = 0;
    for (const auto& t : w.tasks) length += to_seconds(w.length_of(t));
    j["useful_threads_max"] =
        graph_bounds(1, to_seconds(w.total_work), length, to_seconds(w.critical_path))
            .useful_threads;
  }
  return j;
}
}  // namespace

ordered_json simulated_json(const Scenario& s, const Workload& w, const Metrics& m,
                            const RunResult& r) {
  ordered_json j = header(s, "simulated");
  j["workload"] = workload_json(w);
  ordered_json mj;
  for (std::size_t i = 0; i < kMetricCount; ++i)
    if (m.applies(static_cast<Metric>(i))) mj[std::string(kMetricNames[i])] = m.values[i];
  j["metrics"] = mj;
  // Present only when latency_p50/p90/p99 are not exact (a long streamed run).
  if (!m.quantiles_exact)
    j["quantiles"] = {{"mode", "histogram"}, {"relative_error", m.quantile_relative_error}};
  if (!r.extra.empty()) j["extra"] = r.extra;
  j["warnings"] = warnings_json(overload_warnings(s, w, r, m));
  return j;
}

ordered_json stats_json(const MetricStats& s) {
  ordered_json j;
  j["mean"] = s.mean;
  j["sd"] = s.sd;
  j["min"] = s.min;
  j["max"] = s.max;
  j["n"] = s.n;
  return j;
}

ordered_json measured_json(const Scenario& s, const std::array<MetricStats, kMetricCount>& st,
                           const std::vector<RunResult>& reps,
                           const std::vector<Warning>& warnings) {
  ordered_json j = header(s, "measured");
  ordered_json mj;
  for (std::size_t i = 0; i < kMetricCount; ++i)
    mj[std::string(kMetricNames[i])] = stats_json(st[i]);
  j["metrics"] = mj;
  // Runtime-specific counters, averaged over repetitions.
  std::map<std::string, double> extra;
  for (const auto& r : reps)
    for (const auto& [k, v] : r.extra) extra[k] += v / static_cast<double>(reps.size());
  if (!extra.empty()) j["extra"] = extra;
  j["warnings"] = warnings_json(warnings);
  return j;
}

ordered_json warnings_json(const std::vector<Warning>& warnings) {
  ordered_json j = ordered_json::array();
  for (const auto& w : warnings) j.push_back({{"kind", w.kind}, {"message", w.message}});
  return j;
}

std::string warnings_text(const std::vector<Warning>& warnings) {
  std::string out;
  for (const auto& w : warnings) out += "\nwarning: " + w.message + "\n";
  return out;
}

std::string format_metric(Metric m, double v) {
  const auto unit = unit_of(m);
  if (unit == "s") return format_seconds(v);
  if (unit == "B") return format_bytes(v);
  if (unit == "/s") return fmt::format("{:.4g}/s", v);
  if (unit == "fraction") return fmt::format("{:.1f}%", v * 100);
  if (std::fabs(v - std::round(v)) < 1e-9)
    return fmt::format("{}", static_cast<long long>(std::llround(v)));
  return fmt::format("{:.1f}", v);
}

std::string simulated_table(const Metrics& m, const RunResult& r) {
  Table t({"metric", "predicted"}, {false, true});
  for (std::size_t i = 0; i < kMetricCount; ++i) {
    const auto metric = static_cast<Metric>(i);
    if (!m.applies(metric)) continue;
    t.add_row({std::string(kMetricNames[i]), format_metric(metric, m[metric])});
  }
  for (const auto& [k, v] : r.extra) t.add_row({k, fmt::format("{:.6g}", v)});
  if (m.quantiles_exact) return t.str();
  return t.str() + fmt::format(
                       "latency_p50/p90/p99 from a log-bucketed histogram, within {:g}% of the "
                       "exact values (--quantiles exact keeps every latency)\n",
                       100 * m.quantile_relative_error);
}

std::string measured_table(const std::array<MetricStats, kMetricCount>& st) {
  Table t({"metric", "mean", "sd", "min", "max", "n"}, {false, true, true, true, true, true});
  for (std::size_t i = 0; i < kMetricCount; ++i) {
    const auto metric = static_cast<Metric>(i);
    const auto& s = st[i];
    t.add_row({std::string(kMetricNames[i]), format_metric(metric, s.mean),
               format_metric(metric, s.sd), format_metric(metric, s.min),
               format_metric(metric, s.max), std::to_string(s.n)});
  }
  return t.str();
}

void write_json(const std::string& path, const ordered_json& j) {
  if (path == "-") {
    std::cout << j.dump(2, ' ', false, ordered_json::error_handler_t::replace) << '\n';
    return;
  }
  // A path that cannot be opened is the user's mistake (exit 2, as for
  // --trace); a write that fails once open (a full disk) is the machine
  // refusing (exit 3).
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw std::invalid_argument("--json " + path + ": is a directory, expected a file path");
  std::ofstream f(path);
  if (!f)
    throw std::invalid_argument("--json " + path +
                                ": cannot open for writing: " + std::strerror(errno));
  // Invalid UTF-8 in a user's string (a profile name) becomes U+FFFD.
  f << j.dump(2, ' ', false, ordered_json::error_handler_t::replace) << '\n';
  f.flush();
  if (!f) throw std::runtime_error("--json " + path + ": writing failed: " + std::strerror(errno));
}

std::string describe_workload(const Scenario& s, const Workload& w) {
  std::string kind = w.graph ? "graph" : std::string(to_string(w.arrival));
  std::string out = fmt::format("{} tasks ({}), total CPU work {}", w.task_count(), kind,
                                format_duration(w.total_work));
  if (w.graph) {
    double length = 0;
    for (const auto& t : w.tasks) length += to_seconds(w.length_of(t));
    const auto b =
        graph_bounds(s.capacity(), to_seconds(w.total_work), length, to_seconds(w.critical_path));
    out += fmt::format(", critical path {}, makespan >= {}, useful threads <= {}",
                       format_duration(w.critical_path), format_seconds(b.makespan_bound),
                       b.useful_threads);
  }
  return out;
}

}  // namespace poolsim::validate
