// poolsim/poolsim.hpp: poolsim as a C++ library: load a scenario from a file
// or build one in code, simulate it, and read its metrics and trace.
//
//   find_package(poolsim REQUIRED)
//   target_link_libraries(app PRIVATE poolsim::poolsim)
//
// The API is a thin layer over the simulator's own functions (the CLI's
// `poolsim simulate` calls the same ones), so its results are the CLI's,
// byte for byte:
//   - load(file) / from_yaml(text): models/scenario_loader.hpp, with every
//     check and located error message of the CLI (ScenarioError).
//   - ScenarioBuilder: a scenario in code, written as the same key paths as
//     `--set` (`set("backend.threads", "8")`), validated by the same loader;
//     so a scenario built in code cannot hold a value a file could not.
//   - simulate(scenario): workload generation (models/workload.hpp), the
//     discrete-event simulation (sim/simulate.hpp) and the metrics
//     (models/metrics.hpp); a pure function of the scenario and its seed.
//   - Result::metric("latency_p99"), Result::run (per-task records, counters,
//     thread series) and write_trace (Chrome trace-event JSON, as
//     `simulate --trace`).
// Machine profiles (`machine: default`) are read from the installed
// PREFIX/share/poolsim/configs (POOLSIM_CONFIG_DIR still overrides it).
//
// Left out: the real backends and the validator (they measure this machine,
// and stay with the CLI), and any ABI promise: the library is static and
// versioned with the program (poolsim_VERSION).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/metrics.hpp"
#include "models/result.hpp"
#include "models/scenario.hpp"
#include "models/scenario_loader.hpp"
#include "models/workload.hpp"
#include "sim/simulate.hpp"

namespace poolsim::lib {

// Load options that find the installed machine profiles: the config
// directory poolsimConfig.cmake passes (POOLSIM_INSTALLED_CONFIG_DIR), unless
// POOLSIM_CONFIG_DIR is set.
inline LoadOptions default_load_options() {
  LoadOptions o;
#ifdef POOLSIM_INSTALLED_CONFIG_DIR
  if (const char* e = std::getenv("POOLSIM_CONFIG_DIR"); !(e && *e))
    o.config_dir = POOLSIM_INSTALLED_CONFIG_DIR;
#endif
  return o;
}

// A scenario file, validated (throws ScenarioError with file:line:col).
inline Scenario load(const std::filesystem::path& file, LoadOptions o = default_load_options()) {
  return load_scenario(file, o);
}

// Scenario YAML given as text; `name` is used in error messages.
inline Scenario from_yaml(const std::string& yaml, const std::string& name = "<scenario>",
                          LoadOptions o = default_load_options()) {
  return load_scenario_text(yaml, name, o);
}

// A scenario built in code, key path by key path, as `--set` writes them.
class ScenarioBuilder {
 public:
  explicit ScenarioBuilder(std::string name) : name_(std::move(name)) {}
  // `value` is YAML: "8", "2ms", "{kind: batch, count: 100}", "[{cpu: 1ms}]".
  ScenarioBuilder& set(const std::string& key_path, const std::string& value) {
    sets_.push_back(key_path + "=" + value);
    return *this;
  }
  ScenarioBuilder& seed(std::uint64_t s) {
    seed_ = s;
    return *this;
  }
  // Validated like a file; errors name "--set key=value".
  Scenario build(LoadOptions o = default_load_options()) const {
    o.sets.insert(o.sets.end(), sets_.begin(), sets_.end());
    if (seed_) o.seed = seed_;
    return load_scenario_text("name: " + name_ + "\n", name_, o);
  }

 private:
  std::string name_;
  std::vector<std::string> sets_;
  std::optional<std::uint64_t> seed_;
};

struct Result {
  RunResult run;    // per-task records, counters, thread series, trace
  Metrics metrics;  // the metrics of `poolsim simulate --json`
  // A metric by its name (kMetricNames: "makespan", "latency_p99", ...);
  // std::nullopt for an unknown name.
  std::optional<double> metric(std::string_view name) const {
    if (const auto m = metric_from(name)) return metrics[*m];
    return std::nullopt;
  }
};

// Simulates the scenario (deterministic: same scenario and seed, same result).
// Throws sim::UnsupportedBackend for a backend the simulator does not model.
inline Result simulate(const Scenario& s, bool trace = false) {
  Result r;
  const Workload w = generate_workload(s);
  sim::SimOptions opt;
  opt.trace = trace;
  r.run = sim::simulate(s, w, opt);
  r.metrics = compute_metrics(r.run);
  return r;
}

// The trace of a simulate(s, true) as Chrome trace-event JSON (Perfetto,
// chrome://tracing).
inline void write_trace(std::ostream& out, const Result& r, const std::string& title) {
  write_chrome_trace(out, r.run.trace, title);
}

}  // namespace poolsim::lib
