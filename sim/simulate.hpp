// simulate.hpp: the simulator's public entry point, called by the CLI.
//
// simulate() runs a generated workload on the scenario's backend, machine
// profile and limits, entirely in simulated time (sim/engine.hpp), and
// returns the same RunResult shape the real runner produces. It is a pure
// function of its arguments: the same scenario and workload give
// byte-identical results and trace.
#pragma once

#include <stdexcept>

#include "models/result.hpp"
#include "models/scenario.hpp"
#include "models/workload.hpp"

namespace poolsim::sim {

struct SimOptions {
  bool trace = false;  // fill RunResult::trace
};

// Runs the generated workload on the scenario's backend, machine profile and limits.
RunResult simulate(const Scenario& s, const Workload& w, const SimOptions& opt = {});

}  // namespace poolsim::sim
