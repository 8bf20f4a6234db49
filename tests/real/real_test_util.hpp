// real_test_util.hpp: helpers shared by the real-backend tests: build a
// scenario from YAML text (through the real loader), generate its workload,
// run it through the forked runner, and check the per-task invariants every
// backend must keep.
#pragma once

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "models/scenario_loader.hpp"
#include "models/workload.hpp"
#include "real/runner.hpp"

namespace poolsim::real::test {

// `body` holds workload/backend/limits/run keys; name, seed and machine are
// added. run defaults: one measured repetition, no warmup, 60 s watchdog.
inline Scenario scenario(const std::string& body, bool default_run = true) {
  std::string yaml = "name: real-test\nseed: 7\nmachine: default\n" + body;
  if (default_run) yaml += "\nrun: {reps: 1, warmup: 0, timeout: 60s}\n";
  return load_scenario_text(yaml, "<test>");
}

inline RunResult run_once(const Scenario& s, const Workload& w, bool trace = false) {
  RealOptions opt;
  opt.trace = trace;
  auto results = run_scenario(s, w, opt);
  REQUIRE(results.size() == 1);
  return std::move(results.front());
}

inline std::size_t count_outcome(const RunResult& r, TaskOutcome o) {
  std::size_t n = 0;
  for (const auto& rec : r.records) n += rec.outcome == o ? 1 : 0;
  return n;
}

// Every completed record is well ordered in time; (the runtime's
// exactly-once rule is enforced by RunContext, which fails the run on a
// second finalization of any task).
inline void check_records_sane(const RunResult& r) {
  for (std::size_t i = 0; i < r.records.size(); ++i) {
    const TaskRecord& rec = r.records[i];
    if (rec.outcome != TaskOutcome::completed) continue;
    INFO("task " << i);
    REQUIRE(rec.start >= rec.submit);
    REQUIRE(rec.end >= rec.start);
    REQUIRE(rec.submit.count() >= 0);
  }
}

}  // namespace poolsim::real::test
