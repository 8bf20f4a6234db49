// sweep_result.hpp: what a sweep produced: one SweepPoint per grid point, in
// grid order (or a shard's subset of them, each with its grid index).
// Written by run_sweep (sweep.hpp) or rebuilt from shard files by
// merge_parts (sweep_part.hpp); read by the outputs (sweep_output.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "models/metrics.hpp"
#include "models/scenario.hpp"
#include "models/warnings.hpp"
#include "validate/sweep_grid.hpp"

namespace poolsim::validate {

struct SweepPoint {
  std::size_t index = 0;            // in the whole grid
  std::vector<std::string> values;  // one per axis
  Metrics predicted;                // simulated
  std::optional<std::array<MetricStats, kMetricCount>> measured;
  // With --replications N > 1: each metric's mean, sd, min and max over the
  // N seeds (`predicted` then holds the means); the 95% CI is ci95() of it.
  std::optional<std::array<MetricStats, kMetricCount>> spread;
  // The overload warning (models/warnings.hpp) of this point's simulation,
  // merged over the replications: the point is marked in every output.
  std::vector<Warning> warnings;
  bool overloaded() const;
  BackendSpec backend;  // as loaded for this point
  // The JSON output's "backend" of this point: set from a shard file when the
  // point was merged (its BackendSpec is then default); else null and the
  // JSON is made from `backend`.
  nlohmann::ordered_json backend_json;
  // The metric in the sweep's mode: measured mean with --measure, else predicted.
  double value(Metric m) const;
};

struct SweepResult {
  std::string scenario;  // name of grid point 0's scenario
  std::string source;    // file name
  ArrivalKind arrival = ArrivalKind::batch;
  bool graph = false;
  bool measured = false;
  int replications = 1;  // seeds per simulated point (--replications)
  std::vector<VaryAxis> axes;
  std::size_t grid_points = 0;     // the whole grid's size
  std::vector<SweepPoint> points;  // grid order
  double seconds = 0;              // wall time the sweep took
};

}  // namespace poolsim::validate
