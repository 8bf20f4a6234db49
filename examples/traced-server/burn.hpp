// burn.hpp: the CPU work of the example programs (traced_server.cpp,
// pipe_pool.cpp): a request's CPU burst is an amount of the thread's own CPU
// time, so it costs the same CPU whatever the machine's load.
#pragma once

#include <time.h>

#include <cstdint>

namespace example {

inline std::int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Burns `us` microseconds of this thread's CPU time.
inline void burn(double us) {
  const std::int64_t until = thread_cpu_ns() + static_cast<std::int64_t>(us * 1000);
  volatile std::uint64_t x = 1;
  while (thread_cpu_ns() < until)
    for (int i = 0; i < 2000; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
}

}  // namespace example
