// calibrate_threads.cpp: the thread and stack experiments of `poolsim
// calibrate` (docs/calibration.md):
//   thread_create   the creator's CPU time inside pthread_create.
//   thread_exit     create-to-join wall time on one CPU, minus the creation,
//                   the new thread's own start (its CPU clock read first
//                   thing: the model charges that as thread_start) and the
//                   two switches. (Until 2026-12-07 the start stayed in, so
//                   every thread paid it twice: 12.3 us where the exit is
//                   7 us.)
//   exit_unaccounted
//                   the end of a thread's exit that the process's CPU clock
//                   does not count: batches of detached threads that return
//                   at once, creator and threads on one CPU, which never
//                   idles meanwhile (the creator stays runnable); wall time
//                   less the process's CPU time, per thread.
//   stack_reserve   glibc's default thread stack size.
//   stack_touch     resident memory added per blocked thread (VmRSS over 64
//                   threads).
// Thread stacks outside glibc's stack cache:
//   stack_cache     glibc.pthread.stack_cache_size from `ld.so
//                   --list-tunables`, else glibc's default 40 MiB.
//   stack_map       on a thread pinned to CPU 0, through pthread_create
//                   itself: the creator's CPU time for a thread with default
//                   attributes once glibc's cache is empty (allocate_stack
//                   maps, guards and first touches a new stack) less that for
//                   a thread on a stack mapped and touched beforehand
//                   (pthread_attr_setstack), the two interleaved and every
//                   thread kept blocked, so that both make a new kernel stack;
//                   difference of the medians. (Until 2026-12-03 the mmap,
//                   mprotect and two-page touch were timed by hand, outside
//                   pthread_create: 33 us against 45-62 us through it.)
//   stack_unmap     munmap of that stack, no other thread of the process
//                   running.
//   tlb_shootdown   the same munmap while another thread of this process
//                   spins on CPU 1 (the kernel must flush that CPU's TLB),
//                   minus stack_unmap.
//   stack_map_remote  the stack_map pair again while that thread spins on
//                   CPU 1 (pairs during which it ran throughout), minus
//                   stack_map (a new stack's first touch costs more while the
//                   process runs on another CPU: 45 -> 120 us here; until
//                   2026-12-03 timed by hand outside pthread_create, 37 us).
// A new thread's own start (in a forked child, as the runner's threads start;
// the creator on CPU 0):
//   thread_start    the new thread reads its CPU clock first thing in its
//                   function: 8 threads made and joined one at a time, each on
//                   the stack the previous one left in glibc's cache; median.
//   stack_fault     then 8 threads kept alive, so that all but the first map
//                   a new stack: the median of those 7 less thread_start (the
//                   first touch of the new stack's pages, by the new thread).
//   thread_start_remote  (two CPUs or more) then the creator, allowed every
//                   CPU, makes 64 detached threads back to back; of those
//                   wake_up_new_task put on another CPU than the creator's,
//                   the median entry less thread_start. (Until 2026-12-02
//                   22:20 UTC the threads were sent to CPU 1 by
//                   pthread_attr_setaffinity_np, which migrates the new
//                   thread before its first run: 60-84 us there against
//                   8-11 us for one the kernel placed there itself.)
// Kernel thread stacks (kernel/fork.c, CONFIG_VMAP_STACK):
//   kstack_cache    the kernel's NR_CACHED_STACKS (2), a constant.
//   kstack_alloc    everything on CPU 0: rounds of eight creations of threads
//                   that stay blocked until the round ends (64 KiB stacks, so
//                   glibc's stack cache always has one). The round's first two
//                   take the kernel stacks the previous round's threads left
//                   in CPU 0's cache, the others allocate one: the median of
//                   creations 3-8 minus that of creation 2 (creation 1 comes
//                   after a pause, with cold caches).
#include <fmt/format.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "models/units.hpp"
#include "real/calibrate_experiments.hpp"
#include "real/runner.hpp"

