// warnings.cpp: see warnings.hpp for the decision rule and its sources.
#include "models/warnings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <span>

namespace poolsim {
std::string rate_text(double r) {
  if (r >= 100) return fmt::format("{:.0f}/s", r);
  return fmt::format("{:.3g}/s", r);
}

namespace {

std::string units_text(double units, const std::string& name) {
  if (std::fabs(units - std::round(units)) < 1e-9)
    return fmt::format("{} {}", static_cast<long long>(std::llround(units)), name);
  return fmt::format("{:g} {}", units, name);
}

Capacity make(std::string resource, double units, std::string unit_name, double hold) {
  Capacity c;
  c.resource = std::move(resource);
  c.units = units;
  c.unit_name = std::move(unit_name);
  c.hold = hold;
  c.max_rate = units / hold;
  return c;
}

// Workers of a thread-holding backend and whether the waits hold them.
struct Workers {
  int count = 0;           // 0: no bound (one thread per task)
  bool hold_waits = true;  // false: only the CPU phases hold one
  const char* name = "threads";
};
Workers workers_of(const BackendSpec& b) {
  switch (b.kind) {
    case BackendKind::thread_per_task:
      return {0, true, "threads"};
    case BackendKind::pool:
      return {b.queue ? b.thread_bound() : b.threads, true, "threads"};
    case BackendKind::injecting_pool:
      return {b.thread_bound(), true, "threads"};
    case BackendKind::work_stealing:
    case BackendKind::tbb:
    case BackendKind::asio_pool:
      return {b.threads, true, "threads"};
    case BackendKind::virtual_threads:
      return {b.carriers, false, "carriers"};
    case BackendKind::event_loop:
      return {b.loops, false, "loops"};
  }
  return {};
}

}  // namespace

std::string Capacity::describe() const {
  return fmt::format("{} ({} / {} = {})", resource, units_text(units, unit_name),
                     format_seconds(hold), rate_text(max_rate));
}

std::optional<double> offered_rate(const Scenario& s) {
  if (s.workload.is_graph() || !s.workload.arrival) return std::nullopt;
  const Arrival& a = *s.workload.arrival;
  if (a.kind == ArrivalKind::poisson && a.rate > 0) return a.rate;
  if (a.kind == ArrivalKind::periodic && a.interval.count() > 0)
    return 1.0 / to_seconds(a.interval);
  return std::nullopt;
}

void HoldSums::add(std::span<const Phase> phases) {
  ++tasks;
  cpu += to_seconds(Workload::cpu_of(phases));
  length += to_seconds(Workload::length_of(phases));
  for (const Phase& p : phases) {
    if (p.kind == PhaseKind::lock && p.lock < lock_hold.size())
      lock_hold[p.lock] += to_seconds(p.duration + p.wait_inside);
    if (p.resource < permit_hold.size())
      permit_hold[p.resource] += to_seconds(p.duration + p.wait_inside);
  }
}

namespace {
std::vector<Capacity> capacities_of(const Scenario& s, const HoldSums& h,
                                    const std::vector<std::string>& lock_names) {
  std::vector<Capacity> out;
  if (h.tasks == 0) return out;
  const double n = static_cast<double>(h.tasks);
  const double cpu = h.cpu / n, length = h.length / n;
  const std::vector<double>& lock_hold = h.lock_hold;
  const std::vector<double>& permit_hold = h.permit_hold;

  // CPUs: the quota when it is tighter than the CPUs the scenario may use.
  const double cpus =
      s.limits.cpuset.empty() ? s.machine.cores : static_cast<double>(s.limits.cpuset.size());
  if (cpu > 0) {
    if (s.limits.cpus && *s.limits.cpus < cpus)
      out.push_back(make("quota", *s.limits.cpus, "CPUs", cpu));
    else
      out.push_back(make("CPUs", cpus, "CPUs", cpu));
  }
  const Workers wk = workers_of(s.backend);
  const double held = wk.hold_waits ? length : cpu;
  if (wk.count > 0 && held > 0) out.push_back(make(wk.name, wk.count, wk.name, held));
  for (std::size_t i = 0; i < lock_hold.size(); ++i)
    if (lock_hold[i] > 0)
      out.push_back(make("lock '" + lock_names[i] + "'", 1, "holder", lock_hold[i] / n));
  for (std::size_t i = 0; i < permit_hold.size(); ++i)
    if (permit_hold[i] > 0)
      out.push_back(make("resource '" + s.resources[i].name + "'", s.resources[i].permits,
                         "permits", permit_hold[i] / n));
  return out;
}

std::optional<Capacity> lowest(const std::vector<Capacity>& all) {
  if (all.empty()) return std::nullopt;
  return *std::min_element(all.begin(), all.end(), [](const Capacity& a, const Capacity& b) {
    return a.max_rate < b.max_rate;
  });
}
}  // namespace

std::vector<Capacity> capacities(const Scenario& s, const Workload& w) {
  HoldSums h(w.lock_names.size(), s.resources.size());
  for (const Task& t : w.tasks) h.add(w.phases_of(t));
  return capacities_of(s, h, w.lock_names);
}

std::optional<Capacity> bottleneck(const Scenario& s, const Workload& w) {
  return lowest(capacities(s, w));
}

std::optional<Capacity> bottleneck(const Scenario& s, TaskStream& stream,
                                   const std::vector<std::string>& lock_names) {
  StreamBound bound(s, lock_names);
  Task t;
  std::vector<Phase> phases;
  while (stream.next(t, phases)) bound.add(t, phases);
  return bound.bottleneck();
}

StreamBound::StreamBound(const Scenario& s, std::vector<std::string> lock_names)
    : s_(s), lock_names_(std::move(lock_names)), sums_(lock_names_.size(), s.resources.size()) {}

void StreamBound::add(const Task& t, std::span<const Phase> phases) {
  serial_.add(t, phases);
  sums_.add(phases);
}

std::optional<Capacity> StreamBound::bottleneck() const {
  serial_.check();  // after the draw, as generate_workload checks its list
  return lowest(capacities_of(s_, sums_, lock_names_));
}

BacklogTrend backlog_trend(const RunResult& r) {
  Duration last{0};
  for (const TaskRecord& t : r.records)
    if (t.outcome != TaskOutcome::not_run) last = std::max(last, t.submit);
  const Duration half = last / 2;
  BacklogTrend b;
  for (const TaskRecord& t : r.records) {
    if (t.outcome == TaskOutcome::not_run) continue;
    if (t.submit > half && t.submit <= last) ++b.arrivals, ++b.growth;
    // A rejected request leaves the system when it is refused.
    const Duration left = t.outcome == TaskOutcome::completed ? t.end : t.submit;
    if (left > half && left <= last) --b.growth;
  }
  return b;
}

std::vector<Warning> overload_warnings(const Scenario& s, const Workload& w, const RunResult& r,
                                       const Metrics& m) {
  return overload_warnings(s, offered_rate(s) ? bottleneck(s, w) : std::nullopt, r, m);
}

std::vector<Warning> overload_warnings(const Scenario& s, const std::optional<Capacity>& neck,
                                       const RunResult& r, const Metrics& m) {
  std::vector<Warning> out;
  const auto lambda = offered_rate(s);
  if (lambda) {
    const BacklogTrend trend = backlog_trend(r);
    const bool beyond_bound = neck && *lambda >= neck->max_rate;
    const bool growing =
        trend.arrivals >= kMinTrendArrivals &&
        static_cast<double>(trend.growth) > kBacklogGrowth * static_cast<double>(trend.arrivals);
    if (beyond_bound || growing) {
      std::string msg = fmt::format("overload: {} offered, {} served", rate_text(*lambda),
                                    rate_text(m[Metric::throughput]));
      if (growing)
        msg += fmt::format(" (the backlog grew by {} requests over the last half of the arrivals)",
                           trend.growth);
      if (neck)
        msg += fmt::format("; {}: {}",
                           beyond_bound ? "bottleneck" : "tightest bound, before overheads",
                           neck->describe());
      out.push_back({"overload", msg});
    }
  }
  const double rejected = m[Metric::rejected];
  if (rejected > 0) {
    const double submitted = rejected + m[Metric::completed];
    out.push_back(
        {"rejected",
         fmt::format("rejected: {:.0f} of {:.0f} requests ({:.1f}%) refused "
                     "by the backend ({})",
                     rejected, submitted, 100 * rejected / submitted,
                     s.backend.queue ? fmt::format("queue {}, reject {}", *s.backend.queue,
                                                   to_string(s.backend.reject))
                                     : std::string(to_string(s.backend.kind)))});
  }
  return out;
}

}  // namespace poolsim
