#include "validate/output.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "validate/sizing.hpp"
#include "validate/table.hpp"

namespace poolsim::validate {

using nlohmann::ordered_json;

ordered_json backend_json(const BackendSpec& b) {
  ordered_json j;
  j["kind"] = std::string(to_string(b.kind));
  switch (b.kind) {
    case BackendKind::thread_per_task:
      j["stack"] = b.stack;
      break;
    case BackendKind::pool:
      j["threads"] = b.threads;
      j["max_threads"] = b.max_threads;
      if (b.queue) j["queue"] = *b.queue;
      else j["queue"] = "unbounded";
      j["reject"] = std::string(to_string(b.reject));
      j["keep_alive"] = to_seconds(b.keep_alive);
      j["stack"] = b.stack;
      break;
    case BackendKind::work_stealing:
      j["threads"] = b.threads;
      j["stack"] = b.stack;
      break;
    case BackendKind::injecting_pool:
      j["min_threads"] = b.min_threads;
      j["max_threads"] = b.max_threads;
      j["injection_delay"] = to_seconds(b.injection_delay);
      j["stack"] = b.stack;
      break;
    case BackendKind::virtual_threads: j["carriers"] = b.carriers; break;
    case BackendKind::event_loop: j["loops"] = b.loops; break;
    case BackendKind::tbb:
    case BackendKind::asio_pool: j["threads"] = b.threads; break;
  }
  return j;
}

ordered_json machine_json(const MachineProfile& m) {
  ordered_json j;
  j["name"] = m.name;
  j["cores"] = m.cores;
  j["slice"] = to_seconds(m.slice);
  j["tick"] = to_seconds(m.tick);
  j["switch_cost"] = to_seconds(m.switch_cost);
  j["cache_refill"] = to_seconds(m.cache_refill);
  j["migration_cost"] = to_seconds(m.migration_cost);
  j["wakeup_latency"] = to_seconds(m.wakeup_latency);
  j["idle_exit"] = to_seconds(m.idle_exit);
  j["timer_slack"] = to_seconds(m.timer_slack);
  j["thread_create"] = to_seconds(m.thread_create);
  j["thread_exit"] = to_seconds(m.thread_exit);
  j["stack_reserve"] = m.stack_reserve;
  j["stack_touch"] = m.stack_touch;
  j["queue_handover"] = to_seconds(m.queue_handover);
  j["fiber_create"] = to_seconds(m.fiber_create);
  j["fiber_switch"] = to_seconds(m.fiber_switch);
  j["timer_arm"] = to_seconds(m.timer_arm);
  j["stack_cache"] = m.stack_cache;
  j["stack_map"] = to_seconds(m.stack_map);
  j["stack_unmap"] = to_seconds(m.stack_unmap);
  j["tlb_shootdown"] = to_seconds(m.tlb_shootdown);
  j["wake_pack_util"] = m.wake_pack_util;
  j["wake_cost"] = to_seconds(m.wake_cost);
  j["wake_ipi"] = to_seconds(m.wake_ipi);
  return j;
}

ordered_json limits_json(const Limits& l) {
  ordered_json j = ordered_json::object();
  if (l.cpus) {
    j["cpus"] = *l.cpus;
    j["period"] = to_seconds(l.period);
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
  j["tasks"] = w.tasks.size();
  j["arrival"] = w.graph ? "graph" : std::string(to_string(w.arrival));
  j["total_work"] = to_seconds(w.total_work);
  j["critical_path"] = to_seconds(w.critical_path);
  if (w.graph) {
    double length = 0;
    for (const auto& t : w.tasks) length += to_seconds(w.length_of(t));
    j["useful_threads_max"] = graph_bounds(1, to_seconds(w.total_work), length, to_seconds(w.critical_path)).useful_threads;
  }
  return j;
}
}  // namespace

ordered_json simulated_json(const Scenario& s, const Workload& w, const Metrics& m, const RunResult& r) {
  ordered_json j = header(s, "simulated");
  j["workload"] = workload_json(w);
  ordered_json mj;
  for (std::size_t i = 0; i < kMetricCount; ++i) mj[std::string(kMetricNames[i])] = m.values[i];
  j["metrics"] = mj;
  if (!r.extra.empty()) j["extra"] = r.extra;
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
                           const std::vector<RunResult>& reps) {
  ordered_json j = header(s, "measured");
  ordered_json mj;
  for (std::size_t i = 0; i < kMetricCount; ++i) mj[std::string(kMetricNames[i])] = stats_json(st[i]);
  j["metrics"] = mj;
  // Runtime-specific counters, averaged over repetitions.
  std::map<std::string, double> extra;
  for (const auto& r : reps)
    for (const auto& [k, v] : r.extra) extra[k] += v / static_cast<double>(reps.size());
  if (!extra.empty()) j["extra"] = extra;
  return j;
}

std::string format_metric(Metric m, double v) {
  const auto unit = unit_of(m);
  if (unit == "s") return format_seconds(v);
  if (unit == "B") return format_bytes(v);
  if (unit == "/s") return fmt::format("{:.4g}/s", v);
  if (unit == "fraction") return fmt::format("{:.1f}%", v * 100);
  if (std::fabs(v - std::round(v)) < 1e-9) return fmt::format("{}", static_cast<long long>(std::llround(v)));
  return fmt::format("{:.1f}", v);
}

std::string simulated_table(const Metrics& m, const RunResult& r) {
  Table t({"metric", "predicted"}, {false, true});
  for (std::size_t i = 0; i < kMetricCount; ++i) {
    const auto metric = static_cast<Metric>(i);
    t.add_row({std::string(kMetricNames[i]), format_metric(metric, m[metric])});
  }
  for (const auto& [k, v] : r.extra) t.add_row({k, fmt::format("{:.6g}", v)});
  return t.str();
}

std::string measured_table(const std::array<MetricStats, kMetricCount>& st) {
  Table t({"metric", "mean", "sd", "min", "max", "n"}, {false, true, true, true, true, true});
  for (std::size_t i = 0; i < kMetricCount; ++i) {
    const auto metric = static_cast<Metric>(i);
    const auto& s = st[i];
    t.add_row({std::string(kMetricNames[i]), format_metric(metric, s.mean), format_metric(metric, s.sd),
               format_metric(metric, s.min), format_metric(metric, s.max), std::to_string(s.n)});
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
  std::string out = fmt::format("{} tasks ({}), total CPU work {}", w.tasks.size(), kind, format_duration(w.total_work));
  if (w.graph) {
    double length = 0;
    for (const auto& t : w.tasks) length += to_seconds(w.length_of(t));
    const auto b = graph_bounds(s.capacity(), to_seconds(w.total_work), length, to_seconds(w.critical_path));
    out += fmt::format(", critical path {}, makespan >= {}, useful threads <= {}", format_duration(w.critical_path),
                       format_seconds(b.makespan_bound), b.useful_threads);
  }
  return out;
}

}  // namespace poolsim::validate
