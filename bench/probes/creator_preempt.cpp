// creator_preempt.cpp: how often a thread that creates threads back to back
// is switched out, and whether its task group decides it
// (docs/validation.md, "Thread churn in a task group"). The creator is
// pinned to CPU 0 (its threads inherit it) and creates N detached threads
// (256 KiB stacks) with GAP_NS of its own CPU between creations; each
// thread computes RUN_NS and returns. LOAD 1 adds a thread of the same
// process pinned to CPU 1 that computes 2 ms every 10 ms, so that the
// process's task group (its autogroup or cgroup) has load on another CPU
// and its weight on CPU 0 (calc_group_shares) moves with every enqueue
// there; LOAD 0 leaves CPU 1 to the rest of the machine. Prints the
// creator's CPU time per creation, the wall time until every thread is
// done, its involuntary switches (getrusage RUSAGE_THREAD) right after a
// creation and elsewhere, and how many creations came between two
// switches (count:times, the common ones).
//   g++ -O2 -pthread -std=c++20 -o /tmp/creator_preempt bench/probes/creator_preempt.cpp
//   setsid -w /tmp/creator_preempt N GAP_NS RUN_NS LOAD
// (setsid: a fresh autogroup, with no load of this session's other
// processes on CPU 1.)
// 2026-12-07 on this VM (PVM guest, Linux 6.18.44, 2 vCPUs, autogroup on),
// 3,000 threads of 5 us, gap 0: see docs/validation.md for the runs. With
// load on CPU 1 the creator was switched out after every second creation
// (2:1290 of 1,310 switches) or third; without it, or with
// kernel.sched_autogroup_enabled=0 in a fresh cgroup, 15-20 switches, at
// the ends of its 1.4 ms slices, as the simulator has it.
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <time.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace {

std::atomic<int> done{0};
std::atomic<bool> stop{false};
long run_ns = 0;

long clock_ns(clockid_t c) {
  timespec t{};
  clock_gettime(c, &t);
  return t.tv_sec * 1000000000L + t.tv_nsec;
}

void spin(long ns) {
  const long end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + ns;
  while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end) {
  }
}

void pin(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  sched_setaffinity(0, sizeof s, &s);
}

void* body(void*) {
  spin(run_ns);
  done.fetch_add(1);
  return nullptr;
}

void* duty(void*) {
  pin(1);
  while (!stop.load()) {
    spin(2000000);
    timespec pause{0, 8000000};
    nanosleep(&pause, nullptr);
  }
  return nullptr;
}

long involuntary() {
  rusage r{};
  getrusage(RUSAGE_THREAD, &r);
  return r.ru_nivcsw;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s N GAP_NS RUN_NS LOAD\n", argv[0]);
    return 2;
  }
  const int n = std::atoi(argv[1]);
  const long gap = std::atol(argv[2]);
  run_ns = std::atol(argv[3]);
  const bool load = std::atoi(argv[4]) != 0;
  pthread_t loader{};
  if (load) {
    pthread_create(&loader, nullptr, duty, nullptr);
    timespec warm{0, 200000000};  // 200 ms: the group's load on CPU 1 builds up
    nanosleep(&warm, nullptr);
  }
  pin(0);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  std::map<int, int> between;
  int since = 0;
  long after_create = 0, elsewhere = 0;
  long seen = involuntary();
  const long cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), wall0 = clock_ns(CLOCK_MONOTONIC);
  for (int i = 0; i < n; ++i) {
    spin(gap);
    if (const long now = involuntary(); now != seen) {
      ++elsewhere;
      seen = now;
      since = 0;
    }
    pthread_t t;
    pthread_create(&t, &attr, body, nullptr);
    ++since;
    if (const long now = involuntary(); now != seen) {
      ++after_create;
      ++between[since];
      seen = now;
      since = 0;
    }
  }
  const long cpu1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  while (done.load() < n) sched_yield();
  const long wall1 = clock_ns(CLOCK_MONOTONIC);
  stop.store(true);
  if (load) pthread_join(loader, nullptr);
  std::printf(
      "n=%d gap=%ld ns run=%ld ns load=%d: creator %.1f us CPU a creation, all done in %.1f ms; "
      "switched out after a creation %ld, elsewhere %ld; creations between switches:",
      n, gap, run_ns, load ? 1 : 0, (cpu1 - cpu0) / 1e3 / n, (wall1 - wall0) / 1e6, after_create,
      elsewhere);
  for (const auto& [count, times] : between)
    if (times >= n / 200) std::printf(" %d:%d", count, times);
  std::printf("\n");
  return 0;
}
