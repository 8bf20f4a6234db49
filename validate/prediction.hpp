// prediction.hpp: the prediction a measured mean is compared with.
//
// Mechanism: one simulation is one draw of the machine's arbitrary state, as
// one measured repetition is one draw of the real machine's:
//   - its OS noise (sim/noise.hpp): on a calibrated profile the instants and
//     lengths of the interruptions;
//   - under a CFS quota, where the period grid falls against the workload
//     (sim/bandwidth.hpp): the kernel's period timer runs on its own grid,
//     and fresh groups made a second apart here had their period boundaries
//     7, 65 and 85 ms into CLOCK_MONOTONIC's 100 ms multiples, so each
//     repetition meets a different phase. Near the quota's edge the phase
//     alone moves throttled periods by +-10%, throttled time by +-20% and
//     p99 by +-15% (docs/containers.md).
// The validator compares the measured mean over run.reps repetitions, so it
// predicts the mean too: `draws` simulations of the same workload that
// differ only in the draw (SimOptions::draw 0 .. draws-1: noise streams and
// the newidle balance's dice from (seed, k), phase frac(k * 0.618...)), each
// metric averaged as summarize()
// averages the repetitions. Draw 0 is the run `simulate` makes; its records
// and trace feed the report's charts.
//   - Without noise, a quota or the proportional newidle balance every draw
//     is the same run: one is made.
//   - A streamed workload cannot be shared between runs: one is made.
//   - The draws run on `jobs` threads (usable_workers() when 0), each
//     writing its own slot, so the result does not depend on `jobs`.
//     validate and sweep predict after they measure: threads leave their
//     malloc arenas and cached stacks in the process, and the measured
//     repetitions' children, forks of it, would reuse them (the quickstart's
//     memory_peak read 36.8 KiB after parallel draws).
// Left out: the spread of the workload itself (the repetitions replay one
// generated task list, so the prediction does too; --replications of
// simulate and sweep is that question).
#pragma once

#include <array>

#include "models/metrics.hpp"
#include "models/result.hpp"
#include "models/scenario.hpp"
#include "models/workload.hpp"
#include "sim/simulate.hpp"

namespace poolsim::validate {

// The default number of draws of validate and sweep --measure.
inline constexpr int kDefaultDraws = 8;

// How many draws a prediction of `s` on `w` takes when `requested` are
// asked for: 1 without noise and quota, or with a streamed workload.
// Throws std::invalid_argument for requested < 1.
int draws_for(const Scenario& s, const Workload& w, int requested);

struct Prediction {
  RunResult first;                                 // draw 0, simulated with the caller's options
  Metrics metrics;                                 // per metric, the mean over the draws
  std::array<MetricStats, kMetricCount> spread{};  // over the draws
  int draws = 1;
};

Prediction predict(const Scenario& s, const Workload& w, const sim::SimOptions& first_options,
                   int draws, int jobs = 0);

}  // namespace poolsim::validate
