#include "validate/compare.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "validate/output.hpp"
#include "validate/table.hpp"

namespace poolsim::validate {

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::match:
      return "match";
    case Verdict::diverge:
      return "diverge";
    case Verdict::noisy:
      return "noisy";
    case Verdict::disturbed:
      return "disturbed";
  }
  return "?";
}

Comparison compare(const Metrics& predicted, const std::array<MetricStats, kMetricCount>& measured,
                   const Tolerance& tolerance) {
  Comparison c;
  for (std::size_t i = 0; i < kMetricCount; ++i) {
    const auto metric = static_cast<Metric>(i);
    const auto name = to_string(metric);
    if (tolerance.ignored.count(std::string(name)) || !predicted.applies(metric)) continue;
    MetricComparison row;
    row.metric = metric;
    row.predicted = predicted[metric];
    row.measured = measured[i];
    row.tolerance = tolerance.for_metric(name);
    const double mean = row.measured.mean;
    if (mean == 0) {
      row.error = row.predicted == 0
                      ? 0.0
                      : std::copysign(std::numeric_limits<double>::infinity(), row.predicted);
      row.spread = 0;
    } else {
      row.error = (row.predicted - mean) / mean;
      row.spread = row.measured.sd / std::fabs(mean);
    }
    if (row.spread > row.tolerance)
      row.verdict = Verdict::noisy;
    else if (std::fabs(row.error) <= row.tolerance)
      row.verdict = Verdict::match;
    else
      row.verdict = Verdict::diverge;
    switch (row.verdict) {
      case Verdict::match:
        ++c.matched;
        break;
      case Verdict::diverge:
        ++c.diverged;
        break;
      case Verdict::noisy:
        ++c.noisy;
        break;
      case Verdict::disturbed:
        break;
    }
    c.rows.push_back(row);
  }
  c.overall = c.diverged > 0 ? Verdict::diverge : Verdict::match;
  return c;
}

void mark_disturbed(Comparison& c) {
  for (auto& r : c.rows) r.verdict = Verdict::disturbed;
  c.overall = Verdict::disturbed;
  c.matched = c.diverged = c.noisy = 0;
}

std::string signed_percent(double x) {
  if (std::isnan(x)) return "n/a";
  if (std::isinf(x)) return x > 0 ? "+inf" : "-inf";
  return fmt::format("{:+.1f}%", x * 100);
}

std::string comparison_table(const Comparison& c) {
  Table t({"metric", "predicted", "measured", "sd", "min", "max", "error", "tolerance", "verdict"},
          {false, true, true, true, true, true, true, true, false});
  for (const auto& r : c.rows) {
    t.add_row({std::string(to_string(r.metric)), format_metric(r.metric, r.predicted),
               format_metric(r.metric, r.measured.mean), format_metric(r.metric, r.measured.sd),
               format_metric(r.metric, r.measured.min), format_metric(r.metric, r.measured.max),
               signed_percent(r.error), fmt::format("{:.0f}%", r.tolerance * 100),
               std::string(to_string(r.verdict))});
  }
  const int n = c.rows.empty() ? 0 : c.rows.front().measured.n;
  if (c.overall == Verdict::disturbed)
    return t.str() + fmt::format(
                         "\nverdict: disturbed (the machine did not run at its calibrated speed; "
                         "no verdict drawn; n = {} measured repetitions)\n",
                         n);
  return t.str() +
         fmt::format(
             "\nverdict: {} ({} match, {} diverge, {} noisy; n = {} measured repetitions)\n",
             to_string(c.overall), c.matched, c.diverged, c.noisy, n);
}

nlohmann::ordered_json comparison_json(const Scenario& s, const Comparison& c) {
  nlohmann::ordered_json j;
  j["scenario"] = s.name;
  j["verdict"] = std::string(to_string(c.overall));
  j["backend"] = backend_json(s.backend);
  j["machine"] = machine_json(s.machine);
  nlohmann::ordered_json m;
  for (const auto& r : c.rows) {
    nlohmann::ordered_json e;
    e["predicted"] = r.predicted;
    e["measured"] = stats_json(r.measured);
    if (std::isfinite(r.error))
      e["error"] = r.error;
    else
      e["error"] = nullptr;
    e["tolerance"] = r.tolerance;
    e["verdict"] = std::string(to_string(r.verdict));
    m[std::string(to_string(r.metric))] = e;
  }
  j["metrics"] = m;
  j["summary"] = {{"match", c.matched}, {"diverge", c.diverged}, {"noisy", c.noisy}};
  j["warnings"] = nlohmann::ordered_json::array();  // filled by the caller, which has the run
  return j;
}

}  // namespace poolsim::validate