namespace poolsim::real::calib {

namespace {
// Reads its CPU clock first thing: the new thread's start (kernel and glibc),
// which the wall time of its creation and join contains.
void* empty_thread(void* start) {
  *static_cast<std::int64_t*>(start) = thread_cpu_ns();
  return nullptr;
}
}  // namespace

std::pair<Measurement, Measurement> measure_thread_costs(int samples, double switch_cost) {
  std::vector<double> create, exit_cost;
  std::thread t([&] {
    pin_self(0);  // children inherit the mask: everything on one CPU, serialised
    for (int i = 0; i < samples; ++i) {
      pthread_t th;
      std::int64_t start = 0;
      const auto w0 = now_ns();
      const auto c0 = thread_cpu_ns();
      if (pthread_create(&th, nullptr, empty_thread, &start) != 0) break;
      const auto c1 = thread_cpu_ns();
      pthread_join(th, nullptr);
      const auto w1 = now_ns();
      create.push_back((c1 - c0) * 1e-9);
      exit_cost.push_back(std::max(0.0, (w1 - w0 - (c1 - c0) - start) * 1e-9 - 2 * switch_cost));
    }
  });
  t.join();
  return {
      summarize("thread_create", create,
                fmt::format("creator CPU time in pthread_create, {} threads", samples)),
      summarize("thread_exit", exit_cost,
                "create-to-join wall time on one CPU minus creation, the thread's start and two "
                "switches")};
}

namespace {
std::atomic<int> g_returned{0};
void* return_at_once(void*) {
  g_returned.fetch_add(1, std::memory_order_release);
  return nullptr;
}
}  // namespace

// A thread's runtime goes into the process's when release_task unhashes it
// (__exit_signal), before the end of its exit; what it runs after that is
// on nobody's clock. With creator and threads on one CPU and the creator
// always runnable (it creates, then yields until every thread returned),
// the CPU never idles, so its wall time is the CPU time all of them used,
// and the part the process's clock misses is the difference (kernel
// threads that run there meanwhile add to it: the median of batches).
// 2026-12-07 on this VM, batches of 1,000 or 5,000 threads: 3.9-6.3 us per
// thread; measure_thread_costs' create-join loop above, one thread at a
// time, shows none (median -0.04 us): the loss belongs to churn.
Measurement measure_exit_unaccounted(int batches, int threads) {
  std::vector<double> lost;
  std::thread t([&] {
    pin_self(0);  // the threads inherit the mask
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 256 * 1024);  // glibc's stack cache keeps them all
    for (int b = 0; b < batches; ++b) {
      g_returned.store(0);
      const auto w0 = now_ns();
      const auto p0 = process_cpu_ns();
      int made = 0;
      for (; made < threads; ++made) {
        pthread_t th;
        if (pthread_create(&th, &a, return_at_once, nullptr) != 0) break;
      }
      while (g_returned.load(std::memory_order_acquire) < made) sched_yield();
      const auto w1 = now_ns();
      const auto p1 = process_cpu_ns();
      if (made > 0)
        lost.push_back(std::max(0.0, static_cast<double>((w1 - w0) - (p1 - p0)) * 1e-9 / made));
    }
    pthread_attr_destroy(&a);
  });
  t.join();
  return summarize("exit_unaccounted", lost,
                   fmt::format("{} batches of {} detached threads that return at once, creator "
                               "and threads on CPU 0: wall time less the process's CPU time, per "
                               "thread",
                               batches, threads));
}

namespace {
long long vm_rss_bytes() {
  std::ifstream f("/proc/self/status");
  std::string key;
  long long kib = 0;
  while (f >> key) {
    if (key == "VmRSS:") {
      f >> kib;
      return kib * 1024;
    }
    f.ignore(1 << 12, '\n');
  }
  return 0;
}
}  // namespace

