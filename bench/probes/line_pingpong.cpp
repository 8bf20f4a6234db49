// line_pingpong.cpp: one cache line handed between CPU 0 and CPU 1, one
// way, in nanoseconds (docs/validation.md, "What the remaining misses are
// made of": the host moves the profile's cross-CPU fields). Two threads
// pinned to the two CPUs take turns writing one atomic word, 200,000 round
// trips per round, a round every 2 s.
//   g++ -O2 -pthread -o /tmp/line_pingpong bench/probes/line_pingpong.cpp
//   /tmp/line_pingpong [ROUNDS]   # default 8
// 2026-12-07 on this VM: 43-55 ns one way at 13:45 UTC, 192-208 ns at
// 14:26 (the calibration of 13:40 had queue_handover_remote 12 ns, the one
// of 12:55 220 ns): the host moves the two vCPUs nearer and apart.
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

static void pin(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}
alignas(64) static std::atomic<long> flag{0};

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 8;
  constexpr long kTrips = 200000;
  for (int r = 0; r < rounds; ++r) {
    flag.store(0);
    std::thread other([] {
      pin(1);
      for (long i = 0; i < kTrips; ++i) {
        while (flag.load(std::memory_order_acquire) != 2 * i + 1) {
        }
        flag.store(2 * i + 2, std::memory_order_release);
      }
    });
    pin(0);
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < kTrips; ++i) {
      flag.store(2 * i + 1, std::memory_order_release);
      while (flag.load(std::memory_order_acquire) != 2 * i + 2) {
      }
    }
    const auto t1 = std::chrono::steady_clock::now();
    other.join();
    printf("round %d: %.1f ns one way\n", r,
           std::chrono::duration<double, std::nano>(t1 - t0).count() / (2.0 * kTrips));
    std::this_thread::sleep_for(std::chrono::seconds(2));
  }
}
