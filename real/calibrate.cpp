// calibrate.cpp: the experiments behind `poolsim calibrate`.
//
// One experiment per MachineProfile field, each isolating its mechanism
// (the methods and their comparison with perf bench sched pipe and
// cyclictest are in docs/calibration.md):
//   cores           online CPUs (sysconf).
//   tick            1/HZ: jiffies per second from /proc/timer_list (root);
//                   else a CPU kept busy takes HZ local-timer interrupts a
//                   second (LOC in /proc/interrupts over a busy interval);
//                   else CONFIG_HZ from /proc/config.gz or /boot/config-*.
//   slice           sysctl_sched_base_slice (debugfs if mounted, else the
//                   kernel's default for its version: 0.75 ms before 6.15,
//                   0.70 ms from 6.15) times 1 + ilog2(min(cpus, 8)); checked
//                   against the run lengths of two CPU-bound threads pinned to
//                   one CPU (EEVDF runs them about ceil(slice/tick) ticks in
//                   turn); if the observed quantum disagrees, the observed
//                   quantum is used instead.
//   switch_cost     pipe ping-pong between two threads pinned to one CPU: a
//                   round trip is two switches (as perf bench sched pipe).
//   wakeup_latency  condition-variable signal to the waiter running, waiter
//                   on another CPU kept awake by a SCHED_IDLE spinner (a
//                   woken normal task preempts an idle-policy task at once).
//   idle_exit       the same wake onto that CPU left idle, minus the above.
//   timer_slack     overshoot of a 1 ms clock_nanosleep on an awake CPU.
//   thread_create   the creator's CPU time inside pthread_create.
//   thread_exit     create-to-join wall time on one CPU, minus the creation
//                   and the two switches.
//   cache_refill    time of a pass over a 256 KiB working set after a 16 MiB
//                   buffer evicted it, minus a warm pass.
//   migration_cost  the same pass right after moving to another CPU, minus a
//                   warm pass.
//   stack_reserve   glibc's default thread stack size.
//   stack_touch     resident memory added per blocked thread (VmRSS over 64
//                   threads).
// Thread stacks outside glibc's stack cache:
//   stack_cache     glibc.pthread.stack_cache_size from `ld.so
//                   --list-tunables`, else glibc's default 40 MiB.
//   stack_map       on a thread pinned to CPU 0: what glibc's allocate_stack
//                   does for a stack the cache cannot give (mmap of
//                   stack_reserve with PROT_NONE, mprotect of all but the guard
//                   page to read-write) plus the first touch of its top two
//                   pages; wall time, median.
//   stack_unmap     munmap of that stack, no other thread of the process
//                   running.
//   tlb_shootdown   the same munmap while another thread of this process
//                   spins on CPU 1 (the kernel must flush that CPU's TLB),
//                   minus stack_unmap.
// A runtime's own per-task CPU work, measured by running the real backends
// themselves (real/pool.cpp, real/virtual_threads.cpp, real/event_loop.cpp,
// through run_repetition, in this process) on empty tasks: the run's CPU time
// (getrusage, every thread) divided by the task count, the median of several
// runs after a warm-up run. It includes the runner's per-task recording (a
// clock read at submit, start and end), which every real run pays too.
//   queue_handover  pool of 1 worker, a batch of `cpu: 0ns` tasks from the
//                   submitter: half the CPU per task (one push by the
//                   submitter, one pop by the worker).
//   fiber_create    virtual threads on 1 carrier, 1,000 closed clients
//                   issuing `cpu: 0ns` requests: the CPU per request less two
//                   queue_handover (the intake's push and pop).
//   fiber_switch    the same with `wait: 1ms` requests, so 1,000 virtual
//                   threads are alive and each resumes after ~1,000 others
//                   ran (its stack is cold): half the extra CPU per request
//                   (an unmount and a remount).
//   timer_arm       event loop of 1 loop, 1,000 closed clients: CPU per
//                   request with `wait: 1ms` less without (a timer armed,
//                   with 1,000 pending, and its completion dispatched).
// Wake-up placement:
//   wake_pack_util  a waker pinned to CPU 0 signals an unpinned waiter (a
//                   condition variable, every 3 ms) while a load thread on
//                   CPU 0 keeps it busy a fraction d of each millisecond, for
//                   d = 0, 20, 40, 60, 80, 90%; CPU 1 is idle, and the waiter
//                   is moved there before each wait (its previous CPU, idle
//                   for 3 ms when it is woken). The waiter runs
//                   on CPU 0 (packed) or CPU 1 (an idle CPU woken). Mainline
//                   Linux wakes CPU 1 (select_idle_sibling); a host that
//                   packs keeps it on CPU 0 while CPU 0 is lightly used. The
//                   value is the midpoint between the last level at which
//                   most wakes were packed and the first at which most were
//                   not (0: not packed even at d = 0).
//   wake_cost       the waker's thread CPU time across one FUTEX_WAKE of a
//                   thread blocked in FUTEX_WAIT on the waker's own CPU (both
//                   pinned to CPU 0, a wake every 2 ms), median, minus an
//                   empty pair of clock reads.
//   wake_ipi        the same with the waiter pinned to the idle CPU 1, minus
//                   wake_cost (the inter-processor interrupt).
#include "real/calibrate.hpp"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "models/scenario_loader.hpp"
#include "models/workload.hpp"
#include "real/runner.hpp"

