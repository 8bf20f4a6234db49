// sleeper_preempt.cpp: how late a sleeper runs when its timer fires on a CPU
// that CPU-bound threads hold (docs/validation.md, "A sleeper's wake on a
// busy CPU, probed"). Everything is pinned to CPU 0, so placement plays no
// part: only the wake-up preemption (check_preempt_wakeup_fair, pick_eevdf).
//   g++ -O2 -pthread -o /tmp/sleeper_preempt bench/probes/sleeper_preempt.cpp
//   /tmp/sleeper_preempt spinners K [SLEEPS [RATE]]
//       K spinners and a sleeper to absolute Poisson deadlines (RATE/s,
//       default 600; 600 sleeps), 3 us of work after each wake
//   /tmp/sleeper_preempt lag0 MS [SLEEPS]
//       a spinner runs the first 10 ms of every 30 ms; the sleeper blocks
//       alone at 15 ms (its lag 0, not delayed) and wakes MS ms into the
//       spinner's next run, beside it alone
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

namespace {

long now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000L + t.tv_nsec;
}

void pin0() {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(0, &s);
  pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

void sleep_until(long ns) {
  const timespec t{ns / 1000000000L, ns % 1000000000L};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, nullptr) != 0) {
  }
}

void work() {
  volatile long x = 0;
  for (int j = 0; j < 3000; ++j) x = x + j;
}

void report(const char* what, std::vector<long> late) {
  std::sort(late.begin(), late.end());
  const auto q = [&](double p) {
    return late[static_cast<std::size_t>(p * (late.size() - 1))] / 1000.0;
  };
  const long over = std::count_if(late.begin(), late.end(), [](long v) { return v > 500000; });
  std::printf("%s: late p10 %.0f p50 %.0f p90 %.0f p99 %.0f max %.0f us, %ld of %zu over 0.5 ms\n",
              what, q(0.1), q(0.5), q(0.9), q(0.99), q(1.0), over, late.size());
}

void spinners(int k, int sleeps, double rate) {
  std::atomic<bool> done{false};
  std::vector<std::thread> spin;
  for (int i = 0; i < k; ++i)
    spin.emplace_back([&] {
      pin0();
      while (!done.load(std::memory_order_relaxed)) {
      }
    });
  pin0();
  std::mt19937_64 g(1);
  std::exponential_distribution<double> gap(rate);
  std::vector<long> late;
  long due = now_ns() + 10000000L;
  for (int i = 0; i < sleeps; ++i) {
    due += static_cast<long>(gap(g) * 1e9);
    sleep_until(due);
    late.push_back(now_ns() - due);
    work();
  }
  done.store(true);
  for (auto& t : spin) t.join();
  char what[96];
  std::snprintf(what, sizeof what, "%d spinner(s) on CPU 0 with the sleeper, %.0f/s", k, rate);
  report(what, late);
}

void lag0(long wake_ms, int sleeps) {
  constexpr long kPeriod = 30000000L;
  const long t0 = now_ns() + 20000000L;
  std::atomic<bool> done{false};
  std::thread spin([&] {
    pin0();
    for (long k = 0; !done.load(); ++k) {
      const long start = t0 + k * kPeriod;
      sleep_until(start);
      while (now_ns() < start + 10000000L) {
      }
    }
  });
  pin0();
  std::vector<long> late;
  for (long k = 0; k < sleeps; ++k) {
    const long due = t0 + k * kPeriod + wake_ms * 1000000L;
    sleep_until(due);
    late.push_back(now_ns() - due);
    sleep_until(t0 + k * kPeriod + 15000000L);  // the spinner asleep: alone
    work();
  }
  done.store(true);
  spin.join();
  char what[96];
  std::snprintf(what, sizeof what, "lag-0 sleeper onto a lone spinner %ld ms into its run",
                wake_ms);
  report(what, late);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2 && std::strcmp(argv[1], "spinners") == 0) {
    spinners(std::atoi(argv[2]), argc > 3 ? std::atoi(argv[3]) : 600,
             argc > 4 ? std::atof(argv[4]) : 600.0);
    return 0;
  }
  if (argc > 2 && std::strcmp(argv[1], "lag0") == 0) {
    lag0(std::atol(argv[2]), argc > 3 ? std::atoi(argv[3]) : 150);
    return 0;
  }
  std::fprintf(stderr, "usage: %s spinners K [SLEEPS [RATE]] | lag0 MS [SLEEPS]\n", argv[0]);
  return 2;
}
