// calibrate_memory.cpp: what each runtime allocates, measured by `poolsim
// calibrate` (docs/calibration.md, "Runtime memory").
// Each experiment runs a real backend (real/pool.cpp, real/virtual_threads.cpp,
// real/event_loop.cpp, real/tbb.cpp) through run_scenario, so every
// repetition is a forked child measured exactly as `poolsim run` measures
// memory_peak (real/runner.cpp: anonymous memory added after the baseline).
// A forked child inherits its parent's glibc stack cache (up to 40 MiB of
// exited threads' stacks, already resident) and its malloc arenas (the child
// puts them on its free list, __malloc_fork_unlock_child): had calibrate's
// process run threads before, the child's workers would take those and add
// nothing (runtime_touch measured 0 that way). So calibrate runs these
// experiments first, before any experiment creates a thread in its process
// (run_runtime_memory), and derives the fields at the end, once stack_touch
// is known (runtime_memory_fields). A figure is the mean over the
// repetitions; a difference of two experiments subtracts their means.
// Pages are 4 KiB, so every field is known to about a page per run (less
// per object where many objects share the difference); a median snaps to a
// whole page where the runs differ by one (a pool worker read 16, 16, 24 KiB:
// median 16 or 24 by the luck of the draw, mean 18.7), and the validator
// compares the mean of its repetitions, so the expected value is what a
// field must hold.
//   malloc_arena     a forked child of the thread-free process: RssAnon added
//                    by 8 blocked threads that each malloc once, less that
//                    added by 8 that do not, per thread (all 16 alive, so no
//                    stack is reused); the child checks that it inherited no
//                    arena but the main one.
//   malloc_arenas_per_cpu  the same child then holds 8 per CPU + 8 threads
//                    alive that each malloc once and counts the arenas
//                    (malloc_info's <heap> entries), per CPU of its affinity
//                    mask: glibc stops creating them at 8 per CPU (64-bit
//                    NARENAS_FROM_NCORES) unless M_ARENA_MAX says otherwise.
//   arena_create     in the same child, each of the 8 malloc-once threads
//                    times its first malloc (a new arena) and a second one
//                    with its CPU clock; the median difference.
//   arena_create_first  the first of them to finish its malloc (it mapped
//                    the child's first arena) less the median of the other
//                    seven; median over the children. A forked process's
//                    first arena costs about twice the later ones here (97
//                    against 46 us, 2026-12-07: a main-thread mapping of
//                    the same shape first took 93 us itself and left the
//                    first arena 77 us): the runner's children are forked,
//                    so each repetition's first runtime thread pays it.
//   arena_header     the offset of those threads' first block in its heap
//                    (64 MiB-aligned, heap_for_ptr): what glibc's own
//                    structures take of a new arena's first page; median.
//   runtime_touch    pool, 1 worker, 16 `cpu: 50us` tasks: memory_peak less
//                    stack_touch and malloc_arena (the worker's stack and
//                    arena).
//   fiber_touch      virtual threads, 1 carrier, a batch of 1,000 `wait:
//                    50ms` tasks (1,000 fibers asleep at once) less the same
//                    with 1 task, per fiber.
//   carrier_touch    the 1-task run of fiber_touch less what the simulator
//                    charges for it besides: stack_touch, malloc_arena and
//                    runtime_touch of its one carrier thread, carrier_stack
//                    and one fiber_touch. The rest is Boost.Fiber's
//                    dispatcher fiber, one per thread (a default_stack from
//                    malloc, its context at the top), which no thread-stack
//                    reading sees (2026-12-05: 36 KiB, 11.4 KiB of it; each
//                    further carrier added 9-11 KiB beyond its thread).
//   loop_task_touch  event loop, 1 loop, 2,000 such tasks less 1, per task.
//   tbb_arena        oneTBB, 1 thread, 16 `cpu: 50us` tasks: memory_peak
//                    less stack_touch and malloc_arena.
//   tbb_worker       oneTBB, 2 threads less 1 thread, per extra worker the
//                    library started (threads_peak), less stack_touch and
//                    malloc_arena; 0 when it starts no second worker (one
//                    CPU).
//   tbb_task         oneTBB, 1 thread, a batch of 4,000 `cpu: 100us` tasks
//                    less 16 such tasks, per task: the batch is enqueued in
//                    a few ms, while the worker has run a few dozen.
//   *_stack          a forked child of the thread-free process runs one
//                    repetition of a real backend in its own process
//                    (run_repetition, no sampler thread; 4 threads, 200
//                    `cpu: 100us` tasks at 2,000/s, so that workers park and
//                    wake) and then reads the resident pages (mincore) of
//                    every thread stack the run mapped (kept in glibc's
//                    stack cache after the join, with the pages its thread
//                    touched: start_thread frees only what lies 16 KiB
//                    below its frame); a stack is a rw mapping right above a
//                    one-page PROT_NONE guard. Per stack, its resident bytes
//                    beyond stack_touch: pool_stack, steal_stack,
//                    asio_stack and loop_stack their sum (the pool,
//                    work stealing, asio pool, event loop), carrier_stack
//                    per carrier (virtual threads), worker_stack the
//                    deepest stack of the four thread runtimes' runs.
//                    runtime_touch is then the pool's memory_peak less
//                    what the simulator charges one pool worker: also
//                    min(worker_stack, pool_stack).
#include <fcntl.h>
#include <fmt/format.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "models/scenario_loader.hpp"
#include "models/workload.hpp"
#include "real/calibrate_experiments.hpp"
#include "real/runner.hpp"