namespace poolsim::real {
namespace {

std::int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
std::int64_t thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void pin_self(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

void unpin_self(int cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int i = 0; i < cpus; ++i) CPU_SET(i, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

Measurement summarize(std::string field, std::vector<double> samples, std::string unit, std::string method) {
  Measurement m;
  m.field = std::move(field);
  m.samples = static_cast<int>(samples.size());
  m.median = quantile(samples, 0.5);
  m.p10 = quantile(samples, 0.1);
  m.p90 = quantile(samples, 0.9);
  m.unit = std::move(unit);
  m.method = std::move(method);
  return m;
}

// A thread spinning at SCHED_IDLE on `cpu`: keeps that CPU out of idle
// states without delaying a normal thread woken there.
class IdleSpinner {
 public:
  explicit IdleSpinner(int cpu) : t_([this, cpu] {
    pin_self(cpu);
    sched_param p{};
    pthread_setschedparam(pthread_self(), SCHED_IDLE, &p);
    while (!stop_.load(std::memory_order_relaxed)) {
    }
  }) {}
  ~IdleSpinner() {
    stop_ = true;
    t_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread t_;
};

long long read_loc_interrupts(int cpu) {
  std::ifstream f("/proc/interrupts");
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string tag;
    in >> tag;
    if (tag != "LOC:") continue;
    long long v = 0;
    for (int i = 0; i <= cpu && in >> v; ++i) {
    }
    return v;
  }
  return -1;
}

// The kernel's jiffies counter (root can read /proc/timer_list); -1 if absent.
long long read_jiffies() {
  std::ifstream f("/proc/timer_list");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("jiffies: ", 0) == 0) return std::atoll(line.c_str() + 9);
  return -1;
}

int config_hz() {
  struct utsname u {};
  uname(&u);
  const std::string boot = std::string("/boot/config-") + u.release;
  for (const std::string& cmd : {std::string("zcat /proc/config.gz 2>/dev/null"), "cat " + boot + " 2>/dev/null"}) {
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) continue;
    char buf[512];
    int hz = 0;
    while (fgets(buf, sizeof buf, p))
      if (std::strncmp(buf, "CONFIG_HZ=", 10) == 0) hz = std::atoi(buf + 10);
    pclose(p);
    if (hz > 0) return hz;
  }
  return 0;
}

Measurement measure_tick(int rounds) {
  std::vector<double> samples;
  // Preferred: jiffies advance exactly HZ times a second, whatever the load.
  for (int r = 0; r < rounds; ++r) {
    const long long j0 = read_jiffies();
    const auto t0 = now_ns();
    timespec d{0, 250'000'000};
    clock_nanosleep(CLOCK_MONOTONIC, 0, &d, nullptr);
    const long long j1 = read_jiffies();
    const auto t1 = now_ns();
    if (j0 < 0 || j1 <= j0) break;
    samples.push_back(static_cast<double>(j1 - j0) / ((t1 - t0) * 1e-9));
  }
  if (!samples.empty()) {
    for (auto& hz : samples)
      for (double c : {100.0, 250.0, 300.0, 1000.0})
        if (std::fabs(hz - c) / c < 0.05) hz = c;
    for (auto& hz : samples) hz = 1.0 / hz;
    return summarize("tick", samples, "s", "jiffies per second (/proc/timer_list)");
  }
  // Else: local timer interrupts on a busy CPU (other hrtimers can only add
  // to the count, so the rate is an upper bound on HZ).
  for (int r = 0; r < rounds; ++r) {
    double hz = 0;
    std::thread t([&] {
      pin_self(0);
      const long long before = read_loc_interrupts(0);
      const auto t0 = now_ns();
      while (now_ns() - t0 < 300'000'000) {
      }
      const long long after = read_loc_interrupts(0);
      if (before >= 0 && after > before) hz = static_cast<double>(after - before) / ((now_ns() - t0) * 1e-9);
    });
    t.join();
    if (hz > 0) samples.push_back(hz);
  }
  std::string method = "local timer interrupts (LOC) on a busy CPU";
  if (samples.empty()) {
    const int hz = config_hz();
    if (hz <= 0) throw std::runtime_error("calibrate: cannot determine the scheduler tick (no LOC counter, no kernel config)");
    samples.push_back(hz);
    method = "CONFIG_HZ from the kernel config";
  }
  // Snap to the nearest configurable HZ when within 15%: the interrupt count
  // also includes the odd hrtimer interrupt.
  for (auto& hz : samples)
    for (double c : {100.0, 250.0, 300.0, 1000.0})
      if (std::fabs(hz - c) / c < 0.15) hz = c;
  for (auto& hz : samples) hz = 1.0 / hz;
  return summarize("tick", samples, "s", method);
}

// Run lengths of two CPU-bound threads sharing CPU 0. A run ends when the
// other thread has taken the CPU (a shared owner word changed hands), not at
// any gap in the clock: on a virtual machine the hypervisor steals short
// gaps from a running thread, and interrupts do too, without a switch.
std::vector<double> observed_quanta(double seconds) {
  std::vector<double> runs[2];
  std::atomic<int> ready{0};
  std::atomic<int> owner{-1};
  auto spin = [&](int id) {
    pin_self(0);
    ready.fetch_add(1);
    while (ready.load() < 2) sched_yield();
    const auto end = now_ns() + static_cast<std::int64_t>(seconds * 1e9);
    std::int64_t last = now_ns(), run_start = 0;
    bool have_run = false;
    for (;;) {
      const auto t = now_ns();
      if (owner.load(std::memory_order_relaxed) != id) {  // the other thread ran since
        if (have_run) runs[id].push_back((last - run_start) * 1e-9);
        owner.store(id, std::memory_order_relaxed);
        run_start = t;
        have_run = true;
      }
      last = t;
      if (t > end) break;
    }
  };
  std::thread a(spin, 0), b(spin, 1);
  a.join();
  b.join();
  std::vector<double> all;
  for (auto& r : runs)
    if (r.size() > 2) all.insert(all.end(), r.begin() + 1, r.end());  // drop the first run
  return all;
}

Measurement measure_slice(double tick, double seconds, int cpus) {
  const auto quanta = observed_quanta(seconds);
  const double quantum = quantile(quanta, 0.5);
  double base = 0;
  std::string method;
  {
    std::ifstream f("/sys/kernel/debug/sched/base_slice_ns");
    long long ns = 0;
    if (f >> ns && ns > 0) {
      base = ns * 1e-9;
      method = "debugfs base_slice_ns";
    }
  }
  if (base == 0) {
    struct utsname u {};
    uname(&u);
    int major = 0, minor = 0;
    std::sscanf(u.release, "%d.%d", &major, &minor);
    base = (major > 6 || (major == 6 && minor >= 15)) ? 0.70e-3 : 0.75e-3;
    method = fmt::format("kernel {}.{} default base slice {} ms", major, minor, base * 1e3);
  }
  const int factor = 1 + static_cast<int>(std::floor(std::log2(std::min(cpus, 8))));
  double slice = base * factor;
  const double expected = tick > 0 ? std::ceil(slice / tick - 1e-9) * tick : slice;
  if (!quanta.empty() && std::fabs(quantum - expected) > 0.25 * expected) {
    method = fmt::format("observed run length of 2 CPU-bound threads on one CPU ({:.3g} ms; the kernel default x{} "
                         "would give {:.3g} ms)", quantum * 1e3, factor, expected * 1e3);
    slice = quantum;
  } else {
    method += fmt::format(" x{} (1+ilog2 CPUs); 2 CPU-bound threads on one CPU ran {:.3g} ms in turn (p10 {:.3g}, "
                          "p90 {:.3g})", factor, quantum * 1e3, quantile(quanta, 0.1) * 1e3, quantile(quanta, 0.9) * 1e3);
  }
  Measurement m = summarize("slice", {slice}, "s", method);
  if (!quanta.empty()) {
    m.p10 = quantile(quanta, 0.1);
    m.p90 = quantile(quanta, 0.9);
    m.samples = static_cast<int>(quanta.size());
  }
  return m;
}

Measurement measure_switch(int batches, int round_trips) {
  std::vector<double> samples;
  for (int b = 0; b < batches; ++b) {
    int ping[2], pong[2];
    if (pipe(ping) || pipe(pong)) throw std::runtime_error("calibrate: pipe() failed");
    std::thread peer([&] {
      pin_self(0);
      char c;
      for (int i = 0; i < round_trips; ++i) {
        if (read(ping[0], &c, 1) != 1 || write(pong[1], &c, 1) != 1) break;
      }
    });
    double per = 0;
    std::thread self([&] {
      pin_self(0);
      char c = 'x';
      const auto t0 = now_ns();
      for (int i = 0; i < round_trips; ++i) {
        if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1) break;
      }
      per = static_cast<double>(now_ns() - t0) / round_trips * 1e-9;
    });
    self.join();
    peer.join();
    for (int fd : {ping[0], ping[1], pong[0], pong[1]}) close(fd);
    samples.push_back(per / 2);
  }
  return summarize("switch_cost", samples, "s",
                   fmt::format("pipe ping-pong pinned to one CPU, {} round trips x {} batches, half a round trip",
                               round_trips, batches));
}

// The condition-variable wake both wake experiments time: `samples` times,
// the waker, pinned to `waker_cpu`, signals a waiter every `gap_ns` (a skipped
// beat, when the waiter is not yet waiting, is retried at the next one).
// The waiter runs `before_wait` before each wait (under the lock) and
// `on_woken(signal time)` when it runs again.
void cv_wakes(int waker_cpu, int samples, std::int64_t gap_ns, const std::function<void()>& before_wait,
              const std::function<void(std::int64_t)>& on_woken) {
  std::mutex m;
  std::condition_variable cv;
  bool go = false, done = false, waiting = false;
  std::int64_t t_signal = 0;
  std::thread waiter([&] {
    std::unique_lock lk(m);
    while (!done) {
      before_wait();
      waiting = true;
      cv.wait(lk, [&] { return go || done; });
      if (done) break;
      on_woken(t_signal);
      go = false;
      waiting = false;
    }
  });
  pin_self(waker_cpu);
  std::int64_t next = now_ns();
  for (int i = 0; i < samples; ++i) {
    next += gap_ns;  // a fixed schedule: the signal's phase does not follow the waiter
    const timespec at{static_cast<time_t>(next / 1'000'000'000), static_cast<long>(next % 1'000'000'000)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr);
    std::unique_lock lk(m);
    if (!waiting) {
      --i;
      continue;
    }
    go = true;
    t_signal = now_ns();
    cv.notify_one();
  }
  {
    std::unique_lock lk(m);
    done = true;
  }
  cv.notify_one();
  waiter.join();
}

// Signal-to-running latency of a condition-variable wake onto CPU `to`.
std::vector<double> wake_latencies(int to, int samples, std::int64_t gap_ns) {
  std::vector<double> out;
  bool pinned = false;
  cv_wakes(
      to == 0 ? 1 : 0, samples, gap_ns,
      [&] {
        if (!pinned) pin_self(to);
        pinned = true;
      },
      [&](std::int64_t t_signal) { out.push_back((now_ns() - t_signal) * 1e-9); });
  return out;
}

Measurement measure_timer_slack(int samples) {
  std::vector<double> over;
  std::thread t([&] {
    pin_self(1);
    for (int i = 0; i < samples; ++i) {
      const auto t0 = now_ns();
      timespec d{0, 1'000'000};
      clock_nanosleep(CLOCK_MONOTONIC, 0, &d, nullptr);
      over.push_back((now_ns() - t0 - 1'000'000) * 1e-9);
    }
  });
  t.join();
  return summarize("timer_slack", over, "s",
                   fmt::format("overshoot of a 1 ms clock_nanosleep on an awake CPU, {} sleeps", samples));
}

void* empty_thread(void*) { return nullptr; }

std::pair<Measurement, Measurement> measure_thread_costs(int samples, double switch_cost) {
  std::vector<double> create, exit_cost;
  std::thread t([&] {
    pin_self(0);  // children inherit the mask: everything on one CPU, serialised
    for (int i = 0; i < samples; ++i) {
      pthread_t th;
      const auto w0 = now_ns();
      const auto c0 = thread_cpu_ns();
      if (pthread_create(&th, nullptr, empty_thread, nullptr) != 0) break;
      const auto c1 = thread_cpu_ns();
      pthread_join(th, nullptr);
      const auto w1 = now_ns();
      create.push_back((c1 - c0) * 1e-9);
      exit_cost.push_back(std::max(0.0, (w1 - w0 - (c1 - c0)) * 1e-9 - 2 * switch_cost));
    }
  });
  t.join();
  return {summarize("thread_create", create, "s", fmt::format("creator CPU time in pthread_create, {} threads", samples)),
          summarize("thread_exit", exit_cost, "s",
                    "create-to-join wall time on one CPU minus creation and two switches")};
}

// One pass over a working set, touching each cache line (read-modify-write).
std::int64_t pass_ns(std::vector<std::uint64_t>& ws) {
  const auto t0 = now_ns();
  for (std::size_t i = 0; i < ws.size(); i += 8) ws[i] += 1;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  return now_ns() - t0;
}

std::pair<Measurement, Measurement> measure_cache(int samples, int cpus) {
  std::vector<double> refill, migrate;
  std::thread t([&] {
    std::vector<std::uint64_t> ws(256 * 1024 / 8, 1), evict(16 * 1024 * 1024 / 8, 1);
    pin_self(0);
    for (int i = 0; i < samples; ++i) {
      pass_ns(ws);
      const auto warm = pass_ns(ws);
      pass_ns(evict);
      const auto cold = pass_ns(ws);
      refill.push_back(std::max<std::int64_t>(0, cold - warm) * 1e-9);
      if (cpus > 1) {
        pin_self(i % 2 == 0 ? 0 : 1);
        pass_ns(ws);
        const auto warm2 = pass_ns(ws);
        pin_self(i % 2 == 0 ? 1 : 0);
        const auto moved = pass_ns(ws);
        migrate.push_back(std::max<std::int64_t>(0, moved - warm2) * 1e-9);
      }
    }
  });
  t.join();
  if (migrate.empty()) migrate.push_back(0);
  return {summarize("cache_refill", refill, "s", "256 KiB working set re-read after a 16 MiB buffer evicted it, minus a warm pass"),
          summarize("migration_cost", migrate, "s", "256 KiB working set re-read right after moving to another CPU, minus a warm pass")};
}

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
  return {summarize("stack_reserve", {static_cast<double>(reserve)}, "B", "glibc default thread stack (pthread_attr_getstacksize)"),
          summarize("stack_touch", touch, "B", fmt::format("VmRSS added per blocked thread, {} threads", kThreads))};
}

