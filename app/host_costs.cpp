// host_costs.cpp: see host_costs.hpp.
#include "app/host_costs.hpp"

#include <filesystem>

#include "models/scenario_error.hpp"
#include "models/scenario_loader.hpp"
#include "models/scenario_paths.hpp"
#include "sim/noise.hpp"

namespace poolsim::app {

std::optional<trace::KernelCosts> host_kernel_costs() {
  std::error_code ec;
  if (!std::filesystem::exists(host_profile_path(), ec)) return std::nullopt;
  MachineProfile p;
  try {
    p = load_machine_profile("host");
  } catch (const ScenarioError&) {
    return std::nullopt;
  }
  trace::KernelCosts c;
  c.profile = "host";
  // What the kernel model charges (docs/simulator.md): the incoming thread
  // pays switch_cost + cache_refill per dispatch and migration_cost on
  // another CPU; the waker pays wake_cost, plus wake_ipi for another CPU.
  c.dispatch = (p.switch_cost + p.cache_refill).count();
  c.migration = p.migration_cost.count();
  c.wake = p.wake_cost.count();
  c.ipi = p.wake_ipi.count();
  c.noise_share = sim::noise_share(p);
  // Every wait phase ends timer_slack after its duration (a timed sleep).
  c.timer_slack = p.timer_slack.count();
  return c;
}

}  // namespace poolsim::app
