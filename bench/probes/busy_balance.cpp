// busy_balance.cpp: how does this kernel even out two busy CPUs' queues?
// (docs/simulator.md, "periodic balancing of busy CPUs"). A spinner pinned
// to CPU 1 keeps that CPU busy (never idle, so no idle balance runs there);
// N spinners are made pinned to CPU 0, and at T0 all N are allowed both
// CPUs. A changed affinity that still holds the CPU moves nothing, so only
// CPU 1's periodic balance (sched_balance_rq from the tick) can pull them.
// Each spinner reads its CPU (sched_getcpu) in a loop and notes when it
// first finds itself on CPU 1; the program prints, per distinct moment of
// arrival (within 1 ms of each other: one balance), the time after T0 and
// how many arrived, then how many stayed on CPU 0 at the end.
//   g++ -O2 -pthread -o /tmp/busy_balance bench/probes/busy_balance.cpp
//   /tmp/busy_balance 30 400     # 30 spinners, watch 400 ms
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

long long now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

void allow(pthread_t th, std::initializer_list<int> cpus) {
  cpu_set_t s;
  CPU_ZERO(&s);
  for (int c : cpus) CPU_SET(c, &s);
  pthread_setaffinity_np(th, sizeof s, &s);
}

std::atomic<bool> g_stop{false};
std::atomic<long long> g_t0{0};

struct Spinner {
  long long arrived = -1;  // ns after T0 when first seen on CPU 1
  std::thread th;
};

void spin(Spinner* me) {
  while (!g_stop.load(std::memory_order_relaxed)) {
    if (me->arrived < 0 && sched_getcpu() == 1) {
      const long long t0 = g_t0.load(std::memory_order_relaxed);
      if (t0 > 0) me->arrived = now_ns() - t0;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 30;
  const int watch_ms = argc > 2 ? std::atoi(argv[2]) : 400;
  allow(pthread_self(), {0});  // the threads made here inherit CPU 0
  std::thread hog([] {
    while (!g_stop.load(std::memory_order_relaxed)) {
    }
  });
  allow(hog.native_handle(), {1});
  std::vector<Spinner> s(static_cast<std::size_t>(n));
  for (auto& x : s) x.th = std::thread(spin, &x);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // settle on CPU 0
  g_t0.store(now_ns());
  for (auto& x : s) allow(x.th.native_handle(), {0, 1});
  std::this_thread::sleep_for(std::chrono::milliseconds(watch_ms));
  g_stop.store(true);
  hog.join();
  std::vector<long long> at;
  int stayed = 0;
  for (auto& x : s) {
    x.th.join();
    if (x.arrived < 0)
      ++stayed;
    else
      at.push_back(x.arrived);
  }
  std::sort(at.begin(), at.end());
  for (std::size_t i = 0; i < at.size();) {
    std::size_t j = i;
    while (j + 1 < at.size() && at[j + 1] - at[j] < 1000000) ++j;
    std::printf("%.1f ms: %zu\n", static_cast<double>(at[i]) / 1e6, j - i + 1);
    i = j + 1;
  }
  std::printf("never on cpu 1: %d of %d\n", stayed, n);
}
