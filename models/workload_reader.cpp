// workload_reader.cpp: the `workload:` section: arrival, task or classes, and its size.
//
// Arrival rules: batch needs `count`; poisson needs `rate` and exactly one of
// `count` or `duration`; periodic needs `interval` and exactly one of `count`
// or `duration`; closed needs `clients` and `duration` (`think` defaults to
// 0ns; an optional `count` caps the total requests, an extension the workload
// generator supports). Exactly one limit keeps open arrivals unambiguous.
//
// Hostile input: every count and size that the generator would allocate from
// (tasks implied by the arrival parameters, lock shards) is checked against
// its cap, and the mean serial length of the workload against the 100-year
// horizon, before generate_workload runs.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "models/scenario_resources.hpp"
#include "models/section_readers.hpp"
#include "models/workload.hpp"

namespace poolsim::loader {

using yaml::MapReader;
using yaml::Val;

TaskSpec read_task(const Val& v) {
  if (!v.is_seq())
    v.fail("expected a task: a list of phases such as [{cpu: 1ms}, {wait: 10ms}], got " +
           yaml::describe_node(v.node));
  if (v.size() == 0) v.fail("a task needs at least one phase (cpu, wait or lock)");
  TaskSpec task;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const Val pv = v.at(i);
    MapReader pr(pv, {"cpu", "wait", "lock", "holding"}, "a phase");
    const auto keys = loader::phase_kind_keys(pr);
    if (keys.size() != 1)
      pv.fail("a phase has exactly one of cpu, wait, lock; got " +
              (keys.empty() ? std::string("none") : yaml::join(keys)) +
              " (write them as separate list items)");
    if (auto c = pr.get("cpu")) {
      task.push_back(CpuPhase{read_distribution(*c), std::nullopt});  // holding: below
    } else if (auto w = pr.get("wait")) {
      task.push_back(WaitPhase{read_distribution(*w), std::nullopt});
    } else {
      const Val lv = *pr.get("lock");
      MapReader lr(lv, {"name", "shards", "hold", "wait_inside"}, "a lock phase");
      LockPhase lp;
      lp.name =
          yaml::scalar(lr.require("name", "the mutex's name; phases with the same name share it"),
                       "a lock name");
      if (lp.name.empty()) lr.require("name").fail("a lock name cannot be empty");
      if (auto s = lr.get("shards"))
        lp.shards = static_cast<int>(yaml::integer(*s, 1, kMaxLockShards, "shards"));
      lp.hold = read_distribution(lr.require("hold", "CPU work done while holding the lock"));
      if (auto wi = lr.get("wait_inside")) lp.wait_inside = read_distribution(*wi);
      task.push_back(std::move(lp));
    }
    loader::set_holding(task.back(), loader::read_holding(pr));
  }
  return task;
}

namespace {

const std::vector<std::string> kArrivalKinds = {"batch", "poisson", "periodic", "closed"};

// The arrival's `kind:` (empty when missing), read before the map is checked
// so the allowed keys can follow it.
std::string arrival_kind(const Val& v) {
  const auto& kKinds = kArrivalKinds;
  std::string kind;
  if (v.is_map())
    for (auto it = v.node.begin(); it != v.node.end(); ++it)
      if (it->first.IsScalar() && it->first.Scalar() == "kind") {
        Val kv{v.src, it->second, it->second.IsNull() ? it->first.Mark() : it->second.Mark(),
               v.path + ".kind"};
        kind = yaml::scalar(kv, "an arrival kind (" + yaml::join(kKinds) + ")");
        if (std::find(kKinds.begin(), kKinds.end(), kind) == kKinds.end())
          kv.fail(yaml::unknown_message("arrival kind", kind, kKinds));
      }
  return kind;
}

// The keys an arrival of `kind` takes, `kind` first.
std::vector<std::string> arrival_keys(const std::string& kind) {
  std::vector<std::string> keys = {"kind"};
  if (kind == "batch")
    keys.insert(keys.end(), {"count"});
  else if (kind == "poisson")
    keys.insert(keys.end(), {"rate", "count", "duration"});
  else if (kind == "periodic")
    keys.insert(keys.end(), {"interval", "count", "duration"});
  else if (kind == "closed")
    keys.insert(keys.end(), {"clients", "think", "duration", "count"});
  else
    keys.insert(keys.end(), {"count", "rate", "duration", "interval", "clients",
                             "think"});  // report the missing kind
  return keys;
}

}  // namespace

