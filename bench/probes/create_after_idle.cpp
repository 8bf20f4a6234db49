// create_after_idle.cpp: what a CPU's idling does to the next thread
// creation on it (docs/simulator.md, "a CPU's caches after it idled";
// docs/validation.md, "the quickstart's first completion and queue
// wait"). Pinned to one CPU (argument, default 0), the rest of the
// machine quiet: 60 pthread_create + pthread_join pairs back to back (the
// thread returns at once; glibc reuses its cached stack), then for sleeps
// of 1, 9, 27 and 50 ms, 60 times: sleep, one pair, and a second pair at
// once; wall-time medians (p25-p75).
//   g++ -O2 -pthread -o /tmp/create_after_idle bench/probes/create_after_idle.cpp
//   /tmp/create_after_idle 0
// 2026-12-06, 03:00-03:20 UTC on this VM (PVM guest, 2 vCPUs), CPU 0 and
// CPU 1: back to back 25-33 us a pair; right after the sleep 28-44 us
// after 1 ms, 43-123 us after 9 ms, 84-134 us after 27 ms, 108-117 us
// after 50 ms; the second pair at once is back at 26-35 us. So a creation
// that follows a long idle pays 60-110 us of refill, about twice the
// `idle_refill` the model charges the first thread after a full eviction
// (44 us in that hour's profile, measured on a sleeper's own path): a
// creation touches more of the kernel's memory (task and stack slabs, page
// tables) than a sleep's wake path.
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

long now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000L + t.tv_nsec;
}

void* body(void*) { return nullptr; }

long create_join() {
  const long t0 = now_ns();
  pthread_t t;
  pthread_create(&t, nullptr, body, nullptr);
  pthread_join(t, nullptr);
  return now_ns() - t0;
}

// Median and quartiles in microseconds.
void report(const char* what, std::vector<long> v) {
  std::sort(v.begin(), v.end());
  std::printf("  %-12s median %6.1f us (p25 %6.1f, p75 %6.1f)\n", what,
              static_cast<double>(v[v.size() / 2]) / 1000.0,
              static_cast<double>(v[v.size() / 4]) / 1000.0,
              static_cast<double>(v[v.size() * 3 / 4]) / 1000.0);
}

}  // namespace

int main(int argc, char** argv) {
  const int cpu = argc > 1 ? std::atoi(argv[1]) : 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof set, &set);
  constexpr int kRounds = 60;
  for (int i = 0; i < 10; ++i) create_join();  // the stack cache and the code paths warm
  std::vector<long> warm;
  for (int i = 0; i < kRounds; ++i) warm.push_back(create_join());
  std::printf("CPU %d\n", cpu);
  report("back to back", warm);
  for (const double ms : {1.0, 9.0, 27.0, 50.0}) {
    std::vector<long> first, second;
    for (int i = 0; i < kRounds; ++i) {
      timespec d{0, static_cast<long>(ms * 1e6)};
      clock_nanosleep(CLOCK_MONOTONIC, 0, &d, nullptr);
      first.push_back(create_join());
      second.push_back(create_join());
    }
    std::printf("after %4.0f ms of idling:\n", ms);
    report("first pair", first);
    report("second pair", second);
  }
  return 0;
}