namespace poolsim::real::calib {

namespace {
// The real backend `backend` (a YAML flow map) on a batch of `count` tasks
// made of the single phase `phase`, `reps` forked repetitions after a warm-up.
MemoryRun backend_memory(const std::string& backend, int count, const std::string& phase,
                         int reps) {
  const std::string yaml = fmt::format(
      "name: calibrate-runtime-memory\nseed: 1\nmachine: default\n"
      "workload:\n  arrival: {{kind: batch, count: {}}}\n  task:\n    - {}\n"
      "backend: {}\nrun: {{reps: {}, warmup: 1, timeout: 60s}}\n",
      count, phase, backend, reps);
  const Scenario s = load_scenario_text(yaml, "<calibrate>");
  const Workload w = generate_workload(s);
  const std::vector<RunResult> runs = run_scenario(s, w, RealOptions{});
  std::vector<double> mem, threads, start;
  for (const RunResult& r : runs) {
    if (auto it = r.extra.find("worker_start_cpu"); it != r.extra.end())
      start.push_back(it->second);
    std::int64_t done = 0;
    for (const TaskRecord& rec : r.records) done += rec.outcome == TaskOutcome::completed;
    if (done < count)
      throw std::runtime_error("calibrate: a runtime-memory run completed too few tasks");
    mem.push_back(static_cast<double>(r.counters.memory_peak));
    threads.push_back(static_cast<double>(r.counters.threads_peak));
  }
  return {mean_of(mem), quantile(threads, 0.5), start.empty() ? -1 : quantile(start, 0.5)};
}

double kib(double b) { return b / 1024; }

// ---- worker stacks (in a forked child) --------------------------------------
// The thread stacks mapped in this process: [low, high) of every rw mapping
// without a file right above a one-page PROT_NONE mapping (glibc's
// allocate_stack: one mmap, the guard mprotect'ed at its low end; a malloc
// heap's PROT_NONE part lies above its rw part and is larger).
std::vector<std::pair<std::uintptr_t, std::uintptr_t>> thread_stacks() {
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> out;
  std::ifstream maps("/proc/self/maps");
  std::uintptr_t prev_hi = 0;
  bool prev_guard = false;
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  for (std::string line; std::getline(maps, line);) {
    std::istringstream in(line);
    std::string range, perms, offset, dev, path;
    long inode = 0;
    in >> range >> perms >> offset >> dev >> inode >> path;
    const std::size_t dash = range.find('-');
    const std::uintptr_t lo = std::stoull(range.substr(0, dash), nullptr, 16);
    const std::uintptr_t hi = std::stoull(range.substr(dash + 1), nullptr, 16);
    const bool anon = inode == 0 && path.empty();
    if (anon && perms.rfind("rw", 0) == 0 && prev_guard && prev_hi == lo) out.emplace_back(lo, hi);
    prev_guard = anon && perms.rfind("---", 0) == 0 && hi - lo == page;
    prev_hi = hi;
  }
  return out;
}

// Resident bytes of [lo, hi) (mincore).
double resident_bytes(std::uintptr_t lo, std::uintptr_t hi) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> v((hi - lo) / page);
  if (::mincore(reinterpret_cast<void*>(lo), hi - lo, v.data()) != 0) return -1;
  std::size_t n = 0;
  for (const unsigned char c : v) n += c & 1;
  return static_cast<double>(n * page);
}

// The child: one repetition of `backend`, then "resident resident ..." of
// the stacks that run mapped, on fd.
[[noreturn]] void stack_probe_child(int fd, const std::string& backend) {
  const std::string yaml = fmt::format(
      "name: calibrate-worker-stacks\nseed: 1\nmachine: default\n"
      "workload:\n  arrival: {{kind: poisson, rate: 2000/s, count: 200}}\n  task:\n"
      "    - cpu: 100us\nbackend: {}\nrun: {{reps: 1, warmup: 0, timeout: 60s}}\n",
      backend);
  std::string out;
  try {
    const Scenario s = load_scenario_text(yaml, "<calibrate>");
    const Workload w = generate_workload(s);
    const auto before = thread_stacks();
    const std::set<std::pair<std::uintptr_t, std::uintptr_t>> old(before.begin(), before.end());
    RealOptions opt;
    opt.sample_period = Duration{0};
    run_repetition(s, w, opt);
    for (const auto& [lo, hi] : thread_stacks())
      if (!old.contains({lo, hi})) out += fmt::format("{} ", resident_bytes(lo, hi));
    out += "\n";
  } catch (const std::exception&) {
    out = "failed\n";
  }
  if (::write(fd, out.data(), out.size()) != static_cast<ssize_t>(out.size())) ::_exit(1);
  ::_exit(0);
}

// `reps` forked children, each running `backend` with `threads` threads.
StackRun stack_run(const std::string& backend, int threads, int reps) {
  StackRun r;
  r.threads = threads;
  for (int rep = 0; rep < reps; ++rep) {
    std::istringstream in(forked_report([&](int fd) { stack_probe_child(fd, backend); }));
    std::vector<double> stacks;
    for (double b; in >> b;) stacks.push_back(b);
    if (static_cast<int>(stacks.size()) < threads)
      throw std::runtime_error("calibrate: the worker-stack probe of " + backend +
                               " found fewer stacks than threads");
    r.reps.push_back(std::move(stacks));
  }
  return r;
}

// Per repetition: the stacks' bytes beyond stack_touch, summed / the most of one.
double stack_beyond(const std::vector<double>& stacks, double stack_touch) {
  double sum = 0;
  for (const double b : stacks) sum += std::max(0.0, b - stack_touch);
  return sum;
}
double deepest_beyond(const std::vector<double>& stacks, double stack_touch) {
  double most = 0;
  for (const double b : stacks) most = std::max(most, b - stack_touch);
  return most;
}
// Mean over the repetitions of stack_beyond.
double mean_beyond(const StackRun& r, double stack_touch) {
  std::vector<double> v;
  for (const auto& stacks : r.reps) v.push_back(stack_beyond(stacks, stack_touch));
  return mean_of(v);
}
std::string stack_list(const StackRun& r) {
  std::string s;
  for (const auto& stacks : r.reps) {
    s += s.empty() ? "" : "; ";
    for (std::size_t i = 0; i < stacks.size(); ++i)
      s += fmt::format("{}{:.0f}", i ? " " : "", kib(stacks[i]));
  }
  return s;
}

// ---- the malloc-arena probe (in a forked child) -------------------------------
// RssAnon of this process in bytes, read without malloc (a stack buffer), so
// that reading it adds nothing to what it reads.
long arena_probe_rss_anon() {
  char buf[8192];
  const int fd = ::open("/proc/self/status", O_RDONLY);
  if (fd < 0) return -1;
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return -1;
  buf[n] = '\0';
  const char* at = std::strstr(buf, "RssAnon:");
  return at ? std::atol(at + 8) * 1024 : -1;
}

// glibc's arenas: the <heap nr=...> entries of malloc_info (the main one included).
int arena_probe_count() {
  char* text = nullptr;
  std::size_t len = 0;
  FILE* f = ::open_memstream(&text, &len);
  if (f == nullptr) return -1;
  ::malloc_info(0, f);
  std::fclose(f);
  int n = 0;
  for (const char* p = text; (p = std::strstr(p, "<heap nr=")) != nullptr; ++p) ++n;
  std::free(text);
  return n;
}

// Threads that block until released; each calls malloc once first if asked.
// pthreads and an atomic wait: nothing here mallocs on the creating thread.
struct ArenaProbeThreads {
  static constexpr int kMax = 4096;
  pthread_t ids[kMax] = {};  // zeroed: written (touched) before any baseline
  void* blocks[kMax] = {};
  // CPU time (ns) of each thread's first malloc less its second one's.
  std::int64_t first_malloc[kMax] = {};
  int count = 0;
  bool malloc_once = false;
  std::atomic<int> next{0}, ready{0};
  std::atomic<bool> release{false};

