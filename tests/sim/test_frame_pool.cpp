// The coroutine frame pool (sim/co.hpp) under memory exhaustion.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <new>
#include <string>
#include <thread>

#include "sim/co.hpp"

namespace {

// Virtual memory this process maps now, in bytes (VmSize, /proc/self/status).
std::size_t frame_pool_vm_size() {
  std::ifstream in("/proc/self/status");
  std::string key;
  std::size_t kib = 0;
  while (in >> key)
    if (key == "VmSize:" && in >> kib) return kib << 10;
  return 0;
}

}  // namespace

TEST_CASE("frame_pool: a thread whose first frame finds no memory gets bad_alloc, no abort",
          "[sim][hostile]") {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  WARN(
      "skipped: a sanitizer build has no frame pool (ASan) or cannot run under an address-space "
      "limit");
  return;
#endif
  // A sweep worker started when the other workers' stacks had taken the
  // address space (`ulimit -v`): its first simulation's first frame is the
  // first allocation on its thread. In a child, whose address space is then
  // capped at what it maps and whose main malloc arena is used up.
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::atomic<int> go{0};
    int result = 0;
    std::thread worker([&] {
      while (go.load() == 0) std::this_thread::yield();
      try {
        void* frame = poolsim::sim::FramePool::allocate(128);
        poolsim::sim::FramePool::release(frame, 128);
        result = 1;
      } catch (const std::bad_alloc&) {
        result = 2;
      }
    });
    const rlimit cap{frame_pool_vm_size(), RLIM_INFINITY};
    if (::setrlimit(RLIMIT_AS, &cap) != 0) ::_exit(10);
    for (std::size_t size : {std::size_t{1} << 16, std::size_t{4096}, std::size_t{64}})
      while (std::malloc(size) != nullptr) {
      }
    go = 1;
    worker.join();
    ::_exit(result == 1 || result == 2 ? 0 : 11);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  INFO("child's wait status " << status << " (an abort is signal 6)");
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}