std::pair<Measurement, Measurement> measure_stacks(int rounds) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  std::size_t reserve = 0;
  pthread_attr_getstacksize(&attr, &reserve);
  pthread_attr_destroy(&attr);
  std::vector<double> touch;
  constexpr int kThreads = 64;
  for (int r = 0; r < rounds; ++r) {
    std::mutex m;
    std::condition_variable cv;
    bool release = false;
    int started = 0;
    const long long before = vm_rss_bytes();
    std::vector<std::thread> ts;
    for (int i = 0; i < kThreads; ++i)
      ts.emplace_back([&] {
        std::unique_lock lk(m);
        ++started;
        cv.notify_all();
        cv.wait(lk, [&] { return release; });
      });
    {
      std::unique_lock lk(m);
      cv.wait(lk, [&] { return started == kThreads; });
    }
    const long long after = vm_rss_bytes();
    {
      std::lock_guard lk(m);
      release = true;
    }
    cv.notify_all();
    for (auto& t : ts) t.join();
    touch.push_back(std::max(0.0, static_cast<double>(after - before) / kThreads));
  }
  return {summarize("stack_reserve", {static_cast<double>(reserve)},
                    "glibc default thread stack (pthread_attr_getstacksize)"),
          summarize("stack_touch", touch,
                    fmt::format("VmRSS added per blocked thread, {} threads", kThreads))};
}

namespace {
// glibc's stack cache limit in bytes (the tunable's current value).
std::pair<double, std::string> stack_cache_size() {
  for (const char* ld : {"/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1"}) {
    if (access(ld, X_OK) != 0) continue;
    FILE* p = popen((std::string(ld) + " --list-tunables 2>/dev/null").c_str(), "r");
    if (!p) continue;
    char buf[512];
    double v = -1;
    while (fgets(buf, sizeof buf, p)) {
      const char* k = "glibc.pthread.stack_cache_size: ";
      if (std::strncmp(buf, k, std::strlen(k)) == 0)
        v = static_cast<double>(std::strtoull(buf + std::strlen(k), nullptr, 0));
    }
    pclose(p);
    if (v >= 0) return {v, "glibc.pthread.stack_cache_size (ld.so --list-tunables)"};
  }
  return {40.0 * 1024 * 1024, "glibc's default (nptl-stack.c), the tunable could not be read"};
}

// Map, touch and unmap `rounds` stacks of `size` bytes the way glibc's
// allocate_stack and free_stacks do; the unmaps' (and advises') wall times in
// seconds.
void map_unmap_stacks(std::size_t size, int rounds, std::vector<double>& unmap,
                      std::vector<double>* advise = nullptr) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  for (int i = 0; i < rounds; ++i) {
    void* mem = mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (mem == MAP_FAILED) throw std::runtime_error("calibrate: mmap of a thread stack failed");
    char* p = static_cast<char*>(mem);
    mprotect(p + page, size - page, PROT_READ | PROT_WRITE);
    *reinterpret_cast<volatile char*>(p + size - 1) = 1;
    *reinterpret_cast<volatile char*>(p + size - 1 - page) = 1;
    if (advise) {
      // What glibc does as a thread exits (advise_stack_range): MADV_DONTNEED
      // on the stack below the frames in use, less PTHREAD_STACK_MIN.
      const auto a0 = now_ns();
      madvise(p + page, size - 4 * page, MADV_DONTNEED);
      advise->push_back((now_ns() - a0) * 1e-9);
    }
    const auto t2 = now_ns();
    munmap(mem, size);
    const auto t3 = now_ns();
    unmap.push_back((t3 - t2) * 1e-9);
  }
}
}  // namespace