// CPU seconds per task of the real backend `backend` (a YAML flow map) running
// `count` tasks made of the single phase `phase` with the arrival `arrival`
// (a YAML flow map), in this process (run_repetition, no sampler): one value
// per run, after one warm-up run.
std::vector<double> backend_cpu_per_task(const std::string& backend, const std::string& arrival,
                                         const std::string& phase, int count, int trials) {
  const std::string yaml = fmt::format(
      "name: calibrate-runtime-costs\nseed: 1\nmachine: default\n"
      "workload:\n  arrival: {}\n  task:\n    - {}\n"
      "backend: {}\nrun: {{reps: 1, warmup: 0, timeout: 60s}}\n",
      arrival, phase, backend);
  const Scenario s = load_scenario_text(yaml, "<calibrate>");
  const Workload w = generate_workload(s);
  RealOptions opt;
  opt.sample_period = Duration{0};
  std::vector<double> out;
  for (int t = 0; t <= trials; ++t) {
    const RunResult r = run_repetition(s, w, opt);
    std::int64_t done = 0;
    for (const TaskRecord& rec : r.records) done += rec.outcome == TaskOutcome::completed;
    if (done < count) throw std::runtime_error("calibrate: a runtime-cost run completed too few tasks");
    if (t > 0) out.push_back(to_seconds(r.counters.cpu_time) / static_cast<double>(done));
  }
  return out;
}

