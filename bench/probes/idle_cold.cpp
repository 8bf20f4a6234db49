// idle_cold.cpp: what a CPU's idling does to the caches the guest left
// there (docs/calibration.md, `idle_refill`; docs/simulator.md, "A CPU's
// caches after it idled"). Pinned to CPU 0, the rest of the machine quiet:
// sleeps of 0.2, 1, 5, 10, 20 and 50 ms (80 of each, 40 from 20 ms on);
// after each, the thread's CPU across the sleep call, a loop on registers
// (3,000 iterations), a read of one byte per cache line of a WS KiB buffer
// it wrote before, and the same read again; medians per length.
//   g++ -O2 -o /tmp/idle_cold bench/probes/idle_cold.cpp
//   /tmp/idle_cold 256
// 2026-12-05, 20:35-20:40 UTC on this VM (PVM guest, 2 vCPUs), three runs:
// the register loop 1.27-1.29 us after 0.2-1 ms and 1.43-1.53 us after 20-50
// ms; the 256 KiB read 2.4-2.5 us after 0.2-1 ms, 3.7-6.7 after 5 ms, 5.0-9.2
// after 10 ms, 8.4-11.8 after 20 ms, 11.7-11.9 after 50 ms (1.6 us read
// again at once); 1 MiB: 11.8-12.2 us after 0.2-1 ms, 43 us after 50 ms
// (17 again). The sleep call's CPU: 10.5-15.2 us at 1 ms, 13.5-18.0 at 0.2,
// 14.0-19.6 at 5, 18.8-31.8 at 10, 28.8-39.0 at 20, 43.9-50.2 at 50 ms. So
// the data the guest left in the caches is gone after 20-50 ms of idling
// (the host runs other work on the halted vCPU's core), and what runs first
// after the idle pays for refilling it.
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

long now_ns(clockid_t c) {
  timespec t{};
  clock_gettime(c, &t);
  return t.tv_sec * 1000000000L + t.tv_nsec;
}

char buffer[1 << 24];

double median_us(std::vector<long> v) {
  std::sort(v.begin(), v.end());
  return static_cast<double>(v[v.size() / 2]) / 1000.0;
}

}  // namespace

int main(int argc, char** argv) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(0, &set);
  sched_setaffinity(0, sizeof set, &set);
  const std::size_t ws = std::min<std::size_t>(
      sizeof buffer, static_cast<std::size_t>(argc > 1 ? std::atoi(argv[1]) : 256) * 1024);
  std::memset(buffer, 1, ws);
  for (const double ms : {0.2, 1.0, 5.0, 10.0, 20.0, 50.0}) {
    std::vector<long> sleep_cpu, reg, first, again;
    const int n = ms >= 20 ? 40 : 80;
    for (int i = 0; i < n; ++i) {
      const long c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
      timespec d{0, static_cast<long>(ms * 1e6)};
      clock_nanosleep(CLOCK_MONOTONIC, 0, &d, nullptr);
      const long c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
      const long a = now_ns(CLOCK_MONOTONIC);
      volatile long x = 0;
      for (int k = 0; k < 3000; ++k) x = x + k * k;
      const long b = now_ns(CLOCK_MONOTONIC);
      long sum = 0;
      for (std::size_t o = 0; o < ws; o += 64) sum += buffer[o];
      const long c = now_ns(CLOCK_MONOTONIC);
      for (std::size_t o = 0; o < ws; o += 64) sum += buffer[o];
      const long e = now_ns(CLOCK_MONOTONIC);
      asm volatile("" : : "r"(sum));
      sleep_cpu.push_back(c1 - c0);
      reg.push_back(b - a);
      first.push_back(c - b);
      again.push_back(e - c);
    }
    std::printf(
        "sleep %5.1f ms: sleep call CPU %6.1f us, register loop %5.2f us, read %zu KiB %7.2f us, "
        "again %7.2f us\n",
        ms, median_us(sleep_cpu), median_us(reg), ws / 1024, median_us(first), median_us(again));
  }
  return 0;
}