namespace {
// The arrival's map, its keys those of its kind; a parameter of another kind
// is named as such.
MapReader arrival_reader(const Val& v, const std::string& kind) {
  const std::vector<std::string> keys = arrival_keys(kind);
  MapReader r(v, keys, "an arrival process", [kind, keys](const std::string& key) -> std::string {
    static const std::vector<std::string> kAll = {"count",    "rate",    "duration",
                                                  "interval", "clients", "think"};
    if (!kind.empty() && std::find(kAll.begin(), kAll.end(), key) != kAll.end())
      return "'" + key + "' is not a parameter of arrival kind '" + kind + "' (it takes " +
             yaml::join(std::vector<std::string>(keys.begin() + 1, keys.end())) + ")";
    return {};
  });
  r.require("kind", "one of " + yaml::join(kArrivalKinds));
  return r;
}
}  // namespace

Arrival read_arrival(const Val& v, std::int64_t open_cap) {
  const std::string kind = arrival_kind(v);
  MapReader r = arrival_reader(v, kind);
  Arrival a;
  // Poisson and periodic arrivals may stream (open_cap); a batch is queued
  // whole at t=0 and a closed loop keeps its clients' tasks.
  const bool may_stream = kind == "poisson" || kind == "periodic";
  const std::int64_t cap = may_stream ? std::max(open_cap, kMaxTasks) : kMaxTasks;
  auto count = [&]() { return yaml::integer(*r.get("count"), 1, cap, "count"); };
  auto limit = [&]() {
    const bool c = r.has("count"), d = r.has("duration");
    if (c && d) r.get("duration")->fail("give either count or duration, not both");
    if (!c && !d) r.require("count", "or duration: when to stop arriving");
    if (c) a.count = count();
    if (d) {
      a.duration = yaml::duration(*r.get("duration"));
      if (*a.duration <= Duration{0}) r.get("duration")->fail("duration must be greater than 0s");
    }
  };
  // The task count an open arrival implies, checked against the cap before
  // the generator allocates anything; `expected` is "rate x duration" etc.
  auto check_tasks = [&](double tasks, const std::string& expected) {
    if (tasks > static_cast<double>(cap))
      r.get("duration")
          ->fail(expected + " = " + fmt::format("{:.4g}", tasks) + " tasks, more than the " +
                 std::to_string(cap) + "-task cap of one workload");
  };
  // The last arrival, against the simulated horizon.
  auto check_span = [&](double seconds, const Val& at, const std::string& expected) {
    if (seconds > to_seconds(kMaxDuration))
      at.fail(expected + " puts the last arrival " + fmt::format("{:.4g}", seconds) +
              "s after the start, beyond the simulated horizon of 3155760000s (100 years)");
  };
  if (kind == "batch") {
    a.kind = ArrivalKind::batch;
    r.require("count", "how many tasks are submitted at t=0");
    a.count = count();
  } else if (kind == "poisson") {
    a.kind = ArrivalKind::poisson;
    const auto rv = r.require("rate", "mean arrivals per second, e.g. 5000/s");
    a.rate = yaml::rate(rv);
    limit();
    if (a.duration) check_tasks(a.rate * to_seconds(*a.duration), "rate x duration");
    if (a.count)
      check_span(static_cast<double>(*a.count) / a.rate, rv,
                 "count / rate (the mean arrival time)");
  } else if (kind == "periodic") {
    a.kind = ArrivalKind::periodic;
    const auto iv = r.require("interval", "time between arrivals, e.g. 1ms");
    a.interval = yaml::duration(iv);
    if (a.interval <= Duration{0}) iv.fail("interval must be greater than 0ns");
    limit();
    if (a.duration)
      check_tasks(std::ceil(to_seconds(*a.duration) / to_seconds(a.interval)),
                  "duration / interval");
    if (a.count)
      check_span(static_cast<double>(*a.count - 1) * to_seconds(a.interval), iv,
                 "interval x (count - 1)");
  } else {
    a.kind = ArrivalKind::closed;
    a.clients = static_cast<int>(
        yaml::integer(r.require("clients", "how many clients keep one request each in flight"), 1,
                      kMaxTasks, "clients"));
    if (auto t = r.get("think"))
      a.think = read_distribution(*t);
    else
      a.think = Distribution::fixed(Duration{0});
    const auto dv = r.require("duration", "how long the closed loop runs");
    a.duration = yaml::duration(dv);
    if (*a.duration <= Duration{0}) dv.fail("duration must be greater than 0s");
    if (r.has("count")) a.count = count();  // optional cap on total requests
  }
  return a;
}

