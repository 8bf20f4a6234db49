// cgroup.hpp: the CPU-quota cgroup of one real repetition.
//
// Mechanism (Documentation/scheduler/sched-bwc.rst): the parent creates a
// child cgroup `poolsim-<parent pid>-<rep>` under its own cgroup of the cpu
// controller, writes the quota (cpus * period) and period, the forked child
// moves itself in (cgroup.procs) before its workload starts, and after the
// child exits the parent reads cpu.stat (throttled periods and time) and
// removes the directory. Detected at run time, preferred in this order:
//   v2: the unified hierarchy (cgroup2 mount) with the cpu controller in the
//       parent's cgroup.subtree_control (enabled here if possible):
//       cpu.max = "$QUOTA_US $PERIOD_US", cpu.max.burst = "$BURST_US",
//       cpu.stat nr_throttled/throttled_usec, nr_bursts/burst_usec;
//   v1: a cgroup mount with the cpu controller: cpu.cfs_period_us,
//       cpu.cfs_quota_us, cpu.cfs_burst_us, cpu.stat nr_throttled/
//       throttled_time (ns), nr_bursts/burst_time (ns).
// The burst (limits.burst) is written after the quota (the kernel wants
// burst <= quota), only when it is not 0; a kernel without the file (CFS
// burst came in Linux 5.14, commit f4183717b370) is refused with a
// MachineRefused that says so. Both versions' cpu.stat count the same
// things, summed over CPUs (cpu_cfs_stat_show, cpu_extra_stat_show).
// Neither writable -> MachineRefused with what was tried.
// CPU weight (limits.shares / limits.weight, and a noisy neighbour's group,
// limits.neighbour): v1 cpu.shares, v2 cpu.weight = round(shares * 100 /
// 1024) (the kernel's own mapping, sched_weight_from_cgroup, so both
// versions give the group the same tg->shares). A group for a weight alone
// has no quota; the neighbour's group is a sibling of the scenario's,
// `poolsim-<pid>-<rep>-neighbour`.
// Cleanup guarantees: the destructor removes the directory; a SIGINT/SIGTERM
// handler installed by the runner kills the child and removes it (see
// runner.cpp); the child dies with the parent (PR_SET_PDEATHSIG); and
// remove_stale_cgroups() deletes `poolsim-<pid>-*` groups whose pid is dead
// at the start of the next run.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/units.hpp"

namespace poolsim::real {

struct CpuStat {
  std::int64_t nr_periods = 0;
  std::int64_t nr_throttled = 0;
  Duration throttled_time{};
  std::int64_t nr_bursts = 0;
  Duration burst_time{};
};

class CpuCgroup {
 public:
  // Creates and configures the group; throws MachineRefused if no cgroup
  // version lets us set a CPU quota here.
  static CpuCgroup create(double cpus, Duration period, int rep, Duration burst = Duration{0});
  // The same under explicit parent directories (v2 and v1 candidates;
  // nullopt = that version is not mounted). create() passes the detected
  // ones; tests pass fake hierarchies to check each version's files.
  static CpuCgroup create_under(const std::optional<std::string>& v2,
                                const std::optional<std::string>& v1, double cpus, Duration period,
                                int rep, Duration burst = Duration{0});
  // A group with a CPU weight and no quota (shares in cgroup v1 units);
  // `tag` is appended to the group's name. Throws MachineRefused.
  static CpuCgroup create_weighted(int shares, int rep, const std::string& tag = {});
  static CpuCgroup create_weighted_under(const std::optional<std::string>& v2,
                                         const std::optional<std::string>& v1, int shares, int rep,
                                         const std::string& tag = {});
  // Writes the group's CPU weight (v1 cpu.shares, v2 cpu.weight); throws
  // MachineRefused when the kernel refuses it.
  void set_shares(int shares) const;
  CpuCgroup(CpuCgroup&& o) noexcept;
  CpuCgroup& operator=(CpuCgroup&&) = delete;
  CpuCgroup(const CpuCgroup&) = delete;
  ~CpuCgroup();

  const std::string& path() const { return path_; }
  int version() const { return version_; }
  // Moves the calling process into the group (call in the child, before it
  // starts any thread). Returns an error message, empty on success.
  std::string join_self() const;
  // v1 only: the file through which a thread of the joined process leaves the
  // group for its parent (the parent group's `tasks`: v1 places threads one by
  // one). The runner's sampler thread leaves so that the harness does not
  // spend the scenario's quota. Empty on v2, where a domain group keeps all
  // of a process's threads.
  std::string harness_exit_file() const;
  CpuStat read_stat() const;
  // rmdir, retried briefly while the kernel finishes moving the dead child
  // out. Returns true when the directory is gone.
  bool remove();

 private:
  CpuCgroup(std::string path, int version) : path_(std::move(path)), version_(version) {}
  // The group `name` under the v2 parent (its cpu controller enabled in the
  // parent's subtree_control) or else the v1 one, set up by `configure` (an
  // error text, empty on success; a failure falls through to v1). Throws
  // MachineRefused saying it cannot apply `what`, with every place tried.
  static CpuCgroup create_group(const std::optional<std::string>& v2,
                                const std::optional<std::string>& v1, const std::string& name,
                                const std::function<std::string(const CpuCgroup&)>& configure,
                                const std::string& what, const std::string& drop);
  std::string path_;
  int version_ = 0;
};

// Directories under which poolsim creates groups on this machine (v2 and v1
// candidates that exist), for stale cleanup and for tests.
std::vector<std::string> cgroup_parent_dirs();
// The `poolsim-*` groups present now under cgroup_parent_dirs().
std::vector<std::string> list_poolsim_cgroups();
// Removes `poolsim-<pid>-<rep>` groups whose pid no longer exists; returns
// how many were removed.
int remove_stale_cgroups();

}  // namespace poolsim::real
