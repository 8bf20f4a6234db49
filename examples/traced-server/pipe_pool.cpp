// pipe-pool: a second program for `poolsim record`, written unlike
// traced-server: no thread names (every thread is "pipe-pool"), no mutex or
// condition variable. K client threads each write a request id into ONE
// shared pipe and block reading their own reply pipe; N workers block on
// read() of the shared pipe, burn `cpu` of their CPU clock, sleep `wait`
// (usleep), burn `cpu2`, and write the reply. Linux's pipe_read wakes the
// next reader when it leaves data in the pipe, so the workers also wake each
// other: the wake graph of an unnamed shared-pipe pool (docs/traces.md).
//
//   pipe-pool WORKERS CLIENTS SECONDS [CPU_US WAIT_US CPU2_US]
//
// Prints its own throughput (replies / time from the first request to the
// last reply) and mean latency (request written to reply read).
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "burn.hpp"

namespace {

using Clock = std::chrono::steady_clock;

using example::burn;

bool read_all(int fd, void* p, std::size_t n) {
  auto* c = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t r = read(fd, c, n);
    if (r <= 0) return false;
    c += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

bool write_all(int fd, const void* p, std::size_t n) {
  const auto* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t r = write(fd, c, n);
    if (r <= 0) return false;
    c += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: pipe-pool WORKERS CLIENTS SECONDS [CPU_US WAIT_US CPU2_US]\n");
    return 2;
  }
  const int workers = std::atoi(argv[1]), clients = std::atoi(argv[2]);
  const double seconds = std::atof(argv[3]);
  const double cpu_us = argc > 4 ? std::atof(argv[4]) : 800;
  const double wait_us = argc > 5 ? std::atof(argv[5]) : 1500;
  const double cpu2_us = argc > 6 ? std::atof(argv[6]) : 300;
  if (workers < 1 || clients < 1 || seconds <= 0) {
    std::fprintf(stderr, "pipe-pool: WORKERS and CLIENTS must be >= 1, SECONDS > 0\n");
    return 2;
  }
  int shared[2];
  if (pipe(shared) != 0) return 1;
  std::vector<std::array<int, 2>> reply(static_cast<std::size_t>(clients));
  for (auto& p : reply)
    if (pipe(p.data()) != 0) return 1;

  std::vector<std::thread> pool;
  for (int w = 0; w < workers; ++w)
    pool.emplace_back([&] {
      std::int32_t id;
      while (read_all(shared[0], &id, sizeof id) && id >= 0) {
        burn(cpu_us);
        usleep(static_cast<useconds_t>(wait_us));
        burn(cpu2_us);
        write_all(reply[static_cast<std::size_t>(id)][1], &id, sizeof id);
      }
    });

  const auto start = Clock::now();
  const auto stop = start + std::chrono::duration<double>(seconds);
  std::atomic<std::int64_t> done{0}, latency_ns{0};
  std::atomic<std::int64_t> last_ns{0};
  std::vector<std::thread> gen;
  for (int c = 0; c < clients; ++c)
    gen.emplace_back([&, c] {
      std::int32_t id = c;
      while (Clock::now() < stop) {
        const auto t0 = Clock::now();
        if (!write_all(shared[1], &id, sizeof id)) return;
        std::int32_t got;
        if (!read_all(reply[static_cast<std::size_t>(c)][0], &got, sizeof got)) return;
        const auto t1 = Clock::now();
        done.fetch_add(1);
        latency_ns.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
        const std::int64_t at =
            std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - start).count();
        std::int64_t prev = last_ns.load();
        while (at > prev && !last_ns.compare_exchange_weak(prev, at)) {
        }
      }
    });
  for (auto& t : gen) t.join();
  for (int w = 0; w < workers; ++w) {
    const std::int32_t quit = -1;
    write_all(shared[1], &quit, sizeof quit);
  }
  for (auto& t : pool) t.join();
  const double span = static_cast<double>(last_ns.load()) * 1e-9;
  const double n = static_cast<double>(done.load());
  std::printf(
      "pipe-pool: %d workers, %d clients: %.0f requests, throughput %.1f/s, "
      "latency %.3f ms\n",
      workers, clients, n, span > 0 ? n / span : 0.0,
      n > 0 ? static_cast<double>(latency_ns.load()) / n * 1e-6 : 0.0);
  return 0;
}
