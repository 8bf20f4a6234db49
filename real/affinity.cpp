// affinity.cpp: see affinity.hpp.
#include "real/affinity.hpp"

#include <sched.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace poolsim::real {

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  return cpus;
}

double thread_util() {
  std::ifstream f("/proc/thread-self/sched");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("se.avg.util_avg", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) return -1;
    return std::strtod(line.c_str() + colon + 1, nullptr) / 1024.0;
  }
  return -1;
}

}  // namespace poolsim::real
