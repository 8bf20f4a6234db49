// scenario_loader.hpp: YAML scenario -> Scenario, with errors people can act on.
//
// Every error is a ScenarioError carrying file:line:col (yaml-cpp marks), the
// key path ("backend.threads") and what was expected; unknown keys get a
// did-you-mean suggestion. `--set key.path=value` overrides are applied to the
// YAML tree before validation, so they are checked like the file's own keys
// (their errors point at "--set key.path=value"). The CLI maps ScenarioError to
// exit code 2.
//
// The loader's files, by concept: scenario_error (the error type),
// scenario_paths (default config directory and host profile), input_file
// (safe file reading), yaml_document (parsing with nesting and document
// checks), scenario_overrides (--set, --machine, --seed), profile_loader
// (machine profiles, `base:`), profile_writer (a profile as YAML),
// section_readers.hpp (one reader per scenario section), and
// scenario_loader.cpp (the order of the sections and their cross-checks).
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/machine.hpp"
#include "models/profile_writer.hpp"
#include "models/scenario.hpp"
#include "models/scenario_error.hpp"
#include "models/scenario_paths.hpp"

namespace poolsim {

struct LoadOptions {
  std::vector<std::string> sets;       // "key.path=value", applied in order
  std::optional<std::string> machine;  // --machine NAME|PATH replaces `machine:`
  std::optional<std::uint64_t> seed;   // --seed N replaces `seed:`
  // Directory holding machines/ (profiles) and bundled scenarios. Defaults to
  // default_config_dir().
  std::filesystem::path config_dir;
  // Where the `host` profile lives (default: host_profile_path()).
  std::filesystem::path host_profile;
  // Called when the `host` profile is requested but does not exist yet; it
  // must create the file (the CLI calibrates). Unset: a ScenarioError.
  std::function<void(const std::filesystem::path&)> create_host_profile;
  // The cap on the tasks of a Poisson or periodic arrival (count, rate x
  // duration, duration / interval): kMaxTasks, or kMaxStreamedTasks where
  // the caller streams the workload (poolsim simulate). Batches, closed
  // loops and graphs keep kMaxTasks.
  std::int64_t open_task_cap = kMaxTasks;
};

Scenario load_scenario(const std::filesystem::path& file, const LoadOptions& opts = {});
Scenario load_scenario_text(const std::string& yaml, const std::string& display_name,
                            const LoadOptions& opts = {});

// Resolve a machine profile by name ("default", "host", a name under
// configs/machines/) or path to a YAML file.
MachineProfile load_machine_profile(const std::string& name_or_path, const LoadOptions& opts = {});

}  // namespace poolsim
