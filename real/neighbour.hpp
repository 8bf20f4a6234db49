// neighbour.hpp: a noisy neighbour for one real repetition (limits.neighbour).
//
// Mechanism: the parent forks a process that moves itself into the
// neighbour's cgroup (a sibling of the scenario's, with its own cpu.shares /
// cpu.weight: CpuCgroup::create_weighted), starts `threads` - 1 more threads
// and spins on every one of them (CPU-bound, never blocking) until it is
// killed. The parent waits for its "joined" byte before it starts the
// scenario, and kills and reaps it after the scenario's child has exited.
// Cleanup guarantees: the destructor kills and reaps it; it dies with the
// parent (PR_SET_PDEATHSIG); the runner's signal handler kills it
// (NeighbourProcess::pid() is published for that) and removes its group.
#pragma once

#include <sys/types.h>

#include <vector>

#include "real/cgroup.hpp"

namespace poolsim::real {

class NeighbourProcess {
 public:
  // Forks the neighbour into `group` with `threads` spinning threads, thread
  // i pinned to cpus[i mod n] (unpinned if `cpus` is empty); throws
  // MachineRefused if it cannot join the group or start its threads.
  NeighbourProcess(const CpuCgroup& group, int threads, const std::vector<int>& cpus);
  NeighbourProcess(const NeighbourProcess&) = delete;
  NeighbourProcess& operator=(const NeighbourProcess&) = delete;
  ~NeighbourProcess() { stop(); }

  pid_t pid() const { return pid_; }
  // SIGKILL and reap (idempotent).
  void stop();

 private:
  pid_t pid_ = -1;
};

}  // namespace poolsim::real
