// sweep_output.hpp: a sweep's outputs, each a pure function of a SweepResult
// (so a merge of shards writes the same bytes as one process):
//   CSV (one row per point: the varied keys, then every metric of
//   kMetricNames; with --measure the metric columns hold measured means and
//   `<metric>_sd` / `<metric>_predicted` columns follow), JSON, line charts of
//   a metric against the first varied key with one series per value of the
//   second (svg_chart.hpp, the validator report's chart machinery), an HTML
//   page embedding them, and a USL fit of throughput against a numeric key
//   (models/queueing/usl.hpp), one per series.
//
// Left out: more than one chart dimension beyond the series (later axes
// become more series).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "models/queueing/usl.hpp"
#include "validate/svg_chart.hpp"
#include "validate/sweep_result.hpp"

namespace poolsim::validate {

// CSV: header `key1,key2,...,makespan,throughput,...`; values as written,
// metrics in SI units with 9 significant digits. RFC 4180 quoting for cells
// holding a comma, quote or newline.
std::string sweep_csv(const SweepResult& r);
// One CSV cell: `s` as is, or RFC 4180-quoted when it holds a comma, quote
// or line break.
std::string csv_cell(const std::string& s);
nlohmann::ordered_json sweep_json(const SweepResult& r);

// A value of the swept key as a number for a chart axis or a fit: a plain
// number, a duration (seconds), a rate (per second) or a size (bytes);
// std::nullopt for anything else (a backend kind).
std::optional<double> numeric_value(const std::string& text);

// One chart: `metric` against the first axis, one series per value of the
// second axis (further axes: one series per combination). Points whose first
// value is not numeric are placed at their index (the axis says so).
svg::LineChart sweep_chart(const SweepResult& r, Metric metric);
// The SVG file of --plot PATH.svg: the charts of `metrics` stacked vertically
// in one <svg> (nested <svg> elements, valid SVG 1.1).
std::string sweep_svg(const SweepResult& r, const std::vector<Metric>& metrics);
// The HTML page of --plot PATH.html: title, the charts inline, the USL fits
// if any, and the table of every point. Self-contained (no scripts, no links).
std::string sweep_html(const SweepResult& r, const std::vector<Metric>& metrics,
                       const nlohmann::ordered_json& usl);

// A USL fit of throughput against one numeric axis, per series (the values of
// the other axes).
struct UslSeriesFit {
  std::string series;  // "" when the sweep has one axis, else "key=value ..."
  std::vector<queueing::UslPoint> points;
  queueing::UslFit fit;
};
// Throws std::invalid_argument when `key` is not an axis, a value of it is not
// a number >= 1, or a series has fewer than 3 distinct values (fit_usl's rule).
std::vector<UslSeriesFit> sweep_usl(const SweepResult& r, const std::string& key);
nlohmann::ordered_json usl_json(const std::vector<UslSeriesFit>& fits);
// A warning when the throughput of this sweep says little about scalability
// (an open workload's throughput is its arrival rate); empty if fine.
std::string usl_caveat(const SweepResult& r);

}  // namespace poolsim::validate
