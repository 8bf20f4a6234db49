// scenario_loader.cpp: YAML scenario file -> complete, validated Scenario.
//
// Mechanism, in order:
//   1. Read the file (input_file.hpp: regular files under a size cap only) and
//      parse it (yaml_document.hpp: bounded nesting, one document, a
//      ParserException becomes a ScenarioError at its mark).
//   2. Apply LoadOptions::sets in order, then --machine and --seed
//      (scenario_overrides.hpp). The Source records each overridden path so
//      later errors inside it name the override.
//   3. Read the tree top-down with MapReader (yaml_reader.hpp): machine first
//      (profile_loader.hpp: profile files, `base:` chains), then limits
//      (checked against the machine), run, workload, backend (thread counts
//      resolved with effective_cores() of the final machine and limits),
//      tolerance (section_readers.hpp, one file per section); then the
//      cross-checks (thread bound vs run.max_threads).
// Invariants: the returned Scenario has every default filled in and every
// thread count resolved to an int; the first problem found is thrown as a
// ScenarioError(where = "file:line:col" or "--set ...", key path, message).
// Source: the user contract docs/scenarios.md (keys, defaults, value
// forms); ThreadPoolExecutor's parameter rules (core <= max, reject
// policies) for `pool`; docs/calibration.md for the machine-profile fields.
//
// Machine: without `machine:` the shipped `default` profile is used, so a bare
// scenario predicts the same everywhere.
//
// Left out: multi-document files are refused; the thread-per-task bound (one
// thread per concurrently running task) is checked by the runner, which knows
// the concurrency.
#include "models/scenario_loader.hpp"

#include <algorithm>
#include <filesystem>
#include <string>

#include "models/backend_registry.hpp"
#include "models/input_file.hpp"
#include "models/machine_fields.hpp"
#include "models/profile_loader.hpp"
#include "models/scenario_overrides.hpp"
#include "models/scenario_resources.hpp"
#include "models/section_readers.hpp"
#include "models/yaml_document.hpp"
#include "models/yaml_reader.hpp"

namespace poolsim {

namespace fs = std::filesystem;
using yaml::MapReader;
using yaml::Source;
using yaml::Val;

namespace {

using loader::apply_overrides;
using loader::parse_yaml;
using loader::ProfileLoader;
using loader::read_backend;
using loader::read_input;
using loader::read_limits;
using loader::read_run;
using loader::read_tolerance;
using loader::read_workload;

// The top-level keys of a machine profile, to recognise a profile given in
// place of a scenario (profile_loader.cpp recognises the converse).
bool is_profile_key(const std::string& k) {
  for (const MachineField& f : kMachineFields)
    if (k == f.name) return true;
  return k == "base";
}

// The backend key that sets the thread bound (so an error about it names that
// key, or the `--set` that gave it), else the backend map itself.
Val thread_bound_key(const Val& bv) {
  if (!bv.is_map()) return bv;
  for (const char* k : {"max_threads", "threads", "min_threads", "carriers", "loops"})
    for (auto it = bv.node.begin(); it != bv.node.end(); ++it)
      if (it->first.IsScalar() && it->first.Scalar() == k)
        return Val{bv.src, it->second, it->second.IsNull() ? it->first.Mark() : it->second.Mark(),
                   yaml::join_path(bv.path, k)};
  return bv;
}

Scenario read_scenario(YAML::Node root, Source& src, const LoadOptions& opts) {
  apply_overrides(root, src, opts);
  const Val rv = yaml::root_val(src, root);
  if (!root.IsDefined() || root.IsNull())
    rv.fail("the scenario is empty: expected a map with name, workload and backend");
  MapReader top(rv,
                {"name", "description", "seed", "machine", "limits", "resources", "workload",
                 "backend", "run", "tolerance"},
                "a scenario", [](const std::string& key) -> std::string {
                  if (!is_profile_key(key)) return {};
                  return "'" + key +
                         "' is a machine-profile field: this looks like a machine "
                         "profile, not a scenario (give it with --machine FILE or `machine:`)";
                });
  Scenario s;
  s.source_file = src.display();
  const auto nv = top.require("name", "lower-case letters, digits and '-'");
  s.name = yaml::scalar(nv, "a scenario name");
  if (s.name.empty() || !std::all_of(s.name.begin(), s.name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
      }))
    nv.fail("a scenario name uses only lower-case letters, digits and '-' (got '" + s.name + "')");
  if (auto d = top.get("description"))
    s.description = d->node.IsNull() ? "" : yaml::scalar(*d, "a description");
  if (auto sd = top.get("seed")) s.seed = yaml::unsigned_integer(*sd, "a seed");

  ProfileLoader pl{opts, {}};
  if (auto m = top.get("machine")) {
    s.machine = m->is_map() ? pl.read_map(*m, /*is_file=*/false) : pl.load_named(*m);
  } else {
    // No machine: the shipped generic profile, so a bare scenario is reproducible.
    s.machine = pl.load_named(Val{&src, YAML::Node("default"), rv.mark, "machine"});
  }
  if (auto l = top.get("limits")) s.limits = read_limits(*l, s.machine);
  if (auto r = top.get("run")) s.run = read_run(*r);
  if (auto rs = top.get("resources")) s.resources = loader::read_resources(*rs);
  const loader::HoldingScope holding_scope(s.resources);
  s.workload = read_workload(top.require("workload", "arrival + task, or graph"), s.limits,
                             opts.open_task_cap);
  const auto bv = top.require("backend", "kind and its parameters");
  s.backend = read_backend(bv, effective_cores(s.machine, s.limits), s.machine.cores);
  if (auto t = top.get("tolerance")) s.tolerance = read_tolerance(*t);

  if (const int bound = s.backend.thread_bound(); bound > s.run.max_threads)
    thread_bound_key(bv).fail_section("backend " + std::string(to_string(s.backend.kind)) +
                                      " may run up to " + std::to_string(bound) +
                                      " threads, more than run.max_threads (" +
                                      std::to_string(s.run.max_threads) + ")");
  return s;
}

}  // namespace

Scenario load_scenario_text(const std::string& text, const std::string& display_name,
                            const LoadOptions& opts) {
  fs::path base = fs::path(display_name).parent_path();
  if (base.empty()) base = fs::current_path();
  Source src(display_name, base);
  YAML::Node root = parse_yaml(text, display_name);
  return read_scenario(root, src, opts);
}

Scenario load_scenario(const fs::path& file, const LoadOptions& opts) {
  std::string error;
  const auto text = read_input(file, kMaxScenarioFileBytes, error);
  if (!text)
    throw ScenarioError(file.string(), "",
                        error.rfind("no such file", 0) == 0 ? "no such scenario file"
                                                            : "cannot read the scenario: " + error);
  return load_scenario_text(*text, file.string(), opts);
}

}  // namespace poolsim