  static void* body(void* arg) {
    auto* self = static_cast<ArenaProbeThreads*>(arg);
    void* block = nullptr;
    std::int64_t first = 0;
    if (self->malloc_once) {
      // The first malloc of a thread attaches it to an arena: a new one
      // (_int_new_arena: mmap of 2 x HEAP_MAX_SIZE, trimmed to one aligned
      // heap, mprotect of its header) while the process has fewer than the
      // limit; the second is an ordinary small allocation.
      const std::int64_t c0 = thread_cpu_ns();
      block = std::malloc(64);
      const std::int64_t c1 = thread_cpu_ns();
      void* again = std::malloc(64);
      const std::int64_t c2 = thread_cpu_ns();
      std::free(again);
      first = (c1 - c0) - (c2 - c1);
    }
    const int slot = self->next.fetch_add(1);
    self->blocks[slot] = block;  // kept, so the malloc stays
    self->first_malloc[slot] = first;
    self->ready.fetch_add(1);
    self->release.wait(false);
    return nullptr;
  }
  // Starts n (at most kMax) threads and waits until each has run up to its
  // wait; they inherit the caller's CPU mask.
  bool start(int n, bool with_malloc) {
    malloc_once = with_malloc;
    n = std::min(n, kMax - count);
    for (int i = 0; i < n; ++i)
      if (::pthread_create(&ids[count++], nullptr, &body, this) != 0) return false;
    while (ready.load() < count) ::usleep(200);
    return true;
  }
  // The median over the first n threads of their first block's offset in
  // its heap (glibc aligns a non-main arena's heap to HEAP_MAX_SIZE, 64 MiB
  // on 64-bit: malloc/arena.c heap_for_ptr): what the arena's own
  // structures took of its first page before it (arena_header).
  long median_first_offset(int n) const {
    constexpr std::uintptr_t kHeapMax = std::uintptr_t{64} << 20;
    std::vector<double> offsets;
    for (int i = 0; i < std::min(n, count); ++i)
      offsets.push_back(
          static_cast<double>(reinterpret_cast<std::uintptr_t>(blocks[i]) & (kHeapMax - 1)));
    return offsets.empty() ? -1 : std::lround(quantile(offsets, 0.5));
  }
  // The first arena's first-malloc cost (the first thread to finish its
  // malloc: on one CPU the one that mapped the process's first arena) less
  // the median of the others' (ns); -1 with fewer than two threads.
  long first_arena_extra(int n) const {
    n = std::min(n, count);
    if (n < 2) return -1;
    const double rest = quantile(std::vector<double>(first_malloc + 1, first_malloc + n), 0.5);
    return std::lround(static_cast<double>(first_malloc[0]) - rest);
  }
  // The median of the first n first-malloc costs (ns).
  long median_first_malloc(int n) const {
    return std::lround(
        quantile(std::vector<double>(first_malloc, first_malloc + std::min(n, count)), 0.5));
  }
  void finish() {
    release.store(true);
    release.notify_all();
    for (int i = 0; i < count; ++i) ::pthread_join(ids[i], nullptr);
  }
};

// The child: "inherited arenas, bytes per arena, arenas, cpus, first
// malloc ns alone, first malloc ns beside a busy CPU 1, first block's
// offset in its heap" on fd. The
// first-malloc batches run on CPU 0 (the child's mask for their time), the
// second one while a thread of the child spins on CPU 1 (two CPUs or more;
// else -1). Both map new arenas: 8 + 6 stay under the 8-per-CPU limit.
[[noreturn]] void arena_probe_child(int fd) {
  constexpr int kEach = 8, kRemote = 6;
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof set, &set);
  const int cpus = CPU_COUNT(&set);
  const int inherited = arena_probe_count();
  auto* first = new ArenaProbeThreads;
  auto* second = new ArenaProbeThreads;
  auto* beside = new ArenaProbeThreads;
  auto* many = new ArenaProbeThreads;
  arena_probe_rss_anon();
  const long a0 = arena_probe_rss_anon();
  bool ok = first->start(kEach, false);
  const long a1 = arena_probe_rss_anon();
  pin_self(0);
  ok = ok && second->start(kEach, true);
  const long a2 = arena_probe_rss_anon();
  const long arena_ns = second->median_first_malloc(kEach);
  const long first_extra = second->first_arena_extra(kEach);
  const long header = second->median_first_offset(kEach);
  long remote_ns = -1;
  if (ok && cpus > 1 && CPU_ISSET(1, &set)) {
    const Spinner spinner(1);
    ok = spinner.running() && beside->start(kRemote, true);
    remote_ns = beside->median_first_malloc(kRemote);
  }
  sched_setaffinity(0, sizeof set, &set);
  first->finish();
  second->finish();
  beside->finish();
  ok = ok && many->start(8 * cpus + 8, true);
  const int arenas = arena_probe_count();
  many->finish();
  char out[192];
  const int n = std::snprintf(out, sizeof out, "%d %ld %d %d %ld %ld %ld %ld\n",
                              ok ? inherited : -1, ((a2 - a1) - (a1 - a0)) / kEach, arenas, cpus,
                              arena_ns, remote_ns, header, first_extra);
  if (::write(fd, out, static_cast<std::size_t>(n)) != n) ::_exit(1);
  ::_exit(0);
}
}  // namespace

