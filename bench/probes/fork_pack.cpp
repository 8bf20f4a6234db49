// fork_pack.cpp: on which CPU a new thread starts, by the creator's CPU
// utilization and by what else is on that CPU (docs/calibration.md,
// `fork_pack_util`; docs/simulator.md, "Packing new threads"). Each trial:
// the creator, pinned to CPU 0, rests 300 ms (PELT forgets what ran
// before), then sets up one condition, is allowed both CPUs again and
// creates a thread whose first act is sched_getcpu(); CPU 1 is idle. It
// prints how many of the trials started on CPU 0, with the creator's own
// utilization and CPU 0's (se.avg.util_avg of /proc/thread-self/sched and
// the root cfs_rq's util_avg of /sys/kernel/debug/sched/debug, out of 1024;
// -1 where not shown).
//   g++ -O2 -pthread -o /tmp/fork_pack bench/probes/fork_pack.cpp
//   /tmp/fork_pack spin 40 20    # spin 40 ms, sleep 1 ms, create; 20 trials
//   /tmp/fork_pack helper 0 20   # a helper on CPU 0 spins 150 ms, then sleeps
//   /tmp/fork_pack spinner 0 20  # a helper keeps spinning on CPU 0
// 2026-12-05, 22:58-23:05 UTC on this VM (PVM guest, 2 vCPUs, kernel
// command line sched_vcpu_pack=15): spin 10-60 ms (creator and CPU 0 at
// 0.04-0.65): 15 of 15 started on CPU 0 at every level; spin 70 (0.71): 7 of
// 20, 2 of 10, 1 of 10; spin 75-130 (0.74-0.92): 0 of every 15-20. A helper
// that spun 150 ms and sleeps (CPU 0 at 0.95-0.98, the creator at 0.06):
// 0 of 15. A spinner on CPU 0 (CPU 0 at 0.51, the creator at 0): 1 of 20.
// So a new thread stays on its creator's CPU while that CPU's utilization,
// not the creator's, is under about 0.70 and nothing else is runnable
// there; mainline Linux would start every one on the idle CPU 1.
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

namespace {

void allow(int cpu) {  // cpu < 0: both CPUs
  cpu_set_t set;
  CPU_ZERO(&set);
  if (cpu < 0) {
    CPU_SET(0, &set);
    CPU_SET(1, &set);
  } else {
    CPU_SET(cpu, &set);
  }
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

long long now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

void spin_ms(double ms) {
  const long long end = now_ns() + static_cast<long long>(ms * 1e6);
  while (now_ns() < end) {
  }
}

void sleep_ms(double ms) {
  timespec d{static_cast<time_t>(ms / 1000), static_cast<long>(ms * 1e6) % 1'000'000'000};
  while (clock_nanosleep(CLOCK_MONOTONIC, 0, &d, &d) != 0) {
  }
}

int own_util() {
  std::ifstream f("/proc/thread-self/sched");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("se.avg.util_avg", 0) == 0) return std::atoi(line.c_str() + line.find(':') + 1);
  return -1;
}

int cpu_util(int cpu) {
  std::ifstream f("/sys/kernel/debug/sched/debug");
  const std::string head = "cfs_rq[" + std::to_string(cpu) + "]:/";
  std::string line;
  bool root = false;
  while (std::getline(f, line)) {
    if (line.rfind("cfs_rq[", 0) == 0) root = line.rfind(head, 0) == 0 && line.back() == '/';
    if (root && line.find(".util_avg ") != std::string::npos)
      return std::atoi(line.c_str() + line.find(':') + 1);
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s spin|helper|spinner MS TRIALS\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[1];
  const double ms = std::atof(argv[2]);
  const int trials = std::atoi(argv[3]);
  int packed = 0;
  long own_sum = 0, cpu_sum = 0;
  for (int i = 0; i < trials; ++i) {
    allow(0);
    sleep_ms(300);
    std::atomic<bool> stop{false}, spun{false};
    std::thread helper;
    if (mode == "spin") {
      spin_ms(ms);
    } else if (mode == "helper") {  // its utilization stays on CPU 0 while it sleeps
      helper = std::thread([&] {
        allow(0);
        spin_ms(150);
        spun = true;
        while (!stop) sleep_ms(0.2);
      });
      while (!spun) sleep_ms(0.1);
    } else {  // spinner: runnable on CPU 0 throughout
      helper = std::thread([&] {
        allow(0);
        while (!stop) {
        }
      });
    }
    sleep_ms(1);
    const int own = own_util(), cpu0 = cpu_util(0);
    allow(-1);
    std::atomic<int> where{-1};
    std::thread child([&] { where = sched_getcpu(); });
    child.join();
    stop = true;
    if (helper.joinable()) helper.join();
    packed += where == 0 ? 1 : 0;
    own_sum += own;
    cpu_sum += cpu0;
  }
  std::printf("%s %g: %d of %d started on CPU 0; creator util %ld, CPU 0 util %ld (mean, /1024)\n",
              mode.c_str(), ms, packed, trials, own_sum / trials, cpu_sum / trials);
  return 0;
}