std::pair<Measurement, Measurement> measure_kernel_stacks(int rounds) {
  constexpr int kPerRound = 8;
  constexpr int kCached = 2;  // NR_CACHED_STACKS
  std::vector<double> hit, miss;
  std::thread t([&] {
    pin_self(0);  // the children inherit the mask: they die on CPU 0 and refill its cache
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 << 10);
    for (int r = 0; r < rounds; ++r) {
      std::atomic<bool> go{false};
      std::vector<pthread_t> ths;
      auto blocked = [](void* arg) -> void* {
        static_cast<std::atomic<bool>*>(arg)->wait(false);
        return nullptr;
      };
      for (int i = 0; i < kPerRound; ++i) {
        pthread_t th;
        const auto c0 = thread_cpu_ns();
        if (pthread_create(&th, &attr, blocked, &go) != 0) break;
        const double cost = (thread_cpu_ns() - c0) * 1e-9;
        ths.push_back(th);
        if (i == kCached - 1) hit.push_back(cost);
        if (i >= kCached) miss.push_back(cost);
      }
      go = true;
      go.notify_all();
      for (pthread_t th : ths) pthread_join(th, nullptr);
    }
    pthread_attr_destroy(&attr);
  });
  t.join();
  std::vector<double> extra;
  if (!hit.empty() && !miss.empty())
    extra.push_back(std::max(0.0, quantile(miss, 0.5) - quantile(hit, 0.5)));
  if (extra.empty()) extra.push_back(0);
  return {summarize("kstack_cache", {kCached}, "kernel/fork.c NR_CACHED_STACKS"),
          summarize("kstack_alloc", extra,
                    fmt::format("creator CPU: creations beyond the 2 cached kernel stacks minus "
                                "one that found a cached stack, {} rounds of {}",
                                rounds, kPerRound))};
}

namespace {
struct StartProbe {
  std::atomic<bool> go{false};
  std::int64_t entry_ns = 0;
};
void* start_probe_thread(void* arg) {
  auto* p = static_cast<StartProbe*>(arg);
  p->entry_ns = thread_cpu_ns();
  while (!p->go.load(std::memory_order_acquire)) ::usleep(200);
  return nullptr;
}

// `n` threads made and joined one at a time (each on the stack the one
// before left in glibc's cache): their entry CPU times in ns.
std::string one_at_a_time(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    StartProbe p;
    p.go = true;
    pthread_t th;
    if (pthread_create(&th, nullptr, start_probe_thread, &p) != 0) ::_exit(1);
    pthread_join(th, nullptr);
    out += fmt::format("{} ", p.entry_ns);
    ::usleep(300);
  }
  return out;
}

// `n` detached threads made back to back by this (unpinned) thread: the
// entry CPU times in ns of those that started on another CPU than the one
// their creator was on.
struct StreamProbe {
  std::int64_t entry_ns = 0;
  int cpu = -1;
  int creator_cpu = -1;
  std::atomic<bool> done{false};
};
void* stream_probe_thread(void* arg) {
  auto* p = static_cast<StreamProbe*>(arg);
  p->entry_ns = thread_cpu_ns();
  p->cpu = sched_getcpu();
  p->done.store(true, std::memory_order_release);
  return nullptr;
}
std::string remote_stream(int n) {
  std::vector<StreamProbe> probes(static_cast<std::size_t>(n));
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  for (StreamProbe& p : probes) {
    p.creator_cpu = sched_getcpu();
    pthread_t th;
    if (pthread_create(&th, &attr, stream_probe_thread, &p) != 0) ::_exit(1);
  }
  pthread_attr_destroy(&attr);
  std::string out;
  for (StreamProbe& p : probes) {
    while (!p.done.load(std::memory_order_acquire)) ::usleep(100);
    if (p.cpu != p.creator_cpu) out += fmt::format("{} ", p.entry_ns);
  }
  return out;
}

// `n` threads made 3 ms apart by this (unpinned) thread, each kept blocked
// until the end as a pool's workers are (so most land on the other CPU, idle
// since the one before, and all but the first few map a new stack): the
// entry CPU times in ns of those that started on another CPU than the one
// their creator was on.
// A stream probe that then stays blocked until `release` (a pool's worker).
struct BlockedProbe {
  StreamProbe probe;
  std::atomic<bool>* release = nullptr;
};
void* blocked_probe_thread(void* arg) {
  auto* a = static_cast<BlockedProbe*>(arg);
  stream_probe_thread(&a->probe);
  a->release->wait(false);
  return nullptr;
}

