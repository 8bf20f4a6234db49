// timer_pack.cpp: where a thread woken by its own timer runs when the timer
// fires on a busy CPU and the other CPU is idle (docs/validation.md,
// "tpt-poisson's involuntary switches": timer wakes packed onto the busy CPU).
// A load thread pinned to CPU 0 computes `load`% of every millisecond and
// sleeps the rest; a sleeper moves itself to CPU 0 (affinity {0}), widens
// its affinity to {0, 1} without moving, and sleeps 3 ms (clock_nanosleep,
// so its hrtimer is armed on CPU 0); after the wake it reads sched_getcpu().
// CPU 1 runs nothing of this process. Per load level: the share of wakes
// that ran on CPU 0, the fired CPU. The same shape as calibrate's
// wake_pack_util experiment, with the timer as the waker.
//   g++ -O2 -pthread -o /tmp/timer_pack bench/probes/timer_pack.cpp
//   /tmp/timer_pack [WAKES_PER_LEVEL [cv|over|spin]]   # default 60; cv: the comparison;
//       over: no CPU idle, CPU 0 overloaded; spin: 1 then 2 spinners on CPU 0, CPU 1 idle
//       or busy 20, 50, 80% of each millisecond
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <mutex>
#include <thread>
#include <vector>

namespace {

void set_cpus(bool cpu0, bool cpu1) {
  cpu_set_t s;
  CPU_ZERO(&s);
  if (cpu0) CPU_SET(0, &s);
  if (cpu1) CPU_SET(1, &s);
  pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

long now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000L + t.tv_nsec;
}

void sleep_until(long ns) {
  const timespec t{ns / 1000000000L, ns % 1000000000L};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, nullptr) != 0) {
  }
}

std::atomic<int> load_pct{0};
std::atomic<bool> stop{false};

// CPU 0: load_pct% of each millisecond spinning, the rest asleep.
void load_thread() {
  set_cpus(true, false);
  long next = now_ns();
  while (!stop.load(std::memory_order_relaxed)) {
    const long busy_until = next + 10000L * load_pct.load(std::memory_order_relaxed);
    while (now_ns() < busy_until) {
    }
    next += 1000000L;
    sleep_until(next);
  }
}

}  // namespace

// The comparison, as calibrate's wake_pack_util experiment: the waiter
// waits on CPU 1 (its previous CPU, left idle), a waker pinned to CPU 0
// signals it 3 ms later; the share of wakes that ran on the waker's CPU 0.
int cv_wakes(int wakes) {
  std::mutex mu;
  std::condition_variable cv;
  int seq = 0, seen = 0, on0 = 0;
  std::thread waker([&] {
    set_cpus(true, false);
    for (int i = 0; i < wakes; ++i) {
      sleep_until(now_ns() + 3000000L);
      std::lock_guard lk(mu);
      ++seq;
      cv.notify_one();
    }
  });
  for (int i = 0; i < wakes; ++i) {
    set_cpus(false, true);
    set_cpus(true, true);
    std::unique_lock lk(mu);
    cv.wait(lk, [&] { return seq > seen; });
    seen = seq;
    if (sched_getcpu() == 0) ++on0;
  }
  waker.join();
  return on0;
}

// `spinners` threads pinned to CPU 0 spinning, CPU 1 idle or busy part of
// each millisecond (100: throughout, so no CPU is idle): the sleeper's
// timer fires on CPU 0; where does it run, and how late (from its
// deadline)?
void spinner_wakes(int wakes, int spinners, int cpu1_pct = 0) {
  std::atomic<bool> done{false};
  std::vector<std::thread> spin;
  // CPU 1 busy cpu1_pct% of each millisecond (0: left idle throughout).
  if (cpu1_pct > 0)
    spin.emplace_back([&] {
      set_cpus(false, true);
      long next = now_ns();
      while (!done.load(std::memory_order_relaxed)) {
        while (now_ns() < next + 10000L * cpu1_pct) {
        }
        next += 1000000L;
        sleep_until(next);
      }
    });
  for (int i = 0; i < spinners; ++i)
    spin.emplace_back([&] {
      set_cpus(true, false);
      while (!done.load(std::memory_order_relaxed)) {
      }
    });
  std::vector<long> late0, late1;
  for (int i = 0; i < wakes; ++i) {
    set_cpus(true, false);
    set_cpus(true, true);
    const long due = now_ns() + 3000000L;
    sleep_until(due);
    const long ran = now_ns();
    (sched_getcpu() == 0 ? late0 : late1).push_back(ran - due);
  }
  done.store(true);
  for (auto& t : spin) t.join();
  const auto q = [](std::vector<long>& v, double p) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[static_cast<std::size_t>(p * (v.size() - 1))] / 1000.0;
  };
  std::printf(
      "CPU 1 busy %d%% of each ms, %d spinner(s) on CPU 0: %zu of %d timer wakes ran on the fired "
      "CPU 0 (late p50 "
      "%.0f p90 %.0f max %.0f us), %zu on CPU 1 (late p50 %.0f p90 %.0f max %.0f us)\n",
      cpu1_pct, spinners, late0.size(), wakes, q(late0, 0.5), q(late0, 0.9), q(late0, 1.0),
      late1.size(), q(late1, 0.5), q(late1, 0.9), q(late1, 1.0));
}

int main(int argc, char** argv) {
  const int wakes = argc > 1 ? std::atoi(argv[1]) : 60;
  const bool cv = argc > 2 && argv[2][0] == 'c';
  if (argc > 2 && argv[2][0] == 'o') {  // no CPU idle, CPU 0 overloaded
    spinner_wakes(wakes, 2, 100);
    return 0;
  }
  if (argc > 2 && argv[2][0] == 's') {
    for (const int pct : {0, 20, 50, 80}) {
      spinner_wakes(wakes, 1, pct);
      spinner_wakes(wakes, 2, pct);
    }
    return 0;
  }
  std::thread load(load_thread);
  for (const int pct : {0, 20, 40, 60, 80, 90}) {
    load_pct.store(pct);
    int on0 = 0;
    if (cv) {
      on0 = cv_wakes(wakes);
      std::printf(
          "load %2d%%: %3d of %d condition-variable wakes ran on the waker's CPU 0 (%.0f%%)\n", pct,
          on0, wakes, 100.0 * on0 / wakes);
      continue;
    }
    std::vector<long> late;
    for (int i = 0; i < wakes; ++i) {
      set_cpus(true, false);  // onto CPU 0
      set_cpus(true, true);   // free to move at the wake, without moving now
      const long due = now_ns() + 3000000L;
      sleep_until(due);
      const long ran = now_ns();
      if (sched_getcpu() == 0) {
        ++on0;
        late.push_back(ran - due);
      }
    }
    std::sort(late.begin(), late.end());
    const auto q = [&](double p) {
      return late.empty() ? 0.0 : late[static_cast<std::size_t>(p * (late.size() - 1))] / 1000.0;
    };
    std::printf(
        "load %2d%%: %3d of %d timer wakes ran on the fired CPU 0 (%.0f%%), late there p50 %.0f "
        "p90 %.0f max %.0f us\n",
        pct, on0, wakes, 100.0 * on0 / wakes, q(0.5), q(0.9), q(1.0));
  }
  stop.store(true);
  load.join();
  return 0;
}
