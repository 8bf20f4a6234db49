// usable_cpus.hpp: how many CPUs this process may actually use, for picking a
// worker count (sweep's -j default, MPI ranks' local parallelism).
//
// Mechanism: the smaller of
//   - the affinity mask (sched_getaffinity: taskset, cpusets, `docker --cpuset-cpus`);
//   - the CPU quota of this process's cgroup and of every ancestor up to the
//     mount root, rounded up: cgroup v2 `cpu.max` ("150000 100000" = 1.5 CPUs
//     -> 2 workers; "max ..." = no limit), cgroup v1 `cpu.cfs_quota_us` /
//     `cpu.cfs_period_us` (-1 = no limit) in the cpu controller's hierarchy.
// The cgroup is read from /proc/self/cgroup ("0::/path" for v2,
// "N:cpu,cpuacct:/path" for v1). Inside a container the path often names the
// host's view of the cgroup while the container mounts its own cgroup at the
// root; a path that does not exist under the mount is then read at the root.
// Never std::thread::hardware_concurrency(): a 2-CPU container on a 64-CPU
// host would start 64 workers (the container trap of configs/scenarios/).
//
// Left out: cpu.max.burst / cfs_burst_us (a burst is not sustained
// parallelism), cpu.weight / cpu.shares (relative, not a limit), and CPU
// hotplug after the call.
#pragma once

#include <filesystem>
#include <optional>

namespace poolsim::validate {

// Where usable_cpus reads: the /proc/self/cgroup text's file and the cgroup
// mount root; tests point these at fake trees.
struct CpuLimitSources {
  std::filesystem::path proc_self_cgroup = "/proc/self/cgroup";
  std::filesystem::path cgroup_root = "/sys/fs/cgroup";
};

// The quota of the cgroup hierarchy in CPUs (1.5 for "150000 100000"), the
// smallest along the path; std::nullopt when no level sets one.
std::optional<double> cgroup_cpu_quota(const CpuLimitSources& src = {});

// CPUs in this thread's affinity mask (at least 1).
unsigned affinity_cpus();

// min(affinity, ceil(quota)), at least 1.
unsigned usable_cpus(const CpuLimitSources& src = {});
// The same with the affinity count given (tests).
unsigned usable_cpus(unsigned affinity, const CpuLimitSources& src);

}  // namespace poolsim::validate