// The first touch of fresh anonymous pages, the faults a runtime's heap
// takes as it grows (its task objects: sim Kernel::heap_touch). A new
// mapping each round, so every page is one the process never touched; the
// thread is alone on CPU 0 (calibrate runs nothing beside it), and a round
// that an interruption lengthened is one of several (the median).
Measurement measure_page_fault(int rounds, int pages) {
  constexpr std::size_t kPage = 4096;
  const std::size_t bytes = static_cast<std::size_t>(pages) * kPage;
  std::vector<double> per_page;
  bool mapped = true;
  std::thread t([&] {
    pin_self(0);
    for (int r = 0; r < rounds; ++r) {
      void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (mem == MAP_FAILED) {
        mapped = false;
        break;
      }
      auto* p = static_cast<volatile char*>(mem);
      const auto t0 = now_ns();
      for (std::size_t i = 0; i < bytes; i += kPage) p[i] = 1;
      const auto t1 = now_ns();
      munmap(mem, bytes);
      per_page.push_back(static_cast<double>(t1 - t0) * 1e-9 / pages);
    }
  });
  t.join();
  if (!mapped) throw std::runtime_error("calibrate: the page-fault probe could not map memory");
  return summarize("page_fault", per_page,
                   fmt::format("a thread on CPU 0 maps {} pages and writes a byte to each: wall "
                               "time per page, {} rounds",
                               pages, rounds));
}

