// Every backend kind of the registry (models/backend_registry.hpp) has a
// simulated runtime, and it runs the tasks it is given. (The factory table in
// sim/simulate.cpp is checked against the registry at compile time; this
// checks that each factory builds a runtime that works.)
#include <catch2/catch.hpp>

#include "models/backend_registry.hpp"
#include "runtime_fixtures.hpp"
#include "sim/simulate.hpp"

using namespace poolsim;
using namespace poolsim::test;

TEST_CASE("simulate: every backend kind of the registry completes a batch on its own runtime",
          "[runtime][registry]") {
  for (const BackendInfo& b : kBackends) {
    CAPTURE(b.name);
    const Scenario s = backend_scenario(zero_machine(2), b.kind, 2);
    const RunResult r = sim::simulate(s, batch(4, 1ms));
    CHECK(r.mode == "simulated");
    REQUIRE(r.records.size() == 4);
    for (const TaskRecord& t : r.records) CHECK(t.outcome == TaskOutcome::completed);
    // Four 1 ms tasks on two CPUs without costs: two rounds, whatever the runtime.
    CHECK(makespan(r) == Approx(0.002));
  }
}
