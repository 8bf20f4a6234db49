// stack_cache.cpp: how many thread stacks glibc's stack cache keeps
// (docs/reproductions.md, "glibc's stack cache, slot by slot"). ROUNDS rounds
// of SIZE threads with 8 MiB stacks, all of a round alive together (each
// waits for the round's barrier), then joined; count the stack mappings with
//   g++ -O2 -pthread -o /tmp/stack_cache bench/probes/stack_cache.cpp
//   perf stat -e syscalls:sys_enter_mmap --filter 'len == 0x801000'
//     -e syscalls:sys_enter_munmap --filter 'len == 0x801000' -- /tmp/stack_cache 3 6
// (one command line).
// (0x801000: an 8 MiB stack and its 4 KiB guard page, glibc's block). A cache
// of K free stacks gives SIZE + (ROUNDS - 1) * (SIZE - K) mmaps.
// 2026-12-04 on this VM (glibc 2.41, 40 MiB cache), 3 rounds of 6: 10 mmaps
// and 6 munmaps; 5 rounds: 14 mmaps. So K = 4 (five 8 MiB stacks would fit in 40 MiB, but not
// five blocks with their guard pages); the simulator's test "stack_cache:
// 40 MiB keeps four 8 MiB stacks, as glibc's does" repeats it.
#include <pthread.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

static pthread_barrier_t round_barrier;

static void* body(void*) {
  pthread_barrier_wait(&round_barrier);
  return nullptr;
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 3;
  const int size = argc > 2 ? std::atoi(argv[2]) : 6;
  if (rounds < 1 || size < 1) {
    std::fprintf(stderr, "usage: stack_cache [ROUNDS >= 1] [SIZE >= 1]\n");
    return 2;
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 8 << 20);
  for (int r = 0; r < rounds; ++r) {
    pthread_barrier_init(&round_barrier, nullptr, static_cast<unsigned>(size));
    std::vector<pthread_t> threads(static_cast<std::size_t>(size));
    for (pthread_t& t : threads) pthread_create(&t, &attr, body, nullptr);
    for (pthread_t t : threads) pthread_join(t, nullptr);
    pthread_barrier_destroy(&round_barrier);
    usleep(1000);  // every thread of the round has exited: its tid is cleared
  }
  std::printf("%d rounds of %d threads made\n", rounds, size);
  return 0;
}