std::vector<Measurement> measure_malloc_arenas(int reps) {
  std::vector<double> bytes, per_cpu, create, remote, header, first;
  int arenas = 0, cpus = 0;
  for (int rep = 0; rep < reps; ++rep) {
    const std::string text = forked_report([](int fd) { arena_probe_child(fd); });
    int inherited = 0;
    long b = 0, ns = 0, remote_ns = 0, offset = 0, first_ns = -1;
    if (std::sscanf(text.c_str(), "%d %ld %d %d %ld %ld %ld %ld", &inherited, &b, &arenas, &cpus,
                    &ns, &remote_ns, &offset, &first_ns) != 8 ||
        inherited < 0 || cpus < 1)
      throw std::runtime_error("calibrate: the malloc-arena probe failed");
    // Inherited arenas would be reused by the probe's threads (nothing added).
    if (inherited != 1)
      throw std::logic_error(
          "calibrate: the malloc-arena probe ran after threads of calibrate's process had "
          "malloc'ed (it must run first)");
    bytes.push_back(static_cast<double>(b));
    per_cpu.push_back(static_cast<double>(arenas) / cpus);
    create.push_back(std::max(0L, ns) * 1e-9);
    if (remote_ns >= 0) remote.push_back(std::max(0L, remote_ns - ns) * 1e-9);
    header.push_back(static_cast<double>(offset));
    if (first_ns >= 0) first.push_back(std::max(0L, first_ns) * 1e-9);
  }
  if (first.empty()) first.push_back(0);
  // A first object beyond the first page (another malloc's layout) leaves
  // the model without a first page to fill: off.
  const double header_median = quantile(header, 0.5);
  const bool in_page = header_median > 0 && header_median < 4096;
  const bool one_cpu = remote.empty();
  if (one_cpu) remote.push_back(0);
  return {
      summarize("malloc_arena", bytes,
                fmt::format("forked child: RssAnon per blocked thread that malloc'ed once less "
                            "per one that did not, 8 of each ({} runs)",
                            reps)),
      summarize("malloc_arenas_per_cpu", per_cpu,
                fmt::format("forked child: {} arenas (malloc_info) with {} threads alive that "
                            "malloc'ed once, {} CPUs",
                            arenas, 8 * cpus + 8, cpus)),
      summarize("arena_create", create,
                fmt::format("forked child, CPU 0: thread CPU time of a thread's first malloc (a "
                            "new arena) less its second, median of 8 threads ({} runs)",
                            reps)),
      summarize("arena_create_first", first,
                fmt::format("forked child, CPU 0: the first new arena's first malloc (the "
                            "first of the 8 threads to finish it) less the median of the "
                            "others', median ({} runs)",
                            reps)),
      summarize("arena_create_remote", remote,
                one_cpu ? std::string("one CPU: no other CPU to be busy")
                        : fmt::format("the same, 6 threads, while a thread of the child spins "
                                      "on CPU 1, less arena_create ({} runs)",
                                      reps)),
      summarize("arena_header", {in_page ? header_median : 0.0},
                in_page
                    ? fmt::format("forked child: offset in its 64 MiB-aligned heap of the first "
                                  "block of each new arena's thread, median of 8 threads, "
                                  "median of {} runs",
                                  reps)
                    : fmt::format("off: the first block lay {:.0f} bytes into its heap, not "
                                  "in its first page",
                                  header_median)),
  };
}

