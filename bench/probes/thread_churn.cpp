// thread_churn.cpp: a thread's cost under creation churn
// (docs/reproductions.md, "Thread churn"). A creator pinned to CPU 0 creates
// N detached threads (256 KiB stacks) pinned to CPU `target` that return at
// once; prints the creator's CPU per creation and the busy time of the
// target CPU (/proc/stat) per thread. TARGET_CPU -1: creator and threads
// unpinned, as the real thread-per-task backend runs (the kernel places
// every new thread), and then the creator's wall time per creation; SPIN_NS
// (default 0): each thread computes that much CPU before it returns.
//   g++ -O2 -pthread -o /tmp/thread_churn bench/probes/thread_churn.cpp
//   /tmp/thread_churn N TARGET_CPU [SPIN_NS]
// 2026-12-02 on this VM, 5000 threads: on CPU 1 the creator spent 44 us per
// creation and CPU 1 22 us per thread; on CPU 0, 28 us and 24-26 us.
// 2026-12-07 13:55 UTC, unpinned, 5000 threads of 5 us (bench/battery's
// tpt-churn; docs/validation.md, "What the remaining misses are made
// of"): the creator 9.1-9.3 us CPU and 17.6-18.3 us wall per creation,
// every thread done 90-92 ms after the first creation (14:25: 8.93, 17.78
// and 89.4 ms).
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
static std::atomic<int> done{0};
static long spin_ns = 0;
static double tcpu();
static void* body(void*) {
  const double until = tcpu() + spin_ns * 1e-9;
  while (spin_ns > 0 && tcpu() < until) {
  }
  done.fetch_add(1);
  return nullptr;
}
static long long busy_jiffies(int cpu) {
  std::ifstream f("/proc/stat");
  std::string l;
  std::string key = "cpu" + std::to_string(cpu) + " ";
  while (std::getline(f, l))
    if (l.rfind(key, 0) == 0) {
      std::istringstream s(l.substr(key.size()));
      long long v[10] = {0};
      for (auto& x : v) s >> x;
      return v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    }
  return 0;
}
static double tcpu() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
static double wall() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: thread_churn N TARGET_CPU|-1 [SPIN_NS]\n");
    return 2;
  }
  int n = atoi(argv[1]), target = atoi(argv[2]);
  spin_ns = argc > 3 ? atol(argv[3]) : 0;
  pthread_attr_t a;
  pthread_attr_init(&a);
  pthread_attr_setstacksize(&a, 256 * 1024);
  pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
  if (target >= 0) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(0, &s);
    sched_setaffinity(0, sizeof s, &s);
    cpu_set_t ts;
    CPU_ZERO(&ts);
    CPU_SET(target, &ts);
    pthread_attr_setaffinity_np(&a, sizeof ts, &ts);
  }
  long long b0 = target >= 0 ? busy_jiffies(target) : 0;
  double c0 = tcpu(), w0 = wall();
  for (int i = 0; i < n; ++i) {
    pthread_t t;
    if (pthread_create(&t, &a, body, nullptr)) {
      perror("create");
      return 1;
    }
  }
  double created_c = tcpu(), created_w = wall();
  while (done.load() < n) usleep(100);
  if (target < 0) {
    printf(
        "unpinned, %d threads of %ld ns: creator %.2f us CPU and %.2f us wall per creation, all "
        "done %.1f ms after the first\n",
        n, spin_ns, (created_c - c0) / n * 1e6, (created_w - w0) / n * 1e6, (wall() - w0) * 1e3);
    return 0;
  }
  usleep(20000);
  double c1 = tcpu(), w1 = wall();
  long long b1 = busy_jiffies(target);
  double hz = sysconf(_SC_CLK_TCK);
  printf(
      "threads on CPU %d: creator %.1f us CPU per creation, wall %.1f us per thread, CPU %d busy "
      "%.1f us per thread\n",
      target, (c1 - c0) / n * 1e6, (w1 - w0 - 0.02) / n * 1e6, target, (b1 - b0) / hz / n * 1e6);
}
