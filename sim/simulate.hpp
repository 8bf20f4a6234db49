// simulate.hpp: the simulator's public entry point, called by the CLI.
//
// simulate() runs a generated workload on the scenario's backend, machine
// profile and limits, entirely in simulated time (sim/engine.hpp), and
// returns the same RunResult shape the real runner produces. It is a pure
// function of its arguments: the same scenario and workload give
// byte-identical results and trace.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>

#include "models/result.hpp"
#include "models/scenario.hpp"
#include "models/workload.hpp"
#include "sim/engine.hpp"

namespace poolsim::sim {

// Where a run is, for a progress display.
struct SimProgress {
  std::uint64_t final_tasks = 0;            // completed, rejected or never issued
  std::uint64_t task_limit = 0;             // tasks the workload can have (0: unknown)
  Duration now{};                           // simulated time
  Duration arrivals_end = Duration::max();  // open arrivals stop here
};

struct SimOptions {
  // Not an aggregate: callers write SimOptions{true} for a traced run.
  SimOptions() = default;
  explicit SimOptions(bool with_trace) : trace(with_trace) {}
  bool trace = false;  // fill RunResult::trace
  // One TaskRecord per task in RunResult::records; off, the records are
  // folded into RunResult::summary as tasks finish (memory flat in the task
  // count), quantiles as `quantiles` says.
  bool records = true;
  QuantilePolicy quantiles;
  // Called every `progress_every` events and once at the end.
  std::function<void(const SimProgress&)> progress;
  std::uint64_t progress_every = 1u << 20;
  // Which draw of the machine's arbitrary state the run takes: its OS noise
  // (sim/noise.hpp) and the phase of a CFS quota's period grid against the
  // run's start (sim/bandwidth.hpp). 0 is the scenario seed's own noise and
  // phase 0 (what `simulate` prints); draw k > 0 takes its noise from a seed
  // derived from (seed, k) and the phase draw_phase(k). The workload and the
  // runtimes' own random choices stay the same. The kernel's proportional
  // newidle balance (machine.newidle_random) throws its dice from the same
  // seed. validate predicts the mean of draws 0 .. N-1
  // (validate/prediction.hpp).
  std::uint64_t draw = 0;
};

// Whether draws of `s` differ at all: OS noise, a quota's period phase, the
// newidle balance's dice or the host's held-back timers. Without any, every
// draw is draw 0 (whose tick phase is 0 too: an idealised machine's ticks
// start with the run).
bool draws_differ(const Scenario& s);

// The seed the kernel's noise streams derive from in draw `draw` of `seed`.
std::uint64_t noise_seed(std::uint64_t seed, std::uint64_t draw);
// The period grid's phase in draw `draw`, a fraction of the period: the
// golden-ratio (Weyl) sequence frac(k * 0.618...), so that the first N draws
// of any N spread evenly over the period (0, 0.618, 0.236, 0.854, ...).
double draw_phase(std::uint64_t draw);
// The tick's phase in draw `draw`, a fraction of the tick: frac(k x
// (sqrt(2) - 1)), another Weyl sequence (0, 0.414, 0.828, 0.243, ...), so
// that it does not move in step with the period's phase.
double draw_tick_phase(std::uint64_t draw);
// Where draw `draw` starts in the busy CPUs' balance intervals
// (KernelOptions::balance_phase): frac(k x (sqrt(13) - 3) / 2), a third
// Weyl sequence (0, 0.303, 0.606, 0.908, ...). Not a reason of its own for
// draws to differ (draws_differ): an idealised machine takes draw 0's.
double draw_balance_phase(std::uint64_t draw);

// A run that passed its event budget (Scenario::run.max_events): thrown by
// simulate(), exit 3 in the CLI.
struct EventBudgetExceeded : SimulationRefused {
  using SimulationRefused::SimulationRefused;
};

// Runs the generated workload on the scenario's backend, machine profile and limits.
RunResult simulate(const Scenario& s, const Workload& w, const SimOptions& opt = {});

// Whether the scenario's workload can be simulated from a TaskStream
// (generate_workload with stream = true): open arrivals, on a backend that
// does not size its state by the task count (virtual threads and event
// loops keep a slot per task).
bool can_stream(const Scenario& s);

}  // namespace poolsim::sim
