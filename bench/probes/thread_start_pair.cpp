// thread_start_pair.cpp: what the first threads of a fresh process cost
// before their function runs (docs/validation.md, "The first workers of a
// forked child", 2026-12-05). CHILDREN forked children, each as the
// runner's child: 5 ms of CPU (the harness's setup), a 1 ms sleep, then
// four threads; each reads its CPU clock and its minor faults first thing
// in its function ("entry"), mallocs once (a new arena), then spins 2 ms
// so that the process stays on both CPUs. MODE says how the four are made:
//   0  two back to back, 1 ms, two back to back
//   1  3 ms apart (each has exited before the next: cached stack and arena)
//   2  the first, 500 us of the creator's CPU, the second, 1 ms, two more
//   3  the first, a 500 us sleep, the second, 1 ms, two more
//   4  all four back to back
//   5  as 4, but the creator first runs 100 us on the other CPU and back
//   6  as 4, after a helper thread spun beside the creator while it
//      unmapped a page it had touched (a TLB shootdown), then was joined
//   7  as 6 without the unmapping
// Build and run (one line each):
//   g++ -O2 -pthread -o /tmp/thread_start_pair bench/probes/thread_start_pair.cpp
//   /tmp/thread_start_pair 4 20
// Output, a line per child: entry and first-malloc CPU time of threads 0-3
// (us), the CPU each ran on after its malloc, each one's minor faults at
// entry, the helper's entry (modes 6 and 7).
// 2026-12-05, 21:00-21:20 UTC on this VM (PVM guest, Linux 6.18, 2 vCPUs):
// every thread took one minor fault before its entry; in modes 0, 2, 3, 4
// and 5 one of the first two paid 140-410 us at entry (33 of 40 children in
// mode 0, almost always the second), every later one 16-40 us (a few
// 50-110); with a helper made and joined first (6, 7) the first worker
// took the helper's cached stack and paid 6-50 us, the second (the
// process's second freshly mapped stack) 70-240 us. perf record -g: the
// time is in schedule_tail's put_user of the new thread's tid (a
// write-protect fault, do_wp_page -> ptep_clear_flush ->
// flush_tlb_mm_range) and in finish_task_switch's interrupt enable.
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace {

long now_ns(clockid_t c) {
  timespec t{};
  clock_gettime(c, &t);
  return t.tv_sec * 1000000000L + t.tv_nsec;
}

void spin_ns(long ns) {
  const long start = now_ns(CLOCK_MONOTONIC);
  while (now_ns(CLOCK_MONOTONIC) - start < ns) {
  }
}

struct Start {
  long entry = 0;
  long first_malloc = 0;
  int cpu = -1;
  long faults = 0;
};
Start starts[4];
std::atomic<int> helper_state{0};
long helper_entry = 0;

void* worker(void* arg) {
  const long i = reinterpret_cast<long>(arg);
  const long entry = now_ns(CLOCK_THREAD_CPUTIME_ID);
  rusage ru{};
  getrusage(RUSAGE_THREAD, &ru);
  void* volatile block = std::malloc(64);
  std::free(block);
  const long after = now_ns(CLOCK_THREAD_CPUTIME_ID);
  starts[i] = {entry, after - entry, sched_getcpu(), ru.ru_minflt};
  spin_ns(2000000);
  return nullptr;
}

void* helper(void*) {
  helper_entry = now_ns(CLOCK_THREAD_CPUTIME_ID);
  helper_state = 1;
  while (helper_state.load() != 2) {
  }
  return nullptr;
}

void move_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (cpu >= 0) {
    CPU_SET(cpu, &set);
  } else {
    CPU_SET(0, &set);
    CPU_SET(1, &set);
  }
  sched_setaffinity(0, sizeof set, &set);
}

[[noreturn]] void child(int mode, int fd) {
  spin_ns(5000000);
  if (mode == 5) {
    move_to(1 - sched_getcpu());
    spin_ns(100000);
    move_to(-1);
  }
  if (mode == 6 || mode == 7) {
    pthread_t h;
    pthread_create(&h, nullptr, helper, nullptr);
    while (helper_state.load() != 1) {
    }
    if (mode == 6) {
      auto* page = static_cast<char*>(
          mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
      page[0] = 1;
      munmap(page, 4096);
    }
    spin_ns(100000);
    helper_state = 2;
    pthread_join(h, nullptr);
  }
  usleep(1000);
  pthread_t t[4];
  for (long i = 0; i < 4; ++i) {
    pthread_create(&t[i], nullptr, worker, reinterpret_cast<void*>(i));
    if (mode == 1) usleep(3000);
    if (i == 0 && mode == 2) spin_ns(500000);
    if (i == 0 && mode == 3) usleep(500);
    if (i == 1 && mode <= 3) usleep(1000);
  }
  for (pthread_t th : t) pthread_join(th, nullptr);
  char out[256];
  const int len = std::snprintf(
      out, sizeof out, "%.1f %.1f %.1f %.1f %.1f %.1f %.1f %.1f %d %d %d %d %ld %ld %ld %ld %.1f\n",
      starts[0].entry / 1e3, starts[0].first_malloc / 1e3, starts[1].entry / 1e3,
      starts[1].first_malloc / 1e3, starts[2].entry / 1e3, starts[2].first_malloc / 1e3,
      starts[3].entry / 1e3, starts[3].first_malloc / 1e3, starts[0].cpu, starts[1].cpu,
      starts[2].cpu, starts[3].cpu, starts[0].faults, starts[1].faults, starts[2].faults,
      starts[3].faults, helper_entry / 1e3);
  if (write(fd, out, static_cast<std::size_t>(len)) != len) _exit(1);
  _exit(0);
}

}  // namespace

int main(int argc, char** argv) {
  const int mode = argc > 1 ? std::atoi(argv[1]) : 4;
  const int children = argc > 2 ? std::atoi(argv[2]) : 20;
  for (int k = 0; k < children; ++k) {
    int fd[2];
    if (pipe(fd) != 0) return 1;
    const pid_t pid = fork();
    if (pid == 0) {
      close(fd[0]);
      child(mode, fd[1]);
    }
    close(fd[1]);
    char buf[256];
    const ssize_t n = read(fd[0], buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = '\0';
    std::fputs(buf, stdout);
    close(fd[0]);
    waitpid(pid, nullptr, 0);
    usleep(20000);
  }
  return 0;
}
