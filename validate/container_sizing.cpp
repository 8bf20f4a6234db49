// container_sizing.cpp: `size --container` (design in container_sizing.hpp).
#include "validate/container_sizing.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "validate/prediction.hpp"
#include "validate/sweep.hpp"
#include "validate/table.hpp"

namespace poolsim::validate {
namespace {

// The size scenario with the container's limits in place of `size`'s own
// (quota, burst, cpuset), set on the scenario's YAML node.
std::string container_yaml(const ContainerInputs& in) {
  YAML::Node y = YAML::Load(sizing_scenario_yaml(in.base, 1));
  YAML::Node limits;
  limits["cpus"] = fmt::format("{:.17g}", *in.base.cpus);
  if (in.burst > Duration{0}) limits["burst"] = format_duration(in.burst);
  if (!in.cpuset.empty()) limits["cpuset"] = in.cpuset;
  y["limits"] = limits;
  YAML::Emitter out;
  out << y;
  return std::string(out.c_str()) + "\n";
}

}  // namespace

ContainerSizing size_container(const ContainerInputs& in, const SizingProgress& progress) {
  const SizingInputs& b = in.base;
  if (!b.cpus || !b.host_cores)
    throw SizingRefused("size --container needs --cpus Q (the quota) and --host-cores N");
  const double q = *b.cpus;
  const int cpus = in.cpuset_size > 0 ? in.cpuset_size : *b.host_cores;
  const double capacity = std::min(q, static_cast<double>(cpus));
  const double need = b.rate * b.cpu;
  if (need >= capacity)
    throw SizingRefused(fmt::format(
        "the load needs {:.3g} CPUs (rate x cpu) and the container gives {:.3g}: no pool size "
        "has a steady state; raise --cpus or lower the rate",
        need, capacity));
  ContainerSizing r;
  r.in = in;
  const int down = std::clamp(static_cast<int>(std::floor(q + 1e-9)), 1, cpus);
  const int up = std::clamp(static_cast<int>(std::ceil(q - 1e-9)), 1, cpus);
  const int little = std::max(1, static_cast<int>(std::ceil(b.rate * (b.cpu + b.wait) - 1e-9)));
  r.choices = {{"host CPUs",
                "hardware_concurrency, Go < 1.25, nproc (no cpuset), JVM without container "
                "support",
                *b.host_cores,
                {}},
               {"quota rounded down", "Rust available_parallelism, num_cpus::get", down, {}},
               {"quota rounded up",
                "JVM availableProcessors, .NET, Go 1.25 GOMAXPROCS (but at least 2)",
                up,
                {}},
               {"Little's law", "ceil(rate x (cpu + wait)): threads busy on average", little, {}}};
  std::set<int> sizes;
  for (const auto& c : r.choices) sizes.insert(c.threads);
  SweepOptions so;
  so.text = container_yaml(in);
  so.load = b.load;
  VaryAxis axis{sizing_worker_key(b.backend), {}};
  for (int n : sizes) axis.values.push_back(std::to_string(n));
  so.axes = {axis};
  so.jobs = b.jobs;
  // Under a quota one simulation is one phase of the period grid; compare
  // the choices on the mean of several (prediction.hpp).
  so.draws = kDefaultDraws;
  so.on_phase = progress.on_phase;
  so.on_point = progress.on_point;
  const SweepResult sw = run_sweep(so);
  for (auto& c : r.choices)
    for (const auto& p : sw.points)
      if (std::stoi(p.values[0]) == c.threads) c.metrics = p.predicted;
  // The lowest p99; within kP99Slack of it, the least throttled time, then
  // the fewest threads.
  double best_p99 = r.choices[0].metrics[Metric::latency_p99];
  for (const auto& c : r.choices) best_p99 = std::min(best_p99, c.metrics[Metric::latency_p99]);
  auto better = [&](const ContainerChoice& a, const ContainerChoice& c) {
    const bool a_ok = a.metrics[Metric::latency_p99] <= best_p99 * (1 + kP99Slack);
    const bool c_ok = c.metrics[Metric::latency_p99] <= best_p99 * (1 + kP99Slack);
    if (a_ok != c_ok) return a_ok;
    if (a.metrics[Metric::throttled_time] != c.metrics[Metric::throttled_time])
      return a.metrics[Metric::throttled_time] < c.metrics[Metric::throttled_time];
    return a.threads < c.threads;
  };
  for (std::size_t i = 1; i < r.choices.size(); ++i)
    if (better(r.choices[i], r.choices[r.recommended])) r.recommended = i;
  const ContainerChoice& w = r.choices[r.recommended];
  const ContainerChoice& host = r.choices[0];
  r.why = fmt::format(
      "{} ({} threads): p99 {} (the lowest is {}; within {:.0f}% counts as equal), throttled "
      "{} in {:.0f} periods",
      w.rule, w.threads, format_seconds(w.metrics[Metric::latency_p99]), format_seconds(best_p99),
      kP99Slack * 100, format_seconds(w.metrics[Metric::throttled_time]),
      w.metrics[Metric::throttled_periods]);
  if (r.recommended != 0)
    r.why += fmt::format(
        "; the host-sized pool ({} threads) has p99 {} and is throttled {} in {:.0f} periods",
        host.threads, format_seconds(host.metrics[Metric::latency_p99]),
        format_seconds(host.metrics[Metric::throttled_time]),
        host.metrics[Metric::throttled_periods]);
  return r;
}

std::string container_sizing_text(const ContainerSizing& r) {
  const SizingInputs& b = r.in.base;
  std::string out = fmt::format(
      "Container: quota {:.4g} CPUs{}{} on a host with {} CPUs; {} requests at {:.6g}/s, {} CPU "
      "+ {} wait each ({:.3g} CPUs on average)\n\n",
      *b.cpus, r.in.burst > Duration{0} ? ", burst " + format_duration(r.in.burst) : "",
      r.in.cpuset.empty() ? "" : ", cpuset " + r.in.cpuset, *b.host_cores, b.requests, b.rate,
      format_seconds(b.cpu), format_seconds(b.wait), b.rate * b.cpu);
  Table t({"sizing rule", "threads", "p99", "max", "throttled periods", "throttled time",
           "burst periods", "who picks it"},
          {false, true, true, true, true, true, true, false});
  for (const auto& c : r.choices)
    t.add_row({c.rule, std::to_string(c.threads), format_seconds(c.metrics[Metric::latency_p99]),
               format_seconds(c.metrics[Metric::latency_max]),
               fmt::format("{:.0f}", c.metrics[Metric::throttled_periods]),
               format_seconds(c.metrics[Metric::throttled_time]),
               fmt::format("{:.0f}", c.metrics[Metric::burst_periods]), c.who});
  out += t.str();
  out += fmt::format(
      "\nSimulated (CFS bandwidth as the kernel does it: docs/containers.md), each row the mean "
      "of {} draws of the period's phase.\n",
      kDefaultDraws);
  out += "Recommended: " + r.why + ".\n";
  return out;
}

nlohmann::ordered_json container_sizing_json(const ContainerSizing& r) {
  nlohmann::ordered_json j;
  const SizingInputs& b = r.in.base;
  j["inputs"] = {{"rate", b.rate},
                 {"cpu", b.cpu},
                 {"wait", b.wait},
                 {"cpus", *b.cpus},
                 {"host_cores", *b.host_cores},
                 {"burst", to_seconds(r.in.burst)},
                 {"cpuset", r.in.cpuset},
                 {"requests", b.requests}};
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& c : r.choices) {
    nlohmann::ordered_json row;
    row["rule"] = c.rule;
    row["threads"] = c.threads;
    for (Metric m : {Metric::latency_p99, Metric::latency_max, Metric::throttled_periods,
                     Metric::throttled_time, Metric::burst_periods, Metric::burst_time})
      row[std::string(to_string(m))] = c.metrics[m];
    rows.push_back(row);
  }
  j["choices"] = rows;
  j["recommended"] = r.choices[r.recommended].rule;
  j["recommended_threads"] = r.choices[r.recommended].threads;
  j["why"] = r.why;
  return j;
}

}  // namespace poolsim::validate
