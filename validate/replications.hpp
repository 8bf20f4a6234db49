// replications.hpp: one scenario simulated with N seeds, and what the spread
// of the N answers says (mean, 95% confidence interval, min, max).
//
// Mechanism:
//   - Seed rule: replication i (0-based) uses seed s + i, where s is the
//     scenario's seed after --seed; replication 0 is therefore the run a
//     plain `simulate` makes, byte for byte. The workload is regenerated for
//     every seed (arrival times, classes and phase durations all change).
//   - The replications run on usable_workers() threads (or `jobs`), each
//     taking the next index from one atomic counter and writing only its own
//     slot (for_each_index, worker_pool.hpp); simulate() is a pure function,
//     so the result does not depend on the number of workers (tested). A
//     replication that throws (an event budget) stops the others; the
//     exception reaches the caller.
//   - Per metric: mean, sample sd, min, max (summarize() of metrics.hpp) and
//     the 95% confidence interval of the mean, mean +- t(0.975, n-1) sd /
//     sqrt(n) (Student t; boost::math::students_t), cut at 0 below (every
//     metric is non-negative). The replications are
//     independent runs, so the interval is exact for normal metrics and the
//     usual approximation for the others (percentiles of long runs are close
//     to normal across seeds).
//   - Warnings (models/warnings.hpp) are checked per replication and merged
//     by kind: the first replication's message, with "(k of N replications)".
// JSON (documented in docs/cli.md, "Replications"): `metrics` keeps one number
// per metric, now the mean over the replications, so every existing reader
// keeps working; a sibling `replications` object carries {n, seeds, metrics:
// {name: {mean, sd, min, max, n, ci95: [low, high]}}}: the per-metric object
// of `run`, plus ci95. It is written only when N > 1.
// Left out: replications of real runs (`run.reps` is that), variance
// reduction other than common seeds across compared configurations.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/metrics.hpp"
#include "models/scenario.hpp"
#include "models/warnings.hpp"
#include "models/workload.hpp"
#include "sim/simulate.hpp"

namespace poolsim::validate {

// Worker threads for parallel simulations: the CPUs this process may use.
// The one place that decides it (every command's default --jobs).
int usable_workers();

// The two-sided 95% quantile of Student's t with `dof` degrees of freedom
// (12.706 for 1, 1.96 as dof grows).
double student_t_975(int dof);

struct Interval {
  double low = 0, high = 0;
};
// mean +- t(0.975, n-1) sd / sqrt(n), the low end cut at 0 (every metric is
// non-negative); [mean, mean] for n <= 1.
Interval ci95(const MetricStats& s);

// seed, seed + 1, ..., seed + n - 1.
std::vector<std::uint64_t> replication_seeds(std::uint64_t seed, int n);

struct Replicated {
  int n = 0;
  std::vector<std::uint64_t> seeds;
  std::vector<Metrics> runs;  // per replication, in seed order
  std::array<MetricStats, kMetricCount> stats{};
  std::array<Interval, kMetricCount> ci{};
  std::vector<Warning> warnings;        // merged over the replications
  std::map<std::string, double> extra;  // runtime counters, mean over replications
  Workload workload;                    // replication 0's (the plain run's)
  RunResult first;                      // replication 0's result (trace if asked)
  Metrics mean() const;
};

// Simulates `s` with n seeds (n >= 1) on `jobs` workers (0: usable_workers()).
// `first_options` applies to replication 0 only (a trace is written for it).
Replicated replicate(const Scenario& s, int n, int jobs = 0,
                     const sim::SimOptions& first_options = {});

// {"n", "seeds", "metrics": {name: {"mean", "sd", "min", "max", "n", "ci95": [low, high]}}}
nlohmann::ordered_json replications_json(const Replicated& r);
// simulate's JSON for N replications: simulated_json of replication 0 with
// `metrics` and `extra` replaced by their means, `warnings` merged, and the
// `replications` object when n > 1.
nlohmann::ordered_json replicated_json(const Scenario& s, const Replicated& r);
// The table of simulate --replications N: metric, mean, 95% CI, min, max.
std::string replicated_table(const Replicated& r);
// "245 ms [240 ms, 251 ms]" for compact tables.
std::string format_with_ci(Metric m, double mean, const Interval& ci);

}  // namespace poolsim::validate