std::string idle_stream(int n) {
  std::vector<BlockedProbe> probes(static_cast<std::size_t>(n));
  std::vector<pthread_t> threads(static_cast<std::size_t>(n));
  std::atomic<bool> release{false};
  for (std::size_t i = 0; i < probes.size(); ++i) {
    probes[i].release = &release;
    probes[i].probe.creator_cpu = sched_getcpu();
    if (pthread_create(&threads[i], nullptr, blocked_probe_thread, &probes[i]) != 0) ::_exit(1);
    ::usleep(kIdleStreamGapUs);
  }
  release = true;
  release.notify_all();
  std::string out;
  for (std::size_t i = 0; i < probes.size(); ++i) {
    pthread_join(threads[i], nullptr);
    const StreamProbe& p = probes[i].probe;
    if (p.cpu != p.creator_cpu) out += fmt::format("{} ", p.entry_ns);
  }
  return out;
}

// The forked child: writes "cached | fresh | remote | idle" entry CPU times
// in ns (the last two empty on one CPU).
[[noreturn]] void thread_start_child(int fd, int cpus) {
  pin_self(0);
  constexpr int kEach = 8;
  // One thread made and joined first: the child is multithreaded (as the
  // runner's, with its sampler) and glibc's cache holds one stack.
  one_at_a_time(1);
  std::string out = one_at_a_time(kEach) + "| ";
  std::vector<StartProbe> alive(kEach);
  std::vector<pthread_t> threads(kEach);
  for (int i = 0; i < kEach; ++i) {
    if (pthread_create(&threads[static_cast<std::size_t>(i)], nullptr, start_probe_thread,
                       &alive[static_cast<std::size_t>(i)]) != 0)
      ::_exit(1);
    ::usleep(300);
  }
  for (auto& p : alive) p.go.store(true, std::memory_order_release);
  for (pthread_t t : threads) pthread_join(t, nullptr);
  // The first took the stack the joins left cached; the others mapped theirs.
  for (int i = 1; i < kEach; ++i)
    out += fmt::format("{} ", alive[static_cast<std::size_t>(i)].entry_ns);
  out += "| ";
  if (cpus > 1) {
    // A stream: the creator, allowed every CPU, makes detached threads back
    // to back; wake_up_new_task puts most of them on another CPU than the
    // creator's (cached stacks: each exits before long and leaves its own).
    unpin_self(cpus);
    out += remote_stream(64);
    out += "| " + idle_stream(32);
  }
  out += "\n";
  if (::write(fd, out.data(), out.size()) != static_cast<ssize_t>(out.size())) ::_exit(1);
  ::_exit(0);
}
}  // namespace

std::vector<Measurement> measure_thread_start(int rounds, int cpus) {
  std::vector<double> cached, fresh, remote, idle;
  for (int r = 0; r < rounds; ++r) {
    const std::string text = forked_report([cpus](int fd) { thread_start_child(fd, cpus); });
    std::vector<std::string> parts;
    for (std::size_t at = 0;;) {
      const auto bar = text.find('|', at);
      parts.push_back(text.substr(at, bar == std::string::npos ? bar : bar - at));
      if (bar == std::string::npos) break;
      at = bar + 1;
    }
    if (parts.size() != 3 && parts.size() != 4)
      throw std::runtime_error("calibrate: the thread-start probe failed");
    std::vector<double>* into[] = {&cached, &fresh, &remote, &idle};
    for (std::size_t i = 0; i < parts.size(); ++i) {
      std::istringstream in(parts[i]);
      for (double ns; in >> ns;) into[i]->push_back(ns * 1e-9);
    }
  }
  const double start = quantile(cached, 0.5);
  std::vector<double> extra, remote_extra, idle_extra;
  for (double f : fresh) extra.push_back(std::max(0.0, f - start));
  for (double f : remote) remote_extra.push_back(std::max(0.0, f - start));
  if (remote_extra.empty()) remote_extra.push_back(0);
  // Those mapped new stacks: stack_fault is theirs too.
  const double remote_start = start + quantile(remote_extra, 0.5) + quantile(extra, 0.5);
  for (double f : idle) idle_extra.push_back(std::max(0.0, f - remote_start));
  if (idle_extra.empty()) idle_extra.push_back(0);
  return {summarize("thread_start", cached,
                    fmt::format("forked child, CPU 0: a new thread's CPU clock first thing in its "
                                "function, on a cached stack ({} rounds of 8)",
                                rounds)),
          summarize("stack_fault", extra,
                    fmt::format("the same on freshly mapped stacks (7 threads kept alive), less "
                                "thread_start {:.1f} us ({} rounds)",
                                start * 1e6, rounds)),
          summarize("thread_start_remote", remote_extra,
                    cpus > 1 ? fmt::format("the same, 64 threads made back to back by an unpinned "
                                           "creator: those started on another CPU than the "
                                           "creator's ({} of {}), less thread_start",
                                           remote.size(), 64 * rounds)
                             : std::string("one CPU: a new thread starts on its creator's")),
          summarize("thread_start_idle", idle_extra,
                    cpus > 1 ? fmt::format("32 threads made 3 ms apart and kept blocked (the "
                                           "other CPU idle in between): those started there "
                                           "({} of {}), less thread_start, thread_start_remote "
                                           "and stack_fault",
                                           idle.size(), 32 * rounds)
                             : std::string("one CPU: a new thread starts on its creator's"))};
}

