// poolsim capacity FILE --target METRIC=VALUE: the highest arrival rate the
// scenario's backend sustains within the target (validate/capacity.hpp has
// the search); this file parses flags, reports progress and writes outputs.
#include <fmt/format.h>

#include <iostream>

#include "app/common.hpp"
#include "validate/capacity.hpp"
#include "validate/output.hpp"

namespace poolsim::app {
namespace {
struct CapacityFlags {
  CommonFlags common;
  std::string file, target;
  int replications = validate::kCapacityReplications;
  int jobs = 0;
};

int run_capacity(const CapacityFlags& f) {
  const auto target = validate::parse_target(f.target);
  const Scenario s = load_checked(f.file, f.common);
  validate::CapacityOptions opt;
  opt.replications = f.replications;
  opt.jobs = f.jobs;
  opt.on_point = [&](const validate::CapacityPoint& p) {
    log_line(f.common, fmt::format("capacity {}: {:.1f}/s -> {} {}", s.name, p.rate,
                                   validate::format_metric(target.metric, p.value),
                                   p.meets      ? "meets"
                                   : p.overload ? "overload"
                                                : "misses"));
  };
  const auto r = validate::find_capacity(s, target, opt);
  if (f.common.json != "-") std::cout << validate::capacity_text(r);
  if (!f.common.json.empty()) validate::write_json(f.common.json, validate::capacity_json(r));
  return kExitOk;
}
}  // namespace

void register_capacity(CLI::App& app, std::function<int()>& action) {
  auto f = std::make_shared<CapacityFlags>();
  auto* cmd =
      app.add_subcommand("capacity",
                         "The highest arrival rate the scenario's backend sustains within a target "
                         "(docs/cookbook.md)");
  cmd->add_option("FILE", f->file,
                  "Scenario YAML file with a poisson or periodic arrival (docs/scenarios.md)")
      ->required();
  cmd->add_option("--target", f->target,
                  "METRIC=VALUE, e.g. latency_p99=100ms, p99=100ms, cpu_utilization=80% "
                  "(names: poolsim metrics)")
      ->type_name("METRIC=VALUE")
      ->required();
  cmd->add_option("--replications", f->replications,
                  fmt::format("Seeds per simulated rate (seed, seed+1, ...; default {})",
                              validate::kCapacityReplications))
      ->check(CLI::PositiveNumber);
  cmd->add_option("--jobs,-j", f->jobs, "Simulations in parallel (default: this machine's CPUs)")
      ->check(CLI::NonNegativeNumber);
  add_common_flags(cmd, f->common);
  cmd->callback([f, &action] { action = [f] { return run_capacity(*f); }; });
}

}  // namespace poolsim::app
