// compare.hpp: prediction against measurement, metric by metric.
//
// For each metric: error = (predicted - measured mean) / measured mean (the
// definition in docs/validation.md); the verdict is
//   noisy    the measurement's own spread, its coefficient of variation
//            sd / |mean|, is wider than the tolerance: no verdict can be
//            drawn from it, whatever the prediction;
//   match    |error| <= tolerance;
//   diverge  otherwise. A measured mean of 0 matches only a prediction of 0
//            (error 0); anything else diverges with an infinite error.
//   disturbed  the machine did not run at its calibrated speed in enough of
//            the measured repetitions (validate/speed_report.hpp): no
//            verdict is drawn, for any metric (mark_disturbed).
// Metrics listed as ignored in the scenario's tolerance are skipped. The run
// diverges when any metric diverges (exit 1); noisy metrics do not fail it.
#pragma once

#include <array>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "models/metrics.hpp"
#include "models/scenario.hpp"

namespace poolsim::validate {

enum class Verdict { match, diverge, noisy, disturbed };
std::string_view to_string(Verdict v);

struct MetricComparison {
  Metric metric{};
  double predicted = 0;
  MetricStats measured;
  double error = 0;  // may be +-infinity when the measured mean is 0
  double tolerance = 0;
  double spread = 0;  // sd / |mean| of the measurement
  Verdict verdict = Verdict::match;
};

struct Comparison {
  std::vector<MetricComparison> rows;
  Verdict overall = Verdict::match;  // match, diverge, or disturbed
  int matched = 0, diverged = 0, noisy = 0;
};

Comparison compare(const Metrics& predicted, const std::array<MetricStats, kMetricCount>& measured,
                   const Tolerance& tolerance);

// No verdict can be drawn: every row and the whole run become `disturbed`
// (the measured figures stay, for the record).
void mark_disturbed(Comparison& c);

// The verdict table for the terminal.
std::string comparison_table(const Comparison& c);
// A relative error as the tables and the HTML report print it: "+12.3%",
// "+inf", or "n/a" for NaN.
std::string signed_percent(double x);
// {"scenario", "verdict", "metrics": {name: {"predicted", "measured": {...}, "error", "tolerance",
// "verdict"}}}
nlohmann::ordered_json comparison_json(const Scenario& s, const Comparison& c);

}  // namespace poolsim::validate
