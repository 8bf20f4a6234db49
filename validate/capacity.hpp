// capacity.hpp: `poolsim capacity FILE --target METRIC=VALUE`: the inverse of
// `size`: the highest arrival rate the scenario's backend sustains within a
// target (a p99 of 100 ms), found by simulation.
//
// Mechanism:
//   1. The scenario must have an open arrival rate (poisson `rate` or periodic
//      `interval`): only there is "the rate" a knob. Anything else is refused
//      (CapacityRefused, exit 2) saying so.
//   2. Upper bracket without simulating: the bottleneck's bound
//      (models/warnings.hpp), e.g. threads / (cpu + wait). At or above it no
//      steady state exists, so no rate there sustains any target.
//   3. A rate meets the target when the mean of the target metric over the
//      replications (replications.hpp; seeds s, s+1, ...) is at most the
//      target AND no replication shows overload: a finite run that is
//      falling behind can still show a short p99, it is not sustaining.
//   4. Lower bracket: kProbeFraction of the bound; if even that light load
//      misses the target, the target is below what a request alone takes:
//      refused with the metric's value there.
//   5. Bisection between the brackets until they are within kRatePrecision
//      of each other (relative to the upper one). The same seeds are used at
//      every rate (common random numbers): with a fixed `count` the arrival
//      times are the same draws scaled by 1 / rate and the phase durations
//      are identical, so the metric moves smoothly with the rate and the
//      search does not chase seed noise. The answer is the highest rate that
//      met the target; its metric is reported with its 95% CI.
//   6. Only metrics that load pushes up can be targets (latencies, queue
//      wait, CPU utilisation, throttling, rejections, threads and memory);
//      makespan, throughput, first_completion and completed are refused.
// Left out: several targets at once (run once per target); a target on the
// measured (real) backend; non-monotone metrics (the bisection assumes the
// metric grows with the rate, which holds for the accepted ones).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/metrics.hpp"
#include "models/scenario.hpp"
#include "models/warnings.hpp"
#include "validate/replications.hpp"

namespace poolsim::validate {

// The search's lower bracket, as a fraction of the bottleneck's bound.
inline constexpr double kProbeFraction = 1.0 / 64;
// The bisection stops when the brackets are within this fraction of the upper one.
inline constexpr double kRatePrecision = 0.01;
// Default --replications of `capacity`: 3 seeds per rate keep a 6,000-request
// scenario's search (about 8 rates) under a second on 2 CPUs.
inline constexpr int kCapacityReplications = 3;

struct CapacityRefused : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct CapacityTarget {
  Metric metric{};
  double value = 0;  // SI units of the metric
  std::string text;  // as written: "latency_p99=100ms"
};
// "latency_p99=100ms", "p99=0.1s", "cpu_utilization=80%": the metric by name
// or alias (metric_names.hpp), the value in the metric's unit. Throws
// std::invalid_argument with what was expected.
CapacityTarget parse_target(const std::string& text);

struct CapacityPoint {
  double rate = 0;   // per second
  double value = 0;  // the target metric's mean over the replications
  Interval ci;
  bool overload = false;
  bool meets = false;
};

struct CapacityOptions {
  int replications = kCapacityReplications;
  int jobs = 0;                                        // 0: usable_workers()
  std::function<void(const CapacityPoint&)> on_point;  // after each simulated rate
};

struct CapacityResult {
  std::string scenario;
  CapacityTarget target;
  int replications = 0;
  std::vector<std::uint64_t> seeds;
  double scenario_rate = 0;             // the file's rate
  Capacity bottleneck;                  // the tightest bound (2 above)
  double max_rate = 0;                  // the answer, per second
  CapacityPoint at_max;                 // the target metric there
  Replicated at_max_runs;               // every metric there
  std::vector<CapacityPoint> searched;  // in search order
};

// Runs the search. Throws CapacityRefused (exit 2) as described above.
CapacityResult find_capacity(const Scenario& s, const CapacityTarget& target,
                             const CapacityOptions& opt = {});
// {"scenario", "target": {"metric", "value", "text"}, "max_rate", "metric": {"name", "mean",
//  "ci95"}, "bottleneck": {"resource", "units", "hold", "max_rate", "utilization", "text"},
//  "replications", "seeds", "searched": [{"rate", "value", "meets", "overload"}], "warnings": []}
nlohmann::ordered_json capacity_json(const CapacityResult& r);
std::string capacity_text(const CapacityResult& r);

// The scenario with its open arrival rate set to `rate` per second.
Scenario with_rate(const Scenario& s, double rate);

}  // namespace poolsim::validate
