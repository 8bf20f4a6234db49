// sweep.hpp: `poolsim sweep FILE --vary key=values`: one scenario run over a
// grid of overrides, simulated in parallel or measured one point at a time.
//
// Mechanism:
//   1. Each --vary is parsed into an axis: a key path and its values, written
//      as a list `1,2,4,8`, an arithmetic range `1..64` (step 1) or `1..64+8`,
//      or a geometric range `1..64*2`. Range ends may carry the same unit
//      suffix (`1ms..16ms*2`, `500/s..4000/s*2`); values keep their text, so a
//      list may hold anything the scenario accepts (`1ms,2ms`, `pool,tbb`).
//   2. The grid is the cartesian product, the first axis varying slowest
//      (row-major: the order of the CSV rows).
//   3. Every grid point's values become `--set key=value` overrides after the
//      command's own --set, and the scenario is loaded (validated) for every
//      point BEFORE anything runs, so a bad value fails in a second with the
//      loader's located message (exit 2) and not after an hour of runs.
//   4. Simulation: simulate() is a pure function of (Scenario, Workload), so
//      the points run on `jobs` worker threads that take the next index from
//      one atomic counter; each worker reads only its own loaded Scenario and
//      writes only its own result slot; nothing else is shared except the
//      progress bar (own mutex). The result is identical to a sequential
//      sweep, bit for bit (tested).
//      Measurement (--measure): real runs are never overlapped (they would
//      compete for the CPUs they measure), so the points run one after the
//      other through real::run_scenario, after the (parallel) simulation,
//      and each point keeps both the prediction and the measured statistics.
//   5. Outputs: CSV (one row per point: the varied keys, then every metric
//      of kMetricNames; with --measure the metric columns hold measured
//      means and `<metric>_sd` / `<metric>_predicted` columns follow), JSON,
//      line charts of a metric against the first varied key with one series
//      per value of the second (svg_chart.hpp, the validator report's chart
//      machinery), an HTML page embedding them, and a USL fit of throughput
//      against a numeric key (models/queueing/usl.hpp), one per series.
//
// Left out: adaptive grids (refining where a metric bends), repeating a
// simulated point with other seeds (use --vary seed=1..5), more than one
// chart dimension beyond the series (later axes become more series).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "models/metrics.hpp"
#include "models/queueing/usl.hpp"
#include "models/scenario.hpp"
#include "models/scenario_loader.hpp"
#include "real/runner.hpp"
#include "validate/svg_chart.hpp"

namespace poolsim::validate {

// A grid larger than this is refused: at ~50 ms per simulated point it is
// already more than 10 minutes on 2 cores, and almost surely a typo (1..100000).
inline constexpr std::size_t kMaxGridPoints = 10'000;

struct VaryAxis {
  std::string key;                  // "backend.threads", "workload.task[0].cpu"
  std::vector<std::string> values;  // as written (ranges expanded)
};

// "backend.threads=1..64*2" -> {key, values}. Throws std::invalid_argument
// (exit 2 in the CLI) with what was expected: no '=', empty key or value,
// a range whose end is below its start, a step <= 0, a factor <= 1, unequal
// unit suffixes, more than kMaxGridPoints values.
VaryAxis parse_vary(const std::string& spec);
// The value part alone: "1,2,4", "1..8", "1..64*2", "1ms..8ms*2".
std::vector<std::string> expand_values(const std::string& text);

// The cartesian product, first axis slowest. Each point holds one value per
// axis. Throws std::invalid_argument on a repeated key or a grid above
// kMaxGridPoints.
std::vector<std::vector<std::string>> expand_grid(const std::vector<VaryAxis>& axes);

struct SweepOptions {
  std::string file;  // the scenario file, or empty with `text`
  std::string text;  // scenario YAML given inline (tests, `size`)
  LoadOptions load;  // the command's --set, --seed, --machine
  std::vector<VaryAxis> axes;
  bool measure = false;
  int jobs = 0;            // simulation workers; 0: hardware concurrency
  real::RealOptions real;  // for --measure
  // Called when a phase ("simulate", then "measure" with --measure) starts,
  // with its number of points, and after each point of it (from the worker
  // threads while simulating: the callee must be thread-safe, as Progress is);
  // `label` is "key=value key=value".
  std::function<void(const std::string& phase, std::size_t points)> on_phase;
  std::function<void(const std::string& label)> on_point;
};

struct SweepPoint {
  std::vector<std::string> values;  // one per axis
  Metrics predicted;                // simulated
  std::optional<std::array<MetricStats, kMetricCount>> measured;
  BackendSpec backend;  // as loaded for this point
  // The metric in the sweep's mode: measured mean with --measure, else predicted.
  double value(Metric m) const;
};

struct SweepResult {
  std::string scenario;
  std::string source;  // file name
  ArrivalKind arrival = ArrivalKind::batch;
  bool graph = false;
  bool measured = false;
  std::vector<VaryAxis> axes;
  std::vector<SweepPoint> points;  // grid order
  double seconds = 0;              // wall time the sweep took
};

// Loads every point, then runs the grid. Throws ScenarioError / std::invalid_argument
// on bad input (before running anything), real::MachineRefused.
SweepResult run_sweep(const SweepOptions& opt);

// "backend.threads=8 workload.task[0].cpu=2ms"
std::string point_label(const std::vector<VaryAxis>& axes, const std::vector<std::string>& values);

// CSV: header `key1,key2,...,makespan,throughput,...`; values as written,
// metrics in SI units with 9 significant digits. RFC 4180 quoting for cells
// holding a comma, quote or newline.
std::string sweep_csv(const SweepResult& r);
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
