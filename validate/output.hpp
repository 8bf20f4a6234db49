// output.hpp: the JSON shapes and tables of docs/cli.md for
// simulate, run and compare, built from Metrics (metrics.hpp) only.
#pragma once

#include <array>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/metrics.hpp"
#include "models/scenario.hpp"
#include "models/warnings.hpp"
#include "models/workload.hpp"

namespace poolsim::validate {

// {"kind": "pool", "threads": 4, ...}: only the parameters of the kind.
nlohmann::ordered_json backend_json(const BackendSpec& b);
// {"name": "host", "cores": 2, ...}
nlohmann::ordered_json machine_json(const MachineProfile& m);
nlohmann::ordered_json limits_json(const Limits& l);

// simulate: {"scenario", "mode": "simulated", "backend", "machine", "metrics": {name: value},
// "warnings": [{"kind", "message"}]} (overload_warnings of the run).
nlohmann::ordered_json simulated_json(const Scenario& s, const Workload& w, const Metrics& m,
                                      const RunResult& r);
// run: every metric is {"mean", "sd", "min", "max", "n"}; `warnings` as given.
nlohmann::ordered_json measured_json(const Scenario& s,
                                     const std::array<MetricStats, kMetricCount>& st,
                                     const std::vector<RunResult>& reps,
                                     const std::vector<Warning>& warnings = {});
nlohmann::ordered_json stats_json(const MetricStats& s);

// [{"kind": "overload", "message": "..."}], [] when there are none.
nlohmann::ordered_json warnings_json(const std::vector<Warning>& warnings);
// "\nwarning: overload: ...\n" per warning (empty when there are none): printed under tables.
std::string warnings_text(const std::vector<Warning>& warnings);

// A metric value for people: "12.3 ms", "1.50 MiB", "4,213", "73.2%".
std::string format_metric(Metric m, double v);

// The metrics table of simulate (one column) and run (mean, sd, min, max).
std::string simulated_table(const Metrics& m, const RunResult& r);
std::string measured_table(const std::array<MetricStats, kMetricCount>& st);

// Writes JSON to PATH, or stdout for "-". Throws std::runtime_error on I/O errors.
void write_json(const std::string& path, const nlohmann::ordered_json& j);
// One-line description of the workload ("100000 tasks, batch; work 1.2 s, critical path 3 ms").
std::string describe_workload(const Scenario& s, const Workload& w);

}  // namespace poolsim::validate