// The four runtime costs (see the header comment): queue_handover,
// fiber_create, fiber_switch, timer_arm.
std::vector<Measurement> measure_runtime_costs(int trials, int count) {
  const std::string batch = fmt::format("{{kind: batch, count: {}}}", count);
  constexpr int kClients = 1000;
  const std::string closed =
      fmt::format("{{kind: closed, clients: {}, think: 0ms, duration: 60s, count: {}}}", kClients, count);
  const std::string vt = "{kind: virtual-threads, carriers: 1}", el = "{kind: event-loop, loops: 1}";
  const auto pool = backend_cpu_per_task("{kind: pool, threads: 1}", batch, "cpu: 0ns", count, trials);
  const auto vt0 = backend_cpu_per_task(vt, closed, "cpu: 0ns", count, trials);
  const auto vt1 = backend_cpu_per_task(vt, closed, "wait: 1ms", count, trials);
  const auto el0 = backend_cpu_per_task(el, closed, "cpu: 0ns", count, trials);
  const auto el1 = backend_cpu_per_task(el, closed, "wait: 1ms", count, trials);
  // Derived per run (run i of each experiment), so the spread shows.
  std::vector<double> qh, fc, fs, ta;
  for (double p : pool) qh.push_back(p / 2);
  const double qh_med = quantile(qh, 0.5);
  for (std::size_t k = 0; k < static_cast<std::size_t>(trials); ++k) {
    fc.push_back(std::max(0.0, vt0[k] - 2 * qh_med));
    fs.push_back(std::max(0.0, (vt1[k] - vt0[k]) / 2));
    ta.push_back(std::max(0.0, el1[k] - el0[k]));
  }
  const auto us = [](const std::vector<double>& v) { return quantile(v, 0.5) * 1e6; };
  return {
      summarize("queue_handover", qh, "s",
                fmt::format("real pool, 1 worker, a batch of {} empty tasks: CPU per task ({:.3g} us) / 2 "
                            "(push + pop)", count, us(pool))),
      summarize("fiber_create", fc, "s",
                fmt::format("real virtual threads, 1 carrier, {} closed clients, {} empty requests: CPU per "
                            "request ({:.3g} us) - 2 queue_handover", kClients, count, us(vt0))),
      summarize("fiber_switch", fs, "s",
                fmt::format("the same with `wait: 1ms` requests ({:.3g} us): half the extra (unmount + "
                            "remount, {} fibers alive)", us(vt1), kClients)),
      summarize("timer_arm", ta, "s",
                fmt::format("real event loop, 1 loop, {} closed clients: CPU per request with `wait: 1ms` "
                            "({:.3g} us) - without ({:.3g} us)", kClients, us(el1), us(el0)))};
}

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
      if (std::strncmp(buf, k, std::strlen(k)) == 0) v = static_cast<double>(std::strtoull(buf + std::strlen(k), nullptr, 0));
    }
    pclose(p);
    if (v >= 0) return {v, "glibc.pthread.stack_cache_size (ld.so --list-tunables)"};
  }
  return {40.0 * 1024 * 1024, "glibc's default (nptl-stack.c), the tunable could not be read"};
}