namespace {

WorkloadSpec read_workload_spec(const Val& v, std::int64_t open_cap) {
  MapReader r(v, {"arrival", "task", "classes", "graph"}, "a workload");
  WorkloadSpec w;
  if (auto g = r.get("graph")) {
    for (const char* k : {"arrival", "task", "classes"})
      if (auto x = r.get(k))
        x->fail(std::string("'") + k +
                "' cannot be combined with 'graph' (a graph replaces arrival and task)");
    w.graph = read_graph(*g);
    return w;
  }
  w.arrival = read_arrival(r.require("arrival", "or graph"), open_cap);
  const bool t = r.has("task"), c = r.has("classes");
  if (t && c) r.get("classes")->fail("give either task or classes, not both");
  if (!t && !c) r.require("task", "or classes: what each task does");
  if (t) {
    w.classes.push_back(TaskClass{1.0, read_task(*r.get("task"))});
    return w;
  }
  const Val cv = *r.get("classes");
  if (!cv.is_seq())
    cv.fail("expected a list of {weight, task}, got " + yaml::describe_node(cv.node));
  if (cv.size() == 0) cv.fail("classes needs at least one class");
  if (cv.size() > std::numeric_limits<std::uint16_t>::max())
    cv.fail("at most 65535 task classes, got " + std::to_string(cv.size()));
  // Weights are either all percentages (70%, 30%), which must add up to 100%,
  // or all plain numbers (3, 1), which are relative: 3 and 1 mean 75% and 25%.
  constexpr double kPercentSlack = 1e-6;  // 33.3333333% x 3 is 100%
  double sum = 0;
  std::optional<bool> percent;  // the form of the first weight
  for (std::size_t i = 0; i < cv.size(); ++i) {
    const Val e = cv.at(i);
    MapReader er(e, {"weight", "task"}, "a task class");
    const auto wv = er.require("weight", "a percentage such as 70%, or a relative number");
    TaskClass tc;
    tc.weight = yaml::fraction(wv, /*allow_above_one=*/true);
    if (tc.weight <= 0) wv.fail("a class weight must be greater than 0");
    std::string text = wv.node.Scalar();
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
    const bool is_percent = !text.empty() && text.back() == '%';
    if (!percent) percent = is_percent;
    if (*percent != is_percent)
      wv.fail(
          "class weights are either all percentages (70%, 30%: they add up to 100%) or all "
          "relative numbers (7, 3), not a mix");
    if (is_percent && tc.weight > 1 + kPercentSlack)
      wv.fail("a class weight in percent must be at most 100%, got " + text);
    tc.task = read_task(er.require("task"));
    sum += tc.weight;
    w.classes.push_back(std::move(tc));
  }
  if (*percent && std::fabs(sum - 1) > kPercentSlack)
    cv.fail("class weights in percent must add up to 100%, they add up to " +
            fmt::format("{:.6g}", sum * 100) +
            "% (write plain numbers such as 7 and 3 for relative weights)");
  if (!std::isfinite(sum)) cv.fail("the class weights add up to more than a number can hold");
  for (auto& tc : w.classes) tc.weight /= sum;
  return w;
}

// The sizes a workload implies, checked before the generator allocates:
// distinct lock shards against kMaxLockShards, the tasks of a closed loop
// against kMaxTasks, and the mean serial length (last arrival plus every
// task's mean length) against the simulated horizon. The generator checks
// the sampled lengths exactly.
void check_workload_size(const WorkloadSpec& w, const Val& at, double quota) {
  std::map<std::string, int> shards;
  auto add_locks = [&](const TaskSpec& t) {
    for (const auto& p : t)
      if (const auto* l = std::get_if<LockPhase>(&p)) shards.emplace(l->name, l->shards);
  };
  for (const auto& c : w.classes) add_locks(c.task);
  if (w.graph) {
    for (const auto& n : w.graph->nodes) add_locks(n.task);
    if (w.graph->fork_join)
      for (const auto* t :
           {&w.graph->fork_join->leaf, &w.graph->fork_join->fork, &w.graph->fork_join->join})
        add_locks(*t);
  }
  std::int64_t total_shards = 0;
  for (const auto& [name, n] : shards) total_shards += n;
  if (total_shards > kMaxLockShards)
    at.fail_section("the lock phases declare " + std::to_string(total_shards) +
                    " mutex shards in all, more than the maximum of " +
                    std::to_string(kMaxLockShards));
  if (!w.arrival) return;
  const Arrival& a = *w.arrival;
  double mean_task = 0;
  for (const auto& c : w.classes) mean_task += c.weight * mean_task_seconds(c.task);
  const double horizon = to_seconds(kMaxDuration);
  if (a.kind == ArrivalKind::closed) {
    const std::uint64_t per_client = closed_tasks_per_client(a, mean_task);
    if (per_client * static_cast<std::uint64_t>(a.clients) > static_cast<std::uint64_t>(kMaxTasks))
      at.fail_section("closed loop: " + std::to_string(a.clients) + " clients x " +
                      std::to_string(per_client) +
                      " tasks each (duration / mean cycle, x2 + 16) is more "
                      "than the " +
                      std::to_string(kMaxTasks) + "-task cap; shorten the duration");
    if (static_cast<double>(per_client) * (mean_task + a.think.mean_seconds()) > horizon)
      at.fail_section(
          "closed loop: one client's " + std::to_string(per_client) +
          " tasks run for longer than the simulated horizon of 3155760000s (100 years)");
    return;
  }
  double tasks = 0, span = 0;
  if (a.count) tasks = static_cast<double>(*a.count);
  if (a.kind == ArrivalKind::poisson) {
    if (!a.count) tasks = a.rate * to_seconds(*a.duration);
    span = a.duration ? to_seconds(*a.duration) : tasks / a.rate;
  } else if (a.kind == ArrivalKind::periodic) {
    if (!a.count) tasks = std::ceil(to_seconds(*a.duration) / to_seconds(a.interval));
    span = std::max(0.0, tasks - 1) * to_seconds(a.interval);
  }
  // A quota below one CPU stretches the work: at most `quota` CPUs run it.
  const double serial = span + tasks * mean_task / std::min(1.0, quota);
  if (serial > horizon)
    at.fail_section(
        fmt::format("{:.4g}", tasks) + " tasks of on average " + format_seconds(mean_task) +
        " each, after the last arrival at " + format_seconds(span) +
        (quota < 1 ? ", under a quota of " + fmt::format("{:g}", quota) + " CPUs" : "") +
        ", take " + fmt::format("{:.4g}", serial) +
        "s end to end, beyond the simulated horizon of 3155760000s (100 years)");
}

}  // namespace

WorkloadSpec read_workload(const Val& v, const Limits& limits, std::int64_t open_task_cap) {
  WorkloadSpec w = read_workload_spec(v, open_task_cap);
  check_workload_size(w, v, limits.cpus.value_or(1.0));
  return w;
}

}  // namespace poolsim::loader
