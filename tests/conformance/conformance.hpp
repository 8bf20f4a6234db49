// conformance.hpp: one test body, run on the simulated and on the real twin
// of a runtime (in the style of Tokio's tests/rt_common.rs).
//
// A body is a function of a Twin: it builds a scenario (YAML through the
// loader, machine `default`) and a workload, runs them with twin.run(), and
// states the expected behaviour once, with twin.expect(): exact on the
// simulated twin (deterministic, same seed same bytes), within a margin on
// the real one, which runs real threads on a loaded machine. Expectations
// are counts, orderings and ratios, never absolute times.
// CONFORMANCE_CASE(name, claim, body) makes two Catch2 test cases,
// "sim.<name>: <claim>" and "real.<name>: <claim>" (ctest:
// conformance.sim.* and conformance.real.*; the real ones are the ones a
// ThreadSanitizer run selects with -R '^conformance\.real\.').
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "../sim/runtime_fixtures.hpp"
#include "models/result.hpp"
#include "models/scenario.hpp"
#include "models/scenario_loader.hpp"
#include "models/workload.hpp"
#include "real/runner.hpp"
#include "sim/simulate.hpp"

namespace poolsim::conformance {

enum class TwinKind { simulated, real };

class Twin {
 public:
  explicit Twin(TwinKind k) : kind_(k) {}
  bool simulated() const { return kind_ == TwinKind::simulated; }

  RunResult run(const Scenario& s, const Workload& w) const {
    if (simulated()) return sim::simulate(s, w);
    real::RealOptions opt;
    auto reps = real::run_scenario(s, w, opt);
    REQUIRE(reps.size() == 1);
    return std::move(reps.front());
  }

  // `actual` is `expected` on the simulated twin; on the real one within
  // [expected - below, expected + above].
  void expect(const char* what, double actual, double expected, double below = 0,
              double above = 0) const {
    INFO(what << " on the " << (simulated() ? "simulated" : "real") << " twin: " << actual
              << ", expected " << expected);
    if (simulated()) {
      CHECK(actual == expected);
    } else {
      CHECK(actual >= expected - below);
      CHECK(actual <= expected + above);
    }
  }

 private:
  TwinKind kind_;
};

// `body` holds backend and optionally workload keys; name, seed, machine and
// a run of one measured repetition are added. Without a workload, the
// scenario gets a one-task batch only to satisfy the loader: the case runs
// its own phased() workload.
inline Scenario scenario(const std::string& body) {
  const bool has_workload = body.find("workload:") != std::string::npos;
  return load_scenario_text(
      "name: conformance\nseed: 7\nmachine: default\n" + body +
          (has_workload ? ""
                        : "\nworkload: {arrival: {kind: batch, count: 1}, task: [{cpu: 1ms}]}") +
          "\nrun: {reps: 1, warmup: 0, timeout: 60s}\n",
      "<conformance>");
}

// The workload builders and counters of the simulator's runtime tests,
// shared rather than copied (tests/sim/runtime_fixtures.hpp).
using test::extra;
using test::locked;
using test::phased;
using test::wait;

inline double count(const RunResult& r, TaskOutcome o) {
  return static_cast<double>(test::count_outcome(r, o));
}

}  // namespace poolsim::conformance

// One body, two test cases: the simulated twin and the real one.
#define CONFORMANCE_CASE(name, claim, tags, body)                                    \
  TEST_CASE("sim." name ": " claim, "[conformance][sim]" tags) {                     \
    body(::poolsim::conformance::Twin(::poolsim::conformance::TwinKind::simulated)); \
  }                                                                                  \
  TEST_CASE("real." name ": " claim, "[conformance][real]" tags) {                   \
    body(::poolsim::conformance::Twin(::poolsim::conformance::TwinKind::real));      \
  }
