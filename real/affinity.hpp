// affinity.hpp: the CPUs the calling thread may run on (its affinity mask:
// a cpuset limit or taskset applied), for the parts of the real side that
// place threads on them or count them.
#pragma once

#include <vector>

namespace poolsim::real {

// The allowed CPUs in ascending order; empty if the mask cannot be read.
std::vector<int> allowed_cpus();

}  // namespace poolsim::real