namespace {
constexpr int kTbbStartRuns = 9;    // tbb_worker_start's runs (their spread is wide)
constexpr int kFirstSpawnRuns = 7;  // tbb_first_spawn's runs (fresh processes)

// tbb_first_spawn: oneTBB, 1 worker, a fork of 64 empty tasks, in forked
// repetitions of a process that never ran oneTBB (its tbbmalloc has no heap
// for any thread yet, as in a real run's child).
std::vector<double> tbb_first_spawn_runs() {
  const std::string yaml = fmt::format(
      "name: calibrate-tbb-first-spawn\nseed: 1\nmachine: default\n"
      "workload:\n  graph: {{fork_join: {{depth: 1, fanout: 64, leaf: [{{cpu: 0ns}}], "
      "fork: [{{cpu: 0ns}}], join: [{{cpu: 0ns}}]}}}}\n"
      "backend: {{kind: tbb, threads: 1}}\nrun: {{reps: {}, warmup: 0, timeout: 60s}}\n",
      kFirstSpawnRuns);
  const Scenario s = load_scenario_text(yaml, "<calibrate>");
  const Workload w = generate_workload(s);
  RealOptions opt;
  opt.sample_period = Duration{0};
  std::vector<double> extra;
  for (const RunResult& r : run_scenario(s, w, opt))
    if (const double e = first_spawn_extra(r.records); e >= 0) extra.push_back(e);
  return extra;
}
}  // namespace

double first_spawn_extra(const std::vector<TaskRecord>& records) {
  for (const auto& [at, submits] : handovers_by_release(records)) {
    if (submits.size() < 3) continue;
    std::vector<double> later;
    for (std::size_t i = 2; i < submits.size(); ++i) later.push_back(submits[i] - submits[i - 1]);
    return std::max(0.0, submits[1] - submits[0] - quantile(later, 0.5));
  }
  return -1;
}

