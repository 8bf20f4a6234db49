// scenario_resources.hpp: the loader's reader of bounded resources (loader
// internals, used by scenario_loader.cpp only).
//
// `resources: {db: {permits: 10}}` at the top level declares them;
// `holding: db` on a phase ({wait: 30ms, holding: db}) names one. Names are
// resolved while the workload is read: read_scenario() reads `resources`
// first and keeps a HoldingScope alive around read_workload(), and
// read_holding() resolves a phase's name against the scope's table (a phase
// deep inside a graph or a class is read far from the top level, and the
// name's own location is what an error should point at). Outside a scope
// (no scenario being read) no resource is declared.
// Errors (ScenarioError, exit 2, file:line:col): an unknown resource (with a
// did-you-mean), `holding` without any `resources`, permits outside
// 1..kMaxPermits or not an integer, a name that is not lower-case letters,
// digits, '-' and '_', more than kMaxResources names, unknown keys.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/scenario.hpp"
#include "models/yaml_reader.hpp"

namespace poolsim::loader {

std::vector<ResourceSpec> read_resources(const yaml::Val& v);

// Makes `specs` the table `holding:` names resolve against, for its lifetime
// (one scenario read on this thread; scopes do not nest).
class HoldingScope {
 public:
  explicit HoldingScope(const std::vector<ResourceSpec>& specs);
  ~HoldingScope();
  HoldingScope(const HoldingScope&) = delete;
  HoldingScope& operator=(const HoldingScope&) = delete;
};

// The phase's `holding:` as an index into the scope's resources, or none.
std::optional<std::uint16_t> read_holding(const yaml::MapReader& phase);
// The phase's keys other than `holding` (its kind: cpu, wait or lock).
std::vector<std::string> phase_kind_keys(const yaml::MapReader& phase);
// Sets the holding of whichever kind of phase p is.
void set_holding(PhaseSpec& p, std::optional<std::uint16_t> holding);

}  // namespace poolsim::loader
