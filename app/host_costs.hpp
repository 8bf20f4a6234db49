// host_costs.hpp: the kernel costs of this machine's `host` profile in the
// form a trace import nets out of recorded bursts (trace::net_kernel_costs):
// a scenario that `record` or `import` writes names `machine: host`, and the
// simulator charges that profile's switch, wake-up and noise costs on top of
// the bursts, so the bursts must not hold them twice.
#pragma once

#include <optional>

#include "trace/program_model.hpp"

namespace poolsim::app {

// The `host` profile's costs, or nothing when this machine has no readable
// host profile yet (the import then keeps the bursts as recorded, and says so).
std::optional<trace::KernelCosts> host_kernel_costs();

}  // namespace poolsim::app