// Map, touch and unmap `rounds` stacks of `size` bytes the way glibc's
// allocate_stack and free_stacks do; wall times in seconds.
void map_unmap_stacks(std::size_t size, int rounds, std::vector<double>* map, std::vector<double>& unmap) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  for (int i = 0; i < rounds; ++i) {
    const auto t0 = now_ns();
    void* mem = mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (mem == MAP_FAILED) throw std::runtime_error("calibrate: mmap of a thread stack failed");
    char* p = static_cast<char*>(mem);
    mprotect(p + page, size - page, PROT_READ | PROT_WRITE);
    *reinterpret_cast<volatile char*>(p + size - 1) = 1;
    *reinterpret_cast<volatile char*>(p + size - 1 - page) = 1;
    const auto t1 = now_ns();
    munmap(mem, size);
    const auto t2 = now_ns();
    if (map) map->push_back((t1 - t0) * 1e-9);
    unmap.push_back((t2 - t1) * 1e-9);
  }
}

std::vector<Measurement> measure_stack_mapping(int rounds, int cpus, double reserve) {
  const auto size = static_cast<std::size_t>(reserve > 0 ? reserve : 8 << 20);
  std::vector<double> map, unmap, unmap_shared;
  std::thread t([&] {
    pin_self(0);
    map_unmap_stacks(size, rounds, &map, unmap);
    if (cpus > 1) {
      // The spinner must be on CPU 1 while munmap runs (the kernel only
      // interrupts CPUs where the process is active): wait until it runs,
      // and count only the unmaps during which it ran throughout.
      std::atomic<bool> stop{false};
      std::atomic<std::uint64_t> spins{0};
      std::thread spinner([&] {
        pin_self(1);
        while (!stop.load(std::memory_order_relaxed)) spins.fetch_add(1, std::memory_order_relaxed);
      });
      while (spins.load() == 0) sched_yield();
      for (int i = 0, tries = 0; i < rounds && tries < 20 * rounds; ++tries) {
        std::vector<double> one;
        const auto s0 = spins.load(std::memory_order_relaxed);
        map_unmap_stacks(size, 1, nullptr, one);
        if (spins.load(std::memory_order_relaxed) == s0) continue;  // the spinner was off CPU 1
        unmap_shared.push_back(one.front());
        ++i;
      }
      stop = true;
      spinner.join();
    }
  });
  t.join();
  const double alone = quantile(unmap, 0.5);
  std::vector<double> shoot;
  for (double u : unmap_shared) shoot.push_back(std::max(0.0, u - alone));
  if (shoot.empty()) shoot.push_back(0);
  const auto [cache, cache_how] = stack_cache_size();
  return {summarize("stack_cache", {cache}, "B", cache_how),
          summarize("stack_map", map, "s",
                    fmt::format("mmap {} PROT_NONE + mprotect all but the guard + touch 2 pages, {} stacks",
                                format_bytes(static_cast<double>(size)), rounds)),
          summarize("stack_unmap", unmap, "s", "munmap of that stack, no other thread of the process running"),
          summarize("tlb_shootdown", shoot, "s",
                    cpus > 1 ? "munmap while a thread of the process spins on CPU 1, minus stack_unmap"
                             : "one CPU: no other CPU to interrupt")};
}

