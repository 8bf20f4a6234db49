// run_reader.cpp: the `run:` section (repetitions, timeout, thread cap, event budget, speed check).
#include <limits>

#include "models/section_readers.hpp"

namespace poolsim::loader {

using yaml::MapReader;
using yaml::Val;

RunOptions read_run(const Val& v) {
  MapReader r(v,
              {"reps", "warmup", "timeout", "max_threads", "max_events", "speed_band",
               "speed_drift", "speed_retries", "speed_wait"},
              "run options");
  RunOptions o;
  constexpr auto kIntMax = std::numeric_limits<int>::max();
  if (auto x = r.get("reps")) o.reps = static_cast<int>(yaml::integer(*x, 1, kIntMax, "run.reps"));
  if (auto x = r.get("warmup"))
    o.warmup = static_cast<int>(yaml::integer(*x, 0, kIntMax, "run.warmup"));
  if (auto x = r.get("timeout")) {
    o.timeout = yaml::duration(*x);
    if (o.timeout <= Duration{0}) x->fail("run.timeout must be greater than 0s");
  }
  if (auto x = r.get("max_threads"))
    o.max_threads = static_cast<int>(yaml::integer(*x, 1, kIntMax, "run.max_threads"));
  if (auto x = r.get("max_events"))
    o.max_events = static_cast<std::uint64_t>(
        yaml::integer(*x, 1, std::numeric_limits<std::int64_t>::max(), "run.max_events"));
  if (auto x = r.get("speed_band")) {
    o.speed_band = yaml::fraction(*x);
    if (o.speed_band <= 0 || o.speed_band >= 1)
      x->fail("run.speed_band must be between 0% and 100%");
  }
  if (auto x = r.get("speed_drift")) {
    o.speed_drift = yaml::fraction(*x);
    if (o.speed_drift <= 0 || o.speed_drift >= 1)
      x->fail("run.speed_drift must be between 0% and 100%");
  }
  if (auto x = r.get("speed_retries"))
    o.speed_retries = static_cast<int>(yaml::integer(*x, 0, 10, "run.speed_retries"));
  if (auto x = r.get("speed_wait")) {
    o.speed_wait = yaml::duration(*x);
    if (o.speed_wait < Duration{0}) x->fail("run.speed_wait must be 0s or more");
  }
  return o;
}

}  // namespace poolsim::loader