RuntimeMemoryRuns run_runtime_memory(int reps) {
  const std::string short_task = "cpu: 50us", sleep = "wait: 50ms";
  RuntimeMemoryRuns r;
  r.reps = reps;
  r.pool = backend_memory("{kind: pool, threads: 1}", 16, short_task, reps);
  r.vt1 = backend_memory("{kind: virtual-threads, carriers: 1}", 1, sleep, reps);
  r.vtn = backend_memory("{kind: virtual-threads, carriers: 1}", 1000, sleep, reps);
  r.el1 = backend_memory("{kind: event-loop, loops: 1}", 1, sleep, reps);
  r.eln = backend_memory("{kind: event-loop, loops: 1}", 2000, sleep, reps);
  r.tbb1 = backend_memory("{kind: tbb, threads: 1}", 16, short_task, reps);
  r.tbb2 = backend_memory("{kind: tbb, threads: 2}", 16, short_task, reps);
  // tbb_worker_start: a batch long enough for both workers to find work
  // when they enter, and 9 runs: a worker's CPU before its first entry was
  // 120-540 us in runs minutes apart (2026-12-06).
  r.tbb_start = backend_memory("{kind: tbb, threads: 2}", 200, "cpu: 200us", kTbbStartRuns);
  r.tbbq = backend_memory("{kind: tbb, threads: 1}", 4000, "cpu: 100us", reps);
  r.tbb_first_spawn = tbb_first_spawn_runs();
  const int stack_reps = std::max(3, reps);
  r.pool_stacks = stack_run("{kind: pool, threads: 4}", 4, stack_reps);
  r.steal_stacks = stack_run("{kind: work-stealing, threads: 4}", 4, stack_reps);
  r.asio_stacks = stack_run("{kind: asio-pool, threads: 4}", 4, stack_reps);
  r.loop_stacks = stack_run("{kind: event-loop, loops: 4}", 4, stack_reps);
  r.carrier_stacks = stack_run("{kind: virtual-threads, carriers: 4}", 4, stack_reps);
  return r;
}

namespace {
// worker_stack, pool_stack, steal_stack, asio_stack, loop_stack, carrier_stack.
std::vector<Measurement> worker_stack_fields(const RuntimeMemoryRuns& r, double stack_touch) {
  // worker_stack caps what one worker adds: the page (or pages) the first
  // callers' lazy binding deepens a stack by, so the median over the runs
  // whose deepest stack went beyond stack_touch at all. Until 2026-12-06 the
  // mean over every run of the four runtimes: runtimes whose workers bind
  // nothing new (the pool, work stealing: 0) halved it to 2 KiB, and a
  // 2-loop event loop was charged 2 KiB a loop against the 4 KiB each of
  // its loops' stacks had.
  std::vector<double> deepest, deeper;
  for (const StackRun* run : {&r.pool_stacks, &r.steal_stacks, &r.asio_stacks, &r.loop_stacks})
    for (const auto& stacks : run->reps) {
      deepest.push_back(deepest_beyond(stacks, stack_touch));
      if (deepest.back() > 0) deeper.push_back(deepest.back());
    }
  const auto total = [&](MachineFieldName field, const StackRun& run, const char* what) {
    return summarize(field, {mean_beyond(run, stack_touch)},
                     fmt::format("forked child, real {} ({} threads): resident KiB of each "
                                 "thread stack per run ({}), beyond stack_touch, summed, mean",
                                 what, run.threads, stack_list(run)));
  };
  return {
      summarize("worker_stack", {deeper.empty() ? 0.0 : quantile(deeper, 0.5)},
                fmt::format("the deepest thread stack beyond stack_touch {:.0f} KiB of each run "
                            "of the pool, work stealing, asio pool and event loop, median of "
                            "the {} of {} runs where it went beyond",
                            kib(stack_touch), deeper.size(), deepest.size())),
      total("pool_stack", r.pool_stacks, "pool"),
      total("steal_stack", r.steal_stacks, "work stealing"),
      total("asio_stack", r.asio_stacks, "asio pool"),
      total("loop_stack", r.loop_stacks, "event loop"),
      summarize("carrier_stack",
                {mean_beyond(r.carrier_stacks, stack_touch) / r.carrier_stacks.threads},
                fmt::format("forked child, real virtual threads (4 carriers): resident KiB of "
                            "each thread stack per run ({}), beyond stack_touch, per carrier, mean",
                            stack_list(r.carrier_stacks))),
  };
}
}  // namespace

std::vector<Measurement> tbb_start_fields(const RuntimeMemoryRuns& r, double thread_costs) {
  const Measurement first_spawn =
      r.tbb_first_spawn.empty()
          ? summarize("tbb_first_spawn", {0.0}, "no oneTBB fork run released its tasks here: 0")
          : summarize("tbb_first_spawn", r.tbb_first_spawn,
                      fmt::format("forked runs of the real oneTBB, 1 worker, a fork of 64 empty "
                                  "tasks, in a process that never ran oneTBB: the gap between "
                                  "the worker's first two hand-overs less the median of its "
                                  "later ones, median of {} runs",
                                  r.tbb_first_spawn.size()));
  const double start = r.tbb_start.start_cpu;
  if (start < 0)
    return {summarize("tbb_worker_start", {0.0}, "oneTBB reported no worker's start here: 0"),
            first_spawn};
  return {
      first_spawn,
      summarize("tbb_worker_start", {std::max(0.0, start - thread_costs)},
                fmt::format("real oneTBB, 2 threads, a batch of 200 tasks of 200 us: its "
                            "workers' CPU time from their creation to their first arena "
                            "entry, mean per run, median of {} runs ({}), less thread_start, "
                            "stack_fault and arena_create ({})",
                            kTbbStartRuns, format_seconds(start), format_seconds(thread_costs)))};
}

