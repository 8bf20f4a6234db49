// idle_wake.cpp: how long a futex wake takes to run its waiter on a CPU
// that idled, by how long it idled (docs/validation.md, "What the remaining
// misses are made of": the profile's idle_exit was then taken after 5 ms of
// idle; since 2026-12-07 15:15 UTC after 1 ms, with idle_exit_late for
// longer idles, docs/simulator.md).
// A waiter pinned to CPU 1 blocks in FUTEX_WAIT; the waker, pinned to CPU
// 0, spins for the idle length (CPU 1 has nothing else to run), then wakes
// it; the time from just before FUTEX_WAKE to the waiter's first clock read
// after it returns, N times per length, quartiles.
//   g++ -O2 -pthread -o /tmp/idle_wake bench/probes/idle_wake.cpp
//   /tmp/idle_wake [N]   # N wakes per idle length, default 40
// 2026-12-07 13:55-13:58 UTC on this VM, medians: 19-20 us after 20-300 us
// of idle, 20-25 us after 1 ms, 27-34 us after 2.5-20 ms; one run two
// minutes earlier read 87.5 us after 5 ms (the host's state moves it);
// at 14:25: 20-21 us up to 300 us, 22 us after 1 ms, 31 after 2.5 ms, 48
// after 5 ms, 55-59 after 8-12 ms, 95 after 20 ms.
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <thread>
#include <vector>

static void pin(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}
static long now_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000L + t.tv_nsec;
}
static std::atomic<int> word{0};
static std::atomic<long> woke{0};

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 40;
  const long idles[] = {20000,   50000,   100000,  300000,   1000000,
                        2500000, 5000000, 8000000, 12000000, 20000000};
  std::thread waiter([] {
    pin(1);
    int seen = 0;  // the last value it was woken for: a change it missed still counts
    for (;;) {
      while (word.load() == seen)
        syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, seen, nullptr, nullptr, 0);
      seen = word.load();
      if (seen < 0) break;
      woke.store(now_ns());
    }
  });
  pin(0);
  for (long idle : idles) {
    std::vector<double> us;
    for (int i = 0; i < n; ++i) {
      const long t0 = now_ns();
      while (now_ns() - t0 < idle) {
      }
      woke.store(0);
      const long sent = now_ns();
      word.fetch_add(1);
      syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
      while (woke.load() == 0) {
      }
      us.push_back((woke.load() - sent) / 1000.0);
    }
    std::sort(us.begin(), us.end());
    printf("idle %6.0f us: wake p25 %.1f p50 %.1f p75 %.1f us\n", idle / 1000.0, us[n / 4],
           us[n / 2], us[3 * n / 4]);
  }
  word.store(-1);
  syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
  waiter.join();
}