namespace {
void* block_until(void* arg) {
  static_cast<std::atomic<bool>*>(arg)->wait(false);
  return nullptr;
}

// The creator's CPU time in pthread_create, `n` pairs, on the calling thread
// (pinned to CPU 0, so the new threads are too): own[i] a thread on a stack
// mapped and touched beforehand, glibc[i] one with default attributes. Every
// thread stays blocked until the end, so both kinds make a new kernel stack
// and glibc's stack cache, drained first, never has a stack to give: a pair's
// difference is allocate_stack's mapping of a new stack. With `spinner`, a
// pair counts only if the spinner on CPU 1 advanced across it. False if a
// creation or a mapping failed (the threads made are released and joined
// first: it runs on a std::thread, which must not throw).
bool creation_pairs(int n, std::size_t cached_stacks, const Spinner* spinner,
                    std::vector<double>& own, std::vector<double>& glibc) {
  constexpr std::size_t kOwnStack = 64 << 10;
  std::atomic<bool> release{false};
  std::vector<pthread_t> threads;
  std::vector<void*> stacks;
  bool ok = true;
  // The creator's CPU time in seconds, or a negative value if it failed.
  auto create = [&](pthread_attr_t* attr) {
    pthread_t th;
    const auto c0 = thread_cpu_ns();
    if (pthread_create(&th, attr, block_until, &release) != 0) return -1.0;
    const double cost = (thread_cpu_ns() - c0) * 1e-9;
    threads.push_back(th);
    return cost;
  };
  for (std::size_t i = 0; ok && i < cached_stacks + 2; ++i)  // drain the cache
    ok = create(nullptr) >= 0;
  for (int i = 0, tries = 0; ok && i < n && tries < 20 * n; ++tries) {
    void* mem = mmap(nullptr, kOwnStack, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (mem == MAP_FAILED) {
      ok = false;
      break;
    }
    std::memset(mem, 1, kOwnStack);
    stacks.push_back(mem);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstack(&attr, mem, kOwnStack);
    const auto s0 = spinner ? spinner->spins() : 0;
    const double a = create(&attr);
    const double b = a >= 0 ? create(nullptr) : -1.0;
    pthread_attr_destroy(&attr);
    ok = a >= 0 && b >= 0;
    if (!ok || (spinner && spinner->spins() == s0)) continue;
    own.push_back(a);
    glibc.push_back(b);
    ++i;
  }
  release = true;
  release.notify_all();
  for (pthread_t th : threads) pthread_join(th, nullptr);
  for (void* mem : stacks) munmap(mem, kOwnStack);
  return ok;
}
}  // namespace

std::vector<Measurement> measure_stack_mapping(int rounds, int cpus, double reserve) {
  const auto size = static_cast<std::size_t>(reserve > 0 ? reserve : 8 << 20);
  const auto [cache, cache_how] = stack_cache_size();
  const auto cached_stacks = static_cast<std::size_t>(cache / static_cast<double>(size));
  std::vector<double> unmap, unmap_shared, advise;
  std::vector<double> own, glibc, own_shared, glibc_shared;
  bool created = true;
  std::thread t([&] {
    pin_self(0);
    map_unmap_stacks(size, rounds, unmap, &advise);
    created = creation_pairs(rounds, cached_stacks, nullptr, own, glibc);
    if (cpus > 1) {
      // The spinner must be on CPU 1 while munmap runs (the kernel only
      // interrupts CPUs where the process is active): wait until it runs,
      // and count only the unmaps during which it ran throughout.
      const Spinner spinner(1);
      for (int i = 0, tries = 0; i < rounds && tries < 20 * rounds; ++tries) {
        std::vector<double> one;
        const auto s0 = spinner.spins();
        map_unmap_stacks(size, 1, one);
        if (spinner.spins() == s0) continue;  // the spinner was off CPU 1
        unmap_shared.push_back(one.front());
        ++i;
      }
      if (created)
        created = creation_pairs(rounds, cached_stacks, &spinner, own_shared, glibc_shared);
    }
  });
  t.join();
  if (!created)
    throw std::runtime_error("calibrate: the stack-mapping probe could not create its threads");
  const double alone = quantile(unmap, 0.5);
  std::vector<double> shoot;
  for (double u : unmap_shared) shoot.push_back(std::max(0.0, u - alone));
  if (shoot.empty()) shoot.push_back(0);
  // Per pair, the default thread less the median of the own-stack ones (the
  // spread of the figure is that of the mapping).
  const double own_alone = quantile(own, 0.5);
  std::vector<double> map;
  for (double g : glibc) map.push_back(std::max(0.0, g - own_alone));
  const double map_alone = quantile(map, 0.5);
  std::vector<double> map_remote;
  const double own_remote = own_shared.empty() ? 0 : quantile(own_shared, 0.5);
  for (double g : glibc_shared) map_remote.push_back(std::max(0.0, g - own_remote - map_alone));
  if (map_remote.empty()) map_remote.push_back(0);
  return {
      summarize("stack_cache", {cache}, cache_how),
      summarize("stack_map", map,
                fmt::format("creator CPU in pthread_create for a new {} stack less for one on "
                            "a stack touched beforehand, {} interleaved pairs, threads kept "
                            "blocked",
                            format_bytes(static_cast<double>(size)), rounds)),
      summarize("stack_unmap", unmap,
                "munmap of that stack, no other thread of the process running"),
      summarize("stack_madvise", advise,
                "madvise(MADV_DONTNEED) of that stack below its 2 touched pages (glibc's "
                "advise_stack_range at a thread's exit), before the munmap"),
      summarize("tlb_shootdown", shoot,
                cpus > 1 ? "munmap while a thread of the process spins on CPU 1, minus stack_unmap"
                         : "one CPU: no other CPU to interrupt"),
      summarize("stack_map_remote", map_remote,
                cpus > 1 ? "the stack_map pairs while a thread of the process spins on CPU 1, "
                           "minus stack_map"
                         : "one CPU: no other CPU to interrupt")};
}

namespace {
// The forked child of measure_fresh_creations: writes "cost_ns remote" per
// measured creation. The child and so its threads are pinned to CPU 0: a
// new thread waits there until its creator is done, and no creation pays
// the start on the other, idle, CPU (wake_ipi and fork_activate, measured
// on their own and noisy: subtracted from creations that paid them, their
// errors moved this field between 0 and 5.4 us in one morning, 2026-12-05).
// The measured creations come back to back, as a runtime's start makes
// them: made 200 us apart, each after a sleep, they also paid the
// creator's cold caches (the model charges cache_refill for that on the
// wake): 25-28 us each (median) against 14-16 back to back, 12:30 UTC.
[[noreturn]] void fresh_creation_child(int fd, std::size_t stack) {
  constexpr int kMeasured = 6;
  break_copy_on_write();
  pin_self(0);
  std::atomic<bool> release{false};
  std::vector<BlockedProbe> probes(kMeasured + 1);
  std::vector<pthread_t> threads(kMeasured + 1);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, stack);
  std::vector<std::int64_t> costs(probes.size());
  for (std::size_t i = 0; i < probes.size(); ++i) {
    probes[i].release = &release;
    StreamProbe& p = probes[i].probe;
    p.creator_cpu = sched_getcpu();
    const auto c0 = thread_cpu_ns();
    if (pthread_create(&threads[i], &attr, blocked_probe_thread, &probes[i]) != 0) ::_exit(1);
    costs[i] = thread_cpu_ns() - c0;
    // The first stands for the runner's sampler thread, made before the
    // origin; the others are made back to back, as a runtime's start makes
    // them (each waits on CPU 0 until the creator is done).
    if (i == 0) {
      ::usleep(2000);
      while (!p.done.load(std::memory_order_acquire)) ::usleep(50);
    }
  }
  std::string out;
  for (std::size_t i = 0; i < probes.size(); ++i) {
    const StreamProbe& p = probes[i].probe;
    while (!p.done.load(std::memory_order_acquire)) ::usleep(50);
    if (i > 0) out += fmt::format("{} {} ", costs[i], p.cpu != p.creator_cpu ? 1 : 0);
  }
  pthread_attr_destroy(&attr);
  release = true;
  release.notify_all();
  for (pthread_t t : threads) pthread_join(t, nullptr);
  out += "\n";
  if (::write(fd, out.data(), out.size()) != static_cast<ssize_t>(out.size())) ::_exit(1);
  ::_exit(0);
}
}  // namespace

