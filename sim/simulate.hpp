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
};

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
