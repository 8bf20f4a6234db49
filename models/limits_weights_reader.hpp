// limits_weights_reader.hpp: the CPU-weight keys of `limits:` (loader
// internals): the scenario group's limits.shares / limits.weight and a noisy
// neighbour, limits.neighbour {threads, shares | weight}.
//
// cgroup v1 cpu.shares is the kernel's group weight (tg->shares, 2..262144,
// default 1024; a Kubernetes CPU request of 1 CPU is 1024 shares). cgroup v2
// cpu.weight (1..10000, default 100) maps to it as weight * 1024 / 100
// (sched_weight_from_cgroup, kernel/sched/sched.h); both keys are kept as
// shares. At most one of the two may be given per group.
#pragma once

#include "models/scenario.hpp"
#include "models/yaml_reader.hpp"

namespace poolsim::yaml {

// Reads limits.shares, limits.weight and limits.neighbour from `r` into `l`;
// throws ScenarioError (located) on a bad value.
void read_weights(const MapReader& r, Limits& l);

}  // namespace poolsim::yaml