std::vector<FreshCreation> measure_fresh_creations(int rounds, int cpus, double reserve) {
  // Larger than any stack glibc's cache holds (it serves a stack of at least
  // the size asked for): every creation maps its own, as in the runner's
  // children, whose caches are empty.
  const auto stack = static_cast<std::size_t>(reserve > 0 ? reserve : 8 << 20) + (64 << 10);
  std::vector<FreshCreation> all;
  for (int r = 0; r < rounds; ++r) {
    const std::string text = forked_report([stack](int fd) { fresh_creation_child(fd, stack); });
    std::istringstream in(text);
    double ns = 0;
    int remote = 0;
    for (int index = 2; in >> ns >> remote; ++index)
      all.push_back({ns * 1e-9, index, cpus > 1 && remote != 0});
  }
  if (all.empty()) throw std::runtime_error("calibrate: the fresh-creation probe failed");
  return all;
}

Measurement fresh_creation_field(const std::vector<FreshCreation>& samples, double thread_create,
                                 double stack_map, double kstack_alloc, double wake_ipi) {
  std::vector<double> extra;
  int remote = 0, later = 0;
  for (const FreshCreation& f : samples) {
    // The run's first (index 2) is thread_create_first's; from the third
    // creation of a child on, its CPU's two cached kernel stacks are taken.
    if (f.index <= 2) continue;
    const double parts = thread_create + stack_map + kstack_alloc + (f.remote ? wake_ipi : 0.0);
    extra.push_back(f.cost - parts);
    remote += f.remote ? 1 : 0;
    ++later;
  }
  if (extra.empty()) return summarize("thread_create_fresh", {0.0}, "no later creation measured");
  // The mean: the model charges it once per creation, and a runtime's start
  // adds them up; a negative mean (the parts already cover it) is 0.
  const double mean = mean_of(extra);
  return summarize(
      "thread_create_fresh", {std::max(0.0, mean)},
      fmt::format("forked children as the runner's, pinned to CPU 0: {} creations back to back "
                  "of threads kept blocked, none exited, after each child's first measured one "
                  "({} started on another CPU), the creator's CPU less thread_create, stack_map, "
                  "kstack_alloc (3rd on): mean {} (median {}, p10 {}, p90 {})",
                  later, remote, format_seconds(mean), format_seconds(quantile(extra, 0.5)),
                  format_seconds(quantile(extra, 0.1)), format_seconds(quantile(extra, 0.9))));
}

}  // namespace poolsim::real::calib