// One level of the wake-packing experiment (see the header): the fraction
// of `wakes` wake-ups whose waiter ran on the waker's CPU 0 while a load
// thread kept CPU 0 busy `duty` of each millisecond.
double packed_fraction(double duty, int wakes) {
  std::atomic<bool> stop{false};
  std::thread load;
  if (duty > 0) {
    load = std::thread([&] {
      pin_self(0);
      const auto busy = static_cast<std::int64_t>(duty * 1e6);
      while (!stop.load(std::memory_order_relaxed)) {
        const std::int64_t t0 = now_ns();
        while (now_ns() - t0 < busy) {
        }
        timespec rest{0, static_cast<long>(1'000'000 - busy)};
        if (rest.tv_nsec > 0) nanosleep(&rest, nullptr);
      }
    });
  }
  int packed = 0, woken = 0;
  cv_wakes(
      0, wakes, 3'000'000,
      // Every wake starts from CPU 1 (the waiter's previous CPU, idle since
      // it blocked): moved there, then allowed both CPUs again.
      [] {
        pin_self(1);
        unpin_self(2);
      },
      [&](std::int64_t) {
        ++woken;
        packed += sched_getcpu() == 0 ? 1 : 0;
      });
  stop = true;
  if (load.joinable()) load.join();
  return woken > 0 ? static_cast<double>(packed) / woken : 0.0;
}

