// metric_names.hpp: the one table of metric names people type: each metric's
// name (as in metrics.hpp and every JSON), unit, one-line meaning, and the
// short aliases the commands accept (`p99` for `latency_p99`).
//
// `poolsim metrics` prints this table; every flag that takes a metric name
// (`capacity --target`, `sweep --plot-metric`) resolves it with
// resolve_metric() or parse_metric(), so an alias works everywhere and an
// unknown name gets the same did-you-mean message everywhere.
// Invariants: one row per Metric in enum order; no alias equals another
// row's name or alias (tested).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "models/metrics.hpp"

namespace poolsim {

struct MetricInfo {
  Metric metric{};
  std::string_view name;                    // kMetricNames
  std::string_view unit;                    // "seconds", "per second", "bytes", "fraction", "count"
  std::string_view meaning;                 // one line
  std::array<std::string_view, 3> aliases;  // empty entries unused
};

// One row per metric, in enum order.
const std::array<MetricInfo, kMetricCount>& metric_table();
const MetricInfo& metric_info(Metric m);

// A metric by its name or an alias (case-insensitive), or nothing.
std::optional<Metric> resolve_metric(std::string_view text);
// resolve_metric() or std::invalid_argument (exit 2 in the CLI):
// "<flag>: unknown metric 'x'; did you mean 'latency_p99'? (`poolsim metrics` lists them)".
Metric parse_metric(std::string_view text, std::string_view flag);

}  // namespace poolsim
