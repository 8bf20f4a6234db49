// affinity.hpp: the CPUs the calling thread may run on (its affinity mask:
// a cpuset limit or taskset applied), for the parts of the real side that
// place threads on them or count them, and the scheduler's view of it.
#pragma once

#include <vector>

namespace poolsim::real {

// The allowed CPUs in ascending order; empty if the mask cannot be read.
std::vector<int> allowed_cpus();

// The calling thread's PELT utilization as the kernel keeps it (0-1: the
// se.avg.util_avg line of /proc/thread-self/sched, out of 1024), or -1 on a
// kernel that does not show it.
double thread_util();

}  // namespace poolsim::real
