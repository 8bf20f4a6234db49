// sweep.hpp: `poolsim sweep FILE --vary key=values`: one scenario run over a
// grid of overrides, simulated in parallel or measured one point at a time.
// The grammar and the grid are in sweep_grid.hpp, the outputs in
// sweep_output.hpp, shard files and their merge in sweep_part.hpp; this file
// loads and runs the points.
//
// Mechanism:
//   1. Every grid point's values become `--set key=value` overrides after the
//      command's own --set, and the scenario is loaded (validated) for every
//      point this process runs BEFORE anything runs, so a bad value fails in
//      a second with the loader's located message (exit 2) and not after an
//      hour of runs. A loader error on an override of a varied key names
//      `--vary key=value` (not --set) and, for an unknown key, the scenario's
//      full key paths that end like it (`rate` -> workload.arrival.rate).
//      Any other error of a point (a workload over the task cap) names the
//      point.
//   2. Simulation: simulate() is a pure function of (Scenario, Workload), so
//      the points run on `jobs` workers (worker_pool.hpp; default: the CPUs
//      this process may use, usable_cpus.hpp) that take the next point from
//      one atomic counter; each worker reads only its own loaded Scenario and
//      writes only its own result slot; nothing else is shared except the
//      progress bar (own mutex). The result is identical to a sequential
//      sweep, bit for bit (tested).
//      Measurement (--measure): real runs are never overlapped (they would
//      compete for the CPUs they measure), so the points run one after the
//      other through real::run_scenario, after the (parallel) simulation,
//      and each point keeps both the prediction and the measured statistics.
//   3. A shard (--shard K/N) runs only its points (sweep_grid.hpp), and the
//      result's header (scenario name, arrival kind) always comes from grid
//      point 0, so every shard and the whole grid agree on it.
//
//   4. --replications N: each point is simulated with N seeds
//      (replications.hpp, on the point's own worker); its metrics are the
//      means and `spread` keeps mean, sd, min and max for the 95% CIs. Each
//      point's overload warnings (merged over its replications) are kept so
//      that every output marks the point.
//
//   5. With `draws` > 1 (the CLI's default with --measure) a point's
//      prediction is the mean over that many draws of the machine's
//      arbitrary state (OS noise, a quota's period phase: prediction.hpp;
//      the measured mean is compared with it), run on the point's own
//      worker.
//
// Left out: adaptive grids (refining where a metric bends), replications of
// measured points (run.reps is that).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/scenario.hpp"
#include "models/scenario_loader.hpp"
#include "real/runner.hpp"
#include "validate/sweep_grid.hpp"
#include "validate/sweep_output.hpp"
#include "validate/sweep_result.hpp"

namespace poolsim::validate {

struct SweepOptions {
  std::string file;  // the scenario file, or empty with `text`
  std::string text;  // scenario YAML given inline (tests, `size`)
  LoadOptions load;  // the command's --set, --seed, --machine
  std::vector<VaryAxis> axes;
  bool measure = false;
  // Seeds per simulated point (replications.hpp's rule: seed, seed + 1, ...).
  int replications = 1;
  // Each point's prediction is the mean of this many draws (prediction.hpp),
  // as validate's is; the CLI sets 8 with --measure.
  int draws = 1;
  int jobs = 0;                             // simulation workers; 0: usable_cpus()
  real::RealOptions real;                   // for --measure
  std::optional<Shard> shard;               // run only this shard's points
  std::size_t max_points = kMaxGridPoints;  // the grid cap (grid_cap(P) when shared)
  // Called when a phase ("simulate", then "measure" with --measure) starts,
  // with its number of points, and after each point of it (from the worker
  // threads while simulating: the callee must be thread-safe, as Progress is);
  // `label` is "key=value key=value".
  std::function<void(const std::string& phase, std::size_t points)> on_phase;
  std::function<void(const std::string& label)> on_point;
  // A remark for stderr ("could start only 97 of 200 workers").
  std::function<void(const std::string& note)> on_note;
};

// Loads (validates) one grid point: the command's --set, then key=value per
// axis. Errors as described in the file comment (ScenarioError, else
// std::invalid_argument naming the point).
Scenario load_point(const SweepOptions& opt, const std::vector<std::string>& values);
// Simulates a loaded point into p.predicted.
void simulate_point(const SweepOptions& opt, const Scenario& s, SweepPoint& p);
// Measures a loaded point on this machine into p.measured.
void measure_point(const SweepOptions& opt, const Scenario& s, SweepPoint& p);
// A point ready to run: index, values and backend set.
SweepPoint make_point(const SweepOptions& opt, std::size_t index, const Scenario& s);

// The result without points: the axes, the grid's size (checked against
// opt.max_points) and grid point 0's scenario name and arrival kind.
SweepResult sweep_header(const SweepOptions& opt);

// Loads every point of this process (all, or the shard's), then runs them.
// Throws ScenarioError / std::invalid_argument on bad input (before running
// anything), real::MachineRefused.
SweepResult run_sweep(const SweepOptions& opt);

}  // namespace poolsim::validate
