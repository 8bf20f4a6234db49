// capacity.cpp: see capacity.hpp for the search and its rules.
#include "validate/capacity.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "models/metric_names.hpp"
#include "models/units.hpp"
#include "models/workload.hpp"
#include "validate/output.hpp"

namespace poolsim::validate {
namespace {

bool targetable(Metric m) {
  switch (m) {
    case Metric::makespan:
    case Metric::throughput:
    case Metric::first_completion:
    case Metric::completed:
      return false;
    default:
      return true;
  }
}

}  // namespace

CapacityTarget parse_target(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw std::invalid_argument("--target: expected METRIC=VALUE, e.g. latency_p99=100ms, got '" +
                                text + "'");
  CapacityTarget t;
  t.text = text;
  t.metric = parse_metric(text.substr(0, eq), "--target");
  if (!targetable(t.metric))
    throw std::invalid_argument(fmt::format(
        "--target: {} is not a limit that more load pushes up; use a latency (latency_p99), "
        "queue_wait_mean, cpu_utilization, throttled_time or rejected",
        metric_info(t.metric).name));
  const std::string v = text.substr(eq + 1);
  const auto unit = metric_info(t.metric).unit;
  try {
    if (unit == "seconds")
      t.value = to_seconds(parse_duration(v));
    else if (unit == "fraction")
      t.value = parse_fraction(v);
    else if (unit == "bytes")
      t.value = static_cast<double>(parse_size(v));
    else {
      std::size_t used = 0;
      t.value = std::stod(v, &used);
      if (used != v.size() || t.value < 0) throw std::invalid_argument(v);
    }
  } catch (const UnitError& e) {
    throw std::invalid_argument(fmt::format("--target {}: {}", text, e.what()));
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument(fmt::format("--target {}: expected a count >= 0 for {}, got '{}'",
                                            text, metric_info(t.metric).name, v));
  }
  return t;
}

Scenario with_rate(const Scenario& s, double rate) {
  Scenario out = s;
  Arrival& a = *out.workload.arrival;
  if (a.kind == ArrivalKind::periodic)
    a.interval = from_seconds(1.0 / rate);
  else
    a.rate = rate;
  return out;
}

CapacityResult find_capacity(const Scenario& s, const CapacityTarget& target,
                             const CapacityOptions& opt) {
  const auto offered = offered_rate(s);
  if (!offered)
    throw CapacityRefused(fmt::format(
        "capacity needs an open arrival rate: {} has workload.{} (capacity varies "
        "workload.arrival.rate of a poisson or periodic arrival; for a batch or closed workload "
        "use `poolsim sweep --vary workload.arrival.count=...` or `clients=...`)",
        s.name,
        s.workload.is_graph()
            ? std::string("graph")
            : "arrival.kind " + std::string(to_string(s.workload.arrival->kind))));
  if (opt.replications < 1) throw std::invalid_argument("--replications must be at least 1");
  const auto neck = bottleneck(s, generate_workload(s));
  if (!neck)
    throw CapacityRefused("capacity: the requests of " + s.name +
                          " hold no CPU, thread or lock time, so no rate is a limit");

  CapacityResult r;
  r.scenario = s.name;
  r.target = target;
  r.replications = opt.replications;
  r.seeds = replication_seeds(s.seed, opt.replications);
  r.scenario_rate = *offered;
  r.bottleneck = *neck;
  const std::size_t mi = static_cast<std::size_t>(target.metric);

  Replicated best_runs;
  auto evaluate = [&](double rate) {
    Replicated runs = replicate(with_rate(s, rate), opt.replications, opt.jobs);
    CapacityPoint p;
    p.rate = rate;
    p.value = runs.stats[mi].mean;
    p.ci = runs.ci[mi];
    p.overload = std::any_of(runs.warnings.begin(), runs.warnings.end(),
                             [](const Warning& w) { return w.kind == "overload"; });
    p.meets = !p.overload && p.value <= target.value;
    r.searched.push_back(p);
    if (opt.on_point) opt.on_point(p);
    if (p.meets && p.rate > r.max_rate) {
      r.max_rate = p.rate;
      r.at_max = p;
      best_runs = std::move(runs);
    }
    return p;
  };

  double hi = neck->max_rate;
  double lo = hi * kProbeFraction;
  const CapacityPoint probe = evaluate(lo);
  if (!probe.meets)
    throw CapacityRefused(fmt::format(
        "capacity: {} cannot be met at any rate: already at {} ({:.1f}% of the bottleneck's {}) {} "
        "is {}{}",
        target.text, rate_text(lo), 100 * kProbeFraction, rate_text(hi),
        metric_info(target.metric).name, format_metric(target.metric, probe.value),
        probe.overload ? " and the run is overloaded" : ""));
  while (hi - lo > kRatePrecision * hi) {
    const double mid = 0.5 * (lo + hi);
    if (evaluate(mid).meets)
      lo = mid;
    else
      hi = mid;
  }
  r.at_max_runs = std::move(best_runs);
  return r;
}

nlohmann::ordered_json capacity_json(const CapacityResult& r) {
  nlohmann::ordered_json j;
  j["scenario"] = r.scenario;
  const auto name = std::string(metric_info(r.target.metric).name);
  j["target"] = {{"metric", name}, {"value", r.target.value}, {"text", r.target.text}};
  j["max_rate"] = r.max_rate;
  j["metric"] = {
      {"name", name}, {"mean", r.at_max.value}, {"ci95", {r.at_max.ci.low, r.at_max.ci.high}}};
  j["bottleneck"] = {{"resource", r.bottleneck.resource},
                     {"units", r.bottleneck.units},
                     {"hold", r.bottleneck.hold},
                     {"max_rate", r.bottleneck.max_rate},
                     {"utilization", r.max_rate / r.bottleneck.max_rate},
                     {"text", r.bottleneck.describe()}};
  j["scenario_rate"] = r.scenario_rate;
  j["replications"] = r.replications;
  j["seeds"] = r.seeds;
  nlohmann::ordered_json pts = nlohmann::ordered_json::array();
  for (const auto& p : r.searched)
    pts.push_back({{"rate", p.rate},
                   {"value", p.value},
                   {"ci95", {p.ci.low, p.ci.high}},
                   {"meets", p.meets},
                   {"overload", p.overload}});
  j["searched"] = pts;
  nlohmann::ordered_json metrics;
  for (std::size_t i = 0; i < kMetricCount; ++i)
    metrics[std::string(kMetricNames[i])] = r.at_max_runs.stats[i].mean;
  j["metrics_at_max_rate"] = metrics;
  j["warnings"] = warnings_json(r.at_max_runs.warnings);
  return j;
}

std::string capacity_text(const CapacityResult& r) {
  const auto& info = metric_info(r.target.metric);
  std::string out = fmt::format(
      "max rate within {}: {}\n"
      "  {} there: {} (95% CI {} .. {}; mean of {} replications, seeds {}..{})\n"
      "  bottleneck: {}, {:.0f}% used at {}\n"
      "  the scenario's own rate: {}{}\n",
      r.target.text, rate_text(r.max_rate), info.name,
      format_metric(r.target.metric, r.at_max.value),
      format_metric(r.target.metric, r.at_max.ci.low),
      format_metric(r.target.metric, r.at_max.ci.high), r.replications, r.seeds.front(),
      r.seeds.back(), r.bottleneck.describe(), 100 * r.max_rate / r.bottleneck.max_rate,
      rate_text(r.max_rate), rate_text(r.scenario_rate),
      r.scenario_rate <= r.max_rate ? " (within the target)" : " (beyond it)");
  out += fmt::format("  searched {} rates by bisection to {:.0f}% (common seeds at every rate)\n",
                     r.searched.size(), 100 * kRatePrecision);
  return out;
}

}  // namespace poolsim::validate
