// waker_preemption.cpp: does a thread woken by a futex wake preempt its
// waker on the waker's CPU? (docs/simulator.md, "Wake-ups as this kernel
// does them"). S, pinned to CPU 0, wakes from a 5 ms periodic timer, spins
// `pre` us, wakes B with a futex, spins `post` us, then sleeps until B has
// started (100 us naps, at most 4 ms). B spins `bwork` us per wake; with
// `bhome` = 1 it moves itself to CPU 1 before each wait (so a wake onto CPU 0
// is a packing decision), with -1 it stays where it last ran.
// Prints how often B ran on CPU 0, and how often it started there before S
// finished its post-spin (it preempted S).
//   g++ -O2 -pthread -o /tmp/waker_preemption bench/probes/waker_preemption.cpp
//   /tmp/waker_preemption BWORK_US PRE_US POST_US ROUNDS BHOME
// 2026-12-02 on this VM (200 rounds, 4/50 us, bhome -1): B of 2000 us
// preempted S 0 times, 500 us 1, 20 us 134; with bhome 1, never.
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>
static std::atomic<int> word{0};
static std::atomic<long> bstart{0};
static std::atomic<int> bcpu{-1};
static long now_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000L + t.tv_nsec;
}
static void spin_us(long us) {
  long e = now_ns() + us * 1000;
  while (now_ns() < e) {
  }
}
static void pin(int c) {
  cpu_set_t s;
  CPU_ZERO(&s);
  if (c < 0) {
    CPU_SET(0, &s);
    CPU_SET(1, &s);
  } else
    CPU_SET(c, &s);
  sched_setaffinity(0, sizeof s, &s);
}
static long bwork, pre, post;
static int rounds, bhome;
static std::atomic<bool> stop{false};
void* bfn(void*) {
  int seen = 0;
  while (!stop) {
    if (bhome >= 0) {
      pin(bhome);
      pin(-1);
    }  // move to home CPU then allow both
    while (word.load() == seen && !stop)
      syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, seen, nullptr, nullptr, 0);
    seen = word.load();
    bstart = now_ns();
    bcpu = sched_getcpu();
    spin_us(bwork);
  }
  return nullptr;
}
int main(int argc, char** argv) {
  bwork = atol(argv[1]);
  pre = atol(argv[2]);
  post = atol(argv[3]);
  rounds = atoi(argv[4]);
  bhome = atoi(argv[5]);
  pin(0);
  pthread_t b;
  pthread_create(&b, nullptr, bfn, nullptr);
  usleep(10000);
  int on0 = 0, pre0 = 0;
  rusage r0, r1;
  getrusage(RUSAGE_THREAD, &r0);
  timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  for (int i = 0; i < rounds; i++) {
    next.tv_nsec += 5000000;
    if (next.tv_nsec >= 1000000000) {
      next.tv_nsec -= 1000000000;
      next.tv_sec++;
    }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr);
    spin_us(pre);
    bstart = 0;
    bcpu = -1;
    word.fetch_add(1);
    syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
    spin_us(post);
    long t1 = now_ns();
    {
      long until = now_ns() + 4000000;
      while (bcpu.load() < 0 && now_ns() < until) usleep(100);
    }
    if (bcpu == 0) {
      on0++;
      if (bstart < t1) pre0++;
    }
  }
  getrusage(RUSAGE_THREAD, &r1);
  stop = true;
  word.fetch_add(1);
  syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
  pthread_join(b, nullptr);
  printf(
      "bwork=%4ld pre=%3ld post=%3ld bhome=%2d: B on CPU0 %3d/%d, of which preempting S %3d; S "
      "nivcsw %ld\n",
      bwork, pre, post, bhome, on0, rounds, pre0, r1.ru_nivcsw - r0.ru_nivcsw);
}