Measurement measure_wake_packing(int cpus, int wakes) {
  if (cpus < 2)
    return summarize("wake_pack_util", {0.0}, "fraction", "one CPU: nothing to pack");
  const double levels[] = {0.0, 0.2, 0.4, 0.6, 0.8, 0.9};
  std::string seen;
  double threshold = 1.0;
  double prev = -1;
  for (double d : levels) {
    const double f = packed_fraction(d, wakes);
    seen += fmt::format("{}{:.0f}%: {:.0f}%", seen.empty() ? "" : ", ", 100 * d, 100 * f);
    if (f < 0.5) {
      threshold = prev < 0 ? 0.0 : (prev + d) / 2;
      break;
    }
    prev = d;
  }
  return summarize("wake_pack_util", {threshold}, "fraction",
                   fmt::format("wakes kept on the waker's CPU 0 (CPU 1 idle 3 ms, the waiter's previous CPU) by "
                               "CPU 0's load: {} ({} wakes each)",
                               seen, wakes));
}

// The waker's CPU time (seconds, median) for one futex wake of a thread
// waiting on CPU `to`; the waker runs on CPU 0.
double waker_cpu_per_wake(int to, int samples) {
  std::atomic<int> word{0};
  std::atomic<bool> stop{false}, waiting{false};
  std::thread waiter([&] {
    pin_self(to);
    while (!stop.load()) {
      waiting.store(true);
      while (word.load() == 0 && !stop.load())
        syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, nullptr, nullptr, 0);
      word.store(0);
    }
  });
  pin_self(0);
  std::vector<double> cpu;
  for (int i = 0; i < samples; ++i) {
    timespec gap{0, 2'000'000};
    nanosleep(&gap, nullptr);
    while (!waiting.exchange(false)) {
    }
    const auto c0 = thread_cpu_ns();
    word.store(1);
    syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
    cpu.push_back((thread_cpu_ns() - c0) * 1e-9);
  }
  stop.store(true);
  word.store(1);
  syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
  waiter.join();
  return quantile(cpu, 0.5);
}

std::pair<Measurement, Measurement> measure_wake_costs(int cpus, int samples) {
  std::vector<double> reads;
  for (int i = 0; i < 200; ++i) {
    const auto c0 = thread_cpu_ns();
    reads.push_back((thread_cpu_ns() - c0) * 1e-9);
  }
  const double read = quantile(reads, 0.5);
  const double local = waker_cpu_per_wake(0, samples);
  Measurement wc = summarize("wake_cost", {std::max(0.0, local - read)}, "s",
                             fmt::format("waker CPU per futex wake of a thread on its own CPU, median of {} "
                                         "({:.3g} us) less a clock-read pair ({:.3g} us)",
                                         samples, local * 1e6, read * 1e6));
  if (cpus < 2) return {wc, summarize("wake_ipi", {0.0}, "s", "one CPU: no other CPU to interrupt")};
  const double remote = waker_cpu_per_wake(1, samples);
  return {wc, summarize("wake_ipi", {std::max(0.0, remote - local)}, "s",
                        fmt::format("the same for a thread on the idle CPU 1 ({:.3g} us), less the above",
                                    remote * 1e6))};
}

Duration dur(double seconds) { return from_seconds(seconds); }


double get_reserve(const std::vector<Measurement>& ms) {
  for (const auto& m : ms)
    if (m.field == "stack_reserve") return m.median;
  return 0;
}

}  // namespace

