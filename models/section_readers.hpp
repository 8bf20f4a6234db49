// section_readers.hpp: the readers of a scenario's sections, one file each.
//
// Each reader takes a located value (yaml_reader.hpp: node, key path, mark),
// checks it completely and returns the spec, or throws ScenarioError at the
// offending key. They never default silently and never allocate from a count
// before it is checked against its cap (models/scenario.hpp kMax*).
//   distribution_reader.cpp  durations and distribution maps (and empirical
//                            sample files)
//   limits_reader.cpp        limits: (CPU quota, period, burst, cpuset)
//   run_reader.cpp           run: (reps, warmup, timeout, max_threads, speed)
//   workload_reader.cpp      workload: (arrival, task or classes) and its size
//   graph_reader.cpp         workload.graph: (nodes with after:, fork_join)
//   backend_reader.cpp       backend: (kind, parameters, thread counts)
//   tolerance_reader.cpp     tolerance: (default and per-metric fractions)
// The order they run in, and the cross-checks between sections, are in
// scenario_loader.cpp.
#pragma once

#include "models/machine.hpp"
#include "models/scenario.hpp"
#include "models/yaml_reader.hpp"

namespace poolsim::loader {

Distribution read_distribution(const yaml::Val& v);
// A task: a list of phases (cpu, wait, lock).
TaskSpec read_task(const yaml::Val& v);
// The CPUs of a cpuset must be on machine `m`.
Limits read_limits(const yaml::Val& v, const MachineProfile& m);
RunOptions read_run(const yaml::Val& v);
GraphSpec read_graph(const yaml::Val& v);
// The workload, checked against the caps with the CPU quota of `limits`.
// open_task_cap: LoadOptions::open_task_cap.
WorkloadSpec read_workload(const yaml::Val& v, const Limits& limits, std::int64_t open_task_cap);
// Thread counts such as "2*cores" resolve with `cores` (the machine's
// effective cores under the limits); host_cpus with `host_cpus`.
BackendSpec read_backend(const yaml::Val& v, int cores, int host_cpus);
Tolerance read_tolerance(const yaml::Val& v);

}  // namespace poolsim::loader