std::vector<Measurement> runtime_memory_fields(const RuntimeMemoryRuns& r, double stack_touch,
                                               double malloc_arena) {
  const double thread = stack_touch + malloc_arena;  // what the simulator charges per thread
  const double extra_workers = r.tbb2.threads - r.tbb1.threads;
  const double tbb_worker =
      extra_workers > 0 ? std::max(0.0, (r.tbb2.memory - r.tbb1.memory) / extra_workers - thread)
                        : 0.0;
  std::vector<Measurement> stacks = worker_stack_fields(r, stack_touch);
  // What the simulator charges the pool's one worker beyond stack_touch.
  const double pool_worker_stack = std::min(stacks[0].median, stacks[1].median);
  std::vector<Measurement> out{
      summarize("runtime_touch", {std::max(0.0, r.pool.memory - thread - pool_worker_stack)},
                fmt::format("real pool, 1 worker: memory_peak {:.0f} KiB less stack_touch "
                            "{:.0f} KiB, malloc_arena {:.0f} KiB and min(worker_stack, "
                            "pool_stack) {:.0f} KiB (mean of {} runs)",
                            kib(r.pool.memory), kib(stack_touch), kib(malloc_arena),
                            kib(pool_worker_stack), r.reps)),
      summarize("fiber_touch", {std::max(0.0, (r.vtn.memory - r.vt1.memory) / 999)},
                fmt::format("real virtual threads, 1 carrier: 1,000 sleeping fibers {:.0f} KiB "
                            "less 1 fiber {:.0f} KiB, per fiber",
                            kib(r.vtn.memory), kib(r.vt1.memory))),
      summarize("loop_task_touch", {std::max(0.0, (r.eln.memory - r.el1.memory) / 1999)},
                fmt::format("real event loop, 1 loop: 2,000 tasks on timers {:.0f} KiB less 1 "
                            "task {:.0f} KiB, per task",
                            kib(r.eln.memory), kib(r.el1.memory))),
      summarize("tbb_arena", {std::max(0.0, r.tbb1.memory - thread)},
                fmt::format("real oneTBB, 1 thread: memory_peak {:.0f} KiB less stack_touch and "
                            "malloc_arena",
                            kib(r.tbb1.memory))),
      summarize("tbb_worker", {tbb_worker},
                extra_workers > 0
                    ? fmt::format("real oneTBB, 2 threads {:.0f} KiB less 1 thread {:.0f} KiB, "
                                  "per extra worker ({:.0f}) less stack_touch and malloc_arena",
                                  kib(r.tbb2.memory), kib(r.tbb1.memory), extra_workers)
                    : std::string("oneTBB started no second worker here (one CPU): 0")),
      summarize("tbb_task", {std::max(0.0, (r.tbbq.memory - r.tbb1.memory) / (4000 - 16))},
                fmt::format("real oneTBB, 1 thread: a batch of 4,000 tasks {:.0f} KiB less 16 "
                            "tasks {:.0f} KiB, per task",
                            kib(r.tbbq.memory), kib(r.tbb1.memory))),
  };
  // carrier_touch: the 1-fiber run less the simulator's charges for it.
  const double runtime_touch = field_value(out, "runtime_touch");
  const double fiber_touch = field_value(out, "fiber_touch");
  const double carrier_stack = field_value(stacks, "carrier_stack");
  const double charged = thread + runtime_touch + carrier_stack + fiber_touch;
  out.push_back(summarize(
      "carrier_touch", {std::max(0.0, r.vt1.memory - charged)},
      fmt::format("real virtual threads, 1 carrier, 1 sleeping fiber: memory_peak {:.1f} KiB less "
                  "stack_touch, malloc_arena, runtime_touch, carrier_stack and fiber_touch "
                  "({:.1f} KiB): Boost.Fiber's dispatcher fiber",
                  kib(r.vt1.memory), kib(charged))));
  out.insert(out.end(), stacks.begin(), stacks.end());
  return out;
}

}  // namespace poolsim::real::calib