CalibrationReport calibrate(const CalibrateOptions& opt) {
  const int scale = opt.quick ? 1 : 5;
  CalibrationReport rep;
  struct utsname u {};
  uname(&u);
  rep.kernel = u.release;
  {
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line))
      if (line.rfind("model name", 0) == 0) {
        rep.cpu_model = line.substr(line.find(':') + 2);
        break;
      }
  }
  auto step = [&](const char* what) {
    if (!opt.quiet) std::cerr << "calibrate: " << what << "...\n";
  };
  const int cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  auto& ms = rep.measurements;
  ms.push_back(summarize("cores", {static_cast<double>(cpus)}, "", "online CPUs (sysconf)"));
  step("scheduler tick");
  ms.push_back(measure_tick(opt.quick ? 2 : 5));
  const double tick = ms.back().median;
  step("scheduler slice");
  ms.push_back(measure_slice(tick, opt.quick ? 0.5 : 2.0, cpus));
  step("context switch (pipe ping-pong)");
  ms.push_back(measure_switch(5 * scale, 4000));
  const double switch_cost = ms.back().median;
  std::vector<double> awake, idle;
  if (cpus > 1) {
    step("wake-up latency to an awake CPU");
    {
      IdleSpinner keep_awake(1);
      awake = wake_latencies(1, 200 * scale, 2'000'000);
    }
    step("wake-up latency to an idle CPU");
    idle = wake_latencies(1, 150 * scale, 5'000'000);
  }
  Measurement wl = summarize("wakeup_latency", awake.empty() ? std::vector<double>{switch_cost} : awake, "s",
                             awake.empty() ? "one CPU: a wake is a switch"
                                           : "condition-variable signal to running, on another CPU kept awake");
  const double idle_med = idle.empty() ? wl.median : quantile(idle, 0.5);
  Measurement ie = summarize("idle_exit", {std::max(0.0, idle_med - wl.median)}, "s",
                             fmt::format("the same wake onto an idle CPU ({:.3g} us median) minus the awake wake",
                                         idle_med * 1e6));
  if (!idle.empty()) {
    ie.p10 = std::max(0.0, quantile(idle, 0.1) - wl.median);
    ie.p90 = std::max(0.0, quantile(idle, 0.9) - wl.median);
    ie.samples = static_cast<int>(idle.size());
  }
  ms.push_back(wl);
  ms.push_back(ie);
  step("timer slack");
  if (cpus > 1) {
    IdleSpinner keep_awake(1);
    ms.push_back(measure_timer_slack(100 * scale));
  } else {
    ms.push_back(measure_timer_slack(100 * scale));
  }
  step("thread create/exit");
  auto [create, exit_cost] = measure_thread_costs(300 * scale, switch_cost);
  ms.push_back(create);
  ms.push_back(exit_cost);
  step("cache refill and migration");
  auto [refill, migrate] = measure_cache(20 * scale, cpus);
  ms.push_back(refill);
  ms.push_back(migrate);
  step("thread stacks");
  auto [reserve, touch] = measure_stacks(3 * scale);
  ms.push_back(reserve);
  ms.push_back(touch);

  step("thread stacks outside glibc's cache");
  for (Measurement& m : measure_stack_mapping(100 * scale, cpus, get_reserve(ms))) ms.push_back(std::move(m));
  step("wake-up packing");
  ms.push_back(measure_wake_packing(cpus, 60 * scale));
  step("wake-up costs to the waker");
  auto [wake_cost, wake_ipi] = measure_wake_costs(cpus, 200 * scale);
  ms.push_back(wake_cost);
  ms.push_back(wake_ipi);
  {  // CFS bandwidth slice: a kernel setting, read (5 ms where the file is absent)
    std::ifstream f("/proc/sys/kernel/sched_cfs_bandwidth_slice_us");
    double us = 0;
    const bool ok = static_cast<bool>(f >> us) && us > 0;
    ms.push_back(summarize("cfs_bandwidth_slice", {ok ? us * 1e-6 : 0.005}, "s",
                           ok ? "/proc/sys/kernel/sched_cfs_bandwidth_slice_us"
                              : "kernel default 5 ms (no sched_cfs_bandwidth_slice_us)"));
  }
  step("runtime costs (real pool, virtual threads, event loop)");
  unpin_self(cpus);  // the experiments above pinned this thread; the backends' threads inherit its mask
  for (Measurement& m : measure_runtime_costs(opt.quick ? 3 : 9, 20000)) ms.push_back(std::move(m));

  auto get = [&](const char* f) {
    for (const auto& m : ms)
      if (m.field == f) return m.median;
    return 0.0;
  };
  MachineProfile& p = rep.profile;
  p.name = "host";
  p.source = "poolsim calibrate";
  p.cores = cpus;
  p.tick = dur(get("tick"));
  p.slice = dur(get("slice"));
  p.switch_cost = dur(get("switch_cost"));
  p.cache_refill = dur(get("cache_refill"));
  p.migration_cost = dur(get("migration_cost"));
  p.wakeup_latency = dur(get("wakeup_latency"));
  p.idle_exit = dur(get("idle_exit"));
  p.timer_slack = dur(get("timer_slack"));
  p.thread_create = dur(get("thread_create"));
  p.thread_exit = dur(get("thread_exit"));
  p.stack_reserve = static_cast<Bytes>(get("stack_reserve"));
  p.stack_touch = static_cast<Bytes>(std::llround(get("stack_touch") / 4096.0) * 4096);
  p.queue_handover = dur(get("queue_handover"));
  p.fiber_create = dur(get("fiber_create"));
  p.fiber_switch = dur(get("fiber_switch"));
  p.timer_arm = dur(get("timer_arm"));
  p.stack_cache = static_cast<Bytes>(get("stack_cache"));
  p.stack_map = dur(get("stack_map"));
  p.stack_unmap = dur(get("stack_unmap"));
  p.tlb_shootdown = dur(get("tlb_shootdown"));
  p.wake_pack_util = get("wake_pack_util");
  p.wake_cost = dur(get("wake_cost"));
  p.wake_ipi = dur(get("wake_ipi"));
  p.cfs_bandwidth_slice = dur(get("cfs_bandwidth_slice"));
  unpin_self(cpus);
  return rep;
}

void write_profile(const CalibrationReport& r, const std::filesystem::path& path) {
  std::string comment = fmt::format("Measured by `poolsim calibrate` on {} (kernel {}).\n", r.cpu_model, r.kernel);
  for (const auto& m : r.measurements) comment += fmt::format("{}: {}\n", m.field, m.method);
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  const auto tmp = path.string() + ".tmp";
  {
    std::ofstream f(tmp);
    if (!f) throw std::runtime_error("cannot write machine profile '" + path.string() + "'");
    f << machine_profile_yaml(r.profile, comment);
    if (!f) throw std::runtime_error("error writing machine profile '" + path.string() + "'");
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace poolsim::real
